"""An in-memory snapshot of the stores for query-time work: BM25, name graph, name matcher.

Built lazily on the first query and rebuilt when the graph store's revision changes.
Every ingestion batch writes chunk nodes to the graph, so the revision moves whenever
chunks change (in this process or another), and queries never see a stale index.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from llama_kb import graph_model as gm
from llama_kb.names import Mention, NameMatcher
from llama_kb.retrieval.lexical import BM25Index
from llama_kb.retrieval.name_graph import TITLE_PULL, NameGraph
from llama_kb.stores.chroma_vector import ChromaChunkStore
from llama_kb.stores.graph import KBGraphStore

logger = logging.getLogger(__name__)

_TITLE_RELATIONS = frozenset({gm.PART_OF})
_MENTION_RELATIONS = frozenset({gm.MENTIONS, gm.LINKS_TO})
_NOT_NAMES = frozenset({gm.CHUNK, gm.FACT})  # typed facts are ranked apart (fact_ranking)


@dataclass(frozen=True)
class IndexSnapshot:
    """Everything query-time ranking needs, for one state of the stores."""

    chunk_ids: tuple[str, ...]
    texts: tuple[str, ...]
    metadata: tuple[dict[str, Any], ...]
    row_of: dict[str, int]
    bm25: BM25Index
    graph: NameGraph
    matcher: NameMatcher
    names: dict[str, str]
    """Graph node id -> display name, for documents and entities."""
    doc_node_of_row: tuple[str, ...]
    metadata_keys: frozenset[str]

    def link(self, text: str) -> list[Mention]:
        """Known graph names in ``text``, one mention per node."""
        seen: set[str] = set()
        found = []
        for mention in self.matcher.find(text):
            if mention.node_id not in seen:
                seen.add(mention.node_id)
                found.append(mention)
        return found

    def rows_matching(self, filters: dict[str, Any]) -> np.ndarray:
        """Boolean mask of chunks whose metadata equals (or is in) each filter value."""
        mask = np.ones(len(self.chunk_ids), dtype=bool)
        for key, wanted in filters.items():
            allowed = set(wanted) if isinstance(wanted, list | tuple | set) else {wanted}
            mask &= np.fromiter((m.get(key) in allowed for m in self.metadata), bool, len(mask))
        return mask


class RetrievalIndex:
    """Keeps an :class:`IndexSnapshot` in step with the stores."""

    def __init__(
        self, vectors: ChromaChunkStore, graph: KBGraphStore, title_pull: float = TITLE_PULL
    ) -> None:
        self.vectors = vectors
        self.graph = graph
        self.title_pull = title_pull
        self._lock = threading.Lock()
        self._snapshot: IndexSnapshot | None = None
        self._version: int | None = None

    def snapshot(self) -> IndexSnapshot:
        """The current snapshot, rebuilt first if the stores changed.

        If a store cannot even say whether it changed (a server is down), the last
        snapshot is served as is, so retrieval degrades instead of failing.
        """
        try:
            version = self.graph.revision
        except Exception:
            if self._snapshot is None:
                raise
            logger.warning("a store is unreachable; serving the last retrieval index")
            return self._snapshot
        with self._lock:
            if self._snapshot is None or version != self._version:
                started = time.perf_counter()
                self._snapshot = build_snapshot(self.vectors, self.graph, self.title_pull)
                self._version = version
                logger.info(
                    "retrieval index built: %d chunks, %d names in %.2fs",
                    len(self._snapshot.chunk_ids),
                    len(self._snapshot.names),
                    time.perf_counter() - started,
                )
            return self._snapshot


def build_snapshot(
    vectors: ChromaChunkStore, graph: KBGraphStore, title_pull: float = TITLE_PULL
) -> IndexSnapshot:
    """Read chunks from the vector store and names/edges from the graph store."""
    chunk_ids: list[str] = []
    texts: list[str] = []
    metadata: list[dict[str, Any]] = []
    for chunk_id, text, meta in vectors.iter_chunks():
        chunk_ids.append(chunk_id)
        texts.append(text)
        metadata.append(meta)
    row_of = {c: i for i, c in enumerate(chunk_ids)}
    named = graph.named_nodes(labels=None)
    names = {node_id: name for node_id, name, label in named if label not in _NOT_NAMES}
    doc_nodes = tuple(gm.doc_node_id(str(m.get("doc_id", ""))) for m in metadata)
    rows_of_name: dict[str, list[int]] = {}
    for row, node in enumerate(doc_nodes):
        rows_of_name.setdefault(node, []).append(row)
    title_edges: list[tuple[int, str]] = []
    mention_edges: list[tuple[int, str]] = []
    for source, target, rel_type, _ in graph.iter_relations(None):
        if target not in names:
            continue
        chunk_row = row_of.get(source)
        if chunk_row is not None:
            if rel_type in _TITLE_RELATIONS:
                title_edges.append((chunk_row, target))
            elif rel_type in _MENTION_RELATIONS:
                mention_edges.append((chunk_row, target))
        elif source in names:
            # a relation between two names (loaded knowledge, an LLM extractor): the
            # passages about either end refer to the other end
            mention_edges.extend((r, target) for r in rows_of_name.get(source, ()))
            mention_edges.extend((r, source) for r in rows_of_name.get(target, ()))
    # every chunk belongs to its document's name even if the graph lost the edge
    titled = {row for row, _ in title_edges}
    title_edges.extend(
        (row, node) for row, node in enumerate(doc_nodes) if row not in titled and node in names
    )
    matcher = NameMatcher().add_all((name, node_id) for node_id, name in names.items())
    lexical = BM25Index([_lexical_text(t, m) for t, m in zip(texts, metadata, strict=True)])
    keys = frozenset(k for m in metadata for k in m)
    return IndexSnapshot(
        chunk_ids=tuple(chunk_ids),
        texts=tuple(texts),
        metadata=tuple(metadata),
        row_of=row_of,
        bm25=lexical,
        graph=NameGraph.build(len(chunk_ids), title_edges, mention_edges, title_pull),
        matcher=matcher,
        names=names,
        doc_node_of_row=doc_nodes,
        metadata_keys=keys,
    )


def _lexical_text(text: str, metadata: dict[str, Any]) -> str:
    title = metadata.get("title")
    return f"{title} {text}" if isinstance(title, str) and title else text


def top_rows(scores: np.ndarray, k: int, mask: np.ndarray | None = None) -> Sequence[int]:
    """Indices of the ``k`` highest scores (ties broken by row), restricted to ``mask``."""
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    k = min(k, int(np.isfinite(scores).sum()))
    if k <= 0:
        return []
    top = np.argpartition(-scores, k - 1)[:k]
    return list(top[np.lexsort((top, -scores[top]))])
