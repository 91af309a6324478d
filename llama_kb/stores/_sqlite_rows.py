"""Row conversion and SQL text helpers of the SQLite graph store.

Values are always bound parameters; only ``?`` marks and fixed column names are built as text.
How LlamaIndex objects map to rows is described in :mod:`llama_kb.stores.sqlite_graph`.
"""

from __future__ import annotations

import json
import sqlite3
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

from llama_index.core.graph_stores.types import (
    ChunkNode,
    EntityNode,
    LabelledNode,
    Relation,
    Triplet,
)

from llama_kb.errors import DocumentError
from llama_kb.graph_model import NamedNode
from llama_kb.stores.traversal import validate_weight

_BATCH = 500  # values per ``IN (?, ?, ...)`` list, far below SQLite's parameter limit
_PAGE = 2000  # rows per page when streaming relations

_NODE_COLUMNS = "n.rowid, n.uri, n.node_type, n.name, n.content, n.metadata"

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


def _relation_row(rel: Relation, now: str) -> tuple[Any, ...]:
    source = f"relation {rel.source_id!r} -[{rel.label}]-> {rel.target_id!r}"
    props = dict(rel.properties)
    weight = validate_weight(props.pop("weight", None), source)
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


def _nodes_at(conn: sqlite3.Connection, rowids: list[int]) -> dict[str, tuple[int, str | None]]:
    """Node uri -> ``(rowid, name)`` of the nodes at ``rowids``."""
    found: dict[str, tuple[int, str | None]] = {}
    for chunk in _chunks(rowids):
        query = f"SELECT rowid, uri, name FROM nodes WHERE rowid IN ({_marks(chunk)})"
        found.update((uri, (row, name)) for row, uri, name in conn.execute(query, chunk))
    return found


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


def revision_of(conn: sqlite3.Connection) -> int:
    """The graph file's write counter (moved by every committed write that changed data)."""
    return int(conn.execute("SELECT value FROM meta WHERE key = 'revision'").fetchone()[0])
