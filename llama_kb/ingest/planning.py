"""Planning an ingest run: which listed files to read, and which documents to write.

:class:`Planner` skips files whose size and time (or ETag, or content hash) and pipeline
settings are unchanged, applies the input guards before anything is written (file limits
before hashing, so a FIFO never blocks; record validation and secret scanning on what a
reader returned) and compares each document's content hash with the manifest.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from llama_kb.access import PUBLIC
from llama_kb.config import LimitsConfig, SecretsConfig
from llama_kb.errors import DocumentError
from llama_kb.ingest._doc_codec import document_hash, with_access
from llama_kb.ingest.guards import SecretScanner, screen_documents
from llama_kb.ingest.guards.limits import check_file
from llama_kb.ingest.manifest import Manifest, SourceRecord
from llama_kb.ingest.source_reading import fetch
from llama_kb.ingest.sources.protocol import FileInfo, FilesAdapter
from llama_kb.types import IngestFailure, IngestReport, SourceDocument

__all__ = ["Planner", "SourceWork", "read_by_another_pipeline"]


@dataclass
class SourceWork:
    """What a run must do for one source file."""

    record: SourceRecord
    docs: list[SourceDocument] = field(default_factory=list)
    hashes: dict[str, str] = field(default_factory=dict)
    new_ids: set[str] = field(default_factory=set)
    unlinked: set[str] = field(default_factory=set)
    """Documents whose name no older chunk may have been linked to yet (new or unfinished)."""
    vanished: list[str] = field(default_factory=list)
    failed: bool = False
    moved_from: str | None = None
    """The key of the source this one was moved (renamed) from, inside the same root."""


def read_by_another_pipeline(known: SourceRecord | None, fingerprint: str) -> bool:
    """Whether a stored source was last read with another pipeline ``fingerprint`` (other
    chunking or extractors): its documents are then derived again, changed or not."""
    return known is not None and not known.sha256.endswith(fingerprint)


class Planner:
    """Decides a run's work (see the module docs)."""

    def __init__(
        self,
        manifest: Manifest,
        fingerprint: str,
        limits: LimitsConfig,
        secrets: SecretsConfig,
    ) -> None:
        self.manifest = manifest
        self.fingerprint = fingerprint
        self.limits = limits
        self.secrets = secrets
        self.scanner = SecretScanner(entropy=secrets.entropy)

    def screen(
        self, docs: Sequence[SourceDocument], report: IngestReport, access: str = PUBLIC
    ) -> list[SourceDocument]:
        """Validate documents, apply the secret mode and settle each one's access key (its
        own, else ``access``); refusals and warnings go to ``report``. Returns the documents
        that may be written."""
        screened = screen_documents(docs, self.limits, self.secrets, self.scanner)
        report.failed.extend(screened.failures)
        report.warnings.extend(screened.warnings)
        stamped = []
        for doc in screened.documents:
            try:
                stamped.append(with_access(doc, access))
            except DocumentError as e:
                report.failed.append(IngestFailure(e.source, e.reason))
        return stamped

    def fingerprint_for(self, access: str) -> str:
        """The pipeline fingerprint with the run's default access key folded in (files read
        under another access are read again)."""
        if access == PUBLIC:
            return self.fingerprint
        return hashlib.sha256(f"{self.fingerprint}:{access}".encode()).hexdigest()[:16]

    def check_size(self, source: FilesAdapter, info: FileInfo) -> None:
        """Refuse special and oversized files before they are read or hashed."""
        local = source.local_path(info.key)
        if local is not None:
            check_file(local, self.limits)  # stat only: a FIFO would block when hashed
        elif info.size > self.limits.max_file_bytes:
            raise DocumentError(
                source.uri(info.key),
                f"file size {info.size:,} is over the limit limits.max_file_bytes="
                f"{self.limits.max_file_bytes:,}; raise it or skip the file",
            )

    def plan(
        self,
        source: FilesAdapter,
        infos: Sequence[FileInfo],
        report: IngestReport,
        access: str = PUBLIC,
    ) -> list[SourceWork]:
        """The work for the listed files: unchanged ones (same size and time, or ETag, or
        content, read with the same pipeline and default ``access``) are skipped."""
        fingerprint = self.fingerprint_for(access)
        pending = self.manifest.pending_sources()
        listed = {i.key for i in infos}
        seen: dict[str, str] = {}
        works = []
        for info in infos:
            key = info.key
            try:
                self.check_size(source, info)
                known = self.manifest.source(key)
                fresh = known is not None and key not in pending
                if (
                    fresh
                    and known
                    and known.sha256.endswith(fingerprint)
                    and (
                        (known.size, known.mtime_ns) == (info.size, info.mtime_ns)
                        or (
                            info.etag is not None
                            and (known.etag, known.size) == (info.etag, info.size)
                        )
                    )
                ):
                    self.keep_unchanged(key, report, seen)
                    if (known.location, known.origin) != (source.uri(key), source.root):
                        self.manifest.put_source(  # the same tree, mounted elsewhere
                            dataclasses.replace(known, location=source.uri(key), origin=source.root)
                        )
                    continue
                fetched = fetch(source, info)
                digest = fetched.sha256 + ":" + fingerprint
                record = SourceRecord(
                    key, info.size, info.mtime_ns, digest, source.uri(key), source.root, info.etag
                )
                if fresh and known and known.sha256 == digest:
                    self.keep_unchanged(key, report, seen)
                    self.manifest.put_source(record)
                    continue
                original = self.copy_of(record, listed) if known is None else None
                if original is not None:
                    report.duplicates.append(f"{record.location} (same content as {original})")
                    continue
                moved = self.moved_from(record, listed) if known is None else None
                result = fetched.parse()
            except DocumentError as e:
                report.failed.append(IngestFailure(e.source, e.reason))
                continue
            except OSError as e:
                report.failed.append(IngestFailure(source.uri(key), e.strerror or str(e)))
                continue
            report.failed.extend(result.failures)
            docs = self.screen(result.documents, report, access)
            rederive = read_by_another_pipeline(known, fingerprint)
            works.append(self.compare(record, docs, report, seen, moved, rederive))
        return works

    def copy_of(self, record: SourceRecord, listed: set[str]) -> str | None:
        """The key of an ingested source with the same content, when ``record`` is a copy.

        Only under a declared root; a source whose file is gone was moved, not copied.
        """
        if not record.origin:
            return None
        for other in self.manifest.sources_with_hash(record.sha256):
            if other.path != record.path and (
                other.path in listed
                or other.origin != record.origin
                or (other.location and Path(other.location).exists())
            ):
                return other.path
        return None

    def moved_from(self, record: SourceRecord, listed: set[str]) -> str | None:
        """The key of an ingested source with the same content under the same root whose
        file is gone (not listed, not on disk): ``record`` is that source, moved."""
        if not record.origin:
            return None
        for other in self.manifest.sources_with_hash(record.sha256):
            if (
                other.path != record.path
                and other.origin == record.origin
                and other.path not in listed
                and not (other.location and Path(other.location).exists())
            ):
                return other.path
        return None

    def keep_unchanged(self, path: str, report: IngestReport, seen: dict[str, str]) -> None:
        for doc in self.manifest.documents(path):
            report.unchanged.append(doc.doc_id)
            seen[doc.doc_id] = path

    def compare(
        self,
        record: SourceRecord,
        docs: Sequence[SourceDocument],
        report: IngestReport,
        seen: dict[str, str],
        moved_from: str | None = None,
        rederive: bool = False,
    ) -> SourceWork:
        """Which of a source's documents to write, and which of its earlier ones vanished.

        With ``moved_from``, the documents of that source are this one's: those keeping
        their id are rewritten under the new key, the others vanish. With ``rederive`` (the
        source was last read by another pipeline: other chunking or extractors) every
        document is written again, changed or not.
        """
        work = SourceWork(record, moved_from=moved_from)
        known = self.manifest.documents_by_id(d.doc_id for d in docs)
        for doc in docs:
            owner = seen.get(doc.doc_id) or (
                known[doc.doc_id].source_path if doc.doc_id in known else record.path
            )
            if owner == moved_from:
                owner = record.path
            if doc.doc_id in seen or owner != record.path:
                report.failed.append(
                    IngestFailure(
                        record.path,
                        f"duplicate document id {doc.doc_id!r} (already ingested from {owner}); "
                        "skipped",
                    )
                )
                continue
            seen[doc.doc_id] = record.path
            digest = document_hash(doc)
            previous = known.get(doc.doc_id)
            if (
                not rederive
                and previous
                and previous.status == "ready"
                and previous.content_hash == digest
                and previous.source_path == record.path
            ):
                report.unchanged.append(doc.doc_id)
                continue
            work.docs.append(doc)
            work.hashes[doc.doc_id] = digest
            if previous is None:
                work.new_ids.add(doc.doc_id)
            if previous is None or previous.status != "ready":
                work.unlinked.add(doc.doc_id)
        in_source = {d.doc_id for d in docs}
        earlier = self.manifest.documents(record.path)
        if moved_from is not None:
            earlier += self.manifest.documents(moved_from)
        work.vanished = [d.doc_id for d in earlier if d.doc_id not in in_source]
        return work
