"""What observability costs: ``kb.retrieve`` latency with every listener attached vs none.

One process, one knowledge base, the same questions; the modes alternate per question (the
order flips every question) so drift on a shared machine hits both alike:

- ``off``: no listener (no LlamaIndex handler, no OpenTelemetry SDK, logging above DEBUG):
  what every user who does not look pays;
- ``on``: a LlamaIndex event handler on the root dispatcher, an OpenTelemetry SDK tracer
  provider with an in-memory exporter, and the DEBUG log line (to a null handler).

Run it against ``main`` too (``PYTHONPATH`` at a checkout without
``llama_kb.retrieval.trace``: only ``off`` runs) to compare with the code before.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks._common import median, percentile, read_jsonl, write_results
from llama_kb import KBConfig, KnowledgeBase, default_embedding

TOP_K = 10


def run(
    dataset: Path, out_dir: Path, kb_dir: Path, limit: int | None = None, rounds: int = 5
) -> dict[str, Any]:
    """Time ``kb.retrieve`` on ``kb_dir`` (an ingested copy of ``dataset``) in both modes,
    ``rounds`` times over the questions (a shared machine's noise needs many samples)."""
    questions = [q["question"] for q in read_jsonl(dataset / "questions.jsonl")[:limit]]
    switch = _Switch.create()
    modes = ["off", "on"] if switch is not None else ["off"]
    times: dict[str, list[float]] = {mode: [] for mode in modes}
    # no query cache: rounds repeat the questions, and a cached answer skips the work measured
    config = KBConfig.build(path=kb_dir, cache_size=0)
    with KnowledgeBase.open(config=config, embedding=default_embedding()) as kb:
        for question in questions[:20]:  # build the index, warm caches and the model
            kb.retrieve(question, top_k=TOP_K)
        for i, question in enumerate(questions * rounds):
            for mode in modes if i % 2 == 0 else modes[::-1]:
                with switch.on() if switch is not None and mode == "on" else _nothing():
                    started = time.perf_counter()
                    kb.retrieve(question, top_k=TOP_K)
                    times[mode].append((time.perf_counter() - started) * 1000)
    figures: dict[str, Any] = {
        "dataset": dataset.name,
        "questions": len(questions),
        "rounds": rounds,
    }
    for mode, values in times.items():
        figures[mode] = {
            "p50_ms": round(median(values), 2),
            "p90_ms": round(percentile(values, 0.9), 2),
        }
    if "on" in figures:
        figures["on_over_off_p50"] = round(figures["on"]["p50_ms"] / figures["off"]["p50_ms"], 3)
        paired = [on / off for on, off in zip(times["on"], times["off"], strict=True)]
        figures["paired_median_ratio"] = round(median(paired), 3)
        figures["events"] = switch.events if switch is not None else 0
        figures["spans"] = switch.spans() if switch is not None else 0
    table = _table(figures)
    write_results(out_dir, f"observability-{dataset.name}", figures, table)
    print(table)
    return figures


class _Switch:
    """Attaches and detaches every listener (the OTel provider is global: set once, and the
    ``off`` mode hides it the way an absent SDK does)."""

    def __init__(self, trace_module: Any, exporter: Any) -> None:
        self.trace = trace_module
        self.exporter = exporter
        self.events = 0
        self._tracer = trace_module._otel_tracer

    @classmethod
    def create(cls) -> _Switch | None:
        try:
            from llama_kb.retrieval import trace
        except ImportError:  # a checkout before issue 21
            return None
        from opentelemetry import trace as otel
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        otel.set_tracer_provider(provider)
        switch = cls(trace, exporter)
        trace._otel_tracer = lambda: None  # off until switched on
        return switch

    @contextmanager
    def on(self) -> Iterator[None]:
        from llama_index.core.instrumentation import get_dispatcher
        from llama_index.core.instrumentation.event_handlers import BaseEventHandler

        switch = self

        class Counter(BaseEventHandler):
            @classmethod
            def class_name(cls) -> str:
                return "Counter"

            def handle(self, event: Any, **kwargs: Any) -> None:
                switch.events += 1

        root, handler = get_dispatcher(), Counter()
        log = logging.getLogger("llama_kb.retrieval.trace")
        null = logging.NullHandler()
        root.add_event_handler(handler)
        self.trace._otel_tracer = self._tracer
        log.addHandler(null)
        log.setLevel(logging.DEBUG)
        log.propagate = False
        try:
            yield
        finally:
            root.event_handlers.remove(handler)
            self.trace._otel_tracer = lambda: None
            log.removeHandler(null)
            log.setLevel(logging.NOTSET)
            log.propagate = True

    def spans(self) -> int:
        return len(self.exporter.get_finished_spans())


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def _table(figures: dict[str, Any]) -> str:
    rows = [
        f"| `kb.retrieve` top-{TOP_K}, {mode} | {f['p50_ms']} | {f['p90_ms']} |"
        for mode, f in figures.items()
        if isinstance(f, dict)
    ]
    ratio = figures.get("on_over_off_p50")
    lines = [
        f"{figures['dataset']}, {figures['questions']} questions x {figures['rounds']} rounds, "
        "modes alternating per question",
        "",
        "| mode | p50 ms | p90 ms |",
        "|---|---|---|",
        *rows,
    ]
    if ratio is not None:
        lines += [
            "",
            f"on / off p50: {ratio}x; median per-question on/off: "
            f"{figures['paired_median_ratio']}x ({figures['events']} events, "
            f"{figures['spans']} spans)",
        ]
    return "\n".join(lines) + "\n"
