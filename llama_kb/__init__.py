"""llama-kb: one retriever over documents (Chroma) and a knowledge graph.

The public API is re-exported here; see the README for a quickstart. Names are imported on
first use (PEP 562 module ``__getattr__``), so ``import llama_kb`` stays fast and a command
such as ``llama-kb --version`` does not pay for LlamaIndex, Chroma or ONNX Runtime.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "Access": "llama_kb.access",
    "Principal": "llama_kb.access",
    "AccessConfig": "llama_kb.config",
    "ChunkingConfig": "llama_kb.config",
    "KBConfig": "llama_kb.config",
    "LimitsConfig": "llama_kb.config",
    "SecretsConfig": "llama_kb.config",
    "OnnxBgeSmallEmbedding": "llama_kb.embeddings",
    "OnnxMiniLMEmbedding": "llama_kb.embeddings",
    "default_embedding": "llama_kb.embeddings",
    "BackendError": "llama_kb.errors",
    "BackendUnavailable": "llama_kb.errors",
    "ConfigurationError": "llama_kb.errors",
    "CorruptStoreError": "llama_kb.errors",
    "DocumentError": "llama_kb.errors",
    "EmbeddingError": "llama_kb.errors",
    "KnowledgeBaseError": "llama_kb.errors",
    "LlamaKBError": "llama_kb.errors",
    "MissingDependencyError": "llama_kb.errors",
    "NotSupportedError": "llama_kb.errors",
    "QueryError": "llama_kb.errors",
    "GraphExtractor": "llama_kb.ingest.extractors",
    "GraphFragment": "llama_kb.ingest.extractors",
    "LlamaIndexExtractor": "llama_kb.ingest.extractors",
    "StructureExtractor": "llama_kb.ingest.extractors",
    "UnifiedContextRetriever": "llama_kb.integrations.llamaindex",
    "UnifiedQueryEngine": "llama_kb.integrations.llamaindex",
    "KnowledgeProvider": "llama_kb.knowledge",
    "load_knowledge": "llama_kb.knowledge",
    "retrieve_knowledge": "llama_kb.knowledge",
    "KnowledgeBase": "llama_kb.knowledge_base",
    "HeuristicClassifier": "llama_kb.retrieval.classifier",
    "LLMClassifier": "llama_kb.retrieval.classifier",
    "QueryClassifier": "llama_kb.retrieval.classifier",
    "ContextEngine": "llama_kb.retrieval.engine",
    "Classification": "llama_kb.retrieval.payload",
    "Fact": "llama_kb.retrieval.payload",
    "FusedContext": "llama_kb.retrieval.payload",
    "SQLitePropertyGraphStore": "llama_kb.stores.sqlite_graph",
    "IngestFailure": "llama_kb.types",
    "IngestReport": "llama_kb.types",
    "Route": "llama_kb.types",
    "Reranker": "llama_kb.retrieval.rerank",
    "CrossEncoderReranker": "llama_kb.rerankers",
    "NodePostprocessorReranker": "llama_kb.integrations.postprocessors",
    "SearchHit": "llama_kb.types",
}
"""Public name -> the module that defines it (imported when the name is first used)."""

__all__ = [
    "Access",
    "AccessConfig",
    "BackendError",
    "BackendUnavailable",
    "ChunkingConfig",
    "Classification",
    "ConfigurationError",
    "ContextEngine",
    "CorruptStoreError",
    "CrossEncoderReranker",
    "DocumentError",
    "EmbeddingError",
    "Fact",
    "FusedContext",
    "GraphExtractor",
    "GraphFragment",
    "HeuristicClassifier",
    "IngestFailure",
    "IngestReport",
    "KBConfig",
    "KnowledgeBase",
    "KnowledgeBaseError",
    "KnowledgeProvider",
    "LLMClassifier",
    "LimitsConfig",
    "LlamaIndexExtractor",
    "LlamaKBError",
    "MissingDependencyError",
    "NodePostprocessorReranker",
    "NotSupportedError",
    "OnnxBgeSmallEmbedding",
    "OnnxMiniLMEmbedding",
    "Principal",
    "QueryClassifier",
    "QueryError",
    "Reranker",
    "Route",
    "SQLitePropertyGraphStore",
    "SearchHit",
    "SecretsConfig",
    "StructureExtractor",
    "UnifiedContextRetriever",
    "UnifiedQueryEngine",
    "default_embedding",
    "load_knowledge",
    "retrieve_knowledge",
]


def __getattr__(name: str) -> Any:
    """Import a public name's module on first access and cache the name here."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'llama_kb' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


if TYPE_CHECKING:  # for type checkers and IDEs; at run time the names load lazily
    from llama_kb.access import Access, Principal
    from llama_kb.config import (
        AccessConfig,
        ChunkingConfig,
        KBConfig,
        LimitsConfig,
        SecretsConfig,
    )
    from llama_kb.embeddings import OnnxBgeSmallEmbedding, OnnxMiniLMEmbedding, default_embedding
    from llama_kb.errors import (
        BackendError,
        BackendUnavailable,
        ConfigurationError,
        CorruptStoreError,
        DocumentError,
        EmbeddingError,
        KnowledgeBaseError,
        LlamaKBError,
        MissingDependencyError,
        NotSupportedError,
        QueryError,
    )
    from llama_kb.ingest.extractors import (
        GraphExtractor,
        GraphFragment,
        LlamaIndexExtractor,
        StructureExtractor,
    )
    from llama_kb.integrations.llamaindex import UnifiedContextRetriever, UnifiedQueryEngine
    from llama_kb.integrations.postprocessors import NodePostprocessorReranker
    from llama_kb.knowledge import KnowledgeProvider, load_knowledge, retrieve_knowledge
    from llama_kb.knowledge_base import KnowledgeBase
    from llama_kb.rerankers import CrossEncoderReranker
    from llama_kb.retrieval.classifier import HeuristicClassifier, LLMClassifier, QueryClassifier
    from llama_kb.retrieval.engine import ContextEngine
    from llama_kb.retrieval.payload import Classification, Fact, FusedContext
    from llama_kb.retrieval.rerank import Reranker
    from llama_kb.stores.sqlite_graph import SQLitePropertyGraphStore
    from llama_kb.types import IngestFailure, IngestReport, Route, SearchHit
