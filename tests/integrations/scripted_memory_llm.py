"""A scripted LLM for the MCP server's ``remember`` tool (named by ``LLAMA_KB_LLM``)."""

from __future__ import annotations

import json

ITEM = "Dana prefers the Heronsbill layout for Falcon status reports"


def answer(prompt: str) -> str:
    """One individual preference from message ``m1`` for any extraction prompt."""
    item = {
        "content": ITEM,
        "level": "individual",
        "confidence": 0.9,
        "source_message_ids": ["m1"],
        "knowledge_type": "preference",
    }
    return json.dumps({"items": [item]})
