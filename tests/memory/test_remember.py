"""``kb.remember``: extraction by level, retries, message formats, no LLM, secrets.

The only double is the LLM (:class:`ScriptedLLMDouble`); stores and embedding are real.
"""

from __future__ import annotations

import json
from contextlib import closing

import pytest
from conftest import ScriptedLLMDouble
from langchain_core.messages import AIMessage, HumanMessage
from llama_index.core.llms import ChatMessage
from memory_helpers import CONVERSATION, items

from llama_kb import ConfigurationError, DocumentError, KnowledgeBase
from llama_kb.access import Principal
from llama_kb.memory import MemoryAudit

ALICE = Principal(user_id="alice", org_id="acme")


def _stored(kb: KnowledgeBase, piece_id: str) -> tuple[str, str | None]:
    piece = kb.knowledge.pieces.get([piece_id])[piece_id]
    return piece.content, piece.permissions


def test_items_at_each_level_get_the_principals_scope(kb: KnowledgeBase) -> None:
    llm = ScriptedLLMDouble(
        answers=[
            items(
                ("Alice wants answers in metric units.", "individual", ["0"]),
                ("Every Acme release needs two reviewers.", "organization", ["2"]),
                ("Water boils at 100 degrees Celsius at sea level.", "public", ["3"]),
            )
        ]
    )
    result = kb.remember(CONVERSATION, principal=ALICE, llm=llm, conversation_id="c1")
    assert result.errors == [] and result.llm_calls == 1
    scopes = {o.item.level: (o.action, o.access) for o in result.outcomes}
    assert scopes == {
        "individual": ("added", "user:alice"),
        "organization": ("added", "org:acme"),
        "public": ("added", "public"),
    }
    for outcome in result.outcomes:
        assert _stored(kb, outcome.piece_id) == (outcome.item.content, outcome.access)
    # the prompt shows message ids (indexes, as the dicts had none)
    assert "[2] user: At Acme, every release needs two reviewers." in llm.prompts[0]
    # scopes hold: bob in acme reads the org item, not alice's own; an outsider only public
    bob = kb.retrieve_knowledge("release reviewers metric units", principal="bob@acme")
    assert {p.content for p, _ in bob.pieces} >= {"Every Acme release needs two reviewers."}
    assert "Alice wants answers in metric units." not in {p.content for p, _ in bob.pieces}
    with closing(MemoryAudit(kb.config.path)) as audit:
        assert [r.action for r in audit.records("c1")] == ["added"] * 3
        assert audit.provenance(result.outcomes[1].piece_id)[0].message_ids == ("2",)


def test_a_level_the_principal_cannot_have_is_an_error_for_that_item(kb: KnowledgeBase) -> None:
    llm = ScriptedLLMDouble(
        answers=[
            items(
                ("Every Acme release needs two reviewers.", "organization", ["2"]),
                ("Water boils at 100 degrees Celsius at sea level.", "public", ["3"]),
            )
        ]
    )
    result = kb.remember(CONVERSATION, principal="alice", llm=llm)
    assert [o.access for o in result.outcomes] == ["public"]
    assert len(result.errors) == 1 and "item 0" in result.errors[0]
    assert "org_id" in result.errors[0]


def test_invalid_output_is_retried_with_the_problems(kb: KnowledgeBase) -> None:
    bad_level = items(("Alice wants metric units.", "team", ["0"]))
    unknown_message = items(("Alice wants metric units.", "individual", ["9"]))
    good = items(("Alice wants metric units.", "individual", ["0"]))
    llm = ScriptedLLMDouble(answers=["not json at all", bad_level, unknown_message, good])
    result = kb.remember(CONVERSATION, principal=ALICE, llm=llm, max_retries=3)
    assert result.llm_calls == 4 and [o.action for o in result.outcomes] == ["added"]
    assert "rejected" in llm.prompts[1] and "items.0.level" in llm.prompts[2]
    assert "unknown message ids ['9']" in llm.prompts[3]


def test_no_valid_output_within_the_retries_stores_nothing(kb: KnowledgeBase) -> None:
    llm = ScriptedLLMDouble(answers=["{}", "{}"])
    with pytest.raises(DocumentError, match="no valid answer in 2 attempt"):
        kb.remember(CONVERSATION, principal=ALICE, llm=llm, max_retries=1)
    assert kb.knowledge.pieces.count() == 0


def test_langchain_and_llamaindex_messages_keep_their_ids(kb: KnowledgeBase) -> None:
    conversation = [
        HumanMessage("I prefer tabs over spaces.", id="m-1"),
        AIMessage("Got it."),
        ChatMessage(role="user", content="Use pytest.", additional_kwargs={"id": "m-3"}),
    ]
    llm = ScriptedLLMDouble(answers=[items(("Alice prefers tabs.", "individual", ["m-1", "1"]))])
    result = kb.remember(conversation, principal=ALICE, llm=llm)
    assert result.outcomes[0].item.source_message_ids == ("m-1", "1")
    assert "[m-1] user: I prefer tabs" in llm.prompts[0]
    assert (
        "[1] assistant: Got it." in llm.prompts[0] and "[m-3] user: Use pytest." in llm.prompts[0]
    )


def test_without_an_llm_the_error_names_the_setting(
    kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LLAMA_KB_LLM", raising=False)
    with pytest.raises(ConfigurationError, match="LLAMA_KB_LLM"):
        kb.remember(CONVERSATION, principal=ALICE)


def test_a_secret_refuses_the_conversation_before_anything_is_stored(kb: KnowledgeBase) -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    conversation = [*CONVERSATION, {"id": "m-9", "role": "user", "content": f"my token {token}"}]
    llm = ScriptedLLMDouble(answers=[])
    with pytest.raises(DocumentError) as caught:
        kb.remember(conversation, principal=ALICE, llm=llm)
    assert "message m-9: line 1: github_token" in str(caught.value)
    assert token not in str(caught.value)
    assert llm.prompts == [] and kb.knowledge.pieces.count() == 0


def test_cli_remember(kb: KnowledgeBase, tmp_path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from llama_kb.cli import main

    kb.close()
    conversation = tmp_path / "chat.json"
    conversation.write_text(json.dumps(CONVERSATION))
    monkeypatch.setattr(
        "memory_helpers.SCRIPT",
        [items(("Every Acme release needs two reviewers.", "organization", ["2"]))],
        raising=False,
    )
    code = main(
        [
            "remember",
            str(conversation),
            "--kb",
            str(kb.config.path),
            "--as",
            "alice@acme",
            "--llm",
            "memory_helpers:scripted_from_script",
            "--json",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert [(o["action"], o["access"]) for o in out["outcomes"]] == [("added", "org:acme")]
