"""Per-query stage timings and counts, recorded once, emitted where users already listen.

The engine records each stage of a query (``index``, ``linking``, ``classify``,
``embedding``, ``dense``, ``lexical``, ``graph_walk``, ``fusion``, ``facts``,
``min_score``, ...) in a :class:`StageRecorder`: a start offset, a duration and the
candidates in / out. When the query ends, :func:`emit_end` puts the stages in
``trace["stages"]`` and sends one summary to:

- ``logging`` at DEBUG (logger ``llama_kb.retrieval.trace``): one line per query;
- LlamaIndex instrumentation: :class:`KBRetrievalStartEvent` / :class:`KBRetrievalEndEvent`
  through the package dispatcher ``get_dispatcher("llama_kb")`` (it propagates to the root
  dispatcher, so any ``BaseEventHandler`` attached there sees them);
- OpenTelemetry, when ``opentelemetry-api`` is installed *and* an SDK tracer provider is
  configured: one ``retrieval llama_kb`` span with the recorded start and end, its stages
  as parallel array attributes (:data:`OTEL_ATTRIBUTES`). Not a child span or span event
  per stage: with an SDK attached those cost ~10x / ~8x more per query, about 3% / 2% of
  a query's time (the budget for all listeners together is 5%). The library never
  configures an exporter.

A query that raises ends the same way: :func:`span` (around the engine's ``retrieve`` /
``aretrieve``) sends a :class:`KBRetrievalEndEvent` with ``error`` set (inside the
LlamaIndex span, which LlamaIndex then drops with the error), an OpenTelemetry span with
status ``ERROR``, ``error.type`` and the exception recorded, and a DEBUG line; then the
exception goes on to the caller.

Nothing is built for a channel nobody listens to, so a query without handlers costs a
few attribute checks more than before.
"""

from __future__ import annotations

import functools
import inspect
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar, cast

from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import NullEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.span_handlers import NullSpanHandler

from llama_kb.retrieval import explain_facts

if TYPE_CHECKING:
    from llama_kb.retrieval.payload import FusedContext

logger = logging.getLogger(__name__)

_F = TypeVar("_F", bound=Callable[..., Any])

dispatcher = get_dispatcher("llama_kb")
"""The package's LlamaIndex dispatcher (child of the root dispatcher)."""

OTEL_ATTRIBUTES: dict[str, str] = {
    "gen_ai.operation.name": 'always "retrieval" (OpenTelemetry GenAI conventions)',
    "gen_ai.data_source.id": 'always "llama_kb"',
    "gen_ai.retrieval.query.text": "the query",
    "gen_ai.request.top_k": "chunks asked for",
    "llama_kb.route": "semantic / factual / hybrid",
    "llama_kb.results": "chunks returned",
    "llama_kb.facts": "facts returned",
    "llama_kb.avg_score": "mean fused score of the chunks returned",
    "llama_kb.duration_ms": "wall time of the query",
    "llama_kb.degraded": "backends that failed (the query went on without them)",
    "llama_kb.stage.names": "the stages in start order (parallel arrays follow)",
    "llama_kb.stage.offset_ms": "each stage's start after the query's",
    "llama_kb.stage.ms": "each stage's duration",
    "llama_kb.stage.out": "each stage's candidates out (-1: not counted)",
    "error.type": "the exception's qualified class name, when the query raised (status ERROR)",
}
"""Attributes of the OpenTelemetry span ``retrieval llama_kb``."""


class StageRecorder:
    """Collects the stages of one query (safe to share between the async path's threads).

    Each stage becomes ``{"name", "offset_ms", "ms", **counts}`` in :meth:`to_list`:
    ``offset_ms`` is its start after the query's, ``counts`` are ``in`` / ``out``
    candidate counts and other small facts (``seeds``, ``route``, ...).
    """

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.wall_ns = time.time_ns()
        self._stages: list[tuple[str, float, float, dict[str, Any]]] = []

    def add(self, name: str, started: float, **counts: Any) -> float:
        """Record stage ``name`` that began at ``started`` (``time.perf_counter()``) and
        ends now; returns now, the start of a following stage."""
        now = time.perf_counter()
        self._stages.append((name, started, now, counts))
        return now

    def to_list(self) -> list[dict[str, Any]]:
        """The stages in start order."""
        return [
            {
                "name": name,
                "offset_ms": round((started - self.started) * 1000, 3),
                "ms": round((ended - started) * 1000, 3),
                **counts,
            }
            for name, started, ended, counts in sorted(self._stages, key=lambda s: s[1])
        ]


class KBRetrievalStartEvent(BaseEvent):
    """A llama-kb query started."""

    query: str
    options: dict[str, Any]

    @classmethod
    def class_name(cls) -> str:
        """Event name."""
        return "KBRetrievalStartEvent"


class KBRetrievalEndEvent(BaseEvent):
    """A llama-kb query ended: the summary of :func:`summarize`, or of :func:`failed`
    (``error`` set, ``route`` ``None``) when it raised."""

    query: str
    route: str | None
    results: int
    facts: int
    avg_score: float | None
    duration_ms: float
    stages: list[dict[str, Any]]
    degraded: list[str]
    error: str | None = None

    @classmethod
    def class_name(cls) -> str:
        """Event name."""
        return "KBRetrievalEndEvent"


def summarize(context: FusedContext) -> dict[str, Any]:
    """The per-query summary every channel carries (seed 001's monitoring event)."""
    scores = [hit.score for hit in context.unstructured]
    return {
        "query": context.query,
        "route": context.route.value,
        "results": len(scores),
        "facts": len(context.structured_facts),
        "avg_score": round(sum(scores) / len(scores), 6) if scores else None,
        "duration_ms": float(context.trace.get("total_ms", 0.0)),
        "stages": list(context.trace.get("stages", [])),
        "degraded": list(context.trace.get("degraded", [])),
    }


def failed(query: str, error: BaseException, duration_ms: float) -> dict[str, Any]:
    """The summary of a query that raised (``error`` is ``"ExceptionClass: message"``)."""
    return {
        "query": query,
        "route": None,
        "results": 0,
        "facts": 0,
        "avg_score": None,
        "duration_ms": round(duration_ms, 3),
        "stages": [],
        "degraded": [],
        "error": f"{type(error).__name__}: {error}",
    }


def span(method: _F) -> _F:
    """``dispatcher.span`` around ``method`` (``retrieve(self, query, **options)``) when
    anything listens to LlamaIndex (an event or span handler), otherwise a direct call,
    sparing the span's per-call cost; a call that raises is reported by :func:`emit_error`."""
    if inspect.iscoroutinefunction(method):

        @functools.wraps(method)
        async def async_guarded(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
            started, wall_ns = time.perf_counter(), time.time_ns()
            try:
                return await method(self, query, *args, **kwargs)
            except Exception as e:
                emit_error(query, e, started, wall_ns)
                raise

        async_spanned = dispatcher.span(async_guarded)

        @functools.wraps(method)
        async def async_call(*args: Any, **kwargs: Any) -> Any:
            if _listening() or _spans_listening():
                return await async_spanned(*args, **kwargs)
            return await async_guarded(*args, **kwargs)

        return cast(_F, async_call)

    @functools.wraps(method)
    def guarded(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        started, wall_ns = time.perf_counter(), time.time_ns()
        try:
            return method(self, query, *args, **kwargs)
        except Exception as e:
            emit_error(query, e, started, wall_ns)
            raise

    spanned = dispatcher.span(guarded)

    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        if _listening() or _spans_listening():
            return spanned(*args, **kwargs)
        return guarded(*args, **kwargs)

    return cast(_F, call)


_SILENCED: ContextVar[bool] = ContextVar("llama_kb_trace_silenced", default=False)


@contextmanager
def silenced() -> Iterator[None]:
    """Queries run inside report to no channel (the engine's internal warm-up query)."""
    token = _SILENCED.set(True)
    try:
        yield
    finally:
        _SILENCED.reset(token)


def emit_start(query: str, options: Any) -> None:
    """Announce a query to LlamaIndex handlers (no-op when none is attached)."""
    if not _SILENCED.get() and _listening():
        dumped = options.model_dump(mode="json") if hasattr(options, "model_dump") else {}
        dispatcher.event(KBRetrievalStartEvent(query=query, options=dumped))


def emit_end(context: FusedContext, recorder: StageRecorder, top_k: int) -> FusedContext:
    """Store the stages (and a fact explanation) in ``context.trace`` and emit the summary;
    returns ``context``."""
    context.trace["stages"] = recorder.to_list()
    explain_facts.attach(context)
    _send(lambda: summarize(context), lambda tracer, s: _otel_span(tracer, s, recorder, top_k))
    return context


def emit_error(query: Any, error: Exception, started: float, wall_ns: int) -> None:
    """Report a query that raised ``error`` (started at ``started`` / ``wall_ns``) to every
    channel that listens."""
    duration_ms = (time.perf_counter() - started) * 1000
    _send(
        lambda: failed(str(query), error, duration_ms),
        lambda tracer, s: _otel_error_span(tracer, s, error, wall_ns),
    )


def _send(build: Callable[[], dict[str, Any]], otel: Callable[[Any, dict[str, Any]], None]) -> None:
    """Build a summary (only when some channel listens) and send it to each that does:
    the DEBUG log, LlamaIndex handlers, and ``otel(tracer, summary)``."""
    if _SILENCED.get():
        return
    listening = _listening()
    tracer = _otel_tracer()
    if not (listening or tracer is not None or logger.isEnabledFor(logging.DEBUG)):
        return
    summary = build()
    if logger.isEnabledFor(logging.DEBUG):
        logger.debug("%s", one_line(summary))
    if listening:
        dispatcher.event(KBRetrievalEndEvent(**summary))
    if tracer is not None:
        otel(tracer, summary)


def one_line(summary: dict[str, Any]) -> str:
    """``route=... results=... avg_score=... ms=... | stage ms, ...`` for logs."""
    stages = ", ".join(f"{s['name']} {s['ms']:g}" for s in summary["stages"])
    if summary.get("error"):
        return (
            f"query={summary['query'][:80]!r} failed after {summary['duration_ms']:g} ms: "
            f"{summary['error']}"
        )
    return (
        f"query={summary['query'][:80]!r} route={summary['route']} results={summary['results']} "
        f"facts={summary['facts']} avg_score={summary['avg_score']} "
        f"ms={summary['duration_ms']:g} | {stages}"
    )


def _listening() -> bool:
    """Whether any real LlamaIndex event handler would receive our events."""
    return _attached("event_handlers", NullEventHandler)


def _spans_listening() -> bool:
    """Whether any real LlamaIndex span handler is attached."""
    return _attached("span_handlers", NullSpanHandler)


def _attached(kind: str, null: type) -> bool:
    """Whether a handler of ``kind`` other than ``null`` sits on our dispatcher's chain."""
    current: Any = dispatcher
    while current is not None:
        if any(not isinstance(h, null) for h in getattr(current, kind)):
            return True
        manager = current.manager
        if (
            not current.propagate
            or manager is None
            or current.parent_name not in manager.dispatchers
        ):
            return False
        current = current.parent
    return False


def _otel_tracer() -> Any:
    """The OpenTelemetry tracer, or ``None`` without the API or without an SDK provider."""
    global _otel
    if _otel is None:
        try:
            import opentelemetry.trace as otel_trace
        except ImportError:
            _otel = False
        else:
            _otel = otel_trace
    if _otel is False:
        return None
    provider = _otel.get_tracer_provider()
    if isinstance(provider, _otel.ProxyTracerProvider | _otel.NoOpTracerProvider):
        return None
    if _tracers.get("provider") is not provider:
        _tracers.update(provider=provider, tracer=provider.get_tracer("llama_kb"))
    return _tracers["tracer"]


_otel: Any = None
"""The ``opentelemetry.trace`` module once looked up, ``False`` when not installed."""
_tracers: dict[str, Any] = {}
"""The last provider and its tracer (providers are global and rarely change)."""


def _otel_span(tracer: Any, summary: dict[str, Any], recorder: StageRecorder, top_k: int) -> None:
    """One span for the query, its stages as parallel arrays, at the recorded times."""
    start = recorder.wall_ns
    end = start + int(summary["duration_ms"] * 1e6)
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "retrieval",
        "gen_ai.data_source.id": "llama_kb",
        "gen_ai.retrieval.query.text": summary["query"],
        "gen_ai.request.top_k": top_k,
        "llama_kb.route": summary["route"],
        "llama_kb.results": summary["results"],
        "llama_kb.facts": summary["facts"],
        "llama_kb.duration_ms": summary["duration_ms"],
    }
    if summary["avg_score"] is not None:
        attributes["llama_kb.avg_score"] = summary["avg_score"]
    if summary["degraded"]:
        attributes["llama_kb.degraded"] = summary["degraded"]
    stages = summary["stages"]
    attributes["llama_kb.stage.names"] = [st["name"] for st in stages]
    attributes["llama_kb.stage.offset_ms"] = [st["offset_ms"] for st in stages]
    attributes["llama_kb.stage.ms"] = [st["ms"] for st in stages]
    attributes["llama_kb.stage.out"] = [int(st.get("out", -1)) for st in stages]
    span = tracer.start_span("retrieval llama_kb", start_time=start, attributes=attributes)
    span.end(end_time=end)


def _otel_error_span(tracer: Any, summary: dict[str, Any], error: Exception, start: int) -> None:
    """The query's span when it raised: status ``ERROR``, the exception recorded."""
    attributes = {
        "gen_ai.operation.name": "retrieval",
        "gen_ai.data_source.id": "llama_kb",
        "gen_ai.retrieval.query.text": summary["query"],
        "llama_kb.duration_ms": summary["duration_ms"],
        "error.type": f"{type(error).__module__}.{type(error).__qualname__}",
    }
    span = tracer.start_span("retrieval llama_kb", start_time=start, attributes=attributes)
    span.record_exception(error)
    span.set_status(_otel.Status(_otel.StatusCode.ERROR, str(error)))
    span.end(end_time=start + int(summary["duration_ms"] * 1e6))
