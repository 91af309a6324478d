"""Where the three knowledge layers live, on the knowledge base's own stores.

* metadata: an SQLite table in ``<kb>/knowledge.sqlite``, one namespace per ``entity_type``
  (:class:`~llama_kb.knowledge.metadata.MetadataStore`);
* pieces: a Chroma collection ``<collection>-pieces`` on the client that holds the chunk
  collection (embedded or server), embedded with the knowledge base's embedding
  (:class:`~llama_kb.knowledge.pieces.PieceStore`);
* graph: nodes and relations in the knowledge base's graph store, marked with the property
  ``origin="knowledge"`` (:class:`~llama_kb.knowledge.graph.KnowledgeGraph`); node ids are
  used as given, relations carry their traversal ``weight`` and the ``piece_id`` they link.

Every write reports whether it added, updated or left an item unchanged, so loading the same
file twice rewrites nothing and embeds nothing.
"""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import Protocol

from llama_index.core.base.embeddings.base import BaseEmbedding

from llama_kb.config import QueryOptions
from llama_kb.knowledge.graph import KnowledgeGraph
from llama_kb.knowledge.metadata import KNOWLEDGE_DB, MetadataStore
from llama_kb.knowledge.pieces import PIECES_SUFFIX, PieceStore
from llama_kb.stores.chroma_vector import ChromaChunkStore, open_collection
from llama_kb.stores.graph import KBGraphStore

# -- all three -----------------------------------------------------------------------------


class KnowledgeStore:
    """The three knowledge layers over one knowledge base's stores; close it (or use ``with``).

    A :class:`~llama_kb.KnowledgeBase` opens one as ``kb.knowledge`` and closes it with
    itself; the knowledge functions accept either.

    Args:
        root: The knowledge base directory (holds ``knowledge.sqlite``).
        vectors: The chunk store; its Chroma client holds the pieces collection.
        graph: The graph store.
        embedding: The knowledge base's embedding.
        collection: The chunk collection's name; pieces go to ``<collection>-pieces``.
        defaults: Query defaults (``top_k``) for piece search.
    """

    def __init__(
        self,
        root: Path,
        vectors: ChromaChunkStore,
        graph: KBGraphStore,
        embedding: BaseEmbedding,
        collection: str,
        defaults: QueryOptions | None = None,
    ) -> None:
        self.root = Path(root).expanduser()
        self.metadata = MetadataStore(self.root / KNOWLEDGE_DB)
        pieces = open_collection(vectors.client, f"{collection}{PIECES_SUFFIX}")
        self.pieces = PieceStore(pieces, embedding)
        self.graph = KnowledgeGraph(graph)
        self.embedding = embedding
        self.defaults = defaults or QueryOptions()

    def close(self) -> None:
        """Release the metadata database (the other stores belong to the knowledge base)."""
        self.metadata.close()

    def __enter__(self) -> KnowledgeStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class HasKnowledge(Protocol):
    """Anything that holds a :class:`KnowledgeStore` (a ``KnowledgeBase`` does)."""

    @property
    def knowledge(self) -> KnowledgeStore:
        """The knowledge layers."""
        ...


def has_pieces_collection(vectors: ChromaChunkStore, collection: str) -> bool:
    """Whether knowledge pieces were ever stored beside ``collection`` (no store is opened)."""
    client = getattr(vectors, "client", None)
    if client is None:
        return False
    wanted = f"{collection}{PIECES_SUFFIX}"
    return any(getattr(c, "name", c) == wanted for c in client.list_collections())


def knowledge_store(target: KnowledgeStore | HasKnowledge) -> KnowledgeStore:
    """The :class:`KnowledgeStore` of ``target`` (a knowledge base, or the store itself)."""
    return target if isinstance(target, KnowledgeStore) else target.knowledge
