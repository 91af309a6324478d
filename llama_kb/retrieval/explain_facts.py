"""The debug view of facts: each candidate's relevance parts, score, rank and fate.

With ``explain=True`` the fact step (:func:`~llama_kb.retrieval.fact_ranking.select_facts`)
returns its facts as :class:`ExplainedFacts`: the facts kept, plus one row per candidate
fact it ranked. When the query ends, :func:`attach` moves the rows to
``trace["explain"]["facts"]`` (and, with ``include_embedding``, the query embedding to
``trace["explain"]["query_embedding"]``). A row holds:

- the raw parts, each in [0, 1]: ``proximity`` (graph distance to the query's entities and
  top passages), ``lexical`` (share of the query's relation words in the fact), ``embedding``
  (cosine of the query and the relation phrase);
- ``parts``: each raw part times its weight over the weights' sum
  (:class:`~llama_kb.config.RankingConfig` ``fact_*_weight``), so ``score == sum(parts)``;
- ``rank`` among all candidates (score order), ``final_rank`` among the facts returned, and
  ``dropped``: ``duplicate`` (the same triple ranked higher), ``min_score`` or ``max_facts``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from llama_kb.config import QueryOptions
from llama_kb.retrieval.payload import Fact

if TYPE_CHECKING:
    from llama_kb.retrieval.payload import FusedContext

PART_NAMES = ("proximity", "lexical", "embedding")
"""The parts of a fact's score, in the order of the ranker's ``(proximity, lexical,
embedding)`` tuples."""

Ranked = tuple[Fact, tuple[float, float, float], tuple[float, float, float]]
"""A ranked candidate: the fact (score set), its raw parts and its weighted parts."""


class ExplainedFacts(list[Fact]):
    """The facts a query keeps, carrying the fact explanation to :func:`attach`.

    The fact step hands its result back through the engine as it is; :func:`attach` turns
    it into a plain list again once the explanation is in the trace.
    """

    explanation: dict[str, Any]


@dataclass(frozen=True)
class FactExplanation:
    """One candidate fact's story (ranks are 1-based)."""

    subject: str
    predicate: str
    object: str
    extractor: str
    doc_id: str | None
    proximity: float
    lexical: float
    embedding: float
    parts: dict[str, float]
    score: float
    rank: int
    final_rank: int | None
    dropped: str | None
    """``None`` (returned), ``"duplicate"``, ``"min_score"`` or ``"max_facts"``."""

    def recomputed(self) -> float:
        """The score recomputed from :attr:`parts` (to the 6 decimals scores are kept to)."""
        return round(min(1.0, max(0.0, sum(self.parts.values()))), 6)

    def text(self) -> str:
        """``subject --predicate--> object``."""
        return f"{self.subject} --{self.predicate}--> {self.object}"


def formula(weights: Sequence[float]) -> str:
    """How a fact's score adds up, with the (normalised) ``weights`` of :data:`PART_NAMES`."""
    terms = " + ".join(f"{w:.3g}*{name}" for w, name in zip(weights, PART_NAMES, strict=True))
    return f"fact score = {terms}"


def explained(
    kept: list[Fact],
    ranked: Sequence[Ranked],
    key: Callable[[Fact], Hashable],
    options: QueryOptions,
    query_vector: Sequence[float] | None,
    weights: Sequence[float],
) -> ExplainedFacts:
    """``kept`` as :class:`ExplainedFacts`, explained by the ``ranked`` candidates.

    Args:
        kept: The facts returned, best first (the same objects as in ``ranked``).
        ranked: Every candidate, best first, with its raw and weighted parts (empty when
            the ranking failed: the trace names the failure).
        key: What makes two facts the same (the deduplication of the fact step).
        options: The query's options (``min_score``, ``include_embedding``).
        query_vector: The query embedding the facts were scored against.
        weights: The parts' weights, each over their sum (for the formula).
    """
    final = {id(fact): i for i, fact in enumerate(kept, 1)}
    seen: set[Hashable] = set()
    rows: list[dict[str, Any]] = []
    for rank, (fact, raw, weighted) in enumerate(ranked, 1):
        same = key(fact)
        dropped = _fate(id(fact) in final, same in seen, fact.score, options.min_score)
        seen.add(same)
        row = FactExplanation(
            subject=fact.subject,
            predicate=fact.predicate,
            object=fact.object,
            extractor=fact.extractor,
            doc_id=fact.doc_id,
            proximity=round(raw[0], 6),
            lexical=round(raw[1], 6),
            embedding=round(raw[2], 6),
            parts=dict(zip(PART_NAMES, weighted, strict=True)),
            score=fact.score,
            rank=rank,
            final_rank=final.get(id(fact)),
            dropped=dropped,
        )
        rows.append(asdict(row))
    result = ExplainedFacts(kept)
    result.explanation = {"facts": {"formula": formula(weights), "candidates": rows}}
    if options.include_embedding and query_vector is not None:
        result.explanation["query_embedding"] = [float(x) for x in query_vector]
    return result


def attach(context: FusedContext) -> None:
    """Move the fact explanation (if any) from ``context.structured_facts`` to its trace."""
    facts = context.structured_facts
    if isinstance(facts, ExplainedFacts):
        context.trace.setdefault("explain", {}).update(facts.explanation)
        context.structured_facts = list(facts)


def from_trace(explain: dict[str, Any]) -> tuple[str, list[FactExplanation]]:
    """The formula and rows of ``trace["explain"]["facts"]`` (empty without one)."""
    data = explain.get("facts") or {"formula": "", "candidates": []}
    return data["formula"], [FactExplanation(**row) for row in data["candidates"]]


def table(rows: Sequence[FactExplanation], limit: int = 15) -> str:
    """The fact candidates as a fixed-width text table, best score first: each part as its
    weighted share of the score and, in brackets, its raw value."""
    header = ["final", "rank", "score", *PART_NAMES, "dropped"]
    lines = [header]
    for row in rows[:limit]:
        raw = (row.proximity, row.lexical, row.embedding)
        lines.append(
            [
                "-" if row.final_rank is None else str(row.final_rank),
                str(row.rank),
                f"{row.score:.4f}",
                *(f"{row.parts[n]:.4f} ({v:.2f})" for n, v in zip(PART_NAMES, raw, strict=True)),
                row.dropped or "",
            ]
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    texts = ["fact", *(row.text()[:70] for row in rows[:limit])]
    text = [
        "  ".join(cell.rjust(w) for cell, w in zip(line, widths, strict=True)) + "  " + label
        for line, label in zip(lines, texts, strict=True)
    ]
    more = len(rows) - limit
    return "\n".join([*text, *([f"... {more} more fact candidates"] if more > 0 else [])])


def _fate(kept: bool, duplicate: bool, score: float, min_score: float | None) -> str | None:
    """Why a candidate fact is not returned, in the order the fact step drops them."""
    if kept:
        return None
    if duplicate:
        return "duplicate"
    if min_score is not None and score < min_score:
        return "min_score"
    return "max_facts"
