"""A query step run in a thread: its value, its error and the caller's context come back."""

from __future__ import annotations

import contextvars
import threading

import pytest

from llama_kb.background import Ahead, Pending

_REQUEST = contextvars.ContextVar("request", default="none")


def test_the_value_comes_from_another_thread() -> None:
    pending = Pending(lambda a, b: (a + b, threading.get_ident()), 2, 3)
    value, thread = pending.result()
    assert value == 5 and thread != threading.get_ident()


def test_the_error_is_raised_where_the_result_is_read() -> None:
    def fail() -> None:
        raise ValueError("store down")

    pending = Pending(fail)
    with pytest.raises(ValueError, match="store down"):
        pending.result()


def test_the_thread_sees_the_callers_context() -> None:
    token = _REQUEST.set("query-42")
    try:
        assert Pending(_REQUEST.get).result() == "query-42"
    finally:
        _REQUEST.reset(token)


def test_a_failed_result_raises_its_error() -> None:
    with pytest.raises(KeyError, match="gone"):
        Pending.failed(KeyError("gone")).result()


def test_the_next_items_work_starts_when_asked_before_it_is_reached() -> None:
    started: list[int] = []

    def start(item: int) -> Pending[int]:
        started.append(item)
        return Pending(lambda: item * 10)

    items = Ahead([1, 2, 3], start)
    first, work = next(items)
    assert (first, started) == (1, [1])
    assert work is not None and work.result() == 10
    items.start_next()
    items.start_next()  # once: the next item is started already
    assert started == [1, 2]
    assert [(item, w.result() if w else None) for item, w in items] == [(2, 20), (3, 30)]
    items.start_next()  # nothing left
    assert started == [1, 2, 3]


def test_after_stop_items_come_without_work_but_a_started_one_keeps_it() -> None:
    items = Ahead(["a", "b", "c"], lambda item: Pending(str.upper, item))
    next(items)
    items.start_next()
    items.stop()
    rest = [(item, w.result() if w else None) for item, w in items]
    assert rest == [("b", "B"), ("c", None)]
