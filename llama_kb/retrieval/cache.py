"""Recent results by query, options and index revision (seed 001's query cache).

A write moves the graph store's revision (every ingest writes chunk nodes there), so an entry
is only served while the stores are exactly as they were when it was computed; nothing needs
invalidating by hand. Entries are copied in and out: a caller mutating its result never
changes what the next caller gets.
"""

from __future__ import annotations

import copy
import json
import threading
from collections import OrderedDict
from collections.abc import Hashable

from llama_kb.config import QueryOptions
from llama_kb.retrieval.payload import FusedContext


def cache_key(
    query: str, options: QueryOptions, revision: int, access: frozenset[str] | None = None
) -> Hashable:
    """The identity of a result: the query, every option, the access keys read (``None``:
    all) and the index revision."""
    options_json = json.dumps(options.model_dump(mode="json"), sort_keys=True)
    return (query, options_json, revision, access)


class QueryCache:
    """A bounded LRU of :class:`FusedContext` results (``size`` 0 disables it).

    Args:
        size: Most results kept.
    """

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._entries: OrderedDict[Hashable, FusedContext] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> FusedContext | None:
        """A copy of the cached result, or ``None``."""
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                return None
            self._entries.move_to_end(key)
        return copy.deepcopy(found)

    def put(self, key: Hashable, context: FusedContext) -> None:
        """Keep a copy of ``context`` (dropping the least recently used beyond ``size``)."""
        if self.size <= 0:
            return
        kept = copy.deepcopy(context)
        with self._lock:
            self._entries[key] = kept
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._entries.clear()
