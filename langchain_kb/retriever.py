"""The LangChain face: :class:`UnifiedKBRetriever`, a ``BaseRetriever`` over a knowledge base."""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field, model_validator

from llama_kb.retrieval.engine import ContextEngine
from llama_kb.retrieval.payload import FusedContext


class UnifiedKBRetriever(BaseRetriever):
    """Chunks and graph facts from a llama-kb knowledge base, as LangChain ``Document`` s.

    ``k`` bounds the passages (it is the core's ``top_k``): at most ``k`` chunk documents
    (``metadata["kind"] == "chunk"``, with ``doc_id``, ``score``, ``ranks``, ``route``).
    With ``include_facts=True``, one more document holds the facts (``kind == "facts"``,
    one fact per line with its evidence, the facts in ``metadata["facts"]``), at most
    ``max_facts`` of them (``search_kwargs``). ``min_score`` filters passages and facts
    alike; every ``score`` is in [0, 1].

    Example:
        >>> retriever = UnifiedKBRetriever(kb=kb, k=4)  # doctest: +SKIP
        >>> docs = retriever.invoke("How is the Graph Updater related to the pipeline?")
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    kb: Any = None
    """A :class:`llama_kb.KnowledgeBase` (or pass ``engine``)."""
    engine: ContextEngine | None = None
    k: int = Field(default=4, gt=0)
    """Number of documents to return."""
    include_facts: bool = False
    """Append one ``kind == "facts"`` document after the ``k`` passages."""
    search_kwargs: dict[str, Any] = Field(default_factory=dict)
    """Other retrieval options: ``route``, ``filters``, ``min_score``, ``max_cost``, ..."""

    @model_validator(mode="after")
    def _resolve_engine(self) -> UnifiedKBRetriever:
        if self.engine is None:
            if self.kb is None:
                raise ValueError("pass kb=KnowledgeBase(...) or engine=...")
            self.engine = self.kb.engine
        return self

    @classmethod
    def from_llama_index(
        cls, vector_index: Any, graph_index: Any, **kwargs: Any
    ) -> UnifiedKBRetriever:
        """Wrap an existing LlamaIndex ``VectorStoreIndex`` (Chroma) and ``PropertyGraphIndex``."""
        from llama_kb.integrations.llamaindex import UnifiedContextRetriever

        inner = UnifiedContextRetriever.from_indexes(vector_index, graph_index)
        return cls(engine=inner.engine, **kwargs)

    def _options(self, kwargs: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        k = int(kwargs.pop("k", self.k))
        return k, {**self.search_kwargs, **kwargs, "top_k": k}

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        assert self.engine is not None
        k, options = self._options(kwargs)
        return to_documents(self.engine.retrieve(query, **options), k, self.include_facts)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        assert self.engine is not None
        k, options = self._options(kwargs)
        context = await self.engine.aretrieve(query, **options)
        return to_documents(context, k, self.include_facts)


def to_documents(context: FusedContext, k: int, include_facts: bool = False) -> list[Document]:
    """At most ``k`` passage documents, then one facts document if asked (see the retriever)."""
    route = context.route.value
    with_facts = include_facts and bool(context.structured_facts)
    chunks = context.unstructured[:k]
    documents = [
        Document(
            id=hit.chunk_id,
            page_content=hit.text,
            metadata={
                **hit.metadata,
                "kind": "chunk",
                "doc_id": hit.doc_id,
                "score": hit.score,
                "ranks": dict(hit.ranks),
                "route": route,
            },
        )
        for hit in chunks
    ]
    if with_facts:
        documents.append(
            Document(
                page_content="\n".join(f.render() for f in context.structured_facts),
                metadata={
                    "kind": "facts",
                    "facts": [f.to_dict() for f in context.structured_facts],
                    "entities": list(context.entities),
                    "route": route,
                    "score": max(f.score for f in context.structured_facts),
                },
            )
        )
    return documents
