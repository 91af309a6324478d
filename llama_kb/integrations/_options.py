"""Query options as the faces receive them: layered, renamed, facts bounded, validated once.

Both faces (LangChain and LlamaIndex) take options from up to three places: the knowledge
base's defaults, the retriever's constructor and the call. This module merges them (later
layers win), maps the framework names onto :class:`~llama_kb.config.QueryOptions` fields, and
validates once with :func:`llama_kb.retrieval.options.resolve_options`. It never retrieves.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llama_kb.access import Principal
from llama_kb.config import QueryOptions
from llama_kb.errors import ConfigurationError, QueryError
from llama_kb.retrieval.options import ALIASES, resolve_options

__all__ = ["FRAMEWORK_ALIASES", "FaceOptions", "face_options"]

FRAMEWORK_ALIASES: dict[str, str] = {
    **ALIASES,
    "score_threshold": "min_score",  # LangChain's similarity_score_threshold search
    "filter": "filters",  # LangChain vector stores' metadata filter
}
"""Framework names -> :class:`QueryOptions` field, on top of the core's aliases."""


class FaceOptions:
    """Validated options for one call: ``options`` for reading, ``kwargs`` for the engine."""

    def __init__(self, options: QueryOptions, kwargs: dict[str, Any]) -> None:
        self.options = options
        self.kwargs = kwargs

    @property
    def top_k(self) -> int:
        """How many passages the call asks for."""
        return self.options.top_k


def face_options(defaults: QueryOptions, *layers: Mapping[str, Any] | None) -> FaceOptions:
    """Merge option layers over ``defaults`` and validate them.

    Each layer may use :class:`QueryOptions` names, :data:`FRAMEWORK_ALIASES`, and a nested
    ``search_kwargs`` mapping (applied before the layer's own keys). Unless some layer sets
    ``max_facts``, facts are bounded by ``top_k``, so a caller asking for ``k`` passages does
    not get twenty facts besides. A ``principal`` (who asks, :mod:`llama_kb.access`) is
    checked here and passed on to the engine.

    Raises:
        QueryError: An unknown option or an invalid value.
    """
    merged: dict[str, Any] = {}
    for layer in layers:
        if not layer:
            continue
        own = dict(layer)
        nested = own.pop("search_kwargs", None) or {}
        if not isinstance(nested, Mapping):
            raise QueryError("search_kwargs must be a mapping of option -> value")
        for name, value in [*nested.items(), *own.items()]:
            if value is not None:
                merged[FRAMEWORK_ALIASES.get(str(name), str(name))] = value
    principal = merged.pop("principal", None)
    options = resolve_options(defaults, **merged)
    if principal is not None:
        try:
            merged["principal"] = Principal.parse(principal)
        except ConfigurationError as e:
            raise QueryError(str(e)) from None
    if "max_facts" not in merged:
        merged["max_facts"] = options.top_k
        options = options.model_copy(update={"max_facts": options.top_k})
    return FaceOptions(options, merged)
