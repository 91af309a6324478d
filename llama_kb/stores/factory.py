"""Open the vector and graph stores a configuration asks for.

Embedded stores live in the knowledge base directory; a configured server replaces them
(``config.chroma`` for vectors; ``config.neo4j`` or ``config.falkordb`` for the graph). Server
drivers are imported only when configured, and a missing one raises
:class:`~llama_kb.errors.MissingDependencyError` naming the extra to install.
"""

from __future__ import annotations

from pathlib import Path

from llama_kb.config import KBConfig
from llama_kb.stores.chroma_vector import ChromaChunkStore, embedded_client, open_collection
from llama_kb.stores.graph import KBGraphStore
from llama_kb.stores.sqlite_graph import SQLitePropertyGraphStore


def open_vector_store(config: KBConfig, root: Path) -> ChromaChunkStore:
    """The Chroma collection ``config.collection``, on the server or embedded under ``root``.

    Raises:
        BackendUnavailable: A configured Chroma server cannot be reached.
    """
    if config.chroma is not None:
        from llama_kb.stores.chroma_server import ChromaServerChunkStore

        return ChromaServerChunkStore.connect(config.chroma, config.collection)
    client = embedded_client(root / "chroma")
    return ChromaChunkStore.from_collection(open_collection(client, config.collection), client)


def open_graph_store(config: KBConfig, root: Path) -> KBGraphStore:
    """The configured graph server, else the embedded SQLite store under ``root``.

    Raises:
        BackendUnavailable: A configured graph server cannot be reached.
        MissingDependencyError: The server's driver extra is not installed.
    """
    if config.neo4j is not None:
        from llama_kb.stores.neo4j_graph import Neo4jGraphStore

        neo = config.neo4j
        return Neo4jGraphStore(neo.uri, neo.username, neo.password, neo.database)
    if config.falkordb is not None:
        from llama_kb.stores.falkordb_graph import FalkorDBGraphStore

        return FalkorDBGraphStore(
            config.falkordb.url.get_secret_value(), falkordb_graph_name(config)
        )
    return SQLitePropertyGraphStore(root / "graph.sqlite")


def falkordb_graph_name(config: KBConfig) -> str:
    """The FalkorDB graph of a knowledge base: ``falkordb.graph`` when set, else its collection.

    So knowledge bases with different collections on one server never share a graph.
    """
    chosen = config.falkordb
    if chosen is not None and "graph" in chosen.model_fields_set:
        return chosen.graph
    return config.collection
