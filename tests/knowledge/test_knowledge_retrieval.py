"""Knowledge retrieval: metadata, piece search, graph BFS, merge, filters, graph backends."""

from __future__ import annotations

import asyncio

import pytest
from knowledge_helpers import SEED_QUERY, team_document
from llama_index.core.graph_stores.simple_labelled import SimplePropertyGraphStore

from llama_kb import KnowledgeBase, QueryError
from llama_kb.knowledge import aretrieve_knowledge, load_knowledge, retrieve_knowledge
from llama_kb.stores.adapters import PropertyGraphAdapter


@pytest.fixture
def team_kb(kb: KnowledgeBase) -> KnowledgeBase:
    report = load_knowledge(kb, team_document())
    assert report.ok, report.skipped
    return kb


def ids(result) -> list[str]:
    return [piece.piece_id for piece, _ in result.pieces]


def test_three_layers_merged_for_alice(team_kb: KnowledgeBase) -> None:
    result = retrieve_knowledge(team_kb, SEED_QUERY, entity_id="user:alice", top_k=3)
    assert result.metadata is not None and result.metadata.properties["team"] == "aero"
    assert result.global_metadata is not None
    assert result.global_metadata.properties == {"organization": "NASA"}
    # graph links score 1/depth and beat search scores; dedup keeps the higher score
    scores = dict((p.piece_id, s) for p, s in result.pieces)
    assert scores["les-rans-init"] == 1.0 and scores["dyn-smag-jn042"] >= 0.5
    assert len(ids(result)) == len(set(ids(result)))
    assert result.pieces == sorted(result.pieces, key=lambda ps: (-ps[1], ps[0].piece_id))
    assert ids(result)[0] == "les-rans-init"
    # bob's own pieces never reach alice
    assert "bob-fwh" not in ids(result)


def test_graph_bfs_depth_and_direction(team_kb: KnowledgeBase) -> None:
    result = retrieve_knowledge(team_kb, "", entity_id="user:alice", graph_traversal_depth=2)
    edges = {(i.source_id, i.relation_type, i.target_id): i for i in result.graph_context}
    assert {k: (i.depth, i.score) for k, i in edges.items()} == {
        ("user:alice", "MEMBER_OF", "team:aero"): (1, 1.0),
        ("user:alice", "SPECIALIZES_IN", "technique:les"): (1, 1.0),
        ("user:bob", "COLLABORATES_WITH", "user:alice"): (1, 1.0),
        ("technique:les", "USES", "technique:dynamic-smagorinsky"): (2, 0.5),
    }
    incoming = edges[("user:bob", "COLLABORATES_WITH", "user:alice")]
    assert not incoming.from_entity and incoming.weight == 0.5
    assert incoming.properties == {"description": "jet noise study"}
    assert edges[("user:alice", "MEMBER_OF", "team:aero")].target_label == "Aero team"
    # an empty query skips the search: only graph-linked pieces, scored 1/depth
    assert [(p.piece_id, s) for p, s in result.pieces] == [
        ("les-rans-init", 1.0),
        ("dyn-smag-jn042", 0.5),
    ]
    deeper = retrieve_knowledge(team_kb, "", entity_id="user:alice", graph_traversal_depth=3)
    assert ("VALIDATED_ON", 3) in {(i.relation_type, i.depth) for i in deeper.graph_context}
    flat = retrieve_knowledge(team_kb, "", entity_id="user:alice", graph_traversal_depth=0)
    assert flat.graph_context == [] and flat.pieces == []


def test_filters(team_kb: KnowledgeBase) -> None:
    def found(**filters) -> list[str]:
        return ids(retrieve_knowledge(team_kb, "LES Smagorinsky jet noise", top_k=10, **filters))

    assert set(found()) == {p["piece_id"] for p in team_document()["pieces"]}
    # an entity sees its own pieces and shared ones
    assert set(found(entity_id="user:bob", graph_traversal_depth=0)) == {
        "bob-fwh",
        "smagorinsky-constant",
        "dyn-smag-jn042",
    }
    assert set(found(knowledge_types=["FACT", "episodic"])) == {
        "smagorinsky-constant",
        "dyn-smag-jn042",
    }
    assert set(found(info_types=["skills"])) == {"skill-mesh-check"}
    assert set(found(tags=["mesh", "acoustics"])) == {"skill-mesh-check", "bob-fwh"}
    assert found(tags=[]) == []
    # graph-linked pieces obey the filters too
    linked = retrieve_knowledge(team_kb, "", entity_id="user:alice", knowledge_types=["episodic"])
    assert ids(linked) == ["dyn-smag-jn042"]


def test_deterministic_and_async(team_kb: KnowledgeBase) -> None:
    first = retrieve_knowledge(team_kb, SEED_QUERY, entity_id="user:alice")
    second = asyncio.run(aretrieve_knowledge(team_kb, SEED_QUERY, entity_id="user:alice"))
    assert first.to_dict() == second.to_dict()


def test_unknown_entity_and_empty_store(kb: KnowledgeBase) -> None:
    result = retrieve_knowledge(kb, SEED_QUERY, entity_id="user:nobody")
    assert result.metadata is None and result.pieces == [] and result.graph_context == []


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"top_k": 0}, "top_k must be a positive integer"),
        ({"graph_traversal_depth": -1}, "graph_traversal_depth must be an integer >= 0"),
        ({"tags": "les"}, "a list of values"),
    ],
)
def test_invalid_options(kb: KnowledgeBase, options: dict, message: str) -> None:
    with pytest.raises(QueryError, match=message):
        retrieve_knowledge(kb, "x", **options)


def test_works_on_any_llama_index_graph_store(kb: KnowledgeBase) -> None:
    """The graph layer only uses the PropertyGraphStore API (here: the in-memory store)."""
    embedded_graph, kb.graph = kb.graph, PropertyGraphAdapter(SimplePropertyGraphStore())
    try:
        assert load_knowledge(kb, team_document()).ok
        assert load_knowledge(kb, team_document()).changed == 0
        result = retrieve_knowledge(kb, "", entity_id="user:alice")
    finally:
        kb.graph = embedded_graph
    assert embedded_graph.count_nodes() == 0
    assert [(p.piece_id, s) for p, s in result.pieces] == [
        ("les-rans-init", 1.0),
        ("dyn-smag-jn042", 0.5),
    ]
    assert len(result.graph_context) == 4
