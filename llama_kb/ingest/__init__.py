"""Ingestion: turning files into chunks, vectors and graph structure.

Data flows one way through the layer::

    sources -> readers -> chunking -> extractors -> pipeline -> stores

- ``sources/``: find the files to ingest (``local``: paths, include/exclude patterns).
- ``readers/``: one module per file format, dispatched by suffix, into ``SourceDocument``.
- ``chunking``: split documents into ``TextChunk`` objects with stable ids.
- ``extractors/``: derive graph nodes and relations (``structure``, ``llm``).
- ``linking``: connect chunks to names already in the graph.
- ``manifest``: what was ingested when, so reruns are incremental.
- ``pipeline``: runs the steps above and writes to the stores.

Ingest may import the ground floor (``types``, ``errors``, ``config``, ``names``,
``graph_model``), ``embeddings`` and ``stores``; never ``retrieval``, ``knowledge``, the
``knowledge_base`` facade or the framework faces.
"""
