"""Facts from the graph: cost-bounded traversal from seed entities, as readable triples."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from llama_index.core.graph_stores.types import Relation

from llama_kb import graph_model as gm
from llama_kb.retrieval.index import Candidates
from llama_kb.retrieval.payload import Fact
from llama_kb.stores.graph import KBGraphStore
from llama_kb.stores.traversal import COST_EPSILON


def graph_facts(
    graph: KBGraphStore,
    view: Candidates,
    seeds: Sequence[str],
    max_cost: float,
    max_hops: int,
    max_nodes: int,
    limit: int,
) -> list[Fact]:
    """Facts along the relations reached from ``seeds`` within the cost budget (seed 003).

    Besides the edges the traversal followed, relations *between* reached nodes count too
    (e.g. a direct link between two seeds), costed from their cheaper endpoint. A chunk
    endpoint is shown as its document (``PART_OF`` edges are not facts) and the chunk id
    is kept in ``source_ids``. Facts are deduplicated, nearest first.
    """
    if not seeds:
        return []
    access = view.index.visible
    steps = graph.traverse(
        list(seeds), max_cost=max_cost, max_hops=max_hops, max_nodes=max_nodes, access=access
    )
    reached: dict[str, tuple[float, int]] = {s: (0.0, 0) for s in seeds}
    candidates: list[tuple[Relation, float, int]] = []
    for step in steps:
        reached.setdefault(step.target, (step.path_cost, step.hops))
        candidates.append((step.relation, step.path_cost, step.hops))
    for relation in graph.relations_among(list(reached), access):
        cost, hops = min(reached[relation.source_id], reached[relation.target_id])
        cost += float(relation.properties.get("weight", 1.0))
        if cost <= max_cost + COST_EPSILON:
            candidates.append((relation, cost, hops + 1))
    ends = {e for relation, _, _ in candidates for e in (relation.source_id, relation.target_id)}
    view.fetch(ends)  # the chunk ends: shown as their document
    view.names.update(view.index.display_names([*ends, *map(view.doc_node, view.records)]))
    return merge_facts(list(_to_facts(view, candidates)), [], limit)


def merge_facts(first: Sequence[Fact], second: Sequence[Fact], limit: int) -> list[Fact]:
    """Deduplicate facts by (subject, predicate, object), nearest first, at most ``limit``."""
    merged = _merge([*first, *second])
    return sorted(merged, key=lambda f: (f.path_cost, f.hops, f.subject, f.predicate, f.object))[
        :limit
    ]


def _to_facts(
    view: Candidates, candidates: Iterable[tuple[Relation, float, int]]
) -> Iterable[Fact]:
    for relation, cost, hops in candidates:
        if relation.label == gm.PART_OF:
            continue
        subject_id, subject_source = _display_node(view, relation.source_id)
        object_id, object_source = _display_node(view, relation.target_id)
        if subject_id == object_id:
            continue
        yield Fact(
            subject=view.names.get(subject_id, subject_id),
            predicate=relation.label,
            object=view.names.get(object_id, object_id),
            subject_id=subject_id,
            object_id=object_id,
            source_ids=tuple(s for s in (subject_source, object_source) if s),
            path_cost=round(cost, 6),
            hops=hops,
            chunk_id=_str_or_none(relation.properties.get("chunk_id")) or subject_source,
            extractor=_extractor(relation),
        )


def _merge(facts: Iterable[Fact]) -> list[Fact]:
    """One fact per (subject, predicate, object): the cheapest, with every source id."""
    merged: dict[tuple[str, str, str], Fact] = {}
    for fact in facts:
        key = (fact.subject_id, fact.predicate, fact.object_id)
        previous = merged.get(key)
        if previous is None:
            merged[key] = fact
            continue
        best = fact if fact.path_cost < previous.path_cost else previous
        sources = tuple(dict.fromkeys(previous.source_ids + fact.source_ids))
        merged[key] = Fact(**{**best.__dict__, "source_ids": sources})
    return list(merged.values())


def _display_node(view: Candidates, node_id: str) -> tuple[str, str | None]:
    """A chunk is shown as its document node; returns ``(display id, chunk id or None)``."""
    if node_id not in view.records:
        return node_id, None
    return view.doc_node(node_id), node_id


def _extractor(relation: Relation) -> str:
    """``graph`` for structural edges, else the producer named on the relation."""
    if relation.label in gm.STRUCTURAL_RELATIONS:
        return "graph"
    named = relation.properties.get("extractor")
    if isinstance(named, str) and named:
        return named
    return "llm" if "chunk_id" in relation.properties else "knowledge"


def _str_or_none(value: Any) -> str | None:
    return str(value) if value else None
