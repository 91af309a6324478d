"""The LlamaIndex face: :class:`UnifiedContextRetriever` (a ``BaseRetriever``) and
:class:`UnifiedQueryEngine` (a query engine), thin converters over the core engine.

They follow LlamaIndex's conventions: ``similarity_top_k``, ``Settings.llm`` /
``Settings.callback_manager`` when nothing is passed, ``streaming=True``, nodes whose
``ref_doc_id`` is the source document and whose metadata carries ``file_path``.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncGenerator, Generator, Sequence
from pathlib import Path
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.base.response.schema import (
    AsyncStreamingResponse,
    Response,
    StreamingResponse,
)
from llama_index.core.callbacks import CallbackManager
from llama_index.core.prompts import PromptTemplate
from llama_index.core.query_engine import CustomQueryEngine
from llama_index.core.schema import (
    BaseNode,
    Document,
    NodeRelationship,
    NodeWithScore,
    QueryBundle,
    RelatedNodeInfo,
    TextNode,
)
from llama_index.core.settings import Settings

from llama_kb.errors import DocumentError
from llama_kb.integrations._options import face_options
from llama_kb.retrieval.classifier import QueryClassifier
from llama_kb.retrieval.engine import ContextEngine
from llama_kb.retrieval.explain import explained_hits
from llama_kb.retrieval.payload import Fact, FusedContext
from llama_kb.stores.adapters import adapt_graph_store
from llama_kb.stores.chroma_vector import ChromaChunkStore
from llama_kb.types import SearchHit

CHUNK_KIND = "chunk"
FACT_KIND = "fact"
HIDDEN_FROM_LLM = ["kind", "ranks", "route", "start_char", "chunk_index", "content_hash"]
"""Chunk metadata that helps programs, not answers: kept out of the LLM's and embedder's view."""


class UnifiedContextRetriever(BaseRetriever):
    """Retrieves chunks *and* graph facts for a query, routed and fused.

    Chunks come back as ``NodeWithScore`` (``node.ref_doc_id`` is the document; metadata
    ``kind="chunk"``, ``doc_id``, ``file_path`` for files, ``ranks``, ``route``), at most
    ``similarity_top_k`` (= ``top_k``) of them, followed by at most ``max_facts`` facts
    (``kind="fact"``, ``subject``, ``predicate``, ``object``, ``evidence``, ``source_ids``,
    ``extractor``; ``max_facts`` defaults to ``similarity_top_k``). Every score is in
    [0, 1] and ``min_score`` filters chunks and facts alike.

    Args:
        engine: The retrieval engine (``kb.as_retriever()`` builds one for you).
        include_facts: Return facts as nodes after the chunks.
        callback_manager: LlamaIndex callbacks; default ``Settings.callback_manager``.
        kb: The knowledge base (set by ``kb.as_retriever()``); enables :meth:`insert`,
            :meth:`insert_nodes` and :meth:`delete_ref_doc`.
        **options: Default retrieval options (``similarity_top_k``/``top_k``, ``route``,
            ``filters``, ``max_facts``, ...), validated here.
    """

    def __init__(
        self,
        engine: ContextEngine,
        include_facts: bool = True,
        callback_manager: CallbackManager | None = None,
        kb: Any = None,
        **options: Any,
    ) -> None:
        super().__init__(callback_manager=callback_manager or Settings.callback_manager)
        self.engine = engine
        self.kb = kb
        self.include_facts = include_facts
        self.options = options
        face_options(engine.defaults, options)  # fail at construction, not at the first query

    @classmethod
    def from_indexes(
        cls,
        vector_index: Any,
        graph_index: Any,
        *,
        embed_model: Any = None,
        classifier: QueryClassifier | None = None,
        **options: Any,
    ) -> UnifiedContextRetriever:
        """Wrap an existing Chroma-backed ``VectorStoreIndex`` and a ``PropertyGraphIndex``.

        Nothing is re-ingested: chunks are read from the vector store, entities and
        ``MENTIONS`` relations from the graph store.

        Args:
            vector_index: A ``VectorStoreIndex`` over a ``ChromaVectorStore``.
            graph_index: A ``PropertyGraphIndex`` (any ``PropertyGraphStore``).
            embed_model: Query embedding; default: the vector index's own (which is
                ``Settings.embed_model`` when the index was built without one).
            classifier: Query classifier; default heuristic.
            **options: Default retrieval options.
        """
        from llama_index.vector_stores.chroma import ChromaVectorStore

        from llama_kb.embeddings import resolve_embedding

        store = vector_index.vector_store
        if not isinstance(store, ChromaVectorStore):
            raise TypeError(
                f"vector_index must be backed by a ChromaVectorStore, got {type(store).__name__}"
            )
        embedding = resolve_embedding(embed_model or vector_index._embed_model)
        graph = adapt_graph_store(graph_index.property_graph_store)
        engine = ContextEngine(ChromaChunkStore(store), graph, embedding, classifier)
        return cls(engine, **options)

    @property
    def similarity_top_k(self) -> int:
        """Passages per query (LlamaIndex's name for ``top_k``)."""
        return face_options(self.engine.defaults, self.options).top_k

    def _writable(self) -> Any:
        if self.kb is None:
            raise TypeError("this retriever wraps indexes; build it with kb.as_retriever()")
        return self.kb

    def insert(self, document: Document, **_: Any) -> None:
        """Ingest a LlamaIndex ``Document`` (as ``VectorStoreIndex.insert``)."""
        self.insert_nodes([document])

    def insert_nodes(self, nodes: Sequence[BaseNode], **_: Any) -> None:
        """Ingest nodes; nodes sharing a ``ref_doc_id`` are deleted together."""
        report = self._writable().add_documents(list(nodes))
        if report.failed:
            raise DocumentError(report.failed[0].source, report.failed[0].reason)

    def delete_ref_doc(self, ref_doc_id: str, delete_from_docstore: bool = False) -> None:
        """Delete a document (or every node of that ``ref_doc_id``) with its graph facts."""
        self._writable().delete([ref_doc_id])

    async def ainsert(self, document: Document, **_: Any) -> None:
        """Async :meth:`insert`: ingests in a worker thread, the loop keeps running."""
        await asyncio.to_thread(self.insert_nodes, [document])

    async def ainsert_nodes(self, nodes: Sequence[BaseNode], **_: Any) -> None:
        """Async :meth:`insert_nodes`, in a worker thread."""
        await asyncio.to_thread(self.insert_nodes, nodes)

    async def adelete_ref_doc(self, ref_doc_id: str, delete_from_docstore: bool = False) -> None:
        """Async :meth:`delete_ref_doc`, in a worker thread."""
        await asyncio.to_thread(self.delete_ref_doc, ref_doc_id)

    def retrieve_context(self, query: str, **options: Any) -> FusedContext:
        """The full :class:`FusedContext` (the retriever's defaults, then ``options``)."""
        return self.engine.retrieve(query, **self._kwargs(options))

    async def aretrieve_context(self, query: str, **options: Any) -> FusedContext:
        """Async :meth:`retrieve_context`."""
        return await self.engine.aretrieve(query, **self._kwargs(options))

    def _kwargs(self, options: dict[str, Any]) -> dict[str, Any]:
        return face_options(self.engine.defaults, self.options, options).kwargs

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self.to_nodes(self.retrieve_context(query_bundle.query_str))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self.to_nodes(await self.aretrieve_context(query_bundle.query_str))

    def to_nodes(self, context: FusedContext) -> list[NodeWithScore]:
        """Chunks then (optionally) facts as LlamaIndex nodes."""
        route = context.route.value
        explained = explained_hits(context)
        nodes = [
            _chunk_node(hit, route, explained.get(hit.chunk_id)) for hit in context.unstructured
        ]
        if self.include_facts:
            nodes.extend(_fact_node(fact, route) for fact in context.structured_facts)
        return nodes


def _chunk_node(hit: SearchHit, route: str, explain: dict[str, Any] | None = None) -> NodeWithScore:
    metadata = {**hit.metadata, "kind": CHUNK_KIND, "doc_id": hit.doc_id}
    path = hit.metadata.get("source_path")
    if path:  # the keys LlamaIndex's file readers set
        metadata.update(file_path=str(path), file_name=Path(str(path)).name)
    metadata.update(ranks=dict(hit.ranks), route=route)
    if explain is not None:
        metadata["explain"] = explain
    hidden = [*HIDDEN_FROM_LLM, "source_path", "explain"]
    node = TextNode(
        id_=hit.chunk_id,
        text=hit.text,
        metadata=metadata,
        relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=hit.doc_id)},
        excluded_llm_metadata_keys=hidden,
        excluded_embed_metadata_keys=hidden,
    )
    return NodeWithScore(node=node, score=hit.score)


def _fact_node(fact: Fact, route: str) -> NodeWithScore:
    key = f"{fact.subject_id}\x00{fact.predicate}\x00{fact.object_id}".encode()
    node = TextNode(
        id_="fact:" + hashlib.sha1(key).hexdigest()[:20],
        text=f"{fact.subject} {fact.predicate} {fact.object}",
        metadata={
            "kind": FACT_KIND,
            "subject": fact.subject,
            "predicate": fact.predicate,
            "object": fact.object,
            "evidence": fact.evidence,
            "source_ids": list(fact.source_ids),
            "extractor": fact.extractor,
            "path_cost": fact.path_cost,
            "route": route,
        },
        excluded_llm_metadata_keys=["kind", "source_ids", "extractor", "path_cost", "route"],
    )
    return NodeWithScore(node=node, score=fact.score)


DEFAULT_ANSWER_PROMPT = PromptTemplate(
    "Answer the question using only the context below. The context has two parts: passages "
    "that describe the topic, and specific facts and relationships from a knowledge graph.\n\n"
    "{context}\n\n"
    "Question: {query}\n"
    "Answer: "
)


class UnifiedQueryEngine(CustomQueryEngine):
    """Retrieves with a :class:`UnifiedContextRetriever` and answers with an LLM.

    The LLM is ``llm``, else ``Settings.llm`` when one was set; without either the response
    text is the rendered context itself, so the engine stays useful offline.
    ``source_nodes`` always holds the retrieved chunks and facts, and ``metadata`` the route
    and trace. With ``streaming=True`` ``query`` returns a ``StreamingResponse`` (``aquery``
    an ``AsyncStreamingResponse``) whose ``response_gen`` yields the answer as it comes.
    """

    retriever: UnifiedContextRetriever
    llm: Any = None
    prompt: PromptTemplate = DEFAULT_ANSWER_PROMPT
    streaming: bool = False

    def custom_query(self, query_str: str) -> Response | StreamingResponse:
        """Answer ``query_str``."""
        context = self.retriever.retrieve_context(query_str)
        nodes, meta, llm = self.retriever.to_nodes(context), _meta(context), self._llm()
        if self.streaming:
            tokens = self._stream(llm, context, query_str)
            return StreamingResponse(response_gen=tokens, source_nodes=nodes, metadata=meta)
        if llm is None:
            return Response(response=context.render(), source_nodes=nodes, metadata=meta)
        answer = llm.complete(self._prompt(context, query_str)).text
        return Response(response=answer, source_nodes=nodes, metadata=meta)

    async def acustom_query(self, query_str: str) -> Response | AsyncStreamingResponse:
        """Async :meth:`custom_query`."""
        context = await self.retriever.aretrieve_context(query_str)
        nodes, meta, llm = self.retriever.to_nodes(context), _meta(context), self._llm()
        if self.streaming:
            tokens = self._astream(llm, context, query_str)
            return AsyncStreamingResponse(response_gen=tokens, source_nodes=nodes, metadata=meta)
        if llm is None:
            return Response(response=context.render(), source_nodes=nodes, metadata=meta)
        answer = (await llm.acomplete(self._prompt(context, query_str))).text
        return Response(response=answer, source_nodes=nodes, metadata=meta)

    def _llm(self) -> Any:
        """``llm``, else the LLM set on ``Settings`` (never LlamaIndex's default lookup)."""
        return self.llm if self.llm is not None else Settings._llm

    def _prompt(self, context: FusedContext, query_str: str) -> str:
        return self.prompt.format(context=context.render(), query=query_str)

    def _stream(
        self, llm: Any, context: FusedContext, query_str: str
    ) -> Generator[str, None, None]:
        if llm is None:
            yield context.render()
            return
        for chunk in llm.stream_complete(self._prompt(context, query_str)):
            yield chunk.delta or ""

    async def _astream(
        self, llm: Any, context: FusedContext, query_str: str
    ) -> AsyncGenerator[str, None]:
        if llm is None:
            yield context.render()
            return
        async for chunk in await llm.astream_complete(self._prompt(context, query_str)):
            yield chunk.delta or ""


def _meta(context: FusedContext) -> dict[str, Any]:
    return {"route": context.route.value, "trace": context.trace}
