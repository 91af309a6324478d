"""Reusing stored vectors: chunks whose embedded text is already stored are not embedded again.

Before a document is rewritten (changed, or its file moved inside a root), the vectors of its
stored chunks are read, keyed by the exact text they were embedded from (title prefix
included, see :func:`~llama_kb.ingest.chunker.embedding_text`). The new chunks look their text
up there and only the others go to the embedding model. The same knowledge base always uses
the same model, so a stored vector is the vector the model would return.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from typing import Any

from llama_kb.stores.chroma_vector import ChromaChunkStore

logger = logging.getLogger(__name__)

__all__ = ["StoredVectors", "text_key"]

_BATCH = 500


def text_key(title: Any, text: str) -> str:
    """The key of an embedded text: the chunk's title (or ``""``) and its text."""
    prefix = title if isinstance(title, str) else ""
    return hashlib.sha256(f"{prefix}\x00{text}".encode()).hexdigest()


class StoredVectors:
    """Vectors already in the vector store, by :func:`text_key`.

    Args:
        vectors: The knowledge base's chunk store.
    """

    def __init__(self, vectors: ChromaChunkStore) -> None:
        self.vectors = vectors
        self.reused = 0

    def read(self, doc_ids: Sequence[str]) -> dict[str, list[float]]:
        """The stored vectors of the chunks of ``doc_ids`` (empty when the store cannot say)."""
        found: dict[str, list[float]] = {}
        ids = list(dict.fromkeys(doc_ids))
        for start in range(0, len(ids), _BATCH):
            part = ids[start : start + _BATCH]
            where = {"document_id": part[0]} if len(part) == 1 else {"document_id": {"$in": part}}
            try:
                page = self.vectors.collection.get(
                    where=where, include=["documents", "metadatas", "embeddings"]
                )
            except Exception as e:  # reuse is only an optimisation
                logger.debug("stored vectors not readable (%s); embedding again", e)
                return {}
            for text, meta, vector in zip(
                page["documents"], page["metadatas"], page["embeddings"], strict=True
            ):
                if text is not None and vector is not None:
                    found[text_key((meta or {}).get("title"), text)] = list(vector)
        return found

    def embed(
        self,
        embedding: Any,
        keyed_texts: Sequence[tuple[str, str]],
        stored: dict[str, list[float]],
    ) -> list[list[float]]:
        """Vectors of ``(key, text)`` pairs: stored ones reused, the rest embedded in one batch.

        Args:
            embedding: The knowledge base's embedding model.
            keyed_texts: Each text to embed with its :func:`text_key`.
            stored: What :meth:`read` returned.
        """
        missing = [text for key, text in keyed_texts if key not in stored]
        fresh = iter(embedding.get_text_embedding_batch(missing) if missing else [])
        self.reused += len(keyed_texts) - len(missing)
        return [stored[key] if key in stored else next(fresh) for key, _ in keyed_texts]
