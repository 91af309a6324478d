"""What the LLM extracts from a conversation, and the access key each level gets."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from llama_kb.access import PUBLIC, Principal
from llama_kb.errors import ConfigurationError
from llama_kb.knowledge.model import KnowledgeType

Level = Literal["public", "organization", "individual"]


class MemoryItem(BaseModel):
    """One piece of knowledge extracted from a conversation (seed 001).

    Attributes:
        content: One self-contained statement.
        level: Who should see it: ``public``, ``organization`` or ``individual``.
        confidence: How sure the LLM is, 0..1.
        source_message_ids: The messages it comes from.
        knowledge_type: What it is (fact, preference, instruction ...).
    """

    model_config = ConfigDict(extra="ignore", frozen=True, str_strip_whitespace=True)

    content: str = Field(min_length=1, max_length=2000)
    level: Level
    confidence: float = Field(ge=0.0, le=1.0)
    source_message_ids: tuple[str, ...] = Field(min_length=1)
    knowledge_type: KnowledgeType = KnowledgeType.FACT

    @field_validator("source_message_ids", mode="before")
    @classmethod
    def _ids_as_text(cls, value: object) -> object:
        if isinstance(value, list | tuple):
            return tuple(str(v) for v in value)
        return value

    @field_validator("knowledge_type", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value


def level_key(level: Level, principal: Principal) -> str:
    """The access key of an item at ``level`` remembered for ``principal``.

    ``individual`` -> ``user:<user_id>``, ``organization`` -> ``org:<org_id>``,
    ``public`` -> ``public``.

    Raises:
        ConfigurationError: The principal has no user (individual) or no organization
            (organization).
    """
    if level == "individual":
        if principal.user_id is None:
            raise ConfigurationError("an individual item needs a principal with a user_id")
        return f"user:{principal.user_id}"
    if level == "organization":
        if principal.org_id is None:
            raise ConfigurationError("an organization item needs a principal with an org_id")
        return f"org:{principal.org_id}"
    return PUBLIC
