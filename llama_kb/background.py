"""Run one step in a thread while the caller does the next ones.

The step waits on native code that releases the GIL (ONNX Runtime, Chroma's Rust core, a
server round trip): a query's dense step overlaps its lexical search and fact reads, an
ingest batch's embedding overlaps the parsing of its sentences. The thread runs in a copy of
the caller's context, so tracing spans and instrumentation events stay attached.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

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
