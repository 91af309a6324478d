"""The LangChain face: :class:`UnifiedKBRetriever`, a ``BaseRetriever`` over a knowledge base."""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import run_in_executor
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import ConfigDict, Field, model_validator

from langchain_kb._tracing import reporting
from llama_kb.errors import DocumentError
from llama_kb.ingest.documents import to_source_documents
from llama_kb.integrations._options import FaceOptions, face_options
from llama_kb.retrieval.engine import ContextEngine
from llama_kb.retrieval.explain import explained_hits
from llama_kb.retrieval.payload import FusedContext

SearchType = Literal["similarity", "similarity_score_threshold"]

GRAPH_SOURCE = "llama-kb:knowledge-graph"
"""``metadata["source"]`` of the facts document (chunks carry their file or document id)."""

TOOL_DESCRIPTION = (
    "Search the knowledge base. Returns passages from documents and facts from the "
    "knowledge graph (entities and their relations). Input: a question or keywords."
)


class UnifiedKBRetriever(BaseRetriever):
    """Chunks and graph facts from a llama-kb knowledge base, as LangChain ``Document`` s.

    ``k`` bounds the passages (it is the core's ``top_k``): at most ``k`` chunk documents
    (``metadata["kind"] == "chunk"``). With ``include_facts=True``, one more document holds
    the facts (``kind == "facts"``, one fact per line with its evidence, the facts in
    ``metadata["facts"]``), at most ``max_facts`` of them (``k`` unless
    ``search_kwargs["max_facts"]`` says otherwise). ``min_score`` (``score_threshold``)
    filters passages and facts alike; every ``score`` is in [0, 1].

    Metadata follows the LangChain conventions: ``Document.id`` is the chunk id and
    ``metadata["source"]`` the file (or document id) it came from; llama-kb adds ``doc_id``,
    ``score``, ``ranks`` (per retriever) and ``route``.

    Options come, later winning, from the knowledge base's defaults, ``search_kwargs``,
    ``k`` and the call (``retriever.invoke(q, k=2, route="factual")``). Besides ``k`` they
    are ``route``, ``filter``/``filters``, ``score_threshold``/``min_score``, ``max_cost``,
    ``max_hops``, ``max_nodes``, ``max_facts``, ``include_structural``, ``strict``,
    ``explain`` (each chunk's ``metadata["explain"]`` then holds its score parts and ranks)
    and ``include_embedding``.
    Each run reports the core's stages as child runs (see :mod:`langchain_kb._tracing`).

    Example:
        >>> retriever = UnifiedKBRetriever(kb=kb, k=4)  # doctest: +SKIP
        >>> docs = retriever.invoke("How is the Graph Updater related to the pipeline?")
        >>> tool = retriever.as_tool()  # for an agent: labelled text in, Documents as artifact
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    kb: Any = None
    """A :class:`llama_kb.KnowledgeBase` (or pass ``engine``)."""
    engine: ContextEngine | None = None
    k: int = Field(default=4, gt=0)
    """Number of documents to return."""
    include_facts: bool = False
    """Append one ``kind == "facts"`` document after the ``k`` passages."""
    search_type: SearchType = "similarity"
    """``similarity`` (routed unified search) or ``similarity_score_threshold`` (also drops
    chunks under ``search_kwargs["score_threshold"]``). ``mmr`` is not offered: the
    fusion already diversifies through the graph."""
    search_kwargs: dict[str, Any] = Field(default_factory=dict)
    """Retrieval options, as in LangChain's ``VectorStoreRetriever``."""

    @model_validator(mode="before")
    @classmethod
    def _reject_mmr(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("search_type") == "mmr":
            raise ValueError(
                "search_type='mmr' is not supported; use 'similarity' (the unified search "
                "already mixes passages reached through the graph) or set search_kwargs route"
            )
        return data

    @model_validator(mode="after")
    def _resolve_engine(self) -> UnifiedKBRetriever:
        if self.engine is None:
            if self.kb is None:
                raise ValueError("pass kb=KnowledgeBase(...) or engine=...")
            self.engine = self.kb.engine
        if self.search_type == "similarity_score_threshold" and not {
            "score_threshold",
            "min_score",
        } & set(self.search_kwargs):
            raise ValueError("search_type='similarity_score_threshold' needs search_kwargs")
        self._options({})  # fail at construction, not at the first query
        return self

    @classmethod
    def from_llama_index(
        cls, vector_index: Any, graph_index: Any, **kwargs: Any
    ) -> UnifiedKBRetriever:
        """Wrap an existing LlamaIndex ``VectorStoreIndex`` (Chroma) and ``PropertyGraphIndex``."""
        from llama_kb.integrations.llamaindex import UnifiedContextRetriever

        inner = UnifiedContextRetriever.from_indexes(vector_index, graph_index)
        return cls(engine=inner.engine, **kwargs)

    def add_documents(self, documents: list[Document], **kwargs: Any) -> list[str]:
        """Ingest documents into the knowledge base (as a LangChain ``VectorStore`` does).

        Args:
            documents: LangChain documents; ids from ``ids=[...]``, else ``doc.id``, else a
                stable hash of the content.
            **kwargs: ``ids``.

        Returns:
            The document ids, in order.
        """
        docs = to_source_documents(documents, kwargs.get("ids"))
        report = self._kb().add_documents(docs)
        if report.failed:
            raise DocumentError(report.failed[0].source, report.failed[0].reason)
        return [d.doc_id for d in docs]

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool:
        """Delete documents (chunks, vectors and graph facts) by id; True when any existed."""
        return bool(self._kb().delete(list(ids or [])))

    async def aadd_documents(self, documents: list[Document], **kwargs: Any) -> list[str]:
        """Async :meth:`add_documents`: ingests in a worker thread, the loop keeps running."""
        return await run_in_executor(None, self.add_documents, documents, **kwargs)

    async def adelete(self, ids: list[str] | None = None, **kwargs: Any) -> bool:
        """Async :meth:`delete`, in a worker thread."""
        return await run_in_executor(None, self.delete, ids, **kwargs)

    def _kb(self) -> Any:
        if self.kb is None:
            raise ValueError("adding and deleting documents needs kb=KnowledgeBase(...)")
        return self.kb

    def _options(self, kwargs: dict[str, Any]) -> FaceOptions:
        assert self.engine is not None
        return face_options(self.engine.defaults, {"top_k": self.k}, self.search_kwargs, kwargs)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        assert self.engine is not None
        options = self._options(kwargs)
        with reporting(run_manager, query, options.kwargs) as report:
            context = self.engine.retrieve(query, **options.kwargs)
            report(context)
        return to_documents(context, options.top_k, self.include_facts)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        assert self.engine is not None
        options = self._options(kwargs)
        with reporting(run_manager, query, options.kwargs) as report:
            context = await self.engine.aretrieve(query, **options.kwargs)
            report(context)
        return to_documents(context, options.top_k, self.include_facts)

    def as_tool(  # type: ignore[override]
        self,
        args_schema: Any = None,
        *,
        name: str | None = None,
        description: str | None = None,
        arg_types: dict[str, type] | None = None,
    ) -> BaseTool:
        """A tool for agents: a ``query`` in, passages and facts as labelled text out.

        The retrieved documents ride along as the tool message's ``artifact``; callbacks and
        tags of the tool's run reach the retriever. With ``args_schema`` or ``arg_types``
        this is LangChain's generic ``Runnable.as_tool``.

        Example:
            >>> tool = retriever.as_tool(name="team_docs")  # doctest: +SKIP
            >>> agent = create_agent(model, tools=[tool])  # doctest: +SKIP
        """
        if args_schema is not None or arg_types is not None:
            return super().as_tool(
                args_schema, name=name, description=description, arg_types=arg_types
            )

        def search(query: str, config: RunnableConfig) -> tuple[str, list[Document]]:
            documents = self.invoke(query, config=config)
            return format_documents(documents), documents

        async def asearch(query: str, config: RunnableConfig) -> tuple[str, list[Document]]:
            documents = await self.ainvoke(query, config=config)
            return format_documents(documents), documents

        return StructuredTool.from_function(
            func=search,
            coroutine=asearch,
            name=name or "knowledge_base",
            description=description or TOOL_DESCRIPTION,
            response_format="content_and_artifact",
        )


def to_documents(context: FusedContext, k: int, include_facts: bool = False) -> list[Document]:
    """At most ``k`` passage documents, then one facts document if asked (see the retriever)."""
    route = context.route.value
    with_facts = include_facts and bool(context.structured_facts)
    chunks = context.unstructured[:k]
    explained = explained_hits(context)
    documents = [
        Document(
            id=hit.chunk_id,
            page_content=hit.text,
            metadata={
                **hit.metadata,
                "source": hit.metadata.get("source_path") or hit.doc_id,
                "kind": "chunk",
                "doc_id": hit.doc_id,
                "score": hit.score,
                "ranks": dict(hit.ranks),
                "route": route,
                **({"explain": explained[hit.chunk_id]} if hit.chunk_id in explained else {}),
            },
        )
        for hit in chunks
    ]
    if with_facts:
        facts = context.structured_facts
        content = "\n".join(f.render() for f in facts)
        documents.append(
            Document(
                id="facts:" + hashlib.sha1(content.encode()).hexdigest()[:20],
                page_content=content,
                metadata={
                    "source": GRAPH_SOURCE,
                    "kind": "facts",
                    "facts": [f.to_dict() for f in facts],
                    "entities": list(context.entities),
                    "route": route,
                    "score": max(f.score for f in facts),
                },
            )
        )
    return documents


def format_documents(documents: list[Document]) -> str:
    """Documents from :class:`UnifiedKBRetriever` as prompt text, passages and facts labelled.

    Handy in LCEL chains: ``{"context": retriever | format_documents, ...}``.
    """
    passages = [d for d in documents if d.metadata.get("kind") != "facts"]
    facts = [d for d in documents if d.metadata.get("kind") == "facts"]
    parts = [
        f"[{i}] ({d.metadata.get('title') or d.metadata.get('source', '')})\n{d.page_content}"
        for i, d in enumerate(passages, 1)
    ]
    text = "Passages:\n\n" + ("\n\n".join(parts) or "(none)")
    if facts:
        text += "\n\nFacts from the knowledge graph:\n" + "\n".join(d.page_content for d in facts)
    return text
