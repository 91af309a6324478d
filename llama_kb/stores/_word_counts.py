"""Recent chunk counts of query words, per store revision: the lexical statistics a server
would otherwise be asked again for every query that repeats a word."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable


class WordCounts:
    """A bounded, thread-safe map from ``(revision, view, cap, word)`` to a chunk count.

    The store's revision is part of every key, so a write makes the older entries unreachable
    (they age out); nothing is ever read from a revision other than the current one.

    Args:
        size: Most entries kept, least recently used dropped first.
    """

    def __init__(self, size: int = 50_000) -> None:
        self.size = size
        self._counts: OrderedDict[Hashable, int] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> int | None:
        """The count stored for ``key``, if any."""
        with self._lock:
            count = self._counts.get(key)
            if count is not None:
                self._counts.move_to_end(key)
            return count

    def put(self, key: Hashable, count: int) -> None:
        """Store ``count`` for ``key``."""
        with self._lock:
            self._counts[key] = count
            self._counts.move_to_end(key)
            while len(self._counts) > self.size:
                self._counts.popitem(last=False)
