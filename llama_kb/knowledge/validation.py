"""Validation of a knowledge document: every item checked before anything is written.

Required fields, non-empty content, the ``knowledge_type`` enum, size limits, no credentials,
edges between existing nodes, linked pieces that exist, no conflicting duplicates. An invalid
item is skipped with its reason (:class:`SkippedItem`); the rest forms a
:class:`KnowledgePlan` that :func:`llama_kb.knowledge.loader.apply_plan` writes.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from llama_kb.errors import DocumentError
from llama_kb.knowledge import guards
from llama_kb.knowledge.model import EntityMetadata, GraphEdge, GraphNode, KnowledgePiece
from llama_kb.knowledge.store import KnowledgeStore

logger = logging.getLogger(__name__)

SECTIONS = ("metadata", "pieces", "graph")
MAX_PIECE_CHARS = 8_000
"""Longest ``content`` (and ``embedding_text``) accepted; split longer knowledge."""
MAX_PROPERTIES_CHARS = 16_000
"""Largest ``properties`` object accepted, measured as JSON."""

_M = TypeVar("_M", bound=BaseModel)


@dataclass(frozen=True)
class SkippedItem:
    """One item that was not loaded, and why (the reason never repeats a secret)."""

    item: str
    reason: str


@dataclass
class KnowledgePlan:
    """A validated document: the items to write, with their references, and what was skipped."""

    source: str
    metadata: list[tuple[str, EntityMetadata]] = field(default_factory=list)
    pieces: list[tuple[str, KnowledgePiece]] = field(default_factory=list)
    nodes: list[tuple[str, GraphNode]] = field(default_factory=list)
    edges: list[tuple[str, GraphEdge]] = field(default_factory=list)
    skipped: list[SkippedItem] = field(default_factory=list)
    secrets: str = "reject"
    """Secret mode (``SecretsConfig.knowledge``): ``off``, ``warn``; else items are skipped."""

    def skip(self, item: str, reason: str) -> None:
        """Record an invalid item."""
        self.skipped.append(SkippedItem(item, reason))


# -- validation -------------------------------------------------------------------------------


def validate_knowledge(
    data: Any,
    source: str,
    store: KnowledgeStore | None = None,
    max_piece_chars: int = MAX_PIECE_CHARS,
    secrets: str = "reject",
) -> KnowledgePlan:
    """Validate a parsed document item by item.

    Args:
        data: The parsed JSON document.
        source: Its name, for messages.
        store: Where nodes and pieces that edges refer to may already exist; without it
            edges may only refer to items of this document.
        max_piece_chars: Longest accepted ``content`` / ``embedding_text``.
        secrets: Secret mode, as in :func:`load_knowledge`.

    Returns:
        The plan: valid items in document order and the skipped ones with reasons.

    Raises:
        DocumentError: The document is not an object holding at least one known section.
    """
    if not isinstance(data, Mapping):
        raise DocumentError(
            source,
            f"the top level must be a JSON object with {_listing(SECTIONS)}, "
            f"not {_type_name(data)}",
        )
    if not any(key in data for key in SECTIONS):
        raise DocumentError(source, f"no knowledge found: expected {_listing(SECTIONS)}")
    plan = KnowledgePlan(source, secrets=secrets)
    for key in sorted(k for k in data if k not in SECTIONS):
        plan.skip(_safe(str(key)), f"unknown section; expected {_listing(SECTIONS)}")
    _validate_metadata(data.get("metadata"), plan)
    _validate_pieces(data.get("pieces"), plan, max_piece_chars)
    graph = data.get("graph")
    if graph is not None and not isinstance(graph, Mapping):
        plan.skip("graph", f"must be an object with nodes and edges, not {_type_name(graph)}")
    elif graph is not None:
        for key in sorted(k for k in graph if k not in ("nodes", "edges")):
            plan.skip(f"graph.{_safe(str(key))}", "unknown key; expected nodes or edges")
        _validate_nodes(graph.get("nodes"), plan)
        _validate_edges(graph.get("edges"), plan, store)
    return plan


def _validate_metadata(section: Any, plan: KnowledgePlan) -> None:
    if section is None:
        return
    entries: list[tuple[str, Any]]
    if isinstance(section, Mapping):
        entries = []
        for key, value in section.items():
            ref = f"metadata[{_safe(str(key))!r}]"
            if isinstance(value, Mapping):
                if "entity_id" in value and value["entity_id"] != key:
                    plan.skip(ref, "entity_id differs from the key it is stored under")
                    continue
                value = {**value, "entity_id": key}
            entries.append((ref, value))
    elif isinstance(section, list):
        entries = [(_ref("metadata", i, v, "entity_id"), v) for i, v in enumerate(section)]
    else:
        plan.skip(
            "metadata",
            f"must be an object keyed by entity_id (or a list), not {_type_name(section)}",
        )
        return
    seen: dict[str, tuple[str, EntityMetadata]] = {}
    for ref, value in entries:
        item = _check_item(ref, value, plan, EntityMetadata, "entity_type and properties")
        if item is not None and _first_or_same(ref, item.entity_id, item, seen, plan):
            plan.metadata.append((ref, item))


def _validate_pieces(section: Any, plan: KnowledgePlan, max_chars: int) -> None:
    if section is None:
        return
    if not isinstance(section, list):
        plan.skip("pieces", f"must be a list of objects, not {_type_name(section)}")
        return
    seen: dict[str, tuple[str, KnowledgePiece]] = {}
    for i, value in enumerate(section):
        ref = _ref("pieces", i, value, "piece_id")
        if isinstance(value, Mapping):
            too_long = [
                f"{key} has {len(value[key])} characters (at most {max_chars}); split it"
                for key in ("content", "embedding_text")
                if isinstance(value.get(key), str) and len(value[key]) > max_chars
            ]
            if too_long:
                plan.skip(ref, "; ".join(too_long))
                continue
        piece = _check_item(ref, value, plan, KnowledgePiece, "content")
        if piece is not None and _first_or_same(ref, piece.piece_id, piece, seen, plan):
            plan.pieces.append((ref, piece))


def _validate_nodes(section: Any, plan: KnowledgePlan) -> None:
    if section is None:
        return
    if not isinstance(section, list):
        plan.skip("graph.nodes", f"must be a list of objects, not {_type_name(section)}")
        return
    seen: dict[str, tuple[str, GraphNode]] = {}
    for i, value in enumerate(section):
        ref = _ref("graph.nodes", i, value, "node_id")
        node = _check_item(ref, value, plan, GraphNode, "node_id")
        if node is not None and _first_or_same(ref, node.node_id, node, seen, plan):
            plan.nodes.append((ref, node))


def _validate_edges(section: Any, plan: KnowledgePlan, store: KnowledgeStore | None) -> None:
    if section is None:
        return
    if not isinstance(section, list):
        plan.skip("graph.edges", f"must be a list of objects, not {_type_name(section)}")
        return
    checked: list[tuple[str, GraphEdge]] = []
    for i, value in enumerate(section):
        ref = f"graph.edges[{i}]"
        if isinstance(value, Mapping):
            ends = [value.get(k) for k in ("source_id", "edge_type", "target_id")]
            if all(isinstance(e, str) for e in ends) and not guards.scan(ends):
                ref += f" {ends[0]} -[{ends[1]}]-> {ends[2]}"
        edge = _check_item(ref, value, plan, GraphEdge, "source_id, target_id and edge_type")
        if edge is not None:
            checked.append((ref, edge))
    known_nodes = {n.node_id for _, n in plan.nodes}
    known_pieces = {p.piece_id for _, p in plan.pieces}
    wanted_nodes = {n for _, e in checked for n in (e.source_id, e.target_id)} - known_nodes
    wanted_pieces = {e.piece_id for _, e in checked if e.piece_id} - known_pieces
    if store is not None:
        known_nodes |= store.graph.existing_nodes(sorted(wanted_nodes))
        known_pieces |= set(store.pieces.get(sorted(p for p in wanted_pieces if p)))
    seen: dict[tuple[str, str, str], tuple[str, GraphEdge]] = {}
    for ref, edge in checked:
        missing = [
            f"{end} node {node_id!r} does not exist (add it to graph.nodes)"
            for end, node_id in (("source", edge.source_id), ("target", edge.target_id))
            if node_id not in known_nodes
        ]
        if edge.piece_id is not None and edge.piece_id not in known_pieces:
            missing.append(f"linked piece_id {edge.piece_id!r} does not exist")
        if missing:
            plan.skip(ref, "; ".join(missing))
        elif _first_or_same(ref, edge.key, edge, seen, plan):
            plan.edges.append((ref, edge))


def _check_item(
    ref: str, value: Any, plan: KnowledgePlan, model: type[_M], needs: str
) -> _M | None:
    """``value`` validated as ``model``, or ``None`` after recording why it was skipped."""
    if not isinstance(value, Mapping):
        plan.skip(ref, f"must be an object with {needs}, not {_type_name(value)}")
        return None
    secrets = [] if plan.secrets == "off" else guards.scan(value)
    if secrets and plan.secrets == "warn":
        logger.warning("%s: %s: loaded anyway (secrets.knowledge=warn)", ref, ", ".join(secrets))
    elif secrets:
        plan.skip(ref, guards.describe(secrets))
        return None
    properties = value.get("properties")
    if properties is not None:
        size = len(json.dumps(properties, ensure_ascii=False, default=str))
        if size > MAX_PROPERTIES_CHARS:
            plan.skip(
                ref, f"properties are {size} characters as JSON (at most {MAX_PROPERTIES_CHARS})"
            )
            return None
    try:
        return model.model_validate(dict(value))
    except ValidationError as e:
        plan.skip(ref, describe_validation_error(e))
        return None


def _first_or_same(
    ref: str, key: Any, item: BaseModel, seen: dict[Any, Any], plan: KnowledgePlan
) -> bool:
    """True for the first item with ``key``; a later identical one is dropped silently."""
    if key not in seen:
        seen[key] = (ref, item)
        return True
    first_ref, first = seen[key]
    if first != item:
        plan.skip(ref, f"duplicate id with different content (the first is {first_ref})")
    return False


def describe_validation_error(error: ValidationError) -> str:
    """A one-line reason from a pydantic error (messages never include the input)."""
    parts = []
    for item in error.errors():
        where = ".".join(str(p) for p in item["loc"])
        if item["type"] == "missing":
            message = "is required"
        elif item["type"] == "extra_forbidden":
            message = "is not a known field"
        else:
            message = str(item["msg"]).removeprefix("Value error, ")
        parts.append(message if not where or message.startswith(where) else f"{where} {message}")
    return "; ".join(parts)


def _ref(section: str, index: int, value: Any, id_key: str) -> str:
    ident = value.get(id_key) if isinstance(value, Mapping) else None
    if isinstance(ident, str) and ident.strip() and not guards.scan(ident):
        return f"{section}[{index}] {ident.strip()!r}"
    return f"{section}[{index}]"


def _safe(text: str) -> str:
    return "<redacted>" if guards.scan(text) else text


def _type_name(value: Any) -> str:
    """The JSON name of ``value``'s type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object" if isinstance(value, Mapping) else type(value).__name__


def _listing(names: Iterable[str]) -> str:
    *rest, last = list(names)
    return f"{', '.join(rest)} or {last}" if rest else last
