"""Token-aware chunking: sizes in the model's tokens, boundaries, and the repo's own files."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from llama_kb.config import ChunkingConfig
from llama_kb.embeddings import default_embedding
from llama_kb.ingest.chunker import Chunker, embedding_text
from llama_kb.ingest.chunking import unrepeated_start
from llama_kb.ingest.readers import read_path, supported_suffixes
from llama_kb.ingest.sources import discover_files
from llama_kb.ingest.tokens import token_counter
from llama_kb.types import Segment, SourceDocument

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def chunker() -> Chunker:
    return Chunker(ChunkingConfig(), default_embedding())


def _doc(text: str, title: str | None = "Doc", **metadata: object) -> SourceDocument:
    return SourceDocument("d", "d", (Segment(text, dict(metadata)),), title=title)


def test_default_size_is_the_model_window(chunker: Chunker) -> None:
    assert chunker.counter.window == 254 and chunker.counter.exact
    text = " ".join(f"Sentence number {i} talks about the ingestion pipeline." for i in range(200))
    chunks = chunker(_doc(text))
    counts = chunker.counter.count_batch([embedding_text(c) for c in chunks])
    assert len(chunks) > 5 and max(counts) <= 254 and max(counts) > 200
    assert all(c.text.endswith(".") for c in chunks)  # cut at sentence ends
    assert chunker.over_window(chunks) == 0


def test_paragraphs_are_kept_whole_and_overlap_is_whole_units(chunker: Chunker) -> None:
    paragraphs = [f"Paragraph {i}. " + "Words about retrieval. " * 30 for i in range(6)]
    chunks = chunker(_doc("\n\n".join(p.strip() for p in paragraphs)))
    for chunk in chunks:
        for part in chunk.text.split("\n\n"):
            assert part.startswith("Paragraph") or part.startswith("Words")
    small = Chunker(ChunkingConfig(chunk_size=40, chunk_overlap=12), default_embedding())
    pieces = small(_doc("One two three four. " * 40, title=None))
    assert pieces[1].text.split(".")[0] in pieces[0].text  # the overlap repeats a sentence


def test_code_is_cut_at_lines_and_long_words_are_cut(chunker: Chunker) -> None:
    code = "\n".join(f"    total = total + compute_value_{i}(item)" for i in range(300))
    chunks = chunker(_doc("def f(items):\n" + code, language="python", symbol="f"))
    assert all(not c.text.endswith("compute_") for c in chunks)
    lines = [line.strip() for c in chunks for line in c.text.split("\n")]
    assert all(line.startswith(("total", "def")) for line in lines)
    blob = chunker(_doc("x" * 20000))
    assert chunker.over_window(blob) == 0 and "".join(c.text for c in blob) == "x" * 20000


def test_character_chunker_stays_available() -> None:
    config = ChunkingConfig(unit="characters")
    assert (config.size, config.overlap) == (1000, 200)
    chunks = Chunker(config, default_embedding())(_doc("word " * 1000))
    assert all(len(c.text) <= 1000 for c in chunks)


def test_other_embeddings_get_an_estimate_and_a_configurable_window() -> None:
    counter = token_counter(object(), window=128)
    assert counter.window == 126 and not counter.exact
    assert token_counter(object()).window == 510


def test_the_repos_own_docs_and_code_fit_the_window(chunker: Chunker) -> None:
    paths = [REPO / "README.md", REPO / "docs", REPO / "examples", REPO / "llama_kb"]
    files = discover_files([p for p in paths if p.exists()]).files
    suffixes = {f.suffix for f in files}
    assert ".md" in suffixes
    if ".py" in supported_suffixes():
        assert ".py" in suffixes
    documents = [d for f in files for d in read_path(f).documents]
    chunks = [c for d in documents for c in chunker(d)]
    assert len(chunks) > 100
    counted = chunker.counter.count_batch([embedding_text(c) for c in chunks])
    assert max(counted) <= chunker.counter.window
    # the report takes the splitter's own counts: they are the tokenizer's, chunk by chunk
    known = [chunker._known_tokens(c) for d in documents for c in chunker(d)]
    assert sum(n is None for n in known) < len(known) // 100  # repeated texts, cut words
    assert all(n == c for n, c in zip(known, counted, strict=True) if n is not None)
    batches = chunker.batches(((None, d) for d in documents), 500)
    assert sum(chunker.over_window([c for _, _, cs in b for c in cs]) for b in batches) == 0


def test_the_window_report_counts_what_it_does_not_know(chunker: Chunker) -> None:
    long = _doc("word " * 400)
    made = chunker(long)
    assert chunker.over_window(made) == 0
    foreign = Chunker(ChunkingConfig(unit="characters", chunk_size=4000), default_embedding())
    assert chunker.over_window(foreign(long)) == 1  # a chunk the splitter never made
    words = _doc("x" * 3000)  # one word cut by characters: its pieces do not add up
    assert chunker.over_window(chunker(words)) == 0


def test_small_token_sizes_get_a_proportionate_overlap() -> None:
    assert ChunkingConfig(chunk_size=20).overlap == 5
    assert ChunkingConfig().overlap == 32


def _sentences(count: int, words: int) -> str:
    return " ".join(
        f"Sentence {i} " + "about the ingestion pipeline " * words + "ends." for i in range(count)
    )


def test_a_passage_that_fits_is_one_chunk_whatever_its_characters(chunker: Chunker) -> None:
    text = _sentences(8, 4)
    assert len(text) > 1000 and chunker.counter.count(text) < 240
    assert [c.text for c in chunker(_doc(text))] == [text]


def test_a_longer_passage_is_cut_into_even_chunks_without_a_small_tail(chunker: Chunker) -> None:
    text = _sentences(10, 4)  # a little over one window (28 tokens a sentence)
    chunks = chunker(_doc(text))
    counts = chunker.counter.count_batch([c.text for c in chunks])
    assert len(chunks) == 2 and min(counts) > 0.6 * max(counts)
    assert chunker.over_window(chunks) == 0


def test_overlap_repeats_whole_sentences_longer_than_the_overlap(chunker: Chunker) -> None:
    text = _sentences(40, 10)  # sentences of ~45 tokens, over the 32-token overlap
    chunks = chunker(_doc(text))
    assert len(chunks) > 2
    for before, after in itertools.pairwise(chunks):
        first_sentence = after.text.split(" ends.")[0] + " ends."
        assert before.text.endswith(first_sentence)


def test_the_unrepeated_part_of_a_token_chunk_begins_after_its_overlap(chunker: Chunker) -> None:
    chunks = chunker(_doc(_sentences(40, 10)))
    assert len(chunks) > 2
    for before, after in itertools.pairwise(chunks):
        start = unrepeated_start(after)
        assert start > 0 and before.text.endswith(after.text[:start].rstrip())
        assert not before.text.endswith(after.text[: start + 1])  # nothing more is repeated


def test_the_rest_of_a_passage_that_fits_is_not_a_chunk_of_its_own(chunker: Chunker) -> None:
    # Else the last chunk would repeat the previous chunk's overlap and add a sentence or two.
    for count in (18, 21):  # cut into four chunks before, the last one mostly overlap
        text = _sentences(count, 4)
        chunks = chunker(_doc(text))
        counts = chunker.counter.count_batch([embedding_text(c) for c in chunks])
        assert len(chunks) == 3 and max(counts) <= 254
        rest_from_second_last = text[chunks[-2].metadata["start_char"] :]
        assert chunker.counter.count(f"Doc\n{rest_from_second_last}") > 254


def test_counting_a_batch_ahead_changes_no_chunk(chunker: Chunker) -> None:
    texts = [
        _sentences(3, 2),
        "\n\n".join(_sentences(6, 5) for _ in range(4)),
        "x" * 3000,
        "Title line\n\n" + _sentences(40, 3),
    ]
    docs = [_doc(t, title=f"Doc {i}") for i, t in enumerate(texts)]
    alone = [[c.text for c in Chunker(ChunkingConfig(), default_embedding())(d)] for d in docs]
    batches = chunker.batches(((None, d) for d in docs), 1000)
    primed = [[c.text for c in cs] for batch in batches for _, _, cs in batch]
    assert primed == alone and sum(map(len, alone)) > len(docs)
