"""Conversations in, plain messages out; levels to access keys."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from llama_kb import ConfigurationError, DocumentError
from llama_kb.access import Principal
from llama_kb.memory import Message, level_key, to_messages


def test_messages_of_every_kind_and_their_ids() -> None:
    messages = to_messages(
        [
            SystemMessage("Be brief."),
            HumanMessage([{"type": "text", "text": "Hello "}, {"type": "text", "text": "there"}]),
            {"id": 7, "role": "assistant", "content": "Hi."},
        ]
    )
    assert messages == [
        Message("0", "system", "Be brief."),
        Message("1", "user", "Hello there"),
        Message("7", "assistant", "Hi."),
    ]


@pytest.mark.parametrize(
    ("conversation", "reason"),
    [
        ([], "non-empty list"),
        ("just text", "non-empty list"),
        ([{"role": "user", "content": "  "}], "no text content"),
        (
            [
                {"id": "a", "role": "user", "content": "x"},
                {"id": "a", "role": "user", "content": "y"},
            ],
            "unique",
        ),
        ([42], "unsupported message of type int"),
    ],
)
def test_malformed_conversations_are_refused(conversation: object, reason: str) -> None:
    with pytest.raises(DocumentError, match=reason):
        to_messages(conversation)  # type: ignore[arg-type]


def test_levels_map_to_the_principals_keys() -> None:
    alice = Principal(user_id="alice", org_id="acme", groups=frozenset({"eng"}))
    assert [level_key(lv, alice) for lv in ("public", "organization", "individual")] == [
        "public",
        "org:acme",
        "user:alice",
    ]
    with pytest.raises(ConfigurationError, match="user_id"):
        level_key("individual", Principal(org_id="acme"))
    with pytest.raises(ConfigurationError, match="org_id"):
        level_key("organization", Principal(user_id="alice"))
