"""LangChain face of llama-kb: a retriever and runnables over a :class:`llama_kb.KnowledgeBase`."""

from langchain_kb.retriever import UnifiedKBRetriever, to_documents
from langchain_kb.runnables import fused_context_runnable
from langchain_kb.sections import KnowledgeSections

__all__ = ["KnowledgeSections", "UnifiedKBRetriever", "fused_context_runnable", "to_documents"]
