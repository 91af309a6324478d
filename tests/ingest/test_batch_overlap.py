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
