"""Framework faces over the core: they convert, they never re-implement retrieval.

* :mod:`llama_kb.integrations.llamaindex`: ``UnifiedContextRetriever`` and
  ``UnifiedQueryEngine`` (LlamaIndex ``BaseRetriever`` / query engine).
* :mod:`llama_kb.integrations._options`: the option handling both faces share (framework
  names, layering, facts bounded by ``top_k``), over ``retrieval.options.resolve_options``.
* :mod:`llama_kb.integrations.postprocessors`: a LlamaIndex node postprocessor as the
  retriever's reranker (the LangChain twin, ``CompressorReranker``, is in ``langchain_kb``).
* :mod:`llama_kb.integrations.mcp_server`: the MCP server (``llama-kb mcp``): the unified
  retriever and the agent graph (:mod:`llama_kb.agent_graph`) as MCP tools and resources.

A face may import anything below it (the facade, retrieval, knowledge, stores, the ground
floor); nothing in the core imports a face at module level. The LangChain face lives in the
sibling package ``langchain_kb``.
"""
