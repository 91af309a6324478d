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

import hashlib
import json
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding
from tqdm.auto import tqdm

from llama_kb import graph_model as gm
from llama_kb.access import PUBLIC
from llama_kb.background import Pending
from llama_kb.config import ChunkingConfig, LimitsConfig, SecretsConfig
from llama_kb.errors import BackendUnavailable, EmbeddingError, LlamaKBError
from llama_kb.ingest._doc_codec import document_access, document_hash, document_json
from llama_kb.ingest.batch_graph import batch_graph
from llama_kb.ingest.chunker import Chunker, embedding_text
from llama_kb.ingest.documents import INLINE_PREFIX
from llama_kb.ingest.extractors import GraphExtractor, GraphFragment
from llama_kb.ingest.fact_names import drop_titled, newly_visible
from llama_kb.ingest.guards import use_limits
from llama_kb.ingest.guards.records import vector_problem
from llama_kb.ingest.linking import link_chunks
from llama_kb.ingest.manifest import Manifest, SourceRecord
from llama_kb.ingest.planning import Planner, SourceWork, read_by_another_pipeline
from llama_kb.ingest.sources.local_adapter import LocalFiles
from llama_kb.ingest.sources.protocol import FilesAdapter
from llama_kb.ingest.vector_reuse import StoredVectors, text_key
from llama_kb.stores.chroma_vector import ChromaChunkStore
from llama_kb.stores.graph import KBGraphStore
from llama_kb.stores.phrase_vectors import PhraseVectors
from llama_kb.stores.search import SearchIndex
from llama_kb.types import IngestFailure, IngestReport, SourceDocument, TextChunk

logger = logging.getLogger(__name__)

__all__ = ["INLINE_ORIGIN", "INLINE_PREFIX", "IngestionPipeline", "embedding_text"]

PIPELINE_VERSION = "3"
INLINE_ORIGIN = "inline"
"""The ``origin`` of sources grouping documents added in memory (keys ``inline:<ref id>``)."""
RELINK_FLAG = "relink_pending"
_BATCH_CHUNKS = 512


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
        search_index: The lookups linking uses (default: the graph store's own); the
            knowledge base passes its engine's, which server stores need.
        phrases: Where the relation phrases of new facts and the new names get their
            vectors, so that queries read them instead of embedding them.
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
        search_index: SearchIndex | None = None,
        phrases: PhraseVectors | None = None,
    ) -> None:
        index = search_index or getattr(graph, "search_index", None)
        if index is None:
            raise ValueError("a graph store without a search index needs search_index=")
        self.search_index: SearchIndex = index
        self.manifest = manifest
        self.vectors = vectors
        self.graph = graph
        self.embedding = embedding
        self.chunking = chunking
        self.chunker = Chunker(chunking, embedding)
        self.extractors = list(extractors)
        self.limits = limits or LimitsConfig()
        self.secrets = secrets or SecretsConfig()
        self._fingerprint = hashlib.sha256(
            json.dumps(
                [PIPELINE_VERSION, chunking.model_dump(), [type(e).__name__ for e in extractors]]
            ).encode()
        ).hexdigest()[:16]
        self.planner = Planner(manifest, self._fingerprint, self.limits, self.secrets)
        self._new_names: set[tuple[str, str]] = set()
        """Names this run's facts made visible to an access key (older chunks link to them)."""
        self.stored_vectors = StoredVectors(vectors)
        self.phrases = phrases

    def run(
        self,
        paths: Sequence[str | Path],
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        prune: bool = False,
        show_progress: bool = False,
        root: str | Path | None = None,
        access: str = PUBLIC,
    ) -> IngestReport:
        """Ingest local ``paths`` (files or directories); see the module docstring.

        With ``root``, documents are keyed by their path relative to it (see
        :class:`~llama_kb.ingest.sources.local_adapter.LocalFiles`). ``access`` is the key
        of documents that do not set their own (:mod:`llama_kb.access`).
        """
        return self.run_source(
            LocalFiles(root, paths, include, exclude),
            prune=prune,
            show_progress=show_progress,
            access=access,
        )

    def run_source(
        self,
        source: FilesAdapter,
        prune: bool = False,
        show_progress: bool = False,
        access: str = PUBLIC,
    ) -> IngestReport:
        """Ingest every file a :class:`FilesAdapter` lists; ``prune`` drops unlisted ones."""
        with use_limits(self.limits):
            return self._run_source(source, prune, show_progress, access)

    def _run_source(
        self, source: FilesAdapter, prune: bool, show_progress: bool, access: str
    ) -> IngestReport:
        started = time.perf_counter()
        report = IngestReport()
        self._finish_interrupted_removals(report)
        try:
            infos = list(source.list())
        except OSError as e:
            report.failed.append(IngestFailure(source.root, f"cannot list: {e}"))
            return self._finish(report, started)
        report.failed.extend(getattr(source, "failures", ()))
        works = self.planner.plan(source, infos, report, access)
        listed = {i.key for i in infos}
        return (
            self._commit(
                works, report, started, show_progress, lambda: self._prune(source, listed, report)
            )
            if prune
            else self._commit(works, report, started, show_progress)
        )

    def add_documents(
        self,
        docs: Sequence[SourceDocument],
        show_progress: bool = False,
        access: str = PUBLIC,
    ) -> IngestReport:
        """Ingest documents given in memory; each ``source_path`` groups documents to delete
        together (``inline:<ref id>``). Unchanged documents cost a hash. Documents are
        validated and scanned for secrets first, as files are; ``access`` is the key of
        those that do not set their own."""
        with use_limits(self.limits):
            started = time.perf_counter()
            report = IngestReport()
            works = self._plan_inline(self.planner.screen(docs, report, access), report)
            return self._commit(works, report, started, show_progress)

    def _plan_inline(
        self, docs: Sequence[SourceDocument], report: IngestReport
    ) -> list[SourceWork]:
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
            known = self.manifest.source(source_path)
            rederive = read_by_another_pipeline(known, self._fingerprint)
            work = self.planner.compare(record, group, report, seen, rederive=rederive)
            work.vanished = []  # adding never removes a document's siblings
            works.append(work)
        self.manifest.put_inline([(d.doc_id, document_json(d)) for w in works for d in w.docs])
        return works

    def _commit(
        self,
        works: list[SourceWork],
        report: IngestReport,
        started: float,
        show_progress: bool,
        prune: Callable[[], None] | None = None,
    ) -> IngestReport:
        relink_all = self.manifest.flag(RELINK_FLAG)
        if any(w.docs for w in works):
            # set until linking completes: a run that dies before re-links everything next time
            self.manifest.set_flag(RELINK_FLAG, True)
        self._new_names.clear()
        written = self._write(works, report, show_progress)
        try:
            self._remove_vanished(works, report)
            if prune is not None:
                prune()
            unlinked = [d for w in works for d in w.unlinked]
            index = self.search_index
            names = drop_titled(index, self.graph, self._new_names)
            link_chunks(index, self.graph, self.vectors, written, unlinked, relink_all, names)
        except LlamaKBError as e:
            report.failed.append(IngestFailure("(linking)", f"{e}; the next run completes it"))
            return self._finish(report, started)
        self.manifest.set_flag(RELINK_FLAG, False)
        for work in works:
            if not work.failed:
                self.manifest.put_source(work.record)
                if work.moved_from is not None:
                    self.manifest.delete_source(work.moved_from)
        return self._finish(report, started)

    @staticmethod
    def _finish(report: IngestReport, started: float) -> IngestReport:
        report.seconds = time.perf_counter() - started
        logger.info("ingest finished: %s", report.summary())
        return report

    # -- writing ----------------------------------------------------------------------

    def _write(
        self, works: Sequence[SourceWork], report: IngestReport, show_progress: bool
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
        batch: Sequence[tuple[SourceWork, SourceDocument, list[TextChunk]]],
        report: IngestReport,
    ) -> list[tuple[str, str, str]]:
        docs = [
            (doc.doc_id, doc.source_path, doc.title, document_access(doc)) for _, doc, _ in batch
        ]
        self.manifest.mark_pending(docs)
        old = [doc.doc_id for work, doc, _ in batch if doc.doc_id not in work.new_ids]
        replaced = {id(w): w.vanished for w, _, _ in batch if w.moved_from is not None}
        stored = self.stored_vectors.read(old + [d for ids in replaced.values() for d in ids])
        if old:
            self._delete_content(old)
        chunks = [c for _, _, cs in batch for c in cs]
        report.chunks_over_window += self.chunker.over_window(chunks)
        items = [(doc, doc_chunks) for _, doc, doc_chunks in batch]
        embedded = Pending(
            self.stored_vectors.embed,
            self.embedding,
            [(text_key(c.metadata.get("title"), c.text), embedding_text(c)) for c in chunks],
            stored,
        )
        try:  # the extractors parse while the model embeds; nothing is stored before both end
            fragments = [_extract_all(extractor, items) for extractor in self.extractors]
        finally:
            vectors = embedded.result()
        problem = vector_problem(vectors, len(chunks))
        if problem:
            raise EmbeddingError(f"the embedding model returned {problem}; nothing was stored")
        self.vectors.add(chunks, vectors)
        graph = batch_graph(items, fragments)
        self._new_names.update(newly_visible(graph.extracted, graph.relations, self.search_index))
        self.graph.upsert_nodes(graph.owned + self._missing(graph.extracted, graph.owned))
        self.graph.upsert_relations(graph.relations)
        if self.phrases is not None:
            embed = self.embedding.get_text_embedding_batch
            self.phrases.ensure(gm.embedded_phrases([*graph.owned, *graph.extracted]), embed)
        self.manifest.mark_ready([(d.doc_id, w.hashes[d.doc_id], len(cs)) for w, d, cs in batch])
        for work, doc, _ in batch:
            (report.added if doc.doc_id in work.new_ids else report.updated).append(doc.doc_id)
        report.chunks_embedded += len(chunks)
        return [(c.chunk_id, c.doc_id, c.text) for c in chunks]

    def _discard_new(
        self, batch: Sequence[tuple[SourceWork, SourceDocument, list[TextChunk]]]
    ) -> None:
        """After a failed batch, remove what its new documents may have left in the stores.

        Changed documents stay ``pending`` and are redone by the next run.
        """
        new = [doc.doc_id for work, doc, _ in batch if doc.doc_id in work.new_ids]
        try:
            self.remove_documents(new)
        except LlamaKBError as e:
            logger.warning("cannot clean up a failed batch (%s); run `llama-kb doctor --repair`", e)

    def _missing(self, nodes: Sequence[Any], owned: Sequence[Any]) -> list[Any]:
        """Extracted nodes that do not exist yet, in the store or among the ``owned`` ones
        written with them (existing nodes keep their properties)."""
        taken = {n.id for n in owned}
        fresh = {n.id: n for n in nodes if n.id not in taken}
        existing = {node_id for node_id, _, _ in self.graph.named_nodes(ids=list(fresh))}
        return [n for node_id, n in fresh.items() if node_id not in existing]

    def _delete_content(self, doc_ids: Sequence[str]) -> None:
        """Delete chunks (vectors and graph) of documents, keeping their document nodes."""
        self.vectors.delete_documents(doc_ids)
        self.graph.delete_by_values("doc_id", doc_ids)

    # -- removing ---------------------------------------------------------------------

    def _remove_vanished(self, works: Sequence[SourceWork], report: IngestReport) -> None:
        for work in works:
            if work.vanished and not work.failed:
                self.remove_documents(work.vanished)
                report.removed.extend(work.vanished)

    def _finish_interrupted_removals(self, report: IngestReport) -> None:
        """Remove ``pending`` documents whose local source file is gone (a killed prune or
        removal); pending documents of existing files are redone by the planner."""
        for path in sorted(self.manifest.pending_sources()):
            record = self.manifest.source(path)
            if _local_file_gone(record.location if record and record.location else path):
                doc_ids = [d.doc_id for d in self.manifest.documents(path)]
                self.remove_documents(doc_ids)
                self.manifest.delete_source(path)
                report.removed.extend(doc_ids)

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

    def remove_documents(self, doc_ids: Sequence[str], keep_sources: bool = False) -> None:
        """Delete documents everywhere: vectors, chunk and document nodes, manifest.

        A document node that other documents still link to stays as a placeholder. The
        documents are marked ``pending`` first, so a killed removal is completed (or redone)
        by the next run. ``keep_sources`` (for a rebuild) keeps the source records and the
        stored text of documents added in memory.
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
        for label in (gm.ENTITY, gm.SECTION, gm.SYMBOL):
            self.graph.delete_orphan_entities(label=label)
        sources = {d.source_path for d in self.manifest.documents_by_id(doc_ids).values()}
        # one transaction: sources are read again next time ("remove, then re-ingest")
        self.manifest.delete_documents(doc_ids, () if keep_sources else sources, keep_sources)

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


def _extract_all(
    extractor: GraphExtractor, items: Sequence[tuple[SourceDocument, list[TextChunk]]]
) -> list[GraphFragment]:
    """Run ``extractor`` over a batch, through its ``extract_batch`` when it has one."""
    batched = getattr(extractor, "extract_batch", None)
    if callable(batched):
        return list(batched(items))
    return [extractor.extract(doc, chunks) for doc, chunks in items]


def _local_file_gone(source_path: str) -> bool:
    """True for an absolute local path that no longer exists (never for URLs)."""
    path = Path(source_path)
    return path.is_absolute() and not path.exists()
