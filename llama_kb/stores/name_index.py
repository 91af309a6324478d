"""Vectors of graph node names, for linking names the exact matcher misses.

A separate Chroma collection beside the chunks: ids are graph node ids, documents are the
names. Ingestion adds the names of new documents and entities; removal deletes them; a
stale entry (a node deleted elsewhere) is ignored at query time by the caller.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any


class NameIndex:
    """Nearest graph names to a vector.

    Args:
        collection: A Chroma collection created with cosine distance and no embedding
            function (see :func:`llama_kb.stores.chroma_vector.open_collection`).
    """

    def __init__(self, collection: Any) -> None:
        self.collection = collection

    def add(self, names: Sequence[tuple[str, str]], vectors: Sequence[Sequence[float]]) -> None:
        """Store ``(node_id, name)`` pairs with their name vectors (upsert)."""
        if names:
            self.collection.upsert(
                ids=[node_id for node_id, _ in names],
                documents=[name for _, name in names],
                embeddings=[list(v) for v in vectors],
            )

    def delete(self, node_ids: Sequence[str]) -> None:
        """Forget these nodes' names."""
        if node_ids:
            self.collection.delete(ids=list(node_ids))

    def existing(self, node_ids: Sequence[str]) -> set[str]:
        """Those of ``node_ids`` whose names are stored."""
        found: set[str] = set()
        for start in range(0, len(node_ids), 1000):
            part = list(node_ids[start : start + 1000])
            found.update(self.collection.get(ids=part, include=[])["ids"])
        return found

    def count(self) -> int:
        """Number of stored names."""
        return int(self.collection.count())

    def nearest(
        self, vectors: Sequence[Sequence[float]], k: int = 1
    ) -> list[list[tuple[str, float]]]:
        """For each vector, the ``k`` closest ``(node_id, cosine similarity)``."""
        if not vectors or self.count() == 0:
            return [[] for _ in vectors]
        result = self.collection.query(
            query_embeddings=[list(v) for v in vectors], n_results=k, include=["distances"]
        )
        return [
            [
                (node_id, 1.0 - float(d))
                for node_id, d in zip(ids, dists, strict=True)
                if not math.isnan(d)
            ]
            for ids, dists in zip(result["ids"], result["distances"], strict=True)
        ]
