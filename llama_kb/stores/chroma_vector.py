"""Chunk storage and dense search over Chroma, through LlamaIndex's ``ChromaVectorStore``."""

from __future__ import annotations

import logging
import math
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from llama_index.core.schema import BaseNode, NodeRelationship, RelatedNodeInfo, TextNode
from llama_index.core.vector_stores.types import (
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
)
from llama_index.vector_stores.chroma import ChromaVectorStore

from llama_kb.access import ACCESS_FIELD, PUBLIC
from llama_kb.errors import BackendError
from llama_kb.stores.ownership import OWNER_KEY, check_owner
from llama_kb.types import SearchHit, TextChunk

logger = logging.getLogger(__name__)

_PAGE = 1000
OVERFETCH = 4
"""A restricted dense query first reads this many times ``top_k`` nearest chunks."""
SEARCH_EF = 200
"""Candidates an HNSW search explores (Chroma's ``ef_search``). Chroma's default, 100, finds
98.7 % of the exact 30 nearest chunks on musique-dev's 8,016 MiniLM vectors and misses even
a query's nearest chunk now and then; 200 finds 99.8 % for about a millisecond more."""


def chroma_settings() -> Any:
    """Chroma client settings for llama-kb: no telemetry, so nothing leaves the machine."""
    from chromadb.config import Settings

    return Settings(anonymized_telemetry=False, allow_reset=False)


def open_collection(client: Any, name: str, search_ef: int = SEARCH_EF) -> Any:
    """Get or create ``name`` with cosine distance, at least ``search_ef`` HNSW search
    candidates and *no* embedding function.

    Chroma's default embedding function downloads a model; llama-kb always passes vectors.
    A collection made with a smaller ``ef_search`` (earlier versions) is raised to
    ``search_ef``; Chroma applies it when the process first searches the collection.
    """
    collection = client.get_or_create_collection(
        name,
        embedding_function=None,
        configuration={"hnsw": {"space": "cosine", "ef_search": search_ef}},
    )
    hnsw = (collection.configuration or {}).get("hnsw") or {}
    if int(hnsw.get("ef_search") or 0) < search_ef:
        try:
            collection.modify(configuration={"hnsw": {"ef_search": search_ef}})
        except Exception as e:  # a read-only server account: search as configured
            logger.warning("cannot raise ef_search of collection %r: %s", name, e)
    return collection


def embedded_client(path: Path) -> Any:
    """A persistent, file-backed Chroma client rooted at ``path``."""
    import chromadb

    return chromadb.PersistentClient(path=str(path), settings=chroma_settings())


class ChromaChunkStore:
    """Stores :class:`TextChunk` vectors and answers dense queries.

    Args:
        vector_store: A LlamaIndex ``ChromaVectorStore``; anything built on it (a
            ``VectorStoreIndex``) sees the same chunks.
        client: The Chroma client that holds the collection, when known (it opens
            sibling collections, e.g. for node names).
    """

    def __init__(self, vector_store: ChromaVectorStore, client: Any = None) -> None:
        self.vector_store = vector_store
        self._client = client

    @classmethod
    def from_collection(cls, collection: Any, client: Any = None) -> ChromaChunkStore:
        """Wrap an existing Chroma collection (of ``client``, when given)."""
        return cls(ChromaVectorStore(chroma_collection=collection), client)

    @property
    def collection(self) -> Any:
        """The underlying Chroma collection."""
        return self.vector_store.client

    @property
    def client(self) -> Any:
        """A Chroma client on the same system (directory or server) as the collection."""
        if self._client is None:
            from chromadb.api.client import Client

            collection = self.collection
            self._client = Client.from_system(
                collection._client._system, tenant=collection.tenant, database=collection.database
            )
        return self._client

    def add(self, chunks: Sequence[TextChunk], embeddings: Sequence[Sequence[float]]) -> None:
        """Add chunks with their vectors (ids are the chunk ids)."""
        if not chunks:
            return
        nodes: list[BaseNode] = [_to_node(c, e) for c, e in zip(chunks, embeddings, strict=True)]
        self.vector_store.add(nodes)

    def delete_documents(self, doc_ids: Sequence[str], batch: int = 500) -> None:
        """Delete every chunk of each document id: one indexed ``where`` delete per batch
        (LlamaIndex stores the document id as ``document_id`` metadata)."""
        ids = list(dict.fromkeys(doc_ids))
        for start in range(0, len(ids), batch):
            chunk = ids[start : start + batch]
            where = (
                {"document_id": chunk[0]} if len(chunk) == 1 else {"document_id": {"$in": chunk}}
            )
            self.collection.delete(where=where)

    def count(self) -> int:
        """Number of stored chunks."""
        return int(self.collection.count())

    def claim(self, kb_id: str, fresh: bool) -> None:
        """Record ``kb_id`` as the collection's owner (see :func:`.ownership.check_owner`).

        Raises:
            KnowledgeBaseError: Another knowledge base owns or uses the collection.
        """
        owner = (self.collection.metadata or {}).get(OWNER_KEY)
        check_owner("Chroma collection", self.collection.name, owner, kb_id, self.count(), fresh)
        if owner != kb_id:  # the distance stays in the collection's configuration
            self.collection.modify(metadata={OWNER_KEY: kb_id})

    def query(
        self,
        embedding: Sequence[float],
        top_k: int,
        filters: dict[str, Any] | None = None,
        access: Collection[str] | None = None,
    ) -> list[SearchHit]:
        """Nearest chunks to ``embedding``, best first, scored by cosine similarity; with
        ``access``, only chunks whose access key is one of them.

        Chroma's metadata filter costs far more than the search itself (it scans the
        metadata), so a restricted query first asks for :data:`OVERFETCH` times ``top_k``
        nearest chunks and keeps the readable ones; only when fewer than ``top_k`` of them are
        readable does it ask again with the access ``where``. Either way no other chunk
        leaves this method, and the result is the ``top_k`` nearest readable chunks.
        """
        if access is None:
            return self._nearest(embedding, top_k, filters, None)
        wanted = top_k * OVERFETCH
        hits = self._nearest(embedding, wanted, filters, None)
        readable = [h for h in hits if str(h.metadata.get(ACCESS_FIELD, PUBLIC)) in access]
        if len(readable) >= top_k or len(hits) < wanted:  # enough, or everything was seen
            return readable[:top_k]
        return self._nearest(embedding, top_k, filters, access)

    def _nearest(
        self,
        embedding: Sequence[float],
        top_k: int,
        filters: dict[str, Any] | None,
        access: Collection[str] | None,
    ) -> list[SearchHit]:
        query = VectorStoreQuery(
            query_embedding=list(embedding),
            similarity_top_k=top_k,
            filters=to_metadata_filters(filters, access),
        )
        try:
            result = self.vector_store.query(query)
        except Exception as e:  # chromadb raises bare exceptions for server faults
            raise BackendError(f"Chroma query failed: {e}") from e
        hits = []
        for node, similarity in zip(result.nodes or [], result.similarities or [], strict=False):
            meta = clean_metadata(node.metadata)
            hits.append(
                SearchHit(
                    chunk_id=node.node_id,
                    doc_id=str(meta.get("doc_id", node.ref_doc_id or "")),
                    text=node.get_content(),
                    # ChromaVectorStore reports exp(-distance); cosine distance = 1 - cos.
                    score=1.0 + math.log(similarity) if similarity > 0 else -1.0,
                    metadata=meta,
                )
            )
        return hits

    def iter_chunks(self, page_size: int = _PAGE) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """Every stored chunk as ``(chunk_id, text, metadata)``, in pages."""
        offset = 0
        while True:
            page = self.collection.get(
                include=["documents", "metadatas"], limit=page_size, offset=offset
            )
            ids = page["ids"]
            if not ids:
                return
            for chunk_id, text, meta in zip(ids, page["documents"], page["metadatas"], strict=True):
                yield chunk_id, text or "", clean_metadata(meta or {})
            offset += len(ids)

    def get_chunks(self, chunk_ids: Sequence[str]) -> dict[str, tuple[str, dict[str, Any]]]:
        """Text and metadata of the given chunk ids that exist."""
        if not chunk_ids:
            return {}
        page = self.collection.get(ids=list(chunk_ids), include=["documents", "metadatas"])
        return {
            i: (t or "", clean_metadata(m or {}))
            for i, t, m in zip(page["ids"], page["documents"], page["metadatas"], strict=True)
        }

    def get_vectors(self, chunk_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors of the given chunk ids that exist."""
        if not chunk_ids:
            return {}
        page = self.collection.get(ids=list(chunk_ids), include=["embeddings"])
        return {
            i: np.asarray(v, dtype=np.float32)
            for i, v in zip(page["ids"], page["embeddings"], strict=True)
        }


_INTERNAL_KEYS = frozenset({"document_id", "ref_doc_id"})


def clean_metadata(metadata: Any) -> dict[str, Any]:
    """Chunk metadata without LlamaIndex's bookkeeping keys (``_node_content``, ...)."""
    return {
        k: v for k, v in dict(metadata).items() if not k.startswith("_") and k not in _INTERNAL_KEYS
    }


def to_metadata_filters(
    filters: dict[str, Any] | None, access: Collection[str] | None = None
) -> MetadataFilters | None:
    """``{"field": value}`` (equality) or ``{"field": [a, b]}`` (any of) as LlamaIndex filters,
    and, with ``access``, the access keys a chunk must have one of."""
    if not filters and access is None:
        return None
    items: list[MetadataFilter | MetadataFilters] = []
    if access is not None:
        keys = sorted(access)
        items.append(MetadataFilter(key=ACCESS_FIELD, value=keys, operator=FilterOperator.IN))
    for key, value in (filters or {}).items():
        if isinstance(value, list | tuple | set):
            items.append(MetadataFilter(key=key, value=list(value), operator=FilterOperator.IN))
        else:
            items.append(MetadataFilter(key=key, value=value, operator=FilterOperator.EQ))
    return MetadataFilters(filters=items)


def _to_node(chunk: TextChunk, embedding: Sequence[float]) -> TextNode:
    node = TextNode(
        id_=chunk.chunk_id,
        text=chunk.text,
        metadata=dict(chunk.metadata),
        embedding=list(embedding),
        excluded_embed_metadata_keys=list(chunk.metadata),
        excluded_llm_metadata_keys=list(chunk.metadata),
    )
    node.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=chunk.doc_id)
    return node
