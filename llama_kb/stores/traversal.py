"""Cost-bounded graph traversal (seed 003), independent of where relations are stored.

Start nodes cost 0; following a relation adds its weight (0..1); a node is reached when
its cheapest path within ``max_hops`` edges costs at most ``max_cost``. Weight-0 relations
always pull their neighbour in (they still count as a hop). Backends supply a loader that
fetches the relations of many nodes at once, so the search costs one query per frontier.
"""

from __future__ import annotations

import heapq
import numbers
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from llama_index.core.graph_stores.types import Relation

from llama_kb.errors import DocumentError, QueryError

Direction = Literal["out", "in", "both"]
Adjacency = dict[str, list[tuple[float, str, str, Any]]]
"""node id -> [(weight, neighbour id, relation type, relation key)], filled by a loader."""

PREFETCH = 2000  # most nodes whose relations one loader call fetches
COST_EPSILON = 1e-9  # so that 0.1 + 0.2 + 0.7 still fits a budget of 1.0


@dataclass(frozen=True)
class TraversalStep:
    """One edge a traversal followed to reach a node for the first time (cheapest path).

    Attributes:
        relation: The stored relation, in its real direction (``relation.source_id`` ->
            ``relation.target_id``), with ``weight`` in ``relation.properties``.
        source: Id of the node the traversal came from.
        target: Id of the node reached through ``relation``.
        path_cost: Sum of the weights on the cheapest path from a start node to ``target``.
        hops: Number of edges on that path.
    """

    relation: Relation
    source: str
    target: str
    path_cost: float
    hops: int

    @property
    def forward(self) -> bool:
        """True when the edge was followed in its own direction (``source`` is its subject)."""
        return self.relation.source_id == self.source


def cost_bounded_search(
    start_ids: Iterable[str],
    load: Callable[[list[str], Adjacency], None],
    resolve: Callable[[list[Any]], dict[Any, Relation]],
    existing: Callable[[set[str]], set[str]],
    max_cost: float = 1.0,
    max_hops: int = 3,
    max_nodes: int = 100,
    relation_types: list[str] | None = None,
    direction: Direction = "both",
) -> list[TraversalStep]:
    """Dijkstra-like search expanding nodes in order of (cost, hops, id).

    Args:
        start_ids: Start nodes; ids the store does not hold are ignored.
        load: Fills ``adjacency`` for the given node ids (every id gets a list).
        resolve: Relation keys (from the adjacency) -> stored relations.
        existing: Which of the given ids exist.
        max_cost: Budget for the summed weights of a path (``math.inf`` for none).
        max_hops: Most edges on a path.
        max_nodes: Most nodes reached besides the start nodes (the cheapest are kept).
        relation_types: Only these relation types (``None``: all). Used to short-cut ``[]``.
        direction: Validated here; the loader applies it.

    Returns:
        For each reached node, the step that reached it by its cheapest path, ordered by
        (path_cost, hops, target id).
    """
    if direction not in ("out", "in", "both"):
        raise QueryError(f"direction must be 'out', 'in' or 'both', not {direction!r}")
    if not max_cost >= 0:  # also rejects NaN
        raise QueryError(f"max_cost must be a number >= 0, not {max_cost!r}")
    if max_hops < 0 or max_nodes < 0:
        raise QueryError("max_hops and max_nodes must be >= 0")
    starts = list(dict.fromkeys(start_ids))
    if not starts or max_nodes == 0 or max_hops == 0 or relation_types == []:
        return []
    budget = max_cost + COST_EPSILON
    starts = sorted(existing(set(starts)))
    adjacency: Adjacency = {}
    # Pareto labels (cost, hops) per node: a costlier label is kept only if it has fewer
    # hops, because it may still reach further within max_hops.
    labels: dict[str, list[tuple[float, int]]] = {s: [(0.0, 0)] for s in starts}
    heap: list[tuple[float, int, str, str, Any]] = [(0.0, 0, s, "", -1) for s in starts]
    heapq.heapify(heap)
    reached = set(starts)
    picked: list[tuple[float, int, str, str, Any]] = []
    while heap:
        entry = heapq.heappop(heap)
        cost, hops, node = entry[0], entry[1], entry[2]
        if (cost, hops) not in labels.get(node, ()):
            continue  # superseded by a better label
        if node not in reached:
            reached.add(node)
            picked.append(entry)
            if len(picked) >= max_nodes:
                break
        if hops >= max_hops:
            continue
        if node not in adjacency:
            pending = [node] + [e[2] for e in heap if e[1] < max_hops and e[2] not in adjacency]
            load(list(dict.fromkeys(pending))[:PREFETCH], adjacency)
        for weight, other, _type, rel_key in adjacency[node]:
            new_cost = cost + weight
            if new_cost > budget:
                continue
            new_hops = hops + 1
            existing_labels = labels.setdefault(other, [])
            if any(c <= new_cost and h <= new_hops for c, h in existing_labels):
                continue
            existing_labels[:] = [
                (c, h) for c, h in existing_labels if not (new_cost <= c and new_hops <= h)
            ]
            existing_labels.append((new_cost, new_hops))
            heapq.heappush(heap, (new_cost, new_hops, other, node, rel_key))
    relations = resolve([e[4] for e in picked])
    return [
        TraversalStep(relation=relations[key], source=via, target=node, path_cost=cost, hops=hops)
        for cost, hops, node, via, key in picked
    ]


def traverse_fetched(
    start_ids: Iterable[str],
    fetch: Callable[[list[str]], Iterable[Relation]],
    existing: Callable[[set[str]], set[str]],
    max_cost: float = 1.0,
    max_hops: int = 3,
    max_nodes: int = 100,
    relation_types: Iterable[str] | None = None,
    direction: Direction = "both",
) -> list[TraversalStep]:
    """:func:`cost_bounded_search` for stores that fetch the relations touching given nodes.

    Args:
        start_ids: Start nodes.
        fetch: The relations that touch any of the given node ids (duplicates are fine).
        existing: Which of the given ids exist.
        max_cost: See :func:`cost_bounded_search`.
        max_hops: See :func:`cost_bounded_search`.
        max_nodes: See :func:`cost_bounded_search`.
        relation_types: Only follow these relation types.
        direction: Follow relations ``"out"`` (source to target), ``"in"`` or ``"both"``.
    """
    types = None if relation_types is None else list(dict.fromkeys(relation_types))
    relations: dict[Any, Relation] = {}

    def load(ids: list[str], adjacency: Adjacency) -> None:
        for node_id in ids:
            adjacency[node_id] = []
        for rel in fetch(ids):
            if rel.source_id == rel.target_id or (types is not None and rel.label not in types):
                continue
            key = (rel.source_id, rel.label, rel.target_id)
            relations.setdefault(key, rel)
            weight = relation_weight(rel)
            if direction != "in" and rel.source_id in adjacency:
                adjacency[rel.source_id].append((weight, rel.target_id, rel.label, key))
            if direction != "out" and rel.target_id in adjacency:
                adjacency[rel.target_id].append((weight, rel.source_id, rel.label, key))
        for node_id in ids:
            adjacency[node_id] = sorted(set(adjacency[node_id]))

    return cost_bounded_search(
        start_ids,
        load,
        lambda _keys: relations,
        existing,
        max_cost,
        max_hops,
        max_nodes,
        relation_types=types,
        direction=direction,
    )


def relation_weight(relation: Relation) -> float:
    """The traversal cost stored in ``relation.properties["weight"]`` (1.0 when absent)."""
    value = relation.properties.get("weight", 1.0)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 1.0


def validate_weight(value: Any, source: str) -> float:
    """A relation weight checked for storage: a number from 0 to 1 (``None`` means 1.0).

    Raises:
        DocumentError: ``value`` is not a number from 0 to 1; ``source`` names the relation.
    """
    if value is None:
        return 1.0
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise DocumentError(source, f"weight must be a number from 0 to 1, not {value!r}")
    weight = float(value)
    if not (0.0 <= weight <= 1.0):  # also rejects NaN
        raise DocumentError(source, f"weight must be between 0 and 1, not {value!r}")
    return weight
