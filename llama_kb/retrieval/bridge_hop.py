"""A second hop from the best passage found, without an LLM.

A described multi-hop question ("the association which published X") names its first hop
only; the passage that answers it names the bridge the next hop needs. So the question is
embedded again together with the words of that passage that the question does not hold
(:func:`bridge_text`: its names first, ``bridge_words`` words in all; the whole passage
costs twice the embedding time and was no better), the passages nearest to that pair are
searched (same filters and access), and they are fused into the ranking below its best
passage (``bridge_keep``) by weighted reciprocal rank fusion: a passage both lists hold
rises, and the hop's best passages enter the list, its very best often in second place.

A query that names a single thing ("the waterfall of the country where X is found") is a
chain from that thing's page, which the best passage usually is. Its hop embeds the question
*less that name* (:func:`without_names`: the part the page does not answer) with the
passage's new words, so the search looks for the next link ("waterfall ... Zimbabwe") instead
of coming back to the page it started from (``bridge_names``). Queries naming several things
(most comparisons) are left alone: their walk from the named entities already reaches each
page, and a hop from one of them pushes the other's chain out.

The hop starts from the best passage of the query's ranking *without* its dense list
(:func:`start`: its lexical hits and the walk from its names), which is known while the
query's own embedding and dense search still run: the hop's search then runs beside them
instead of after fusion. Measured against the best fused passage on both shared sets: the
same recall (README, "Benchmarks").
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from llama_kb.background import Pending
from llama_kb.config import RankingConfig
from llama_kb.retrieval.lexical import lexical_tokens
from llama_kb.retrieval.plan import QueryPlan
from llama_kb.retrieval.ranking import Lexical, is_described, rank_without_dense
from llama_kb.types import SearchHit

Search = Callable[[str, int], list[SearchHit]]
"""Search of a text for ``n`` passages, with the plan's filters and access."""


def kind(plan: QueryPlan, ranking: RankingConfig) -> str | None:
    """The second hop ``plan`` gets: ``"dense"`` for a described query, ``"named"`` for
    one linking at most ``bridge_names`` names and asking more than them, else ``None`` (or
    when the hop is off)."""
    if ranking.bridge_weight <= 0:
        return None
    if is_described(plan, ranking):
        return "dense"
    surfaces = plan.linked_surfaces
    if len(set(surfaces)) <= ranking.bridge_names and lexical_tokens(
        without_names(plan.query, surfaces)
    ):
        return "named"
    return None


def start(
    plan: QueryPlan, lexical: Lexical, ranking: RankingConfig, dense_search: Search
) -> SearchHit | None:
    """Start ``plan``'s second hop, if it takes one (:func:`kind`), in a thread
    (``plan.hop``): from the best passage of its route's ranking over ``lexical`` and its
    names alone, before its dense hits are there, which is returned. Without such a passage
    :func:`apply` starts it from the best fused one."""
    hop_kind = kind(plan, ranking) if plan.view is not None else None
    if hop_kind is None:
        return None
    started = time.perf_counter()
    best = rank_without_dense(plan, lexical, ranking)
    if best is not None:
        _search_from(plan, best, ranking, hop_kind, dense_search)
    plan.stages.add("bridge_seed", started, out=int(best is not None))
    return best


def _search_from(
    plan: QueryPlan, best: SearchHit, ranking: RankingConfig, hop_kind: str, dense_search: Search
) -> None:
    """Start the hop's dense search from ``best`` in a thread: the question (less its names
    for a ``"named"`` hop) and ``best``'s new words."""
    asked = without_names(plan.query, plan.linked_surfaces) if hop_kind == "named" else plan.query
    text = f"{asked} {bridge_text(plan.query, best.text, ranking.bridge_words)}"
    plan.hop = Pending(dense_search, text, ranking.bridge_depth + kept(ranking, hop_kind))
    plan.trace.setdefault("retrievers", {})["bridge"] = {"search": hop_kind, "from": best.chunk_id}


def without_names(query: str, surfaces: Sequence[str]) -> str:
    """``query`` with every occurrence of the name ``surfaces`` (any case) taken out, the
    longest first, and its spaces tidied."""
    for surface in sorted({s for s in surfaces if s.strip()}, key=len, reverse=True):
        query = re.sub(re.escape(surface), " ", query, flags=re.IGNORECASE)
    return " ".join(query.split())


def apply(
    plan: QueryPlan,
    hits: list[SearchHit],
    ranking: RankingConfig,
    keep: int,
    degrade: Callable[[str, Exception], None],
    hop_kind: str,
    dense_search: Search,
) -> list[SearchHit]:
    """``hits`` with the hop's passages fused in (:func:`fuse`), waiting for the hop
    :func:`start` began (or starting it from the best of ``hits``); the ``keep`` best fused
    passages when there are none or it fails (``degrade`` is told, and raises when the
    query is strict)."""
    if not hits:
        return hits
    started = time.perf_counter()
    try:
        if plan.hop is None:
            _search_from(plan, hits[0], ranking, hop_kind, dense_search)
        assert plan.hop is not None
        out = fuse(plan, hits, plan.hop.result(), ranking, keep, hop_kind)
    except Exception as e:
        degrade("bridge", e)
        return hits[:keep]
    bridge = plan.trace.setdefault("retrievers", {}).setdefault("bridge", {})
    bridge["ms"] = round((time.perf_counter() - started) * 1000, 3)
    plan.stages.add("bridge", started, out=bridge["hits"], added=bridge["added"])
    return out


def fuse(
    plan: QueryPlan,
    hits: list[SearchHit],
    found: Sequence[SearchHit],
    ranking: RankingConfig,
    keep: int,
    hop_kind: str = "dense",
) -> list[SearchHit]:
    """``hits`` (the fused ranking, ``bridge_pool`` deep, not empty) with the passages the
    hop of ``hop_kind`` ``found`` fused in below its top :func:`kept` at its weight
    (:func:`fuse_below`); the ``keep`` best are returned."""
    hop_weight = ranking.bridge_named_weight if hop_kind == "named" else ranking.bridge_weight
    out, added, offered = fuse_below(
        hits,
        found,
        kept(ranking, hop_kind),
        hop_weight,
        ranking.bridge_rrf_k,
        keep,
        "bridge",
        depth=ranking.bridge_depth,
    )
    trace = plan.trace.setdefault("retrievers", {}).setdefault("bridge", {})
    trace.update(hits=offered, added=added)
    return out


def fuse_below(
    hits: list[SearchHit],
    found: Sequence[SearchHit],
    fixed_top: int,
    weight: float,
    rrf_k: float,
    keep: int,
    rank_name: str,
    depth: int | None = None,
) -> tuple[list[SearchHit], int, int]:
    """The ``keep`` best of ``hits`` (not empty) with ``found`` fused in below its top
    ``fixed_top`` by weighted reciprocal rank fusion (``weight`` against 1, constant
    ``rrf_k``: a passage both lists hold rises); how many of them were not in
    ``hits[:keep]``; and how many of ``found`` were fused. Passages of the fixed passages'
    documents are left out of ``found`` (then its first ``depth``).

    Scores stay those of the fused ranking by position (rank ``i`` keeps the ``i``-th best
    fused score), so they remain in [0, 1] and descending; each passage from ``found``
    carries its rank there under ``ranks[rank_name]``.
    """
    fixed = hits[:fixed_top]
    fixed_docs = {h.doc_id for h in fixed}
    extra = [h for h in found if h.doc_id not in fixed_docs][:depth]
    fused: dict[str, float] = {}
    by_id: dict[str, SearchHit] = {}
    for share_of, ranked in ((1.0, hits[len(fixed) :]), (weight, extra)):
        for rank, hit in enumerate(ranked):
            fused[hit.chunk_id] = fused.get(hit.chunk_id, 0.0) + share_of / (rrf_k + rank)
            by_id.setdefault(hit.chunk_id, hit)
    extra_rank = {h.chunk_id: r for r, h in enumerate(extra, 1)}
    order = sorted(fused, key=lambda c: (-fused[c], c))
    merged = [*fixed, *(by_id[c] for c in order)][:keep]
    scores = sorted((h.score for h in hits), reverse=True)
    out = []
    for i, hit in enumerate(merged):
        ranks = dict(hit.ranks)
        if hit.chunk_id in extra_rank:
            ranks[rank_name] = extra_rank[hit.chunk_id]
        score = scores[i] if i < len(scores) else scores[-1]
        out.append(replace(hit, score=score, ranks=ranks))
    known = {h.chunk_id for h in hits[:keep]}
    return out, sum(h.chunk_id not in known for h in out), len(extra)


def kept(ranking: RankingConfig, hop_kind: str) -> int:
    """Best fused passages a hop of ``hop_kind`` never moves."""
    return ranking.bridge_named_keep if hop_kind == "named" else ranking.bridge_keep


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
