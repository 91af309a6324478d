"""Typed results of the agent graph (also the MCP tools' structured outputs), and input limits."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from pydantic import BaseModel, Field

from llama_kb.agent_graph.commits import Commit
from llama_kb.errors import QueryError

MAX_CONTENT_CHARS = 100_000
MAX_NAME_CHARS = 200
MAX_MESSAGE_CHARS = 2_000
MAX_METADATA_CHARS = 20_000
RESERVED_KEYS = frozenset({"workspace", "path", "content", "agent_key", "weight"})
_RELATION_TYPE = re.compile(r"[A-Za-z_][A-Za-z0-9_:.-]{0,63}")


class NodeView(BaseModel):
    """A concept, a resource, or a missing concept that relations name."""

    uri: str
    kind: str = Field(description="concept, resource or missing_concept")
    name: str | None = None
    content: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    path_cost: float | None = Field(None, description="summed weights from the traversal start")


class RelationView(BaseModel):
    """A directed, weighted relation (weight = traversal cost, 0..1)."""

    source: str
    target: str
    type: str
    weight: float
    metadata: dict[str, Any] = Field(default_factory=dict)


class CommitView(BaseModel):
    """One recorded write."""

    id: int
    workspace: str
    author: str
    message: str
    created_at: float
    reverts: int | None = None
    reverted_by: int | None = None
    nodes_added: list[str] = Field(default_factory=list)
    nodes_changed: list[str] = Field(default_factory=list)
    nodes_removed: list[str] = Field(default_factory=list)
    relations_added: list[str] = Field(default_factory=list)
    relations_changed: list[str] = Field(default_factory=list)
    relations_removed: list[str] = Field(default_factory=list)

    @classmethod
    def of(cls, commit: Commit) -> CommitView:
        """From a stored commit."""
        return cls(**commit.summary())


class WriteResult(BaseModel):
    """What a write did: its commit (``None`` when nothing changed) and warnings."""

    commit: CommitView | None = None
    warnings: list[str] = Field(default_factory=list)


class ConceptView(BaseModel):
    """A node with its relations, and the active context after reading it."""

    node: NodeView
    outgoing: list[RelationView] = Field(default_factory=list)
    incoming: list[RelationView] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    active_context: list[str] = Field(default_factory=list)
    evicted: list[str] = Field(default_factory=list)


class TraversalView(BaseModel):
    """Nodes reached from ``start`` within the cost budget, nearest first."""

    start: str
    max_cost: float
    nodes: list[NodeView] = Field(default_factory=list)
    relations: list[RelationView] = Field(default_factory=list)
    broken_links: list[str] = Field(
        default_factory=list, description="missing concepts that reached nodes link to"
    )
    warnings: list[str] = Field(default_factory=list)
    active_context: list[str] = Field(default_factory=list)
    evicted: list[str] = Field(default_factory=list, description="pushed out of the LRU")


class ActiveContextView(BaseModel):
    """The nodes the agent is working with, most recently used first."""

    limit: int
    nodes: list[NodeView] = Field(default_factory=list)


class HistoryView(BaseModel):
    """Recent commits, newest first."""

    commits: list[CommitView] = Field(default_factory=list)


def check_text(value: str | None, what: str, limit: int) -> str | None:
    """``value`` if it is ``None`` or a string of at most ``limit`` characters."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise QueryError(f"{what} must be a string")
    if len(value) > limit:
        raise QueryError(f"{what} is {len(value)} characters long; the limit is {limit}")
    return value


def check_metadata(metadata: dict[str, Any] | None) -> dict[str, Any]:
    """Validate LLM-defined properties: JSON, small, no reserved keys."""
    if not metadata:
        return {}
    if not isinstance(metadata, dict):
        raise QueryError("metadata must be a JSON object")
    reserved = sorted(RESERVED_KEYS & set(metadata))
    if reserved:
        raise QueryError(f"metadata keys {reserved} are reserved; rename them")
    try:
        size = len(json.dumps(metadata, allow_nan=False))
    except (TypeError, ValueError) as e:
        raise QueryError(f"metadata must be plain JSON: {e}") from e
    if size > MAX_METADATA_CHARS:
        raise QueryError(
            f"metadata is {size} characters as JSON; the limit is {MAX_METADATA_CHARS}"
        )
    return dict(metadata)


def check_weight(weight: Any) -> float:
    """A relation weight: a number from 0 (always together) to 1 (standard cost)."""
    if isinstance(weight, bool) or not isinstance(weight, int | float) or math.isnan(weight):
        raise QueryError(f"weight must be a number from 0 to 1, not {weight!r}")
    if not 0.0 <= float(weight) <= 1.0:
        raise QueryError(
            f"weight must be between 0 (always load together) and 1 (standard cost), not {weight}"
        )
    return float(weight)


def check_relation_type(rel_type: str) -> str:
    """A relation type such as ``depends_on`` or ``implemented_in``."""
    if not isinstance(rel_type, str) or not _RELATION_TYPE.fullmatch(rel_type):
        raise QueryError(
            f"invalid relation type {rel_type!r}: use 1-64 letters, digits, '_', ':', '.' or '-', "
            "starting with a letter or '_'"
        )
    return rel_type


def node_view(snap: dict[str, Any], path_cost: float | None = None) -> NodeView:
    """A node snapshot as shown to agents (bookkeeping properties hidden)."""
    props = dict(snap["properties"])
    content = props.pop("content", None)
    props.pop("workspace", None)
    props.pop("path", None)
    return NodeView(
        uri=snap["uri"],
        kind=snap["label"],
        name=snap["name"],
        content=content,
        metadata=props,
        path_cost=path_cost,
    )


def relation_view(snap: dict[str, Any]) -> RelationView:
    """A relation snapshot as shown to agents."""
    return RelationView(
        source=snap["source"],
        target=snap["target"],
        type=snap["type"],
        weight=snap["weight"],
        metadata=snap["properties"],
    )
