"""A restricted view of the SQLite search index answers as an index of the visible rows only."""

from __future__ import annotations

import random

from llama_index.core.graph_stores.types import ChunkNode, Relation

from llama_kb import graph_model as gm
from llama_kb.stores.sqlite_graph import SQLitePropertyGraphStore

WORDS = "falcon heron robot budget launch satellite lyon berlin secret plan board lead"
WORDS_LIST = WORDS.split()


def _chunks(seed: int, count: int, access: str) -> list[ChunkNode]:
    rng = random.Random(seed)
    return [
        ChunkNode(
            text=" ".join(rng.choice(WORDS_LIST) for _ in range(rng.randint(3, 40))),
            id_=f"{access}-{i}",
            properties={"doc_id": f"{access}-{i}", "access": access},
        )
        for i in range(count)
    ]


def _store(chunks: list[ChunkNode], hub_links: list[str]) -> SQLitePropertyGraphStore:
    store = SQLitePropertyGraphStore(":memory:")
    store.upsert_nodes([*chunks, gm.entity_node("Falcon")])
    store.upsert_relations(
        [Relation(label=gm.MENTIONS, source_id=c, target_id="entity:falcon") for c in hub_links]
    )
    return store


def test_scoped_bm25_names_and_caps_equal_an_index_of_the_visible_rows() -> None:
    public, private = _chunks(1, 60, "public"), _chunks(2, 90, "user:bob")
    mixed = _store(public + private, [c.id_ for c in private] + [c.id_ for c in public])
    alone = _store(public, [c.id_ for c in public])
    view = mixed.search_index.scoped(frozenset({"public"}))
    plain = alone.search_index
    rng = random.Random(3)
    for _ in range(30):
        terms = rng.sample(WORDS_LIST, rng.randint(1, 4))
        got, want = view.lexical(terms, 10), plain.lexical(terms, 10)
        assert [c for c, _ in got] == [c for c, _ in want]
        assert all(abs(a - b) < 1e-9 for (_, a), (_, b) in zip(got, want, strict=True))
    assert view.chunk_count() == plain.chunk_count() == 60
    assert view.name_stats(["entity:falcon"]) == plain.name_stats(["entity:falcon"])
    capped = view.name_links(["entity:falcon"], 8)["entity:falcon"]
    assert len(capped) == 8 and all(c.startswith("public-") for c, _ in capped)
    assert view.chunk_records(["user:bob-1"]) == {}
    assert mixed.search_index.scoped(frozenset({"user:carol"})).name_forms(["falcon"]) == []


def test_a_views_common_word_counts_are_kept_until_a_write() -> None:
    public, private = _chunks(1, 60, "public"), _chunks(2, 90, "user:bob")
    more = [
        ChunkNode(
            text=c.text, id_=f"new-{i}", properties={"doc_id": f"new-{i}", "access": "public"}
        )
        for i, c in enumerate(_chunks(4, 30, "public"))
    ]
    mixed = _store(public + private, [])
    statements: list[str] = []
    mixed._db.connection().set_trace_callback(statements.append)
    counted = lambda: sum("JOIN chunk_access a ON a.rowid = f.rowid" in s for s in statements)  # noqa: E731
    terms = WORDS_LIST[:4]  # each in most chunks: common, so their visible counts are asked
    first = mixed.search_index.scoped(frozenset({"public"})).lexical(terms, 10)
    asked = counted()
    assert asked > 0
    assert mixed.search_index.scoped(frozenset({"public"})).lexical(terms, 10) == first
    assert counted() == asked  # kept for this revision and view
    mixed.upsert_nodes(more)
    after = mixed.search_index.scoped(frozenset({"public"})).lexical(terms, 10)
    assert counted() > asked  # a write: counted again
    want = _store(public + more, []).search_index.lexical(terms, 10)
    assert [c for c, _ in after] == [c for c, _ in want]
