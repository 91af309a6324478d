"""The LLM decides what a new item is to similar stored pieces: new, existing, merge or
contradiction."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from llama_kb.knowledge.model import KnowledgePiece
from llama_kb.memory._ask import ask_json

Action = Literal["new", "existing", "merge", "contradiction"]

DECISION_PROMPT = """\
A new statement was learned from a conversation. Similar statements are already stored.
Decide what the new statement is, and answer with ONE JSON object, nothing else:

{"decision": "<new | existing | merge | contradiction>",
 "piece_id": "<id of the stored statement concerned, null for new>",
 "merged_content": "<for merge only: one statement holding both>",
 "reason": "<one sentence>"}

- new: it says something the stored statements do not.
- existing: a stored statement already says the same (maybe in other words).
- merge: it adds detail to a stored statement; write the combined statement.
- contradiction: it conflicts with a stored statement (both will be kept and flagged).

New statement: __NEW__

Stored statements:
__CANDIDATES__
"""


class Decision(BaseModel):
    """The LLM's verdict on one item.

    Attributes:
        decision: ``new``, ``existing``, ``merge`` or ``contradiction``.
        piece_id: The stored piece concerned (not for ``new``).
        merged_content: The combined statement (``merge`` only).
        reason: Why, in one sentence (kept in the audit trail).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)

    decision: Action
    piece_id: str | None = None
    merged_content: str | None = None
    reason: str = Field(default="", max_length=1000)

    @model_validator(mode="after")
    def _complete(self) -> Decision:
        if self.decision != "new" and not self.piece_id:
            raise ValueError(f"piece_id is required for decision {self.decision!r}")
        if self.decision == "merge" and not self.merged_content:
            raise ValueError("merged_content is required for decision 'merge'")
        return self


def decide(
    llm: Any,
    content: str,
    candidates: Sequence[tuple[KnowledgePiece, float]],
    source: str,
    max_retries: int,
) -> tuple[Decision, int]:
    """Ask ``llm`` what ``content`` is relative to ``candidates`` (``(piece, similarity)``).

    Raises:
        DocumentError: No valid decision within the attempts (an unknown ``piece_id`` counts
            as invalid).
    """
    ids = {piece.piece_id for piece, _ in candidates}
    listing = "\n".join(
        f"- piece_id={piece.piece_id} (similarity {score:.2f}): {piece.content}"
        for piece, score in candidates
    )
    prompt = DECISION_PROMPT.replace("__NEW__", content).replace("__CANDIDATES__", listing)

    def validate(data: Any) -> Decision:
        decision = Decision.model_validate(data)
        if (
            decision.piece_id is not None
            and decision.decision != "new"
            and decision.piece_id not in ids
        ):
            raise ValueError(f"piece_id {decision.piece_id!r} is not one of {sorted(ids)}")
        return decision

    return ask_json(llm, prompt, validate, source, max_retries)
