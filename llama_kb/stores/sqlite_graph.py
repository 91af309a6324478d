"""An embedded, persistent property graph store on SQLite.

:class:`SQLitePropertyGraphStore` implements LlamaIndex's ``PropertyGraphStore`` over one SQLite
file, so a property graph survives restarts without a server. The schema follows seed 003: a
``nodes`` table keyed by the node id (a URI-like string such as ``entity:douglas-sirk`` or
``chunk://doc#3``) and a ``relations`` table whose ``weight`` column (0..1) is the traversal
cost. Besides the LlamaIndex API the store offers what the retriever needs: a cost-bounded
traversal (:meth:`~SQLitePropertyGraphStore.traverse`), case-insensitive name lookup, streaming
relations for PageRank, deletion by document, and a ``revision`` counter for caches.

Mapping of LlamaIndex objects to rows:

* ``node.id`` -> ``uri``; ``node.label`` -> ``node_type``; ``properties`` -> ``metadata`` (JSON);
* ``EntityNode.name`` -> ``name``; ``ChunkNode.text`` -> ``content``;
* ``Relation.properties["weight"]`` -> ``weight`` (default 1.0); other properties -> ``metadata``;
* embeddings are **not stored** (the store has no vector search; keep vectors in the vector
  store).

Reading back, a row with ``content`` becomes a ``ChunkNode``; any other row becomes an
``EntityNode`` (a :class:`NamedNode` when its id is not derived from its name), and every
``Relation`` carries its ``weight`` in ``properties``.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from llama_index.core.graph_stores.types import (
    LabelledNode,
    Relation,
    Triplet,
)
from llama_index.core.schema import BaseNode
from llama_index.core.vector_stores.types import VectorStoreQuery

from llama_kb.errors import NotSupportedError
from llama_kb.graph_model import NamedNode
from llama_kb.lru import LRU
from llama_kb.stores import _sqlite_reads as _reads
from llama_kb.stores import _sqlite_traverse as _traverse
from llama_kb.stores import _sqlite_writes as _writes
from llama_kb.stores._sqlite_async import ThreadedAsyncGraphStore
from llama_kb.stores._sqlite_db import SCHEMA_VERSION, SQLiteDatabase
from llama_kb.stores.search import NameReads
from llama_kb.stores.sqlite_search import VIEW_COUNTS, SQLiteSearchIndex
from llama_kb.stores.traversal import Direction, TraversalStep

__all__ = [
    "SCHEMA_VERSION",
    "NamedNode",
    "SQLitePropertyGraphStore",
    "TraversalStep",
]

logger = logging.getLogger(__name__)


class SQLitePropertyGraphStore(ThreadedAsyncGraphStore):
    """A LlamaIndex property graph store kept in one SQLite file.

    Every write is one transaction and commits before the call returns, so there is nothing to
    ``persist``. The connection is shared by all threads and guarded by a lock, so the store can
    be used from worker threads (``asyncio.to_thread``); the ``a*`` methods do exactly that.
    Several processes may open the same file (WAL mode; writers wait up to ``timeout`` seconds).

    Differences from LlamaIndex's ``SimplePropertyGraphStore``:

    * property filters (``get``, ``get_triplets``, ``delete``) require **all** given keys to
      match, as the Neo4j store does; a key whose value is ``None`` matches a stored JSON
      ``null`` only, never a missing key;
    * ``delete`` removes the matching nodes (with their relations) and, for ``relation_names``
      and ``properties``, the matching relations only, never their end nodes; with no
      argument it deletes nothing;
    * ``get_rel_map`` neither follows nor returns ``ignore_rels`` relations;
    * embeddings are not stored, and ``vector_query``/``structured_query`` are not supported.

    Args:
        path: The database file, created (with its parent directories) if missing, or
            ``":memory:"`` for a private in-memory graph.
        timeout: Seconds to wait for another process's write lock before failing.

    Raises:
        BackendError: The file is not an SQLite database, belongs to another application, or
            was written by a newer llama-kb.

    Example:
        >>> with SQLitePropertyGraphStore(":memory:") as store:
        ...     store.upsert_nodes([EntityNode(name="Douglas Sirk")])
        ...     store.count_nodes()
        1
    """

    supports_structured_queries: bool = False
    supports_vector_queries: bool = False

    def __init__(self, path: str | Path, *, timeout: float = 30.0) -> None:
        self._db = SQLiteDatabase(path, timeout=timeout)
        self._view_counts = LRU[int](VIEW_COUNTS)  # shared by every index of this store
        self._name_reads = NameReads()

    # ----------------------------------------------------------------------------------------
    # lifecycle

    @property
    def path(self) -> str:
        """The database file (or ``":memory:"``)."""
        return self._db.path

    @property
    def closed(self) -> bool:
        """True once :meth:`close` has been called."""
        return self._db.closed

    @property
    def client(self) -> sqlite3.Connection:
        """The underlying ``sqlite3`` connection (shared; hold no transaction open on it)."""
        return self._db.connection()

    def close(self) -> None:
        """Close the database connection; further calls raise :class:`BackendError`."""
        self._db.close()

    def __enter__(self) -> SQLitePropertyGraphStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(path={self._db.path!r})"

    def persist(self, persist_path: str, fs: Any = None) -> None:
        """Do nothing: every write is already committed to the database file."""
        logger.debug(
            "persist(%r) ignored: the SQLite graph store is always persisted", persist_path
        )

    # ----------------------------------------------------------------------------------------
    # LlamaIndex PropertyGraphStore API: reads

    def get(
        self,
        properties: dict[str, Any] | None = None,
        ids: list[str] | None = None,
    ) -> list[LabelledNode]:
        """Nodes matching every given filter (all nodes when no filter is given).

        Args:
            properties: ``{key: value}`` pairs that must all equal the node's properties.
            ids: Node ids to return.

        Returns:
            The nodes, in insertion order.
        """
        return _reads.get_nodes(self._db, properties, ids)

    def get_triplets(
        self,
        entity_names: list[str] | None = None,
        relation_names: list[str] | None = None,
        properties: dict[str, Any] | None = None,
        ids: list[str] | None = None,
    ) -> list[Triplet]:
        """Triplets ``(subject, relation, object)`` matching every given filter.

        Args:
            entity_names: Subject or object has one of these names or ids.
            relation_names: The relation type is one of these.
            properties: Each ``{key: value}`` equals a property of the subject, the relation
                or the object.
            ids: Subject or object has one of these ids.

        Returns:
            The triplets in insertion order of their relations; an empty list when no filter is
            given (as in LlamaIndex).
        """
        return _reads.get_triplets(self._db, entity_names, relation_names, properties, ids)

    def get_rel_map(
        self,
        graph_nodes: list[LabelledNode],
        depth: int = 2,
        limit: int = 30,
        ignore_rels: list[str] | None = None,
    ) -> list[Triplet]:
        """Triplets within ``depth`` hops of ``graph_nodes``, following edges both ways.

        Breadth first: all relations touching the start nodes, then those touching the nodes
        they reached, and so on. Within one hop, relations are ordered by the position of the
        node that reached them in ``graph_nodes`` (then by type and ids), so the facts of the
        first start node come first when ``limit`` cuts the list.

        Args:
            graph_nodes: Start nodes (only their ids are used).
            depth: Most hops from a start node.
            limit: Most triplets returned.
            ignore_rels: Relation types neither followed nor returned (LlamaIndex retrievers
                pass ``["SOURCE"]``).

        Returns:
            Up to ``limit`` distinct triplets, nearest first.
        """
        return _reads.get_rel_map(self._db, graph_nodes, depth, limit, ignore_rels)

    def get_llama_nodes(self, node_ids: list[str]) -> list[BaseNode]:
        """LlamaIndex nodes stored by ``upsert_llama_nodes`` (none for an empty list)."""
        if not node_ids:
            return []
        return super().get_llama_nodes(node_ids)

    def get_schema(self, refresh: bool = False) -> dict[str, Any]:
        """A summary of the graph: node counts per label and relation counts per type.

        Args:
            refresh: Ignored; the summary is always computed from the current data.

        Returns:
            ``{"schema_version": int, "node_labels": {label: count},
            "relation_types": {type: count}}``.
        """
        with self._read() as conn:
            labels = conn.execute(
                "SELECT node_type, count(*) FROM nodes GROUP BY node_type ORDER BY node_type"
            ).fetchall()
            types = conn.execute(
                "SELECT relation_type, count(*) FROM relations "
                "GROUP BY relation_type ORDER BY relation_type"
            ).fetchall()
        return {
            "schema_version": SCHEMA_VERSION,
            "node_labels": dict(labels),
            "relation_types": dict(types),
        }

    def structured_query(self, query: str, param_map: dict[str, Any] | None = None) -> Any:
        """Not supported: raises :class:`NotSupportedError`."""
        raise NotSupportedError(
            "The embedded SQLite graph store does not run Cypher or other structured queries. "
            "Use Neo4j or FalkorDB as the graph backend for text-to-Cypher retrieval, or use "
            "get_triplets(), get_rel_map() and traverse() here."
        )

    def vector_query(
        self, query: VectorStoreQuery, **kwargs: Any
    ) -> tuple[list[LabelledNode], list[float]]:
        """Not supported: raises :class:`NotSupportedError`."""
        raise NotSupportedError(
            "The embedded SQLite graph store has no vector index and does not store node "
            "embeddings. Pass a vector_store to PropertyGraphIndex (or use Neo4j/FalkorDB) to "
            "search graph nodes by embedding."
        )

    # ----------------------------------------------------------------------------------------
    # LlamaIndex PropertyGraphStore API: writes

    def upsert_nodes(self, nodes: Sequence[LabelledNode]) -> None:
        """Insert nodes, or replace the stored label, name, text and properties of existing ids.

        Embeddings are not stored. Rewriting a node with identical data changes nothing (its
        ``updated_at`` and the store :attr:`revision` stay put).

        Raises:
            DocumentError: A node has properties that cannot be stored as JSON.
        """
        _writes.upsert_nodes(self._db, nodes)

    def upsert_relations(self, relations: Sequence[Relation]) -> None:
        """Insert relations, or update the weight and properties of existing ones.

        A relation is identified by ``(source_id, target_id, label)``. Its traversal cost is
        ``properties["weight"]`` (a number from 0 to 1, default 1.0). An endpoint that is not
        stored yet is created as a bare ``entity`` node named by its id, as LlamaIndex does. The
        whole batch is one transaction: if one relation is invalid, nothing is written.

        Raises:
            DocumentError: A relation has an invalid weight or properties that are not JSON.
        """
        _writes.upsert_relations(self._db, relations)

    def delete(
        self,
        entity_names: list[str] | None = None,
        relation_names: list[str] | None = None,
        properties: dict[str, Any] | None = None,
        ids: list[str] | None = None,
    ) -> None:
        """Delete matching data in one transaction.

        Args:
            entity_names: Delete the nodes with these names or ids, and their relations.
            relation_names: Delete every relation of these types (the nodes stay).
            properties: Delete the nodes, and the relations, whose properties match all pairs.
            ids: Delete the nodes with these ids, and their relations.
        """
        _writes.delete(self._db, entity_names, relation_names, properties, ids)

    # ----------------------------------------------------------------------------------------
    # product extras

    @property
    def revision(self) -> int:
        """A counter that grows with every committed write that changed data.

        Caches derived from the graph (name matchers, PageRank) compare it to decide whether to
        rebuild. It is stored in the database, so writes by other processes count too.
        """
        return self.search_index.revision

    @property
    def search_index(self) -> SQLiteSearchIndex:
        """Bounded lookups for retrieval (full-text, names, neighbourhoods, facts)."""
        return SQLiteSearchIndex(self._db, view_counts=self._view_counts, names=self._name_reads)

    def count_nodes(self, label: str | None = None) -> int:
        """Number of nodes, or of nodes with ``label``."""
        return _reads.count_nodes(self._db, label)

    def count_relations(self, relation_type: str | None = None) -> int:
        """Number of relations, or of relations of ``relation_type``."""
        return _reads.count_relations(self._db, relation_type)

    def delete_by_property(self, key: str, value: Any) -> int:
        """Delete the nodes whose property ``key`` equals ``value``, with their relations.

        Example: ``store.delete_by_property("doc_id", "a.md")`` removes a document's chunks.

        Args:
            key: Property name.
            value: Value to match (``None`` matches a stored JSON ``null`` only).

        Returns:
            The number of nodes deleted.
        """
        return _writes.delete_by_property(self._db, key, value)

    def delete_by_values(self, key: str, values: Sequence[Any]) -> int:
        """Delete the nodes whose property ``key`` equals one of ``values`` (each value an
        indexed delete, as :meth:`delete_by_property`); returns how many."""
        return sum(_writes.delete_by_property(self._db, key, v) for v in dict.fromkeys(values))

    def delete_orphan_entities(self, label: str = "entity") -> int:
        """Delete the nodes labelled ``label`` that no relation touches any more.

        Returns:
            The number of nodes deleted.
        """
        return _writes.delete_orphan_entities(self._db, label)

    def find_nodes_by_name(
        self,
        names: Iterable[str],
        label: str | None = None,
        case_sensitive: bool = False,
    ) -> list[LabelledNode]:
        """Nodes whose ``name`` is one of ``names``.

        Case-insensitive matching compares Unicode case folds (after NFKC normalisation), so
        ``"douglas sirk"`` finds ``"Douglas Sirk"`` and ``"STRASSE"`` finds ``"Straße"``;
        accents and punctuation still count.

        Args:
            names: Names to look up.
            label: Only nodes with this label.
            case_sensitive: Match names exactly.

        Returns:
            The matching nodes, ordered by the first name that matched them, then by insertion.
        """
        return _reads.find_nodes_by_name(self._db, names, label, case_sensitive)

    def named_nodes(
        self, labels: Iterable[str] | None = None, ids: Iterable[str] | None = None
    ) -> list[tuple[str, str, str]]:
        """``(id, name, label)`` of the nodes that have a name (entities, not chunks).

        Lighter than :meth:`get` (no properties are decoded); used to build name matchers.

        Args:
            labels: Only nodes with one of these labels.
            ids: Only nodes with one of these ids.

        Returns:
            The triples in insertion order.
        """
        return _reads.named_nodes(self._db, labels, ids)

    def nodes_with_incoming(self, ids: Iterable[str]) -> set[str]:
        """Those of ``ids`` that are the target of at least one relation."""
        return _reads.nodes_with_incoming(self._db, ids)

    def relations_among(
        self, ids: Iterable[str], access: Collection[str] | None = None
    ) -> list[Relation]:
        """Relations whose source and target are both in ``ids`` (at most ~900 ids)."""
        return _reads.relations_among(self._db, ids, access)

    def iter_relations(
        self, relation_types: Iterable[str] | None = None
    ) -> Iterator[tuple[str, str, str, float]]:
        """Stream every relation as ``(source_id, target_id, relation_type, weight)``.

        Rows are read page by page (the lock is not held between pages), so the whole graph
        never sits in memory; writes made while iterating may or may not be seen.

        Args:
            relation_types: Only relations of these types.
        """
        return _reads.iter_relations(self._db, relation_types)

    def traverse(
        self,
        start_ids: Iterable[str],
        max_cost: float = 1.0,
        max_hops: int = 3,
        max_nodes: int = 100,
        relation_types: Iterable[str] | None = None,
        direction: Direction = "both",
        access: Collection[str] | None = None,
    ) -> list[TraversalStep]:
        """Cost-bounded search from ``start_ids``, loading each frontier with one SQL query.

        See :meth:`llama_kb.stores.graph.KBGraphStore.traverse` for arguments and result.
        """
        return _traverse.traverse(
            self._db, start_ids, max_cost, max_hops, max_nodes, relation_types, direction, access
        )

    # ----------------------------------------------------------------------------------------

    async def atraverse(
        self,
        start_ids: Iterable[str],
        max_cost: float = 1.0,
        max_hops: int = 3,
        max_nodes: int = 100,
        relation_types: Iterable[str] | None = None,
        direction: Direction = "both",
    ) -> list[TraversalStep]:
        """Async :meth:`traverse` (runs in a worker thread)."""
        types = None if relation_types is None else list(relation_types)
        return await asyncio.to_thread(
            self.traverse, list(start_ids), max_cost, max_hops, max_nodes, types, direction
        )

    # ----------------------------------------------------------------------------------------
    # internals

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        with self._db.read() as conn:
            yield conn

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; bumps the revision when rows changed, rolls back on error."""
        with self._db.write() as conn:
            yield conn
