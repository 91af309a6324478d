"""llama-kb: one retriever over documents (Chroma) and a knowledge graph.

The public API is re-exported here; see the README for a quickstart.
"""

from llama_kb.config import ChunkingConfig, KBConfig, LimitsConfig, SecretsConfig
from llama_kb.embeddings import OnnxMiniLMEmbedding, default_embedding
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
from llama_kb.knowledge import KnowledgeProvider, load_knowledge, retrieve_knowledge
from llama_kb.knowledge_base import KnowledgeBase
from llama_kb.retrieval.classifier import HeuristicClassifier, LLMClassifier, QueryClassifier
from llama_kb.retrieval.engine import ContextEngine
from llama_kb.retrieval.payload import Classification, Fact, FusedContext
from llama_kb.stores.sqlite_graph import SQLitePropertyGraphStore
from llama_kb.types import IngestFailure, IngestReport, Route, SearchHit

__version__ = "0.1.0"

__all__ = [
    "BackendError",
    "BackendUnavailable",
    "ChunkingConfig",
    "Classification",
    "ConfigurationError",
    "ContextEngine",
    "CorruptStoreError",
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
    "NotSupportedError",
    "OnnxMiniLMEmbedding",
    "QueryClassifier",
    "QueryError",
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
