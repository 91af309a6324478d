"""Where the three knowledge layers live, on the knowledge base's own stores.

* metadata: an SQLite table in ``<kb>/knowledge.sqlite``, one namespace per ``entity_type``
  (:class:`MetadataStore`);
* pieces: a Chroma collection ``<collection>-pieces`` on the client that holds the chunk
  collection (embedded or server), embedded with the knowledge base's embedding
  (:class:`PieceStore`);
* graph: nodes and relations in the knowledge base's graph store, marked with the property
  ``origin="knowledge"`` (:class:`KnowledgeGraph`); node ids are used as given, relations carry
  their traversal ``weight`` and the ``piece_id`` they link.

Every write reports whether it added, updated or left an item unchanged, so loading the same
file twice rewrites nothing and embeds nothing.
"""

from __future__ import annotations

import json
import logging
import math
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.graph_stores.types import LabelledNode, Relation, Triplet

from llama_kb.config import QueryOptions
from llama_kb.errors import BackendError
from llama_kb.graph_model import NamedNode
from llama_kb.knowledge.model import (
    EntityMetadata,
    GraphEdge,
    GraphNode,
    KnowledgePiece,
    stable_hash,
)
from llama_kb.stores.chroma_vector import ChromaChunkStore, open_collection
from llama_kb.stores.graph import KBGraphStore

logger = logging.getLogger(__name__)

ORIGIN = "knowledge"
"""Value of the ``origin`` property on graph nodes and relations written by the loader."""

KNOWLEDGE_DB = "knowledge.sqlite"
PIECES_SUFFIX = "-pieces"
_TAG_PREFIX = "tag:"
_PIECE_JSON = "piece"


class WriteStatus(StrEnum):
    """What writing one item did."""

    ADDED = "added"
    UPDATED = "updated"
    UNCHANGED = "unchanged"


def _now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


# -- layer 1: metadata ---------------------------------------------------------------------

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entity_metadata (
    entity_id TEXT PRIMARY KEY,
    entity_type TEXT NOT NULL,
    properties JSON NOT NULL,
    content_hash TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS entity_metadata_by_type ON entity_metadata(entity_type);
"""


class MetadataStore:
    """Entity profiles in SQLite, namespaced by ``entity_type``.

    Args:
        path: The SQLite file (created if missing).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.RLock()
        try:
            self._conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30.0)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.executescript(_SCHEMA)
        except sqlite3.Error as e:
            raise BackendError(f"cannot open the knowledge metadata store {path}: {e}") from e

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._conn.close()

    def put(self, metadata: EntityMetadata) -> WriteStatus:
        """Insert or update one entity's metadata in a single transaction."""
        digest = stable_hash(metadata.model_dump(mode="json"))
        now = _iso(_now())
        with self._lock, self._conn:
            row = self._conn.execute(
                "SELECT content_hash FROM entity_metadata WHERE entity_id = ?",
                (metadata.entity_id,),
            ).fetchone()
            if row is not None and row[0] == digest:
                return WriteStatus.UNCHANGED
            self._conn.execute(
                "INSERT INTO entity_metadata(entity_id, entity_type, properties, content_hash, "
                "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(entity_id) DO "
                "UPDATE SET entity_type=excluded.entity_type, properties=excluded.properties, "
                "content_hash=excluded.content_hash, updated_at=excluded.updated_at",
                (
                    metadata.entity_id,
                    metadata.entity_type,
                    json.dumps(metadata.properties, sort_keys=True, ensure_ascii=False),
                    digest,
                    now,
                    now,
                ),
            )
        return WriteStatus.ADDED if row is None else WriteStatus.UPDATED

    def get(self, entity_id: str) -> EntityMetadata | None:
        """The metadata of ``entity_id``, if stored."""
        with self._lock:
            row = self._conn.execute(
                "SELECT entity_id, entity_type, properties FROM entity_metadata "
                "WHERE entity_id = ?",
                (entity_id,),
            ).fetchone()
        return _metadata(row) if row else None

    def entities(self, entity_type: str | None = None) -> list[EntityMetadata]:
        """Every stored entity (of ``entity_type``), sorted by id."""
        sql = "SELECT entity_id, entity_type, properties FROM entity_metadata"
        args: tuple[str, ...] = ()
        if entity_type is not None:
            sql += " WHERE entity_type = ?"
            args = (entity_type,)
        with self._lock:
            rows = self._conn.execute(sql + " ORDER BY entity_id", args).fetchall()
        return [_metadata(r) for r in rows]


def _metadata(row: tuple[str, str, str]) -> EntityMetadata:
    return EntityMetadata(entity_id=row[0], entity_type=row[1], properties=json.loads(row[2]))


# -- layer 2: pieces -----------------------------------------------------------------------


@dataclass(frozen=True)
class _Stored:
    piece: KnowledgePiece
    metadata: dict[str, Any]
    embedding: list[float] | None


class PieceStore:
    """Knowledge pieces in a Chroma collection, searchable and filterable.

    Each record holds the piece's content as document, the vector of its ``embedding_text``
    (or content), and metadata for filters: ``entity_id`` (``""`` when shared),
    ``knowledge_type``, ``info_type``, one ``tag:<tag>`` flag per tag, and hashes that make
    unchanged pieces cost nothing on reload.

    Args:
        collection: The Chroma collection ``<collection>-pieces``.
        embedding: The knowledge base's embedding.
    """

    def __init__(self, collection: Any, embedding: BaseEmbedding) -> None:
        self.collection = collection
        self.embedding = embedding

    def count(self) -> int:
        """Number of stored pieces."""
        return int(self.collection.count())

    def get(self, piece_ids: Iterable[str]) -> dict[str, KnowledgePiece]:
        """The stored pieces among ``piece_ids``."""
        return {k: v.piece for k, v in self._get(piece_ids, with_embeddings=False).items()}

    def upsert(self, pieces: Sequence[KnowledgePiece]) -> list[WriteStatus]:
        """Store validated pieces in one Chroma call (keep batches to a few hundred).

        Unchanged pieces are not written; pieces whose embedded text is unchanged keep their
        vector, so only new texts are embedded.

        Args:
            pieces: Pieces with distinct ids.

        Returns:
            One status per piece, in order.

        Raises:
            BackendError: Chroma failed.
        """
        existing = self._get((p.piece_id for p in pieces), with_embeddings=True)
        now = _now()
        statuses: list[WriteStatus] = []
        writes: list[tuple[KnowledgePiece, dict[str, Any], list[float] | None]] = []
        for piece in pieces:
            old = existing.get(piece.piece_id)
            digest = piece.content_hash()
            embed_hash = self._embed_hash(piece)
            if (
                old is not None
                and old.metadata.get("content_hash") == digest
                and old.metadata.get("embed_hash") == embed_hash  # same embedding model
            ):
                statuses.append(WriteStatus.UNCHANGED)
                continue
            stamped = piece.model_copy(
                update={
                    "created_at": piece.created_at
                    or (old.piece.created_at if old else None)
                    or now,
                    "updated_at": piece.updated_at or now,
                }
            )
            meta = _piece_metadata(stamped, digest, embed_hash)
            if old is not None:  # Chroma merges metadata on upsert: drop stale tag flags
                meta.update({k: None for k in old.metadata if k not in meta})
            reuse = old.embedding if old and old.metadata.get("embed_hash") == embed_hash else None
            writes.append((stamped, meta, reuse))
            statuses.append(WriteStatus.ADDED if old is None else WriteStatus.UPDATED)
        if not writes:
            return statuses
        missing = [p.text_to_embed for p, _, vector in writes if vector is None]
        fresh = iter(self.embedding.get_text_embedding_batch(missing) if missing else [])
        vectors = [vector if vector is not None else next(fresh) for _, _, vector in writes]
        try:
            self.collection.upsert(
                ids=[p.piece_id for p, _, _ in writes],
                embeddings=[list(map(float, v)) for v in vectors],
                documents=[p.content for p, _, _ in writes],
                metadatas=[meta for _, meta, _ in writes],
            )
        except Exception as e:  # chromadb raises bare exceptions
            raise BackendError(f"Chroma upsert of knowledge pieces failed: {e}") from e
        return statuses

    def search(
        self, query_embedding: Sequence[float], top_k: int, where: dict[str, Any] | None
    ) -> list[tuple[KnowledgePiece, float]]:
        """The ``top_k`` pieces closest to the query, as ``(piece, cosine similarity)``."""
        if top_k <= 0 or self.count() == 0:
            return []
        try:
            result = self.collection.query(
                query_embeddings=[list(query_embedding)],
                n_results=top_k,
                where=where,
                include=["metadatas", "distances"],
            )
        except Exception as e:
            raise BackendError(f"Chroma query of knowledge pieces failed: {e}") from e
        hits = []
        for meta, distance in zip(result["metadatas"][0], result["distances"][0], strict=True):
            similarity = min(max(1.0 - float(distance), 0.0), 1.0)
            hits.append((_piece_from_metadata(meta), round(similarity, 6)))
        return hits

    def _get(self, piece_ids: Iterable[str], with_embeddings: bool) -> dict[str, _Stored]:
        ids = list(dict.fromkeys(piece_ids))
        if not ids:
            return {}
        include = ["metadatas", "embeddings"] if with_embeddings else ["metadatas"]
        try:
            page = self.collection.get(ids=ids, include=include)
        except Exception as e:
            raise BackendError(f"Chroma read of knowledge pieces failed: {e}") from e
        embeddings = page.get("embeddings")
        found = {}
        for i, (piece_id, meta) in enumerate(zip(page["ids"], page["metadatas"], strict=True)):
            vector = None
            if with_embeddings and embeddings is not None:
                vector = [float(x) for x in embeddings[i]]
            found[piece_id] = _Stored(_piece_from_metadata(meta), dict(meta), vector)
        return found

    def _embed_hash(self, piece: KnowledgePiece) -> str:
        return stable_hash([self.embedding.model_name, piece.text_to_embed])


def _piece_metadata(piece: KnowledgePiece, digest: str, embed_hash: str) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "entity_id": piece.entity_id or "",
        "knowledge_type": piece.knowledge_type.value,
        "info_type": piece.info_type,
        "content_hash": digest,
        "embed_hash": embed_hash,
        _PIECE_JSON: piece.model_dump_json(),
    }
    meta.update({f"{_TAG_PREFIX}{tag}": True for tag in piece.tags})
    return meta


def _piece_from_metadata(meta: dict[str, Any]) -> KnowledgePiece:
    return KnowledgePiece.model_validate_json(meta[_PIECE_JSON])


def piece_filters(
    entity_id: str | None = None,
    knowledge_types: Iterable[str] | None = None,
    info_types: Iterable[str] | None = None,
    tags: Iterable[str] | None = None,
) -> dict[str, Any] | None:
    """A Chroma ``where`` clause for piece search.

    Args:
        entity_id: Pieces of this entity and pieces shared by all (no ``entity_id``).
        knowledge_types: Any of these knowledge types.
        info_types: Any of these info types.
        tags: Pieces with at least one of these tags.

    Returns:
        The clause, or ``None`` when nothing is filtered.
    """
    clauses: list[dict[str, Any]] = []
    if entity_id is not None:
        clauses.append({"entity_id": {"$in": [entity_id, ""]}})
    if knowledge_types is not None:
        clauses.append(
            {"knowledge_type": {"$in": sorted({str(t).lower() for t in knowledge_types})}}
        )
    if info_types is not None:
        clauses.append({"info_type": {"$in": sorted(set(info_types))}})
    if tags is not None:
        flags = [{f"{_TAG_PREFIX}{t}": True} for t in sorted(set(tags))]
        clauses.append(flags[0] if len(flags) == 1 else {"$or": flags})
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


# -- layer 3: graph ------------------------------------------------------------------------


class KnowledgeGraph:
    """Knowledge nodes and relations in the knowledge base's graph store.

    Reads use the LlamaIndex ``PropertyGraphStore`` API (``get``, ``get_triplets``), which
    the embedded SQLite store and the server stores share.

    Args:
        graph: The knowledge base's graph store.
    """

    def __init__(self, graph: KBGraphStore) -> None:
        self.graph = graph
        # A PropertyGraphAdapter wraps the LlamaIndex store that offers get/get_triplets.
        self._api: Any = graph if hasattr(graph, "get_triplets") else graph.store  # type: ignore[attr-defined]

    def existing_nodes(self, node_ids: Iterable[str]) -> set[str]:
        """Those of ``node_ids`` that are stored."""
        ids = list(dict.fromkeys(node_ids))
        return {n.id for n in self._api.get(ids=ids)} if ids else set()

    def upsert_node(self, node: GraphNode) -> WriteStatus:
        """Insert or update one node."""
        stored = _graph_node(node)
        old = self._api.get(ids=[node.node_id])
        if old and _same_node(old[0], stored):
            return WriteStatus.UNCHANGED
        self.graph.upsert_nodes([stored])
        return WriteStatus.UPDATED if old else WriteStatus.ADDED

    def upsert_edge(self, edge: GraphEdge) -> WriteStatus:
        """Insert or update one relation (both endpoints must exist)."""
        props = {**edge.properties, "weight": edge.weight, "origin": ORIGIN}
        if edge.piece_id is not None:
            props["piece_id"] = edge.piece_id
        stored = Relation(
            label=edge.edge_type,
            source_id=edge.source_id,
            target_id=edge.target_id,
            properties=props,
        )
        old = [
            rel
            for _, rel, _ in self._api.get_triplets(
                ids=[edge.source_id], relation_names=[edge.edge_type]
            )
            if rel.source_id == edge.source_id and rel.target_id == edge.target_id
        ]
        if old and _normalise(old[0].properties) == _normalise(stored.properties):
            return WriteStatus.UNCHANGED
        self.graph.upsert_relations([stored])
        return WriteStatus.UPDATED if old else WriteStatus.ADDED

    def neighbourhood(self, start_id: str, depth: int) -> list[tuple[Triplet, int]]:
        """Knowledge relations within ``depth`` hops of ``start_id``, breadth first.

        Relations are followed in both directions. A relation's depth is the BFS level at
        which it is first met (1 = it touches ``start_id``). Within a level relations are
        ordered by (type, source id, target id).

        Returns:
            ``(triplet, depth)`` pairs, each relation once.
        """
        if depth <= 0:
            return []
        visited = {start_id}
        frontier = [start_id]
        seen: set[tuple[str, str, str]] = set()
        found: list[tuple[Triplet, int]] = []
        for level in range(1, depth + 1):
            triplets = self._api.get_triplets(ids=frontier)
            triplets = sorted(
                (t for t in triplets if t[1].properties.get("origin") == ORIGIN),
                key=lambda t: (t[1].label, t[1].source_id, t[1].target_id),
            )
            next_frontier: list[str] = []
            for triplet in triplets:
                rel = triplet[1]
                key = (rel.source_id, rel.label, rel.target_id)
                if key in seen:
                    continue
                seen.add(key)
                found.append((triplet, level))
                for node_id in (rel.source_id, rel.target_id):
                    if node_id not in visited:
                        visited.add(node_id)
                        next_frontier.append(node_id)
            frontier = next_frontier
            if not frontier:
                break
        return found


def _graph_node(node: GraphNode) -> NamedNode:
    return NamedNode(
        id_=node.node_id,
        name=node.name,
        label=node.node_type,
        properties={**node.properties, "origin": ORIGIN},
    )


def _normalise(properties: dict[str, Any]) -> str:
    def fix(value: Any) -> Any:
        # JSON stores 1 and 1.0 alike; compare numbers by value.
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            return int(value)
        return value

    return json.dumps({k: fix(v) for k, v in properties.items()}, sort_keys=True, default=str)


def _same_node(old: LabelledNode, new: NamedNode) -> bool:
    return (
        old.label == new.label
        and getattr(old, "name", None) == new.name
        and _normalise(old.properties) == _normalise(new.properties)
    )


def node_name(node: LabelledNode) -> str:
    """The display name of a graph node (its ``name``, else its id)."""
    return str(getattr(node, "name", None) or node.id)


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


def knowledge_store(target: KnowledgeStore | HasKnowledge) -> KnowledgeStore:
    """The :class:`KnowledgeStore` of ``target`` (a knowledge base, or the store itself)."""
    return target if isinstance(target, KnowledgeStore) else target.knowledge
