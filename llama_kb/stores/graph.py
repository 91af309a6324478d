"""What llama-kb needs from a graph store, beyond LlamaIndex's ``PropertyGraphStore``.

The embedded :class:`~llama_kb.stores.sqlite_graph.SQLitePropertyGraphStore` implements it
natively; server stores are adapted to it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol, runtime_checkable

from llama_index.core.graph_stores.types import LabelledNode, Relation


@runtime_checkable
class KBGraphStore(Protocol):
    """A property graph store with the extra operations llama-kb relies on."""

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

    def relations_among(self, ids: Iterable[str]) -> list[Relation]:
        """Relations whose source and target are both in ``ids``."""
        ...

    def iter_relations(
        self, relation_types: Iterable[str] | None = None
    ) -> Iterator[tuple[str, str, str, float]]:
        """Every relation as ``(source, target, type, weight)``."""
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
