"""The debug view: why each candidate ranked where it did, and why others were dropped.

With ``explain=True`` the engine keeps the score parts its ranking computed (a
:class:`ScoreParts`) and :meth:`ScoreParts.explain` turns them into one row per candidate
that reached fusion: dense score and rank, lexical (BM25) score and rank, graph walk rank,
the additive parts of the fused score (``fused == sum(parts)``), the ``scale`` they were
divided by to put the fused score in [0, 1], the fused rank, the final rank, and why it was
dropped (``min_score``, ``top_k``, ``filtered``). The rows go to
``trace["explain"]``; :class:`Explanation` wraps them with a text table for the CLI.

Formulas (weights from :class:`~llama_kb.config.RankingConfig`):

- semantic: ``fused = (1/(rrf_k + dense_rank) + 1/(rrf_k + lexical_rank)) / scale`` (RRF),
  ``scale = 2/(rrf_k + 1)`` (rank 1 in both lists);
- factual / hybrid: ``fused = (walk/max(walk) + base_share * ((1 - lexical_share) *
  minmax(dense) + lexical_share * minmax(bm25)) + coverage_bonus * (entities touched - 1))
  / scale``, ``scale = 1 + base_share + coverage_bonus * (query entities - 1)``, shown as the
  parts ``graph``, ``dense``, ``lexical``, ``coverage``.

Every part is already divided by ``scale`` (so the parts still sum to the fused score);
``part * scale`` is the raw contribution.

Facts have their own rows (:mod:`.explain_facts`: relevance parts, score, rank, fate) in
``trace["explain"]["facts"]``; with ``include_embedding`` the query embedding is in
``trace["explain"]["query_embedding"]``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from llama_kb.retrieval import explain_facts
from llama_kb.retrieval.explain_facts import FactExplanation
from llama_kb.retrieval.index import Candidates, top_rows
from llama_kb.retrieval.payload import FusedContext
from llama_kb.types import SearchHit

SEMANTIC_FORMULA = "fused = dense + lexical, each 1/(rrf_k + rank) / scale"
GRAPH_FORMULA = "fused = graph + dense + lexical + coverage, each / scale"
_PART_NAMES = {"vector": "dense", "bm25": "lexical"}


@dataclass
class ScoreParts:
    """Per-row score parts of one ranking (rows index the query's candidates).

    Attributes:
        formula: How the parts add up, for people.
        parts: Part name -> per-row contribution (divided by ``scale``); ``fused`` is their
            sum.
        fused: Per-row fused score, as the ranking computed it.
        mask: Rows the filters allow (``None``: all).
        depth: Dense and lexical candidates the ranking fused.
        candidates: Rows that reached fusion; ``None``: every row has a fused score.
        scale: The divisor that puts fused scores in [0, 1] (the route's largest sum).
    """

    formula: str
    parts: dict[str, np.ndarray]
    fused: np.ndarray
    mask: np.ndarray | None
    depth: int
    candidates: set[int] | None = None
    scale: float = 1.0

    @classmethod
    def semantic(
        cls,
        snapshot: Candidates,
        by_chunk: Mapping[str, Mapping[str, float]],
        fused: Mapping[str, float],
        mask: np.ndarray | None,
        depth: int,
        scale: float = 1.0,
    ) -> ScoreParts:
        """From RRF's ``{chunk_id: {"vector"|"bm25": 1/(rrf_k + rank) / scale}}`` and fused
        scores."""
        n = len(snapshot.chunk_ids)
        arrays = {"dense": np.zeros(n), "lexical": np.zeros(n)}
        total = np.zeros(n)
        for chunk_id, parts in by_chunk.items():
            row = snapshot.row_of[chunk_id]
            total[row] = fused[chunk_id]
            for name, value in parts.items():
                arrays[_PART_NAMES[name]][row] = value
        rows = {snapshot.row_of[c] for c in by_chunk}
        return cls(SEMANTIC_FORMULA, arrays, total, mask, depth, rows, scale)

    @classmethod
    def graph(
        cls,
        base_share: float,
        arrays: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray],
        mask: np.ndarray | None,
        depth: int,
        scale: float = 1.0,
    ) -> ScoreParts:
        """From the graph routes' ``(walk, dense, lexical, coverage, fused)`` arrays (raw
        parts, normalised fused score); the dense and lexical parts are scaled by
        ``base_share`` as in the fused score, and every part is divided by ``scale``."""
        walk, dense, lexical, coverage, fused = arrays
        parts = {
            "graph": walk / scale,
            "dense": base_share * dense / scale,
            "lexical": base_share * lexical / scale,
            "coverage": coverage / scale,
        }
        return cls(GRAPH_FORMULA, parts, fused, mask, depth, scale=scale)

    def scored(self, row: int) -> bool:
        """Whether ``row`` reached fusion."""
        return self.candidates is None or row in self.candidates

    def explain(
        self,
        snapshot: Candidates,
        dense: Sequence[SearchHit],
        lexical: np.ndarray | None,
        ranked: Sequence[SearchHit],
        kept: Sequence[SearchHit],
    ) -> dict[str, Any]:
        """The ``trace["explain"]`` payload: one row per candidate, best fused score first.

        Args:
            snapshot: The candidates the ranking ran on.
            dense: Dense hits in rank order.
            lexical: BM25 score per row.
            ranked: The top-``top_k`` hits before ``min_score``.
            kept: The hits returned.
        """
        mask = self.mask
        dense_of = {h.chunk_id: (h.score, rank) for rank, h in enumerate(dense, 1)}
        lexical_rank = _ranks(lexical, mask) if lexical is not None else {}
        graph_rank = _ranks(self.parts["graph"], mask) if "graph" in self.parts else {}
        rows = self._rows(
            snapshot, [*dense_of, *(h.chunk_id for h in ranked)], lexical, len(ranked)
        )
        allowed = np.ones(len(snapshot.chunk_ids), dtype=bool) if mask is None else mask
        ranked_at = {h.chunk_id: i for i, h in enumerate(ranked, 1)}
        kept_at = {h.chunk_id: i for i, h in enumerate(kept, 1)}
        fused_order = sorted(
            (r for r in rows if allowed[r] and self.scored(r)),
            key=lambda r: (
                ranked_at.get(snapshot.chunk_ids[r], len(ranked) + 1),
                -self.fused[r],
                r,
            ),
        )
        fused_rank = {row: i for i, row in enumerate(fused_order, 1)}
        candidates: list[dict[str, Any]] = []
        for row in [*fused_order, *sorted(rows - set(fused_order))]:
            chunk_id = snapshot.chunk_ids[row]
            dense_score, dense_rank = dense_of.get(chunk_id, (None, None))
            fused = float(self.fused[row]) if self.scored(row) else None
            dropped = _fate(chunk_id in kept_at, chunk_id in ranked_at, bool(allowed[row]))
            candidates.append(
                asdict(
                    CandidateExplanation(
                        chunk_id=chunk_id,
                        doc_id=str(snapshot.metadata[row].get("doc_id", "")),
                        title=str(snapshot.metadata[row].get("title") or chunk_id),
                        dense_score=None if dense_score is None else round(float(dense_score), 6),
                        dense_rank=dense_rank,
                        lexical_score=_positive(lexical, row),
                        lexical_rank=lexical_rank.get(row),
                        graph_rank=graph_rank.get(row),
                        parts={n: float(a[row]) for n, a in self.parts.items()}
                        if fused is not None
                        else {},
                        fused=fused,
                        fused_rank=fused_rank.get(row),
                        final_rank=kept_at.get(chunk_id),
                        dropped=dropped,
                    )
                )
            )
        return {"formula": self.formula, "scale": self.scale, "candidates": candidates}

    def _rows(
        self, snapshot: Candidates, chunk_ids: list[str], lexical: np.ndarray | None, top_k: int
    ) -> set[int]:
        """Rows worth a line: the dense hits and the ranked ones, the lexical top ``depth``
        (filtered or not), and every fused row or, on graph routes, the top ``4 * top_k``."""
        rows = {snapshot.row_of[c] for c in chunk_ids if c in snapshot.row_of}
        if lexical is not None:
            rows |= set(_ranks(lexical, None, self.depth))
        if self.candidates is not None:
            return rows | self.candidates
        return rows | {int(r) for r in top_rows(self.fused, 4 * max(top_k, 1), None)}


@dataclass(frozen=True)
class CandidateExplanation:
    """One candidate's story (ranks are 1-based; ``None`` = not found by that retriever)."""

    chunk_id: str
    doc_id: str
    title: str
    dense_score: float | None
    dense_rank: int | None
    lexical_score: float | None
    lexical_rank: int | None
    graph_rank: int | None
    parts: dict[str, float]
    fused: float | None
    fused_rank: int | None
    final_rank: int | None
    dropped: str | None
    """``None`` (returned), ``"min_score"``, ``"top_k"`` or ``"filtered"``."""

    def recomputed(self) -> float:
        """The fused score recomputed from :attr:`parts`."""
        return float(sum(self.parts.values()))


@dataclass
class Explanation:
    """The result of ``kb.explain(query)``: the context and every candidate's story.

    Attributes:
        context: What ``retrieve`` returned.
        formula: How a passage's fused score adds up.
        candidates: One row per passage candidate, best fused score first.
        scale: The divisor that put fused scores in [0, 1].
        fact_formula: How a fact's score adds up.
        facts: One row per fact candidate, best score first.
        query_embedding: The query's vector (``include_embedding=True``), else ``None``.
    """

    context: FusedContext
    formula: str
    candidates: list[CandidateExplanation]
    scale: float = 1.0
    fact_formula: str = ""
    facts: list[FactExplanation] = field(default_factory=list)
    query_embedding: list[float] | None = None

    @classmethod
    def from_context(cls, context: FusedContext) -> Explanation:
        """Read ``context.trace["explain"]`` (retrieve with ``explain=True``)."""
        data = context.trace.get("explain") or {}
        rows = [CandidateExplanation(**row) for row in data.get("candidates", [])]
        fact_formula, facts = explain_facts.from_trace(data)
        scale = float(data.get("scale", 1.0))
        embedding = data.get("query_embedding")
        return cls(context, data.get("formula", ""), rows, scale, fact_formula, facts, embedding)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable view (the ``trace["explain"]`` layout)."""
        return self.context.trace.get("explain", {})

    def table(self, limit: int = 15) -> str:
        """The passage candidates as a fixed-width text table, best fused score first, then
        the fact candidates (:func:`.explain_facts.table`)."""
        parts = list(dict.fromkeys(p for c in self.candidates for p in c.parts))
        header = ["final", "fused#", "fused", *parts, "dense (rank)", "bm25 (rank)", "dropped"]
        lines = [[*header, "title"]]
        for c in self.candidates[:limit]:
            lines.append(
                [
                    _num(c.final_rank),
                    _num(c.fused_rank),
                    _num(c.fused),
                    *(_num(c.parts.get(p)) for p in parts),
                    _with_rank(c.dense_score, c.dense_rank),
                    _with_rank(c.lexical_score, c.lexical_rank),
                    c.dropped or "",
                    c.title[:40],
                ]
            )
        widths = [max(len(row[i]) for row in lines) for i in range(len(header))]
        text = [
            "  ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=False)) + "  " + row[-1]
            for row in lines
        ]
        more = len(self.candidates) - limit
        footer = [f"... {more} more candidates"] if more > 0 else []
        route = self.context.route.value
        head = f"route: {route}   {self.formula}   (scale {self.scale:.4g})"
        facts = [f"\n{self.fact_formula}", explain_facts.table(self.facts, limit)]
        return "\n".join([head, *text, *footer, *(facts if self.facts else [])])


def explained_hits(context: FusedContext) -> dict[str, dict[str, Any]]:
    """``chunk_id -> candidate row`` for the chunks returned (empty unless ``explain=True``);
    the faces put each row in its chunk's metadata under ``"explain"``."""
    rows = context.trace.get("explain", {}).get("candidates", [])
    return {row["chunk_id"]: row for row in rows if row["final_rank"] is not None}


def _fate(kept: bool, ranked: bool, allowed: bool) -> str | None:
    """Why a candidate is not in the result: ranked in the top ``top_k`` but below
    ``min_score``, excluded by the filters, or ranked beyond ``top_k``."""
    if kept:
        return None
    if ranked:
        return "min_score"
    return "top_k" if allowed else "filtered"


def _ranks(scores: np.ndarray, mask: np.ndarray | None, depth: int | None = None) -> dict[int, int]:
    positive = np.where(scores > 0, scores, -np.inf)
    order = top_rows(positive, depth if depth is not None else len(scores), mask)
    return {int(row): i for i, row in enumerate(order, 1)}


def _positive(scores: np.ndarray | None, row: int) -> float | None:
    if scores is None or scores[row] <= 0:
        return None
    return round(float(scores[row]), 6)


def _num(value: float | None) -> str:
    if value is None:
        return "-"
    return str(value) if isinstance(value, int) else f"{value:.4f}"


def _with_rank(score: float | None, rank: int | None) -> str:
    if score is None:
        return "-"
    return f"{score:.3f} ({rank})" if rank is not None else f"{score:.3f}"
