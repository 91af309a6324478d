"""Answer builders and an LLM factory for the memory tests (not a test module)."""

from __future__ import annotations

import json

from conftest import ScriptedLLMDouble


def items(*entries: tuple[str, str, list[str]], knowledge_type: str = "fact") -> str:
    """An extraction answer: ``(content, level, source message ids)`` per item."""
    return json.dumps(
        {
            "items": [
                {
                    "content": content,
                    "level": level,
                    "confidence": 0.9,
                    "source_message_ids": ids,
                    "knowledge_type": knowledge_type,
                }
                for content, level, ids in entries
            ]
        }
    )


def decision(kind: str, piece_id: str | None = None, merged: str | None = None) -> str:
    """A dedup decision answer."""
    return json.dumps(
        {"decision": kind, "piece_id": piece_id, "merged_content": merged, "reason": f"{kind}!"}
    )


CONVERSATION = [
    {"role": "user", "content": "I always want answers in metric units, I'm Alice from Acme."},
    {"role": "assistant", "content": "Noted. Anything about your team?"},
    {"role": "user", "content": "At Acme, every release needs two reviewers."},
    {"role": "user", "content": "Water boils at 100 degrees Celsius at sea level."},
]


SCRIPT: list[str] = []
"""Answers for :func:`scripted_from_script` (the CLI test sets them)."""


def scripted_from_script() -> ScriptedLLMDouble:
    """A factory the CLI can name with ``--llm memory_helpers:scripted_from_script``."""
    return ScriptedLLMDouble(answers=list(SCRIPT))
