"""The graph walk (PPR read from the store as it spreads) on small real SQLite graphs."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from llama_index.core.graph_stores.types import ChunkNode

from llama_kb import graph_model as gm
from llama_kb.retrieval.walk import LocalGraph, personalized_pagerank
from llama_kb.stores.sqlite_graph import SQLitePropertyGraphStore


def build(tmp_path, titles: list[tuple[int, str]], mentions: list[tuple[int, str]], n: int):
    graph = SQLitePropertyGraphStore(tmp_path / "graph.sqlite")
    names = {name for _, name in titles + mentions}
    graph.upsert_nodes([gm.NamedNode(id_=f"doc:{x}", name=x, label=gm.DOCUMENT) for x in names])
    graph.upsert_nodes(
        [ChunkNode(text=f"chunk {i}", id_=f"c{i}", label=gm.CHUNK, properties={}) for i in range(n)]
    )
    graph.upsert_relations(
        [gm.relation(f"c{i}", gm.PART_OF, f"doc:{x}", 0.0) for i, x in titles]
        + [gm.relation(f"c{i}", gm.MENTIONS, f"doc:{x}", 0.5) for i, x in mentions]
    )
    return graph


@pytest.fixture
def chain(tmp_path) -> Iterator[LocalGraph]:
    # chunk 0 is about A and mentions B; chunk 1 is about B and mentions C; chunk 2 about C;
    # chunk 3 is about D, which nobody mentions
    graph = build(tmp_path, [(0, "A"), (1, "B"), (2, "C"), (3, "D")], [(0, "B"), (1, "C")], 4)
    yield LocalGraph(graph.search_index, 4)
    graph.close()


def walk(graph: LocalGraph, names: list[str], chunks: dict[str, float] | None = None):
    seeds = {f"doc:{n}": 1.0 for n in names}
    return personalized_pagerank(graph, chunks or {}, seeds, damping=0.7, steps=15)


def test_ppr_follows_mentions_to_the_bridge_passage(chain: LocalGraph) -> None:
    scores = walk(chain, ["A"])
    assert sorted(scores, key=lambda c: -scores[c])[:3] == ["c0", "c1", "c2"]
    assert "c3" not in scores


def test_title_pull_makes_a_name_lead_to_its_own_page(chain: LocalGraph) -> None:
    scores = walk(chain, ["B"])
    assert max(scores, key=scores.__getitem__) == "c1"  # B's page beats c0, which mentions B


def test_ppr_without_seeds_is_empty_and_unknown_names_lead_nowhere(chain: LocalGraph) -> None:
    assert walk(chain, []) == {}
    assert walk(chain, ["nobody"]) == {}


def test_coverage_counts_the_query_entities_a_chunk_touches(chain: LocalGraph) -> None:
    assert chain.coverage(["doc:A", "doc:B"]) == {"c0": 2, "c1": 1}
    assert chain.coverage(["doc:nobody"]) == {}


def test_a_name_only_one_chunk_mentions_is_not_a_loop(tmp_path) -> None:
    # chunk 0 is about A and is the only one to mention X; chunk 1 is also about A
    graph = build(tmp_path, [(0, "A"), (1, "A")], [(0, "X")], 2)
    local = LocalGraph(graph.search_index, 2)
    scores = walk(local, ["A"])
    assert scores["c0"] == pytest.approx(scores["c1"])  # X does not pump mass back into c0
    seeded = walk(local, ["X"])
    assert seeded["c0"] > seeded.get("c1", 0.0)  # but a seed on X still reaches its chunk
    graph.close()


def test_a_hub_reads_at_most_cap_chunks_and_keeps_its_stored_total(tmp_path) -> None:
    n = 10_001
    # chunk 0 is the hub's own page; 10,000 chunks mention the hub
    graph = build(tmp_path, [(0, "Hub")], [(i, "Hub") for i in range(1, n)], n)
    local = LocalGraph(graph.search_index, n, cap=50)
    scores = walk(local, ["Hub"])
    assert len(local.name_chunks["doc:Hub"]) == 50
    assert local.name_chunks["doc:Hub"][0] == ("c0", True)  # its own page first
    stats = local.stats["doc:Hub"]
    assert (stats.titles, stats.mentions) == (1, 10_000)
    # the mentions read get 1/(100 + 10000) of the hub's mass each, not a 1/50 share
    assert scores["c1"] < scores["c0"] / 50
    graph.close()


def test_a_step_spreads_from_at_most_frontier_names(tmp_path) -> None:
    # chunk 0 is about Seed and mentions 60 names; chunk i is the page of name i
    names = [f"N{i:02d}" for i in range(1, 61)]
    titles = [(0, "Seed"), *((i, name) for i, name in enumerate(names, 1))]
    graph = build(tmp_path, titles, [(0, name) for name in names], 61)
    wide, narrow = LocalGraph(graph.search_index, 61), LocalGraph(graph.search_index, 61)
    seeds = {"doc:Seed": 1.0}
    everywhere = personalized_pagerank(wide, {}, seeds, damping=0.7, steps=15, frontier=100)
    bounded = personalized_pagerank(narrow, {}, seeds, damping=0.7, steps=15, frontier=8)
    assert len(wide.name_chunks) == 61 and len(everywhere) == 61
    assert len(narrow.name_chunks) <= 1 + 8  # the seed, then the same 8 heaviest each step
    assert max(bounded, key=bounded.__getitem__) == "c0"
    assert sorted(bounded) == [f"c{i}" for i in range(8)]  # Seed's page and 7 names' pages
    graph.close()


def test_the_step_into_a_name_that_titles_nothing_is_weighted_down(tmp_path) -> None:
    # chunk 0 is about A and mentions B (a page) and X (a name no document is about)
    graph = build(tmp_path, [(0, "A"), (1, "B")], [(0, "B"), (0, "X"), (2, "X")], 3)
    graph.upsert_relations([gm.relation("c2", gm.MENTIONS, "doc:B", 0.5)])

    def step(untitled_weight: float) -> dict[str, float]:
        local = LocalGraph(graph.search_index, 3, untitled_weight=untitled_weight)
        local.load_chunks(["c0"])
        return dict(local.chunk_out("c0"))

    plain, weighted = step(1.0), step(0.3)
    graph.close()
    assert set(plain) == set(weighted) == {"doc:A", "doc:B", "doc:X"}
    assert weighted["doc:X"] / weighted["doc:B"] == pytest.approx(
        0.3 * plain["doc:X"] / plain["doc:B"]
    )
    assert weighted["doc:A"] / weighted["doc:B"] == pytest.approx(plain["doc:A"] / plain["doc:B"])
