"""Pluggable graph extractors: turn a document and its chunks into nodes and relations.

The default, :class:`StructureExtractor`, needs no LLM: it uses headings and links.
Mentions of names already in the graph are added by :mod:`llama_kb.ingest.linking`
once per run, so they also reach chunks ingested before the name existed.
:class:`LlamaIndexExtractor` runs any LlamaIndex KG extractor (e.g. ``SimpleLLMPathExtractor``).

Modules: ``base`` (the :class:`GraphExtractor` protocol and :class:`GraphFragment`),
``structure`` (headings and links) and ``llm`` (the LlamaIndex adapter). They may import the
ground floor, :mod:`llama_kb.graph_model`, LlamaIndex core and sibling ingest modules.
"""

from llama_kb.ingest.extractors.base import GraphExtractor, GraphFragment
from llama_kb.ingest.extractors.llm import LlamaIndexExtractor
from llama_kb.ingest.extractors.structure import StructureExtractor

__all__ = ["GraphExtractor", "GraphFragment", "LlamaIndexExtractor", "StructureExtractor"]
