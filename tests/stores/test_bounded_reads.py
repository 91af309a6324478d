"""Query-time reads of the SQLite store are bounded: a hub with 10,000 edges costs what a node
with a few hundred does (counted in SQLite VM steps, not seconds)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from llama_index.core.graph_stores.types import ChunkNode
from search_helpers import nearest

from llama_kb import graph_model as gm
from llama_kb.stores.search import LexicalPruning
from llama_kb.stores.sqlite_graph import SQLitePropertyGraphStore


def hub_graph(path: Path, degree: int) -> SQLitePropertyGraphStore:
    store = SQLitePropertyGraphStore(path)
    store.upsert_nodes([gm.NamedNode(id_="doc:hub", name="Hub", label=gm.DOCUMENT)])
    store.upsert_nodes(
        [ChunkNode(text=f"text {i}", id_=f"c{i}", label=gm.CHUNK) for i in range(degree)]
    )
    # weights fall with i, so the cheapest edges are the last ones written
    store.upsert_relations(
        [gm.relation(f"c{i}", gm.MENTIONS, "doc:hub", 1.0 - i / degree) for i in range(degree)]
    )
    return store


def vm_steps(store: SQLitePropertyGraphStore, work: Callable[[], object]) -> int:
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0

    store.client.set_progress_handler(count, 100)
    try:
        work()
    finally:
        store.client.set_progress_handler(None, 0)
    return steps


def test_traversal_from_a_hub_reads_its_cheapest_edges_only(tmp_path: Path) -> None:
    costs = {}
    for degree in (300, 10_000):
        with hub_graph(tmp_path / f"{degree}.sqlite", degree) as store:
            steps = store.traverse(["doc:hub"], max_cost=5.0, max_hops=1, max_nodes=50)
            assert len(steps) == 50
            # the cheapest 50 edges, in cost order
            assert [s.target for s in steps][:3] == [
                f"c{degree - 1}",
                f"c{degree - 2}",
                f"c{degree - 3}",
            ]

            def run(store: SQLitePropertyGraphStore = store) -> object:
                return store.traverse(["doc:hub"], max_cost=5.0, max_hops=1, max_nodes=50)

            costs[degree] = vm_steps(store, run)
    assert costs[10_000] <= 2 * costs[300] + 50


def test_name_neighbourhood_of_a_hub_is_capped(tmp_path: Path) -> None:
    costs = {}
    for degree in (300, 10_000):
        with hub_graph(tmp_path / f"{degree}.sqlite", degree) as store:
            index = store.search_index
            links = index.name_links(["doc:hub"], 64)["doc:hub"]
            assert len(links) == 64
            assert index.name_stats(["doc:hub"])["doc:hub"].mentions == degree

            def run(index=index) -> object:  # type: ignore[no-untyped-def]
                return index.name_links(["doc:hub"], 64), index.name_stats(["doc:hub"])

            costs[degree] = vm_steps(store, run)
    assert costs[10_000] <= 2 * costs[300] + 50


def test_lexical_words_are_kept_rarest_first_within_the_postings_budget() -> None:
    pruning = LexicalPruning()
    df = {"rare": 5, "odd": 50, "usual": 3_000, "plain": 1_800, "common": 20_000}
    words = list(df)
    # 100k chunks: "common" is over 10 % of them; the budget (4,000 postings) then takes
    # rare + odd + plain, and "usual" would pass it
    assert pruning.informative(words, df, 100_000) == ["rare", "odd", "plain"]
    # the two rarest are kept whatever they cost
    assert pruning.informative(["usual", "common"], df, 100_000) == ["usual", "common"]
    small = {w: n // 100 for w, n in df.items()}  # a hundredth of the counts: all fit
    assert pruning.informative(words, small, 10_000) == words


def test_lexical_top_k_breaks_ties_by_id_with_or_without_filters(tmp_path: Path) -> None:
    with SQLitePropertyGraphStore(tmp_path / "g.sqlite") as store:
        store.upsert_nodes(
            [ChunkNode(text="quasar " + "filler " * (i % 3), id_=f"c{i:04d}", label=gm.CHUNK,
                       properties={"doc_id": "d"}) for i in range(3_000)]
        )  # fmt: skip
        index = store.search_index
        best = index.lexical(["quasar"], 5)
        # the shortest texts score best; among those equal ones, the smallest ids
        assert [c for c, _ in best] == ["c0000", "c0003", "c0006", "c0009", "c0012"]
        assert len({s for _, s in best}) == 1
        with_filter = index.lexical(["quasar"], 5, {"doc_id": "d"})
        assert [c for c, _ in with_filter] == [c for c, _ in best]
        scoped = index.scoped(frozenset({"public"})).lexical(["quasar"], 5)  # every row visible
        assert [c for c, _ in scoped] == [c for c, _ in best]


def test_fuzzy_name_lookup_ranks_as_if_it_read_every_holders_name(tmp_path: Path) -> None:
    from llama_kb.stores._sqlite_index import name_gram_df
    from llama_kb.stores.search import contenders, ranked_by_shared, shared_grams

    # names sharing 1, 2 or 3 of the span's rare trigrams, of many lengths: ties in count are
    # broken by length, so the contenders at the k-th count must all be read
    crowd = [f"Qzx{'w' * (i % 7)} Vby{'k' * (i % 5)}" for i in range(400)]
    crowd += [f"Item {i} Qzx" for i in range(300)] + ["Qzxw Vbyk Jqp"]
    with SQLitePropertyGraphStore(tmp_path / "g.sqlite") as store:
        store.upsert_nodes([gm.entity_node(n) for n in crowd])
        index = store.search_index
        for span, k in [("Qzxw Vbyk Jqp", 5), ("Qzx Vby", 16), ("Qzxww", 3)]:
            grams = {span[i : i + 3] for i in range(len(span) - 2)} - {"   "}
            cap = index.gram_postings_budget + 1
            df = {g: min(name_gram_df(store.client, g), cap) for g in grams}
            holders = {
                g: [u for (u,) in store.client.execute(
                    "SELECT n.uri FROM name_fts JOIN nodes n ON n.rowid = name_fts.rowid "
                    "WHERE name_fts MATCH ?", [f'"{g}"'])]
                for g in index.kept_grams(df)
            }  # fmt: skip
            names = index.display_names(sorted({u for us in holders.values() for u in us}))
            every = ranked_by_shared(shared_grams(holders), names, span, k)
            assert index.similar_names([span], k) == {span: every}, span
    shared = {"a": 3, "b": 2, "c": 2, "d": 1}
    assert sorted(contenders(shared, 2)) == ["a", "b", "c"]  # b and c tie at the 2nd count
    assert sorted(contenders(shared, 9)) == ["a", "b", "c", "d"]
    assert contenders(shared, 0) == [] and contenders({}, 3) == []


def test_fuzzy_name_counts_kept_between_lookups_move_with_a_write(tmp_path: Path) -> None:
    with SQLitePropertyGraphStore(tmp_path / "g.sqlite") as store:
        store.upsert_nodes([gm.entity_node("Harlow Quayside")])
        index = store.search_index
        assert nearest(index, "Zyxwv Pkog", 3) == []  # no name holds its trigrams
        store.upsert_nodes([gm.entity_node("Zyxwv Pkog")])
        assert nearest(index, "Zyxwv Pkog", 3) == [gm.entity_node_id("Zyxwv Pkog")]
