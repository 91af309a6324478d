"""Character chunking: sizes, overlap, preferred cut points, ids, hashes and metadata."""

from __future__ import annotations

import hashlib
import itertools
import random
import re

import pytest

from llama_kb.errors import ConfigurationError
from llama_kb.ingest.chunking import chunk_document, chunk_id, chunk_text, unrepeated_start
from llama_kb.types import Segment, SourceDocument

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]


def prose(seed: int, sentences: int) -> str:
    rng = random.Random(seed)
    paragraphs, current = [], []
    for _ in range(sentences):
        sentence = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 18)))
        current.append(sentence.capitalize() + rng.choice(".!?"))
        if rng.random() < 0.2:
            paragraphs.append(" ".join(current))
            current = []
    paragraphs.append(" ".join(current))
    return "\n\n".join(p for p in paragraphs if p)


def doc_of(*texts: str, **kwargs: object) -> SourceDocument:
    segments = tuple(Segment(t, {"page": i + 1}) for i, t in enumerate(texts))
    return SourceDocument("doc-1", "/data/doc-1.txt", segments, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(("size", "overlap"), [(1000, 200), (300, 50), (120, 0), (80, 60)])
def test_chunks_respect_size_and_cover_all_text(size: int, overlap: int) -> None:
    text = prose(size, 300)
    pieces = chunk_text(text, size, overlap)

    assert all(0 < len(piece) <= size for _, piece in pieces)
    assert all(text[start : start + len(piece)] == piece for start, piece in pieces)
    covered = set()
    for start, piece in pieces:
        covered.update(range(start, start + len(piece)))
    assert all(i in covered for i, c in enumerate(text) if not c.isspace())


def test_consecutive_chunks_overlap_by_about_the_overlap() -> None:
    text = prose(7, 400)
    pieces = chunk_text(text, 500, 100)
    assert len(pieces) > 5
    for (start, piece), (next_start, _) in itertools.pairwise(pieces):
        shared = start + len(piece) - next_start
        assert 0 < shared <= 100 + 1
        assert next_start > start


def test_no_overlap_when_zero() -> None:
    pieces = chunk_text(prose(3, 200), 400, 0)
    for (start, piece), (next_start, _) in itertools.pairwise(pieces):
        assert next_start >= start + len(piece)


def test_overlap_starts_on_a_word_boundary() -> None:
    text = prose(11, 200)
    for start, _ in chunk_text(text, 300, 80)[1:]:
        assert text[start - 1].isspace()


def test_prefers_paragraph_break_then_sentence_then_space() -> None:
    paragraph = "a" * 85 + "\n\n" + "b b. " * 20
    assert chunk_text(paragraph, 100, 0)[0][1] == "a" * 85

    sentence = "word " * 17 + "end. tail" + " more" * 20
    assert chunk_text(sentence, 100, 0)[0][1].endswith("end.")

    spaces = "wordy " * 40
    first = chunk_text(spaces, 100, 0)[0][1]
    assert first.endswith("wordy") and len(first) <= 100


def test_break_points_are_only_searched_near_the_limit() -> None:
    text = "intro.\n\n" + "x " * 200
    first = chunk_text(text, 100, 0)[0][1]
    assert len(first) >= 80  # the early paragraph break is not used


def test_text_without_whitespace_is_cut_hard() -> None:
    pieces = chunk_text("x" * 2500, 1000, 200)
    assert [(start, len(piece)) for start, piece in pieces] == [
        (0, 1000),
        (800, 1000),
        (1600, 900),
    ]


def test_whitespace_only_pieces_are_dropped() -> None:
    assert chunk_text("   \n\n \t ", 10, 2) == []
    doc = doc_of("  \n ", "Real text.")
    chunks = chunk_document(doc)
    assert [(c.chunk_index, c.metadata["page"], c.text) for c in chunks] == [(0, 2, "Real text.")]


def test_segments_are_never_merged() -> None:
    doc = doc_of("Page one text.", "Page two text.", prose(1, 60))
    chunks = chunk_document(doc, chunk_size=300, chunk_overlap=50)

    assert [c.chunk_index for c in chunks] == list(range(len(chunks)))
    assert chunks[0].text == "Page one text." and chunks[0].metadata["page"] == 1
    assert chunks[1].text == "Page two text." and chunks[1].metadata["page"] == 2
    assert all(c.metadata["page"] == 3 for c in chunks[2:])
    for chunk in chunks:
        segment = doc.segments[chunk.metadata["page"] - 1].text
        start = chunk.metadata["start_char"]
        assert segment[start : start + len(chunk.text)] == chunk.text


def test_the_unrepeated_part_of_a_chunk_starts_at_a_sentence_the_previous_did_not_hold() -> None:
    chunks = chunk_document(doc_of(prose(3, 200)), chunk_size=400, chunk_overlap=120)
    assert len(chunks) > 5 and chunks[0].overlap == 0
    skipping = 0
    for previous, chunk in itertools.pairwise(chunks):
        assert 0 < chunk.overlap <= 121
        assert previous.text.endswith(chunk.text[: chunk.overlap])
        start = unrepeated_start(chunk)
        skipped = chunk.text[:start].rstrip()
        assert len(skipped) <= chunk.overlap and skipped in previous.text  # read before
        if start:
            skipping += 1
            assert re.search(r"[.!?]\s+$|\n\s*\n\s*$", chunk.text[:start])  # a sentence begins
    assert skipping > len(chunks) // 2


def test_a_sentence_cut_by_the_previous_chunk_is_read_whole() -> None:
    sentence = "One " + "two " * 60 + "end."
    second = chunk_document(doc_of(sentence), chunk_size=150, chunk_overlap=40)[1]
    assert second.overlap > 0 and unrepeated_start(second) == 0  # no sentence begins in it


def test_chunks_of_different_segments_repeat_nothing() -> None:
    doc = doc_of("Page one. Text of page.", "Text of page. And more.")
    assert [c.overlap for c in chunk_document(doc, chunk_size=300, chunk_overlap=50)] == [0, 0]


def test_ids_are_deterministic_short_and_uri_safe() -> None:
    doc = doc_of(prose(5, 100))
    first = chunk_document(doc, 200, 40)
    again = chunk_document(doc, 200, 40)
    assert [c.chunk_id for c in first] == [c.chunk_id for c in again]
    assert len({c.chunk_id for c in first}) == len(first)
    for chunk in first:
        assert re.fullmatch(r"chunk:[0-9a-f]{20}", chunk.chunk_id)
        assert chunk.chunk_id == chunk_id("doc-1", chunk.chunk_index)
    other = SourceDocument("doc-2", "/x", doc.segments)
    assert chunk_document(other, 200, 40)[0].chunk_id != first[0].chunk_id


def test_content_hash_is_sha256_of_the_text() -> None:
    chunks = chunk_document(doc_of("Same text."))
    assert chunks[0].content_hash == hashlib.sha256(b"Same text.").hexdigest()
    other = chunk_document(SourceDocument("other", "/o", (Segment("Same text."),)))
    assert other[0].content_hash == chunks[0].content_hash
    changed = chunk_document(doc_of("Same text!"))
    assert changed[0].content_hash != chunks[0].content_hash


def test_metadata_merges_document_segment_and_chunk_fields() -> None:
    doc = SourceDocument(
        doc_id="d",
        source_path="/kb/d.md",
        segments=(Segment("Body text.", {"heading_path": ["Top", "Sub"], "page": 4}),),
        title="The Title",
        metadata={
            "author": "Ada",
            "page": 1,
            "tags": ["x", "y"],
            "nested": {"k": 1},
            "missing": None,
            "chunk_index": 99,
        },
    )
    (chunk,) = chunk_document(doc)
    assert chunk.metadata == {
        "author": "Ada",
        "page": 4,
        "tags": '["x", "y"]',
        "nested": '{"k": 1}',
        "heading_path": "Top > Sub",
        "doc_id": "d",
        "source_path": "/kb/d.md",
        "chunk_index": 0,
        "start_char": 0,
        "content_hash": chunk.content_hash,
        "title": "The Title",
    }
    assert all(isinstance(v, str | int | float | bool) for v in chunk.metadata.values())


def test_empty_heading_path_and_missing_title_are_left_out() -> None:
    doc = SourceDocument("d", "/d", (Segment("Text.", {"heading_path": []}),))
    (chunk,) = chunk_document(doc)
    assert "heading_path" not in chunk.metadata
    assert "title" not in chunk.metadata


@pytest.mark.parametrize(
    ("size", "overlap"),
    [(0, 0), (-5, 0), (100, -1), (100, 100), (100, 150), (True, 0), (100.0, 10), (100, 1.5)],
)
def test_invalid_parameters(size: object, overlap: object) -> None:
    with pytest.raises(ConfigurationError):
        chunk_document(doc_of("text"), size, overlap)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError):
        chunk_text("text", size, overlap)  # type: ignore[arg-type]


def test_chunking_a_whole_corpus() -> None:
    rng = random.Random(0)
    docs = [
        SourceDocument(
            f"2w-{i:05d}",
            "/corpus.jsonl",
            (Segment(" ".join(rng.choice(WORDS) for _ in range(rng.randint(10, 150))) + "."),),
            title=f"Title {i}",
            metadata={"title": f"Title {i}"},
        )
        for i in range(3301)
    ]
    chunks = [c for d in docs for c in chunk_document(d)]
    assert len(chunks) >= 3301
