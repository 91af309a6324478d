"""Tests for the embedded SQLite graph store: persistence, schema, threads, names."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from llama_index.core.graph_stores.types import ChunkNode, EntityNode, Relation
from search_helpers import nearest
from sqlite_helpers import chain, reached, rel, triples

import llama_kb.stores.sqlite_graph as sqlite_graph
from llama_kb.errors import BackendError, NotSupportedError
from llama_kb.graph_model import NamedNode
from llama_kb.stores._sqlite_db import SCHEMA_VERSION, SQLiteDatabase
from llama_kb.stores.sqlite_graph import SQLitePropertyGraphStore

pytest_plugins = ["sqlite_fixtures"]  # db_path, store, movie_graph

# The directory holding the ``llama_kb`` package under test, for child processes.
PACKAGE_ROOT = Path(sqlite_graph.__file__).absolute().parents[2]


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
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(
            "INSERT INTO relations (source_uri, target_uri, relation_type, created_at,"
            " updated_at) VALUES ('nope', 'nada', 'r', '', '')"
        )
    indexes = {r[1] for r in conn.execute("SELECT * FROM sqlite_master WHERE type = 'index'")}
    assert {"idx_relations_target_type", "idx_relations_type", "idx_nodes_name_ci"} <= indexes
    assert {"idx_nodes_doc_id", "idx_name_keys_uri"} <= indexes
    schema = store.get_schema()
    assert schema["schema_version"] == SCHEMA_VERSION


def test_planner_statistics_follow_a_large_write_without_reopening(
    store: SQLitePropertyGraphStore,
) -> None:
    """A process that fills an empty file and then queries it plans with the new statistics
    (they used to be written only at close, so it planned for empty tables)."""
    conn = store.client
    assert store.get(ids=["nothing"]) == []  # the tables are read while still empty
    chunks = [
        ChunkNode(text=f"chunk {i}", id_=f"c{i}", properties={"doc_id": f"d{i % 40}"})
        for i in range(400)
    ]
    store.upsert_nodes(chunks)
    assert store.get(ids=["c1"])
    analysed = {row[0] for row in conn.execute("SELECT tbl FROM sqlite_stat1")}
    assert "nodes" in analysed


def test_readers_plan_with_the_statistics_of_the_last_refresh(tmp_path: Path) -> None:
    """A read connection kept from before a statistics refresh would go on planning with
    the statistics it loaded first; after a large write every read plans as a new
    connection does."""
    path = tmp_path / "graph.sqlite"
    db = SQLiteDatabase(path)
    with db.write() as conn:
        conn.execute("CREATE TABLE probe (x INTEGER, y INTEGER)")
        conn.execute("CREATE INDEX probe_x ON probe(x)")
        conn.execute("CREATE INDEX probe_y ON probe(y)")
    plan = "EXPLAIN QUERY PLAN SELECT * FROM probe WHERE x = 1 AND y > 10"
    with db.read() as reader:  # a reader that has seen the tables without statistics
        assert "probe_x" in reader.execute(plan).fetchall()[0][3]
    with db.write() as conn:
        conn.executemany("INSERT INTO probe VALUES (?, ?)", [(i % 2, i) for i in range(4000)])
    with db.read() as reader:
        kept = reader.execute(plan).fetchall()
    fresh = sqlite3.connect(path)
    try:
        assert kept == fresh.execute(plan).fetchall()
        assert "probe_y" in kept[0][3]
    finally:
        fresh.close()
        db.close()


def test_a_version_1_file_gets_its_search_indexes_filled(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with SQLitePropertyGraphStore(path) as store:
        store.upsert_nodes(
            [
                NamedNode(id_="doc:a", name="Sleep, My Love", label="document"),
                ChunkNode(text="Directed by Douglas Sirk.", id_="c1", properties={"doc_id": "a"}),
            ]
        )
        store.upsert_relations([Relation(label="PART_OF", source_id="c1", target_id="doc:a")])
    v1_tables = {"nodes", "relations", "meta", "sqlite_sequence"}
    v1_indexes = {
        "idx_nodes_node_type",
        "idx_nodes_name",
        "idx_nodes_name_ci",
        "idx_relations_type",
    }
    with sqlite3.connect(path) as conn:  # back to the version-1 layout
        objects = conn.execute(
            "SELECT type, name FROM sqlite_master WHERE sql IS NOT NULL ORDER BY type = 'table'"
        ).fetchall()
        for kind, name in objects:
            gone = not conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", [name]).fetchone()
            if gone or (kind == "table" and name in v1_tables) or name in v1_indexes:
                continue
            conn.execute(f"DROP {kind.upper()} {name}")
        conn.execute("CREATE INDEX idx_relations_target ON relations(target_uri)")
        conn.execute("PRAGMA user_version = 1")
    with SQLitePropertyGraphStore(path) as store:
        index = store.search_index
        assert store.client.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert [c for c, _ in index.lexical(["sirk"], 5)] == ["c1"]
        assert index.scoped(frozenset({"public"})).lexical(["sirk"], 5) == index.lexical(
            ["sirk"], 5
        )
        assert [f.node_id for f in index.name_forms(["sleep-my-love"])] == ["doc:a"]
        assert index.name_stats(["doc:a"])["doc:a"].titles == 1


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


def test_reads_do_not_wait_for_another_threads_write(db_path: Path) -> None:
    """A read beside an open write transaction of another thread returns at once with the last
    committed state; the writing thread itself reads its own uncommitted rows."""
    store = SQLitePropertyGraphStore(db_path)
    store.upsert_nodes([EntityNode(name="Before")])
    inside, release = threading.Event(), threading.Event()
    seen_by_writer: list[list[str]] = []

    def writer() -> None:
        with store._db.write() as conn:
            conn.execute(
                "INSERT INTO nodes (uri, node_type, name, created_at, updated_at) "
                "VALUES ('During', 'entity', 'During', '', '')"
            )
            seen_by_writer.append([n.id for n in store.get(ids=["Before", "During"])])
            inside.set()
            release.wait(30)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        assert inside.wait(30)
        assert [n.id for n in store.get(ids=["Before", "During"])] == ["Before"]
    finally:
        release.set()
        thread.join()
    assert seen_by_writer == [["Before", "During"]]
    assert sorted(n.id for n in store.get(ids=["Before", "During"])) == ["Before", "During"]
    store.close()
    with pytest.raises(BackendError, match="closed"):
        store.get(ids=["Before"])


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


def test_fuzzy_name_lookup_matches_on_rare_trigrams(tmp_path: Path) -> None:
    from llama_kb import graph_model as gm

    crowd = [f"The {word} of the Theatre" for word in ("Art", "Book", "Lord", "Song", "Time")] * 1
    crowd += [f"Other {i} the thesis" for i in range(200)]
    with SQLitePropertyGraphStore(tmp_path / "g.sqlite") as graph:
        graph.upsert_nodes([gm.entity_node(n) for n in [*crowd, "Nathan Juran"]])
        index = graph.search_index
        assert nearest(index, "the Nathan Jurran", 3)[0] == gm.entity_node_id("Nathan Juran")
        conn = graph.client
        assert conn.execute("SELECT doc FROM name_vocab WHERE term = 'the'").fetchone()[0] > 200


def test_fuzzy_name_lookup_matches_within_a_postings_budget(tmp_path: Path) -> None:
    from llama_kb import graph_model as gm
    from llama_kb.stores.search import rarest_within

    crowd = [f"Other {i} the thesis" for i in range(300)]
    with SQLitePropertyGraphStore(tmp_path / "g.sqlite") as graph:
        graph.upsert_nodes([gm.entity_node(n) for n in [*crowd, "Nathan Juran"]])
        index = graph.search_index
        index.gram_postings_budget = 10  # the crowd's grams (300 names each) no longer fit
        assert nearest(index, "the Nathan Jurran", 3)[0] == gm.entity_node_id("Nathan Juran")
        assert len(nearest(index, "Other", 5)) == 5  # the rarest gram is always kept
    df = {"rar": 3, "mid": 40, "com": 900, "nil": 0}
    assert rarest_within(["com", "mid", "rar"], df, 50, most=6) == ["rar", "mid"]
    assert rarest_within(["com", "mid"], df, 10, most=6) == ["mid"]
    assert rarest_within(["com", "mid", "rar"], df, 10**6, most=2) == ["rar", "mid"]


def test_a_version_3_file_gets_the_name_vocabulary(db_path: Path) -> None:
    from llama_kb import graph_model as gm

    with SQLitePropertyGraphStore(db_path) as store:
        store.upsert_nodes([gm.entity_node("Douglas Sirk"), gm.entity_node("Paris")])
    with sqlite3.connect(db_path) as conn:
        conn.execute("DROP TABLE name_vocab")
        conn.execute("PRAGMA user_version = 3")
    with SQLitePropertyGraphStore(db_path) as store:
        assert store.client.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        index = store.search_index
        found = index.similar_names(["Duglas Sirk of Paris"], 1)
        assert found == {
            "Duglas Sirk of Paris": {gm.entity_node_id("Douglas Sirk"): "Douglas Sirk"}
        }
