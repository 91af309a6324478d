"""What is stored, and rebuilding it: :func:`stored_documents`, :func:`rebuild`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import unquote, urlparse

from llama_kb.errors import ConfigurationError
from llama_kb.ingest._doc_codec import document_from_json
from llama_kb.ingest.manifest import SourceRecord
from llama_kb.ingest.pipeline import INLINE_ORIGIN, IngestionPipeline
from llama_kb.ingest.sources.local_adapter import LocalFiles
from llama_kb.ingest.sources.protocol import FilesAdapter
from llama_kb.types import IngestReport

__all__ = ["StoredDocument", "rebuild", "stored_documents"]


@dataclass(frozen=True)
class StoredDocument:
    """One stored document, as :meth:`KnowledgeBase.documents` lists it.

    Attributes:
        doc_id: The document id.
        source: Its source key (relative path under a root, absolute path, ``inline:<id>``).
        location: Where the source was last read (path or URL; ``""`` for in-memory ones).
        content_hash: SHA-256 of the document's title, text, metadata and links.
        chunks: Number of chunks.
        access: Its access key (:mod:`llama_kb.access`).
        title: The title.
        status: ``ready``, or ``pending`` when a run was interrupted.
        ingested_at: Unix time of the last write.
    """

    doc_id: str
    source: str
    location: str
    content_hash: str
    chunks: int
    access: str | None
    title: str | None
    status: str
    ingested_at: float

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable view."""
        return asdict(self)


def stored_documents(pipeline: IngestionPipeline) -> list[StoredDocument]:
    """Every stored document, sorted by id."""
    locations = {s.path: s.location for s in pipeline.manifest.sources()}
    return [
        StoredDocument(
            d.doc_id,
            d.source_path,
            locations.get(d.source_path, ""),
            d.content_hash,
            d.chunk_count,
            d.access,
            d.title,
            d.status,
            d.updated_at,
        )
        for d in pipeline.manifest.documents()
    ]


def _adapter(
    origin: str, records: list[SourceRecord], given: dict[str, FilesAdapter]
) -> FilesAdapter:
    if origin in given:
        return given[origin]
    if origin == "":
        return LocalFiles(None, [r.location or r.path for r in records])
    if origin.startswith("file://"):
        root = unquote(urlparse(origin).path)
        return LocalFiles(root, [r.location for r in records])
    raise ConfigurationError(
        f"documents came from {origin}; pass its source to rebuild(sources=[...]) "
        "so they can be read again"
    )


def rebuild(
    pipeline: IngestionPipeline,
    sources: Sequence[FilesAdapter] = (),
    show_progress: bool = False,
) -> IngestReport:
    """Delete every document's chunks and graph, then ingest all sources again.

    Local sources are re-read from where they were last read; remote ones from the
    adapters in ``sources`` (matched by root); documents added in memory from their stored
    text. Sources that are gone are reported as failures.

    Crash-safe: every source is first marked changed, then the documents are deleted while
    the source records and in-memory texts stay; a rebuild killed half-way is completed by
    the next ``ingest`` of the same paths (which reads every marked source again) or by the
    next rebuild (which still knows every source).

    Raises:
        ConfigurationError: A remote source has no adapter in ``sources`` (nothing is
            deleted then).
    """
    manifest = pipeline.manifest
    given = {s.root: s for s in sources}
    by_origin: dict[str, list[SourceRecord]] = {}
    records = manifest.sources()
    for record in records:
        if record.origin != INLINE_ORIGIN:
            by_origin.setdefault(record.origin, []).append(record)
    adapters = [_adapter(origin, records, given) for origin, records in by_origin.items()]
    inline = [document_from_json(p) for p in manifest.inline_payloads()]
    manifest.mark_stale([r.path for r in records])
    pipeline.remove_documents([d.doc_id for d in manifest.documents()], keep_sources=True)
    report = IngestReport()
    for adapter in adapters:
        report.merge(pipeline.run_source(adapter, show_progress=show_progress))
    if inline:
        report.merge(pipeline.add_documents(inline, show_progress=show_progress))
    for record in manifest.sources():  # not read again (gone, or failed): forget them
        if record.sha256 == "":
            manifest.delete_source(record.path)
    return report
