"""The retrieval breakdown as LangChain child runs, so tracers (LangSmith, ...) show it.

Under the retriever's run: one chain run ``llama_kb.retrieval`` whose inputs are the query
and options and whose outputs are the query summary (route, results, facts, avg_score,
duration_ms, degraded), with one child chain run per stage (``llama_kb.embedding``,
``llama_kb.dense``, ...) whose outputs are that stage's timing and counts. The stages ran
inside the core before these runs are reported, so a run's own clock shows reporting time;
the measured time is in its outputs (``ms``, ``offset_ms``).
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)

from llama_kb.retrieval.payload import FusedContext
from llama_kb.retrieval.trace import summarize

RUN_NAME = "llama_kb.retrieval"


def report_stages(
    run_manager: CallbackManagerForRetrieverRun | AsyncCallbackManagerForRetrieverRun,
    context: FusedContext,
    options: dict[str, Any],
) -> None:
    """Report ``context``'s stages as child runs of the retriever run (no-op without handlers).

    Sync handlers are called from the async path too (through ``get_sync``): the reports are
    small and already computed.
    """
    manager = run_manager.get_sync() if hasattr(run_manager, "get_sync") else run_manager
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


def _plain(options: dict[str, Any]) -> dict[str, Any]:
    return {
        k: v if isinstance(v, str | int | float | bool | None) else repr(v)
        for k, v in options.items()
    }
