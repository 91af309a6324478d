"""A query step run in a thread: its value, its error and the caller's context come back."""

from __future__ import annotations

import contextvars
import threading

import pytest

from llama_kb.background import Pending

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
