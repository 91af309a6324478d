"""The retrieval breakdown as LangChain child runs, so tracers (LangSmith, ...) show it.

Under the retriever's run: one chain run ``llama_kb.retrieval`` whose inputs are the query
and options and whose outputs are the query summary (route, results, facts, avg_score,
duration_ms, degraded), with one child chain run per stage (``llama_kb.embedding``,
``llama_kb.dense``, ...) whose outputs are that stage's timing and counts. The stages ran
inside the core before these runs are reported, so a run's own clock shows reporting time;
the measured time is in its outputs (``ms``, ``offset_ms``).

A query that raises ends its ``llama_kb.retrieval`` run with ``on_chain_error`` (LangChain
then ends the retriever run with ``on_retriever_error``), so tracers show where it failed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)

from llama_kb.retrieval.payload import FusedContext
from llama_kb.retrieval.trace import summarize

RUN_NAME = "llama_kb.retrieval"

RunManager = CallbackManagerForRetrieverRun | AsyncCallbackManagerForRetrieverRun


@contextmanager
def reporting(
    run_manager: RunManager, query: str, options: dict[str, Any]
) -> Iterator[Callable[[FusedContext], None]]:
    """Around one query: yields ``report(context)`` (:func:`report_stages`) for its result;
    when the query raises, reports a failed ``llama_kb.retrieval`` run and re-raises."""
    try:
        yield lambda context: report_stages(run_manager, context, options)
    except Exception as e:
        report_failure(run_manager, query, options, e)
        raise


def report_stages(run_manager: RunManager, context: FusedContext, options: dict[str, Any]) -> None:
    """Report ``context``'s stages as child runs of the retriever run (no-op without handlers).

    Sync handlers are called from the async path too (through ``get_sync``): the reports are
    small and already computed.
    """
    manager = _sync(run_manager)
    if not manager.handlers:
        return
    summary = summarize(context)
    stages = summary.pop("stages")
    inputs = {"query": summary.pop("query"), "options": _plain(options)}
    name = RUN_NAME
    retrieval = manager.get_child().on_chain_start({"name": name}, inputs, name=name)
    for stage in stages:
        name = f"llama_kb.{stage['name']}"
        run = retrieval.get_child().on_chain_start({"name": name}, {}, name=name)
        run.on_chain_end(dict(stage))
    retrieval.on_chain_end(summary)


def report_failure(
    run_manager: RunManager, query: str, options: dict[str, Any], error: BaseException
) -> None:
    """Report a query that raised as a ``llama_kb.retrieval`` run ended by ``error``."""
    manager = _sync(run_manager)
    if not manager.handlers:
        return
    inputs = {"query": query, "options": _plain(options)}
    run = manager.get_child().on_chain_start({"name": RUN_NAME}, inputs, name=RUN_NAME)
    run.on_chain_error(error)


def _sync(run_manager: RunManager) -> CallbackManagerForRetrieverRun:
    if isinstance(run_manager, AsyncCallbackManagerForRetrieverRun):
        return run_manager.get_sync()
    return run_manager


def _plain(options: dict[str, Any]) -> dict[str, Any]:
    return {
        k: v if isinstance(v, str | int | float | bool | None) else repr(v)
        for k, v in options.items()
    }
