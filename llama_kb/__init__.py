"""llama-kb: one retriever over documents (Chroma) and a knowledge graph.

The public API is re-exported here; see the README for a quickstart.
"""

from llama_kb.config import ChunkingConfig, KBConfig
from llama_kb.embeddings import OnnxMiniLMEmbedding, default_embedding
from llama_kb.errors import (
    BackendError,
    BackendUnavailable,
    ConfigurationError,
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
from llama_kb.knowledge_base import KnowledgeBase
from llama_kb.stores.sqlite_graph import SQLitePropertyGraphStore
from llama_kb.types import IngestFailure, IngestReport, Route, SearchHit

__version__ = "0.1.0"

__all__ = [
    "BackendError",
    "BackendUnavailable",
    "ChunkingConfig",
    "ConfigurationError",
    "DocumentError",
    "EmbeddingError",
    "GraphExtractor",
    "GraphFragment",
    "IngestFailure",
    "IngestReport",
    "KBConfig",
    "KnowledgeBase",
    "KnowledgeBaseError",
    "LlamaIndexExtractor",
    "LlamaKBError",
    "MissingDependencyError",
    "NotSupportedError",
    "OnnxMiniLMEmbedding",
    "QueryError",
    "Route",
    "SQLitePropertyGraphStore",
    "SearchHit",
    "StructureExtractor",
    "default_embedding",
]
