"""Tests for the SQLite graph store's cost-bounded traversal (seed 003)."""

from __future__ import annotations

import math

import pytest
from sqlite_helpers import chain, reached, rel

from llama_kb.errors import QueryError
from llama_kb.stores.sqlite_graph import SQLitePropertyGraphStore

pytest_plugins = ["sqlite_fixtures"]  # db_path, store, movie_graph

# ------------------------------------------------------------------------------------------
# traversal


def test_traverse_budget_sums_weights(store: SQLitePropertyGraphStore) -> None:
    chain(store, ("A", "B", 0.5), ("B", "C", 0.5), ("C", "D", 0.5))
    chain(store, ("P", "Q", 0.6), ("Q", "R", 0.6))
    assert reached(store.traverse(["A"])) == {"B": 0.5, "C": 1.0}
    assert reached(store.traverse(["P"])) == {"Q": 0.6}
    assert reached(store.traverse(["A"], max_cost=1.5)) == {"B": 0.5, "C": 1.0, "D": 1.5}
    steps = store.traverse(["A"])
    assert [(s.source, s.target, s.hops) for s in steps] == [("A", "B", 1), ("B", "C", 2)]


def test_traverse_float_sums_fit_the_budget(store: SQLitePropertyGraphStore) -> None:
    chain(store, ("A", "B", 0.1), ("B", "C", 0.2), ("C", "D", 0.7))
    assert "D" in reached(store.traverse(["A"], max_hops=5))


def test_traverse_weight_zero_always_followed(store: SQLitePropertyGraphStore) -> None:
    chain(store, ("A", "B", 1.0), ("B", "C", 0.0), ("B", "D", 0.01), ("C", "E", 0.0))
    assert reached(store.traverse(["A"])) == {"B": 1.0, "C": 1.0, "E": 1.0}
    assert reached(store.traverse(["B"], max_cost=0.0)) == {"C": 0.0, "E": 0.0}


def test_traverse_cheapest_path_wins(store: SQLitePropertyGraphStore) -> None:
    # A->D directly costs 0.9; via B and C it costs 0.3.
    chain(store, ("A", "D", 0.9), ("A", "B", 0.1), ("B", "C", 0.1), ("C", "D", 0.1))
    chain(store, ("D", "E", 0.6))
    steps = {s.target: s for s in store.traverse(["A"], max_hops=4)}
    assert steps["D"].path_cost == pytest.approx(0.3)
    assert (steps["D"].source, steps["D"].hops) == ("C", 3)
    assert steps["E"].path_cost == pytest.approx(0.9)


def test_traverse_hop_cap_keeps_shorter_costlier_paths(store: SQLitePropertyGraphStore) -> None:
    # Cheapest path to D has 3 hops; with max_hops=2 the 1-hop path (0.5) must be used, and it
    # still leaves a hop to reach E.
    chain(store, ("A", "B", 0.1), ("B", "C", 0.1), ("C", "D", 0.1), ("A", "D", 0.5))
    chain(store, ("D", "E", 0.1))
    got = reached(store.traverse(["A"], max_hops=2))
    assert got["D"] == pytest.approx(0.5)
    assert got["E"] == pytest.approx(0.6)
    assert reached(store.traverse(["A"], max_hops=1)) == {"B": 0.1, "D": 0.5}


def test_traverse_max_nodes_keeps_cheapest_deterministically(
    store: SQLitePropertyGraphStore,
) -> None:
    chain(store, ("S", "z", 0.1), ("S", "y", 0.1), ("S", "x", 0.2), ("S", "w", 0.05))
    steps = store.traverse(["S"], max_nodes=3)
    assert [s.target for s in steps] == ["w", "y", "z"]
    assert store.traverse(["S"], max_nodes=0) == []


def test_traverse_direction_and_relation_types(store: SQLitePropertyGraphStore) -> None:
    store.upsert_relations(
        [rel("A", "r", "B", 0.1), rel("C", "r", "A", 0.1), rel("A", "other", "D", 0.1)]
    )
    assert set(reached(store.traverse(["A"], direction="out"))) == {"B", "D"}
    assert set(reached(store.traverse(["A"], direction="in"))) == {"C"}
    assert set(reached(store.traverse(["A"]))) == {"B", "C", "D"}
    assert set(reached(store.traverse(["A"], relation_types=["r"]))) == {"B", "C"}
    [step] = store.traverse(["A"], direction="in")
    assert (step.source, step.target, step.forward) == ("A", "C", False)
    assert (step.relation.source_id, step.relation.target_id) == ("C", "A")
    assert step.relation.properties == {"weight": 0.1}


def test_traverse_edge_cases(store: SQLitePropertyGraphStore) -> None:
    chain(store, ("A", "B", 0.1), ("B", "A", 0.1), ("A", "A", 0.0))
    assert reached(store.traverse(["A", "B"])) == {}
    assert store.traverse(["missing"]) == []
    assert store.traverse([]) == []
    assert store.traverse(["A"], max_hops=0) == []
    assert store.traverse(["A"], relation_types=[]) == []
    with pytest.raises(QueryError):
        store.traverse(["A"], direction="sideways")  # type: ignore[arg-type]
    with pytest.raises(QueryError):
        store.traverse(["A"], max_cost=-1)
    assert reached(store.traverse(["A"], max_cost=math.inf)) == {"B": 0.1}


def test_traverse_many_starts_and_large_frontier(store: SQLitePropertyGraphStore) -> None:
    # More than one IN batch of start nodes and of frontier nodes.
    edges = [(f"s{i}", f"t{i}", 0.5) for i in range(1200)]
    edges += [(f"t{i}", f"u{i}", 0.5) for i in range(1200)]
    chain(store, *edges)
    steps = store.traverse([f"s{i}" for i in range(1200)], max_nodes=10_000)
    assert len(steps) == 2400
    assert sum(s.hops == 2 for s in steps) == 1200
