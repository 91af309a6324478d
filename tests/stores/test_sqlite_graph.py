"""Tests for the embedded SQLite property graph store: round trips, triplets, deletion."""

from __future__ import annotations

from pathlib import Path

import pytest
from llama_index.core.graph_stores.types import ChunkNode, EntityNode
from llama_index.core.schema import TextNode
from sqlite_helpers import rel, triples

from llama_kb.errors import BackendError, DocumentError
from llama_kb.graph_model import NamedNode
from llama_kb.stores.sqlite_graph import SQLitePropertyGraphStore

pytest_plugins = ["sqlite_fixtures"]  # db_path, store, movie_graph

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
