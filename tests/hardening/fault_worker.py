"""Code run in child processes by the fault-injection test (importable by a forkserver)."""

from __future__ import annotations

import hashlib
from collections import Counter
from multiprocessing.connection import Connection
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding

from llama_kb import KnowledgeBase
from llama_kb import graph_model as gm

DIMENSION = 16


class HashEmbedding(BaseEmbedding):
    """Deterministic, instant vectors from a text's hash: the test is about storage."""

    model_name: str = "hash-embedding"

    @classmethod
    def class_name(cls) -> str:
        return "HashEmbedding"

    @property
    def dimension(self) -> int:
        return DIMENSION

    def _vector(self, text: str) -> list[float]:
        digest = hashlib.sha256(text.encode()).digest()
        return [(b - 127.5) / 127.5 for b in digest[:DIMENSION]]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)


def cycle(kb_dir: str, docs_dir: str, conn: Connection) -> None:
    """One child's life: a normal run after the previous crash, its report, then the
    operation the parent sends, during which the parent may kill us with SIGKILL."""
    with KnowledgeBase.open(kb_dir, embedding=HashEmbedding()) as kb:
        conn.send(_normal_run(kb, docs_dir))
        message = conn.recv()
        if message is None:
            return
        op, doc_ids = message
        conn.send("started")
        if op == "ingest":
            kb.ingest(docs_dir)
        elif op == "prune":
            kb.ingest(docs_dir, prune=True)
        elif op == "remove":
            kb.remove(doc_ids)
        elif op == "rebuild":
            kb.rebuild(docs_dir)
        else:
            raise ValueError(op)


def _normal_run(kb: KnowledgeBase, docs_dir: str) -> dict[str, Any]:
    """Ingest with prune, then report what every store holds."""
    report = kb.ingest(docs_dir, prune=True)
    chunk_ids = []
    per_doc: Counter[str] = Counter()
    for chunk_id, _, meta in kb.vectors.iter_chunks():
        chunk_ids.append(chunk_id)
        per_doc[str(meta.get("doc_id"))] += 1
    part_of: Counter[str] = Counter(
        target[len(gm.doc_node_id("")) :]
        for _, target, _, _ in kb.graph.iter_relations([gm.PART_OF])
    )
    docs = kb.manifest.documents()
    return {
        "failed": [f"{f.source}: {f.reason}" for f in report.failed],
        "ready": {d.doc_id: d.chunk_count for d in docs if d.status == "ready"},
        "pending": [d.doc_id for d in docs if d.status != "ready"],
        "vectors_per_doc": dict(per_doc),
        "graph_chunks_per_doc": dict(part_of),
        "duplicate_chunk_ids": len(chunk_ids) - len(set(chunk_ids)),
        "chunk_nodes": kb.graph.count_nodes(gm.CHUNK),
        "orphans": kb.repair(dry_run=True).summary(),
    }
