"""The LlamaIndex face: :class:`UnifiedContextRetriever` (a ``BaseRetriever``) and
:class:`UnifiedQueryEngine` (a query engine), thin converters over the core engine."""

from __future__ import annotations

import hashlib
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.base.response.schema import Response
from llama_index.core.callbacks import CallbackManager
from llama_index.core.prompts import PromptTemplate
from llama_index.core.query_engine import CustomQueryEngine
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from llama_kb.retrieval.classifier import QueryClassifier
from llama_kb.retrieval.engine import ContextEngine
from llama_kb.retrieval.payload import Fact, FusedContext
from llama_kb.stores.adapters import adapt_graph_store
from llama_kb.stores.chroma_vector import ChromaChunkStore

CHUNK_KIND = "chunk"
FACT_KIND = "fact"


class UnifiedContextRetriever(BaseRetriever):
    """Retrieves chunks *and* graph facts for a query, routed and fused.

    Chunks come back as ``NodeWithScore`` (metadata ``kind="chunk"``, ``doc_id``,
    ``ranks``, ``route``), at most ``similarity_top_k`` (= ``top_k``) of them, followed by
    at most ``max_facts`` facts (``kind="fact"``, ``subject``, ``predicate``, ``object``,
    ``evidence``, ``source_ids``, ``extractor``). Every score is in [0, 1] and
    ``min_score`` filters chunks and facts alike.

    Args:
        engine: The retrieval engine (``kb.as_retriever()`` builds one for you).
        include_facts: Return facts as nodes after the chunks.
        callback_manager: LlamaIndex callbacks.
        **options: Default retrieval options (``top_k``, ``route``, ``filters``, ...).
    """

    def __init__(
        self,
        engine: ContextEngine,
        include_facts: bool = True,
        callback_manager: CallbackManager | None = None,
        **options: Any,
    ) -> None:
        super().__init__(callback_manager=callback_manager)
        self.engine = engine
        self.include_facts = include_facts
        self.options = options

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
            embed_model: Query embedding; default: the vector index's own.
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

    def retrieve_context(self, query: str, **options: Any) -> FusedContext:
        """The full :class:`FusedContext` (the retriever's defaults, then ``options``)."""
        return self.engine.retrieve(query, **{**self.options, **options})

    async def aretrieve_context(self, query: str, **options: Any) -> FusedContext:
        """Async :meth:`retrieve_context`."""
        return await self.engine.aretrieve(query, **{**self.options, **options})

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self.to_nodes(self.retrieve_context(query_bundle.query_str))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self.to_nodes(await self.aretrieve_context(query_bundle.query_str))

    def to_nodes(self, context: FusedContext) -> list[NodeWithScore]:
        """Chunks then (optionally) facts as LlamaIndex nodes."""
        route = context.route.value
        nodes = [
            NodeWithScore(
                node=TextNode(
                    id_=hit.chunk_id,
                    text=hit.text,
                    metadata={
                        **hit.metadata,
                        "kind": CHUNK_KIND,
                        "doc_id": hit.doc_id,
                        "ranks": dict(hit.ranks),
                        "route": route,
                    },
                    excluded_llm_metadata_keys=["ranks", "route", "kind"],
                    excluded_embed_metadata_keys=["ranks", "route", "kind"],
                ),
                score=hit.score,
            )
            for hit in context.unstructured
        ]
        if self.include_facts:
            nodes.extend(_fact_node(fact, route) for fact in context.structured_facts)
        return nodes


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

    Without an LLM the response text is the rendered context itself, so the engine stays
    useful offline; ``source_nodes`` always holds the retrieved chunks and facts.
    """

    retriever: UnifiedContextRetriever
    llm: Any = None
    prompt: PromptTemplate = DEFAULT_ANSWER_PROMPT

    def custom_query(self, query_str: str) -> Response:
        """Answer ``query_str``."""
        context = self.retriever.retrieve_context(query_str)
        nodes = self.retriever.to_nodes(context)
        if self.llm is None:
            return Response(response=context.render(), source_nodes=nodes, metadata=_meta(context))
        prompt = self.prompt.format(context=context.render(), query=query_str)
        answer = self.llm.complete(prompt).text
        return Response(response=answer, source_nodes=nodes, metadata=_meta(context))

    async def acustom_query(self, query_str: str) -> Response:
        """Async :meth:`custom_query`."""
        context = await self.retriever.aretrieve_context(query_str)
        nodes = self.retriever.to_nodes(context)
        if self.llm is None:
            return Response(response=context.render(), source_nodes=nodes, metadata=_meta(context))
        prompt = self.prompt.format(context=context.render(), query=query_str)
        answer = (await self.llm.acomplete(prompt)).text
        return Response(response=answer, source_nodes=nodes, metadata=_meta(context))


def _meta(context: Any) -> dict[str, Any]:
    return {"route": context.route.value, "trace": context.trace}
