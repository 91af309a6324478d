"""A second hop from the best passage found, without an LLM.

A described multi-hop question ("the association which published X") names its first hop
only; the passage that answers it names the bridge the next hop needs. So the question is
embedded again together with the words of the best passage found that the question does not
hold (:func:`bridge_text`: its names first, ``bridge_words`` words in all; the whole passage
costs twice the embedding time and was no better), the passages nearest to that pair are
searched (same filters and access), and they are fused into the ranking below its top
``bridge_keep`` passages by weighted reciprocal rank fusion: a passage both lists hold
rises, and the hop's best passages enter the list.

A query that names a single thing ("the county of the city where X was born") is a chain
from that thing's page, which the walk usually ranks first; its hop searches the lexical
index for the first ``bridge_lexical_words`` of those words alone (no second embedding: the
bridge is a name, and its words find its page). Queries naming several things (most
comparisons) are left alone: their walk from the named entities already reaches each page.
Measured on the tune halves of both shared sets (README, "Benchmarks").
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial

from llama_kb.config import RankingConfig
from llama_kb.retrieval.lexical import lexical_tokens
from llama_kb.retrieval.plan import QueryPlan
from llama_kb.retrieval.ranking import is_described, make_hit
from llama_kb.types import SearchHit

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


def guess(plan: QueryPlan, ranking: RankingConfig) -> tuple[str, list[SearchHit]] | None:
    """The lexical hop of ``plan`` run ahead, while its dense search runs: from the first
    chunk of the page of the name it links, which is the best fused passage for most such
    queries; :func:`hop` uses it when it is. ``None`` when ``plan`` takes no lexical hop, the
    page is not there (or not visible), or a read fails (the hop then runs as usual)."""
    if plan.view is None or not plan.entity_ids or kind(plan, ranking) != "lexical":
        return None
    first = plan.entity_ids[0]
    try:
        own = [c for c, is_own in plan.view.index.name_links([first], 1).get(first, []) if is_own]
        passage = plan.view.record(own[0])[0] if own else ""
        if not passage:
            return None
        text = bridge_text(plan.query, passage, ranking.bridge_lexical_words)
        return own[0], lexical_search(plan, text, ranking.bridge_depth + ranking.bridge_keep)
    except Exception:  # a guess only saves time: the hop reads again
        return None


def lexical_search(plan: QueryPlan, text: str, n: int) -> list[SearchHit]:
    """The ``n`` best passages for ``text`` in ``plan``'s lexical index (its view: filters and
    access hold), scored by BM25."""
    assert plan.view is not None
    view = plan.view
    found = view.index.lexical(lexical_tokens(text), n, plan.options.filters)
    view.fetch(c for c, _ in found)
    return [make_hit(view, [], chunk_id, score, {}) for chunk_id, score in found]


def apply(
    plan: QueryPlan,
    hits: list[SearchHit],
    dense_search: Search,
    ranking: RankingConfig,
    keep: int,
    degrade: Callable[[str, Exception], None],
    kind: str = "dense",
) -> list[SearchHit]:
    """:func:`hop` through ``dense_search`` or :func:`lexical_search` (``kind``), or the
    ``keep`` best fused passages when there are none or it fails (``degrade`` is told, and
    raises when the query is strict)."""
    if not hits:
        return hits
    search = dense_search if kind == "dense" else partial(lexical_search, plan)
    try:
        return hop(plan, hits, search, ranking, keep, kind)
    except Exception as e:
        degrade("bridge", e)
        return hits[:keep]


def hop(
    plan: QueryPlan,
    hits: list[SearchHit],
    search: Search,
    ranking: RankingConfig,
    keep: int,
    kind: str = "dense",
) -> list[SearchHit]:
    """``hits`` (the fused ranking, ``bridge_pool`` deep, not empty) with the second hop's
    passages (``search``, the :func:`kind` named in the trace) fused in; the ``keep`` best
    are returned.

    Scores stay those of the fused ranking by position (rank ``i`` keeps the ``i``-th best
    fused score), so they remain in [0, 1] and descending; each passage the hop found carries
    its rank there under ``ranks["bridge"]``.
    """
    started = time.perf_counter()
    fixed = hits[: ranking.bridge_keep]
    fixed_docs = {h.doc_id for h in fixed}
    guessed = plan.hop_guess if kind == "lexical" else None
    if guessed and guessed[0] == hits[0].chunk_id and len(fixed) == ranking.bridge_keep:
        found = guessed[1]
    else:
        guessed = None
        if kind == "dense":
            words = bridge_text(plan.query, hits[0].text, ranking.bridge_words)
            text = f"{plan.query} {words}"
        else:  # the bridge's own words find its page; the question's only add cost
            text = bridge_text(plan.query, hits[0].text, ranking.bridge_lexical_words)
        found = search(text, ranking.bridge_depth + len(fixed))
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
    trace = {"hits": len(bridge), "added": added, "ms": ms, "search": kind, "ahead": bool(guessed)}
    plan.trace.setdefault("retrievers", {})["bridge"] = trace
    plan.stages.add("bridge", started, out=len(bridge), added=added, search=kind)
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
