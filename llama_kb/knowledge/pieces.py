"""Layer 2: knowledge pieces in a Chroma collection, searchable and filterable."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding

from llama_kb.access import FLAG_PREFIX, PUBLIC, Principal, access_flags
from llama_kb.errors import BackendError
from llama_kb.knowledge.model import KnowledgePiece, stable_hash
from llama_kb.knowledge.writes import WriteStatus, now

PIECES_SUFFIX = "-pieces"
"""The pieces collection is ``<chunk collection><PIECES_SUFFIX>``."""
_TAG_PREFIX = "tag:"
_PIECE_JSON = "piece"


_FLAGGED = "llama_kb_access_flags"
"""Collection metadata: every piece carries access flags."""


@dataclass(frozen=True)
class _Stored:
    piece: KnowledgePiece
    metadata: dict[str, Any]
    embedding: list[float] | None


class PieceStore:
    """Knowledge pieces in a Chroma collection, searchable and filterable.

    Each record holds the piece's content as document, the vector of its ``embedding_text``
    (or content), and metadata for filters: ``entity_id`` (``""`` when shared),
    ``knowledge_type``, ``info_type``, one ``tag:<tag>`` flag per tag, the access flags of
    its ``permissions`` (:func:`~llama_kb.access.access_flags`), and hashes that make
    unchanged pieces cost nothing on reload. Pieces stored before access flags existed get
    the public flag when the store is opened (once).

    Args:
        collection: The Chroma collection ``<collection>-pieces``.
        embedding: The knowledge base's embedding.
    """

    def __init__(self, collection: Any, embedding: BaseEmbedding) -> None:
        self.collection = collection
        self.embedding = embedding
        self._flag_older_pieces()

    def _flag_older_pieces(self) -> None:
        if (self.collection.metadata or {}).get(_FLAGGED) or not self.count():
            return
        page = self.collection.get(include=["metadatas"])
        unflagged = [
            (piece_id, {**meta, **access_flags(PUBLIC)})
            for piece_id, meta in zip(page["ids"], page["metadatas"], strict=True)
            if not any(str(k).startswith(FLAG_PREFIX) for k in meta)
        ]
        if unflagged:
            ids, metas = zip(*unflagged, strict=True)
            self.collection.update(ids=list(ids), metadatas=list(metas))
        self.collection.modify(metadata={_FLAGGED: True})

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
        stamp = now()
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
                    or stamp,
                    "updated_at": piece.updated_at or stamp,
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
    meta.update(access_flags(piece.permissions or PUBLIC))
    return meta


def _piece_from_metadata(meta: dict[str, Any]) -> KnowledgePiece:
    return KnowledgePiece.model_validate_json(meta[_PIECE_JSON])


def piece_filters(
    entity_id: str | None = None,
    knowledge_types: Iterable[str] | None = None,
    info_types: Iterable[str] | None = None,
    tags: Iterable[str] | None = None,
    reader: Principal | None = None,
) -> dict[str, Any] | None:
    """A Chroma ``where`` clause for piece search.

    Args:
        entity_id: Pieces of this entity and pieces shared by all (no ``entity_id``).
        knowledge_types: Any of these knowledge types.
        info_types: Any of these info types.
        tags: Pieces with at least one of these tags.
        reader: Only pieces this principal may read (default: anonymous, public pieces).

    Returns:
        The clause, or ``None`` when nothing is filtered.
    """
    clauses: list[dict[str, Any]] = [(reader or Principal()).flag_clause()]
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
