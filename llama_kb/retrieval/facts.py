"""Facts from the graph: cost-bounded traversal from seed entities, as readable triples."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_kb import graph_model as gm
from llama_kb.retrieval.index import IndexSnapshot
from llama_kb.retrieval.payload import Fact


def graph_facts(
    graph: Any,
    snapshot: IndexSnapshot,
    seeds: Sequence[str],
    max_cost: float,
    max_hops: int,
    max_nodes: int,
    limit: int,
) -> list[Fact]:
    """Facts along the relations reached from ``seeds`` within the cost budget (seed 003).

    A chunk endpoint is shown as its document (``PART_OF`` edges themselves are not facts),
    and the chunk id is kept in ``source_ids``. Facts are deduplicated, nearest first.
    """
    if not seeds:
        return []
    steps = graph.traverse(list(seeds), max_cost=max_cost, max_hops=max_hops, max_nodes=max_nodes)
    merged: dict[tuple[str, str, str], Fact] = {}
    for step in steps:
        relation = step.relation
        if relation.label == gm.PART_OF:
            continue
        subject_id, subject_source = _display_node(snapshot, relation.source_id)
        object_id, object_source = _display_node(snapshot, relation.target_id)
        if subject_id == object_id:
            continue
        key = (subject_id, relation.label, object_id)
        sources = tuple(s for s in (subject_source, object_source) if s)
        previous = merged.get(key)
        if previous is None or step.path_cost < previous.path_cost:
            merged[key] = Fact(
                subject=snapshot.names.get(subject_id, subject_id),
                predicate=relation.label,
                object=snapshot.names.get(object_id, object_id),
                subject_id=subject_id,
                object_id=object_id,
                source_ids=_union(previous.source_ids if previous else (), sources),
                path_cost=round(step.path_cost, 6),
                hops=step.hops,
            )
        else:
            merged[key] = Fact(
                **{**previous.__dict__, "source_ids": _union(previous.source_ids, sources)}
            )
    ordered = sorted(
        merged.values(), key=lambda f: (f.path_cost, f.hops, f.subject, f.predicate, f.object)
    )
    return ordered[:limit]


def _display_node(snapshot: IndexSnapshot, node_id: str) -> tuple[str, str | None]:
    """A chunk is shown as its document node; returns ``(display id, chunk id or None)``."""
    row = snapshot.row_of.get(node_id)
    if row is None:
        return node_id, None
    return snapshot.doc_node_of_row[row], node_id


def _union(first: tuple[str, ...], second: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(first + second))
