"""Extract knowledge items from a conversation with an LLM (seed 001)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from llama_kb.knowledge.model import KnowledgeType
from llama_kb.memory._ask import ask_json
from llama_kb.memory.items import MemoryItem
from llama_kb.memory.messages import Message

EXTRACTION_PROMPT = """\
You read a conversation and extract the knowledge worth remembering for later conversations.

Answer with ONE JSON object, nothing else (no markdown, no comments), of this form:

{"items": [
  {"content": "<one self-contained statement>",
   "level": "<public | organization | individual>",
   "confidence": <0.0 to 1.0>,
   "source_message_ids": ["<id of a message it comes from>"],
   "knowledge_type": "<one of: __KNOWLEDGE_TYPES__>"}
]}

Rules:
- level: public = true for anyone; organization = about the speaker's organization, its
  systems and practices; individual = about the speaker (preferences, habits, their work).
- Name people and things explicitly: never "I", "he", "it".
- source_message_ids are ids shown in brackets below.
- Never include credentials or secrets. Answer {"items": []} when nothing is worth keeping.

Conversation:
__MESSAGES__
"""


class _Extraction(BaseModel):
    model_config = ConfigDict(extra="forbid")
    items: list[MemoryItem]


def build_extraction_prompt(messages: Sequence[Message]) -> str:
    """The extraction prompt for ``messages`` (``[id] role: content`` lines)."""
    lines = "\n".join(f"[{m.message_id}] {m.role}: {m.content}" for m in messages)
    return EXTRACTION_PROMPT.replace(
        "__KNOWLEDGE_TYPES__", ", ".join(t.value for t in KnowledgeType)
    ).replace("__MESSAGES__", lines)


def extract_items(
    llm: Any, messages: Sequence[Message], max_retries: int
) -> tuple[list[MemoryItem], int]:
    """The items ``llm`` extracts from ``messages``, validated, and the attempts it took.

    Raises:
        DocumentError: No valid answer within the attempts (malformed JSON, a missing field,
            a level or knowledge type out of range, an unknown source message id).
    """
    known = {m.message_id for m in messages}

    def validate(data: Any) -> list[MemoryItem]:
        items = _Extraction.model_validate(data).items
        for n, item in enumerate(items):
            unknown = sorted(set(item.source_message_ids) - known)
            if unknown:
                raise ValueError(f"items.{n}.source_message_ids: unknown message ids {unknown}")
        return items

    return ask_json(llm, build_extraction_prompt(messages), validate, "extraction", max_retries)
