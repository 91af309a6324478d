"""The cyclic garbage collector is paused while a query runs, and only then."""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import Iterator

import pytest

from llama_kb import KnowledgeBase
from llama_kb.retrieval import collector
from llama_kb.retrieval.classifier import HeuristicClassifier


class RecordingClassifier(HeuristicClassifier):
    """Notes whether the collector runs while the query is classified."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[bool] = []

    def __call__(self, query, names):  # type: ignore[no-untyped-def]
        self.seen.append(gc.isenabled())
        return super().__call__(query, names)


@pytest.fixture
def recorded(example_kb: KnowledgeBase) -> Iterator[tuple[KnowledgeBase, RecordingClassifier]]:
    classifier = RecordingClassifier()
    example_kb.engine.classifier = classifier
    example_kb.engine.cache.clear()
    yield example_kb, classifier
    gc.enable()


def test_a_query_runs_with_the_collector_paused_and_resumes_it(recorded) -> None:
    kb, classifier = recorded
    kb.retrieve("What does the ingestion pipeline depend on?")
    kb.retrieve_many(["chunking", "embeddings"])
    asyncio.run(kb.engine.aretrieve("retry policy"))
    assert classifier.seen == [False] * 4 and gc.isenabled()


def test_a_collector_the_application_disabled_stays_disabled(recorded) -> None:
    kb, classifier = recorded
    gc.disable()
    kb.retrieve("retry policy")
    assert classifier.seen == [False] and not gc.isenabled()


def test_the_pause_can_be_turned_off(recorded) -> None:
    kb, classifier = recorded
    kb.engine.pause_collection = False
    kb.retrieve("retry policy")
    assert classifier.seen == [True]


def test_overlapping_queries_resume_it_when_the_last_ends() -> None:
    first_in, second_done = threading.Event(), threading.Event()
    states: list[bool] = []

    def first() -> None:
        with collector.collection_paused():
            first_in.set()
            second_done.wait(5)
        states.append(gc.isenabled())

    thread = threading.Thread(target=first)
    thread.start()
    first_in.wait(5)
    with collector.collection_paused():
        pass
    states.append(gc.isenabled())  # the first query still runs
    second_done.set()
    thread.join(5)
    assert states == [False, True]


def test_queries_that_keep_overlapping_still_collect_the_youngest_generation(
    monkeypatch,
) -> None:
    monkeypatch.setattr(collector, "MAX_PAUSE", 0.0)
    collected: list[int] = []

    def note(phase: str, info: dict) -> None:
        if phase == "stop":
            collected.append(info["generation"])

    gc.callbacks.append(note)
    try:
        with collector.collection_paused():
            with collector.collection_paused():
                pass
            assert collected == [0] and not gc.isenabled()
    finally:
        gc.callbacks.remove(note)
    assert gc.isenabled()
