"""Layer 3: knowledge nodes and relations in the knowledge base's graph store."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

from llama_index.core.graph_stores.types import LabelledNode, Relation, Triplet

from llama_kb.access import ACCESS_FIELD, PUBLIC, Principal
from llama_kb.graph_model import NamedNode
from llama_kb.knowledge.model import GraphEdge, GraphNode
from llama_kb.knowledge.writes import WriteStatus
from llama_kb.stores.graph import KBGraphStore

ORIGIN = "knowledge"
"""Value of the ``origin`` property on graph nodes and relations written by the loader."""


class KnowledgeGraph:
    """Knowledge nodes and relations in the knowledge base's graph store.

    Reads use the ``get`` / ``get_triplets`` methods of the graph-store protocol.

    Args:
        graph: The knowledge base's graph store.
    """

    def __init__(self, graph: KBGraphStore) -> None:
        self.graph = graph

    def existing_nodes(self, node_ids: Iterable[str]) -> set[str]:
        """Those of ``node_ids`` that are stored."""
        ids = list(dict.fromkeys(node_ids))
        return {n.id for n in self.graph.get(ids=ids)} if ids else set()

    def upsert_node(self, node: GraphNode) -> WriteStatus:
        """Insert or update one node."""
        stored = _graph_node(node)
        old = self.graph.get(ids=[node.node_id])
        if old and _same_node(old[0], stored):
            return WriteStatus.UNCHANGED
        self.graph.upsert_nodes([stored])
        return WriteStatus.UPDATED if old else WriteStatus.ADDED

    def upsert_edge(self, edge: GraphEdge) -> WriteStatus:
        """Insert or update one relation (both endpoints must exist)."""
        props = {**edge.properties, "weight": edge.weight, "origin": ORIGIN,
                 ACCESS_FIELD: edge.permissions or PUBLIC}  # fmt: skip
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
            for _, rel, _ in self.graph.get_triplets(
                ids=[edge.source_id], relation_names=[edge.edge_type]
            )
            if rel.source_id == edge.source_id and rel.target_id == edge.target_id
        ]
        if old and _normalise(old[0].properties) == _normalise(stored.properties):
            return WriteStatus.UNCHANGED
        self.graph.upsert_relations([stored])
        return WriteStatus.UPDATED if old else WriteStatus.ADDED

    def neighbourhood(
        self, start_id: str, depth: int, reader: Principal | None = None
    ) -> list[tuple[Triplet, int]]:
        """Knowledge relations within ``depth`` hops of ``start_id``, breadth first.

        Relations are followed in both directions. A relation's depth is the BFS level at
        which it is first met (1 = it touches ``start_id``). Within a level relations are
        ordered by (type, source id, target id). Only relations ``reader`` (default:
        anonymous) may read are followed.

        Returns:
            ``(triplet, depth)`` pairs, each relation once.
        """
        if depth <= 0:
            return []
        reader = reader or Principal()
        visited = {start_id}
        frontier = [start_id]
        seen: set[tuple[str, str, str]] = set()
        found: list[tuple[Triplet, int]] = []
        for level in range(1, depth + 1):
            triplets = self.graph.get_triplets(ids=frontier)
            triplets = sorted(
                (
                    t
                    for t in triplets
                    if t[1].properties.get("origin") == ORIGIN
                    and reader.can_read(str(t[1].properties.get(ACCESS_FIELD, PUBLIC)))
                ),
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
        properties={**node.properties, "origin": ORIGIN, ACCESS_FIELD: node.permissions or PUBLIC},
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
