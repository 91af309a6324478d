"""Three-layer knowledge (seed 000): entity metadata, knowledge pieces and an entity graph,
loaded from JSON or structured from free text by an LLM, retrieved per entity and routed into
prompt sections by ``info_type``.

Built on the knowledge base's own stores (:class:`~llama_kb.knowledge.store.KnowledgeStore`,
``kb.knowledge``): metadata in ``<kb>/knowledge.sqlite``, pieces in the Chroma collection
``<collection>-pieces``, the graph in the knowledge base's graph store.

May import the ground floor, ``embeddings``, ``stores`` and ``retrieval``; never the
facade (``knowledge_base``) or a face: functions take the knowledge base (or its store) as
an argument.

Example:
    >>> from llama_kb import KnowledgeBase
    >>> from llama_kb.knowledge import KnowledgeProvider, load_knowledge
    >>> with KnowledgeBase.open("./kb") as kb:  # doctest: +SKIP
    ...     load_knowledge(kb, "examples/knowledge/seed_example.json")
    ...     provider = KnowledgeProvider(kb, entity_id="user:alice")
    ...     sections = provider("Set up an LES simulation for jet noise")
"""

from llama_kb.knowledge.formatter import KnowledgeFormatter
from llama_kb.knowledge.guards import find_secrets, redact
from llama_kb.knowledge.injection import (
    ConflictStrategy,
    knowledge_function_mappings,
    merge_knowledge,
)
from llama_kb.knowledge.loader import LoadReport, load_knowledge
from llama_kb.knowledge.model import (
    GLOBAL_ENTITY_ID,
    EntityMetadata,
    GraphEdge,
    GraphNode,
    KnowledgePiece,
    KnowledgeType,
)
from llama_kb.knowledge.provider import (
    FormatStringFormatter,
    Jinja2Formatter,
    KnowledgeProvider,
    KnowledgeSection,
)
from llama_kb.knowledge.retrieval import (
    GraphContextItem,
    RetrievalResult,
    aretrieve_knowledge,
    retrieve_knowledge,
)
from llama_kb.knowledge.structuring import StructuringResult, resolve_llm, structure_knowledge
from llama_kb.knowledge.validation import SkippedItem

__all__ = [
    "GLOBAL_ENTITY_ID",
    "ConflictStrategy",
    "EntityMetadata",
    "FormatStringFormatter",
    "GraphContextItem",
    "GraphEdge",
    "GraphNode",
    "Jinja2Formatter",
    "KnowledgeFormatter",
    "KnowledgePiece",
    "KnowledgeProvider",
    "KnowledgeSection",
    "KnowledgeType",
    "LoadReport",
    "RetrievalResult",
    "SkippedItem",
    "StructuringResult",
    "aretrieve_knowledge",
    "find_secrets",
    "knowledge_function_mappings",
    "load_knowledge",
    "merge_knowledge",
    "redact",
    "resolve_llm",
    "retrieve_knowledge",
    "structure_knowledge",
]
