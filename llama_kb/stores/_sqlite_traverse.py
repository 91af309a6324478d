"""Cost-bounded traversal over the SQLite tables (seed 003).

The search itself is :func:`~llama_kb.stores.traversal.cost_bounded_search`; this module
loads a whole frontier's relations per SQL query and resolves the relations it picked.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterable
from typing import Any

from llama_index.core.graph_stores.types import Relation

from llama_kb.stores._sqlite_access import access_condition
from llama_kb.stores._sqlite_db import SQLiteDatabase
from llama_kb.stores._sqlite_reads import _nodes_by_uri
from llama_kb.stores._sqlite_rows import _chunks, _marks, _relation_from_row, _unique
from llama_kb.stores.traversal import Adjacency, Direction, TraversalStep, cost_bounded_search


def traverse(
    db: SQLiteDatabase,
    start_ids: Iterable[str],
    max_cost: float,
    max_hops: int,
    max_nodes: int,
    relation_types: Iterable[str] | None,
    direction: Direction,
    access: Collection[str] | None = None,
) -> list[TraversalStep]:
    """See :meth:`llama_kb.stores.graph.KBGraphStore.traverse`."""
    types = None if relation_types is None else _unique(relation_types)
    only = access_condition("relations", access)
    with db.read() as conn:

        def load(uris: list[str], adjacency: Adjacency) -> None:
            cap = max(2 * max_nodes, 16)
            _load_adjacency(conn, uris, adjacency, types, direction, cap, only)

        def resolve(rel_ids: list[Any]) -> dict[Any, Relation]:
            return _relations_by_id(conn, rel_ids)

        def existing(uris: set[str]) -> set[str]:
            return set(_nodes_by_uri(conn, uris, rows_only=True))

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


def _load_adjacency(
    conn: sqlite3.Connection,
    uris: list[str],
    adjacency: Adjacency,
    types: list[str] | None,
    direction: Direction,
    cap: int,
    only: tuple[str, list[str]] = ("", []),
) -> None:
    """Load the ``cap`` cheapest relations of each of ``uris`` per direction into
    ``adjacency`` as (weight, other, type, id), cheapest first.

    A search that stops after ``max_nodes`` nodes never needs more of one node's edges than
    that, so a hub's thousands of edges are never read: each lookup walks the
    ``(endpoint, weight)`` index and stops at ``cap``.
    """
    # "+" keeps SQLite on the endpoint index instead of the (unselective) type index.
    type_sql = f" AND +relation_type IN ({_marks(types)})" if types else ""
    type_sql, keys = type_sql + only[0], only[1]
    ends = {"out": ("source_uri",), "in": ("target_uri",), "both": ("source_uri", "target_uri")}
    for uri in uris:
        edges: list[tuple[float, str, str, Any]] = []
        for column in ends[direction]:
            rows = conn.execute(
                "SELECT id, source_uri, target_uri, relation_type, weight FROM relations "
                f"WHERE {column} = ?{type_sql} ORDER BY weight LIMIT ?",
                [uri, *(types or []), *keys, cap],
            )
            for rel_id, source, target, rel_type, weight in rows:
                if source != target:
                    edges.append(
                        (weight, target if column == "source_uri" else source, rel_type, rel_id)
                    )
        adjacency[uri] = sorted(edges)
