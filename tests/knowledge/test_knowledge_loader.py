"""Loading knowledge JSON: the three layers, idempotence, updates, itemised rejections, CLI."""

from __future__ import annotations

import json
import sqlite3
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pytest
from conftest import CountingEmbedding
from knowledge_helpers import SEED_EXAMPLE, run_command, team_document

from llama_kb import DocumentError, KnowledgeBase
from llama_kb.knowledge import KnowledgeType, load_knowledge, retrieve_knowledge
from llama_kb.knowledge.metadata import KNOWLEDGE_DB

# -- helpers -------------------------------------------------------------------------------------


def snapshot(kb: KnowledgeBase) -> dict[str, Any]:
    """Everything the loader can write, to compare before and after."""
    with nullcontext(kb.knowledge) as store:
        pieces = store.pieces.collection.get(include=["metadatas", "documents", "embeddings"])
        metadata = sqlite3.connect(store.root / KNOWLEDGE_DB).execute(
            "SELECT * FROM entity_metadata ORDER BY entity_id"
        )
        return {
            "metadata": metadata.fetchall(),
            "pieces": sorted(
                zip(
                    pieces["ids"],
                    pieces["documents"],
                    [json.dumps(m, sort_keys=True) for m in pieces["metadatas"]],
                    [list(map(float, e)) for e in pieces["embeddings"]],
                    strict=True,
                )
            ),
            "nodes": sorted((n.id, n.label, json.dumps(n.properties)) for n in kb.graph.get()),
            "relations": sorted(kb.graph.iter_relations()),
            "graph_revision": kb.graph.revision,
        }


def skipped(report: Any) -> dict[str, str]:
    return {item.item: item.reason for item in report.skipped}


def stored_piece_ids(kb: KnowledgeBase) -> list[str]:
    with nullcontext(kb.knowledge) as store:
        return sorted(store.pieces.collection.get()["ids"])


# -- the seed example ----------------------------------------------------------------------------


def test_seed_example_fills_all_three_layers(kb: KnowledgeBase) -> None:
    report = load_knowledge(kb, SEED_EXAMPLE)
    assert report.ok
    assert report.added == {"metadata": 1, "pieces": 1, "nodes": 2, "edges": 1}
    assert report.summary() == (
        "added 5, updated 0, unchanged 0, skipped 0 (metadata 1, pieces 1, nodes 2, edges 1)"
    )
    with nullcontext(kb.knowledge) as store:
        alice = store.metadata.get("user:alice")
        assert alice is not None and alice.entity_type == "user"
        assert alice.properties == {"specialization": "turbomachinery", "team": "aero"}
        assert [m.entity_id for m in store.metadata.entities("user")] == ["user:alice"]
        assert store.metadata.entities("team") == []
        piece = store.pieces.get(["les-rans-init"])["les-rans-init"]
        assert piece.knowledge_type is KnowledgeType.PROCEDURE and piece.created_at is not None
        assert store.pieces.collection.name == "llama_kb-pieces"
    # same Chroma client as the chunks; the chunk collection stays empty
    assert kb.vectors.count() == 0
    nodes = {n.id: n for n in kb.graph.get(ids=["user:alice", "technique:les"])}
    assert nodes["technique:les"].label == "technique" and nodes["technique:les"].name == "LES"
    assert list(kb.graph.iter_relations()) == [
        ("user:alice", "technique:les", "SPECIALIZES_IN", 1.0)
    ]


def test_loading_twice_changes_nothing_and_embeds_nothing(tmp_path: Path, embedding) -> None:
    counting = CountingEmbedding(inner=embedding, model_name=embedding.model_name)
    with KnowledgeBase.open(tmp_path / "kb", embedding=counting) as kb:
        first = load_knowledge(kb, team_document())
        assert first.ok, first.skipped
        embedded = counting.texts_embedded
        assert embedded == len(team_document()["pieces"])
        before = snapshot(kb)
        second = load_knowledge(kb, team_document())
        assert second.ok and second.changed == 0
        assert second.unchanged == first.added
        assert counting.texts_embedded == embedded
        assert snapshot(kb) == before


def test_changes_update_in_place_and_reembed_only_changed_text(tmp_path: Path, embedding) -> None:
    counting = CountingEmbedding(inner=embedding, model_name=embedding.model_name)
    with KnowledgeBase.open(tmp_path / "kb", embedding=counting) as kb:
        load_knowledge(kb, team_document())
        created = {p.piece_id: p.created_at for p, _ in _all_pieces(kb)}
        embedded = counting.texts_embedded

        doc = team_document()
        doc["pieces"][1]["tags"] = ["smagorinsky"]  # metadata only: no new embedding
        doc["pieces"][2]["content"] = "On JN-042 dynamic Smagorinsky gave 15% better spectra"
        doc["metadata"]["user:alice"]["properties"]["team"] = "aero-acoustics"
        doc["graph"]["edges"][2]["properties"]["weight"] = 0.25
        report = load_knowledge(kb, doc)
        assert report.updated == {"metadata": 1, "pieces": 2, "nodes": 0, "edges": 1}
        assert counting.texts_embedded == embedded + 1
        assert stored_piece_ids(kb) == sorted(p["piece_id"] for p in doc["pieces"])
        assert {p.piece_id: p.created_at for p, _ in _all_pieces(kb)} == created
        # the removed tag no longer matches a filter
        les_only = retrieve_knowledge(kb, "Smagorinsky constant", tags=["les"], top_k=5)
        assert "smagorinsky-constant" not in [p.piece_id for p, _ in les_only.pieces]
        weights = {(s, t): w for s, t, _, w in kb.graph.iter_relations()}
        assert weights[("user:bob", "user:alice")] == 0.25


def _all_pieces(kb: KnowledgeBase) -> list[tuple[Any, float]]:
    return retrieve_knowledge(kb, "knowledge", top_k=50).pieces


# -- bad input -----------------------------------------------------------------------------------


def test_bad_items_are_rejected_by_name_and_the_rest_loads(kb: KnowledgeBase) -> None:
    doc = team_document()
    doc["metadata"]["user:carol"] = {"properties": {"team": "cfd"}}  # no entity_type
    doc["metadata"]["user:dave"] = {"entity_type": "user", "properties": {"password": "x1y2"}}
    doc["pieces"] += [
        {"piece_id": "empty", "content": "  "},
        {"piece_id": "recipe", "content": "Bake at 200C", "knowledge_type": "recipe"},
        {
            "piece_id": "leak",
            "content": "Deploy with token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        },
        {"piece_id": "huge", "content": "x" * 9000},
        {"piece_id": "les-rans-init", "content": "A different text under a taken id"},
        {"piece_id": "les-rans-init", **team_document()["pieces"][0]},  # identical: ignored
        "just a string",
        {"piece_id": "typo", "content": "x", "knowlege_type": "fact"},
    ]
    doc["graph"]["nodes"].append(
        {"node_id": "db:prod", "properties": {"dsn": "postgres://admin:s3cret@db:5432/x"}}
    )
    doc["graph"]["edges"] += [
        {"source_id": "user:alice", "target_id": "technique:rans", "edge_type": "KNOWS"},
        {"source_id": "user:alice", "target_id": "db:prod", "edge_type": "OWNS"},
        {
            "source_id": "user:alice",
            "target_id": "team:aero",
            "edge_type": "LEADS",
            "properties": {"piece_id": "empty"},
        },
        {
            "source_id": "user:alice",
            "target_id": "technique:les",
            "edge_type": "SPECIALIZES_IN",
            "properties": {"piece_id": "smagorinsky-constant"},
        },
    ]
    report = load_knowledge(kb, doc)
    reasons = skipped(report)
    assert reasons == {
        "metadata['user:carol']": "entity_type is required",
        "metadata['user:dave']": (
            "contains sensitive data (credential_property); remove credentials before "
            "loading knowledge"
        ),
        "pieces[5] 'empty'": "content must not be empty",
        "pieces[6] 'recipe'": (
            "knowledge_type 'recipe' is not one of fact, instruction, preference, procedure, "
            "note, episodic"
        ),
        "pieces[7] 'leak'": (
            "contains sensitive data (github_token); remove credentials before loading knowledge"
        ),
        "pieces[8] 'huge'": "content has 9000 characters (at most 8000); split it",
        "pieces[9] 'les-rans-init'": (
            "duplicate id with different content (the first is pieces[0] 'les-rans-init')"
        ),
        "pieces[11]": "must be an object with content, not a string",
        "pieces[12] 'typo'": "knowlege_type is not a known field",
        "graph.nodes[6] 'db:prod'": (
            "contains sensitive data (credentials_in_url); remove credentials before loading "
            "knowledge"
        ),
        "graph.edges[5] user:alice -[KNOWS]-> technique:rans": (
            "target node 'technique:rans' does not exist (add it to graph.nodes)"
        ),
        "graph.edges[6] user:alice -[OWNS]-> db:prod": (
            "target node 'db:prod' does not exist (add it to graph.nodes)"
        ),
        "graph.edges[7] user:alice -[LEADS]-> team:aero": (
            "linked piece_id 'empty' does not exist"
        ),
        "graph.edges[8] user:alice -[SPECIALIZES_IN]-> technique:les": (
            "duplicate id with different content (the first is graph.edges[0] "
            "user:alice -[SPECIALIZES_IN]-> technique:les)"
        ),
    }
    for reason in reasons.values():  # never echo a secret
        assert "ghp_" not in reason and "s3cret" not in reason and "x1y2" not in reason
    assert report.loaded == {"metadata": 3, "pieces": 5, "nodes": 6, "edges": 5}
    # nothing of a rejected item was written anywhere
    with nullcontext(kb.knowledge) as store:
        assert store.metadata.get("user:carol") is None and store.metadata.get("user:dave") is None
    assert stored_piece_ids(kb) == sorted(p["piece_id"] for p in team_document()["pieces"])
    assert kb.graph.get(ids=["db:prod", "technique:rans"]) == []
    assert {t for _, _, t, _ in kb.graph.iter_relations()} == {
        "SPECIALIZES_IN",
        "MEMBER_OF",
        "COLLABORATES_WITH",
        "USES",
        "VALIDATED_ON",
    }


def test_edges_may_refer_to_nodes_and_pieces_loaded_earlier(kb: KnowledgeBase) -> None:
    assert load_knowledge(kb, SEED_EXAMPLE).ok
    later = {
        "graph": {
            "nodes": [{"node_id": "technique:rans", "node_type": "technique"}],
            "edges": [
                {
                    "source_id": "technique:rans",
                    "target_id": "technique:les",
                    "edge_type": "INITIALIZES",
                    "properties": {"piece_id": "les-rans-init", "weight": 0.2},
                }
            ],
        }
    }
    report = load_knowledge(kb, later)
    assert report.ok and report.added["edges"] == 1


def test_wrong_section_types_are_itemised(kb: KnowledgeBase) -> None:
    report = load_knowledge(
        kb,
        {
            "metadata": ["not", "objects"],
            "pieces": {"piece_id": "p", "content": "x"},
            "graph": {"nodes": "user:alice", "edges": [], "extra": 1},
            "piece": [],
        },
    )
    assert skipped(report) == {
        "piece": "unknown section; expected metadata, pieces or graph",
        "metadata[0]": "must be an object with entity_type and properties, not a string",
        "metadata[1]": "must be an object with entity_type and properties, not a string",
        "pieces": "must be a list of objects, not an object",
        "graph.extra": "unknown key; expected nodes or edges",
        "graph.nodes": "must be a list of objects, not a string",
    }
    assert report.loaded == {"metadata": 0, "pieces": 0, "nodes": 0, "edges": 0}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", r"not valid JSON: Expecting property name .* at line 1 column 2"),
        ("[1, 2]", "the top level must be a JSON object .* not a list"),
        ('{"documents": []}', "no knowledge found: expected metadata, pieces or graph"),
    ],
)
def test_unusable_documents_raise_and_write_nothing(
    kb: KnowledgeBase, tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(DocumentError, match=message):
        load_knowledge(kb, path)
    with pytest.raises(DocumentError, match="no such file"):
        load_knowledge(kb, tmp_path / "missing.json")
    assert kb.graph.count_nodes() == 0 and stored_piece_ids(kb) == []


# -- CLI -----------------------------------------------------------------------------------------


def test_cli_load_exit_codes(capsys, tmp_path: Path) -> None:
    kb_dir = str(tmp_path / "kb")
    code, out, err = run_command(capsys, "load", str(SEED_EXAMPLE), "--kb", kb_dir)
    assert code == 0 and out.startswith("added 5, updated 0, unchanged 0, skipped 0") and not err
    code, out, _ = run_command(capsys, "load", str(SEED_EXAMPLE), "--kb", kb_dir, "--json")
    assert code == 0 and json.loads(out)["unchanged"]["pieces"] == 1

    partial = tmp_path / "partial.json"
    partial.write_text(
        json.dumps({"pieces": [{"piece_id": "a", "content": ""}, {"content": "ok"}]})
    )
    code, out, err = run_command(capsys, "load", str(partial), "--kb", kb_dir)
    assert code == 1 and "added 1" in out
    assert err.strip() == "skipped: pieces[0] 'a': content must not be empty"

    broken = tmp_path / "broken.json"
    broken.write_text("{")
    code, out, err = run_command(capsys, "load", str(broken), "--kb", kb_dir)
    assert code == 2 and out == ""
    assert err.startswith("llama-kb: error: ") and "not valid JSON" in err
    assert len(err.strip().splitlines()) == 1
