"""LangChain face of llama-kb: retrievers and runnables over a :class:`llama_kb.KnowledgeBase`."""

__all__: list[str] = []
