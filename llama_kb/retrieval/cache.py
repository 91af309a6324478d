"""Recent results by query, options and index revision (seed 001's query cache).

A write moves the graph store's revision (every ingest writes chunk nodes there), so an entry
is only served while the stores are exactly as they were when it was computed; nothing needs
invalidating by hand. Entries are copied in and out: a caller mutating its result never
changes what the next caller gets.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Hashable

from llama_kb.config import QueryOptions
from llama_kb.lru import LRU
from llama_kb.retrieval.payload import FusedContext
from llama_kb.stores.search import SearchIndex


def cache_key(
    query: str, options: QueryOptions, index: SearchIndex, access: frozenset[str] | None = None
) -> Hashable | None:
    """The identity of a result: the query, every option, the access keys read (``None``:
    all) and the index revision; ``None`` (no caching) when the index cannot say its
    revision, since then nobody knows whether a cached result is still current."""
    try:
        revision = index.revision
    except Exception:
        return None
    options_json = json.dumps(options.model_dump(mode="json"), sort_keys=True)
    return (query, options_json, revision, access)


class QueryCache:
    """A bounded LRU of :class:`FusedContext` results (``size`` 0 disables it).

    Args:
        size: Most results kept.
    """

    def __init__(self, size: int = 256) -> None:
        self._entries: LRU[FusedContext] = LRU(size)

    @property
    def size(self) -> int:
        """Most results kept."""
        return self._entries.size

    @size.setter
    def size(self, value: int) -> None:
        self._entries.size = value

    def get(self, key: Hashable) -> FusedContext | None:
        """A copy of the cached result, or ``None``."""
        found = self._entries.get(key)
        return None if found is None else copy.deepcopy(found)

    def put(self, key: Hashable, context: FusedContext) -> None:
        """Keep a copy of ``context`` (dropping the least recently used beyond ``size``)."""
        if self.size > 0:
            self._entries.put(key, copy.deepcopy(context))

    def clear(self) -> None:
        """Forget every entry."""
        self._entries.clear()
