"""A described query's passages, reordered so that the first ones cover more of the question.

A described multi-hop question ("the country where the composer of X was born") needs a
passage for each of its parts, and the fused ranking often puts several passages about one
part first. After the second hop, the fused pool (``bridge_pool`` deep) is read again
greedily: each next place goes to the passage with the best sum of its place's prior,
``(k + 1) / (k + 1 + rank)``, and ``question_cover_weight`` times the share of the question's
words it holds that the passages placed above it do not. A word weighs by its rarity within
the pool (``log(1 + n / df)``): the pool alone decides, so no store is read and nothing
outside the query's view counts. Queries that name their bridges keep their order: there,
the walk from the names already reaches each page, and the reordering cost 2Wiki R@2.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import replace

from llama_kb.config import RankingConfig
from llama_kb.retrieval.lexical import lexical_tokens
from llama_kb.retrieval.plan import QueryPlan
from llama_kb.types import SearchHit


def applies(hop_kind: str | None, ranking: RankingConfig) -> bool:
    """Whether a query whose second hop is ``hop_kind`` is reordered: a described query's
    (``"dense"``), unless ``question_cover_weight`` is 0."""
    return hop_kind == "dense" and ranking.question_cover_weight > 0


def apply(
    plan: QueryPlan, hits: list[SearchHit], ranking: RankingConfig, keep: int
) -> list[SearchHit]:
    """The ``keep`` best of ``hits`` in the greedy order (module docstring); each place keeps
    the score of the place, so scores stay in [0, 1] and descending."""
    started = time.perf_counter()
    order = cover_order(plan.query, hits, ranking, keep)
    scores = sorted((h.score for h in hits), reverse=True)
    out = [replace(hits[i], score=scores[place]) for place, i in enumerate(order)]
    moved = sum(i != place for place, i in enumerate(order))
    plan.stages.add("question_cover", started, out=len(out), moved=moved)
    return out


def cover_order(query: str, hits: list[SearchHit], ranking: RankingConfig, keep: int) -> list[int]:
    """Positions in ``hits`` of the ``keep`` passages placed first, in order."""
    words = [set(lexical_tokens(_text(hit))) for hit in hits]
    df = Counter(w for held in words for w in held)
    weight = {w: math.log(1 + len(hits) / df[w]) for w in set(lexical_tokens(query)) if w in df}
    total = sum(weight.values()) or 1.0
    k, share = ranking.question_cover_prior_k, ranking.question_cover_weight / total
    prior = [(k + 1) / (k + 1 + i) for i in range(len(hits))]
    uncovered = set(weight)
    rest = list(range(len(hits)))
    order: list[int] = []
    while rest and len(order) < keep:
        gains = {i: sum(weight[w] for w in uncovered & words[i]) for i in rest}
        best = max(rest, key=lambda i: prior[i] + share * gains[i])
        order.append(best)
        rest.remove(best)
        uncovered -= words[best]
    return order


def _text(hit: SearchHit) -> str:
    """The words a passage holds: its text and its title, when it has one."""
    title = hit.metadata.get("title")
    return f"{hit.text} {title}" if isinstance(title, str) else hit.text
