"""A :class:`~llama_kb.stores.search.SearchIndex` held in memory, for graph stores without one.

A user's own LlamaIndex ``PropertyGraphStore`` (through
:class:`~llama_kb.stores.adapters.PropertyGraphAdapter`) cannot answer the search lookups from
its own indexes, so this index reads every chunk and relation once, keeps BM25 and the name
tables in memory, and is rebuilt when the graph's revision moves. The embedded SQLite store
and the FalkorDB / Neo4j stores never use it: they provide their own ``search_index``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from llama_index.core.graph_stores.types import Relation

from llama_kb import graph_model as gm
from llama_kb.access import ACCESS_FIELD, PUBLIC, readable
from llama_kb.names import fold, matchable_forms, name_key, tokens
from llama_kb.retrieval.fuzzy_names import trigrams
from llama_kb.retrieval.index import matches_filters, top_rows
from llama_kb.retrieval.lexical import BM25Index
from llama_kb.stores.chroma_vector import ChromaChunkStore
from llama_kb.stores.graph import KBGraphStore
from llama_kb.stores.search import LINK_RELATIONS, Filters, NameForm, NameStats

logger = logging.getLogger(__name__)

_NOT_NAMES = frozenset({gm.CHUNK, gm.FACT})


@dataclass(frozen=True)
class _Tables:
    chunk_ids: tuple[str, ...]
    records: dict[str, tuple[str, dict[str, Any]]]
    bm25: BM25Index
    names: dict[str, str]
    forms: dict[str, list[NameForm]]
    chunk_links: dict[str, list[tuple[str, bool]]]
    name_links: dict[str, list[tuple[str, bool]]]
    facts: list[dict[str, Any]]
    fields: frozenset[str]
    keys: frozenset[str]
    """Access keys of the chunks and relations the tables were built from (all stored ones,
    for a view of everything)."""


class MemorySearchIndex:
    """Search lookups over an in-memory copy of the stores, rebuilt after writes.

    A restricted view (:meth:`scoped`) builds its tables from the records it may read only
    (chunks, relations and facts by access key, names through readable relations), so its
    BM25 statistics, name tables and counts are those of a store holding only them.

    Args:
        vectors: The chunk vector store (texts and metadata).
        graph: The graph store (names, relations, facts).
        visible: Only records with these access keys (``None``: everything).
    """

    def __init__(
        self,
        vectors: ChromaChunkStore,
        graph: KBGraphStore,
        visible: frozenset[str] | None = None,
    ) -> None:
        self.vectors = vectors
        self.graph = graph
        self.visible = visible
        self._lock = threading.Lock()
        self._tables: _Tables | None = None
        self._version: int | None = None
        self._views: dict[frozenset[str], MemorySearchIndex] = {}

    @property
    def revision(self) -> int:
        """The graph store's revision."""
        return self.graph.revision

    def access_keys(self) -> frozenset[str]:
        """Access keys of the stored chunks and relations."""
        return self._current().keys

    def scoped(self, visible: frozenset[str] | None) -> MemorySearchIndex:
        """A view answering from records with access keys in ``visible`` only (kept, and
        rebuilt with the stores' revision, per key set)."""
        if visible is None:
            return self
        with self._lock:
            view = self._views.get(visible)
            if view is None:
                view = self._views[visible] = MemorySearchIndex(self.vectors, self.graph, visible)
            return view

    def _current(self) -> _Tables:
        try:
            version = self.graph.revision
        except Exception:
            if self._tables is None:
                raise
            logger.warning("a store is unreachable; serving the last in-memory search index")
            return self._tables
        with self._lock:
            if self._tables is None or version != self._version:
                started = time.perf_counter()
                self._tables = _build(self.vectors, self.graph, self.visible)
                self._version = version
                logger.info(
                    "in-memory search index built: %d chunks in %.2fs",
                    len(self._tables.chunk_ids),
                    time.perf_counter() - started,
                )
            return self._tables

    def has_relations_besides(self, types: Collection[str]) -> bool:
        """Always ``True``: the in-memory tables keep no relation types."""
        return True

    def chunk_count(self) -> int:
        """Number of chunks."""
        return len(self._current().chunk_ids)

    def metadata_fields(self) -> frozenset[str]:
        """Metadata fields of the chunks."""
        return self._current().fields

    def lexical(
        self, terms: Sequence[str], k: int, filters: Filters | None = None
    ) -> list[tuple[str, float]]:
        """BM25 top ``k`` for ``terms``."""
        tables = self._current()
        scores = tables.bm25.scores(" ".join(terms))
        mask = None
        if filters:
            mask = np.array(
                [matches_filters(tables.records[c][1], filters) for c in tables.chunk_ids],
                dtype=bool,
            )
        rows = top_rows(np.where(scores > 0, scores, -np.inf), k, mask)
        return [(tables.chunk_ids[r], float(scores[r])) for r in rows]

    def name_forms(
        self, keys: Sequence[str], labels: Sequence[str] | None = None
    ) -> list[NameForm]:
        """Names spelled as one of ``keys`` (of ``labels``, if given)."""
        forms = self._current().forms
        found = [f for key in dict.fromkeys(keys) for f in forms.get(key, ())]
        return [f for f in found if labels is None or f.label in labels]

    def phrase_chunks(self, phrases: Sequence[str]) -> set[str]:
        """Chunks whose text contains one of ``phrases`` (folded words in sequence)."""
        wanted = [f" {' '.join(fold(w) for w in p.split())} " for p in phrases if p.strip()]
        found = set()
        for chunk_id, (text, _) in self._current().records.items():
            folded = f" {' '.join(fold(w) for w in tokens(text))} "
            if any(p in folded for p in wanted):
                found.add(chunk_id)
        return found

    def similar_names(self, texts: Sequence[str], k: int) -> dict[str, dict[str, str]]:
        """Each text -> the names sharing the most character trigrams with it."""
        names = self._current().names
        found: dict[str, dict[str, str]] = {}
        for text in texts:
            grams = trigrams(text)
            shared = {n: len(grams & trigrams(name)) for n, name in names.items()}
            ranked = sorted((n for n, s in shared.items() if s), key=lambda n: (-shared[n], n))
            found[text] = {n: names[n] for n in ranked[:k]}
        return found

    def display_names(self, node_ids: Sequence[str]) -> dict[str, str]:
        """Node id -> name."""
        names = self._current().names
        return {n: names[n] for n in node_ids if n in names}

    def chunk_links(self, chunk_ids: Sequence[str]) -> dict[str, list[tuple[str, bool]]]:
        """Chunk id -> its names."""
        links = self._current().chunk_links
        return {c: list(links.get(c, ())) for c in chunk_ids}

    def name_links(self, name_ids: Sequence[str], cap: int) -> dict[str, list[tuple[str, bool]]]:
        """Name id -> up to ``cap`` chunks, its own first."""
        links = self._current().name_links
        return {n: sorted(links.get(n, ()), key=lambda e: not e[1])[:cap] for n in name_ids}

    def name_stats(self, name_ids: Sequence[str]) -> dict[str, NameStats]:
        """Name id -> chunk counts."""
        links = self._current().name_links
        stats = {}
        for name in name_ids:
            edges = links.get(name, ())
            titles = sum(1 for _, own in edges if own)
            stats[name] = NameStats(titles, len(edges) - titles)
        return stats

    def chunk_records(self, chunk_ids: Sequence[str]) -> dict[str, tuple[str, dict[str, Any]]]:
        """Chunk id -> ``(text, metadata)``."""
        records = self._current().records
        return {c: records[c] for c in chunk_ids if c in records}

    def facts(
        self, keys: Sequence[str], doc_ids: Sequence[str], chunk_ids: Sequence[str], limit: int
    ) -> list[dict[str, Any]]:
        """Fact properties about ``keys`` or from ``doc_ids`` / ``chunk_ids``."""
        keys_, docs, chunks = set(keys), set(doc_ids), set(chunk_ids)
        found = [
            props
            for props in self._current().facts
            if name_key(str(props.get("subject", ""))) in keys_
            or name_key(str(props.get("object", ""))) in keys_
            or props.get("doc_id") in docs
            or props.get("chunk_id") in chunks
        ]
        return found[:limit]


def _build(
    vectors: ChromaChunkStore, graph: KBGraphStore, visible: frozenset[str] | None
) -> _Tables:
    chunk_ids: list[str] = []
    records: dict[str, tuple[str, dict[str, Any]]] = {}
    keys: set[str] = set()
    for chunk_id, text, meta in vectors.iter_chunks():
        keys.add(str(meta.get(ACCESS_FIELD, PUBLIC)))
        if readable(meta, visible):
            chunk_ids.append(chunk_id)
            records[chunk_id] = (text, meta)
    relations = _relations(graph)
    keys.update(str(r.properties.get(ACCESS_FIELD, PUBLIC)) for r in relations)
    relations = [r for r in relations if readable(r.properties, visible)]
    reached = {end for r in relations for end in (r.source_id, r.target_id)}
    named = {
        node_id: (name, label)
        for node_id, name, label in graph.named_nodes(labels=None)
        if label not in _NOT_NAMES and (visible is None or node_id in reached)
    }
    names = {node_id: name for node_id, (name, _) in named.items()}
    forms: dict[str, list[NameForm]] = {}
    for node_id, (name, label) in named.items():
        for words in matchable_forms(name):
            key = "-".join(fold(w) for w in words)
            forms.setdefault(key, []).append(
                NameForm(key, node_id, words[0] if len(words) == 1 else None, label)
            )
    chunk_links: dict[str, list[tuple[str, bool]]] = {}
    name_links: dict[str, list[tuple[str, bool]]] = {}
    for rel in relations:
        source, target = rel.source_id, rel.target_id
        linked = rel.label in LINK_RELATIONS and source in records and target in names
        if linked and source != target:
            own = rel.label == gm.PART_OF
            chunk_links.setdefault(source, []).append((target, own))
            name_links.setdefault(target, []).append((source, own))
    facts = [
        node.properties
        for node in graph.get(properties={"kind": gm.FACT})
        if readable(node.properties, visible)
    ]
    bm25 = BM25Index([_lexical_text(*records[c]) for c in chunk_ids])
    fields = frozenset(k for _, meta in records.values() for k in meta)
    return _Tables(
        tuple(chunk_ids), records, bm25, names, forms, chunk_links, name_links, facts, fields,
        frozenset(keys),
    )  # fmt: skip


def _relations(graph: KBGraphStore) -> list[Relation]:
    """Every relation with its properties (one read per relation type)."""
    types = sorted({rel_type for _, _, rel_type, _ in graph.iter_relations()})
    if not types:
        return []
    return [rel for _, rel, _ in graph.get_triplets(relation_names=types)]


def _lexical_text(text: str, metadata: dict[str, Any]) -> str:
    title = metadata.get("title")
    return f"{title} {text}" if isinstance(title, str) and title else text
