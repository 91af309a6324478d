"""Python's cyclic garbage collector paused while a query runs.

A query allocates thousands of short-lived objects (rows read from a store, candidate lists).
A collection of the youngest generation in the middle of a query promotes the live ones, and
promotions fill the oldest generation until a full collection walks every object the process
holds: about 95 ms at 30k passages on servers, once every few queries, which set the p95
(README, Scale). Paused, those objects are freed by reference counting when the query ends
and are never promoted; cyclic garbage waits for the next collection after the query.

Overlapping queries (threads, async tasks) share one pause, and a collector the application
had disabled stays disabled. Queries that keep overlapping for longer than ``MAX_PAUSE``
still have the youngest generation collected as each of them ends, so memory stays bounded.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

MAX_PAUSE = 1.0
"""Seconds of overlapping queries after which each query's end collects the youngest
generation."""

_lock = threading.Lock()
_running = 0
_resume = False
_since = 0.0


@contextmanager
def collection_paused() -> Iterator[None]:
    """Pause automatic collection for the enclosed query (see the module docstring)."""
    global _running, _resume, _since
    with _lock:
        if _running == 0:
            _resume, _since = gc.isenabled(), time.monotonic()
            gc.disable()
        _running += 1
    try:
        yield
    finally:
        with _lock:
            _running -= 1
            if _running == 0:
                if _resume:
                    gc.enable()
            elif _resume and time.monotonic() - _since > MAX_PAUSE:
                _since = time.monotonic()
                gc.collect(0)
