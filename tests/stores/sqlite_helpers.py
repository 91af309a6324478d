"""Helpers for the SQLite graph store tests (importable: ``tests/stores`` is on the path)."""

from __future__ import annotations

from llama_index.core.graph_stores.types import Relation

from llama_kb.stores.sqlite_graph import SQLitePropertyGraphStore
from llama_kb.stores.traversal import TraversalStep


def rel(source: str, label: str, target: str, weight: float | None = None, **props) -> Relation:
    if weight is not None:
        props["weight"] = weight
    return Relation(label=label, source_id=source, target_id=target, properties=props)


def chain(store: SQLitePropertyGraphStore, *edges: tuple[str, str, float]) -> None:
    store.upsert_relations([rel(s, "R", t, w) for s, t, w in edges])


def reached(steps: list[TraversalStep]) -> dict[str, float]:
    return {step.target: step.path_cost for step in steps}


def triples(triplets) -> list[tuple[str, str, str]]:
    return [(s.id, r.label, t.id) for s, r, t in triplets]
