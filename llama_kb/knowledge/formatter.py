"""Deterministic, prompt-ready text from retrieved knowledge (seed 000, "Formatting").

Same input, same bytes: metadata keys are sorted, pieces are ordered by
``(-score, piece_id)``, relations by ``(relation_type, target_id, source_id)``, non-string
values are rendered as canonical JSON, and no timestamps are printed. A whole result looks
like::

    [Metadata]
    specialization: turbomachinery
    team: aero

    [Global Metadata]
    organization: NASA

    [Knowledge]
    [procedure] Initialize transient LES from converged RANS -- cuts spin-up by ~40%
      Tags: les, initialization, rans
    ---
    [fact] Smagorinsky constant of 0.1 works better than default 0.17
      Tags: les, smagorinsky

    [Relationships]
    SPECIALIZES_IN → technique:les (LES)
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from llama_kb.knowledge.model import KnowledgePiece

if TYPE_CHECKING:
    from llama_kb.knowledge.retrieval import GraphContextItem, RetrievalResult

ScoredPiece = tuple[KnowledgePiece, float]


@dataclass(frozen=True)
class KnowledgeFormatter:
    """Renders metadata, pieces and relations as text.

    Args:
        section_delimiter: Between sections (and between blocks of one prompt section).
        item_delimiter: Between pieces.
        include_tags: Add a ``  Tags: a, b`` line below each piece that has tags.
        include_scores: Add a ``  Score: 0.853`` line below each piece.
        score_digits: Decimals of printed scores.
    """

    section_delimiter: str = "\n\n"
    item_delimiter: str = "\n---\n"
    include_tags: bool = True
    include_scores: bool = False
    score_digits: int = 3

    def format(self, result: RetrievalResult) -> str:
        """The whole result: ``[Metadata]``, ``[Global Metadata]``, ``[Knowledge]`` and
        ``[Relationships]`` sections, empty ones left out."""
        sections = [
            ("[Metadata]", self.format_metadata(_props(result.metadata))),
            ("[Global Metadata]", self.format_metadata(_props(result.global_metadata))),
            ("[Knowledge]", self.format_pieces(result.pieces)),
            ("[Relationships]", self.format_relationships(result.graph_context)),
        ]
        return self.section_delimiter.join(f"{head}\n{body}" for head, body in sections if body)

    def format_blocks(self, blocks: Iterable[str]) -> str:
        """Non-empty ``blocks`` joined by the section delimiter."""
        return self.section_delimiter.join(b for b in blocks if b)

    def format_metadata(self, properties: Mapping[str, Any]) -> str:
        """``key: value`` lines sorted by key."""
        return "\n".join(f"{k}: {render_value(properties[k])}" for k in sorted(properties))

    def format_pieces(self, pieces: Sequence[ScoredPiece]) -> str:
        """Pieces ordered by ``(-score, piece_id)``, joined by the item delimiter."""
        ordered = sorted(pieces, key=lambda ps: (-ps[1], ps[0].piece_id))
        return self.item_delimiter.join(self.format_piece(p, s) for p, s in ordered)

    def format_piece(self, piece: KnowledgePiece, score: float | None = None) -> str:
        """``[knowledge_type] content`` with optional tag and score lines."""
        lines = [f"[{piece.knowledge_type.value}] {piece.content}"]
        if self.include_tags and piece.tags:
            lines.append(f"  Tags: {', '.join(piece.tags)}")
        if self.include_scores and score is not None:
            lines.append(f"  Score: {score:.{self.score_digits}f}")
        return "\n".join(lines)

    def format_relationships(self, items: Sequence[GraphContextItem]) -> str:
        """One line per relation, ordered by ``(relation_type, target_id, source_id)``."""
        ordered = sorted(items, key=lambda i: (i.relation_type, i.target_id, i.source_id))
        return "\n".join(self.format_relationship(item) for item in ordered)

    def format_relationship(self, item: GraphContextItem) -> str:
        """``TYPE → target (description)``; prefixed by the source when it is not the entity.

        The description is the relation's ``description`` property, else the target's label
        when it differs from its id.
        """
        description = item.properties.get("description")
        if description is None and item.target_label != item.target_id:
            description = item.target_label
        line = f"{item.relation_type} → {item.target_id}"
        if not item.from_entity:
            line = f"{item.source_id} {line}"
        return f"{line} ({render_value(description)})" if description is not None else line


def render_value(value: Any) -> str:
    """Strings as they are; anything else as canonical JSON (sorted keys)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _props(metadata: Any) -> Mapping[str, Any]:
    return metadata.properties if metadata is not None else {}
