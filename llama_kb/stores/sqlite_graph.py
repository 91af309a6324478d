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
import json
import logging
import math
import numbers
import sqlite3
import threading
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from llama_index.core.graph_stores.types import (
    ChunkNode,
    EntityNode,
    LabelledNode,
    PropertyGraphStore,
    Relation,
    Triplet,
)
from llama_index.core.schema import BaseNode
from llama_index.core.vector_stores.types import VectorStoreQuery

from llama_kb.errors import BackendError, DocumentError, NotSupportedError
from llama_kb.graph_model import NamedNode
from llama_kb.stores.traversal import Adjacency, Direction, TraversalStep, cost_bounded_search

__all__ = [
    "SCHEMA_VERSION",
    "NamedNode",
    "SQLitePropertyGraphStore",
    "TraversalStep",
]

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 1
"""Stored in ``PRAGMA user_version``; bumped whenever the table layout changes."""

_BATCH = 500  # values per ``IN (?, ?, ...)`` list, far below SQLite's parameter limit
_PAGE = 2000  # rows per page when streaming relations


_SCHEMA = (
    """
    CREATE TABLE nodes (
        uri TEXT PRIMARY KEY,
        node_type TEXT NOT NULL,
        name TEXT,
        name_ci TEXT,
        content TEXT,
        metadata JSON NOT NULL DEFAULT '{}' CHECK (json_valid(metadata)),
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )
    """,
    "CREATE INDEX idx_nodes_node_type ON nodes(node_type)",
    "CREATE INDEX idx_nodes_name ON nodes(name)",
    "CREATE INDEX idx_nodes_name_ci ON nodes(name_ci)",
    # The UNIQUE constraint's index starts with source_uri, so it also serves lookups by source.
    """
    CREATE TABLE relations (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        source_uri TEXT NOT NULL,
        target_uri TEXT NOT NULL,
        relation_type TEXT NOT NULL,
        weight REAL NOT NULL DEFAULT 1.0 CHECK (weight BETWEEN 0 AND 1),
        metadata JSON NOT NULL DEFAULT '{}' CHECK (json_valid(metadata)),
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        FOREIGN KEY (source_uri) REFERENCES nodes(uri) ON DELETE CASCADE,
        FOREIGN KEY (target_uri) REFERENCES nodes(uri) ON DELETE CASCADE,
        UNIQUE (source_uri, target_uri, relation_type)
    )
    """,
    "CREATE INDEX idx_relations_target ON relations(target_uri)",
    "CREATE INDEX idx_relations_type ON relations(relation_type)",
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID",
    "INSERT INTO meta(key, value) VALUES ('revision', 0)",
    f"PRAGMA user_version = {SCHEMA_VERSION}",
)

_NODE_COLUMNS = "n.rowid, n.uri, n.node_type, n.name, n.content, n.metadata"

_UPSERT_NODE = """
    INSERT INTO nodes (uri, node_type, name, name_ci, content, metadata, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (uri) DO UPDATE SET
        node_type = excluded.node_type,
        name = excluded.name,
        name_ci = excluded.name_ci,
        content = excluded.content,
        metadata = excluded.metadata,
        updated_at = excluded.updated_at
    WHERE nodes.node_type IS NOT excluded.node_type
       OR nodes.name IS NOT excluded.name
       OR nodes.content IS NOT excluded.content
       OR nodes.metadata IS NOT excluded.metadata
"""

_INSERT_ENDPOINT = """
    INSERT INTO nodes (uri, node_type, name, name_ci, content, metadata, created_at, updated_at)
    VALUES (?, 'entity', ?, ?, NULL, '{}', ?, ?)
    ON CONFLICT (uri) DO NOTHING
"""

_UPSERT_RELATION = """
    INSERT INTO relations
        (source_uri, target_uri, relation_type, weight, metadata, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (source_uri, target_uri, relation_type) DO UPDATE SET
        weight = excluded.weight,
        metadata = excluded.metadata,
        updated_at = excluded.updated_at
    WHERE relations.weight IS NOT excluded.weight
       OR relations.metadata IS NOT excluded.metadata
"""


class SQLitePropertyGraphStore(PropertyGraphStore):
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
        self._path = str(path)
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        if self._path != ":memory:":
            Path(self._path).parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = sqlite3.connect(
                self._path, timeout=timeout, check_same_thread=False, isolation_level=None
            )
        except sqlite3.Error as e:
            raise BackendError(f"Cannot open the SQLite graph store at {self._path}: {e}") from e
        try:
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            self._conn = conn
            self._ensure_schema()
        except BaseException as e:
            conn.close()
            self._conn = None
            if isinstance(e, sqlite3.DatabaseError):
                raise BackendError(
                    f"{self._path} is not a usable SQLite database ({e}). "
                    "Point the graph store at a new file or at one llama-kb created."
                ) from e
            raise
        logger.debug("opened SQLite graph store %s", self._path)

    # ----------------------------------------------------------------------------------------
    # lifecycle

    @property
    def path(self) -> str:
        """The database file (or ``":memory:"``)."""
        return self._path

    @property
    def closed(self) -> bool:
        """True once :meth:`close` has been called."""
        return self._conn is None

    @property
    def client(self) -> sqlite3.Connection:
        """The underlying ``sqlite3`` connection (shared; hold no transaction open on it)."""
        return self._connection()

    def close(self) -> None:
        """Close the database connection; further calls raise :class:`BackendError`."""
        with self._lock:
            if self._conn is not None:
                try:
                    self._conn.execute("PRAGMA optimize")  # refresh planner statistics
                except sqlite3.Error:  # pragma: no cover - best effort
                    logger.debug("PRAGMA optimize failed on %s", self._path, exc_info=True)
                self._conn.close()
                self._conn = None
                logger.debug("closed SQLite graph store %s", self._path)

    def __enter__(self) -> SQLitePropertyGraphStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(path={self._path!r})"

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
        conds, params = _property_conditions("n.metadata", properties)
        sql = f"SELECT {_NODE_COLUMNS} FROM nodes n"
        rows: list[tuple[Any, ...]] = []
        with self._read() as conn:
            if ids:
                for chunk in _chunks(_unique(ids)):
                    where = " AND ".join([f"n.uri IN ({_marks(chunk)})", *conds])
                    rows.extend(conn.execute(f"{sql} WHERE {where}", [*chunk, *params]))
                rows.sort(key=lambda r: r[0])
            else:
                where = f" WHERE {' AND '.join(conds)}" if conds else ""
                rows = conn.execute(f"{sql}{where} ORDER BY n.rowid", params).fetchall()
        return [_node_from_row(*r[1:]) for r in rows]

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
        if not (entity_names or relation_names or properties or ids):
            return []
        conds: list[str] = []
        params: list[Any] = []
        if relation_names:
            names = _unique(relation_names)
            # With endpoint filters, "+" keeps SQLite from preferring the (unselective) type index.
            plus = "+" if entity_names or ids else ""
            conds.append(f"{plus}r.relation_type IN ({_marks(names)})")
            params.extend(names)
        for key, value in (properties or {}).items():
            parts = []
            for alias in ("s", "r", "t"):
                cond, cond_params = _property_condition(f"{alias}.metadata", key, value)
                if alias == "r" and key == "weight":
                    cond, cond_params = "r.weight IS ?", [value]
                parts.append(cond)
                params.extend(cond_params)
            conds.append(f"({' OR '.join(parts)})")

        with self._read() as conn:
            endpoint_sets: list[set[str]] = []
            if entity_names:
                endpoint_sets.append(self._uris_for_names(conn, entity_names))
            if ids:
                endpoint_sets.append(set(ids))
            if not endpoint_sets:
                rows = _triplet_rows(conn, conds, params)
            else:
                first, *others = endpoint_sets
                found: dict[int, tuple[Any, ...]] = {}
                for chunk in _chunks(sorted(first)):
                    marks = _marks(chunk)
                    where = [f"(r.source_uri IN ({marks}) OR r.target_uri IN ({marks}))", *conds]
                    for row in _triplet_rows(conn, where, [*chunk, *chunk, *params]):
                        found[row[0]] = row
                rows = [
                    row
                    for _, row in sorted(found.items())
                    if all(row[1] in other or row[2] in other for other in others)
                ]
        return [_triplet_from_row(row) for row in rows]

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
        frontier = _unique(node.id for node in graph_nodes)
        if not frontier or depth <= 0 or limit <= 0:
            return []
        ignored = _unique(ignore_rels or [])
        ignore_sql = f" AND relation_type NOT IN ({_marks(ignored)})" if ignored else ""
        visited = set(frontier)
        seen: set[int] = set()
        picked: list[tuple[Any, ...]] = []
        with self._read() as conn:
            for _ in range(depth):
                position = {uri: i for i, uri in enumerate(frontier)}
                next_frontier: list[str] = []
                for chunk in _chunks(frontier):
                    marks = _marks(chunk)
                    rows = conn.execute(
                        "SELECT id, source_uri, target_uri, relation_type, weight, metadata "
                        f"FROM relations WHERE (source_uri IN ({marks}) OR target_uri IN ({marks}))"
                        f"{ignore_sql}",
                        [*chunk, *chunk, *ignored],
                    ).fetchall()
                    rows.sort(
                        key=lambda r: (
                            min(position.get(r[1], math.inf), position.get(r[2], math.inf)),
                            r[3],
                            r[1],
                            r[2],
                            r[0],
                        )
                    )
                    for row in rows:
                        if row[0] in seen:
                            continue
                        seen.add(row[0])
                        picked.append(row)
                        for uri in (row[1], row[2]):
                            if uri not in visited:
                                visited.add(uri)
                                next_frontier.append(uri)
                        if len(picked) >= limit:
                            break
                    if len(picked) >= limit:
                        break
                frontier = next_frontier
                if len(picked) >= limit or not frontier:
                    break
            nodes = self._nodes_by_uri(conn, {u for row in picked for u in (row[1], row[2])})
        return [
            (nodes[row[1]], _relation_from_row(*row[1:]), nodes[row[2]])
            for row in picked
            if row[1] in nodes and row[2] in nodes
        ]

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
        if not nodes:
            return
        now = _now()
        rows = [_node_row(node, now) for node in nodes]
        with self._write() as conn:
            conn.executemany(_UPSERT_NODE, rows)

    def upsert_relations(self, relations: Sequence[Relation]) -> None:
        """Insert relations, or update the weight and properties of existing ones.

        A relation is identified by ``(source_id, target_id, label)``. Its traversal cost is
        ``properties["weight"]`` (a number from 0 to 1, default 1.0). An endpoint that is not
        stored yet is created as a bare ``entity`` node named by its id, as LlamaIndex does. The
        whole batch is one transaction: if one relation is invalid, nothing is written.

        Raises:
            DocumentError: A relation has an invalid weight or properties that are not JSON.
        """
        if not relations:
            return
        now = _now()
        rows = [_relation_row(rel, now) for rel in relations]
        endpoints = _unique(u for row in rows for u in (row[0], row[1]))
        endpoint_rows = [(u, u, _name_ci(u), now, now) for u in endpoints]
        with self._write() as conn:
            conn.executemany(_INSERT_ENDPOINT, endpoint_rows)
            conn.executemany(_UPSERT_RELATION, rows)

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
        if not (entity_names or relation_names or properties or ids):
            return
        with self._write() as conn:
            if entity_names:
                for chunk in _chunks(_unique(entity_names)):
                    marks = _marks(chunk)
                    conn.execute(
                        f"DELETE FROM nodes WHERE uri IN ({marks}) OR name IN ({marks})",
                        [*chunk, *chunk],
                    )
            if ids:
                for chunk in _chunks(_unique(ids)):
                    conn.execute(f"DELETE FROM nodes WHERE uri IN ({_marks(chunk)})", chunk)
            if relation_names:
                for chunk in _chunks(_unique(relation_names)):
                    conn.execute(
                        f"DELETE FROM relations WHERE relation_type IN ({_marks(chunk)})", chunk
                    )
            if properties:
                conds, params = _property_conditions("metadata", properties)
                conn.execute(f"DELETE FROM nodes WHERE {' AND '.join(conds)}", params)
                rel_conds, rel_params = [], []
                for key, value in properties.items():
                    if key == "weight":
                        rel_conds.append("weight IS ?")
                        rel_params.append(value)
                    else:
                        cond, cond_params = _property_condition("metadata", key, value)
                        rel_conds.append(cond)
                        rel_params.extend(cond_params)
                conn.execute(f"DELETE FROM relations WHERE {' AND '.join(rel_conds)}", rel_params)

    # ----------------------------------------------------------------------------------------
    # product extras

    @property
    def revision(self) -> int:
        """A counter that grows with every committed write that changed data.

        Caches derived from the graph (name matchers, PageRank) compare it to decide whether to
        rebuild. It is stored in the database, so writes by other processes count too.
        """
        with self._read() as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = 'revision'").fetchone()
        return int(row[0])

    def count_nodes(self, label: str | None = None) -> int:
        """Number of nodes, or of nodes with ``label``."""
        with self._read() as conn:
            if label is None:
                row = conn.execute("SELECT count(*) FROM nodes").fetchone()
            else:
                row = conn.execute(
                    "SELECT count(*) FROM nodes WHERE node_type = ?", [label]
                ).fetchone()
        return int(row[0])

    def count_relations(self, relation_type: str | None = None) -> int:
        """Number of relations, or of relations of ``relation_type``."""
        with self._read() as conn:
            if relation_type is None:
                row = conn.execute("SELECT count(*) FROM relations").fetchone()
            else:
                row = conn.execute(
                    "SELECT count(*) FROM relations WHERE relation_type = ?", [relation_type]
                ).fetchone()
        return int(row[0])

    def delete_by_property(self, key: str, value: Any) -> int:
        """Delete the nodes whose property ``key`` equals ``value``, with their relations.

        Example: ``store.delete_by_property("doc_id", "a.md")`` removes a document's chunks.

        Args:
            key: Property name.
            value: Value to match (``None`` matches a stored JSON ``null`` only).

        Returns:
            The number of nodes deleted.
        """
        cond, params = _property_condition("metadata", key, value)
        with self._write() as conn:
            cursor = conn.execute(f"DELETE FROM nodes WHERE {cond}", params)
            count = cursor.rowcount
        logger.debug("deleted %d nodes with %s=%r", count, key, value)
        return count

    def delete_orphan_entities(self, label: str = "entity") -> int:
        """Delete the nodes labelled ``label`` that no relation touches any more.

        Returns:
            The number of nodes deleted.
        """
        with self._write() as conn:
            cursor = conn.execute(
                """
                DELETE FROM nodes
                WHERE node_type = ?
                  AND NOT EXISTS (SELECT 1 FROM relations r WHERE r.source_uri = nodes.uri)
                  AND NOT EXISTS (SELECT 1 FROM relations r WHERE r.target_uri = nodes.uri)
                """,
                [label],
            )
            count = cursor.rowcount
        logger.debug("deleted %d orphan %r nodes", count, label)
        return count

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
        wanted = _unique(names)
        if not wanted:
            return []
        rank: dict[str, int] = {}
        for i, name in enumerate(wanted):
            rank.setdefault(name if case_sensitive else _fold(name), i)
        rows: list[tuple[Any, ...]] = []
        with self._read() as conn:
            for chunk in _chunks(list(rank)):
                column = "n.name" if case_sensitive else "n.name_ci"
                sql = f"SELECT {_NODE_COLUMNS}, n.name_ci FROM nodes n WHERE {column} IN "
                sql += f"({_marks(chunk)})"
                params: list[Any] = list(chunk)
                if label is not None:
                    sql += " AND n.node_type = ?"
                    params.append(label)
                rows.extend(conn.execute(sql, params))
        key = 3 if case_sensitive else 6
        rows.sort(key=lambda r: (rank[r[key]], r[0]))
        return [_node_from_row(*r[1:6]) for r in rows]

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
        label_list = None if labels is None else _unique(labels)
        id_list = None if ids is None else _unique(ids)
        if label_list == [] or id_list == []:
            return []
        conds = ["name IS NOT NULL"]
        params: list[Any] = []
        if label_list:
            conds.append(f"node_type IN ({_marks(label_list)})")
            params.extend(label_list)
        sql = "SELECT rowid, uri, name, node_type FROM nodes WHERE "
        rows: list[tuple[Any, ...]] = []
        with self._read() as conn:
            if id_list is None:
                rows = conn.execute(
                    sql + " AND ".join(conds) + " ORDER BY rowid", params
                ).fetchall()
            else:
                for chunk in _chunks(id_list):
                    where = " AND ".join([f"uri IN ({_marks(chunk)})", *conds])
                    rows.extend(conn.execute(sql + where, [*chunk, *params]))
                rows.sort(key=lambda r: r[0])
        return [(r[1], r[2], r[3]) for r in rows]

    def nodes_with_incoming(self, ids: Iterable[str]) -> set[str]:
        """Those of ``ids`` that are the target of at least one relation."""
        found: set[str] = set()
        with self._read() as conn:
            for chunk in _chunks(_unique(ids)):
                found.update(
                    r[0]
                    for r in conn.execute(
                        f"SELECT DISTINCT target_uri FROM relations "
                        f"WHERE target_uri IN ({_marks(chunk)})",
                        chunk,
                    )
                )
        return found

    def relations_among(self, ids: Iterable[str]) -> list[Relation]:
        """Relations whose source and target are both in ``ids`` (at most ~900 ids)."""
        nodes = _unique(ids)[:_BATCH]
        if not nodes:
            return []
        marks = _marks(nodes)
        with self._read() as conn:
            rows = conn.execute(
                "SELECT source_uri, target_uri, relation_type, weight, metadata FROM relations "
                f"WHERE source_uri IN ({marks}) AND target_uri IN ({marks}) ORDER BY id",
                [*nodes, *nodes],
            ).fetchall()
        return [_relation_from_row(*row) for row in rows]

    def iter_relations(
        self, relation_types: Iterable[str] | None = None
    ) -> Iterator[tuple[str, str, str, float]]:
        """Stream every relation as ``(source_id, target_id, relation_type, weight)``.

        Rows are read page by page (the lock is not held between pages), so the whole graph
        never sits in memory; writes made while iterating may or may not be seen.

        Args:
            relation_types: Only relations of these types.
        """
        types = None if relation_types is None else _unique(relation_types)
        if types == []:
            return
        type_sql = f" AND relation_type IN ({_marks(types)})" if types else ""
        last_id = -1
        while True:
            with self._read() as conn:
                rows = conn.execute(
                    "SELECT id, source_uri, target_uri, relation_type, weight FROM relations "
                    f"WHERE id > ?{type_sql} ORDER BY id LIMIT ?",
                    [last_id, *(types or []), _PAGE],
                ).fetchall()
            if not rows:
                return
            for row in rows:
                yield row[1], row[2], row[3], row[4]
            last_id = rows[-1][0]

    def traverse(
        self,
        start_ids: Iterable[str],
        max_cost: float = 1.0,
        max_hops: int = 3,
        max_nodes: int = 100,
        relation_types: Iterable[str] | None = None,
        direction: Direction = "both",
    ) -> list[TraversalStep]:
        """Cost-bounded search from ``start_ids`` (seed 003's traversal).

        Start nodes cost 0. Following a relation adds its weight; a node is reached when its
        cheapest path (within ``max_hops`` edges) costs at most ``max_cost``. Weight-0 relations
        therefore always pull their neighbour in (they still count as a hop). The search is
        Dijkstra-like, expanding nodes in order of (cost, hops, id) and loading relations for a
        whole frontier per SQL query.

        Args:
            start_ids: Ids of the start nodes; ids that are not stored are ignored.
            max_cost: Budget for the summed weights of a path (``math.inf`` for no budget).
            max_hops: Most edges on a path.
            max_nodes: Most nodes reached besides the start nodes (the cheapest are kept).
            relation_types: Only follow relations of these types (all when ``None``).
            direction: ``"out"`` follows relations from source to target, ``"in"`` from target
                to source, ``"both"`` either way.

        Returns:
            For each reached node, the step that reached it by its cheapest path, ordered by
            (path_cost, hops, target id).

        Raises:
            QueryError: A limit is negative or ``direction`` is unknown.
        """
        types = None if relation_types is None else _unique(relation_types)
        with self._read() as conn:

            def load(uris: list[str], adjacency: Adjacency) -> None:
                self._load_adjacency(conn, uris, adjacency, types, direction)

            def resolve(rel_ids: list[Any]) -> dict[Any, Relation]:
                return self._relations_by_id(conn, rel_ids)

            def existing(uris: set[str]) -> set[str]:
                return set(self._nodes_by_uri(conn, uris, rows_only=True))

            return cost_bounded_search(
                start_ids,
                load,
                resolve,
                existing,
                max_cost,
                max_hops,
                max_nodes,
                relation_types=types,
                direction=direction,
            )

    # ----------------------------------------------------------------------------------------
    # async: run the blocking SQLite calls in a worker thread

    async def aget(
        self,
        properties: dict[str, Any] | None = None,
        ids: list[str] | None = None,
    ) -> list[LabelledNode]:
        """Async :meth:`get` (runs in a worker thread)."""
        return await asyncio.to_thread(self.get, properties, ids)

    async def aget_triplets(
        self,
        entity_names: list[str] | None = None,
        relation_names: list[str] | None = None,
        properties: dict[str, Any] | None = None,
        ids: list[str] | None = None,
    ) -> list[Triplet]:
        """Async :meth:`get_triplets` (runs in a worker thread)."""
        return await asyncio.to_thread(
            self.get_triplets, entity_names, relation_names, properties, ids
        )

    async def aget_rel_map(
        self,
        graph_nodes: list[LabelledNode],
        depth: int = 2,
        limit: int = 30,
        ignore_rels: list[str] | None = None,
    ) -> list[Triplet]:
        """Async :meth:`get_rel_map` (runs in a worker thread)."""
        return await asyncio.to_thread(self.get_rel_map, graph_nodes, depth, limit, ignore_rels)

    async def aget_llama_nodes(self, node_ids: list[str]) -> list[BaseNode]:
        """Async :meth:`get_llama_nodes` (runs in a worker thread)."""
        return await asyncio.to_thread(self.get_llama_nodes, node_ids)

    async def aupsert_nodes(self, nodes: list[LabelledNode]) -> None:
        """Async :meth:`upsert_nodes` (runs in a worker thread)."""
        await asyncio.to_thread(self.upsert_nodes, nodes)

    async def aupsert_relations(self, relations: list[Relation]) -> None:
        """Async :meth:`upsert_relations` (runs in a worker thread)."""
        await asyncio.to_thread(self.upsert_relations, relations)

    async def adelete(
        self,
        entity_names: list[str] | None = None,
        relation_names: list[str] | None = None,
        properties: dict[str, Any] | None = None,
        ids: list[str] | None = None,
    ) -> None:
        """Async :meth:`delete` (runs in a worker thread)."""
        await asyncio.to_thread(self.delete, entity_names, relation_names, properties, ids)

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

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise BackendError(f"The SQLite graph store {self._path} is closed; open a new one.")
        return self._conn

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._connection()
            try:
                yield conn
            except sqlite3.Error as e:
                raise BackendError(f"SQLite graph store {self._path}: {e}") from e

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; bumps the revision when rows changed, rolls back on error."""
        with self._lock:
            conn = self._connection()
            before = conn.total_changes
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as e:
                raise BackendError(
                    f"Cannot write to the SQLite graph store {self._path}: {e}. "
                    "Another process may hold the write lock; retry later."
                ) from e
            try:
                yield conn
                if conn.total_changes != before:
                    conn.execute("UPDATE meta SET value = value + 1 WHERE key = 'revision'")
                conn.execute("COMMIT")
            except BaseException as e:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                if isinstance(e, sqlite3.Error):
                    raise BackendError(f"SQLite graph store {self._path}: {e}") from e
                raise

    def _ensure_schema(self) -> None:
        conn = self._connection()
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == SCHEMA_VERSION:
            return
        if version > SCHEMA_VERSION:
            raise BackendError(
                f"{self._path} was written by a newer llama-kb (graph schema {version}; this "
                f"version reads up to {SCHEMA_VERSION}). Upgrade llama-kb."
            )
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Re-read inside the lock: another process may have created the schema meanwhile.
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:
                tables = conn.execute(
                    "SELECT count(*) FROM sqlite_master WHERE type = 'table' "
                    "AND name NOT LIKE 'sqlite_%'"
                ).fetchone()[0]
                if tables:
                    raise BackendError(
                        f"{self._path} is an SQLite database of another application, not a "
                        "llama-kb graph store. Choose another file."
                    )
                for statement in _SCHEMA:
                    conn.execute(statement)
                logger.info("created SQLite graph store %s (schema %d)", self._path, SCHEMA_VERSION)
            elif version != SCHEMA_VERSION:
                raise BackendError(f"{self._path}: unknown graph schema version {version}.")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    @staticmethod
    def _uris_for_names(conn: sqlite3.Connection, names: Iterable[str]) -> set[str]:
        uris: set[str] = set()
        for chunk in _chunks(_unique(names)):
            marks = _marks(chunk)
            uris.update(
                r[0]
                for r in conn.execute(
                    f"SELECT uri FROM nodes WHERE uri IN ({marks}) OR name IN ({marks})",
                    [*chunk, *chunk],
                )
            )
        return uris

    @staticmethod
    def _nodes_by_uri(
        conn: sqlite3.Connection, uris: set[str], rows_only: bool = False
    ) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for chunk in _chunks(sorted(uris)):
            for row in conn.execute(
                f"SELECT {_NODE_COLUMNS} FROM nodes n WHERE n.uri IN ({_marks(chunk)})", chunk
            ):
                found[row[1]] = row if rows_only else _node_from_row(*row[1:])
        return found

    @staticmethod
    def _relations_by_id(conn: sqlite3.Connection, ids: list[int]) -> dict[int, Relation]:
        found: dict[int, Relation] = {}
        for chunk in _chunks(_unique(ids)):
            for row in conn.execute(
                "SELECT id, source_uri, target_uri, relation_type, weight, metadata "
                f"FROM relations WHERE id IN ({_marks(chunk)})",
                chunk,
            ):
                found[row[0]] = _relation_from_row(*row[1:])
        return found

    @staticmethod
    def _load_adjacency(
        conn: sqlite3.Connection,
        uris: list[str],
        adjacency: Adjacency,
        types: list[str] | None,
        direction: Direction,
    ) -> None:
        """Load the relations of ``uris`` into ``adjacency`` as (weight, other, type, id)."""
        for uri in uris:
            adjacency[uri] = []
        # "+" keeps SQLite on the endpoint indexes instead of the (unselective) type index.
        type_sql = f" AND +relation_type IN ({_marks(types)})" if types else ""
        for chunk in _chunks(uris):
            marks = _marks(chunk)
            if direction == "out":
                where, params = f"source_uri IN ({marks})", list(chunk)
            elif direction == "in":
                where, params = f"target_uri IN ({marks})", list(chunk)
            else:
                where = f"(source_uri IN ({marks}) OR target_uri IN ({marks}))"
                params = [*chunk, *chunk]
            rows = conn.execute(
                "SELECT id, source_uri, target_uri, relation_type, weight FROM relations "
                f"WHERE {where}{type_sql}",
                [*params, *(types or [])],
            )
            for rel_id, source, target, rel_type, weight in rows:
                if source == target:
                    continue
                if direction != "in" and source in adjacency:
                    adjacency[source].append((weight, target, rel_type, rel_id))
                if direction != "out" and target in adjacency:
                    adjacency[target].append((weight, source, rel_type, rel_id))
        for uri in uris:
            adjacency[uri].sort()


# --------------------------------------------------------------------------------------------
# row conversion helpers


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _fold(name: str) -> str:
    return unicodedata.normalize("NFKC", name).casefold()


def _name_ci(name: str | None) -> str | None:
    return None if name is None else _fold(name)


def _dumps(properties: dict[str, Any], source: str) -> str:
    try:
        return json.dumps(properties, ensure_ascii=False, allow_nan=False, default=str)
    except (TypeError, ValueError) as e:
        raise DocumentError(source, f"properties cannot be stored as JSON ({e})") from e


def _node_row(node: LabelledNode, now: str) -> tuple[Any, ...]:
    if isinstance(node, ChunkNode):
        name, content = None, node.text
    elif isinstance(node, EntityNode):
        name, content = node.name, None
    else:
        raw_name, raw_text = getattr(node, "name", None), getattr(node, "text", None)
        name = None if raw_name is None else str(raw_name)
        content = None if raw_text is None else str(raw_text)
    uri = node.id
    props = _dumps(node.properties, f"node {uri!r}")
    return (uri, node.label, name, _name_ci(name), content, props, now, now)


def _validate_weight(value: Any, source: str) -> float:
    if value is None:
        return 1.0
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise DocumentError(source, f"weight must be a number from 0 to 1, not {value!r}")
    weight = float(value)
    if not (0.0 <= weight <= 1.0):  # also rejects NaN
        raise DocumentError(source, f"weight must be between 0 and 1, not {value!r}")
    return weight


def _relation_row(rel: Relation, now: str) -> tuple[Any, ...]:
    source = f"relation {rel.source_id!r} -[{rel.label}]-> {rel.target_id!r}"
    props = dict(rel.properties)
    weight = _validate_weight(props.pop("weight", None), source)
    return (rel.source_id, rel.target_id, rel.label, weight, _dumps(props, source), now, now)


def _node_from_row(
    uri: str, node_type: str, name: str | None, content: str | None, metadata: str | None
) -> LabelledNode:
    props = json.loads(metadata) if metadata else {}
    if content is not None:
        return ChunkNode(id_=uri, text=content, label=node_type, properties=props)
    name = uri if name is None else name
    node = EntityNode(name=name, label=node_type, properties=props)
    if node.id != uri:
        return NamedNode(id_=uri, name=name, label=node_type, properties=props)
    return node


def _relation_from_row(
    source: str, target: str, rel_type: str, weight: float, metadata: str | None
) -> Relation:
    props = json.loads(metadata) if metadata else {}
    props["weight"] = weight
    return Relation(label=rel_type, source_id=source, target_id=target, properties=props)


def _triplet_rows(
    conn: sqlite3.Connection, conds: list[str], params: list[Any]
) -> list[tuple[Any, ...]]:
    where = f" WHERE {' AND '.join(conds)}" if conds else ""
    return conn.execute(
        "SELECT r.id, r.source_uri, r.target_uri, r.relation_type, r.weight, r.metadata, "
        "s.node_type, s.name, s.content, s.metadata, t.node_type, t.name, t.content, t.metadata "
        "FROM relations r JOIN nodes s ON s.uri = r.source_uri "
        f"JOIN nodes t ON t.uri = r.target_uri{where} ORDER BY r.id",
        params,
    ).fetchall()


def _triplet_from_row(row: tuple[Any, ...]) -> Triplet:
    source = _node_from_row(row[1], *row[6:10])
    target = _node_from_row(row[2], *row[10:14])
    return source, _relation_from_row(*row[1:6]), target


# --------------------------------------------------------------------------------------------
# SQL helpers (values are always bound parameters; only "?" marks are built as text)


def _unique(values: Iterable[Any]) -> list[Any]:
    return list(dict.fromkeys(values))


def _chunks(values: list[Any], size: int = _BATCH) -> Iterator[list[Any]]:
    for i in range(0, len(values), size):
        yield values[i : i + size]


def _marks(values: Sequence[Any]) -> str:
    return ", ".join("?" * len(values))


def _json_path(key: str) -> str | None:
    """A JSON path selecting top-level ``key``, or None when the key cannot be quoted."""
    if '"' in key or "\\" in key:
        return None
    return f'$."{key}"'


def _property_condition(column: str, key: str, value: Any) -> tuple[str, list[Any]]:
    """SQL testing that the JSON object in ``column`` has ``key`` equal to ``value``."""
    path = _json_path(key)
    if isinstance(value, (dict, list)):
        encoded = json.dumps(value, ensure_ascii=False)
        if path is None:
            return (
                f"EXISTS (SELECT 1 FROM json_each({column}) j WHERE j.key = ? "
                "AND j.type IN ('object', 'array') AND json(j.value) = json(?))",
                [key, encoded],
            )
        return (
            f"json_type({column}, ?) IN ('object', 'array') "
            f"AND json_extract({column}, ?) = json(?)",
            [path, path, encoded],
        )
    if value is None:
        if path is None:
            return (
                f"EXISTS (SELECT 1 FROM json_each({column}) j WHERE j.key = ? AND j.type = 'null')",
                [key],
            )
        return f"json_type({column}, ?) = 'null'", [path]
    if path is None:
        return (
            f"EXISTS (SELECT 1 FROM json_each({column}) j WHERE j.key = ? AND j.value = ?)",
            [key, value],
        )
    return f"json_extract({column}, ?) = ?", [path, value]


def _property_conditions(
    column: str, properties: dict[str, Any] | None
) -> tuple[list[str], list[Any]]:
    conds: list[str] = []
    params: list[Any] = []
    for key, value in (properties or {}).items():
        cond, cond_params = _property_condition(column, key, value)
        conds.append(cond)
        params.extend(cond_params)
    return conds, params
