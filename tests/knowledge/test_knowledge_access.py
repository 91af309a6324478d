"""Knowledge (seed 000 layers) under access scopes: permissions on every item, one world.

Seed 001 writes ``permissions`` on knowledge items. A piece, profile or relation a principal
may not read never reaches it: not from ``retrieve_knowledge``, not through the provider, and
not as a fact of ``kb.retrieve`` reached through a shared entity. Knowledge JSON cannot write
into the namespaces of ingested documents.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from knowledge_helpers import team_document
from llama_index.core import Document

from llama_kb import KnowledgeBase, Principal
from llama_kb.knowledge import KnowledgeProvider, load_knowledge, retrieve_knowledge

BOB = Principal(user_id="bob", org_id="nasa")
ALICE = Principal(user_id="alice", org_id="nasa")
CAROL = Principal(user_id="carol", org_id="esa")


def _private_team() -> dict[str, Any]:
    doc = team_document()
    private = {"level": "individual", "userId": "bob"}
    doc["metadata"]["user:bob"]["permissions"] = private
    doc["metadata"]["user:bob"]["properties"]["salary band"] = "Quasar-7"
    for piece in doc["pieces"]:
        if piece["piece_id"] == "bob-fwh":
            piece["permissions"] = private
            piece["content"] = "Use FW-H surfaces with the Wrenfield correction for jet noise"
        if piece["piece_id"] == "smagorinsky-constant":
            piece["permissions"] = {"level": "organization", "orgId": "nasa"}
    for edge in doc["graph"]["edges"]:
        if edge["edge_type"] == "COLLABORATES_WITH":
            edge["permissions"] = private
    return doc


@pytest.fixture
def team(kb: KnowledgeBase) -> KnowledgeBase:
    report = load_knowledge(kb, _private_team())
    assert report.ok, report.skipped
    kb.add_documents([Document(text="Alice and Bob work on jet noise at NASA.")])
    return kb


def _text(value: Any) -> str:
    return json.dumps(value, default=str).lower()


@pytest.mark.parametrize("who", [None, ALICE, CAROL])
def test_private_knowledge_stays_with_its_owner(team: KnowledgeBase, who: Principal | None) -> None:
    for entity in ("user:bob", "user:alice", None):
        result = retrieve_knowledge(team, "jet noise FW-H Smagorinsky", entity_id=entity,
                                    top_k=20, principal=who)  # fmt: skip
        seen = _text(result.to_dict())
        assert "wrenfield" not in seen and "quasar" not in seen
        assert "collaborates_with" not in seen
        assert ("smagorinsky-constant" in seen) == (who == ALICE)
    sections = KnowledgeProvider(team, entity_id="user:bob", principal=who)("jet noise")
    assert "wrenfield" not in _text(sections) and "quasar" not in _text(sections)


def test_the_owner_reads_its_knowledge(team: KnowledgeBase) -> None:
    result = retrieve_knowledge(team, "jet noise FW-H", entity_id="user:bob", top_k=20,
                                principal=BOB)  # fmt: skip
    seen = _text(result.to_dict())
    assert "wrenfield" in seen and "quasar" in seen and "collaborates_with" in seen


def test_private_knowledge_relations_are_no_facts_for_others(team: KnowledgeBase) -> None:
    question = "Who does Bob collaborate with?"
    for who in (None, ALICE, CAROL):
        context = team.retrieve(question, principal=who, route="factual", min_score=0)
        assert "collaborates_with" not in _text(context.to_dict())
    mine = team.retrieve(question, principal=BOB, route="factual", min_score=0,
                         include_structural=True, max_facts=50)  # fmt: skip
    assert any(f.predicate == "COLLABORATES_WITH" for f in mine.structured_facts)


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ({"node_id": "doc:/etc/passwd", "node_type": "x"}, "namespace of ingested documents"),
        ({"node_id": "chunk:abc", "node_type": "x"}, "namespace of ingested documents"),
        ({"node_id": "team:x", "properties": {"doc_id": "d"}}, "set by llama-kb"),
        ({"node_id": "team:x", "permissions": {"level": "galaxy"}}, "unknown access level"),
    ],
)
def test_knowledge_cannot_write_reserved_namespaces(
    kb: KnowledgeBase, item: dict[str, Any], message: str
) -> None:
    report = load_knowledge(kb, {"graph": {"nodes": [item], "edges": []}})
    assert not report.ok
    assert any(message in skipped.reason for skipped in report.skipped)
    assert kb.graph.count_nodes() == 0


def test_the_provider_draws_on_passages_and_facts_as_the_principal(team: KnowledgeBase) -> None:
    team.add_documents([Document(text="Bob keeps the jet noise Wrenfield table.")],
                       access="user:bob")  # fmt: skip
    everything = ("knowledge", "passages", "facts")
    public = KnowledgeProvider(team, entity_id="user:bob", sources=everything)("jet noise")
    assert "passages" in public and "alice and bob work on jet noise" in public["passages"].lower()
    assert "wrenfield" not in _text(public)
    bob = KnowledgeProvider(team, entity_id="user:bob", sources=everything, principal=BOB)
    assert "wrenfield" in bob("jet noise")["passages"].lower()
    with pytest.raises(Exception, match="unknown provider sources"):
        KnowledgeProvider(team, sources=("web",))


def test_kb_retrieve_returns_the_pieces_the_principal_may_read(team: KnowledgeBase) -> None:
    question = "far-field jet noise predictions"
    public = team.retrieve(question, min_score=0, top_k=10)
    ids = {k.piece_id for k in public.knowledge}
    assert ids and "bob-fwh" not in ids and "smagorinsky-constant" not in ids
    assert "wrenfield" not in _text(public.to_dict()) and "Curated knowledge" in public.render()
    mine = team.retrieve(question, min_score=0, top_k=10, principal=BOB)
    assert "bob-fwh" in {k.piece_id for k in mine.knowledge}
    assert mine.to_dict()["knowledge"][0]["knowledge_type"]


def test_pieces_loaded_after_a_cached_answer_show_up(team: KnowledgeBase) -> None:
    question = "How do we check the mesh before CHT runs?"
    first = team.retrieve(question, top_k=10, min_score=0)
    piece = {"piece_id": "cht-y-plus", "content": "Keep y+ below 1 on CHT walls before meshing"}
    load_knowledge(team, {"pieces": [piece]})
    again = team.retrieve(question, top_k=10, min_score=0)
    assert again.trace["cache"] == "hit" and first.trace["cache"] == "miss"
    assert "cht-y-plus" in {k.piece_id for k in again.knowledge}
