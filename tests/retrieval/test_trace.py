"""Per-stage timings and counts, and their delivery to LlamaIndex, LangChain, OTel and logs."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from llama_index.core.bridge.pydantic import Field
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent

from langchain_kb import UnifiedKBRetriever
from llama_kb import KnowledgeBase
from llama_kb.errors import LlamaKBError, QueryError
from llama_kb.retrieval import trace

QUESTION = "How is the Graph Updater related to the Document Interpreter?"
STAGES = {"index", "linking", "classify", "embedding", "dense", "lexical", "fusion", "facts"}
SUMMARY = {"query", "route", "results", "facts", "avg_score", "duration_ms", "stages", "degraded"}


class Collector(BaseEventHandler):
    """A LlamaIndex event handler that keeps every event."""

    events: list[BaseEvent] = Field(default_factory=list)

    @classmethod
    def class_name(cls) -> str:
        return "Collector"

    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        self.events.append(event)


@pytest.fixture
def collector() -> Iterator[Collector]:
    handler = Collector()
    root = get_dispatcher()
    root.add_event_handler(handler)
    try:
        yield handler
    finally:
        root.event_handlers.remove(handler)


def break_vectors(kb: KnowledgeBase, monkeypatch: Any) -> None:
    """The vector store fails: with ``strict=True`` the query raises."""

    def down(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("vector store down")

    monkeypatch.setattr(kb.engine.vectors, "query", down)


async def retrieve(kb: KnowledgeBase, mode: str, query: str = QUESTION, **options: Any) -> Any:
    if mode == "sync":
        return kb.retrieve(query, **options)
    return await kb.aretrieve(query, **options)


def test_stages_are_recorded_with_counts(example_kb: KnowledgeBase):
    context = example_kb.retrieve(QUESTION, route="hybrid", top_k=3, min_score=0.0)
    stages = context.trace["stages"]
    names = [s["name"] for s in stages]
    assert STAGES | {"graph_walk", "min_score"} <= set(names)
    by_name = {s["name"]: s for s in stages}
    assert by_name["dense"]["out"] == context.trace["retrievers"]["vector"]["hits"]
    assert by_name["fusion"]["out"] == 3 and by_name["min_score"]["in"] == 3
    assert by_name["graph_walk"]["entities"] == 2
    offsets = [s["offset_ms"] for s in stages]
    assert offsets == sorted(offsets) and all(s["ms"] >= 0 for s in stages)
    # the dense step (embedding, dense) runs in a thread beside lexical search and traversal,
    # and the walk is part of fusion: the other stages follow one another
    overlapping = {"embedding", "dense", "graph_walk"}
    sequential = sum(s["ms"] for s in stages if s["name"] not in overlapping)
    assert sequential <= context.trace["total_ms"]
    assert by_name["embedding"]["ms"] + by_name["dense"]["ms"] <= context.trace["total_ms"]


def test_llama_index_handler_gets_the_fields(example_kb: KnowledgeBase, collector: Collector):
    context = example_kb.retrieve(QUESTION, top_k=2)
    start, end = [e for e in collector.events if e.class_name().startswith("KBRetrieval")]
    assert isinstance(start, trace.KBRetrievalStartEvent) and start.query == QUESTION
    assert start.options["top_k"] == 2
    assert isinstance(end, trace.KBRetrievalEndEvent)
    assert end.route == "factual" and end.results == 2 and end.facts > 0
    assert end.avg_score == pytest.approx(sum(h.score for h in context.unstructured) / 2)
    assert end.duration_ms == context.trace["total_ms"]
    assert {s["name"] for s in end.stages} >= STAGES
    assert start.span_id and start.span_id == end.span_id  # inside the engine's span
    assert end.span_id.startswith("ContextEngine.retrieve")


async def test_llama_index_events_from_the_async_path(
    example_kb: KnowledgeBase, collector: Collector
):
    await example_kb.as_retriever(top_k=1).aretrieve(QUESTION)
    names = [e.class_name() for e in collector.events]
    assert names.count("KBRetrievalStartEvent") == 1 and names.count("KBRetrievalEndEvent") == 1
    assert names.index("RetrievalStartEvent") < names.index("KBRetrievalEndEvent")


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_llama_index_end_event_when_a_query_raises(
    example_kb: KnowledgeBase, collector: Collector, monkeypatch: Any, mode: str
):
    break_vectors(example_kb, monkeypatch)
    with pytest.raises(LlamaKBError, match="vector store down"):
        await retrieve(example_kb, mode, strict=True)
    [start] = [e for e in collector.events if isinstance(e, trace.KBRetrievalStartEvent)]
    [end] = [e for e in collector.events if isinstance(e, trace.KBRetrievalEndEvent)]
    assert end.error == "LlamaKBError: vector backend failed: vector store down"
    assert end.query == QUESTION and end.route is None and end.results == 0
    assert end.duration_ms > 0
    assert end.span_id == start.span_id and end.span_id.startswith("ContextEngine.")
    # LlamaIndex drops the engine's span with the error, after our end event
    [drop] = [e for e in collector.events if e.class_name() == "SpanDropEvent"]
    assert drop.span_id == end.span_id and "vector store down" in drop.err_str
    assert collector.events.index(end) < collector.events.index(drop)


async def test_an_invalid_query_ends_with_its_error(
    example_kb: KnowledgeBase, collector: Collector
):
    with pytest.raises(QueryError):
        example_kb.retrieve("   ")
    [end] = [e for e in collector.events if isinstance(e, trace.KBRetrievalEndEvent)]
    assert end.error == "QueryError: query is empty; pass a question or keywords"


class StageRecorder(BaseCallbackHandler):
    """A LangChain callback handler that keeps chain runs and their parents."""

    def __init__(self) -> None:
        self.starts: dict[UUID, tuple[str, UUID | None]] = {}
        self.outputs: dict[UUID, dict[str, Any]] = {}
        self.errors: dict[UUID, BaseException] = {}
        self.retriever_run: UUID | None = None

    def on_retriever_start(self, serialized: Any, query: str, *, run_id: UUID, **kw: Any) -> None:
        self.retriever_run = run_id

    def on_chain_start(
        self, serialized: Any, inputs: Any, *, run_id: UUID, parent_run_id: UUID | None, **kw: Any
    ) -> None:
        self.starts[run_id] = (kw["name"], parent_run_id)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kw: Any) -> None:
        self.outputs[run_id] = outputs

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kw: Any) -> None:
        self.errors[run_id] = error

    def on_retriever_error(self, error: BaseException, *, run_id: UUID, **kw: Any) -> None:
        self.errors[run_id] = error

    def named(self, name: str) -> list[UUID]:
        return [run for run, (n, _) in self.starts.items() if n == name]


async def invoke(
    retriever: UnifiedKBRetriever, mode: str, handler: StageRecorder | None = None
) -> StageRecorder:
    """Run ``retriever`` on the question with a :class:`StageRecorder`; returns it."""
    handler = handler or StageRecorder()
    config: Any = {"callbacks": [handler]}
    if mode == "sync":
        retriever.invoke(QUESTION, config=config)
    else:
        await retriever.ainvoke(QUESTION, config=config)
    return handler


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_langchain_handler_gets_the_breakdown(example_kb: KnowledgeBase, mode: str):
    handler = await invoke(UnifiedKBRetriever(kb=example_kb, k=2), mode)
    [summary_run] = handler.named("llama_kb.retrieval")
    assert handler.starts[summary_run][1] == handler.retriever_run
    summary = handler.outputs[summary_run]
    assert SUMMARY - {"query", "stages"} <= set(summary) and summary["route"] == "factual"
    stage_runs = [run for run, (_, parent) in handler.starts.items() if parent == summary_run]
    stages = {handler.starts[run][0]: handler.outputs[run] for run in stage_runs}
    assert {f"llama_kb.{name}" for name in STAGES} <= set(stages)
    assert stages["llama_kb.dense"]["ms"] >= 0 and "out" in stages["llama_kb.dense"]


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_langchain_runs_end_with_the_error(
    example_kb: KnowledgeBase, monkeypatch: Any, mode: str
):
    break_vectors(example_kb, monkeypatch)
    handler = StageRecorder()
    retriever = UnifiedKBRetriever(kb=example_kb, k=2, search_kwargs={"strict": True})
    with pytest.raises(LlamaKBError, match="vector store down"):
        await invoke(retriever, mode, handler)
    [run] = handler.named("llama_kb.retrieval")
    assert handler.starts[run][1] == handler.retriever_run
    assert handler.retriever_run is not None
    failed = handler.errors[run]
    assert handler.errors[handler.retriever_run] is failed and run not in handler.outputs
    assert "vector store down" in str(failed)


@pytest.fixture(scope="module")
def otel_exporter() -> Any:
    sdk_trace = pytest.importorskip("opentelemetry.sdk.trace")
    from opentelemetry import trace as otel
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    otel.set_tracer_provider(provider)  # once per process: the global provider
    if otel.get_tracer_provider() is not provider:
        pytest.skip("another tracer provider is already installed")
    return exporter


def test_otel_exporter_gets_a_span_with_documented_attributes(
    example_kb: KnowledgeBase, otel_exporter: Any
):
    otel_exporter.clear()
    context = example_kb.retrieve(QUESTION, top_k=2)
    spans = otel_exporter.get_finished_spans()
    [root] = [s for s in spans if s.name == "retrieval llama_kb"]
    documented = {name for key in trace.OTEL_ATTRIBUTES for name in key.split(" / ")}
    assert set(root.attributes) <= documented
    assert root.attributes["gen_ai.operation.name"] == "retrieval"
    assert root.attributes["gen_ai.retrieval.query.text"] == QUESTION
    assert root.attributes["gen_ai.request.top_k"] == 2
    assert root.attributes["llama_kb.route"] == "factual"
    assert root.attributes["llama_kb.results"] == 2
    names = list(root.attributes["llama_kb.stage.names"])
    assert set(names) >= STAGES
    dense = names.index("dense")
    hits = context.trace["retrievers"]["vector"]["hits"]
    assert root.attributes["llama_kb.stage.out"][dense] == hits
    assert root.attributes["llama_kb.stage.ms"][dense] >= 0
    offsets = root.attributes["llama_kb.stage.offset_ms"]
    assert list(offsets) == sorted(offsets)
    assert root.end_time - root.start_time == pytest.approx(
        context.trace["total_ms"] * 1e6, abs=1e3
    )


def test_otel_span_of_a_failed_query(
    example_kb: KnowledgeBase, otel_exporter: Any, monkeypatch: Any
):
    from opentelemetry.trace import StatusCode

    break_vectors(example_kb, monkeypatch)
    otel_exporter.clear()
    with pytest.raises(LlamaKBError):
        example_kb.retrieve(QUESTION, strict=True)
    [span] = [s for s in otel_exporter.get_finished_spans() if s.name == "retrieval llama_kb"]
    assert span.status.status_code is StatusCode.ERROR
    assert "vector store down" in (span.status.description or "")
    documented = set(trace.OTEL_ATTRIBUTES)
    assert set(span.attributes) <= documented
    assert span.attributes["error.type"] == "llama_kb.errors.LlamaKBError"
    assert span.attributes["gen_ai.retrieval.query.text"] == QUESTION
    [event] = span.events
    assert event.name == "exception"
    assert event.attributes["exception.type"] == "llama_kb.errors.LlamaKBError"
    assert span.end_time > span.start_time


def test_debug_log_has_one_line_summary(example_kb: KnowledgeBase, caplog: Any):
    with caplog.at_level(logging.DEBUG, logger="llama_kb.retrieval.trace"):
        example_kb.retrieve(QUESTION, top_k=2)
    [line] = [r.getMessage() for r in caplog.records if r.name == "llama_kb.retrieval.trace"]
    assert "route=factual results=2" in line and "dense" in line and "| index" in line


def test_debug_log_line_of_a_failed_query(example_kb: KnowledgeBase, caplog: Any):
    logs = caplog.at_level(logging.DEBUG, logger="llama_kb.retrieval.trace")
    with logs, pytest.raises(QueryError):
        example_kb.retrieve(QUESTION, top_k=0)
    [line] = [r.getMessage() for r in caplog.records if r.name == "llama_kb.retrieval.trace"]
    assert line.startswith(f"query={QUESTION!r} failed after ") and "QueryError: top_k" in line


def test_nothing_is_built_without_listeners(example_kb: KnowledgeBase, monkeypatch: Any):
    def fail(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("summary built with nobody listening")

    monkeypatch.setattr(trace, "summarize", fail)
    monkeypatch.setattr(trace, "_otel_tracer", lambda: None)
    context = example_kb.retrieve(QUESTION, top_k=2)
    assert context.trace["stages"] and not trace._listening()
