"""Seed-003 traversal over the agent graph, confined to the registered workspaces.

Uses the store-independent :func:`~llama_kb.stores.traversal.traverse_fetched`: start at a node
(cost 0), follow relations summing their weights, keep nodes whose cheapest path costs at most
``max_cost`` (weight 0 = always loaded together). Relations leading into a workspace that is
not registered are not followed.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from llama_index.core.graph_stores.types import Relation

from llama_kb.agent_graph._snapshots import AGENT_KEY, relation_snapshot
from llama_kb.agent_graph.uris import parse_uri
from llama_kb.errors import QueryError
from llama_kb.stores.graph import KBGraphStore
from llama_kb.stores.traversal import Direction, TraversalStep, traverse_fetched

MAX_COST_LIMIT = 10.0
MAX_HOPS_LIMIT = 50
MAX_NODES_LIMIT = 1000
_CYCLE_SEARCH_NODES = 100_000


@dataclass
class Walk:
    """The steps of a traversal and the relations it followed."""

    steps: list[TraversalStep] = field(default_factory=list)

    def relations(self) -> list[dict[str, Any]]:
        """The followed relations as snapshots, with the path cost of the node they reached."""
        return [
            {**relation_snapshot(s.relation), "path_cost": s.path_cost, "hops": s.hops}
            for s in self.steps
        ]


def _workspace(uri: str) -> str | None:
    try:
        return parse_uri(uri).workspace
    except QueryError:
        return None


def walk(
    store: KBGraphStore,
    start: str,
    workspaces: Collection[str],
    max_cost: float = 1.0,
    max_hops: int = 10,
    max_nodes: int = 100,
    direction: Direction = "out",
    zero_weight_only: bool = False,
) -> Walk:
    """Cost-bounded search from ``start`` over agent relations inside ``workspaces``.

    Raises:
        QueryError: A limit is out of range or ``direction`` is unknown.
    """
    if not 0 <= max_cost <= MAX_COST_LIMIT:  # also rejects NaN
        raise QueryError(f"max_cost must be between 0 and {MAX_COST_LIMIT:g}, not {max_cost!r}")
    if not 1 <= max_hops <= MAX_HOPS_LIMIT and not zero_weight_only:
        raise QueryError(f"max_hops must be between 1 and {MAX_HOPS_LIMIT}, not {max_hops}")
    if not 1 <= max_nodes <= MAX_NODES_LIMIT and not zero_weight_only:
        raise QueryError(f"max_nodes must be between 1 and {MAX_NODES_LIMIT}, not {max_nodes}")
    allowed = set(workspaces)

    def fetch(ids: list[str]) -> list[Relation]:
        out = []
        for _, rel, _ in store.get_triplets(ids=ids):  # type: ignore[attr-defined]
            if AGENT_KEY not in rel.properties:
                continue
            if _workspace(rel.source_id) in allowed and _workspace(rel.target_id) in allowed:
                out.append(rel)
        return out

    def existing(ids: set[str]) -> set[str]:
        return {n.id for n in store.get(ids=list(ids))}  # type: ignore[attr-defined]

    steps = traverse_fetched(
        [start],
        fetch,
        existing,
        max_cost=max_cost,
        max_hops=max_hops,
        max_nodes=max_nodes,
        direction=direction,
    )
    return Walk(steps)


def closes_zero_cycle(
    store: KBGraphStore, source: str, target: str, workspaces: Collection[str]
) -> bool:
    """Whether a weight-0 relation ``source -> target`` would close a cycle of weight-0 relations.

    Such a cycle would make every node on it "always loaded together" with itself forever;
    it is rejected rather than stored.
    """
    if source == target:
        return True
    reached = walk(
        store,
        target,
        workspaces,
        max_cost=0.0,
        max_hops=_CYCLE_SEARCH_NODES,
        max_nodes=_CYCLE_SEARCH_NODES,
        direction="out",
        zero_weight_only=True,
    )
    return any(step.target == source for step in reached.steps)
