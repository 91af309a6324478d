"""Server graph stores (FalkorDB here; Neo4j when NEO4J_URI is set) behave like the embedded one.

Each test writes the same small graph into the server store and into an in-memory
SQLite store and compares what llama-kb reads back. Ids carry a per-test prefix and the
counts are compared as differences, so the Neo4j tests also work on a shared database.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import pytest
import servers
from llama_index.core.graph_stores.types import ChunkNode
from servers import unique_name

from llama_kb import graph_model as gm
from llama_kb.errors import DocumentError, QueryError
from llama_kb.stores.graph import KBGraphStore
from llama_kb.stores.sqlite_graph import SQLitePropertyGraphStore

falkordb_server = servers.falkordb_server  # the session fixture

pytestmark = pytest.mark.integration

NEO4J_REASON = (
    "set NEO4J_URI, NEO4J_USERNAME and NEO4J_PASSWORD (and optionally NEO4J_DATABASE) to run "
    "against a real Neo4j, e.g. `docker compose -f docker/compose.yaml up -d neo4j`"
)
MALICIOUS = "x'}) DETACH DELETE n //"


@pytest.fixture(params=["falkordb", "neo4j"])
def connect(request: pytest.FixtureRequest) -> Iterator[Callable[[], KBGraphStore]]:
    """Opens connections to one fresh server graph (FalkorDB: its own graph; Neo4j: the
    configured database); everything written by the test is deleted afterwards."""
    opened: list[KBGraphStore] = []
    if request.param == "falkordb":
        from llama_kb.stores.falkordb_graph import FalkorDBGraphStore

        server = request.getfixturevalue("falkordb_server")
        graph = unique_name("g")

        def open_store() -> KBGraphStore:
            opened.append(FalkorDBGraphStore(server.url, graph))
            return opened[-1]

        yield open_store
        opened[0].client.delete()
    else:
        if not os.environ.get("NEO4J_URI") or not os.environ.get("NEO4J_PASSWORD"):
            pytest.skip(NEO4J_REASON)
        from llama_kb.stores.neo4j_graph import Neo4jGraphStore

        def open_store() -> KBGraphStore:
            opened.append(
                Neo4jGraphStore(
                    os.environ["NEO4J_URI"],
                    os.environ.get("NEO4J_USERNAME", "neo4j"),
                    os.environ["NEO4J_PASSWORD"],
                    os.environ.get("NEO4J_DATABASE", "neo4j"),
                )
            )
            return opened[-1]

        yield open_store
        if opened:
            opened[0].structured_query(
                "MATCH (n:__Node__) WHERE n.id CONTAINS $prefix DETACH DELETE n",
                {"prefix": PREFIX},
            )
    for each in opened:
        each.close()


@pytest.fixture
def store(connect: Callable[[], KBGraphStore]) -> KBGraphStore:
    """One connection to the test's graph."""
    return connect()


PREFIX = "llama-kb-test/"


def sample_graph(prefix: str) -> tuple[list, list]:
    """Two documents, three chunks, two entities and weighted relations between them."""
    p = prefix
    nodes = [
        gm.NamedNode(id_=f"doc:{p}a", name="Sleep, My Love", label=gm.DOCUMENT, properties={}),
        gm.NamedNode(id_=f"doc:{p}b", name="Douglas Sirk", label=gm.DOCUMENT, properties={}),
        gm.NamedNode(id_=f"entity:{p}sirk", name="Douglas Sirk", label=gm.ENTITY, properties={}),
        gm.NamedNode(id_=f"entity:{p}film", name="Film noir", label=gm.ENTITY, properties={}),
    ]
    for i, doc in enumerate(["a", "a", "b"]):
        nodes.append(
            ChunkNode(
                id_=f"{p}{doc}#{i}",
                text=f"chunk {i} of {doc}",
                label=gm.CHUNK,
                properties={"doc_id": f"{p}{doc}", "chunk_index": i},
            )
        )
    relations = [
        gm.relation(f"{p}a#0", gm.PART_OF, f"doc:{p}a", 0.0),
        gm.relation(f"{p}a#1", gm.PART_OF, f"doc:{p}a", 0.0),
        gm.relation(f"{p}b#2", gm.PART_OF, f"doc:{p}b", 0.0),
        gm.relation(f"{p}a#0", gm.MENTIONS, f"doc:{p}b", 0.5, signal="name"),
        gm.relation(f"{p}a#1", gm.MENTIONS, f"entity:{p}film", 0.5, signal="heading"),
        gm.relation(f"entity:{p}sirk", "DIRECTED", f"doc:{p}a", 0.3),
    ]
    return nodes, relations


def filled(store: KBGraphStore) -> tuple[SQLitePropertyGraphStore, str]:
    """Write the sample graph into ``store`` and into a fresh SQLite store."""
    prefix = PREFIX + unique_name() + "/"
    reference = SQLitePropertyGraphStore(":memory:")
    for target in (store, reference):
        nodes, relations = sample_graph(prefix)
        target.upsert_nodes(nodes)
        target.upsert_relations(relations)
    return reference, prefix


def mine(rows, prefix: str):
    return sorted(r for r in rows if prefix in r[0] or prefix in r[1])


def test_nodes_round_trip_with_llama_kb_ids(store) -> None:
    reference, p = filled(store)
    got = {n.id: n for n in store.get(ids=[f"doc:{p}a", f"entity:{p}film", f"{p}a#0"])}
    assert set(got) == {f"doc:{p}a", f"entity:{p}film", f"{p}a#0"}
    assert isinstance(got[f"doc:{p}a"], gm.NamedNode)
    assert (got[f"doc:{p}a"].name, got[f"doc:{p}a"].label) == ("Sleep, My Love", gm.DOCUMENT)
    chunk = got[f"{p}a#0"]
    assert isinstance(chunk, ChunkNode) and chunk.text == "chunk 0 of a"
    assert chunk.properties == {"doc_id": f"{p}a", "chunk_index": 0}
    assert sorted(store.named_nodes(ids=[f"doc:{p}a", f"{p}a#0", "nope"])) == [
        (f"doc:{p}a", "Sleep, My Love", gm.DOCUMENT)
    ]
    for labels in (None, [gm.DOCUMENT], [gm.ENTITY, gm.DOCUMENT]):
        assert mine(store.named_nodes(labels=labels), p) == sorted(
            reference.named_nodes(labels=labels)
        )


def test_relations_counts_and_incoming(store) -> None:
    before_nodes, before_rels = store.count_nodes(), store.count_relations()
    before_chunks = store.count_nodes(gm.CHUNK)
    reference, p = filled(store)
    assert mine(store.iter_relations(), p) == sorted(reference.iter_relations())
    assert mine(store.iter_relations([gm.PART_OF]), p) == sorted(
        reference.iter_relations([gm.PART_OF])
    )
    assert store.count_nodes() - before_nodes == reference.count_nodes() == 7
    assert store.count_nodes(gm.CHUNK) - before_chunks == 3
    assert store.count_relations() - before_rels == reference.count_relations() == 6
    ids = [f"doc:{p}a", f"doc:{p}b", f"entity:{p}sirk", f"{p}a#0"]
    assert store.nodes_with_incoming(ids) == reference.nodes_with_incoming(ids)
    among = [f"{p}a#0", f"doc:{p}a", f"doc:{p}b"]
    assert sorted((r.source_id, r.label, r.target_id) for r in store.relations_among(among)) == (
        sorted((r.source_id, r.label, r.target_id) for r in reference.relations_among(among))
    )


def test_get_triplets_uses_llama_kb_ids(store) -> None:
    reference, p = filled(store)

    def keys(triplets):
        return sorted((s.id, r.label, t.id, r.properties["weight"]) for s, r, t in triplets)

    for kwargs in (
        {"ids": [f"doc:{p}a"]},
        {"entity_names": ["Film noir"]},
        {"ids": [f"doc:{p}a"], "relation_names": [gm.PART_OF]},
        {"properties": {"signal": "heading"}},
    ):
        got = store.get_triplets(**kwargs)
        assert keys(got) == keys(reference.get_triplets(**kwargs)), kwargs
    assert store.get_triplets() == []


def test_traversal_matches_the_embedded_store(store) -> None:
    reference, p = filled(store)

    def steps(s, **kwargs):
        return [
            (x.source, x.target, x.relation.label, round(x.path_cost, 6), x.hops)
            for x in s.traverse([f"entity:{p}sirk"], **kwargs)
        ]

    for kwargs in (
        {},
        {"max_cost": 0.3},
        {"max_cost": 10, "max_hops": 5},
        {"direction": "out"},
        {"relation_types": ["DIRECTED", gm.PART_OF]},
    ):
        assert steps(store, **kwargs) == steps(reference, **kwargs), kwargs


def test_deletes_and_revision(store) -> None:
    reference, p = filled(store)
    revision = store.revision
    assert store.delete_by_property("doc_id", f"{p}a") == reference.delete_by_property(
        "doc_id", f"{p}a"
    )
    assert store.revision > revision
    # Film noir lost its only relation; Douglas Sirk (entity) keeps DIRECTED
    store.delete_orphan_entities(gm.ENTITY)
    reference.delete_orphan_entities(gm.ENTITY)
    assert mine(store.named_nodes(), p) == sorted(reference.named_nodes())
    store.delete(ids=[f"doc:{p}b"])  # the document goes, its chunk stays
    assert [n.id for n in store.get(ids=[f"doc:{p}b", f"{p}b#2"])] == [f"{p}b#2"]
    store.delete(entity_names=["Sleep, My Love"])
    assert not store.get(ids=[f"doc:{p}a"])
    assert store.delete_by_property("doc_id", f"{p}nothing") == 0


def test_deleting_several_documents_at_once_matches_the_embedded_store(store) -> None:
    reference, p = filled(store)
    revision = store.revision
    values = [f"{p}a", f"{p}b", f"{p}nothing", f"{p}a", MALICIOUS]
    assert store.delete_by_values("doc_id", values) == 3
    assert reference.delete_by_values("doc_id", values) == 3
    assert store.revision == revision + 1  # one write, whatever the number of values
    assert not store.get(ids=[f"{p}a#0", f"{p}a#1", f"{p}b#2"])
    assert mine(store.named_nodes(), p) == sorted(reference.named_nodes())
    assert mine(store.iter_relations(), p) == sorted(reference.iter_relations())
    assert store.delete_by_values("doc_id", []) == 0


def test_revision_is_seen_by_another_connection(store, connect) -> None:
    other = connect()
    before = other.revision
    store.upsert_nodes([gm.entity_node(PREFIX + unique_name())])
    assert other.revision == before + 1


def test_values_are_parameters_never_query_text(store) -> None:
    prefix = PREFIX + unique_name()
    keep = gm.NamedNode(id_=f"{prefix}keep", name="keep", label=gm.ENTITY, properties={})
    evil = gm.NamedNode(id_=MALICIOUS, name=MALICIOUS, label=gm.ENTITY, properties={"k": MALICIOUS})
    store.upsert_nodes([keep, evil])
    store.upsert_relations([gm.relation(f"{prefix}keep", "RELATED", MALICIOUS, 0.2)])
    assert store.named_nodes(ids=[MALICIOUS]) == [(MALICIOUS, MALICIOUS, gm.ENTITY)]
    assert store.get(properties={"k": MALICIOUS})[0].id == MALICIOUS
    assert store.delete_by_property("k", MALICIOUS) == 1
    assert store.named_nodes(ids=[f"{prefix}keep"]) == [(f"{prefix}keep", "keep", gm.ENTITY)]


def test_identifiers_are_validated(store) -> None:
    with pytest.raises(QueryError, match="letters, digits"):
        store.count_nodes("entity`) DETACH DELETE n //")
    with pytest.raises(QueryError, match="property"):
        store.delete_by_property("doc_id = 1 OR true //", "x")
    with pytest.raises(DocumentError, match="weight"):
        store.upsert_relations([gm.relation("a", "R", "b", 1.5)])
