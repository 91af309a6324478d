"""Reads of the SQLite graph store: nodes, triplets, neighbourhoods and name lookups.

Each function takes the store's :class:`~llama_kb.stores._sqlite_db.SQLiteDatabase` (or an
open connection) and is documented on the
:class:`~llama_kb.stores.sqlite_graph.SQLitePropertyGraphStore` method that calls it.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Collection, Iterable, Iterator
from typing import Any

from llama_index.core.graph_stores.types import LabelledNode, Relation, Triplet

from llama_kb.stores._sqlite_access import access_condition
from llama_kb.stores._sqlite_db import SQLiteDatabase
from llama_kb.stores._sqlite_rows import (
    _BATCH,
    _NODE_COLUMNS,
    _PAGE,
    _chunks,
    _fold,
    _marks,
    _node_from_row,
    _property_condition,
    _property_conditions,
    _relation_from_row,
    _triplet_from_row,
    _triplet_rows,
    _unique,
)


def get_nodes(
    db: SQLiteDatabase, properties: dict[str, Any] | None, ids: list[str] | None
) -> list[LabelledNode]:
    """See :meth:`SQLitePropertyGraphStore.get`."""
    conds, params = _property_conditions("n.metadata", properties)
    sql = f"SELECT {_NODE_COLUMNS} FROM nodes n"
    rows: list[tuple[Any, ...]] = []
    with db.read() as conn:
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
    db: SQLiteDatabase,
    entity_names: list[str] | None,
    relation_names: list[str] | None,
    properties: dict[str, Any] | None,
    ids: list[str] | None,
) -> list[Triplet]:
    """See :meth:`SQLitePropertyGraphStore.get_triplets`."""
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

    with db.read() as conn:
        endpoint_sets: list[set[str]] = []
        if entity_names:
            endpoint_sets.append(_uris_for_names(conn, entity_names))
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
    db: SQLiteDatabase,
    graph_nodes: list[LabelledNode],
    depth: int,
    limit: int,
    ignore_rels: list[str] | None,
) -> list[Triplet]:
    """See :meth:`SQLitePropertyGraphStore.get_rel_map`."""
    frontier = _unique(node.id for node in graph_nodes)
    if not frontier or depth <= 0 or limit <= 0:
        return []
    ignored = _unique(ignore_rels or [])
    ignore_sql = f" AND relation_type NOT IN ({_marks(ignored)})" if ignored else ""
    visited = set(frontier)
    seen: set[int] = set()
    picked: list[tuple[Any, ...]] = []
    with db.read() as conn:
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
        nodes = _nodes_by_uri(conn, {u for row in picked for u in (row[1], row[2])})
    return [
        (nodes[row[1]], _relation_from_row(*row[1:]), nodes[row[2]])
        for row in picked
        if row[1] in nodes and row[2] in nodes
    ]


def find_nodes_by_name(
    db: SQLiteDatabase, names: Iterable[str], label: str | None, case_sensitive: bool
) -> list[LabelledNode]:
    """See :meth:`SQLitePropertyGraphStore.find_nodes_by_name`."""
    wanted = _unique(names)
    if not wanted:
        return []
    rank: dict[str, int] = {}
    for i, name in enumerate(wanted):
        rank.setdefault(name if case_sensitive else _fold(name), i)
    rows: list[tuple[Any, ...]] = []
    with db.read() as conn:
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
    db: SQLiteDatabase, labels: Iterable[str] | None, ids: Iterable[str] | None
) -> list[tuple[str, str, str]]:
    """See :meth:`SQLitePropertyGraphStore.named_nodes`."""
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
    with db.read() as conn:
        if id_list is None:
            rows = conn.execute(sql + " AND ".join(conds) + " ORDER BY rowid", params).fetchall()
        else:
            for chunk in _chunks(id_list):
                where = " AND ".join([f"uri IN ({_marks(chunk)})", *conds])
                rows.extend(conn.execute(sql + where, [*chunk, *params]))
            rows.sort(key=lambda r: r[0])
    return [(r[1], r[2], r[3]) for r in rows]


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


def count_nodes(db: SQLiteDatabase, label: str | None) -> int:
    """See :meth:`SQLitePropertyGraphStore.count_nodes`."""
    with db.read() as conn:
        if label is None:
            row = conn.execute("SELECT count(*) FROM nodes").fetchone()
        else:
            row = conn.execute("SELECT count(*) FROM nodes WHERE node_type = ?", [label]).fetchone()
    return int(row[0])


def count_relations(db: SQLiteDatabase, relation_type: str | None) -> int:
    """See :meth:`SQLitePropertyGraphStore.count_relations`."""
    with db.read() as conn:
        if relation_type is None:
            row = conn.execute("SELECT count(*) FROM relations").fetchone()
        else:
            row = conn.execute(
                "SELECT count(*) FROM relations WHERE relation_type = ?", [relation_type]
            ).fetchone()
    return int(row[0])


def nodes_with_incoming(db: SQLiteDatabase, ids: Iterable[str]) -> set[str]:
    """See :meth:`SQLitePropertyGraphStore.nodes_with_incoming`."""
    found: set[str] = set()
    with db.read() as conn:
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


def relations_among(
    db: SQLiteDatabase, ids: Iterable[str], access: Collection[str] | None = None
) -> list[Relation]:
    """See :meth:`SQLitePropertyGraphStore.relations_among`."""
    nodes = _unique(ids)[:_BATCH]
    if not nodes:
        return []
    marks = _marks(nodes)
    only, keys = access_condition("relations", access)
    with db.read() as conn:
        rows = conn.execute(
            "SELECT source_uri, target_uri, relation_type, weight, metadata FROM relations "
            f"WHERE source_uri IN ({marks}) AND target_uri IN ({marks}){only} ORDER BY id",
            [*nodes, *nodes, *keys],
        ).fetchall()
    return [_relation_from_row(*row) for row in rows]


def iter_relations(
    db: SQLiteDatabase, relation_types: Iterable[str] | None
) -> Iterator[tuple[str, str, str, float]]:
    """See :meth:`SQLitePropertyGraphStore.iter_relations`."""
    types = None if relation_types is None else _unique(relation_types)
    if types == []:
        return
    type_sql = f" AND relation_type IN ({_marks(types)})" if types else ""
    last_id = -1
    while True:
        with db.read() as conn:
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
