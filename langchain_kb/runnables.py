"""Runnables that put llama-kb context into LangChain prompts."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import Runnable, RunnableLambda

from llama_kb.retrieval.payload import FusedContext


def fused_context_runnable(kb: Any, question_key: str = "question", **options: Any) -> Runnable:
    """A runnable mapping a question to prompt variables filled from the knowledge base.

    Input: a string, or a dict holding ``question_key``. Output: the input's keys plus
    ``context`` (both kinds, labelled), ``passages`` (chunks only), ``facts`` (facts only),
    ``route`` and ``fused`` (``FusedContext.to_dict()``), ready for a ``ChatPromptTemplate``.

    Args:
        kb: A :class:`llama_kb.KnowledgeBase` (or anything with ``retrieve``/``aretrieve``).
        question_key: Key of the question in dict inputs.
        **options: Retrieval options (``top_k``, ``route``, ``filters``, ...).
    """

    def split(value: Any) -> tuple[str, dict[str, Any]]:
        if isinstance(value, str):
            return value, {question_key: value}
        if isinstance(value, dict) and isinstance(value.get(question_key), str):
            return value[question_key], dict(value)
        raise TypeError(f"expected a string or a dict with a {question_key!r} string")

    def fill(context: FusedContext, base: dict[str, Any]) -> dict[str, Any]:
        rendered = context.render()
        passages, _, facts = rendered.partition("\n\n## ")
        return {
            **base,
            "context": rendered,
            "passages": passages,
            "facts": "## " + facts,
            "route": context.route.value,
            "fused": context.to_dict(),
        }

    def invoke(value: Any) -> dict[str, Any]:
        question, base = split(value)
        return fill(kb.retrieve(question, **options), base)

    async def ainvoke(value: Any) -> dict[str, Any]:
        question, base = split(value)
        return fill(await kb.aretrieve(question, **options), base)

    return RunnableLambda(invoke, afunc=ainvoke, name="llama_kb_context")
