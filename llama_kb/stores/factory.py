"""Open the vector and graph stores a configuration asks for."""

from __future__ import annotations

from pathlib import Path

from llama_kb.config import KBConfig
from llama_kb.errors import NotSupportedError
from llama_kb.stores.chroma_vector import ChromaChunkStore, embedded_client, open_collection
from llama_kb.stores.graph import KBGraphStore
from llama_kb.stores.sqlite_graph import SQLitePropertyGraphStore


def open_vector_store(config: KBConfig, root: Path) -> ChromaChunkStore:
    """The embedded Chroma store under ``root`` (server stores arrive with issue 6)."""
    if config.chroma is not None:
        raise NotSupportedError("a Chroma server is not supported yet; unset CHROMA_HOST")
    return ChromaChunkStore.from_collection(
        open_collection(embedded_client(root / "chroma"), config.collection)
    )


def open_graph_store(config: KBConfig, root: Path) -> KBGraphStore:
    """The embedded SQLite graph store under ``root``."""
    if config.neo4j is not None or config.falkordb is not None:
        raise NotSupportedError("graph servers are not supported yet; unset NEO4J_URI/FALKORDB_URL")
    return SQLitePropertyGraphStore(root / "graph.sqlite")
