"""Runnables that put llama-kb context into LangChain prompts."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import Runnable, RunnableLambda

from langchain_kb.retriever import to_documents
from llama_kb.integrations._options import face_options
from llama_kb.retrieval.payload import (
    STRUCTURED_HEADING,
    UNSTRUCTURED_HEADING,
    FusedContext,
)


def fused_context_runnable(kb: Any, question_key: str = "question", **options: Any) -> Runnable:
    """A runnable mapping a question to prompt variables filled from the knowledge base.

    Input: a string, or a dict holding ``question_key``. Output: the input's keys plus

    * ``passages``: the chunks only, as text (``## General description ...`` then ``[1] ...``);
    * ``facts``: the graph facts only, as text (``## Specific facts ...`` then ``- a --r--> b``);
    * ``context``: both, labelled (``FusedContext.render()``);
    * ``documents``: the chunks and facts as LangChain ``Document`` s (see
      :func:`~langchain_kb.retriever.to_documents`);
    * ``route`` and ``fused`` (``FusedContext.to_dict()``).

    Passages and facts are built from the fused payload's two lists, never by splitting
    text, so a passage holding a markdown heading stays a passage. The runnable is a
    ``RunnableLambda``: ``with_config``, tags and callbacks apply as to any runnable.

    Args:
        kb: A :class:`llama_kb.KnowledgeBase` (anything with ``engine``, ``retrieve`` and
            ``aretrieve``).
        question_key: Key of the question in dict inputs.
        **options: Retrieval options (``k``/``top_k``, ``search_kwargs``, ``route``,
            ``filters``, ...), validated now.
    """
    resolved = face_options(kb.engine.defaults, options)

    def split(value: Any) -> tuple[str, dict[str, Any]]:
        if isinstance(value, str):
            return value, {question_key: value}
        if isinstance(value, dict) and isinstance(value.get(question_key), str):
            return value[question_key], dict(value)
        raise TypeError(f"expected a string or a dict with a {question_key!r} string")

    def fill(context: FusedContext, base: dict[str, Any]) -> dict[str, Any]:
        return {
            **base,
            "context": context.render(),
            "passages": render_passages(context),
            "facts": render_facts(context),
            "documents": to_documents(context, resolved.top_k, include_facts=True),
            "route": context.route.value,
            "fused": context.to_dict(),
        }

    def invoke(value: Any) -> dict[str, Any]:
        question, base = split(value)
        return fill(kb.retrieve(question, **resolved.kwargs), base)

    async def ainvoke(value: Any) -> dict[str, Any]:
        question, base = split(value)
        return fill(await kb.aretrieve(question, **resolved.kwargs), base)

    return RunnableLambda(invoke, afunc=ainvoke, name="llama_kb_context")


def render_passages(context: FusedContext) -> str:
    """The chunks of ``context`` under their heading, numbered as in ``render()``."""
    blocks = []
    for number, hit in enumerate(context.unstructured, 1):
        label = hit.metadata.get("title") or hit.doc_id
        blocks.append(f"[{number}] ({label})\n{hit.text.strip()}")
    return f"## {UNSTRUCTURED_HEADING}\n\n" + ("\n\n".join(blocks) or "(none)")


def render_facts(context: FusedContext) -> str:
    """The graph facts of ``context`` under their heading, one per line."""
    lines = "\n".join("- " + fact.render() for fact in context.structured_facts)
    return f"## {STRUCTURED_HEADING}\n\n" + (lines or "(none)")
