"""The same knowledge-base behaviour on embedded stores and on servers (Chroma + FalkorDB).

The main suite (ingest, search, retrieve, update, prune, reopen) runs once per backend with
the same assertions. Fault tests start their own servers so they can kill and restart them:
a server down at open, killed during ingestion (the re-run ends with no duplicates and
nothing missing) and killed during retrieval (a degraded result, or an error when strict).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import servers
from conftest import CountingEmbedding
from llama_index.core.base.embeddings.base import BaseEmbedding
from servers import ChromaServer, FalkorDBServer, free_port, unique_name

from llama_kb import KBConfig, KnowledgeBase
from llama_kb import graph_model as gm
from llama_kb.config import ChromaServerConfig, FalkorDBConfig, Neo4jConfig
from llama_kb.errors import BackendError, BackendUnavailable
from llama_kb.ingest import pipeline
from llama_kb.stores.chroma_server import ChromaServerChunkStore
from llama_kb.stores.falkordb_graph import FalkorDBGraphStore

chroma_server = servers.chroma_server
falkordb_server = servers.falkordb_server

QUESTION = "How is the Ingestion Pipeline related to the Document Interpreter?"


@pytest.fixture(params=["embedded", pytest.param("servers", marks=pytest.mark.integration)])
def config(request: pytest.FixtureRequest, tmp_path: Path) -> KBConfig:
    """A knowledge base config: embedded stores, or the session's Chroma and FalkorDB."""
    if request.param == "embedded":
        return KBConfig(path=tmp_path / "kb")
    env = {**request.getfixturevalue("chroma_server").env}
    env.update(request.getfixturevalue("falkordb_server").env)
    return KBConfig.from_env(tmp_path / "kb", env=env, collection=unique_name())


@pytest.fixture
def kb(config: KBConfig, embedding: BaseEmbedding) -> Iterator[KnowledgeBase]:
    with KnowledgeBase.open(config=config, embedding=embedding) as opened:
        yield opened


def doc_id(docs_dir: Path, name: str) -> str:
    return (docs_dir / name).resolve().as_posix()


def assert_consistent(kb: KnowledgeBase) -> None:
    """Vectors, graph chunk nodes and the manifest agree."""
    chunk_ids = [c for c, _, _ in kb.vectors.iter_chunks()]
    assert len(chunk_ids) == len(set(chunk_ids)) == kb.graph.count_nodes(gm.CHUNK)
    assert kb.stats()["chunks"] == len(chunk_ids)
    assert all(d.status == "ready" for d in kb.manifest.documents())


# -- the main suite, once per backend ------------------------------------------------


def test_ingest_search_and_retrieve(kb: KnowledgeBase, docs_dir: Path) -> None:
    report = kb.ingest(docs_dir)
    assert len(report.added) == 5 and report.ok
    hits = kb.search("Which model embeds the chunks?", top_k=3)
    assert hits[0].doc_id == doc_id(docs_dir, "vector-indexer.md")
    context = kb.retrieve(QUESTION, top_k=5, include_structural=True, max_facts=100)
    assert "degraded" not in context.trace
    assert context.unstructured and context.structured_facts
    facts = {(f.subject, f.predicate, f.object) for f in context.structured_facts}
    assert ("Ingestion Pipeline", gm.LINKS_TO, "Document Interpreter") in facts
    both = {doc_id(docs_dir, "ingestion-pipeline.md"), doc_id(docs_dir, "document-interpreter.md")}
    assert both <= {h.doc_id for h in context.unstructured}
    top = context.unstructured[0]  # the passage that ties the two entities together
    assert top.doc_id in both and "Ingestion Pipeline" in top.text
    assert_consistent(kb)


def test_changed_file_is_updated(kb: KnowledgeBase, docs_dir: Path) -> None:
    kb.ingest(docs_dir)
    team = docs_dir / "team.txt"
    team.write_text("Tomás Ortega now also maintains the Vector Indexer.", encoding="utf-8")
    report = kb.ingest(docs_dir)
    assert report.updated == [doc_id(docs_dir, "team.txt")]
    assert len(report.unchanged) == 4
    hits = kb.search("Who maintains the Vector Indexer now?", top_k=5)
    assert any(h.text.startswith("Tomás Ortega now also") for h in hits)
    mentioned = {
        t
        for s, t, kind, _ in kb.graph.iter_relations([gm.MENTIONS])
        if s in {c for c, _, m in kb.vectors.iter_chunks() if m["doc_id"].endswith("team.txt")}
    }
    assert gm.doc_node_id(doc_id(docs_dir, "vector-indexer.md")) in mentioned
    assert gm.doc_node_id(doc_id(docs_dir, "document-interpreter.md")) not in mentioned
    assert_consistent(kb)


def test_prune_removes_everywhere(kb: KnowledgeBase, docs_dir: Path) -> None:
    kb.ingest(docs_dir)
    gone = doc_id(docs_dir, "graph-updater.md")
    (docs_dir / "graph-updater.md").unlink()
    assert kb.ingest(docs_dir, prune=True).removed == [gone]
    assert all(h.doc_id != gone for h in kb.search("Graph Updater", top_k=10))
    assert kb.stats()["documents"] == 4
    assert_consistent(kb)


def test_reopen_sees_the_data(config: KBConfig, embedding, docs_dir: Path) -> None:
    with KnowledgeBase.open(config=config, embedding=embedding) as kb:
        kb.ingest(docs_dir)
        before = kb.stats()
        facts = len(kb.retrieve(QUESTION).structured_facts)
    with KnowledgeBase.open(config=config, embedding=embedding, create=False) as kb:
        assert kb.stats() == before
        assert len(kb.retrieve(QUESTION).structured_facts) == facts > 0
        assert len(kb.ingest(docs_dir).unchanged) == 5


@pytest.mark.integration
def test_from_env_uses_the_servers(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, embedding, chroma_server, falkordb_server
) -> None:
    for key, value in {**chroma_server.env, **falkordb_server.env}.items():
        monkeypatch.setenv(key, value)
    with KnowledgeBase.from_env(tmp_path / "kb", embedding=embedding) as kb:
        assert isinstance(kb.vectors, ChromaServerChunkStore)
        assert isinstance(kb.graph, FalkorDBGraphStore)
        assert kb.graph.graph_name == kb.config.collection
        saved = (tmp_path / "kb" / "kb.json").read_text()
    local = {p.name for p in (tmp_path / "kb").iterdir()}
    assert "kb.json" in local and "chroma" not in local and "graph.sqlite" not in local
    assert "redis://" not in saved and "127.0.0.1" not in saved


# -- faults ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "backend", "fix"),
    [
        (
            lambda port: {"chroma": ChromaServerConfig(host="127.0.0.1", port=port)},
            "Chroma server",
            "docker compose -f docker/compose.yaml up -d chroma",
        ),
        (
            lambda port: {"falkordb": FalkorDBConfig(url=f"redis://:hunter2@127.0.0.1:{port}")},
            "FalkorDB",
            "unset FALKORDB_URL",
        ),
        (
            lambda port: {"neo4j": Neo4jConfig(uri=f"bolt://127.0.0.1:{port}", password="hunter2")},
            "Neo4j",
            "unset NEO4J_URI",
        ),
    ],
    ids=["chroma", "falkordb", "neo4j"],
)
def test_server_down_at_open(tmp_path: Path, embedding, settings, backend: str, fix: str) -> None:
    port = free_port()
    config = KBConfig.build(path=tmp_path / "kb", **settings(port))
    with pytest.raises(BackendUnavailable) as caught:
        KnowledgeBase.open(config=config, embedding=embedding)
    message = str(caught.value)
    assert message.startswith(f"{backend} at ") and f"127.0.0.1:{port}" in message
    assert fix in message
    assert "hunter2" not in message


class KillingEmbedding(CountingEmbedding):
    """A real embedding that kills a server process on its ``kill_at``-th batch."""

    victim: Any = None
    kill_at: int = 3
    calls: int = 0

    @classmethod
    def class_name(cls) -> str:
        return "KillingEmbedding"

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        if self.calls == self.kill_at:
            self.victim.kill()
        return super()._get_text_embeddings(texts)


def write_corpus(path: Path, size: int = 60) -> Path:
    """``size`` one-chunk documents, each mentioning the next by title."""
    with path.open("w", encoding="utf-8") as f:
        for i in range(size):
            text = f"Passage {i} mentions Doc {(i + 1) % size}. " * 5
            f.write(json.dumps({"id": f"d{i}", "title": f"Doc {i}", "text": text}) + "\n")
    return path


@pytest.mark.integration
@pytest.mark.parametrize("victim_name", ["falkordb", "chroma"])
def test_server_killed_during_ingest_then_rerun(
    victim_name: str,
    tmp_path: Path,
    embedding,
    chroma_server,
    falkordb_server,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pipeline, "_BATCH_CHUNKS", 8)
    corpus = write_corpus(tmp_path / "corpus.jsonl")
    if victim_name == "falkordb":
        victim: servers.ManagedServer = FalkorDBServer(tmp_path / "victim", persistent=True)
        env = {**chroma_server.env, **victim.start().env}
    else:
        victim = ChromaServer(tmp_path / "victim")
        env = {**victim.start().env, **falkordb_server.env}
    try:
        config = KBConfig.from_env(tmp_path / "kb", env=env, collection=unique_name())
        killer = KillingEmbedding(inner=embedding, model_name=embedding.model_name, victim=victim)
        with KnowledgeBase.open(config=config, embedding=killer) as kb:
            try:
                report = kb.ingest(corpus)
            except BackendUnavailable as e:  # the graph is needed to finish the run
                reasons = [str(e)]
            else:  # the failed batches are reported document by document
                assert report.failed and not report.ok
                reasons = [f.reason for f in report.failed]
            assert all("is unreachable" in r and "docker compose" in r for r in reasons)
        victim.start()  # same port, same data directory
        with KnowledgeBase.open(config=config, embedding=embedding) as kb:
            report = kb.ingest(corpus)
            assert report.ok
            assert sorted(report.added + report.updated + report.unchanged) == sorted(
                f"d{i}" for i in range(60)
            )
            assert_consistent(kb)
            assert kb.vectors.count() == kb.stats()["documents"] == 60
            assert kb.graph.count_nodes(gm.DOCUMENT) == 60
            assert kb.ingest(corpus).unchanged  # stable now
            links = kb.graph.count_relations(gm.MENTIONS)
    finally:
        victim.stop()
    assert links == 60  # every mention link restored by the re-run


@pytest.mark.integration
def test_server_down_during_retrieval(tmp_path: Path, embedding, docs_dir: Path) -> None:
    graph_server = FalkorDBServer(tmp_path / "falkordb", persistent=True).start()
    vector_server = ChromaServer(tmp_path / "chroma").start()
    env = {**graph_server.env, **vector_server.env}
    try:
        # no query cache: it would answer the repeated question from memory while the stores
        # are unchanged, and this test is about what each backend's outage does
        config = KBConfig.from_env(tmp_path / "kb", env=env, collection=unique_name(), cache_size=0)
        with KnowledgeBase.open(config=config, embedding=embedding) as kb:
            kb.ingest(docs_dir)
            full = kb.retrieve(QUESTION)
            assert "degraded" not in full.trace and full.structured_facts

            graph_server.kill()
            degraded = kb.retrieve(QUESTION)
            # the search index lives in the graph server too: its lookups and the graph
            # traversal are down, dense passages still come from Chroma
            assert {d.split(":")[0] for d in degraded.trace["degraded"]} <= {"index", "graph"}
            assert all("FalkorDB at redis://127.0.0.1" in d for d in degraded.trace["degraded"])
            assert degraded.unstructured
            assert not any(f.structural for f in degraded.structured_facts)
            with pytest.raises(BackendUnavailable, match="FalkorDB"):
                kb.retrieve(QUESTION, strict=True)

            graph_server.start()
            again = kb.retrieve(QUESTION)
            assert "degraded" not in again.trace
            assert len(again.structured_facts) == len(full.structured_facts)

            vector_server.kill()
            degraded = kb.retrieve(QUESTION)
            assert [d.split(":")[0] for d in degraded.trace["degraded"]] == ["vector"]
            assert "Chroma server at http://127.0.0.1" in degraded.trace["degraded"][0]
            assert degraded.unstructured and degraded.structured_facts  # BM25 + graph
            with pytest.raises(BackendError, match="Chroma server"):
                kb.retrieve(QUESTION, strict=True)
    finally:
        graph_server.stop()
        vector_server.stop()
