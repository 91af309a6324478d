"""Storage backends: Chroma for chunks, property graph stores for entities and relations."""

from llama_kb.stores.sqlite_graph import SQLitePropertyGraphStore
from llama_kb.stores.traversal import TraversalStep

__all__ = ["SQLitePropertyGraphStore", "TraversalStep"]
