"""Retrieval: from a query to a :class:`~llama_kb.retrieval.payload.FusedContext`.

``options`` (one validated :class:`~llama_kb.config.QueryOptions` per query, face names mapped
onto it) -> ``classifier`` (semantic / factual / hybrid) -> ``index`` (chunk texts, BM25 in
``lexical``, the chunk-name graph in ``name_graph``, fuzzy name linking in ``fuzzy_names``)
-> ``facts`` (graph traversal) -> ``engine`` (dispatch, PPR ranking, refinement, fusion) ->
``payload`` (the fused result). ``trace`` records each query's stages and emits them
(LlamaIndex instrumentation, OpenTelemetry, logging); ``explain`` is the per-candidate debug
view behind ``explain=True``.

May import the ground floor (types, errors, config, names, graph_model), ``embeddings`` and
``stores``; never ``ingest``, ``knowledge``, the facade or a face.
"""
