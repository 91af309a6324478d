"""Merge provider output into a prompt's input variables (seed 000, "Knowledge injection").

A *knowledge source* is a :class:`~llama_kb.knowledge.provider.KnowledgeProvider`, any
callable ``query -> {info_type: text}``, or a fixed mapping. When a key already has a value
in the prompt's variables (the *feed*), :class:`ConflictStrategy` decides:

* ``feed_only`` (default): the knowledge replaces the value;
* ``attribute_only``: the existing value stays, the knowledge for that key is dropped;
* ``merge``: existing value, a newline, then the knowledge.

LangChain: :class:`langchain_kb.sections.KnowledgeSections`. LlamaIndex:
:func:`knowledge_function_mappings` for ``PromptTemplate(function_mappings=...)``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from enum import StrEnum
from typing import Any

from llama_kb.errors import ConfigurationError, QueryError

KnowledgeSource = Callable[[str], Mapping[str, str]] | Mapping[str, str]


class ConflictStrategy(StrEnum):
    """What happens when knowledge and the prompt's input share a key."""

    FEED_ONLY = "feed_only"
    """The knowledge value replaces the input value."""
    ATTRIBUTE_ONLY = "attribute_only"
    """The input value stays; knowledge for that key is ignored."""
    MERGE = "merge"
    """Input value, a newline, then the knowledge value."""

    @classmethod
    def parse(cls, value: ConflictStrategy | str) -> ConflictStrategy:
        """The strategy named by ``value`` (case-insensitive)."""
        try:
            return cls(str(value).lower())
        except ValueError as e:
            allowed = ", ".join(s.value for s in cls)
            raise ConfigurationError(
                f"unknown conflict strategy {value!r}; use one of {allowed}"
            ) from e


def resolve_knowledge(source: KnowledgeSource, query: str) -> dict[str, str]:
    """Call ``source`` with ``query`` (or take it as is, when it is a mapping).

    Raises:
        ConfigurationError: The source returned something other than a mapping of strings.
    """
    knowledge = source if isinstance(source, Mapping) else source(query)
    if not isinstance(knowledge, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in knowledge.items()
    ):
        raise ConfigurationError("a knowledge provider must return a dict of str to str")
    return dict(knowledge)


def merge_value(existing: Any, knowledge: str, strategy: ConflictStrategy) -> Any:
    """The value of one key after merging ``knowledge`` into ``existing``."""
    if existing is None or existing == "":
        return knowledge
    if strategy is ConflictStrategy.ATTRIBUTE_ONLY:
        return existing
    if strategy is ConflictStrategy.MERGE:
        return f"{existing}\n{knowledge}" if knowledge else existing
    return knowledge


def merge_knowledge(
    feed: Mapping[str, Any],
    knowledge: Mapping[str, str],
    strategy: ConflictStrategy | str = ConflictStrategy.FEED_ONLY,
    defaults: Iterable[str] = (),
) -> dict[str, Any]:
    """A new feed: ``feed`` with ``knowledge`` merged in.

    Args:
        feed: The prompt's input variables.
        knowledge: ``{info_type: text}``.
        strategy: How to resolve keys present in both.
        defaults: Keys that must exist afterwards (``""`` when neither side has them), so a
            prompt template with ``{context}`` renders even when nothing was retrieved.
    """
    chosen = ConflictStrategy.parse(strategy)
    merged = dict(feed)
    for key in sorted(knowledge):
        merged[key] = merge_value(merged.get(key), knowledge[key], chosen)
    for key in defaults:
        merged.setdefault(key, "")
    return merged


def query_from(feed: Mapping[str, Any], query_key: str) -> str:
    """The query text stored under ``query_key``.

    Raises:
        QueryError: The key is missing or not a string.
    """
    if query_key not in feed:
        raise QueryError(
            f"the prompt input has no {query_key!r} key to retrieve knowledge for "
            f"(keys: {', '.join(sorted(map(str, feed))) or 'none'}); set query_key"
        )
    query = feed[query_key]
    if not isinstance(query, str):
        raise QueryError(f"the prompt input {query_key!r} must be a string")
    return query


class _LastQueryCache:
    """Remembers the knowledge of the last query, so a template's functions retrieve once."""

    def __init__(self, source: KnowledgeSource) -> None:
        self.source = source
        self._lock = threading.Lock()
        self._last: tuple[str, dict[str, str]] | None = None

    def get(self, query: str) -> dict[str, str]:
        with self._lock:
            if self._last is None or self._last[0] != query:
                self._last = (query, resolve_knowledge(self.source, query))
            return self._last[1]


def knowledge_function_mappings(
    source: KnowledgeSource,
    info_types: Iterable[str],
    *,
    query_key: str = "query_str",
    strategy: ConflictStrategy | str = ConflictStrategy.FEED_ONLY,
) -> dict[str, Callable[..., str]]:
    """``function_mappings`` that fill a LlamaIndex ``PromptTemplate`` with knowledge.

    Each listed ``info_type`` becomes a template variable computed from the variable
    ``query_key``; retrieval runs once per query, however many sections the template uses.

    Args:
        source: A provider, a callable ``query -> {info_type: text}`` or a fixed mapping.
        info_types: The template variables to fill (``user_profile``, ``instructions`` ...).
        query_key: The template variable holding the user's query.
        strategy: What to do when the caller passed a value for a section too.

    Example:
        >>> from llama_index.core import PromptTemplate
        >>> template = PromptTemplate(
        ...     "{user_profile}\\n\\n{instructions}\\n\\nQuestion: {query_str}",
        ...     function_mappings=knowledge_function_mappings(
        ...         {"user_profile": "team: aero"}, ["user_profile", "instructions"]
        ...     ),
        ... )
        >>> template.format(query_str="LES?")
        'team: aero\\n\\n\\n\\nQuestion: LES?'
    """
    chosen = ConflictStrategy.parse(strategy)
    cache = _LastQueryCache(source)

    def mapping(info_type: str) -> Callable[..., str]:
        def fill(**kwargs: Any) -> str:
            knowledge = cache.get(query_from(kwargs, query_key))
            existing = kwargs.get(info_type)
            if info_type in knowledge:
                existing = merge_value(existing, knowledge[info_type], chosen)
            return "" if existing is None else str(existing)

        return fill

    return {info_type: mapping(info_type) for info_type in info_types}
