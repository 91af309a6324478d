"""Pluggable graph extractors: turn a document and its chunks into nodes and relations.

The defaults need no LLM: :class:`StructureExtractor` (headings and links, structural edges),
:class:`SentenceRelationExtractor` (typed facts from sentences, spaCy) and
:class:`RecordExtractor` (typed facts from tables, key-value lines, front matter, JSON).
Mentions of names already in the graph are added by :mod:`llama_kb.ingest.linking`
once per run, so they also reach chunks ingested before the name existed.
:class:`LlamaIndexExtractor` runs any LlamaIndex KG extractor (e.g. ``SimpleLLMPathExtractor``).

Modules: ``base`` (the :class:`GraphExtractor` protocol and :class:`GraphFragment`),
``structure`` (headings and links), ``code`` (definitions, imports, calls of source code:
:class:`CodeStructureExtractor`), ``sentences`` and ``records`` (typed facts, no LLM) and
``llm`` (the LlamaIndex adapter), with the sentence extractor's private helpers ``_asides``
(bracketed asides set apart before parsing) and ``_parse_paths`` (walking the dependency
parse); :func:`default_extractors` lists the ones on by default.
They may import the ground floor, :mod:`llama_kb.graph_model`, LlamaIndex core and sibling
ingest modules.
"""

from llama_kb.ingest.extractors.base import GraphExtractor, GraphFragment
from llama_kb.ingest.extractors.code import CodeStructureExtractor
from llama_kb.ingest.extractors.llm import LlamaIndexExtractor
from llama_kb.ingest.extractors.records import RecordExtractor
from llama_kb.ingest.extractors.sentences import SentenceRelationExtractor
from llama_kb.ingest.extractors.structure import StructureExtractor

__all__ = [
    "CodeStructureExtractor",
    "GraphExtractor",
    "GraphFragment",
    "LlamaIndexExtractor",
    "RecordExtractor",
    "SentenceRelationExtractor",
    "StructureExtractor",
    "default_extractors",
]


def default_extractors() -> list[GraphExtractor]:
    """The offline extractors used when none are given: structure, code, sentences, records."""
    return [
        StructureExtractor(),
        CodeStructureExtractor(),
        SentenceRelationExtractor(),
        RecordExtractor(),
    ]
