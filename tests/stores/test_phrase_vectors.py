"""Relation-phrase vectors: stored at ingest, read by queries, a cache that never blocks."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
from conftest import CountingEmbedding
from llama_index.core.base.embeddings.base import BaseEmbedding

from llama_kb import KnowledgeBase
from llama_kb.stores.phrase_vectors import PHRASES_FILE, PhraseVectors, open_phrase_vectors


def test_ensure_embeds_only_what_is_not_stored(tmp_path: Path, embedding: BaseEmbedding) -> None:
    spy = CountingEmbedding(inner=embedding)
    store = PhraseVectors(tmp_path / PHRASES_FILE, "model-a")
    first = store.ensure(["born in", "member of"], spy.get_text_embedding_batch)
    assert spy.texts_embedded == 2
    again = store.ensure(["member of", "plays for", "born in"], spy.get_text_embedding_batch)
    assert spy.texts_embedded == 3  # only "plays for" was new
    assert np.allclose(first["born in"], again["born in"])
    assert np.isclose(np.linalg.norm(again["plays for"]), 1.0, atol=1e-5)
    expected = np.asarray(embedding.get_text_embedding("plays for"), dtype=np.float32)
    assert np.allclose(again["plays for"], expected / np.linalg.norm(expected), atol=1e-5)
    store.close()


def test_vectors_are_kept_per_model(tmp_path: Path, embedding: BaseEmbedding) -> None:
    path = tmp_path / PHRASES_FILE
    a = PhraseVectors(path, "model-a")
    a.ensure(["born in"], embedding.get_text_embedding_batch)
    b = PhraseVectors(path, "model-b")
    assert b.read(["born in"]) == {}
    assert set(PhraseVectors(path, "model-a").read(["born in", "unknown"])) == {"born in"}
    a.close()
    b.close()


def test_a_failed_write_still_returns_the_vectors(tmp_path: Path, embedding: BaseEmbedding) -> None:
    store = PhraseVectors(tmp_path / PHRASES_FILE, "model-a")
    blocker = sqlite3.connect(tmp_path / PHRASES_FILE, timeout=0)
    blocker.execute("BEGIN EXCLUSIVE")  # another writer holds the file
    store._db.execute("PRAGMA busy_timeout = 0")
    found = store.ensure(["born in"], embedding.get_text_embedding_batch)
    assert set(found) == {"born in"}
    blocker.rollback()
    assert store.read(["born in"]) == {}  # not stored, nothing half-written
    store.close()
    blocker.close()


def test_a_directory_that_cannot_hold_the_file_means_no_store(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-directory"
    assert open_phrase_vectors(missing, "model-a") is None


def test_queries_read_the_phrases_ingest_stored(
    tmp_path: Path, embedding: BaseEmbedding, docs_dir: Path
) -> None:
    with KnowledgeBase.open(tmp_path / "kb", embedding=embedding) as kb:
        assert kb.ingest(docs_dir).ok
    question = "Who maintains the vector indexer and what does it depend on?"
    with KnowledgeBase.open(tmp_path / "kb", embedding=embedding) as kb:
        spy = CountingEmbedding(inner=embedding)
        kb.engine.fact_ranker.embedding = spy
        context = kb.retrieve(question, top_k=5)
        assert context.structured_facts, "the question should reach typed facts"
        assert spy.texts_embedded == 0  # every relation phrase was stored at ingest
    (tmp_path / "kb" / PHRASES_FILE).unlink()
    with KnowledgeBase.open(tmp_path / "kb", embedding=embedding) as kb:
        spy = CountingEmbedding(inner=embedding)
        kb.engine.fact_ranker.embedding = spy
        again = kb.retrieve(question, top_k=5)
        assert again.structured_facts == context.structured_facts  # the same answer
        assert spy.texts_embedded > 0  # without the file, the query embeds them


def test_fuzzy_linking_reads_the_names_ingest_stored(
    tmp_path: Path, embedding: BaseEmbedding, docs_dir: Path
) -> None:
    question = "What does the Vector Indexr store?"  # misspelt: only fuzzy linking finds it
    with KnowledgeBase.open(tmp_path / "kb", embedding=embedding) as kb:
        assert kb.ingest(docs_dir).ok
        assert kb._phrases is not None and "Vector Indexer" in kb._phrases.read(["Vector Indexer"])
    with KnowledgeBase.open(tmp_path / "kb", embedding=embedding) as kb:
        stored = CountingEmbedding(inner=embedding)
        kb.engine._fuzzy.embedding = stored
        linked = kb.retrieve(question).trace["linked_entities"]
        assert any(e["name"] == "Vector Indexer" for e in linked)
    (tmp_path / "kb" / PHRASES_FILE).unlink()
    with KnowledgeBase.open(tmp_path / "kb", embedding=embedding) as kb:
        cold = CountingEmbedding(inner=embedding)
        kb.engine._fuzzy.embedding = cold
        assert kb.retrieve(question).trace["linked_entities"] == linked
    assert 0 < stored.texts_embedded < cold.texts_embedded  # the spans only, not the names
