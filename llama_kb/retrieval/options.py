"""Validated query-time input: the query text and retrieval options."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from llama_kb.config import RetrievalDefaults
from llama_kb.errors import QueryError
from llama_kb.types import Route

logger = logging.getLogger(__name__)

MAX_QUERY_CHARS = 8000


def validate_query(query: object) -> str:
    """Return the stripped query, or raise :class:`QueryError` for empty or non-text input.

    Queries longer than ``MAX_QUERY_CHARS`` are truncated (with a warning), not rejected.
    """
    if not isinstance(query, str):
        raise QueryError(f"query must be a string, got {type(query).__name__}")
    text = query.strip()
    if not text:
        raise QueryError("query is empty; pass a question or keywords")
    if len(text) > MAX_QUERY_CHARS:
        logger.warning("query of %d characters truncated to %d", len(text), MAX_QUERY_CHARS)
        text = text[:MAX_QUERY_CHARS]
    return text


@dataclass(frozen=True)
class RetrievalOptions:
    """Query-time options (see :meth:`ContextEngine.retrieve`)."""

    top_k: int = 5
    min_score: float | None = None
    filters: dict[str, Any] | None = None
    route: Route | None = None
    max_cost: float = 1.0
    max_hops: int = 4
    max_nodes: int = 50
    max_facts: int = 20
    strict: bool = False

    @classmethod
    def build(cls, defaults: RetrievalDefaults, **options: Any) -> RetrievalOptions:
        """Validate ``options`` over ``defaults``; raises :class:`QueryError`."""
        unknown = set(options) - set(cls.__dataclass_fields__)
        if unknown:
            raise QueryError(f"unknown retrieval option(s): {', '.join(sorted(unknown))}")
        values = {
            "top_k": defaults.top_k,
            "max_cost": defaults.max_cost,
            "max_hops": defaults.max_hops,
            "max_nodes": defaults.max_nodes,
            **{k: v for k, v in options.items() if v is not None},
        }
        route = values.get("route")
        if route is not None and not isinstance(route, Route):
            try:
                values["route"] = Route(str(route).lower())
            except ValueError:
                raise QueryError(
                    f"unknown route {route!r}; use one of: semantic, factual, hybrid"
                ) from None
        for name in ("top_k", "max_nodes", "max_facts"):
            if not isinstance(values.get(name, 1), int) or values.get(name, 1) <= 0:
                raise QueryError(f"{name} must be a positive integer, got {values[name]!r}")
        if values["max_hops"] < 0 or values["max_cost"] < 0:
            raise QueryError("max_hops and max_cost must not be negative")
        filters = values.get("filters")
        if filters is not None and not isinstance(filters, dict):
            raise QueryError("filters must be a mapping of metadata field -> value")
        return cls(**values)
