"""Typed facts at ingest without an LLM: sentences (spaCy) and records (layout)."""

from __future__ import annotations

import logging

import pytest

from llama_kb import graph_model as gm
from llama_kb.ingest.extractors import RecordExtractor, SentenceRelationExtractor
from llama_kb.types import Segment, SourceDocument, TextChunk

pytest.importorskip("spacy")


def _doc(text: str, title: str = "Ingestion pipeline", **metadata: object):
    doc = SourceDocument(
        doc_id="docs/pipeline.md",
        source_path="docs/pipeline.md",
        segments=(Segment(text=text),),
        title=title,
        metadata=dict(metadata),
    )
    chunk = TextChunk(
        chunk_id="docs/pipeline.md#0",
        doc_id=doc.doc_id,
        text=text,
        chunk_index=0,
        content_hash="h",
        metadata={"title": title},
    )
    return doc, [chunk]


def _triples(fragment) -> set[tuple[str, str, str]]:
    return {
        (n.properties["subject"], n.properties["predicate"], n.properties["object"])
        for n in fragment.nodes
    }


@pytest.fixture(scope="module")
def sentences() -> SentenceRelationExtractor:
    return SentenceRelationExtractor()


def test_prose_gives_typed_relations_with_direction_and_evidence(sentences):
    fragment = sentences.extract(
        *_doc("The ingestion pipeline depends on the document interpreter.")
    )
    assert ("Ingestion pipeline", "depend on", "document interpreter") in _triples(fragment)
    film = "Sleep, My Love is a 1948 film directed by Douglas Sirk."
    passive = _triples(sentences.extract(*_doc(film, title="Sleep, My Love")))
    assert ("Sleep, My Love", "direct by", "Douglas Sirk") in passive
    node = next(n for n in fragment.nodes if n.properties["predicate"] == "depend on")
    assert node.label == gm.FACT
    assert node.properties["evidence"] == (
        "The ingestion pipeline depends on the document interpreter."
    )
    assert node.properties["chunk_id"] == "docs/pipeline.md#0"
    assert node.properties["doc_id"] == "docs/pipeline.md"
    assert node.properties["extractor"] == "pattern"


def test_pronoun_subject_is_the_document_and_life_span_gives_dates(sentences):
    text = (
        "George Stevens (December 18, 1904 – March 8, 1975) was an American film director. "
        "He was born in Oakland. His father was Landers Stevens."
    )
    triples = _triples(sentences.extract(*_doc(text, title="George Stevens")))
    assert ("George Stevens", "born", "December 18, 1904") in triples
    assert ("George Stevens", "died", "March 8, 1975") in triples
    assert ("George Stevens", "born in", "Oakland") in triples
    assert ("George Stevens", "father", "Landers Stevens") in triples


def test_missing_model_degrades_with_a_clear_log_line(caplog):
    extractor = SentenceRelationExtractor(model="no_such_spacy_model")
    with caplog.at_level(logging.WARNING):
        fragment = extractor.extract(*_doc("The pipeline depends on the interpreter."))
    assert fragment.nodes == []
    assert "sentence relation extraction is off" in caplog.text


def test_markdown_table_rows_give_row_column_cell_facts():
    text = (
        "| Component | Language | Depends on |\n"
        "|---|---|---|\n"
        "| Document interpreter | Python | Tokenizer service |\n"
        "| **Vector index** | Rust | [Object store](store.md) |\n"
    )
    fragment = RecordExtractor().extract(*_doc(text))
    triples = _triples(fragment)
    assert ("Document interpreter", "language", "Python") in triples
    assert ("Document interpreter", "depends on", "Tokenizer service") in triples
    assert ("Vector index", "depends on", "Object store") in triples
    assert not any(s == "Component" for s, _, _ in triples)  # the header is not a row
    assert all(n.properties["extractor"] == "structure" for n in fragment.nodes)


def test_key_value_lines_and_definition_lists():
    text = (
        "Maintainer: Ada Lovelace\n"
        "- **Release cadence**: weekly\n"
        "\n"
        "Chunker\n"
        ": splits documents into overlapping windows\n"
        "This is a normal sentence: it has a colon, but it goes on far too long to be a "
        "key and value pair, so the extractor leaves it to the sentence parser instead.\n"
    )
    triples = _triples(RecordExtractor().extract(*_doc(text)))
    assert {
        ("Ingestion pipeline", "maintainer", "Ada Lovelace"),
        ("Ingestion pipeline", "release cadence", "weekly"),
        ("Chunker", "is", "splits documents into overlapping windows"),
    } <= triples
    assert "this is a normal sentence" not in {p for _, p, _ in triples}


def test_front_matter_fields_are_facts_about_the_document():
    doc, chunks = _doc("Body text.", owner="data-platform", tags=["etl", "batch"])
    triples = _triples(RecordExtractor().extract(doc, chunks))
    assert ("Ingestion pipeline", "owner", "data-platform") in triples
    assert ("Ingestion pipeline", "tags", "etl") in triples
    assert ("Ingestion pipeline", "tags", "batch") in triples


def test_json_records_give_record_field_value_facts():
    text = (
        '[{"name": "scheduler", "dependsOn": "ingestion pipeline", "interval": 3600},'
        ' {"name": "exporter", "owner": "analytics", "nested": {"ignored": true}}]'
    )
    triples = _triples(RecordExtractor().extract(*_doc(text)))
    assert {
        ("scheduler", "depends on", "ingestion pipeline"),
        ("scheduler", "interval", "3600"),
        ("exporter", "owner", "analytics"),
    } <= triples
    assert "nested" not in {p for _, p, _ in triples}


def test_bracketed_aside_does_not_break_the_sentence(sentences):
    text = (
        "Night and Dawn( Spanish: La noche y el alba) is a 1958 Spanish drama film directed "
        "by José María Forqué. Joseph-André Taschereau, (November 30, 1806–March 30, 1867), "
        "was a lawyer."
    )
    fragment = sentences.extract(*_doc(text, title="Night and Dawn"))
    triples = _triples(fragment)
    assert ("Night and Dawn", "direct by", "José María Forqué") in triples
    assert ("Joseph-André Taschereau", "born", "November 30, 1806") in triples
    assert ("Joseph-André Taschereau", "died", "March 30, 1867") in triples
    evidence = {n.properties["evidence"] for n in fragment.nodes}
    # the evidence quotes the sentence with its aside
    assert any("( Spanish: La noche y el alba)" in e for e in evidence)


@pytest.mark.parametrize(
    ("title", "text", "expected"),
    [
        # a title that parses as a clause ("Everything I Like", "Remember the Day")
        (
            "Everything I Like",
            "Everything I Like  is a 1993 Slovak drama film directed by Martin Šulík.",
            ("Everything I Like", "direct by", "Martin Šulík"),
        ),
        # a second participle the parser hangs from the first one's object
        (
            "Remember the Day",
            "Remember the Day is a 1941 film released by 20th Century Fox, directed by "
            "Henry King, and starring Claudette Colbert.",
            ("Remember the Day", "direct by", "Henry King"),
        ),
        # a role noun before the name is a description, not part of the name
        (
            "Nick Kellogg",
            "He is the son of former National Basketball Association (NBA) player Clark Kellogg.",
            ("Nick Kellogg", "son of", "Clark Kellogg"),
        ),
        # the page's name before ", qualifier"
        (
            "Alix, Princess de Ligne",
            "Alix was the fourth daughter of Charlotte, Grand Duchess of Luxembourg.",
            ("Alix, Princess de Ligne", "daughter of", "Charlotte"),
        ),
        # the subject after a fronted participle; a lone surname names the full name
        (
            "Route 132",
            "Louis Bélanger wrote it. Directed by Bélanger, the film stars François Papineau.",
            ("Route 132", "direct by", "Louis Bélanger"),
        ),
    ],
)
def test_sentence_shapes(sentences, title, text, expected):
    assert expected in _triples(sentences.extract(*_doc(text, title=title)))


def test_a_tokens_heads_end_at_the_sentence_root(sentences):
    from llama_kb.ingest.extractors._parse_paths import ancestors

    doc = sentences._load()("Sleep, My Love is a 1948 film directed by Douglas Sirk.")
    sirk = next(t for t in doc if t.text == "Sirk")
    heads = ancestors(sirk)
    assert heads[-1].dep_ == "ROOT" and [t.i for t in heads].count(heads[-1].i) == 1
    assert len(heads) < 8


def test_many_chunks_give_the_facts_each_gives_alone(sentences):
    texts = [
        "The ingestion pipeline depends on the document interpreter. It was built in 2021.",
        "Sleep, My Love is a 1948 film directed by Douglas Sirk. It stars Claudette Colbert.",
    ]
    titles = ["Ingestion pipeline", "Film"]
    items = [_doc(t, title=title) for t, title in zip(texts, titles, strict=True)]
    together = sentences.extract_batch(items)
    assert [_triples(f) for f in together] == [_triples(sentences.extract(*i)) for i in items]
    assert all(_triples(f) for f in together)


def test_a_sentence_two_chunks_share_is_read_once(sentences):
    from llama_kb.ingest.chunking import chunk_document

    text = (
        "Sleep, My Love is a 1948 film directed by Douglas Sirk. "
        "It stars Claudette Colbert. The film was produced by Charles Buddy Rogers. "
        "The score was composed by Rudy Schrager. It was released by United Artists."
    )
    doc, [whole] = _doc(text, title="Sleep, My Love")
    chunks = chunk_document(doc, chunk_size=120, chunk_overlap=60)
    assert len(chunks) > 2
    fragment = sentences.extract(doc, chunks)
    triples = [
        (n.properties["subject"], n.properties["predicate"], n.properties["object"])
        for n in fragment.nodes
    ]
    assert len(triples) == len(set(triples))  # no fact twice, from two chunks
    assert set(triples) >= _triples(sentences.extract(doc, [whole]))
