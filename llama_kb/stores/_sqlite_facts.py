"""Reading typed fact nodes from the SQLite graph file, for :class:`SQLiteSearchIndex`.

Facts about names are found through the ``fact_keys`` index (a name key per fact end), at
most a few per key so a hub name does not flood a query; facts read from documents or chunks
through the node metadata. A restricted view reads the facts its access keys see.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from llama_kb.stores._sqlite_access import access_condition
from llama_kb.stores._sqlite_rows import _chunks, _marks, _unique

_FACT_KEYS = ("subject", "predicate", "object", "chunk_id", "doc_id", "evidence", "extractor")
_FACT_FIELDS = ", ".join(
    ["n.metadata"]  # parsed once in Python: SQLite < 3.45 parses the JSON per json_extract
    + [
        f"(SELECT f.key FROM fact_keys f WHERE f.uri = n.uri AND f.ends IN ('{end}', 'both'))"
        for end in ("subject", "object")
    ]
)


def read_facts(
    conn: Any,
    visible: frozenset[str] | None,
    keys: Sequence[str],
    doc_ids: Sequence[str],
    chunk_ids: Sequence[str],
    limit: int,
    per_key: int,
) -> list[dict[str, Any]]:
    """Fact nodes (their fields plus ``subject_key`` / ``object_key``) about ``keys``, at most
    ``per_key`` each, or read from ``doc_ids`` / ``chunk_ids``; at most ``limit`` per read.
    ``visible``: the access keys of the view (``None``: everything)."""
    found: dict[str, dict[str, Any]] = {}
    only, access = access_condition("v", visible)
    own, _ = access_condition("n", visible)
    seen = "JOIN nodes v ON v.uri = f.uri" if access else ""
    for chunk in _chunks(_unique(keys)):
        # the window runs over the (key, uri) index only (and, in a restricted view, the
        # access of each fact); node rows are read for the first per_key of a key
        rows = conn.execute(
            f"SELECT n.uri, {_FACT_FIELDS} FROM (SELECT f.uri, row_number() OVER "
            f"(PARTITION BY f.key ORDER BY f.uri) AS nth FROM fact_keys f {seen} WHERE "
            f"f.key IN ({_marks(chunk)}){only}) k JOIN nodes n ON n.uri = k.uri "
            "WHERE k.nth <= ? LIMIT ?",
            [*chunk, *access, per_key, limit],
        )
        _add_facts(found, rows)
    for field, values in (("doc_id", doc_ids), ("chunk_id", chunk_ids)):
        for chunk in _chunks(_unique(values)):
            rows = conn.execute(
                f"SELECT n.uri, {_FACT_FIELDS} FROM nodes n WHERE json_extract("
                f"n.metadata, '$.{field}') IN ({_marks(chunk)}) AND +n.node_type = 'fact'"
                f"{own} LIMIT ?",
                [*chunk, *access, limit],
            )
            _add_facts(found, rows)
    return list(found.values())


def _add_facts(found: dict[str, dict[str, Any]], rows: Iterable[Sequence[Any]]) -> None:
    """Add the fact rows ``(uri, metadata, subject_key, object_key)`` not in ``found``."""
    for uri, metadata, subject_key, object_key in rows:
        if uri not in found:
            meta = json.loads(metadata or "{}")
            fact = {k: meta.get(k) for k in _FACT_KEYS}
            found[uri] = {**fact, "subject_key": subject_key, "object_key": object_key}
