"""A LlamaIndex query engine that answers from labelled chunks and facts."""

from __future__ import annotations

from typing import Any

from llama_index.core.base.response.schema import Response
from llama_index.core.prompts import PromptTemplate
from llama_index.core.query_engine import CustomQueryEngine

from llama_kb.retriever import UnifiedContextRetriever

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
