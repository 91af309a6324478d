"""A runnable that fills prompt sections with knowledge (seed 000, "Knowledge injection").

Example:
    >>> from langchain_core.prompts import ChatPromptTemplate
    >>> sections = KnowledgeSections(  # doctest: +SKIP
    ...     KnowledgeProvider(kb, entity_id="user:alice"),
    ...     defaults=["user_profile", "instructions", "context"],
    ... )
    >>> prompt = ChatPromptTemplate.from_messages(  # doctest: +SKIP
    ...     [
    ...         ("system", "{user_profile}\\n\\n{instructions}\\n\\n{context}"),
    ...         ("human", "{question}"),
    ...     ]
    ... )
    >>> chain = sections | prompt | model  # doctest: +SKIP
    >>> chain.invoke({"question": "Set up an LES simulation for jet noise"})  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from typing import Any

from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import ensure_config

from llama_kb.knowledge.injection import (
    ConflictStrategy,
    KnowledgeSource,
    merge_knowledge,
    query_from,
    resolve_knowledge,
)

__all__ = ["ConflictStrategy", "KnowledgeSections"]


class KnowledgeSections(Runnable[dict[str, Any], dict[str, Any]]):
    """Merge ``{info_type: text}`` knowledge into a prompt's input variables.

    The input is the prompt's variables (``{"question": ...}``); the output is the same
    mapping with one key per knowledge section, ready for a ``ChatPromptTemplate``.

    Args:
        provider: A :class:`~llama_kb.knowledge.KnowledgeProvider`, any callable
            ``query -> {info_type: text}``, or a fixed mapping.
        query_key: The input variable holding the user's query.
        strategy: When the input already has a section's key: ``feed_only`` (knowledge
            replaces it, default), ``attribute_only`` (the input wins) or ``merge`` (input,
            newline, knowledge).
        defaults: Section keys that are always present (``""`` when nothing was retrieved),
            so every template variable is filled.
    """

    def __init__(
        self,
        provider: KnowledgeSource,
        *,
        query_key: str = "question",
        strategy: ConflictStrategy | str = ConflictStrategy.FEED_ONLY,
        defaults: Iterable[str] = (),
    ) -> None:
        self.provider = provider
        self.query_key = query_key
        self.strategy = ConflictStrategy.parse(strategy)
        self.defaults = tuple(defaults)

    def invoke(
        self, input: Mapping[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """The input variables with the knowledge for ``input[query_key]`` merged in."""
        return self._call_with_config(self._merge, dict(input), ensure_config(config))

    async def ainvoke(
        self, input: Mapping[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """Async :meth:`invoke`; retrieval runs in a worker thread."""
        return await asyncio.to_thread(self.invoke, input, config)

    def _merge(self, feed: dict[str, Any]) -> dict[str, Any]:
        knowledge = resolve_knowledge(self.provider, query_from(feed, self.query_key))
        return merge_knowledge(feed, knowledge, self.strategy, self.defaults)

    def __repr__(self) -> str:
        return (
            f"KnowledgeSections(provider={self.provider!r}, query_key={self.query_key!r}, "
            f"strategy={self.strategy.value!r})"
        )
