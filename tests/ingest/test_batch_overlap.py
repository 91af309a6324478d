"""An ingest batch is embedded while its extractors parse; nothing is stored before both end."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

from pydantic import Field

from llama_kb import KnowledgeBase, StructureExtractor
from llama_kb.ingest.extractors import GraphFragment
from llama_kb.types import SourceDocument, TextChunk
from tests.conftest import CountingEmbedding


class WaitingEmbedding(CountingEmbedding):
    """Embeds only once an extractor has started (or after a timeout), noting which."""

    started: threading.Event
    waits: list[bool] = Field(default_factory=list)

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        self.waits.append(self.started.wait(timeout=5))
        return super()._get_text_embeddings(texts)


class SignallingExtractor:
    """Tells the embedding it started, then finds nothing (or fails, when told to)."""

    name = "signalling"

    def __init__(self, started: threading.Event, error: Exception | None = None) -> None:
        self.started, self.error = started, error

    def extract(self, doc: SourceDocument, chunks: Sequence[TextChunk]) -> GraphFragment:
        self.started.set()
        if self.error is not None:
            raise self.error
        return GraphFragment()


def test_the_extractors_parse_while_the_model_embeds(tmp_path: Path, embedding) -> None:
    started = threading.Event()
    spy = WaitingEmbedding(inner=embedding, started=started, waits=[])
    doc = tmp_path / "notes.md"
    doc.write_text("# Notes\n\nThe graph updater needs the document interpreter.", "utf-8")
    extractors = [StructureExtractor(), SignallingExtractor(started)]
    with KnowledgeBase.open(tmp_path / "kb", embedding=spy, extractors=extractors) as kb:
        assert kb.ingest(doc).added
        assert spy.waits[0] and spy.texts_embedded > 0  # the chunks' batch: not a timeout
        assert kb.retrieve("graph updater").unstructured


def test_a_failing_extractor_leaves_nothing_of_its_batch(tmp_path: Path, embedding) -> None:
    doc = tmp_path / "notes.md"
    doc.write_text("# Notes\n\nThe graph updater needs the document interpreter.", "utf-8")
    failing = SignallingExtractor(threading.Event(), ValueError("parser crashed"))
    with KnowledgeBase.open(tmp_path / "kb", embedding=embedding, extractors=[failing]) as kb:
        report = kb.ingest(doc)
        assert not report.added and "parser crashed" in report.failed[0].reason
        assert kb.documents() == [] and kb.vectors.count() == 0
    with KnowledgeBase.open(tmp_path / "kb", embedding=embedding) as kb:
        assert kb.ingest(doc).added  # the next run stores it whole
        assert kb.retrieve("graph updater").unstructured


class BackgroundCountingEmbedding(CountingEmbedding):
    """Counts the batches embedded in another thread than the caller's."""

    caller: int = 0
    background: threading.Condition
    calls: int = 0

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        if threading.get_ident() != self.caller:
            with self.background:
                self.calls += 1
                self.background.notify_all()
        return super()._get_text_embeddings(texts)


def test_the_next_batch_is_embedded_while_this_one_is_written(
    tmp_path: Path, embedding, monkeypatch
) -> None:
    from llama_kb.ingest import pipeline

    monkeypatch.setattr(pipeline, "_BATCH_CHUNKS", 1)  # one document's chunk per batch
    names = ("updater", "interpreter", "scheduler")
    (tmp_path / "docs").mkdir()
    for name in names:
        text = f"# The {name}\n\nThe {name} reads the document graph."
        (tmp_path / "docs" / f"{name}.md").write_text(text, "utf-8")
    spy = BackgroundCountingEmbedding(
        inner=embedding, caller=threading.get_ident(), background=threading.Condition()
    )
    extractors = [StructureExtractor()]
    with KnowledgeBase.open(tmp_path / "kb", embedding=spy, extractors=extractors) as kb:
        graph = kb._pipeline.graph
        upsert, overlapped = graph.upsert_nodes, []

        def upsert_nodes(nodes) -> None:  # batch k's graph write: is batch k + 1 embedding?
            if len(overlapped) < len(names) - 1:
                with spy.background:
                    ahead = len(overlapped) + 2
                    overlapped.append(spy.background.wait_for(lambda: spy.calls >= ahead, 5))
            upsert(nodes)

        monkeypatch.setattr(graph, "upsert_nodes", upsert_nodes)
        report = kb.ingest(tmp_path / "docs")
        assert len(report.added) == 3 and not report.failed
        assert overlapped == [True, True]
        found = {h.metadata["doc_id"] for h in kb.search("document graph", top_k=10)}
        assert found == set(report.added)
