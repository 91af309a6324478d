"""Framework-neutral value types shared by ingestion, stores and retrieval."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any


class Route(StrEnum):
    """How a query is answered: from text chunks, from graph facts, or both."""

    SEMANTIC = "semantic"
    FACTUAL = "factual"
    HYBRID = "hybrid"


@dataclass(frozen=True)
class Segment:
    """A contiguous piece of a source document with location metadata.

    Readers split documents where location changes (a PDF page, a markdown section);
    the chunker never merges text across segments, so every chunk has one location.
    """

    text: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SourceDocument:
    """One document produced by a reader, before chunking."""

    doc_id: str
    source_path: str
    segments: tuple[Segment, ...]
    title: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    links: tuple[str, ...] = ()
    """Targets of links found in the document (paths or URLs), as written."""

    @property
    def text(self) -> str:
        """The whole document text, segments joined by blank lines."""
        return "\n\n".join(s.text for s in self.segments)


@dataclass(frozen=True)
class TextChunk:
    """A chunk ready to be embedded and stored."""

    chunk_id: str
    doc_id: str
    text: str
    chunk_index: int
    content_hash: str
    metadata: dict[str, Any] = field(default_factory=dict)
    overlap: int = 0
    """Characters at the start of ``text`` that end the previous chunk of its segment."""


@dataclass(frozen=True)
class IngestFailure:
    """One input that could not be ingested, and why."""

    source: str
    reason: str


@dataclass
class IngestReport:
    """What an ingestion run did, by document id (failures by input)."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    failed: list[IngestFailure] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    """Files not ingested because another source holds the same content (copies)."""
    warnings: list[IngestFailure] = field(default_factory=list)
    """Inputs ingested with a caveat (e.g. secrets redacted); never the secret itself."""
    chunks_embedded: int = 0
    chunks_over_window: int = 0
    """Chunks longer than the embedding model reads (their ends are not embedded); target 0."""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """True when no input failed."""
        return not self.failed

    def summary(self) -> str:
        """One line such as ``added 3, updated 1, unchanged 10, removed 0, failed 0``."""
        return (
            f"added {len(self.added)}, updated {len(self.updated)}, "
            f"unchanged {len(self.unchanged)}, removed {len(self.removed)}, "
            f"failed {len(self.failed)} ({self.chunks_embedded} chunks embedded "
            f"in {self.seconds:.1f}s, {self.chunks_over_window} over the model window)"
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable view."""
        return asdict(self)

    def merge(self, other: IngestReport) -> IngestReport:
        """Add ``other``'s lists and counts to this report; returns this report."""
        for name in ("added", "updated", "unchanged", "removed", "failed", "duplicates"):
            getattr(self, name).extend(getattr(other, name))
        self.chunks_embedded += other.chunks_embedded
        self.chunks_over_window += other.chunks_over_window
        self.seconds += other.seconds
        return self


@dataclass(frozen=True)
class SearchHit:
    """A chunk returned by retrieval, best first in any list of hits."""

    chunk_id: str
    doc_id: str
    text: str
    score: float
    metadata: dict[str, Any] = field(default_factory=dict)
    ranks: dict[str, int] = field(default_factory=dict)
    """1-based rank of this chunk in each retriever that found it (``vector``, ``bm25``, ...)."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable view."""
        return asdict(self)
