"""Knowledge orphans: unreadable piece records and relations linking a missing piece."""

from __future__ import annotations

from typing import Any

import pytest

from llama_kb import KnowledgeBase
from llama_kb.errors import BackendError
from llama_kb.knowledge import load_knowledge, retrieve_knowledge
from llama_kb.knowledge.graph import ORIGIN

LINK = "user:alice -[USES]-> tool:kiln"


def _document() -> dict[str, Any]:
    return {
        "pieces": [
            {"piece_id": "glaze", "content": "Glaze at 1240C for stoneware.", "tags": ["kiln"]},
            {"piece_id": "clay", "content": "Wedge the clay before throwing."},
        ],
        "graph": {
            "nodes": [
                {"node_id": "user:alice", "node_type": "user", "label": "Alice"},
                {"node_id": "tool:kiln", "node_type": "tool", "label": "Kiln"},
            ],
            "edges": [
                {
                    "source_id": "user:alice",
                    "target_id": "tool:kiln",
                    "edge_type": "USES",
                    "properties": {"piece_id": "glaze"},
                }
            ],
        },
    }


def _links(kb: KnowledgeBase) -> list[Any]:
    return [
        rel.properties.get("piece_id")
        for _, rel, _ in kb.graph.get_triplets(ids=["user:alice"])
        if rel.properties.get("origin") == ORIGIN
    ]


def _damage(kb: KnowledgeBase) -> None:
    """A foreign record in the pieces collection, and the linked piece gone."""
    collection = kb.knowledge.pieces.collection
    vector = kb.embedding.get_text_embedding("junk")
    collection.upsert(ids=["junk"], embeddings=[vector], documents=["x"], metadatas=[{"a": 1}])
    collection.delete(ids=["glaze"])


def test_repair_finds_and_removes_knowledge_orphans(kb: KnowledgeBase) -> None:
    assert load_knowledge(kb, _document()).ok
    assert kb.repair(dry_run=True).ok
    _damage(kb)

    found = kb.repair(dry_run=True)
    assert (found.orphan_pieces, found.dangling_links) == (["junk"], [LINK])
    assert not found.ok and not found.repaired
    assert "orphan pieces 1, dangling piece links 1" in found.summary()
    assert kb.knowledge.pieces.count() == 2  # a dry run changes nothing

    fixed = kb.repair()
    assert fixed.repaired and fixed.orphan_pieces == ["junk"]
    assert kb.repair(dry_run=True).ok
    assert kb.knowledge.pieces.count() == 1 and _links(kb) == [None]
    assert [p.piece_id for p, _ in retrieve_knowledge(kb, "clay").pieces] == ["clay"]


def test_doctor_repair_reports_knowledge_orphans(
    kb: KnowledgeBase, capsys: pytest.CaptureFixture[str]
) -> None:
    from llama_kb.cli import main

    load_knowledge(kb, _document())
    _damage(kb)
    path = str(kb.config.path)
    kb.close()
    main(["doctor", "--kb", path, "--repair"])
    assert "orphan pieces 1, dangling piece links 1" in capsys.readouterr().out
    with KnowledgeBase.open(path, embedding=kb.embedding) as reopened:
        assert reopened.repair(dry_run=True).ok


def test_an_edge_is_not_stored_when_its_piece_failed(
    kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(pieces: object) -> list[object]:
        raise BackendError("Chroma is down")

    monkeypatch.setattr(kb.knowledge.pieces, "upsert", fail)
    report = load_knowledge(kb, _document())
    reasons = {s.item: s.reason for s in report.skipped}
    assert any("linked piece 'glaze' could not be stored" in r for r in reasons.values())
    assert _links(kb) == [] and kb.repair(dry_run=True).ok
