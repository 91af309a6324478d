"""LangChain face of llama-kb: a retriever and runnables over a :class:`llama_kb.KnowledgeBase`."""

from langchain_kb.compressors import CompressorReranker
from langchain_kb.retriever import UnifiedKBRetriever, format_documents, to_documents
from langchain_kb.runnables import fused_context_runnable, render_facts, render_passages
from langchain_kb.sections import KnowledgeSections

__all__ = [
    "CompressorReranker",
    "KnowledgeSections",
    "UnifiedKBRetriever",
    "format_documents",
    "fused_context_runnable",
    "render_facts",
    "render_passages",
    "to_documents",
]
