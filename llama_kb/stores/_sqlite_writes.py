"""Writes of the SQLite graph store: upserts and deletions, each one transaction."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from llama_index.core.graph_stores.types import LabelledNode, Relation

from llama_kb.stores._sqlite_db import SQLiteDatabase
from llama_kb.stores._sqlite_index import INDEXED_KEYS, write_keys
from llama_kb.stores._sqlite_rows import (
    _chunks,
    _marks,
    _name_ci,
    _node_row,
    _now,
    _property_condition,
    _property_conditions,
    _relation_row,
    _unique,
)

logger = logging.getLogger(__name__)

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

_OWN_ACCESS = """(SELECT json_set(?5, '$.access', json_extract(n.metadata, '$.access'))
    FROM nodes n WHERE n.uri = {end} AND n.node_type IN ('text_chunk', 'fact')
    AND json_extract(n.metadata, '$.access') IS NOT NULL)"""

# A relation without an access key of its own takes that of its chunk or fact end: what is
# read from a private document stays as private as the document (see llama_kb.access).
_UPSERT_RELATION = f"""
    INSERT INTO relations
        (source_uri, target_uri, relation_type, weight, metadata, created_at, updated_at)
    SELECT ?1, ?2, ?3, ?4, CASE WHEN json_extract(?5, '$.access') IS NOT NULL THEN ?5
        ELSE coalesce({_OWN_ACCESS.format(end="?1")}, {_OWN_ACCESS.format(end="?2")}, ?5) END,
        ?6, ?7
    WHERE true
    ON CONFLICT (source_uri, target_uri, relation_type) DO UPDATE SET
        weight = excluded.weight,
        metadata = excluded.metadata,
        updated_at = excluded.updated_at
    WHERE relations.weight IS NOT excluded.weight
       OR relations.metadata IS NOT excluded.metadata
"""


def upsert_nodes(db: SQLiteDatabase, nodes: Sequence[LabelledNode]) -> None:
    """See :meth:`SQLitePropertyGraphStore.upsert_nodes`."""
    if not nodes:
        return
    now = _now()
    rows = [_node_row(node, now) for node in nodes]
    keyed = [
        (node.id, node.label, row[2], node.properties)
        for node, row in zip(nodes, rows, strict=True)
    ]
    with db.write() as conn:
        conn.executemany(_UPSERT_NODE, rows)
        write_keys(conn, keyed)


def upsert_relations(db: SQLiteDatabase, relations: Sequence[Relation]) -> None:
    """See :meth:`SQLitePropertyGraphStore.upsert_relations`."""
    if not relations:
        return
    now = _now()
    rows = [_relation_row(rel, now) for rel in relations]
    endpoints = _unique(u for row in rows for u in (row[0], row[1]))
    endpoint_rows = [(u, u, _name_ci(u), now, now) for u in endpoints]
    with db.write() as conn:
        conn.executemany(_INSERT_ENDPOINT, endpoint_rows)
        conn.executemany(_UPSERT_RELATION, rows)


def delete(
    db: SQLiteDatabase,
    entity_names: list[str] | None,
    relation_names: list[str] | None,
    properties: dict[str, Any] | None,
    ids: list[str] | None,
) -> None:
    """See :meth:`SQLitePropertyGraphStore.delete`."""
    if not (entity_names or relation_names or properties or ids):
        return
    with db.write() as conn:
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


def delete_by_property(db: SQLiteDatabase, key: str, value: Any) -> int:
    """See :meth:`SQLitePropertyGraphStore.delete_by_property`."""
    if key in INDEXED_KEYS and isinstance(value, str):
        # the literal path matches the expression index (a bound path would not)
        cond, params = f"json_extract(metadata, '$.{key}') = ?", [value]
    else:
        cond, params = _property_condition("metadata", key, value)
    with db.write() as conn:
        cursor = conn.execute(f"DELETE FROM nodes WHERE {cond}", params)
        count = cursor.rowcount
    logger.debug("deleted %d nodes with %s=%r", count, key, value)
    return count


def delete_orphan_entities(db: SQLiteDatabase, label: str) -> int:
    """See :meth:`SQLitePropertyGraphStore.delete_orphan_entities`."""
    with db.write() as conn:
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
