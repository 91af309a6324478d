"""Incremental ingestion: files or in-memory documents -> chunks -> vectors and graph.

Per run: list a source's files (local paths or any ``FilesAdapter``); skip those whose size
and mtime (or ETag, or content hash) and pipeline settings are unchanged; read the rest;
compare each document's content hash with the manifest; embed and store only new or
changed documents, in batches; delete documents that disappeared from their source (and,
with ``prune``, those whose file is gone); finally link chunks to the names in the graph
(new chunks against all names, old chunks against new names). Documents added in memory
(:meth:`IngestionPipeline.add_documents`) take the same path.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding
from tqdm.auto import tqdm

from llama_kb import graph_model as gm
from llama_kb.config import ChunkingConfig
from llama_kb.errors import BackendUnavailable, DocumentError, LlamaKBError
from llama_kb.ingest._doc_codec import document_access, document_hash, document_json
from llama_kb.ingest.chunker import Chunker, embedding_text
from llama_kb.ingest.documents import INLINE_PREFIX
from llama_kb.ingest.extractors import GraphExtractor
from llama_kb.ingest.linking import link_chunks
from llama_kb.ingest.manifest import Manifest, SourceRecord
from llama_kb.ingest.source_reading import fetch
from llama_kb.ingest.sources.local_adapter import LocalFiles
from llama_kb.ingest.sources.protocol import FileInfo, FilesAdapter
from llama_kb.stores.chroma_vector import ChromaChunkStore
from llama_kb.stores.graph import KBGraphStore
from llama_kb.types import IngestFailure, IngestReport, SourceDocument, TextChunk

logger = logging.getLogger(__name__)

__all__ = ["INLINE_ORIGIN", "INLINE_PREFIX", "IngestionPipeline", "embedding_text"]

PIPELINE_VERSION = "2"
INLINE_ORIGIN = "inline"
"""The ``origin`` of sources grouping documents added in memory (keys ``inline:<ref id>``)."""
RELINK_FLAG = "relink_pending"
_BATCH_CHUNKS = 512


@dataclass
class _SourceWork:
    """What a run must do for one source file."""

    record: SourceRecord
    docs: list[SourceDocument] = field(default_factory=list)
    hashes: dict[str, str] = field(default_factory=dict)
    new_ids: set[str] = field(default_factory=set)
    unlinked: set[str] = field(default_factory=set)
    """Documents whose name no older chunk may have been linked to yet (new or unfinished)."""
    vanished: list[str] = field(default_factory=list)
    failed: bool = False


class IngestionPipeline:
    """Writes documents into the vector store, the graph store and the manifest.

    Args:
        manifest: Record of what is ingested.
        vectors: Chunk vector store.
        graph: Graph store.
        embedding: Embeds chunk texts.
        chunking: Chunk size and overlap.
        extractors: Graph extractors run on every new or changed document.
    """

    def __init__(
        self,
        manifest: Manifest,
        vectors: ChromaChunkStore,
        graph: KBGraphStore,
        embedding: BaseEmbedding,
        chunking: ChunkingConfig,
        extractors: Sequence[GraphExtractor],
    ) -> None:
        self.manifest = manifest
        self.vectors = vectors
        self.graph = graph
        self.embedding = embedding
        self.chunking = chunking
        self.chunker = Chunker(chunking, embedding)
        self.extractors = list(extractors)
        self._fingerprint = hashlib.sha256(
            json.dumps(
                [PIPELINE_VERSION, chunking.model_dump(), [type(e).__name__ for e in extractors]]
            ).encode()
        ).hexdigest()[:16]

    def run(
        self,
        paths: Sequence[str | Path],
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        prune: bool = False,
        show_progress: bool = False,
        root: str | Path | None = None,
    ) -> IngestReport:
        """Ingest local ``paths`` (files or directories); see the module docstring.

        With ``root``, documents are keyed by their path relative to it (see
        :class:`~llama_kb.ingest.sources.local_adapter.LocalFiles`).
        """
        return self.run_source(
            LocalFiles(root, paths, include, exclude), prune=prune, show_progress=show_progress
        )

    def run_source(
        self, source: FilesAdapter, prune: bool = False, show_progress: bool = False
    ) -> IngestReport:
        """Ingest every file a :class:`FilesAdapter` lists; ``prune`` drops unlisted ones."""
        started = time.perf_counter()
        report = IngestReport()
        try:
            infos = list(source.list())
        except OSError as e:
            report.failed.append(IngestFailure(source.root, f"cannot list: {e}"))
            return self._finish(report, started)
        report.failed.extend(getattr(source, "failures", ()))
        works = self._plan(source, infos, report)
        listed = {i.key for i in infos}
        return (
            self._commit(
                works, report, started, show_progress, lambda: self._prune(source, listed, report)
            )
            if prune
            else self._commit(works, report, started, show_progress)
        )

    def add_documents(
        self, docs: Sequence[SourceDocument], show_progress: bool = False
    ) -> IngestReport:
        """Ingest documents given in memory; each ``source_path`` groups documents to delete
        together (``inline:<ref id>``). Unchanged documents cost a hash."""
        started = time.perf_counter()
        report = IngestReport()
        groups: dict[str, list[SourceDocument]] = {}
        for doc in docs:
            groups.setdefault(doc.source_path, []).append(doc)
        works = []
        seen: dict[str, str] = {}
        for source_path, group in groups.items():
            digest = hashlib.sha256("".join(document_hash(d) for d in group).encode())
            record = SourceRecord(
                source_path,
                sum(len(d.text) for d in group),
                0,
                digest.hexdigest() + ":" + self._fingerprint,
                origin=INLINE_ORIGIN,
            )
            work = self._compare(record, group, report, seen)
            work.vanished = []  # adding never removes a document's siblings
            works.append(work)
        self.manifest.put_inline([(d.doc_id, document_json(d)) for w in works for d in w.docs])
        return self._commit(works, report, started, show_progress)

    def _commit(
        self,
        works: list[_SourceWork],
        report: IngestReport,
        started: float,
        show_progress: bool,
        prune: Callable[[], None] | None = None,
    ) -> IngestReport:
        relink_all = self.manifest.flag(RELINK_FLAG)
        if any(w.docs for w in works):
            # set until linking completes: a run that dies before re-links everything next time
            self.manifest.set_flag(RELINK_FLAG, True)
        written = self._write(works, report, show_progress)
        try:
            self._remove_vanished(works, report)
            if prune is not None:
                prune()
            unlinked = [d for w in works for d in w.unlinked]
            link_chunks(self.graph, self.vectors, written, unlinked, relink_all)
        except LlamaKBError as e:
            report.failed.append(IngestFailure("(linking)", f"{e}; the next run completes it"))
            return self._finish(report, started)
        self.manifest.set_flag(RELINK_FLAG, False)
        for work in works:
            if not work.failed:
                self.manifest.put_source(work.record)
        return self._finish(report, started)

    @staticmethod
    def _finish(report: IngestReport, started: float) -> IngestReport:
        report.seconds = time.perf_counter() - started
        logger.info("ingest finished: %s", report.summary())
        return report

    # -- planning ---------------------------------------------------------------------

    def _plan(
        self, source: FilesAdapter, infos: Sequence[FileInfo], report: IngestReport
    ) -> list[_SourceWork]:
        pending = self.manifest.pending_sources()
        listed = {i.key for i in infos}
        seen: dict[str, str] = {}
        works = []
        for info in infos:
            key = info.key
            try:
                known = self.manifest.source(key)
                fresh = known is not None and key not in pending
                if (
                    fresh
                    and known
                    and known.sha256.endswith(self._fingerprint)
                    and (
                        (known.size, known.mtime_ns) == (info.size, info.mtime_ns)
                        or (
                            info.etag is not None
                            and (known.etag, known.size) == (info.etag, info.size)
                        )
                    )
                ):
                    self._keep_unchanged(key, report, seen)
                    if (known.location, known.origin) != (source.uri(key), source.root):
                        self.manifest.put_source(  # the same tree, mounted elsewhere
                            dataclasses.replace(known, location=source.uri(key), origin=source.root)
                        )
                    continue
                fetched = fetch(source, info)
                digest = fetched.sha256 + ":" + self._fingerprint
                record = SourceRecord(
                    key, info.size, info.mtime_ns, digest, source.uri(key), source.root, info.etag
                )
                if fresh and known and known.sha256 == digest:
                    self._keep_unchanged(key, report, seen)
                    self.manifest.put_source(record)
                    continue
                original = self._copy_of(record, listed) if known is None else None
                if original is not None:
                    report.duplicates.append(f"{record.location} (same content as {original})")
                    continue
                result = fetched.parse()
            except DocumentError as e:
                report.failed.append(IngestFailure(e.source, e.reason))
                continue
            except OSError as e:
                report.failed.append(IngestFailure(source.uri(key), e.strerror or str(e)))
                continue
            report.failed.extend(result.failures)
            works.append(self._compare(record, result.documents, report, seen))
        return works

    def _copy_of(self, record: SourceRecord, listed: set[str]) -> str | None:
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

    def _keep_unchanged(self, path: str, report: IngestReport, seen: dict[str, str]) -> None:
        for doc in self.manifest.documents(path):
            report.unchanged.append(doc.doc_id)
            seen[doc.doc_id] = path

    def _compare(
        self,
        record: SourceRecord,
        docs: Sequence[SourceDocument],
        report: IngestReport,
        seen: dict[str, str],
    ) -> _SourceWork:
        work = _SourceWork(record)
        known = self.manifest.documents_by_id(d.doc_id for d in docs)
        for doc in docs:
            owner = seen.get(doc.doc_id) or (
                known[doc.doc_id].source_path if doc.doc_id in known else record.path
            )
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
            if previous and previous.status == "ready" and previous.content_hash == digest:
                report.unchanged.append(doc.doc_id)
                continue
            work.docs.append(doc)
            work.hashes[doc.doc_id] = digest
            if previous is None:
                work.new_ids.add(doc.doc_id)
            if previous is None or previous.status != "ready":
                work.unlinked.add(doc.doc_id)
        in_source = {d.doc_id for d in docs}
        work.vanished = [
            d.doc_id for d in self.manifest.documents(record.path) if d.doc_id not in in_source
        ]
        return work

    # -- writing ----------------------------------------------------------------------

    def _write(
        self, works: Sequence[_SourceWork], report: IngestReport, show_progress: bool
    ) -> list[tuple[str, str, str]]:
        """Store every planned document; returns ``(chunk_id, doc_id, text)`` written."""
        written: list[tuple[str, str, str]] = []
        total = sum(len(w.docs) for w in works)
        down: BackendUnavailable | None = None
        with tqdm(total=total, desc="Ingesting", unit="doc", disable=not show_progress) as bar:
            for batch in self.chunker.batches(
                ((w, d) for w in works for d in w.docs), _BATCH_CHUNKS
            ):
                error: LlamaKBError | None = down  # a server is down: do not embed in vain
                if error is None:
                    try:
                        written.extend(self._write_batch(batch, report))
                    except LlamaKBError as e:
                        error = e
                        down = e if isinstance(e, BackendUnavailable) else None
                if error is not None:
                    for work, doc, _ in batch:
                        work.failed = True
                        report.failed.append(
                            IngestFailure(doc.source_path, f"{doc.doc_id}: {error}")
                        )
                bar.update(len({id(d) for _, d, _ in batch}))
        return written

    def _write_batch(
        self,
        batch: Sequence[tuple[_SourceWork, SourceDocument, list[TextChunk]]],
        report: IngestReport,
    ) -> list[tuple[str, str, str]]:
        docs = [
            (doc.doc_id, doc.source_path, doc.title, document_access(doc)) for _, doc, _ in batch
        ]
        self.manifest.mark_pending(docs)
        old = [doc.doc_id for work, doc, _ in batch if doc.doc_id not in work.new_ids]
        if old:
            self._delete_content(old)
        chunks = [c for _, _, cs in batch for c in cs]
        report.chunks_over_window += self.chunker.over_window(chunks)
        vectors = self.embedding.get_text_embedding_batch([embedding_text(c) for c in chunks])
        self.vectors.add(chunks, vectors)
        owned: list = []
        extracted: list = []
        relations: list = []
        for _, doc, doc_chunks in batch:
            owned.append(gm.document_node(doc))
            owned.extend(gm.chunk_node(c) for c in doc_chunks)
            doc_node = gm.doc_node_id(doc.doc_id)
            relations.extend(gm.relation(c.chunk_id, gm.PART_OF, doc_node, 0.0) for c in doc_chunks)
            for extractor in self.extractors:
                fragment = extractor.extract(doc, doc_chunks)
                for node in fragment.nodes:  # nodes carrying this doc_id are its own
                    own = node.properties.get("doc_id") == doc.doc_id
                    (owned if own else extracted).append(node)
                relations.extend(fragment.relations)
        self.graph.upsert_nodes(owned + self._missing(extracted, {n.id for n in owned}))
        self.graph.upsert_relations(relations)
        self.manifest.mark_ready([(d.doc_id, w.hashes[d.doc_id], len(cs)) for w, d, cs in batch])
        for work, doc, _ in batch:
            (report.added if doc.doc_id in work.new_ids else report.updated).append(doc.doc_id)
        report.chunks_embedded += len(chunks)
        return [(c.chunk_id, c.doc_id, c.text) for c in chunks]

    def _missing(self, nodes: Sequence[Any], taken: set[str]) -> list[Any]:
        """Extracted nodes that do not exist yet (existing nodes keep their properties)."""
        fresh = {n.id: n for n in nodes if n.id not in taken}
        existing = {node_id for node_id, _, _ in self.graph.named_nodes(ids=list(fresh))}
        return [n for node_id, n in fresh.items() if node_id not in existing]

    def _delete_content(self, doc_ids: Sequence[str]) -> None:
        """Delete chunks (vectors and graph) of documents, keeping their document nodes."""
        self.vectors.delete_documents(doc_ids)
        for doc_id in doc_ids:
            self.graph.delete_by_property("doc_id", doc_id)

    # -- removing ---------------------------------------------------------------------

    def _remove_vanished(self, works: Sequence[_SourceWork], report: IngestReport) -> None:
        for work in works:
            if work.vanished and not work.failed:
                self.remove_documents(work.vanished)
                report.removed.extend(work.vanished)

    def _prune(self, source: FilesAdapter, listed: set[str], report: IngestReport) -> None:
        """Remove documents of sources gone from ``source`` (without a root: from disk)."""
        for record in self.manifest.sources():
            if record.origin != source.root:
                continue
            gone = record.path not in listed if source.root else not Path(record.path).exists()
            if gone:
                doc_ids = [d.doc_id for d in self.manifest.documents(record.path)]
                self.remove_documents(doc_ids)
                self.manifest.delete_source(record.path)
                report.removed.extend(doc_ids)

    def remove_documents(self, doc_ids: Sequence[str]) -> None:
        """Delete documents everywhere: vectors, chunk and document nodes, manifest.

        A document node that other documents still link to stays as a placeholder.
        """
        if not doc_ids:
            return
        self._delete_content(doc_ids)
        linked = self.graph.nodes_with_incoming([gm.doc_node_id(d) for d in doc_ids])
        self.graph.delete(
            ids=[gm.doc_node_id(d) for d in doc_ids if gm.doc_node_id(d) not in linked]
        )
        self.graph.upsert_nodes(
            [gm.placeholder_document_node(d) for d in doc_ids if gm.doc_node_id(d) in linked]
        )
        for label in (gm.ENTITY, gm.SECTION, gm.SYMBOL):
            self.graph.delete_orphan_entities(label=label)
        sources = {d.source_path for d in self.manifest.documents_by_id(doc_ids).values()}
        self.manifest.delete_documents(doc_ids)
        for source_path in sources:  # read again next time: "remove, then re-ingest" works
            self.manifest.delete_source(source_path)

    def delete(self, ids: Sequence[str]) -> list[str]:
        """Delete documents by id, and documents added in memory under a ref id in ``ids``.

        Returns:
            The document ids deleted.
        """
        found = set(self.manifest.documents_by_id(ids))
        for ref in ids:
            found.update(d.doc_id for d in self.manifest.documents(INLINE_PREFIX + ref))
        doc_ids = sorted(found)
        self.remove_documents(doc_ids)
        return doc_ids
