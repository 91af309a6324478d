"""Load knowledge from the seed's JSON format into the three layers.

The format (seed 000)::

    {
      "metadata": {"user:alice": {"entity_type": "user", "properties": {"team": "aero"}}},
      "pieces": [{"piece_id": "...", "content": "...", "knowledge_type": "procedure",
                  "info_type": "instructions", "tags": ["les"], "entity_id": "user:alice",
                  "embedding_text": "..."}],
      "graph": {"nodes": [{"node_id": "user:alice", "node_type": "user", "label": "Alice"}],
                "edges": [{"source_id": "user:alice", "target_id": "technique:les",
                           "edge_type": "SPECIALIZES_IN", "properties": {"piece_id": "..."}}]}
    }

``metadata`` may also be a list of objects with an ``entity_id``. Every item is validated
completely before anything is written (required fields, non-empty content, the
``knowledge_type`` enum, size limits, no credentials, edges between existing nodes, linked
pieces that exist, no conflicting duplicates); an invalid item is skipped and reported with
the reason, and the rest loads. Writes are upserts keyed by the items' ids, so loading the
same file twice changes nothing.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from llama_kb.errors import DocumentError, LlamaKBError
from llama_kb.ingest.guards.limits import check_file, current_limits, json_depth
from llama_kb.ingest.guards.records import value_problem
from llama_kb.knowledge.store import HasKnowledge, KnowledgeStore, knowledge_store
from llama_kb.knowledge.validation import (
    MAX_PIECE_CHARS,
    KnowledgePlan,
    SkippedItem,
    validate_knowledge,
)
from llama_kb.knowledge.writes import WriteStatus

logger = logging.getLogger(__name__)

LAYERS = ("metadata", "pieces", "nodes", "edges")
MAX_SOURCE_BYTES = 50_000_000
PIECE_BATCH = 256

__all__ = ["LoadReport", "apply_plan", "load_knowledge", "parse_json", "read_source"]


@dataclass
class LoadReport:
    """What loading did, per layer (``metadata``, ``pieces``, ``nodes``, ``edges``)."""

    source: str
    added: dict[str, int] = field(default_factory=lambda: dict.fromkeys(LAYERS, 0))
    updated: dict[str, int] = field(default_factory=lambda: dict.fromkeys(LAYERS, 0))
    unchanged: dict[str, int] = field(default_factory=lambda: dict.fromkeys(LAYERS, 0))
    skipped: list[SkippedItem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no item was skipped."""
        return not self.skipped

    @property
    def loaded(self) -> dict[str, int]:
        """Valid items per layer that are now stored (added, updated or unchanged)."""
        return {k: self.added[k] + self.updated[k] + self.unchanged[k] for k in LAYERS}

    @property
    def changed(self) -> int:
        """Items added or updated."""
        return sum(self.added.values()) + sum(self.updated.values())

    def count(self, layer: str, status: WriteStatus) -> None:
        """Record one written item."""
        getattr(self, status.value)[layer] += 1

    def skip(self, item: str, reason: str) -> None:
        """Record a skipped item (and log it as a warning)."""
        logger.warning("skipped %s: %s", item, reason)
        self.skipped.append(SkippedItem(item, reason))

    def summary(self) -> str:
        """One line, e.g. ``added 5, updated 0, unchanged 0, skipped 0 (metadata 1, ...)``."""
        loaded = ", ".join(f"{k} {v}" for k, v in self.loaded.items())
        return (
            f"added {sum(self.added.values())}, updated {sum(self.updated.values())}, "
            f"unchanged {sum(self.unchanged.values())}, skipped {len(self.skipped)} ({loaded})"
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable view."""
        data = asdict(self)
        data["loaded"] = self.loaded
        return data


# -- reading ----------------------------------------------------------------------------------


def read_source(source: str | Path | Mapping[str, Any]) -> tuple[Any, str]:
    """The parsed document and a name for it (the path, or ``<dict>``).

    Raises:
        DocumentError: The file cannot be read, is too large, or is not JSON.
    """
    if isinstance(source, Mapping):
        return _checked(source, "<dict>"), "<dict>"
    path = Path(source)
    name = str(path)
    try:
        size = check_file(path).st_size  # refuses FIFOs and devices, which never end
        if size > MAX_SOURCE_BYTES:
            raise DocumentError(name, f"file has {size} bytes; at most {MAX_SOURCE_BYTES}")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as e:
        raise DocumentError(name, "no such file") from e
    except UnicodeDecodeError as e:
        raise DocumentError(name, "not UTF-8 text") from e
    except OSError as e:
        raise DocumentError(name, f"cannot read it ({e.strerror})") from e
    return parse_json(text, name), name


def parse_json(text: str, source: str) -> Any:
    """``text`` parsed as JSON.

    Raises:
        DocumentError: Not valid JSON (the message gives line and column, never content),
            nested deeper than ``limits.max_json_depth``, or holding NaN/Infinity.
    """
    limit = current_limits().max_json_depth
    if json_depth(text) > limit:
        raise DocumentError(source, f"JSON nested deeper than limits.max_json_depth={limit}")
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as e:
        raise DocumentError(
            source, f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}"
        ) from e
    except ValueError as e:
        raise DocumentError(source, f"not valid JSON: {e}") from e
    return _checked(data, source)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _checked(data: Any, source: str) -> Any:
    """``data`` when every value can be stored (no NaN, bounded depth, string keys)."""
    problem = value_problem(data, "document", max_depth=current_limits().max_json_depth)
    if problem:
        raise DocumentError(source, problem)
    return data


# -- writing ----------------------------------------------------------------------------------


def apply_plan(plan: KnowledgePlan, store: KnowledgeStore) -> LoadReport:
    """Write a validated plan: metadata, then pieces, nodes and edges.

    Each item is one write (pieces: one Chroma call per batch of valid pieces), so an item
    that fails in the store leaves nothing behind and is reported like an invalid one.
    """
    report = LoadReport(plan.source)
    for item in plan.skipped:
        report.skip(item.item, item.reason)
    _write_each(report, "metadata", plan.metadata, store.metadata.put)
    failed: set[str] = set()
    for start in range(0, len(plan.pieces), PIECE_BATCH):
        batch = plan.pieces[start : start + PIECE_BATCH]
        try:
            statuses = store.pieces.upsert([piece for _, piece in batch])
        except LlamaKBError as e:
            for ref, piece in batch:
                report.skip(ref, f"could not be stored: {e}")
                failed.add(piece.piece_id)
            continue
        for status in statuses:
            report.count("pieces", status)
    _write_each(report, "nodes", plan.nodes, store.graph.upsert_node)
    edges = []
    for ref, edge in plan.edges:  # an edge must not link a piece that failed to store
        if edge.piece_id in failed:
            report.skip(ref, f"linked piece {edge.piece_id!r} could not be stored")
        else:
            edges.append((ref, edge))
    _write_each(report, "edges", edges, store.graph.upsert_edge)
    logger.info("loaded knowledge from %s: %s", plan.source, report.summary())
    return report


def _write_each(
    report: LoadReport,
    layer: str,
    items: list[tuple[str, Any]],
    write: Callable[[Any], WriteStatus],
) -> None:
    for ref, item in items:
        try:
            report.count(layer, write(item))
        except LlamaKBError as e:
            report.skip(ref, f"could not be stored: {e}")


def load_knowledge(
    kb: KnowledgeStore | HasKnowledge,
    source: str | Path | Mapping[str, Any],
    *,
    max_piece_chars: int = MAX_PIECE_CHARS,
    secrets: str = "reject",
) -> LoadReport:
    """Load a knowledge document (a JSON file or an already parsed ``dict``) into ``kb``.

    Args:
        kb: An open knowledge base (or its :class:`KnowledgeStore`).
        source: Path of a JSON file in the seed's format, or the parsed document.
        max_piece_chars: Longest accepted piece ``content``.
        secrets: What to do with an item holding a secret (``SecretsConfig.knowledge``):
            ``off`` (no scan), ``warn`` (load and log); ``redact`` and ``reject`` skip it.

    Returns:
        Counts per layer and every skipped item with its reason.

    Raises:
        DocumentError: The source cannot be read, is not JSON, or holds no knowledge
            sections (nothing is written then).

    Example:
        >>> report = load_knowledge(kb, "examples/knowledge/seed_example.json")  # doctest: +SKIP
        >>> report.summary()  # doctest: +SKIP
        'added 5, updated 0, unchanged 0, skipped 0 (metadata 1, pieces 1, nodes 2, edges 1)'
    """
    data, name = read_source(source)
    store = knowledge_store(kb)
    plan = validate_knowledge(data, name, store, max_piece_chars, secrets)
    return apply_plan(plan, store)
