"""The three-layer knowledge model (seed 000): entity metadata, knowledge pieces, entity graph.

* :class:`EntityMetadata`: a profile (``user:alice`` -> ``{"team": "aero"}``), stored by
  ``entity_type``; the entity :data:`GLOBAL_ENTITY_ID` holds metadata shared by everyone.
* :class:`KnowledgePiece`: one searchable statement, labelled twice: ``knowledge_type`` says
  *what* it is (:class:`KnowledgeType`), ``info_type`` says *where* it goes in a prompt
  (``user_profile``, ``instructions``, ``context``, ``skills`` or any custom string).
* :class:`GraphNode` / :class:`GraphEdge`: entities and typed relations; an edge may link a
  piece through its ``piece_id`` property and carries a traversal ``weight`` (0..1).

The models validate input from JSON files and LLM output; they are frozen.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from llama_kb.access import OptionalAccessKey

GLOBAL_ENTITY_ID = "global"
"""Entity id whose metadata applies to every entity (``RetrievalResult.global_metadata``)."""

DEFAULT_INFO_TYPE = "context"
DEFAULT_NODE_TYPE = "concept"
MAX_ID_CHARS = 256


class KnowledgeType(StrEnum):
    """What a piece of knowledge is (case-insensitive on input)."""

    FACT = "fact"
    INSTRUCTION = "instruction"
    PREFERENCE = "preference"
    PROCEDURE = "procedure"
    NOTE = "note"
    EPISODIC = "episodic"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)


RESERVED_PREFIXES = ("doc:", "chunk:", "entity:", "fact:", "section:", "symbol:", "module:")
"""Node id namespaces of ingested documents: knowledge JSON may link to them, never write them."""
RESERVED_PROPERTIES = frozenset({"origin", "doc_id", "chunk_id", "access"})
"""Properties set by llama-kb (provenance, prune keys, access): not writable from knowledge."""


Permissions = OptionalAccessKey
"""A ``permissions`` field (seed 001): stored as its access key."""


def _check_id(value: str, what: str) -> str:
    if not value:
        raise ValueError(f"{what} must not be empty")
    if len(value) > MAX_ID_CHARS:
        raise ValueError(f"{what} is longer than {MAX_ID_CHARS} characters")
    if any(unicodedata.category(c).startswith("C") for c in value):
        raise ValueError(f"{what} must not contain control characters")
    return value


class EntityMetadata(_Model):
    """The profile of one entity (a user, a team, a project ...).

    Attributes:
        entity_id: Unique id, URI-like by convention (``user:alice``).
        entity_type: Namespace of the entity (``user``); metadata is stored per type.
        properties: Free ``key: value`` pairs, rendered sorted by key.
        permissions: Who may read it (:mod:`llama_kb.access`; seed 001's
            ``{"level": ..., "orgId": ..., "userId": ...}`` or a key); default public.
    """

    entity_id: str
    entity_type: str
    properties: dict[str, Any] = Field(default_factory=dict)
    permissions: Permissions = None

    @field_validator("entity_id", "entity_type")
    @classmethod
    def _non_empty(cls, value: str, info: Any) -> str:
        return _check_id(value, info.field_name)


class KnowledgePiece(_Model):
    """One searchable statement with its two labels.

    Attributes:
        piece_id: Unique id; derived from entity and content when not given.
        content: The text that reaches the prompt.
        knowledge_type: What the piece is (fact, instruction, preference, procedure, note,
            episodic).
        info_type: The prompt section it belongs to (any string; default ``context``).
        tags: Labels for filtering, in the given order, without duplicates.
        entity_id: The entity the piece belongs to; ``None`` for knowledge shared by all.
        embedding_text: Text embedded for search instead of ``content`` (keywords, synonyms).
        created_at: When the piece was first stored (set by the store when not given).
        updated_at: When its content last changed (set by the store when not given).
        permissions: Who may read it (see :class:`EntityMetadata`); default public.
    """

    piece_id: str
    content: str
    knowledge_type: KnowledgeType = KnowledgeType.NOTE
    info_type: str = DEFAULT_INFO_TYPE
    tags: tuple[str, ...] = ()
    entity_id: str | None = None
    embedding_text: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    permissions: Permissions = None

    @model_validator(mode="before")
    @classmethod
    def _derive_id(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("piece_id") in (None, "") and "content" in data:
            content = data.get("content")
            if isinstance(content, str) and content.strip():
                owner = data.get("entity_id") if isinstance(data.get("entity_id"), str) else ""
                digest = hashlib.sha256(f"{owner}\x00{content.strip()}".encode()).hexdigest()
                data = {**data, "piece_id": f"piece-{digest[:16]}"}
        return data

    @field_validator("piece_id")
    @classmethod
    def _valid_id(cls, value: str) -> str:
        return _check_id(value, "piece_id")

    @field_validator("content")
    @classmethod
    def _non_empty_content(cls, value: str) -> str:
        if not value:
            raise ValueError("content must not be empty")
        return value

    @field_validator("knowledge_type", mode="before")
    @classmethod
    def _case_insensitive(cls, value: Any) -> Any:
        if isinstance(value, str):
            lowered = value.strip().lower()
            if lowered not in KnowledgeType._value2member_map_:
                allowed = ", ".join(t.value for t in KnowledgeType)
                raise ValueError(f"knowledge_type {value!r} is not one of {allowed}")
            return lowered
        return value

    @field_validator("info_type")
    @classmethod
    def _valid_info_type(cls, value: str) -> str:
        return _check_id(value, "info_type")

    @field_validator("tags", mode="before")
    @classmethod
    def _clean_tags(cls, value: Any) -> Any:
        if value is None:
            return ()
        if isinstance(value, str) or not isinstance(value, list | tuple):
            raise ValueError("tags must be a list of strings")
        if not all(isinstance(t, str) for t in value):
            raise ValueError("tags must be a list of strings")
        stripped = (t.strip() for t in value)
        return tuple(dict.fromkeys(t for t in stripped if t))

    @field_validator("entity_id", "embedding_text")
    @classmethod
    def _blank_is_none(cls, value: str | None) -> str | None:
        return value or None

    @property
    def text_to_embed(self) -> str:
        """``embedding_text`` when given, else ``content``."""
        return self.embedding_text or self.content

    def content_hash(self) -> str:
        """Hash of everything but the timestamps: equal hashes mean nothing to rewrite."""
        data = self.model_dump(mode="json", exclude={"created_at", "updated_at"})
        return stable_hash(data)


_SCALARS = (str, int, float, bool)


def _flat_properties(value: dict[str, Any]) -> dict[str, Any]:
    """Graph servers store only scalars and lists of scalars as properties; llama-kb's own
    properties (:data:`RESERVED_PROPERTIES`) cannot be set."""
    reserved = sorted(RESERVED_PROPERTIES & set(value))
    if reserved:
        raise ValueError(f"properties {reserved} are set by llama-kb; remove them")
    for key, item in value.items():
        items = item if isinstance(item, list) else [item]
        if not all(i is None or isinstance(i, _SCALARS) for i in items):
            raise ValueError(
                f"properties.{key} must be a string, number, boolean or a list of them"
            )
    return value


class GraphNode(_Model):
    """An entity of the knowledge graph.

    Attributes:
        node_id: Graph id, used as given (``user:alice``, ``technique:les``).
        node_type: Kind of entity (``user``, ``technique``); default ``concept``.
        label: Display name; defaults to ``node_id``.
        properties: Free properties: strings, numbers, booleans or lists of them
            (:data:`RESERVED_PROPERTIES` are not allowed).
        permissions: Who may read it (see :class:`EntityMetadata`); default public.
    """

    node_id: str
    node_type: str = DEFAULT_NODE_TYPE
    label: str | None = None
    properties: dict[str, Any] = Field(default_factory=dict)
    permissions: Permissions = None

    @field_validator("node_id", "node_type")
    @classmethod
    def _non_empty(cls, value: str, info: Any) -> str:
        return _check_id(value, info.field_name)

    @field_validator("node_id")
    @classmethod
    def _own_namespace(cls, value: str) -> str:
        if value.startswith(RESERVED_PREFIXES):
            raise ValueError(
                f"node_id {value!r} is in a namespace of ingested documents "
                f"({', '.join(RESERVED_PREFIXES)}); knowledge may link to such nodes, not "
                "write them: choose another id"
            )
        return value

    @field_validator("properties")
    @classmethod
    def _flat(cls, value: dict[str, Any]) -> dict[str, Any]:
        return _flat_properties(value)

    @property
    def name(self) -> str:
        """The display name: ``label`` or the id."""
        return self.label or self.node_id


class GraphEdge(_Model):
    """A directed, typed relation between two nodes.

    Attributes:
        source_id: Id of the source node.
        target_id: Id of the target node.
        edge_type: Relation type (``SPECIALIZES_IN``).
        properties: Free properties (strings, numbers, booleans or lists of them);
            ``piece_id`` links a knowledge piece, ``weight`` (0..1, default 1.0) is the
            traversal cost, ``description`` is shown when formatting;
            :data:`RESERVED_PROPERTIES` are not allowed.
        permissions: Who may read it (see :class:`EntityMetadata`); default public.
    """

    source_id: str
    target_id: str
    edge_type: str
    properties: dict[str, Any] = Field(default_factory=dict)
    permissions: Permissions = None

    @field_validator("source_id", "target_id", "edge_type")
    @classmethod
    def _non_empty(cls, value: str, info: Any) -> str:
        return _check_id(value, info.field_name)

    @field_validator("properties")
    @classmethod
    def _valid_link_and_weight(cls, value: dict[str, Any]) -> dict[str, Any]:
        piece_id = value.get("piece_id")
        if piece_id is not None and (not isinstance(piece_id, str) or not piece_id.strip()):
            raise ValueError("properties.piece_id must be a non-empty string")
        weight = value.get("weight", 1.0)
        if isinstance(weight, bool) or not isinstance(weight, int | float):
            raise ValueError("properties.weight must be a number from 0 to 1")
        if not 0.0 <= float(weight) <= 1.0:
            raise ValueError("properties.weight must be between 0 and 1")
        return _flat_properties(value)

    @property
    def key(self) -> tuple[str, str, str]:
        """``(source_id, edge_type, target_id)``: what identifies the edge."""
        return (self.source_id, self.edge_type, self.target_id)

    @property
    def piece_id(self) -> str | None:
        """The linked piece, if any."""
        value = self.properties.get("piece_id")
        return value.strip() if isinstance(value, str) else None

    @property
    def weight(self) -> float:
        """Traversal cost in 0..1 (default 1.0)."""
        return float(self.properties.get("weight", 1.0))


def stable_hash(data: Any) -> str:
    """sha256 of ``data`` as canonical JSON (sorted keys), for change detection."""
    canonical = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()
