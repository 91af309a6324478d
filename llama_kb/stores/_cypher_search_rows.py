"""Rows of a Cypher search index turned into results, and metadata filters into conditions."""

from __future__ import annotations

from typing import Any

from llama_kb.names import name_key
from llama_kb.stores._cypher_base import IDENTIFIER
from llama_kb.stores._cypher_search_stats import NOT_FIELDS
from llama_kb.stores.search import Filters

FACT_KEYS = ("subject", "predicate", "object", "chunk_id", "doc_id", "evidence", "extractor")
FACT_RETURN = "n.id, " + ", ".join(f"n.{k}" for k in FACT_KEYS)
"""What a query returns for a fact node ``n``: its id and :data:`FACT_KEYS`."""


def add_facts(found: dict[str, dict[str, Any]], rows: list[list[Any]]) -> None:
    """Add the rows ``(id, *FACT_KEYS)`` not in ``found``, with their ends' name keys."""
    for row in rows:
        props = dict(zip(FACT_KEYS, row[1:], strict=True))
        for end in ("subject", "object"):
            value = props[end]
            props[f"{end}_key"] = (name_key(value) or None) if isinstance(value, str) else None
        found.setdefault(str(row[0]), props)


def chunk_metadata(props: dict[str, Any]) -> dict[str, Any]:
    """A chunk node's metadata: its properties without the search and storage ones."""
    return {k: v for k, v in props.items() if k not in NOT_FIELDS and v is not None}


def filter_cypher(filters: Filters | None) -> tuple[str, dict[str, Any]]:
    """A boolean expression on ``n`` (the chunk) for ``filters``, values as parameters."""
    if not filters:
        return "true", {}
    conds: list[str] = []
    params: dict[str, Any] = {}
    for i, (key, wanted) in enumerate(filters.items()):
        values = list(wanted) if isinstance(wanted, list | tuple | set) else [wanted]
        if not IDENTIFIER.match(str(key)) or not values:
            return "false", {}
        conds.append(f"n.`{key}` IN $f{i}")
        params[f"f{i}"] = values
    return "(" + " AND ".join(conds) + ")", params
