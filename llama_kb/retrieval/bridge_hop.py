"""A second hop from the best passage found, without an LLM.

A described multi-hop question ("the association which published X") names its first hop
only; the passage that answers it names the bridge the next hop needs. So the question is
embedded again together with the words of that passage that the question does not hold
(:func:`bridge_text`: its names first, ``bridge_words`` words in all; the whole passage
costs twice the embedding time and was no better), the passages nearest to that pair are
searched (same filters and access), and they are fused into the ranking below its top
``bridge_keep`` passages by weighted reciprocal rank fusion: a passage both lists hold
rises, and the hop's best passages enter the list.

A query that names a single thing ("the county of the city where X was born") is a chain
from that thing's page; with ``bridge_lexical_names`` its hop searches the lexical index for
the first ``bridge_lexical_words`` of those words alone (no second embedding: the bridge is
a name, and its words find its page). Queries naming several things (most comparisons) are
left alone: their walk from the named entities already reaches each page.

The hop starts from the best passage of the query's ranking *without* its dense list
(:func:`start`: its lexical hits and the walk from its names), which is known while the
query's own embedding and dense search still run: the hop's search then runs beside them
instead of after fusion. Measured against the best fused passage on both shared sets: the
same recall (README, "Benchmarks").
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial

from llama_kb.background import Pending
from llama_kb.config import RankingConfig
from llama_kb.retrieval import trace as observe
from llama_kb.retrieval.index import Candidates
from llama_kb.retrieval.lexical import lexical_tokens
from llama_kb.retrieval.plan import QueryPlan
from llama_kb.retrieval.ranking import Lexical, is_described, make_hit, rank_graph, rank_semantic
from llama_kb.types import Route, SearchHit

Search = Callable[[str, int], list[SearchHit]]
"""Search of a text for ``n`` passages, with the plan's filters and access."""


def kind(plan: QueryPlan, ranking: RankingConfig) -> str | None:
    """The second hop ``plan`` gets: ``"dense"`` for a described query, ``"lexical"`` for
    one linking at most ``bridge_lexical_names`` names, else ``None`` (or when the hop is
    off)."""
    if ranking.bridge_weight <= 0:
        return None
    if is_described(plan, ranking):
        return "dense"
    if len(set(plan.linked_surfaces)) <= ranking.bridge_lexical_names:
        return "lexical"
    return None


def start(plan: QueryPlan, lexical: Lexical, ranking: RankingConfig, dense_search: Search) -> None:
    """Start ``plan``'s second hop, if it takes one (:func:`kind`), in a thread
    (``plan.hop``): from the best passage of its route's ranking over ``lexical`` and its
    names alone, before its dense hits are there. Without such a passage :func:`apply`
    starts it from the best fused one."""
    hop_kind = kind(plan, ranking) if plan.view is not None else None
    if hop_kind is None:
        return
    started = time.perf_counter()
    best = _best_without_dense(plan, lexical, ranking)
    if best is not None:
        _search_from(plan, best, ranking, hop_kind, dense_search)
    plan.stages.add("bridge_seed", started, out=int(best is not None))


def _best_without_dense(
    plan: QueryPlan, lexical: Lexical, ranking: RankingConfig
) -> SearchHit | None:
    """The best passage of ``plan``'s route ranking with no dense hits and a walk of
    ``bridge_seed_steps`` steps, ranked with a trace of its own (the query's stays
    untouched; its view keeps the records and neighbourhoods read, and the query's own
    ranking sets its rows anew)."""
    assert plan.view is not None and plan.classification is not None
    alone = replace(
        plan,
        options=plan.options.model_copy(update={"explain": False}),
        trace={},
        stages=observe.StageRecorder(),
        parts=None,
    )
    route = rank_semantic if plan.classification.label is Route.SEMANTIC else rank_graph
    short = ranking.model_copy(update={"ppr_iterations": ranking.bridge_seed_steps})
    best = route(alone, plan.view, [], lexical, short, 1, 1)
    return best[0] if best else None


def _search_from(
    plan: QueryPlan, best: SearchHit, ranking: RankingConfig, hop_kind: str, dense_search: Search
) -> None:
    """Start the hop's search from ``best`` in a thread: the question and ``best``'s new words
    through ``dense_search``, or those words alone through the lexical index."""
    if hop_kind == "dense":
        text = f"{plan.query} {bridge_text(plan.query, best.text, ranking.bridge_words)}"
        search = dense_search
    else:  # the bridge's own words find its page; the question's only add cost
        text = bridge_text(plan.query, best.text, ranking.bridge_lexical_words)
        search = partial(lexical_search, plan)
    plan.hop = Pending(search, text, ranking.bridge_depth + ranking.bridge_keep)
    plan.trace.setdefault("retrievers", {})["bridge"] = {"search": hop_kind, "from": best.chunk_id}


def lexical_search(plan: QueryPlan, text: str, n: int) -> list[SearchHit]:
    """The ``n`` best passages for ``text`` in ``plan``'s lexical index (filters and access
    hold), scored by BM25; read through a view of their own (this runs in a thread)."""
    assert plan.view is not None
    view = Candidates(plan.view.index)
    found = view.index.lexical(lexical_tokens(text), n, plan.options.filters)
    view.fetch(c for c, _ in found)
    return [make_hit(view, [], chunk_id, score, {}) for chunk_id, score in found]


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
        out = fuse(plan, hits, plan.hop.result(), ranking, keep)
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
) -> list[SearchHit]:
    """``hits`` (the fused ranking, ``bridge_pool`` deep, not empty) with the passages the
    hop ``found`` fused in below its top ``bridge_keep``; the ``keep`` best are returned.

    Scores stay those of the fused ranking by position (rank ``i`` keeps the ``i``-th best
    fused score), so they remain in [0, 1] and descending; each passage the hop found carries
    its rank there under ``ranks["bridge"]``.
    """
    fixed = hits[: ranking.bridge_keep]
    fixed_docs = {h.doc_id for h in fixed}
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
    trace = plan.trace.setdefault("retrievers", {}).setdefault("bridge", {})
    trace.update(hits=len(bridge), added=added)
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
