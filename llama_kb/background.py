"""Run one step in a thread while the caller does the next ones.

The step waits on native code that releases the GIL (ONNX Runtime, Chroma's Rust core, a
server round trip): a query's dense step overlaps its lexical search and fact reads, an
ingest batch's embedding overlaps the parsing of its sentences and the writes of the batch
before it (:class:`Ahead`). The thread runs in a copy of
the caller's context, so tracing spans and instrumentation events stay attached.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterable
from typing import Generic, NoReturn, TypeVar

T = TypeVar("T")


class Pending(Generic[T]):
    """The result of ``fn(*args)``, computed in a thread; :meth:`result` waits for it."""

    def __init__(self, fn: Callable[..., T], *args: object) -> None:
        self._value: T | None = None
        self._error: BaseException | None = None
        context = contextvars.copy_context()
        self._thread = threading.Thread(target=context.run, args=(self._run, fn, *args))
        self._thread.daemon = True
        self._thread.start()

    @classmethod
    def failed(cls, error: BaseException) -> Pending[T]:
        """A result that is ``error``: :meth:`result` raises it."""
        return cls(_raise, error)

    def _run(self, fn: Callable[..., T], *args: object) -> None:
        try:
            self._value = fn(*args)
        except BaseException as e:  # handed to the waiting caller
            self._error = e

    def result(self) -> T:
        """The value, or the exception ``fn`` raised, re-raised here."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]


def _raise(error: BaseException) -> NoReturn:
    raise error


S = TypeVar("S")


class Ahead(Generic[S, T]):
    """An iterator of ``(item, Pending work for it)``, the work started one item ahead.

    ``start(item)`` starts an item's work. The next item's starts when :meth:`start_next` is
    called (say, once the current item's own work is collected, so the two overlap with what
    the caller does next), else when the caller reaches it. After :meth:`stop`, items come
    with no work (``None``).
    """

    def __init__(self, items: Iterable[S], start: Callable[[S], Pending[T]]) -> None:
        self._items = iter(items)
        self._start = start
        self._next: list[tuple[S, Pending[T] | None]] = []
        self._working = True

    def __iter__(self) -> Ahead[S, T]:
        return self

    def __next__(self) -> tuple[S, Pending[T] | None]:
        self.start_next()
        if not self._next:
            raise StopIteration
        return self._next.pop()

    def start_next(self) -> None:
        """Take the next item and start its work now, unless that is done already."""
        if self._next:
            return
        for item in self._items:
            self._next.append((item, self._start(item) if self._working else None))
            return

    def stop(self) -> None:
        """Start no more work; an item already started keeps its work."""
        self._working = False
