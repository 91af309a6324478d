"""What readers return: :class:`ReadResult`, the :data:`Reader` type and whole-file documents."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llama_kb.ingest.readers._text import path_id
from llama_kb.types import IngestFailure, Segment, SourceDocument

__all__ = ["ReadResult", "Reader", "file_document"]


@dataclass
class ReadResult:
    """What reading one file produced.

    Attributes:
        documents: Documents read from the file (one for most formats, one per line for JSONL).
        failures: Parts of the file that could not be used (JSONL lines), with reasons.
    """

    documents: list[SourceDocument] = field(default_factory=list)
    failures: list[IngestFailure] = field(default_factory=list)


Reader = Callable[[Path], SourceDocument | ReadResult]
"""A reader takes a path and returns one document or a :class:`ReadResult`.

It raises :class:`~llama_kb.errors.DocumentError` when the file cannot be used.
"""


def file_document(
    path: Path,
    segments: tuple[Segment, ...],
    title: str,
    *,
    metadata: dict[str, Any] | None = None,
    links: tuple[str, ...] = (),
) -> SourceDocument:
    """A document for a whole file: ``doc_id`` and ``source_path`` are its resolved path."""
    file_id = path_id(path)
    return SourceDocument(
        doc_id=file_id,
        source_path=file_id,
        segments=segments,
        title=title,
        metadata={} if metadata is None else metadata,
        links=links,
    )
