"""What llama-kb needs from a graph store, beyond LlamaIndex's ``PropertyGraphStore``.

Every backend implements :class:`KBGraphStore`, :meth:`~KBGraphStore.traverse` included: the
embedded :class:`~llama_kb.stores.sqlite_graph.SQLitePropertyGraphStore`, the Neo4j and
FalkorDB stores (through :mod:`llama_kb.stores.cypher`) and, for a user's own LlamaIndex
``PropertyGraphStore``, :class:`~llama_kb.stores.adapters.PropertyGraphAdapter`. Callers use
the protocol's methods directly, never the backend's type.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import Any, Protocol, runtime_checkable

from llama_index.core.graph_stores.types import LabelledNode, Relation, Triplet

from llama_kb.stores.traversal import Direction, TraversalStep


@runtime_checkable
class KBGraphStore(Protocol):
    """A property graph store with the extra operations llama-kb relies on."""

    def get(
        self, properties: dict[str, Any] | None = None, ids: list[str] | None = None
    ) -> list[LabelledNode]:
        """Nodes matching every given filter (LlamaIndex ``PropertyGraphStore.get``)."""
        ...

    def get_triplets(
        self,
        entity_names: list[str] | None = None,
        relation_names: list[str] | None = None,
        properties: dict[str, Any] | None = None,
        ids: list[str] | None = None,
    ) -> list[Triplet]:
        """``(subject, relation, object)`` matching every filter (``PropertyGraphStore``)."""
        ...

    def upsert_nodes(self, nodes: Sequence[LabelledNode]) -> None:
        """Insert or update nodes."""
        ...

    def upsert_relations(self, relations: list[Relation]) -> None:
        """Insert or update relations (missing endpoints are created)."""
        ...

    def delete(
        self,
        entity_names: list[str] | None = None,
        relation_names: list[str] | None = None,
        properties: dict | None = None,
        ids: list[str] | None = None,
    ) -> None:
        """Delete matching nodes (and their relations)."""
        ...

    def delete_by_property(self, key: str, value: Any) -> int:
        """Delete nodes whose property ``key`` equals ``value``; returns how many."""
        ...

    def delete_by_values(self, key: str, values: Sequence[Any]) -> int:
        """Delete nodes whose property ``key`` equals one of ``values``; returns how many."""
        ...

    def delete_orphan_entities(self, label: str = "entity") -> int:
        """Delete nodes of ``label`` left without any relation; returns how many."""
        ...

    def named_nodes(
        self, labels: Iterable[str] | None = None, ids: Iterable[str] | None = None
    ) -> list[tuple[str, str, str]]:
        """``(id, name, label)`` of nodes that have a name, filtered by labels or ids."""
        ...

    def nodes_with_incoming(self, ids: Iterable[str]) -> set[str]:
        """Those of ``ids`` that some relation points to."""
        ...

    def relations_among(
        self, ids: Iterable[str], access: Collection[str] | None = None
    ) -> list[Relation]:
        """Relations whose source and target are both in ``ids`` (with an access key in
        ``access``, when given)."""
        ...

    def iter_relations(
        self, relation_types: Iterable[str] | None = None
    ) -> Iterator[tuple[str, str, str, float]]:
        """Every relation as ``(source, target, type, weight)``."""
        ...

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
        """Cost-bounded search from ``start_ids`` (seed 003's traversal).

        Start nodes cost 0. Following a relation adds its weight; a node is reached when its
        cheapest path (within ``max_hops`` edges) costs at most ``max_cost``. Weight-0
        relations therefore always pull their neighbour in (they still count as a hop). See
        :mod:`llama_kb.stores.traversal` for the search every backend shares.

        Args:
            start_ids: Ids of the start nodes; ids that are not stored are ignored.
            max_cost: Budget for the summed weights of a path (``math.inf`` for no budget).
            max_hops: Most edges on a path.
            max_nodes: Most nodes reached besides the start nodes (the cheapest are kept).
            relation_types: Only follow relations of these types (all when ``None``).
            direction: ``"out"`` follows relations from source to target, ``"in"`` from
                target to source, ``"both"`` either way.
            access: Only follow relations whose access key is one of these (all: ``None``).

        Returns:
            For each reached node, the step that reached it by its cheapest path, ordered by
            (path_cost, hops, target id).

        Raises:
            QueryError: A limit is negative or ``direction`` is unknown.
        """
        ...

    def count_nodes(self, label: str | None = None) -> int:
        """Number of nodes (of ``label``)."""
        ...

    def count_relations(self, relation_type: str | None = None) -> int:
        """Number of relations (of ``relation_type``)."""
        ...

    @property
    def revision(self) -> int:
        """Increases on every committed write."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...
