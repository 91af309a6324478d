"""The active context (seed 003): an LRU of the nodes an agent is working with.

It lives in memory and resets when the process (e.g. the MCP server) restarts.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

DEFAULT_ACTIVE_CONTEXT_SIZE = 100


class ActiveContext:
    """At most ``limit`` node URIs, most recently used last; older ones are evicted.

    Args:
        limit: Most nodes kept (default 100).
    """

    def __init__(self, limit: int = DEFAULT_ACTIVE_CONTEXT_SIZE) -> None:
        if limit < 1:
            raise ValueError(f"the active context needs room for at least 1 node, not {limit}")
        self.limit = limit
        self._nodes: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()

    def touch(self, uris: list[str]) -> list[str]:
        """Mark ``uris`` as just used (in order); returns the URIs evicted to make room."""
        evicted: list[str] = []
        with self._lock:
            for uri in uris:
                self._nodes[uri] = None
                self._nodes.move_to_end(uri)
            while len(self._nodes) > self.limit:
                evicted.append(self._nodes.popitem(last=False)[0])
        return evicted

    def discard(self, uris: list[str]) -> None:
        """Forget ``uris`` (e.g. after they were deleted)."""
        with self._lock:
            for uri in uris:
                self._nodes.pop(uri, None)

    def uris(self) -> list[str]:
        """The URIs, most recently used first."""
        with self._lock:
            return list(reversed(self._nodes))

    def __len__(self) -> int:
        return len(self._nodes)

    def __contains__(self, uri: object) -> bool:
        return uri in self._nodes
