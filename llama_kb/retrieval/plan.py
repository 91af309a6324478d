"""The state of one query as it moves through the engine's steps."""

from __future__ import annotations

import logging
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from llama_kb.access import Principal
from llama_kb.background import Pending
from llama_kb.config import QueryOptions
from llama_kb.errors import LlamaKBError
from llama_kb.retrieval import explain as debug
from llama_kb.retrieval import trace as observe
from llama_kb.retrieval.index import Candidates
from llama_kb.retrieval.payload import Classification, FusedContext
from llama_kb.types import SearchHit

logger = logging.getLogger(__name__)


@dataclass
class QueryPlan:
    """State of one query between steps."""

    query: str
    options: QueryOptions
    started: float
    view: Candidates | None = None
    """The store lookups of this query and the chunks it ranks (``None``: index unavailable)."""
    principal: Principal = field(default_factory=Principal)
    """Who asks (:mod:`llama_kb.access`)."""
    access: frozenset[str] | None = None
    """The access keys the query's principal reads, when some stored record is not among
    them (``None``: it reads everything stored)."""
    cache_key: Hashable | None = None
    cached: FusedContext | None = None
    """The cached result for this query, options and index revision, if any."""
    empty: bool = False
    """The knowledge base holds no chunks."""
    entity_ids: list[str] = field(default_factory=list)
    linked_surfaces: list[str] = field(default_factory=list)
    """The query's words that linked ``entity_ids`` (as written in the query)."""
    query_vector: list[float] | None = None
    dense: Pending[list[SearchHit]] | None = None
    """The dense step, when it was started before linking (it needs only the query)."""
    lexical: Pending[list[tuple[str, float]]] | None = None
    """The lexical step, when it was started in a thread before a fuzzy name lookup
    (:func:`~llama_kb.retrieval.query_linking.link_query`)."""
    classification: Classification | None = None
    hop: Pending[list[SearchHit]] | None = None
    """The second hop's search, started as soon as its passage was known
    (:func:`~llama_kb.retrieval.bridge_hop.start`)."""
    names: Pending[Any] | None = None
    """The name hop's reads, started from the passage ranked before the dense hits
    (:func:`~llama_kb.retrieval.name_hop.search_from`)."""
    trace: dict[str, Any] = field(default_factory=dict)
    degraded: list[str] = field(default_factory=list)
    stages: observe.StageRecorder = field(default_factory=observe.StageRecorder)
    parts: debug.ScoreParts | None = None

    def degrade(self, backend: str, error: Exception) -> None:
        """Go on without ``backend``, naming it in ``trace["degraded"]`` (once for the same
        failure, however many steps meet it); raise instead when the query is ``strict``."""
        if self.options.strict:
            if isinstance(error, LlamaKBError):
                raise error
            raise LlamaKBError(f"{backend} backend failed: {error}") from error
        entry = f"{backend}: {type(error).__name__}: {error}"
        if entry not in self.degraded:
            logger.warning("%s backend failed, continuing without it: %s", backend, error)
            self.degraded.append(entry)
