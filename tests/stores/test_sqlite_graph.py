"""Tests for the embedded SQLite property graph store."""

from __future__ import annotations

import asyncio
import math
import os
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from llama_index.core.graph_stores.types import ChunkNode, EntityNode, Relation
from llama_index.core.schema import TextNode

import llama_kb.stores.sqlite_graph as sqlite_graph
from llama_kb.errors import BackendError, DocumentError, NotSupportedError, QueryError
from llama_kb.graph_model import NamedNode
from llama_kb.stores.sqlite_graph import SQLitePropertyGraphStore
from llama_kb.stores.traversal import TraversalStep

# The directory holding the ``llama_kb`` package under test, for child processes.
PACKAGE_ROOT = Path(sqlite_graph.__file__).absolute().parents[2]


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "kb" / "graph.sqlite"


@pytest.fixture
def store(db_path: Path):
    with SQLitePropertyGraphStore(db_path) as s:
        yield s


def rel(source: str, label: str, target: str, weight: float | None = None, **props) -> Relation:
    if weight is not None:
        props["weight"] = weight
    return Relation(label=label, source_id=source, target_id=target, properties=props)


def chain(store: SQLitePropertyGraphStore, *edges: tuple[str, str, float]) -> None:
    store.upsert_relations([rel(s, "R", t, w) for s, t, w in edges])


def reached(steps: list[TraversalStep]) -> dict[str, float]:
    return {step.target: step.path_cost for step in steps}


# ------------------------------------------------------------------------------------------
# round trips


def test_entity_and_chunk_round_trip(store: SQLitePropertyGraphStore) -> None:
    entity = EntityNode(name="Douglas Sirk", label="person", properties={"born": 1897, "x": [1]})
    chunk = ChunkNode(
        text="Douglas Sirk directed Magnificent Obsession.",
        id_="chunk://doc-1#0",
        properties={"doc_id": "doc-1", "page": 3, "flag": True, "none": None},
    )
    store.upsert_nodes([entity, chunk])

    got = {n.id: n for n in store.get()}
    assert set(got) == {"Douglas Sirk", "chunk://doc-1#0"}
    e = got["Douglas Sirk"]
    assert isinstance(e, EntityNode)
    assert (e.name, e.label, e.properties) == ("Douglas Sirk", "person", entity.properties)
    c = got["chunk://doc-1#0"]
    assert isinstance(c, ChunkNode)
    assert (c.text, c.label, c.properties) == (chunk.text, "text_chunk", chunk.properties)


def test_entity_with_explicit_id_keeps_its_id(store: SQLitePropertyGraphStore) -> None:
    class Named(EntityNode):
        id_: str

        @property
        def id(self) -> str:
            return self.id_

    store.upsert_nodes([Named(id_="entity:douglas-sirk", name="Douglas Sirk")])
    [node] = store.get(ids=["entity:douglas-sirk"])
    assert isinstance(node, NamedNode)
    assert (node.id, node.name, node.label) == ("entity:douglas-sirk", "Douglas Sirk", "entity")


def test_get_filters_by_ids_and_all_properties(store: SQLitePropertyGraphStore) -> None:
    store.upsert_nodes(
        [
            EntityNode(name="a", properties={"k": 1, "doc": "x"}),
            EntityNode(name="b", properties={"k": 1, "doc": "y"}),
            EntityNode(name="c", properties={"k": 2, "doc": "x"}),
        ]
    )
    assert [n.id for n in store.get(properties={"k": 1})] == ["a", "b"]
    assert [n.id for n in store.get(properties={"k": 1, "doc": "x"})] == ["a"]
    assert [n.id for n in store.get(ids=["c", "a", "zzz"])] == ["a", "c"]
    assert [n.id for n in store.get(ids=["a", "b"], properties={"doc": "y"})] == ["b"]
    assert store.get(properties={"k": "1"}) == []  # types count
    assert store.get(properties={"missing": None}) == []  # None matches JSON null only


def test_upsert_is_idempotent_and_replaces(store: SQLitePropertyGraphStore) -> None:
    nodes = [EntityNode(name="A"), EntityNode(name="B")]
    relations = [rel("A", "knows", "B", 0.5, since=2001)]
    for _ in range(3):
        store.upsert_nodes(nodes)
        store.upsert_relations(relations)
    assert (store.count_nodes(), store.count_relations()) == (2, 1)
    revision = store.revision

    store.upsert_nodes(nodes)  # identical data: nothing changes
    store.upsert_relations(relations)
    assert store.revision == revision

    store.upsert_relations([rel("A", "knows", "B", 0.25, since=2002)])
    [(_, r, _)] = store.get_triplets(ids=["A"])
    assert r.properties == {"since": 2002, "weight": 0.25}
    assert store.count_relations() == 1
    assert store.revision > revision


def test_upsert_keeps_created_at_and_refreshes_updated_at(store: SQLitePropertyGraphStore) -> None:
    store.upsert_nodes([EntityNode(name="A", properties={"v": 1})])
    (created, updated) = store.client.execute("SELECT created_at, updated_at FROM nodes").fetchone()
    store.client.execute("UPDATE nodes SET updated_at = '2000-01-01T00:00:00.000Z'")
    store.upsert_nodes([EntityNode(name="A", properties={"v": 2})])
    (created2, updated2) = store.client.execute(
        "SELECT created_at, updated_at FROM nodes"
    ).fetchone()
    assert created2 == created
    assert updated2 >= updated > "2000"


def test_relation_endpoints_are_created_and_not_overwritten(
    store: SQLitePropertyGraphStore,
) -> None:
    store.upsert_nodes([ChunkNode(text="hello", id_="c1", properties={"doc_id": "d"})])
    store.upsert_relations([rel("c1", "MENTIONS", "Hello World")])
    nodes = {n.id: n for n in store.get()}
    assert isinstance(nodes["c1"], ChunkNode) and nodes["c1"].text == "hello"
    assert isinstance(nodes["Hello World"], EntityNode)
    assert nodes["Hello World"].label == "entity"
    # A later upsert of the real node replaces the bare endpoint.
    store.upsert_nodes([EntityNode(name="Hello World", label="greeting", properties={"p": 1})])
    [node] = store.get(ids=["Hello World"])
    assert (node.label, node.properties) == ("greeting", {"p": 1})


def test_default_weight_and_weight_in_properties(store: SQLitePropertyGraphStore) -> None:
    store.upsert_relations([rel("A", "r", "B"), rel("A", "s", "B", 0)])
    got = {r.label: r.properties["weight"] for _, r, _ in store.get_triplets(ids=["A"])}
    assert got == {"r": 1.0, "s": 0.0}
    assert sorted(store.iter_relations()) == [("A", "B", "r", 1.0), ("A", "B", "s", 0.0)]


@pytest.mark.parametrize("weight", [-0.1, 1.5, float("nan"), "0.5", True, [0.5]])
def test_invalid_weight_is_rejected(store: SQLitePropertyGraphStore, weight: object) -> None:
    with pytest.raises(DocumentError, match="weight"):
        store.upsert_relations([rel("A", "r", "B", weight=weight)])  # type: ignore[arg-type]
    assert store.count_nodes() == 0


def test_failed_batch_leaves_store_unchanged(store: SQLitePropertyGraphStore) -> None:
    store.upsert_relations([rel("A", "r", "B", 0.5)])
    revision = store.revision
    batch = [rel("A", "r", "B", 0.1), rel("C", "r", "D", 0.5), rel("E", "r", "F", 2.0)]
    with pytest.raises(DocumentError):
        store.upsert_relations(batch)
    assert store.count_nodes() == 2
    assert list(store.iter_relations()) == [("A", "B", "r", 0.5)]
    assert store.revision == revision


def test_failure_inside_the_transaction_rolls_back(store: SQLitePropertyGraphStore) -> None:
    # The CHECK constraint is the last line of defence if validation is bypassed.
    store.upsert_nodes([EntityNode(name="A"), EntityNode(name="B")])
    revision = store.revision
    with pytest.raises(BackendError), store._write() as conn:
        conn.execute("DELETE FROM nodes WHERE uri = 'A'")
        conn.execute(
            "INSERT INTO relations (source_uri, target_uri, relation_type, weight, metadata,"
            " created_at, updated_at) VALUES ('B', 'B', 'x', 7, '{}', '', '')"
        )
    assert store.count_nodes() == 2
    assert store.revision == revision


def test_unserialisable_properties_are_stringified(store: SQLitePropertyGraphStore) -> None:
    store.upsert_nodes([EntityNode(name="A", properties={"path": Path("/tmp/x")})])
    assert store.get()[0].properties == {"path": "/tmp/x"}
    with pytest.raises(DocumentError, match="JSON"):
        store.upsert_nodes([EntityNode(name="B", properties={"v": float("inf")})])


# ------------------------------------------------------------------------------------------
# triplets and rel map


@pytest.fixture
def movie_graph(store: SQLitePropertyGraphStore) -> SQLitePropertyGraphStore:
    store.upsert_nodes(
        [
            EntityNode(name="Sirk", label="person", properties={"doc": "d1"}),
            EntityNode(name="Obsession", label="film", properties={"doc": "d1"}),
            EntityNode(name="Wyman", label="person", properties={"doc": "d2"}),
            EntityNode(name="Hudson", label="person"),
            EntityNode(name="Universal", label="studio"),
        ]
    )
    store.upsert_relations(
        [
            rel("Sirk", "directed", "Obsession", 0.5, origin="d1"),
            rel("Wyman", "starred_in", "Obsession", 0.5),
            rel("Hudson", "starred_in", "Obsession", 0.5),
            rel("Obsession", "produced_by", "Universal", 0.5),
            rel("Hudson", "SOURCE", "Universal", 0.5),
        ]
    )
    return store


def triples(triplets) -> list[tuple[str, str, str]]:
    return [(s.id, r.label, t.id) for s, r, t in triplets]


def test_get_triplets_filters(movie_graph: SQLitePropertyGraphStore) -> None:
    s = movie_graph
    assert s.get_triplets() == []
    assert triples(s.get_triplets(entity_names=["Sirk"])) == [("Sirk", "directed", "Obsession")]
    assert triples(s.get_triplets(ids=["Universal"])) == [
        ("Obsession", "produced_by", "Universal"),
        ("Hudson", "SOURCE", "Universal"),
    ]
    assert len(s.get_triplets(relation_names=["starred_in"])) == 2
    assert triples(s.get_triplets(entity_names=["Obsession"], relation_names=["starred_in"])) == [
        ("Wyman", "starred_in", "Obsession"),
        ("Hudson", "starred_in", "Obsession"),
    ]
    # properties match subject, relation or object
    assert triples(s.get_triplets(properties={"doc": "d2"})) == [
        ("Wyman", "starred_in", "Obsession")
    ]
    assert triples(s.get_triplets(properties={"origin": "d1"})) == [
        ("Sirk", "directed", "Obsession")
    ]
    assert triples(s.get_triplets(entity_names=["Obsession"], ids=["Hudson"])) == [
        ("Hudson", "starred_in", "Obsession")
    ]
    [(subj, _, obj)] = s.get_triplets(entity_names=["Sirk"])
    assert subj.label == "person" and obj.label == "film" and subj.properties == {"doc": "d1"}


def test_get_rel_map_depth_limit_and_ignore(movie_graph: SQLitePropertyGraphStore) -> None:
    s = movie_graph
    [sirk] = s.get(ids=["Sirk"])
    assert triples(s.get_rel_map([sirk], depth=1)) == [("Sirk", "directed", "Obsession")]
    two = triples(s.get_rel_map([sirk], depth=2))
    assert two[0] == ("Sirk", "directed", "Obsession")
    assert set(two[1:]) == {
        ("Wyman", "starred_in", "Obsession"),
        ("Hudson", "starred_in", "Obsession"),
        ("Obsession", "produced_by", "Universal"),
    }
    three = triples(s.get_rel_map([sirk], depth=3))
    assert ("Hudson", "SOURCE", "Universal") in three
    assert len(three) == len(set(three)) == 5
    assert ("Hudson", "SOURCE", "Universal") not in triples(
        s.get_rel_map([sirk], depth=3, ignore_rels=["SOURCE"])
    )
    assert len(s.get_rel_map([sirk], depth=3, limit=2)) == 2
    assert s.get_rel_map([], depth=2) == []
    assert s.get_rel_map([sirk], depth=0) == []


def test_get_rel_map_orders_by_start_node(movie_graph: SQLitePropertyGraphStore) -> None:
    universal, sirk = movie_graph.get(ids=["Universal", "Sirk"])[::-1]
    got = triples(movie_graph.get_rel_map([universal, sirk], depth=1))
    assert got == [
        ("Hudson", "SOURCE", "Universal"),
        ("Obsession", "produced_by", "Universal"),
        ("Sirk", "directed", "Obsession"),
    ]


# ------------------------------------------------------------------------------------------
# deletion


def test_delete_by_ids_and_names_cascades(movie_graph: SQLitePropertyGraphStore) -> None:
    s = movie_graph
    s.delete(ids=["Obsession"])
    assert s.count_nodes() == 4
    assert triples(s.get_triplets(relation_names=["directed", "starred_in", "produced_by"])) == []
    assert s.count_relations() == 1
    s.delete(entity_names=["Hudson"])
    assert s.count_relations() == 0
    assert {n.id for n in s.get()} == {"Sirk", "Wyman", "Universal"}


def test_delete_by_relation_names_keeps_nodes(movie_graph: SQLitePropertyGraphStore) -> None:
    movie_graph.delete(relation_names=["starred_in"])
    assert movie_graph.count_relations() == 3
    assert movie_graph.count_nodes() == 5


def test_delete_by_properties(movie_graph: SQLitePropertyGraphStore) -> None:
    s = movie_graph
    s.delete(properties={"doc": "d1"})  # nodes Sirk and Obsession
    assert {n.id for n in s.get()} == {"Wyman", "Hudson", "Universal"}
    assert triples(s.get_triplets(ids=["Hudson"])) == [("Hudson", "SOURCE", "Universal")]
    s.delete()  # no filter: nothing happens
    assert s.count_nodes() == 3


def test_delete_by_property_relation_metadata(store: SQLitePropertyGraphStore) -> None:
    store.upsert_relations([rel("A", "r", "B", triplet_source_id="c1"), rel("B", "r", "C")])
    store.delete(properties={"triplet_source_id": "c1"})
    assert list(store.iter_relations()) == [("B", "C", "r", 1.0)]
    assert store.count_nodes() == 3


def test_delete_by_property_and_orphans(store: SQLitePropertyGraphStore) -> None:
    store.upsert_nodes(
        [
            ChunkNode(text="one", id_="c1", properties={"doc_id": "a.md"}),
            ChunkNode(text="two", id_="c2", properties={"doc_id": "a.md"}),
            ChunkNode(text="three", id_="c3", properties={"doc_id": "b.md"}),
            EntityNode(name="Lonely"),
        ]
    )
    store.upsert_relations(
        [rel("c1", "MENTIONS", "X"), rel("c2", "MENTIONS", "Y"), rel("c3", "MENTIONS", "Y")]
    )
    assert store.delete_by_property("doc_id", "a.md") == 2
    assert store.delete_by_property("doc_id", "nope") == 0
    assert {n.id for n in store.get()} == {"c3", "X", "Y", "Lonely"}
    assert list(store.iter_relations()) == [("c3", "Y", "MENTIONS", 1.0)]
    assert store.delete_orphan_entities() == 2  # X and Lonely
    assert {n.id for n in store.get()} == {"c3", "Y"}
    assert store.delete_orphan_entities(label="text_chunk") == 0


def test_get_llama_nodes_of_no_ids_is_empty(store: SQLitePropertyGraphStore) -> None:
    store.upsert_llama_nodes([TextNode(text="hello", id_="n1", metadata={"doc_id": "d"})])
    assert store.get_llama_nodes([]) == []
    [node] = store.get_llama_nodes(["n1"])
    assert (node.id_, node.get_content(), node.metadata) == ("n1", "hello", {"doc_id": "d"})


def test_delete_llama_nodes_from_base_class(store: SQLitePropertyGraphStore) -> None:
    store.upsert_nodes([ChunkNode(text="t", id_="n1"), EntityNode(name="E")])
    store.upsert_relations([rel("n1", "r", "E")])
    store.delete_llama_nodes(node_ids=["n1"])
    assert [n.id for n in store.get()] == ["E"]
    assert store.count_relations() == 0


# ------------------------------------------------------------------------------------------
# persistence, schema, concurrency


def test_persists_across_instances(db_path: Path) -> None:
    with SQLitePropertyGraphStore(db_path) as first:
        first.upsert_nodes([EntityNode(name="A", properties={"k": "v"})])
        first.upsert_relations([rel("A", "r", "B", 0.3)])
        revision = first.revision
    with SQLitePropertyGraphStore(db_path) as second:
        assert second.get(ids=["A"])[0].properties == {"k": "v"}
        assert list(second.iter_relations()) == [("A", "B", "r", 0.3)]
        assert second.revision == revision


def test_persists_across_processes(db_path: Path, tmp_path: Path) -> None:
    code = textwrap.dedent(
        f"""
        from llama_index.core.graph_stores.types import ChunkNode, Relation
        from llama_kb.stores.sqlite_graph import SQLitePropertyGraphStore
        with SQLitePropertyGraphStore({str(db_path)!r}) as s:
            s.upsert_nodes([ChunkNode(text="from a child", id_="chunk://x#0")])
            s.upsert_relations([Relation(label="PART_OF", source_id="chunk://x#0",
                                         target_id="doc:x", properties={{"weight": 0.0}})])
        """
    )
    with SQLitePropertyGraphStore(db_path) as store:
        before = store.revision
        env = {**os.environ, "PYTHONPATH": str(PACKAGE_ROOT)}
        subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path, env=env, timeout=120)
        assert store.revision > before  # the same open store sees the other process's write
        [chunk] = store.get(ids=["chunk://x#0"])
        assert chunk.text == "from a child"
        assert list(store.iter_relations()) == [("chunk://x#0", "doc:x", "PART_OF", 0.0)]


def test_schema_pragmas_and_foreign_keys(store: SQLitePropertyGraphStore, db_path: Path) -> None:
    conn = store.client
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(
            "INSERT INTO relations (source_uri, target_uri, relation_type, created_at,"
            " updated_at) VALUES ('nope', 'nada', 'r', '', '')"
        )
    indexes = {r[1] for r in conn.execute("SELECT * FROM sqlite_master WHERE type = 'index'")}
    assert {"idx_relations_target", "idx_relations_type", "idx_nodes_name_ci"} <= indexes
    schema = store.get_schema()
    assert schema["schema_version"] == 1


def test_get_schema_counts(movie_graph: SQLitePropertyGraphStore) -> None:
    schema = movie_graph.get_schema()
    assert schema["node_labels"] == {"film": 1, "person": 3, "studio": 1}
    assert schema["relation_types"]["starred_in"] == 2
    assert "person" in movie_graph.get_schema_str()


def test_refuses_foreign_and_newer_databases(tmp_path: Path) -> None:
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE t (x)")
    with pytest.raises(BackendError, match="another application"):
        SQLitePropertyGraphStore(other)
    newer = tmp_path / "newer.sqlite"
    with sqlite3.connect(newer) as conn:
        conn.execute("PRAGMA user_version = 99")
    with pytest.raises(BackendError, match="newer llama-kb"):
        SQLitePropertyGraphStore(newer)
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(BackendError, match="not a usable SQLite database"):
        SQLitePropertyGraphStore(junk)


def test_memory_store_and_close() -> None:
    store = SQLitePropertyGraphStore(":memory:")
    store.upsert_nodes([EntityNode(name="A")])
    assert store.count_nodes() == 1
    store.close()
    assert store.closed
    with pytest.raises(BackendError, match="closed"):
        store.count_nodes()
    store.close()  # idempotent


def test_persist_is_a_no_op(store: SQLitePropertyGraphStore, tmp_path: Path) -> None:
    store.persist(str(tmp_path / "ignored.json"))
    assert not (tmp_path / "ignored.json").exists()


def test_concurrent_reads_and_writes_from_threads(store: SQLitePropertyGraphStore) -> None:
    chain(store, *[(f"n{i}", f"n{i + 1}", 0.1) for i in range(50)])
    errors: list[BaseException] = []

    def reader() -> None:
        try:
            for _ in range(30):
                assert len(store.traverse(["n0"], max_cost=0.35, max_hops=10)) == 3
                assert len(store.get_triplets(ids=["n10"])) == 2
                assert store.find_nodes_by_name(["N5"])[0].id == "n5"
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    def writer() -> None:
        try:
            for i in range(30):
                store.upsert_nodes([EntityNode(name=f"extra{i}")])
        except BaseException as e:  # pragma: no cover
            errors.append(e)

    threads = [threading.Thread(target=reader) for _ in range(6)]
    threads.append(threading.Thread(target=writer))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert store.count_nodes() == 51 + 30


async def test_async_methods_run_in_threads(movie_graph: SQLitePropertyGraphStore) -> None:
    nodes, triplets, steps = await asyncio.gather(
        movie_graph.aget(ids=["Sirk"]),
        movie_graph.aget_triplets(entity_names=["Sirk"]),
        movie_graph.atraverse(["Sirk"], max_cost=0.5),
    )
    assert [n.id for n in nodes] == ["Sirk"]
    assert len(triplets) == 1
    assert reached(steps) == {"Obsession": 0.5}
    assert len(await movie_graph.aget_rel_map(nodes, depth=1)) == 1


# ------------------------------------------------------------------------------------------
# names and hostile strings

HOSTILE = [
    'O\'Brien "Bob"',
    "'); DROP TABLE nodes; --",
    "MATCH (n) DETACH DELETE n",
    "a%b_c\\d",
    "?, ?",
    "ünïcødé 名前",
]


def test_hostile_strings_are_stored_verbatim(store: SQLitePropertyGraphStore) -> None:
    store.upsert_nodes([EntityNode(name=n, properties={n: n}) for n in HOSTILE])
    store.upsert_relations([rel(EntityNode(name=n).id, n, "target", 0.5) for n in HOSTILE])
    assert store.count_nodes() == len(HOSTILE) + 1
    for name in HOSTILE:
        node_id = EntityNode(name=name).id
        [node] = store.find_nodes_by_name([name], case_sensitive=True)
        assert (node.name, node.id, node.properties) == (name, node_id, {name: name})
        assert [n.id for n in store.get(properties={name: name})] == [node_id]
        assert triples(store.get_triplets(relation_names=[name])) == [(node_id, name, "target")]
        assert triples(store.get_triplets(entity_names=[name])) == [(node_id, name, "target")]
        assert reached(store.traverse([node_id], relation_types=[name])) == {"target": 0.5}
    store.delete(entity_names=[HOSTILE[1]])
    assert store.count_nodes() == len(HOSTILE)
    tables = {r[0] for r in store.client.execute("SELECT name FROM sqlite_master")}
    assert {"nodes", "relations", "meta"} <= tables


def test_find_nodes_by_name(store: SQLitePropertyGraphStore) -> None:
    store.upsert_nodes(
        [
            EntityNode(name="Douglas Sirk", label="person"),
            EntityNode(name="douglas sirk", label="alias"),
            EntityNode(name="Straße"),
            ChunkNode(text="Douglas Sirk", id_="c1"),
        ]
    )
    found = store.find_nodes_by_name(["DOUGLAS SIRK"])
    assert [(n.name, n.label) for n in found] == [
        ("Douglas Sirk", "person"),
        ("douglas sirk", "alias"),
    ]  # type: ignore[attr-defined]
    assert [n.label for n in store.find_nodes_by_name(["douglas SIRK"], label="alias")] == ["alias"]
    assert store.find_nodes_by_name(["DOUGLAS SIRK"], case_sensitive=True) == []
    assert [n.id for n in store.find_nodes_by_name(["strasse"])] == ["Straße"]
    ordered = store.find_nodes_by_name(["straße", "Douglas Sirk"], case_sensitive=False)
    assert [n.id for n in ordered] == ["Straße", "Douglas Sirk", "douglas sirk"]
    assert store.find_nodes_by_name([]) == []


def test_named_nodes_and_incoming(movie_graph: SQLitePropertyGraphStore) -> None:
    s = movie_graph
    s.upsert_nodes([ChunkNode(text="chunk", id_="c1")])
    assert s.named_nodes(labels=["studio", "film"]) == [
        ("Obsession", "Obsession", "film"),
        ("Universal", "Universal", "studio"),
    ]
    assert s.named_nodes(ids=["Sirk", "c1"]) == [("Sirk", "Sirk", "person")]
    assert len(s.named_nodes()) == 5
    assert s.named_nodes(labels=[]) == []
    assert s.nodes_with_incoming(["Sirk", "Obsession", "Universal", "nope"]) == {
        "Obsession",
        "Universal",
    }


def test_structured_and_vector_queries_are_not_supported(store: SQLitePropertyGraphStore) -> None:
    with pytest.raises(NotSupportedError, match="Cypher"):
        store.structured_query("MATCH (n) RETURN n")
    with pytest.raises(NotSupportedError):
        store.vector_query(None)  # type: ignore[arg-type]
    assert not store.supports_structured_queries
    assert not store.supports_vector_queries


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


# ------------------------------------------------------------------------------------------
# LlamaIndex integration


def test_property_graph_index_inserts_and_reads(store: SQLitePropertyGraphStore) -> None:
    from llama_index.core import PropertyGraphIndex
    from llama_index.core.embeddings import MockEmbedding
    from llama_index.core.indices.property_graph import (
        ImplicitPathExtractor,
        LLMSynonymRetriever,
    )
    from llama_index.core.llms import MockLLM
    from llama_index.core.schema import NodeRelationship, RelatedNodeInfo

    nodes = [TextNode(text=f"Passage {i} about Douglas Sirk.", id_=f"n{i}") for i in range(3)]
    for i, node in enumerate(nodes):
        node.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id="doc-1")
        if i:
            node.relationships[NodeRelationship.PREVIOUS] = RelatedNodeInfo(node_id=f"n{i - 1}")
    index = PropertyGraphIndex(
        nodes=nodes,
        property_graph_store=store,
        embed_model=MockEmbedding(embed_dim=8),
        kg_extractors=[ImplicitPathExtractor()],
        embed_kg_nodes=False,
        use_async=False,
    )
    got = index.property_graph_store.get_triplets(relation_names=["SOURCE", "PREVIOUS"])
    assert {(s.id, r.label, t.id) for s, r, t in got} == {
        ("n0", "SOURCE", "doc-1"),
        ("n1", "SOURCE", "doc-1"),
        ("n2", "SOURCE", "doc-1"),
        ("n1", "PREVIOUS", "n0"),
        ("n2", "PREVIOUS", "n1"),
    }
    llama_nodes = store.get_llama_nodes(["n1"])
    assert [(n.id_, n.get_content()) for n in llama_nodes] == [("n1", nodes[1].text)]

    # Inserting the same nodes again changes nothing.
    count = store.count_relations()
    index.insert_nodes(nodes)
    assert store.count_relations() == count

    # A retriever over the reopened index finds a fact and the text it came from.
    store.upsert_nodes([EntityNode(name="Sirk", properties={"triplet_source_id": "n1"})])
    store.upsert_relations([rel("Sirk", "DIRECTED", "Obsession", triplet_source_id="n1")])
    reopened = PropertyGraphIndex.from_existing(
        property_graph_store=store,
        llm=MockLLM(),
        embed_model=MockEmbedding(embed_dim=8),
        embed_kg_nodes=False,
    )
    synonyms = LLMSynonymRetriever(
        store, llm=MockLLM(), include_text=True, output_parsing_fn=lambda _: ["sirk"]
    )
    [result] = reopened.as_retriever(sub_retrievers=[synonyms]).retrieve("who is Sirk?")
    assert "Sirk -> DIRECTED -> Obsession" in result.node.get_content()
    assert "Passage 1 about Douglas Sirk." in result.node.get_content()
