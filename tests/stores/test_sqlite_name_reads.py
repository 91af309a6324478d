"""The SQLite search index keeps names' chunk lists and counts across queries, per revision and
view: read once, read again after a write, never kept from inside a write transaction."""

from __future__ import annotations

import pytest
from llama_index.core.graph_stores.types import ChunkNode, Relation

from llama_kb import graph_model as gm
from llama_kb.stores import _sqlite_writes
from llama_kb.stores._sqlite_rows import _now, _relation_row
from llama_kb.stores.sqlite_graph import SQLitePropertyGraphStore

PUBLIC = frozenset({"public"})
NAMES = ["entity:falcon", "nothing"]


def _chunk(i: int, access: str) -> ChunkNode:
    return ChunkNode(text=f"falcon {i}", id_=f"{access}-{i}",
                     properties={"doc_id": f"{access}-{i}", "access": access})  # fmt: skip


def _mention(chunk: ChunkNode) -> Relation:
    return Relation(label=gm.MENTIONS, source_id=chunk.id_, target_id="entity:falcon",
                    properties={"access": chunk.properties["access"]})  # fmt: skip


@pytest.fixture
def store() -> SQLitePropertyGraphStore:
    chunks = [_chunk(i, "public") for i in range(20)] + [_chunk(i, "user:bob") for i in range(30)]
    store = SQLitePropertyGraphStore(":memory:")
    store.upsert_nodes([*chunks, gm.entity_node("Falcon")])
    store.upsert_relations([_mention(c) for c in chunks])
    return store


def _link_reads(store: SQLitePropertyGraphStore) -> list[str]:
    statements: list[str] = []
    store._db.connection().set_trace_callback(statements.append)
    return statements


def _reads(statements: list[str]) -> int:
    return sum(" FROM relations WHERE" in s or " FROM name_" in s for s in statements)


def test_names_are_read_once_per_revision_and_view_and_again_after_a_write(store) -> None:
    statements = _link_reads(store)
    first = store.search_index.name_links(NAMES, 100)
    stats = store.search_index.name_stats(NAMES)
    read = _reads(statements)
    assert len(first["entity:falcon"]) == 50 and stats["entity:falcon"].mentions == 50
    assert store.search_index.name_links(NAMES, 100) == first  # another query, same revision
    assert store.search_index.name_stats(NAMES) == stats
    assert _reads(statements) == read
    public = store.search_index.scoped(PUBLIC)
    assert len(public.name_links(NAMES, 100)["entity:falcon"]) == 20  # the view reads its own
    assert public.name_stats(NAMES)["entity:falcon"].mentions == 20
    assert len(store.search_index.name_links(NAMES, 8)["entity:falcon"]) == 8  # another cap
    late = _chunk(99, "public")
    store.upsert_nodes([late])
    store.upsert_relations([_mention(late)])
    after = store.search_index.name_links(NAMES, 100)["entity:falcon"]
    assert ("public-99", False) in after and len(after) == 51
    assert store.search_index.scoped(PUBLIC).name_stats(NAMES)["entity:falcon"].mentions == 21


def test_reads_inside_a_write_transaction_are_not_kept(store) -> None:
    late = _chunk(77, "public")
    store.upsert_nodes([late])
    before = store.search_index.name_links(NAMES, 100)
    with pytest.raises(RuntimeError), store._db.write() as conn:
        conn.executemany(_sqlite_writes._UPSERT_RELATION, [_relation_row(_mention(late), _now())])
        inside = store.search_index.name_links(NAMES, 100)["entity:falcon"]
        assert ("public-77", False) in inside  # the writer sees its own rows
        assert store.search_index.name_stats(NAMES)["entity:falcon"].mentions == 51
        raise RuntimeError("roll back")
    assert store.search_index.name_links(NAMES, 100) == before
    assert store.search_index.name_stats(NAMES)["entity:falcon"].mentions == 50


def test_kept_and_new_names_come_back_in_the_order_asked(store) -> None:
    store.upsert_nodes([gm.entity_node("Heron")])
    store.upsert_relations([Relation(label=gm.MENTIONS, source_id="public-1",
                                     target_id="entity:heron")])  # fmt: skip
    store.search_index.name_links(["entity:falcon"], 100)  # kept
    asked = ["nothing", "entity:heron", "entity:falcon"]
    assert list(store.search_index.name_links(asked, 100)) == asked
    store.search_index.name_stats(["entity:falcon"])
    assert list(store.search_index.name_stats(["entity:heron", "entity:falcon"])) == [
        "entity:heron",
        "entity:falcon",
    ]
