"""The knowledge base: one directory, a vector store, a graph store, and ingestion."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from llama_index.core.base.embeddings.base import BaseEmbedding

from llama_kb.access import Access, Principal, access_key
from llama_kb.config import KBConfig
from llama_kb.embeddings import embedding_fingerprint, load_in_background, resolve_embedding
from llama_kb.ingest.documents import to_source_documents
from llama_kb.ingest.extractors import GraphExtractor, default_extractors
from llama_kb.ingest.lifecycle import StoredDocument, rebuild, stored_documents
from llama_kb.ingest.lock import write_lock
from llama_kb.ingest.manifest import Manifest
from llama_kb.ingest.pipeline import IngestionPipeline
from llama_kb.ingest.repair import OrphanReport, find_orphans
from llama_kb.ingest.repair import repair as repair_orphans
from llama_kb.ingest.sources import FilesAdapter
from llama_kb.kb_directory import open_stores, recorded_model, settle_directory
from llama_kb.knowledge import (
    KnowledgeProvider,
    LoadReport,
    RetrievalResult,
    load_knowledge,
    retrieve_knowledge,
)
from llama_kb.knowledge.repair import with_knowledge
from llama_kb.knowledge.retrieval import piece_search
from llama_kb.knowledge.store import KnowledgeStore, has_pieces_collection
from llama_kb.memory import RememberResult, remember
from llama_kb.retrieval.classifier import QueryClassifier
from llama_kb.retrieval.engine import ContextEngine
from llama_kb.retrieval.explain import Explanation
from llama_kb.retrieval.options import resolve_options, validate_query
from llama_kb.retrieval.payload import FusedContext
from llama_kb.retrieval.rerank import Reranker
from llama_kb.stores.chroma_vector import ChromaChunkStore
from llama_kb.stores.graph import KBGraphStore
from llama_kb.stores.phrase_vectors import open_phrase_vectors
from llama_kb.types import IngestReport, SearchHit

if TYPE_CHECKING:  # the LlamaIndex face sits above the facade; imported only when asked for
    from llama_kb.integrations.llamaindex import UnifiedContextRetriever, UnifiedQueryEngine

logger = logging.getLogger(__name__)


class KnowledgeBase:
    """A knowledge base directory with its stores; use :meth:`open` to get one.

    Example:
        >>> with KnowledgeBase.open("./my_kb") as kb:  # doctest: +SKIP
        ...     kb.ingest(["docs/"])
        ...     hits = kb.search("how do I configure retries?")
    """

    def __init__(
        self,
        config: KBConfig,
        embedding: BaseEmbedding,
        vectors: ChromaChunkStore,
        graph: KBGraphStore,
        manifest: Manifest,
        extractors: Sequence[GraphExtractor],
        reranker: Reranker | None = None,
    ) -> None:
        self.config = config
        self.embedding = embedding
        self.vectors = vectors
        self.graph = graph
        self.manifest = manifest
        fingerprint = json.dumps(embedding_fingerprint(embedding), sort_keys=True)
        self._phrases = open_phrase_vectors(config.path.expanduser(), fingerprint)
        self.engine = ContextEngine(
            vectors, graph, embedding, defaults=config.retrieval, ranking=config.ranking,
            cache_size=config.cache_size, require_principal=config.access.require_principal,
            reranker=reranker, phrases=self._phrases,
        )  # fmt: skip
        self._pipeline = IngestionPipeline(
            manifest, vectors, graph, embedding, config.chunking, extractors,
            limits=config.limits, secrets=config.secrets, search_index=self.engine.search_index,
            phrases=self._phrases,
        )  # fmt: skip
        self._knowledge: KnowledgeStore | None = None
        if has_pieces_collection(vectors, config.collection):  # pieces join kb.retrieve
            self.engine.knowledge_search = piece_search(self.knowledge)
        self._closed = False

    # -- opening ----------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | Path | None = None,
        *,
        config: KBConfig | None = None,
        embedding: Any = None,
        extractors: Sequence[GraphExtractor] | None = None,
        create: bool = True,
        reranker: Reranker | None = None,
        warm_up: bool = True,
    ) -> KnowledgeBase:
        """Create or reopen the knowledge base at ``path`` (or ``config.path``). A bundled
        embedding model loads in a thread meanwhile, and the knowledge base is returned once
        it is loaded and has answered one internal query, so the first query waits for
        neither (:func:`~llama_kb.embeddings.load_in_background`,
        :meth:`~llama_kb.retrieval.engine.ContextEngine.warm_up`).

        Args:
            path: Knowledge base directory; overrides ``config.path``.
            config: Settings; default: embedded stores with default chunking.
            embedding: A LlamaIndex ``BaseEmbedding`` or LangChain ``Embeddings``;
                default: the bundled model the knowledge base was built with, else
                :data:`~llama_kb.embeddings.DEFAULT_MODEL_NAME`.
            extractors: Graph extractors; default: headings and links, the structure of
                source code, typed facts from sentences (spaCy) and records (no LLM).
            create: Create the directory when missing; with ``False`` a missing
                knowledge base raises :class:`KnowledgeBaseError`.
            reranker: Reorders the best fused passages of every query
                (:mod:`llama_kb.retrieval.rerank`); default none.
            warm_up: Answer one internal query before returning (tens of ms; ``False`` for
                a process that asks one question and exits).

        Raises:
            KnowledgeBaseError: The directory is not a knowledge base, or was built with
                an embedding of another dimension.
            CorruptStoreError: A store file (manifest, embedded Chroma, graph database) is
                damaged; nothing is written to it.
        """
        config = config or KBConfig()
        if path is not None:
            config = config.model_copy(update={"path": Path(path)})
        root = config.path.expanduser()
        embed = resolve_embedding(embedding, recorded=recorded_model(root))
        loading = load_in_background(embed)
        config, meta, fresh = settle_directory(config, root, embed, create)
        vectors, graph, manifest = open_stores(config, root, meta["id"], fresh)
        chosen = default_extractors() if extractors is None else list(extractors)
        kb = cls(config, embed, vectors, graph, manifest, chosen, reranker)
        if loading is not None:
            loading.join()
        if warm_up:
            kb.engine.warm_up()
        return kb

    @classmethod
    def from_env(cls, path: str | Path | None = None, **kwargs: Any) -> KnowledgeBase:
        """Open with servers taken from the environment (see :meth:`KBConfig.from_env`)."""
        return cls.open(config=KBConfig.from_env(path), **kwargs)

    def close(self) -> None:
        """Release the stores; the knowledge base stays on disk."""
        if self._closed:
            return
        self._closed = True
        if self._knowledge is not None:
            self._knowledge.close()
        self.manifest.close()
        self.graph.close()
        if self._phrases is not None:
            self._phrases.close()

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"KnowledgeBase(path={str(self.config.path)!r})"

    # -- ingestion --------------------------------------------------------------------

    def ingest(
        self,
        paths: str | Path | FilesAdapter | Sequence[str | Path],
        *,
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        prune: bool = False,
        show_progress: bool = False,
        root: str | Path | None = None,
        access: Access | Mapping[str, Any] | str | None = None,
    ) -> IngestReport:
        """Add, update or (with ``prune``) remove documents; unchanged files cost nothing.

        Args:
            paths: Files and/or directories (searched recursively), or a source
                (:class:`~llama_kb.ingest.sources.FilesAdapter`, e.g. ``FsspecFiles``).
            include: Glob patterns a file must match (relative to its directory argument).
            exclude: Glob patterns that skip a file.
            prune: Also delete documents whose source file no longer exists (for a source or
                a ``root``: is no longer listed under it).
            show_progress: Show a progress bar.
            root: Key documents by their path relative to this directory, so the same tree
                copied or moved elsewhere keeps its ids (copies with the same content are
                recognised by hash and not stored twice). Default: absolute paths.
            access: Who may read documents that do not say it themselves (an
                :class:`~llama_kb.access.Access`, a key such as ``"org:acme"`` or
                ``"user:alice"``, or seed 001's ``{"level": ..., "orgId": ...}``); default
                ``config.access.default``. A document's own ``access`` / ``permissions``
                (front matter, a JSONL field) wins.

        Returns:
            What was added, updated, unchanged, removed, and what failed (with reasons).

        Raises:
            ConfigurationError: ``access`` is malformed.
        """
        key = self._access_key(access)
        with write_lock(self.config.path.expanduser()):
            if isinstance(paths, FilesAdapter):
                return self._pipeline.run_source(
                    paths, prune=prune, show_progress=show_progress, access=key
                )
            if isinstance(paths, str | Path):
                paths = [paths]
            return self._pipeline.run(
                paths,
                include=include,
                exclude=exclude,
                prune=prune,
                show_progress=show_progress,
                root=root,
                access=key,
            )

    def _access_key(self, access: Access | Mapping[str, Any] | str | None) -> str:
        return access_key(self.config.access.default if access is None else access)

    def add_documents(
        self,
        documents: Sequence[Any],
        *,
        ids: Sequence[str] | None = None,
        access: Access | Mapping[str, Any] | str | None = None,
    ) -> IngestReport:
        """Ingest in-memory documents through the same incremental pipeline as files.

        Args:
            documents: LlamaIndex ``Document`` / ``TextNode``, LangChain ``Document``, ``str``
                (see :mod:`llama_kb.ingest.documents` for how ids and metadata are taken).
            ids: Optional ids, one per document.
            access: Who may read them, as for :meth:`ingest`.

        Returns:
            The report; unchanged documents (same id and content) are not embedded again.
        """
        with write_lock(self.config.path.expanduser()):
            return self._pipeline.add_documents(
                to_source_documents(documents, ids), access=self._access_key(access)
            )

    def delete(self, ids: Sequence[str]) -> list[str]:
        """Delete documents by id, or by LlamaIndex ``ref_doc_id``; returns the ids deleted.

        Vectors, chunk and document nodes and the graph facts drawn from them go; a later
        ``ingest`` or ``add_documents`` of the same content adds them again.
        """
        with write_lock(self.config.path.expanduser()):
            return self._pipeline.delete(ids)

    def remove(self, doc_ids: Sequence[str]) -> list[str]:
        """Delete documents by id; returns the ids that existed (see :meth:`delete`)."""
        with write_lock(self.config.path.expanduser()):
            known = list(self.manifest.documents_by_id(doc_ids))
            self._pipeline.remove_documents(known)
        return known

    def documents(self) -> list[StoredDocument]:
        """What is stored: id, source, location, hash, chunks, access, ingested at."""
        return stored_documents(self._pipeline)

    def rebuild(
        self, sources: Sequence[FilesAdapter] = (), *, show_progress: bool = False
    ) -> IngestReport:
        """Re-derive chunks, graph and indexes from the stored sources (after a chunking or
        extractor change); remote sources must be passed in ``sources``.

        Crash-safe: a rebuild killed half-way is completed by the next :meth:`ingest` or
        :meth:`rebuild` (see :mod:`llama_kb.ingest.lifecycle`).
        """
        with write_lock(self.config.path.expanduser()):
            return rebuild(self._pipeline, sources, show_progress=show_progress)

    def repair(self, dry_run: bool = False) -> OrphanReport:
        """Find (and unless ``dry_run`` remove) orphans: see :mod:`llama_kb.ingest.repair`
        (documents) and :mod:`llama_kb.knowledge.repair` (pieces and piece links).

        Sources of unfinished or incomplete documents are forgotten, so the next
        :meth:`ingest` reads them again.
        """
        with write_lock(self.config.path.expanduser()):
            if dry_run:
                report = find_orphans(self.manifest, self.vectors, self.graph)
            else:
                report = repair_orphans(
                    self.manifest, self.vectors, self.graph, self._pipeline.remove_documents
                )
            return with_knowledge(report, self.knowledge, repair=not dry_run)

    # -- queries ----------------------------------------------------------------------

    def search(
        self,
        query: str,
        top_k: int | None = None,
        filters: dict[str, Any] | None = None,
        principal: Principal | Mapping[str, Any] | str | None = None,
    ) -> list[SearchHit]:
        """Plain dense retrieval: the ``top_k`` chunks closest to ``query`` that
        ``principal`` may read (default anonymous: public chunks), best first.

        Raises:
            QueryError: Invalid query or options, a malformed principal, or none when the
                knowledge base requires one.
        """
        query = validate_query(query)
        options = resolve_options(self.config.retrieval, top_k=top_k, filters=filters)
        access = self.engine.access_of(principal)
        vector = self.embedding.get_query_embedding(query)
        return self.vectors.query(vector, options.top_k, options.filters, access)

    def retrieve(self, query: str, **options: Any) -> FusedContext:
        """Unified retrieval: chunks and graph facts, routed and fused.

        Args:
            query: The question or keywords.
            **options: ``top_k``, ``min_score``, ``filters``, ``route``, ``max_cost``,
                ``max_hops``, ``max_nodes``, ``max_facts``, ``strict``
                (see :meth:`ContextEngine.retrieve`).
        """
        return self.engine.retrieve(query, **options)

    def retrieve_many(self, queries: Sequence[str], **options: Any) -> list[FusedContext]:
        """:meth:`retrieve` for several queries, their embeddings computed in one batch."""
        return self.engine.retrieve_many(queries, **options)

    async def aretrieve(self, query: str, **options: Any) -> FusedContext:
        """Async :meth:`retrieve`."""
        return await self.engine.aretrieve(query, **options)

    def explain(self, query: str, **options: Any) -> Explanation:
        """The debug view of :meth:`retrieve`: every candidate's dense and lexical score and
        rank, graph contribution, fused score (the sum of its parts), final rank, and why it
        was dropped (``min_score``, ``top_k``, ``filtered``). ``.table()`` renders it.
        """
        return Explanation.from_context(self.engine.retrieve(query, **{**options, "explain": True}))

    def set_classifier(self, classifier: QueryClassifier) -> None:
        """Route queries with ``classifier`` (e.g. ``LLMClassifier(llm)``)."""
        self.engine.classifier = classifier

    def as_retriever(self, include_facts: bool = True, **options: Any) -> UnifiedContextRetriever:
        """A LlamaIndex retriever over this knowledge base (options become its defaults)."""
        # Deferred, as LlamaIndex's own ``as_retriever``: the core loads without its faces.
        from llama_kb.integrations.llamaindex import UnifiedContextRetriever

        return UnifiedContextRetriever(self.engine, include_facts=include_facts, kb=self, **options)

    def as_query_engine(
        self, llm: Any = None, streaming: bool = False, **options: Any
    ) -> UnifiedQueryEngine:
        """A LlamaIndex query engine (``llm`` or ``Settings.llm``; without an LLM it returns
        the rendered context); ``options`` as for :meth:`as_retriever`."""
        from llama_kb.integrations.llamaindex import UnifiedQueryEngine

        retriever = self.as_retriever(**options)
        return UnifiedQueryEngine(retriever=retriever, llm=llm, streaming=streaming)

    # -- three-layer knowledge (seed 000) ---------------------------------------------

    @property
    def knowledge(self) -> KnowledgeStore:
        """The three knowledge layers (metadata, pieces, graph) over this base's stores."""
        if self._knowledge is None:
            self._knowledge = KnowledgeStore(
                self.config.path,
                self.vectors,
                self.graph,
                self.embedding,
                self.config.collection,
                self.config.retrieval,
            )
            self.engine.knowledge_search = piece_search(self._knowledge)
        return self._knowledge

    def load_knowledge(self, source: str | Path | Mapping[str, Any]) -> LoadReport:
        """Load entity metadata, knowledge pieces and graph from a JSON file or a dict.

        Invalid items are skipped and reported; loading the same data twice changes nothing
        (see :func:`llama_kb.knowledge.load_knowledge`).
        """
        with write_lock(self.config.path.expanduser()):
            return load_knowledge(self, source, secrets=self.config.secrets.knowledge)

    def remember(
        self,
        conversation: Sequence[Any],
        principal: Principal | str | None = None,
        llm: Any = None,
        **options: Any,
    ) -> RememberResult:
        """Extract knowledge from a conversation with ``llm`` and store it as pieces scoped by
        level and ``principal``, deduplicated within each scope, with an audit trail.

        ``options``: ``conversation_id``, ``threshold`` (default 0.8), ``max_retries``
        (see :func:`llama_kb.memory.remember`).
        """
        with write_lock(self.config.path.expanduser()):
            return remember(self.knowledge, conversation, principal=principal, llm=llm, **options)

    def retrieve_knowledge(
        self,
        query: str,
        entity_id: str | None = None,
        top_k: int | None = None,
        graph_traversal_depth: int = 2,
        **filters: Any,
    ) -> RetrievalResult:
        """Metadata, pieces and graph context for ``query`` as seen by ``entity_id``.

        ``filters``: ``knowledge_types``, ``info_types``, ``tags``, ``principal`` (who asks).
        """
        return retrieve_knowledge(self, query, entity_id, top_k, graph_traversal_depth, **filters)

    def knowledge_provider(self, entity_id: str | None = None, **options: Any) -> KnowledgeProvider:
        """A ``query -> {info_type: text}`` callable (see :class:`KnowledgeProvider`)."""
        return KnowledgeProvider(self, entity_id=entity_id, **options)

    def stats(self) -> dict[str, Any]:
        """Counts of sources, documents, chunks, graph nodes and relations."""
        counts = self.manifest.counts()
        return {
            "path": str(self.config.path),
            **counts,
            "vectors": self.vectors.count(),
            "graph_nodes": self.graph.count_nodes(),
            "graph_relations": self.graph.count_relations(),
            "entities": self.graph.count_nodes("entity"),
            "embedding": self.embedding.model_name,
        }
