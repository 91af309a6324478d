"""Adapt any LlamaIndex ``PropertyGraphStore`` to what llama-kb needs (:class:`KBGraphStore`).

Used by ``UnifiedContextRetriever.from_indexes`` for a user's existing ``PropertyGraphIndex``
(e.g. on ``SimplePropertyGraphStore``). Everything goes through the LlamaIndex API, so it
works on any store but reads relations with ``get_triplets``; the embedded SQLite store
and the server stores implement the protocol natively and are returned unchanged.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import Any

from llama_index.core.graph_stores.types import (
    EntityNode,
    LabelledNode,
    PropertyGraphStore,
    Relation,
    Triplet,
)

from llama_kb.access import readable
from llama_kb.stores.graph import KBGraphStore
from llama_kb.stores.traversal import (
    Direction,
    TraversalStep,
    relation_weight,
    traverse_fetched,
)


def adapt_graph_store(store: Any) -> KBGraphStore:
    """``store`` itself when it already is a :class:`KBGraphStore`, else an adapter."""
    if isinstance(store, KBGraphStore):
        return store
    if not isinstance(store, PropertyGraphStore):
        raise TypeError(f"expected a LlamaIndex PropertyGraphStore, got {type(store).__name__}")
    return PropertyGraphAdapter(store)


class PropertyGraphAdapter:
    """A :class:`KBGraphStore` over a plain LlamaIndex ``PropertyGraphStore``.

    ``revision`` counts writes made through this adapter; call :meth:`touch` after writing
    to the underlying store directly so retrievers rebuild their index.
    """

    def __init__(self, store: PropertyGraphStore) -> None:
        self.store = store
        self._revision = 0

    @property
    def revision(self) -> int:
        """Writes seen through this adapter."""
        return self._revision

    def touch(self) -> None:
        """Declare that the underlying store changed."""
        self._revision += 1

    def get(
        self, properties: dict[str, Any] | None = None, ids: list[str] | None = None
    ) -> list[LabelledNode]:
        """Nodes matching every given filter."""
        return list(self.store.get(properties=properties, ids=ids))

    def get_triplets(
        self,
        entity_names: list[str] | None = None,
        relation_names: list[str] | None = None,
        properties: dict[str, Any] | None = None,
        ids: list[str] | None = None,
    ) -> list[Triplet]:
        """Triplets matching every given filter."""
        return list(
            self.store.get_triplets(
                entity_names=entity_names,
                relation_names=relation_names,
                properties=properties,
                ids=ids,
            )
        )

    def upsert_nodes(self, nodes: Sequence[LabelledNode]) -> None:
        """Insert or update nodes."""
        self.store.upsert_nodes(list(nodes))
        self.touch()

    def upsert_relations(self, relations: list[Relation]) -> None:
        """Insert or update relations."""
        self.store.upsert_relations(relations)
        self.touch()

    def delete(
        self,
        entity_names: list[str] | None = None,
        relation_names: list[str] | None = None,
        properties: dict | None = None,
        ids: list[str] | None = None,
    ) -> None:
        """Delete matching nodes."""
        if entity_names or relation_names or properties or ids:
            self.store.delete(entity_names, relation_names, properties, ids)
            self.touch()

    def delete_by_property(self, key: str, value: Any) -> int:
        """Delete nodes whose property ``key`` equals ``value``."""
        return self.delete_by_values(key, [value])

    def delete_by_values(self, key: str, values: Sequence[Any]) -> int:
        """Delete nodes whose property ``key`` equals one of ``values``."""
        found = (n.id for value in values for n in self.store.get(properties={key: value}))
        matches = list(dict.fromkeys(found))
        if matches:
            self.delete(ids=matches)
        return len(matches)

    def delete_orphan_entities(self, label: str = "entity") -> int:
        """Delete nodes of ``label`` that no relation touches."""
        linked = {n for s, t, _, _ in self.iter_relations() for n in (s, t)}
        orphans = [n.id for n in self.store.get() if n.label == label and n.id not in linked]
        if orphans:
            self.delete(ids=orphans)
        return len(orphans)

    def named_nodes(
        self, labels: Iterable[str] | None = None, ids: Iterable[str] | None = None
    ) -> list[tuple[str, str, str]]:
        """``(id, name, label)`` of named (non-chunk) nodes."""
        wanted = None if labels is None else set(labels)
        nodes = self.store.get(ids=list(ids)) if ids is not None else self.store.get()
        return [
            (n.id, n.name, n.label)
            for n in nodes
            if isinstance(n, EntityNode) and (wanted is None or n.label in wanted)
        ]

    def nodes_with_incoming(self, ids: Iterable[str]) -> set[str]:
        """Those of ``ids`` that some relation points to."""
        wanted = set(ids)
        return {t for _, t, _, _ in self.iter_relations() if t in wanted}

    def relations_among(
        self, ids: Iterable[str], access: Collection[str] | None = None
    ) -> list[Relation]:
        """Relations whose source and target are both in ``ids`` (readable with ``access``)."""
        wanted = set(ids)
        return [
            rel
            for _, rel, _ in self.store.get_triplets(ids=list(wanted))
            if rel.source_id in wanted
            and rel.target_id in wanted
            and readable(rel.properties, access)
        ]

    def iter_relations(
        self, relation_types: Iterable[str] | None = None
    ) -> Iterator[tuple[str, str, str, float]]:
        """Relations as ``(source, target, type, weight)`` (all of them when no types)."""
        if relation_types is not None:
            triplets = self.store.get_triplets(relation_names=list(relation_types))
        else:  # get_triplets needs a filter: ask for the relations of every node
            triplets = self.store.get_triplets(ids=[n.id for n in self.store.get()])
        for _, rel, _ in triplets:
            yield rel.source_id, rel.target_id, rel.label, relation_weight(rel)

    def traverse(
        self,
        start_ids: Iterable[str],
        max_cost: float = 1.0,
        max_hops: int = 3,
        max_nodes: int = 100,
        relation_types: Iterable[str] | None = None,
        direction: Direction = "both",
        access: Collection[str] | None = None,
    ) -> list[TraversalStep]:
        """Cost-bounded traversal (see :mod:`llama_kb.stores.traversal`)."""

        def fetch(ids: list[str]) -> Iterable[Relation]:
            triplets = self.store.get_triplets(ids=ids)
            return (rel for _, rel, _ in triplets if readable(rel.properties, access))

        def existing(ids: set[str]) -> set[str]:
            return {n.id for n in self.store.get(ids=list(ids))}

        return traverse_fetched(
            start_ids, fetch, existing, max_cost, max_hops, max_nodes, relation_types, direction
        )

    def count_nodes(self, label: str | None = None) -> int:
        """Number of nodes (of ``label``)."""
        return sum(1 for n in self.store.get() if label is None or n.label == label)

    def count_relations(self, relation_type: str | None = None) -> int:
        """Number of relations (of ``relation_type``)."""
        types = None if relation_type is None else [relation_type]
        return sum(1 for _ in self.iter_relations(types))

    def close(self) -> None:
        """Nothing to release; the user owns the store."""
