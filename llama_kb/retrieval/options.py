"""Validated query-time input: the query text and :class:`QueryOptions` (re-exported here)."""

from __future__ import annotations

import logging
from typing import Any

from pydantic import ValidationError

from llama_kb.access import Principal
from llama_kb.config import QueryOptions
from llama_kb.errors import ConfigurationError, QueryError

logger = logging.getLogger(__name__)

MAX_QUERY_CHARS = 8000

__all__ = ["ALIASES", "MAX_QUERY_CHARS", "QueryOptions", "resolve_options", "validate_query"]


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


ALIASES: dict[str, str] = {
    "k": "top_k",
    "similarity_top_k": "top_k",
    "max_results": "top_k",
    "relevance_threshold": "min_score",
}
"""Names the faces' users type (LangChain, LlamaIndex, seed 004) -> :class:`QueryOptions` field."""


def resolve_principal(value: Any, required: bool) -> Principal:
    """Who asks a query: ``value`` parsed (see :meth:`~llama_kb.access.Principal.parse`).

    Raises:
        QueryError: A malformed principal, or none when one is ``required``.
    """
    try:
        principal = Principal.parse(value)
    except ConfigurationError as e:
        raise QueryError(f"invalid principal: {e}") from None
    if principal.anonymous and required:
        raise QueryError("this knowledge base requires a principal: pass principal=...")
    return principal


def resolve_options(defaults: QueryOptions, **given: Any) -> QueryOptions:
    """Validate per-call options over ``defaults``; the one place options are checked.

    Accepts the :class:`QueryOptions` fields, their :data:`ALIASES`, and a nested
    ``search_kwargs`` mapping (LangChain's convention). ``None`` values keep the default.

    Raises:
        QueryError: An unknown option, two names for one option with different values, or
            an invalid value.
    """
    nested = given.pop("search_kwargs", None) or {}
    if not isinstance(nested, dict):
        raise QueryError("search_kwargs must be a mapping of option -> value")
    values: dict[str, Any] = {}
    for name, value in [*nested.items(), *given.items()]:
        if value is None:
            continue
        field = ALIASES.get(name, name)
        if field not in QueryOptions.model_fields:
            known = ", ".join([*QueryOptions.model_fields, *ALIASES])
            raise QueryError(f"unknown retrieval option(s): {name}; known: {known}")
        if field in values and values[field] != value:
            raise QueryError(f"{name}={value!r} conflicts with {field}={values[field]!r}")
        values[field] = value
    if not values:
        return defaults
    try:
        return QueryOptions.model_validate({**defaults.model_dump(), **values})
    except ValidationError as e:
        raise QueryError(_describe(e)) from None


def _describe(error: ValidationError) -> str:
    item = error.errors()[0]
    field = ".".join(str(p) for p in item["loc"])
    value = item.get("input")
    if field == "route":
        return f"unknown route {value!r}; use one of: semantic, factual, hybrid"
    if field == "filters":
        return "filters must be a mapping of metadata field -> value"
    if item["type"] == "greater_than_equal":
        return f"{field} must not be negative, got {value!r}"
    if item["type"] in {"greater_than", "int_parsing", "int_from_float", "int_type"}:
        return f"{field} must be a positive integer, got {value!r}"
    return f"invalid {field}: {item['msg']} (got {value!r})"
