"""The knowledge models and the sensitive-pattern guards."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from llama_kb.knowledge import (
    GraphEdge,
    GraphNode,
    KnowledgePiece,
    KnowledgeType,
    find_secrets,
    redact,
)
from llama_kb.knowledge.guards import scan

# -- models ------------------------------------------------------------------------------------


def test_knowledge_type_is_case_insensitive_and_checked() -> None:
    piece = KnowledgePiece(piece_id="p", content="x", knowledge_type=" Procedure ")
    assert piece.knowledge_type is KnowledgeType.PROCEDURE
    with pytest.raises(ValidationError, match="'recipe' is not one of fact, instruction"):
        KnowledgePiece(piece_id="p", content="x", knowledge_type="recipe")


def test_piece_defaults_and_cleaning() -> None:
    piece = KnowledgePiece(
        piece_id=" p1 ", content="  text ", tags=["les", " les", "", "rans"], entity_id=""
    )
    assert piece.piece_id == "p1" and piece.content == "text"
    assert piece.tags == ("les", "rans")
    assert piece.entity_id is None and piece.info_type == "context"
    assert piece.knowledge_type is KnowledgeType.NOTE
    assert piece.text_to_embed == "text"
    assert KnowledgePiece(piece_id="p", content="c", embedding_text="k").text_to_embed == "k"


def test_missing_piece_id_is_derived_from_entity_and_content() -> None:
    a = KnowledgePiece.model_validate({"content": "same", "entity_id": "user:a"})
    b = KnowledgePiece.model_validate({"content": "same", "entity_id": "user:a"})
    c = KnowledgePiece.model_validate({"content": "same", "entity_id": "user:b"})
    assert a.piece_id == b.piece_id != c.piece_id
    assert a.piece_id.startswith("piece-")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"piece_id": "p", "content": "   "}, "content must not be empty"),
        ({"piece_id": "p"}, "content"),
        ({"piece_id": "p", "content": "x", "tags": "les"}, "tags must be a list"),
        ({"piece_id": "p", "content": "x", "colour": "red"}, "colour"),
        ({"piece_id": "a\x00b", "content": "x"}, "control characters"),
    ],
)
def test_invalid_pieces(data: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        KnowledgePiece.model_validate(data)


def test_content_hash_ignores_timestamps_only() -> None:
    piece = KnowledgePiece(piece_id="p", content="x", tags=["a"])
    stamped = piece.model_copy(update={"created_at": "2024-01-01T00:00:00Z"})
    assert stamped.content_hash() == piece.content_hash()
    assert KnowledgePiece(piece_id="p", content="x", tags=["b"]).content_hash() != (
        piece.content_hash()
    )


def test_graph_properties_must_be_flat() -> None:
    with pytest.raises(ValidationError, match=r"properties\.meta must be a string, number"):
        GraphNode(node_id="n", properties={"meta": {"nested": 1}})
    node = GraphNode(node_id="n", properties={"langs": ["c", "py"], "since": 2019, "x": None})
    assert node.name == "n"


def test_edge_weight_and_piece_link() -> None:
    edge = GraphEdge(source_id="a", target_id="b", edge_type="R", properties={"piece_id": "p"})
    assert edge.weight == 1.0 and edge.piece_id == "p" and edge.key == ("a", "R", "b")
    for bad in (1.5, -0.1, "heavy", True):
        with pytest.raises(ValidationError, match="weight"):
            GraphEdge(source_id="a", target_id="b", edge_type="R", properties={"weight": bad})


# -- guards ------------------------------------------------------------------------------------

SECRETS = {
    # AWS's documented EXAMPLE keys are harmless look-alikes (see test_documented_examples_...)
    "aws_access_key_id": "key AKIA2E0A8F3B244C9986 in the config",
    "aws_secret_access_key": "aws_secret_access_key = q7Rt0ZbLm4Xk9Vw2Pn6Hc1Jy8Ds3Gf5Ae0Tu7Bi2",
    "openai_api_key": "use sk-proj-abcdefghijklmnopqrstuvwx1234 for calls",
    "github_token": "token ghp_abcdefghijklmnopqrstuvwxyz0123456789 works",
    "slack_token": "xoxb-123456789012-abcdefghij",
    "google_api_key": "AIzaSyA-abcdefghijklmnopqrstuvwxyz01234",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
    "bearer_token": "curl -H 'Authorization: Bearer abc123def456ghi'",
    "credentials_in_url": "postgres://admin:s3cret@db.example.com:5432/cfd",
    "credential_assignment": "set password=hunter22 before the run",
    "private_key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEow...\n-----END RSA PRIVATE KEY-----",
}


@pytest.mark.parametrize(("name", "text"), sorted(SECRETS.items()))
def test_each_secret_kind_is_found_and_redacted(name: str, text: str) -> None:
    assert name in find_secrets(text)
    cleaned = redact(text)
    assert f"[REDACTED:{name}]" in cleaned
    assert find_secrets(cleaned) == []


def test_documented_example_keys_and_placeholders_are_not_secrets() -> None:
    assert find_secrets("key AKIAIOSFODNN7EXAMPLE from the AWS docs") == []
    assert find_secrets("OPENAI_API_KEY=<your-key>\npassword: ${DB_PASSWORD}") == []


def test_json_style_and_connection_string_passwords() -> None:
    assert find_secrets('{"password": "hunter22"}') == ["credential_assignment"]
    assert "credential_assignment" in find_secrets("Server=db;User Id=sa;Password=Pa55word;")
    assert scan({"properties": {"api_key": "anything"}}) == ["credential_property"]
    assert scan({"notes": ["fine", {"token": "abc"}]}) == ["credential_property"]


@pytest.mark.parametrize(
    "text",
    [
        "Rotate the password every 90 days and never share it",
        "Bearer authentication is configured by the platform team",
        "Use a bearer token from the vault; API keys live in the secret manager",
        "The sk-learn style of naming is not a key",
        "See https://example.com/docs/page@v2 for details",
        "Set max_tokens=512 and temperature=0.2",
        "Smagorinsky constant of 0.1 works better than default 0.17",
    ],
)
def test_prose_about_credentials_is_not_flagged(text: str) -> None:
    assert find_secrets(text) == []
