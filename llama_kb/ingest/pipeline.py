"""Incremental ingestion: files -> documents -> chunks -> vectors and graph.

Per run: discover files; skip those whose size, mtime (or hash) and pipeline settings are
unchanged; read the rest; compare each document's content hash with the manifest; embed
and store only new or changed documents, in batches; delete documents that disappeared
from their source (and, with ``prune``, those whose file is gone); finally link chunks to
the names in the graph (new chunks against all names, old chunks against new names).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding
from tqdm.auto import tqdm

from llama_kb import graph_model as gm
from llama_kb.config import ChunkingConfig, LimitsConfig, SecretsConfig
from llama_kb.embeddings import file_sha256
from llama_kb.errors import BackendUnavailable, DocumentError, EmbeddingError, LlamaKBError
from llama_kb.ingest.chunking import chunk_document
from llama_kb.ingest.extractors import GraphExtractor, GraphFragment
from llama_kb.ingest.guards import SecretScanner, screen_documents, use_limits
from llama_kb.ingest.guards.limits import check_file
from llama_kb.ingest.guards.records import vector_problem
from llama_kb.ingest.linking import mention_relations
from llama_kb.ingest.manifest import Manifest, SourceRecord
from llama_kb.ingest.readers import read_path
from llama_kb.ingest.sources import discover_files
from llama_kb.names import NameMatcher
from llama_kb.stores.chroma_vector import ChromaChunkStore
from llama_kb.stores.graph import KBGraphStore
from llama_kb.types import IngestFailure, IngestReport, SourceDocument, TextChunk

logger = logging.getLogger(__name__)

PIPELINE_VERSION = "1"
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


def embedding_text(chunk: TextChunk) -> str:
    """The text embedded for a chunk: its title (when not already leading) and its text."""
    title = chunk.metadata.get("title")
    if isinstance(title, str) and title and not chunk.text.lstrip("# ").startswith(title):
        return f"{title}\n{chunk.text}"
    return chunk.text


class IngestionPipeline:
    """Writes documents into the vector store, the graph store and the manifest.

    Args:
        manifest: Record of what is ingested.
        vectors: Chunk vector store.
        graph: Graph store.
        embedding: Embeds chunk texts.
        chunking: Chunk size and overlap.
        extractors: Graph extractors run on every new or changed document.
        limits: Resource limits on input (default :class:`LimitsConfig`).
        secrets: Secret scanning modes (default :class:`SecretsConfig`).
    """

    def __init__(
        self,
        manifest: Manifest,
        vectors: ChromaChunkStore,
        graph: KBGraphStore,
        embedding: BaseEmbedding,
        chunking: ChunkingConfig,
        extractors: Sequence[GraphExtractor],
        limits: LimitsConfig | None = None,
        secrets: SecretsConfig | None = None,
    ) -> None:
        self.manifest = manifest
        self.vectors = vectors
        self.graph = graph
        self.embedding = embedding
        self.chunking = chunking
        self.extractors = list(extractors)
        self.limits = limits or LimitsConfig()
        self.secrets = secrets or SecretsConfig()
        self._scanner = SecretScanner(entropy=self.secrets.entropy)
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
    ) -> IngestReport:
        """Ingest ``paths`` (files or directories); see the module docstring."""
        with use_limits(self.limits):
            return self._run(paths, include, exclude, prune, show_progress)

    def _run(
        self,
        paths: Sequence[str | Path],
        include: Sequence[str],
        exclude: Sequence[str],
        prune: bool,
        show_progress: bool,
    ) -> IngestReport:
        started = time.perf_counter()
        report = IngestReport()
        self._finish_interrupted_removals(report)
        discovery = discover_files(paths, include=include, exclude=exclude)
        report.failed.extend(discovery.failures)
        works = self._plan(discovery.files, report)
        relink_all = self.manifest.flag(RELINK_FLAG)
        if any(w.docs for w in works):
            # set until linking completes: a run that dies before re-links everything next time
            self.manifest.set_flag(RELINK_FLAG, True)
        written = self._write(works, report, show_progress)
        try:
            self._remove_vanished(works, report)
            if prune:
                self._prune(report)
            unlinked = [d for w in works for d in w.unlinked]
            self._link(written, unlinked, relink_all)
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

    def _plan(self, files: Sequence[Path], report: IngestReport) -> list[_SourceWork]:
        pending = self.manifest.pending_sources()
        seen: dict[str, str] = {}
        works = []
        for file in files:
            path = file.as_posix()
            try:
                stat = check_file(file, self.limits)  # before hashing: a FIFO would block
                known = self.manifest.source(path)
                if (
                    known
                    and path not in pending
                    and known.sha256.endswith(self._fingerprint)
                    and (known.size, known.mtime_ns) == (stat.st_size, stat.st_mtime_ns)
                ):
                    self._keep_unchanged(path, report, seen)
                    continue
                digest = file_sha256(file) + ":" + self._fingerprint
                record = SourceRecord(path, stat.st_size, stat.st_mtime_ns, digest)
                if known and path not in pending and known.sha256 == digest:
                    self._keep_unchanged(path, report, seen)
                    self.manifest.put_source(record)
                    continue
                result = read_path(file)
            except DocumentError as e:
                report.failed.append(IngestFailure(e.source, e.reason))
                continue
            except OSError as e:
                report.failed.append(IngestFailure(path, e.strerror or str(e)))
                continue
            screened = screen_documents(result.documents, self.limits, self.secrets, self._scanner)
            report.failed.extend(result.failures + screened.failures)
            report.warnings.extend(screened.warnings)
            works.append(self._compare(record, screened.documents, report, seen))
        return works

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
            digest = _document_hash(doc)
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
            for batch in _batches(works, self.chunking):
                error: LlamaKBError | None = down  # a server is down: do not embed in vain
                if error is None:
                    try:
                        written.extend(self._write_batch(batch, report))
                    except (LlamaKBError, ValueError, TypeError) as e:  # stores raise plain ones
                        error = e if isinstance(e, LlamaKBError) else LlamaKBError(str(e))
                        down = e if isinstance(e, BackendUnavailable) else None
                        if down is None:
                            self._discard_new(batch)
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
        docs = [(doc.doc_id, doc.source_path, doc.title) for _, doc, _ in batch]
        self.manifest.mark_pending(docs)
        old = [doc.doc_id for work, doc, _ in batch if doc.doc_id not in work.new_ids]
        if old:
            self._delete_content(old)
        chunks = [c for _, _, cs in batch for c in cs]
        vectors = self.embedding.get_text_embedding_batch([embedding_text(c) for c in chunks])
        problem = vector_problem(vectors, len(chunks))
        if problem:
            raise EmbeddingError(f"the embedding model returned {problem}; nothing was stored")
        self.vectors.add(chunks, vectors)
        owned: list = []
        extracted: list = []
        relations: list = []
        for _, doc, doc_chunks in batch:
            owned.append(gm.document_node(doc))
            owned.extend(gm.chunk_node(c) for c in doc_chunks)
            doc_node = gm.doc_node_id(doc.doc_id)
            relations.extend(gm.relation(c.chunk_id, gm.PART_OF, doc_node, 0.0) for c in doc_chunks)
        items = [(doc, doc_chunks) for _, doc, doc_chunks in batch]
        for extractor in self.extractors:
            for fragment in _extract_all(extractor, items):
                extracted.extend(fragment.nodes)
                relations.extend(fragment.relations)
        self.graph.upsert_nodes(owned + self._missing(extracted, {n.id for n in owned}))
        self.graph.upsert_relations(relations)
        self.manifest.mark_ready([(d.doc_id, w.hashes[d.doc_id], len(cs)) for w, d, cs in batch])
        for work, doc, _ in batch:
            (report.added if doc.doc_id in work.new_ids else report.updated).append(doc.doc_id)
        report.chunks_embedded += len(chunks)
        return [(c.chunk_id, c.doc_id, c.text) for c in chunks]

    def _discard_new(
        self, batch: Sequence[tuple[_SourceWork, SourceDocument, list[TextChunk]]]
    ) -> None:
        """After a failed batch, remove what its new documents may have left in the stores.

        Changed documents stay ``pending`` and are redone by the next run.
        """
        new = [doc.doc_id for work, doc, _ in batch if doc.doc_id in work.new_ids]
        try:
            self.remove_documents(new)
        except LlamaKBError as e:
            logger.warning("cannot clean up a failed batch (%s); run `llama-kb doctor --repair`", e)

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

    def _finish_interrupted_removals(self, report: IngestReport) -> None:
        """Remove ``pending`` documents whose local source file is gone (a killed prune or
        removal); pending documents of existing files are redone by :meth:`_plan`."""
        gone = {p for p in self.manifest.pending_sources() if _local_file_gone(p)}
        for path in sorted(gone):
            doc_ids = [d.doc_id for d in self.manifest.documents(path)]
            self.remove_documents(doc_ids)
            self.manifest.delete_source(path)
            report.removed.extend(doc_ids)

    def _prune(self, report: IngestReport) -> None:
        for source in self.manifest.sources():
            if not Path(source.path).exists():
                gone = [d.doc_id for d in self.manifest.documents(source.path)]
                self.remove_documents(gone)
                self.manifest.delete_source(source.path)
                report.removed.extend(gone)

    def remove_documents(self, doc_ids: Sequence[str]) -> None:
        """Delete documents everywhere: vectors, chunk and document nodes, manifest.

        A document node that other documents still link to stays as a placeholder.
        """
        if not doc_ids:
            return
        self.manifest.mark_removing(doc_ids)
        self._delete_content(doc_ids)
        linked = self.graph.nodes_with_incoming([gm.doc_node_id(d) for d in doc_ids])
        self.graph.delete(
            ids=[gm.doc_node_id(d) for d in doc_ids if gm.doc_node_id(d) not in linked]
        )
        self.graph.upsert_nodes(
            [gm.placeholder_document_node(d) for d in doc_ids if gm.doc_node_id(d) in linked]
        )
        for label in (gm.ENTITY, gm.SECTION):
            self.graph.delete_orphan_entities(label=label)
        self.manifest.delete_documents(doc_ids)

    # -- linking ----------------------------------------------------------------------

    def _link(
        self,
        written: Sequence[tuple[str, str, str]],
        new_doc_ids: Sequence[str],
        relink_all: bool = False,
    ) -> None:
        """Link new chunks to every known name, and older chunks to names of new documents.

        With ``relink_all`` (an earlier run died before linking) every chunk is matched
        against every name.
        """
        names = self.graph.named_nodes(labels=(gm.DOCUMENT, gm.ENTITY))
        if relink_all:
            written = [
                (chunk_id, str(meta.get("doc_id", "")), text)
                for chunk_id, text, meta in self.vectors.iter_chunks()
            ]
            new_names = names
        else:
            new_names = self.graph.named_nodes(ids=[gm.doc_node_id(d) for d in new_doc_ids])
        if not written:
            return
        matcher = NameMatcher().add_all((name, node_id) for node_id, name, _ in names)
        relations = mention_relations(written, matcher)
        written_ids = {chunk_id for chunk_id, _, _ in written}
        if new_names and not relink_all:
            fresh = NameMatcher().add_all((name, node_id) for node_id, name, _ in new_names)
            old_chunks = (
                (chunk_id, str(meta.get("doc_id", "")), text)
                for chunk_id, text, meta in self.vectors.iter_chunks()
                if chunk_id not in written_ids
            )
            relations.extend(mention_relations(old_chunks, fresh))
        self.graph.upsert_relations(relations)


def _extract_all(
    extractor: GraphExtractor, items: Sequence[tuple[SourceDocument, list[TextChunk]]]
) -> list[GraphFragment]:
    """Run ``extractor`` over a batch, through its ``extract_batch`` when it has one."""
    batched = getattr(extractor, "extract_batch", None)
    if callable(batched):
        return list(batched(items))
    return [extractor.extract(doc, chunks) for doc, chunks in items]


def _batches(
    works: Sequence[_SourceWork], chunking: ChunkingConfig
) -> Iterator[list[tuple[_SourceWork, SourceDocument, list[TextChunk]]]]:
    batch: list[tuple[_SourceWork, SourceDocument, list[TextChunk]]] = []
    size = 0
    for work in works:
        for doc in work.docs:
            chunks = chunk_document(doc, chunking.chunk_size, chunking.chunk_overlap)
            batch.append((work, doc, chunks))
            size += len(chunks)
            if size >= _BATCH_CHUNKS:
                yield batch
                batch, size = [], 0
    if batch:
        yield batch


def _local_file_gone(source_path: str) -> bool:
    """True for an absolute local path that no longer exists (never for URLs)."""
    path = Path(source_path)
    return path.is_absolute() and not path.exists()


def _document_hash(doc: SourceDocument) -> str:
    payload = json.dumps(
        [doc.title, doc.text, doc.metadata, list(doc.links)], sort_keys=True, default=str
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()
