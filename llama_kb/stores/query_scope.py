"""One query's repeated store reads, served once.

A query asks a store some of the same small questions several times (the stored counts per
access key: for the view, the chunk count, the lexical statistics; the graph's relation
types). On a server each is a round trip. Inside :func:`one_query` a store may serve such a
read once with :func:`once`: the query then also sees one consistent set of counts. Outside
it every read goes to the store, as before.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

T = TypeVar("T")

_READS: ContextVar[dict[Hashable, object] | None] = ContextVar("llama_kb_query_reads", default=None)


@contextmanager
def one_query() -> Iterator[None]:
    """Within the block, :func:`once` reads each key from its store at most once (threads
    started with a copy of this context, as ``asyncio.to_thread`` does, share the reads)."""
    token = _READS.set({})
    try:
        yield
    finally:
        _READS.reset(token)


def once(key: Hashable, read: Callable[[], T]) -> T:
    """``read()``, or inside :func:`one_query` the value it gave for ``key`` earlier."""
    reads = _READS.get()
    if reads is None:
        return read()
    if key not in reads:
        reads[key] = read()
    return reads[key]  # type: ignore[return-value]
