"""LangChain face of llama-kb: a retriever and runnables over a :class:`llama_kb.KnowledgeBase`."""

from langchain_kb.retriever import UnifiedKBRetriever, to_documents
from langchain_kb.runnables import fused_context_runnable

__all__ = ["UnifiedKBRetriever", "fused_context_runnable", "to_documents"]
