"""LlamaIndex's async graph store API for the SQLite store: the blocking calls in worker threads."""

from __future__ import annotations

import asyncio
from typing import Any

from llama_index.core.graph_stores.types import (
    LabelledNode,
    PropertyGraphStore,
    Relation,
    Triplet,
)
from llama_index.core.schema import BaseNode


class ThreadedAsyncGraphStore(PropertyGraphStore):
    """A ``PropertyGraphStore`` whose ``a*`` methods run the sync ones via ``asyncio.to_thread``.

    For stores whose sync methods block on local I/O and are safe to call from worker threads.
    """

    async def aget(
        self,
        properties: dict[str, Any] | None = None,
        ids: list[str] | None = None,
    ) -> list[LabelledNode]:
        """Async :meth:`get` (runs in a worker thread)."""
        return await asyncio.to_thread(self.get, properties, ids)

    async def aget_triplets(
        self,
        entity_names: list[str] | None = None,
        relation_names: list[str] | None = None,
        properties: dict[str, Any] | None = None,
        ids: list[str] | None = None,
    ) -> list[Triplet]:
        """Async :meth:`get_triplets` (runs in a worker thread)."""
        return await asyncio.to_thread(
            self.get_triplets, entity_names, relation_names, properties, ids
        )

    async def aget_rel_map(
        self,
        graph_nodes: list[LabelledNode],
        depth: int = 2,
        limit: int = 30,
        ignore_rels: list[str] | None = None,
    ) -> list[Triplet]:
        """Async :meth:`get_rel_map` (runs in a worker thread)."""
        return await asyncio.to_thread(self.get_rel_map, graph_nodes, depth, limit, ignore_rels)

    async def aget_llama_nodes(self, node_ids: list[str]) -> list[BaseNode]:
        """Async :meth:`get_llama_nodes` (runs in a worker thread)."""
        return await asyncio.to_thread(self.get_llama_nodes, node_ids)

    async def aupsert_nodes(self, nodes: list[LabelledNode]) -> None:
        """Async :meth:`upsert_nodes` (runs in a worker thread)."""
        await asyncio.to_thread(self.upsert_nodes, nodes)

    async def aupsert_relations(self, relations: list[Relation]) -> None:
        """Async :meth:`upsert_relations` (runs in a worker thread)."""
        await asyncio.to_thread(self.upsert_relations, relations)

    async def adelete(
        self,
        entity_names: list[str] | None = None,
        relation_names: list[str] | None = None,
        properties: dict[str, Any] | None = None,
        ids: list[str] | None = None,
    ) -> None:
        """Async :meth:`delete` (runs in a worker thread)."""
        await asyncio.to_thread(self.delete, entity_names, relation_names, properties, ids)
