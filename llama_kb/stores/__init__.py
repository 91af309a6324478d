"""Storage: Chroma for chunks, property graph stores for entities and relations.

What it holds: the protocols (:mod:`.graph` with ``KBGraphStore``, traversal included, and
the backend-neutral cost-bounded search in :mod:`.traversal`) and one module per backend:
``chroma_vector`` / ``chroma_server`` (chunks), ``sqlite_graph`` (embedded graph),
``falkordb_graph`` / ``neo4j_graph`` over the shared Cypher in ``cypher``, and ``adapters``
(a user's own LlamaIndex ``PropertyGraphStore``). ``factory`` opens what a configuration
asks for. ``_``-prefixed modules are private helpers of one backend (``_sqlite_*``,
``_cypher_*``) or of all servers (``_remote``).

What it may import: the ground floor only (``llama_kb.types``, ``errors``, ``config``,
``names``, ``graph_model``) and third-party drivers; never ``ingest``, ``retrieval``,
``knowledge``, the facade or the faces. Server drivers are imported lazily.
"""

from llama_kb.stores.sqlite_graph import SQLitePropertyGraphStore
from llama_kb.stores.traversal import TraversalStep

__all__ = ["SQLitePropertyGraphStore", "TraversalStep"]
