"""A second dense hop for described queries, without an LLM.

A described multi-hop question ("the association which published X") names its first hop
only; the passage that answers it names the bridge the next hop needs. So the question is
embedded again together with the words of the best passage found that the question does not
hold (:func:`bridge_text`: its names first, ``bridge_words`` words in all; the whole passage
costs twice the embedding time and was no better), the passages nearest to that pair are
searched (same filters and access), and they are fused into the ranking below its top
``bridge_keep`` passages by weighted reciprocal rank fusion: a passage both lists hold
rises, and the hop's best passages enter the list.

Named queries (most of 2Wiki's) are left alone: their walk from the named entities already
reaches the bridge. Measured on the tune half of musique-dev (README, "Benchmarks").
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from llama_kb.config import RankingConfig
from llama_kb.retrieval.lexical import lexical_tokens
from llama_kb.retrieval.plan import QueryPlan
from llama_kb.retrieval.ranking import is_described
from llama_kb.types import SearchHit

Search = Callable[[str, int], list[SearchHit]]
"""Dense search of a text for ``n`` passages, with the plan's filters and access."""


def applies(plan: QueryPlan, ranking: RankingConfig) -> bool:
    """Whether ``plan`` gets a second hop: the hop is on and the query is described."""
    return ranking.bridge_weight > 0 and is_described(plan, ranking)


def apply(
    plan: QueryPlan,
    hits: list[SearchHit],
    search: Search,
    ranking: RankingConfig,
    keep: int,
    degrade: Callable[[str, Exception], None],
) -> list[SearchHit]:
    """:func:`hop`, or the ``keep`` best fused passages when there are none or it fails
    (``degrade`` is told, and raises when the query is strict)."""
    if not hits:
        return hits
    try:
        return hop(plan, hits, search, ranking, keep)
    except Exception as e:
        degrade("bridge", e)
        return hits[:keep]


def hop(
    plan: QueryPlan,
    hits: list[SearchHit],
    search: Search,
    ranking: RankingConfig,
    keep: int,
) -> list[SearchHit]:
    """``hits`` (the fused ranking, ``bridge_pool`` deep, not empty) with the second hop's
    passages fused in; the ``keep`` best are returned.

    Scores stay those of the fused ranking by position (rank ``i`` keeps the ``i``-th best
    fused score), so they remain in [0, 1] and descending; each passage the hop found carries
    its rank there under ``ranks["bridge"]``.
    """
    started = time.perf_counter()
    fixed = hits[: ranking.bridge_keep]
    fixed_docs = {h.doc_id for h in fixed}
    bridge_words = bridge_text(plan.query, hits[0].text, ranking.bridge_words)
    found = search(f"{plan.query} {bridge_words}", ranking.bridge_depth + len(fixed))
    bridge = [h for h in found if h.doc_id not in fixed_docs][: ranking.bridge_depth]
    fused: dict[str, float] = {}
    by_id: dict[str, SearchHit] = {}
    for weight, ranked in ((1.0, hits[len(fixed) :]), (ranking.bridge_weight, bridge)):
        for rank, hit in enumerate(ranked):
            share = weight / (ranking.bridge_rrf_k + rank)
            fused[hit.chunk_id] = fused.get(hit.chunk_id, 0.0) + share
            by_id.setdefault(hit.chunk_id, hit)
    bridge_rank = {h.chunk_id: r for r, h in enumerate(bridge, 1)}
    order = sorted(fused, key=lambda c: (-fused[c], c))
    merged = [*fixed, *(by_id[c] for c in order)][:keep]
    scores = sorted((h.score for h in hits), reverse=True)
    out = []
    for i, hit in enumerate(merged):
        ranks = dict(hit.ranks)
        if hit.chunk_id in bridge_rank:
            ranks["bridge"] = bridge_rank[hit.chunk_id]
        score = scores[i] if i < len(scores) else scores[-1]
        out.append(replace(hit, score=score, ranks=ranks))
    known = {h.chunk_id for h in hits[:keep]}
    added = sum(h.chunk_id not in known for h in out)
    ms = round((time.perf_counter() - started) * 1000, 3)
    trace = {"hits": len(bridge), "added": added, "ms": ms}
    plan.trace.setdefault("retrievers", {})["bridge"] = trace
    plan.stages.add("bridge", started, out=len(bridge), added=added)
    return out


def bridge_text(query: str, passage: str, words: int) -> str:
    """Up to ``words`` words of ``passage`` that ``query`` does not hold, each once: first its
    names (words that start with a capital or a digit: the bridge the query only describes),
    then its other words, each group in passage order. Stopwords are left out."""
    asked = set(lexical_tokens(query))
    seen: set[str] = set()
    names: list[str] = []
    others: list[str] = []
    for word in passage.split():
        folded = lexical_tokens(word)
        if not folded or folded[0] in asked or folded[0] in seen:
            continue
        seen.add(folded[0])
        lead = next((c for c in word if c.isalnum()), "")
        (names if lead.isupper() or lead.isdigit() else others).append(word)
    return " ".join([*names, *others][:words])
