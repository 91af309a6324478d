"""Passage ranking for one query, over its candidates only (never the whole corpus).

* semantic route: reciprocal rank fusion of the dense and lexical lists;
* factual / hybrid routes: a Personalized PageRank over the chunk–name graph (read from the
  store as it spreads, :mod:`.walk`) seeded by the query's entities (and, for hybrid or when
  no entity is linked, by the top dense+lexical hits), plus a share of the dense+lexical
  score (larger when the query's linked names cover little of it: :func:`base_share`) and a
  bonus for chunks that tie several of the query's entities together.

Scores are in [0, 1]: each route's fused score over its largest possible value (``scale`` in
:mod:`.explain`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from llama_kb.config import RankingConfig
from llama_kb.retrieval import explain as debug
from llama_kb.retrieval import trace as observe
from llama_kb.retrieval.index import Candidates, top_rows
from llama_kb.retrieval.lexical import lexical_tokens
from llama_kb.retrieval.plan import QueryPlan
from llama_kb.retrieval.walk import personalized_pagerank
from llama_kb.types import Route, SearchHit

Lexical = Sequence[tuple[str, float]]
"""Lexical hits, best first, as ``(chunk_id, BM25 score)``."""


def rank_semantic(
    plan: QueryPlan,
    view: Candidates,
    dense: Sequence[SearchHit],
    lexical: Lexical,
    ranking: RankingConfig,
    depth: int,
    keep: int,
) -> list[SearchHit]:
    """The ``keep`` best chunks by reciprocal rank fusion of the dense and lexical rankings."""
    ranks: dict[str, dict[str, int]] = {}
    for rank, hit in enumerate(dense, 1):
        ranks.setdefault(hit.chunk_id, {})["vector"] = rank
    for rank, (chunk_id, _) in enumerate(lexical, 1):
        ranks.setdefault(chunk_id, {})["bm25"] = rank
    view.set_rows(list(ranks))
    rrf_k = ranking.rrf_k
    best = 2.0 / (rrf_k + 1)  # rank 1 in both lists: fused scores are in [0, 1]
    parts = {
        c: {name: 1.0 / (rrf_k + r) / best for name, r in rs.items()} for c, rs in ranks.items()
    }
    fused = {c: min(1.0, sum(p.values())) for c, p in parts.items()}
    if plan.options.explain:
        mask = view.mask(plan.options.filters)
        plan.parts = debug.ScoreParts.semantic(view, parts, fused, mask, depth, best)
    order = sorted(fused, key=lambda c: (-fused[c], c))[:keep]
    fetch_missing(view, dense, order)
    return [make_hit(view, dense, c, fused[c], ranks[c]) for c in order]


def rank_graph(
    plan: QueryPlan,
    view: Candidates,
    dense: Sequence[SearchHit],
    lexical: Lexical,
    ranking: RankingConfig,
    depth: int,
    keep: int,
) -> list[SearchHit]:
    """The ``keep`` best chunks by PPR from the query's entities (and hits) plus a share of
    the dense+lexical score."""
    assert plan.classification is not None
    local = view.local_graph(ranking.title_pull, ranking.untitled_weight)
    local.load_names(plan.entity_ids)
    name_seeds = {e: 1.0 for e in dict.fromkeys(plan.entity_ids) if local.name_chunks.get(e)}
    view.set_rows([*(h.chunk_id for h in dense), *(c for c, _ in lexical)])
    dense_part, lexical_part = _base_parts(view, dense, lexical, ranking)
    base = dense_part + lexical_part
    chunk_seeds: dict[str, float] = {}
    if plan.classification.label is Route.HYBRID or not name_seeds:
        top = np.asarray(top_rows(base, ranking.hit_seeds), dtype=int)
        if top.size:
            weights = np.exp((base[top] - base[top].max()) / ranking.hit_temperature)
            mass = ranking.hit_seed_mass if name_seeds else 1.0
            shares = mass * weights / weights.sum()
            chunk_seeds = {view.chunk_ids[r]: float(s) for r, s in zip(top, shares, strict=True)}
    if name_seeds:
        name_seeds = {e: 1.0 / len(name_seeds) for e in name_seeds}
    started = time.perf_counter()
    walk = personalized_pagerank(
        local,
        chunk_seeds,
        name_seeds,
        ranking.ppr_damping,
        ranking.ppr_iterations,
        ranking.ppr_prune,
        ranking.ppr_frontier,
    )
    seeds = {"entities": len(name_seeds), "hits": len(chunk_seeds)}
    plan.trace.setdefault("retrievers", {})["graph"] = {
        "seeds": seeds,
        "reached": len(walk),
        "ms": round((time.perf_counter() - started) * 1000, 3),
    }
    plan.stages.add("graph_walk", started, out=len(walk), **seeds)
    n_base = len(view.chunk_ids)
    view.set_rows([*view.chunk_ids, *walk])
    n = len(view.chunk_ids)
    base = np.concatenate([base, np.zeros(n - n_base)])
    dense_part = np.concatenate([dense_part, np.zeros(n - n_base)])
    lexical_part = np.concatenate([lexical_part, np.zeros(n - n_base)])
    walk_scores = np.fromiter((walk.get(c, 0.0) for c in view.chunk_ids), float, n)
    peak = walk_scores.max() if n else 0.0
    walk_part = walk_scores / peak if peak > 0 else walk_scores
    coverage_part = np.zeros(n)
    share = base_share(plan, ranking)
    ceiling = 1.0 + share  # the largest possible sum: scores are in [0, 1]
    if len(plan.entity_ids) > 1:
        # a chunk that ties together several of the query's entities answers how they
        # relate; PPR alone ranks every chunk of an entity's document alike
        covered = local.coverage(plan.entity_ids)
        counts = np.fromiter((covered.get(c, 0) for c in view.chunk_ids), float, n)
        coverage_part = ranking.coverage_bonus * np.maximum(counts - 1, 0)
        ceiling += ranking.coverage_bonus * (len(plan.entity_ids) - 1)
    final = np.clip((walk_part + share * base + coverage_part) / ceiling, 0, 1)
    order = _select(view, final, keep, plan.options.filters)
    if plan.options.explain:
        arrays = (walk_part, dense_part, lexical_part, coverage_part, final)
        mask = view.mask(plan.options.filters)
        plan.parts = debug.ScoreParts.graph(share, arrays, mask, depth, ceiling)
    dense_rank = {h.chunk_id: i for i, h in enumerate(dense, 1)}
    lexical_rank = {c: i for i, (c, _) in enumerate(lexical, 1)}
    by_walk = sorted(walk, key=lambda c: (-walk[c], c))[: len(order) * 4]
    graph_rank = {c: i for i, c in enumerate(by_walk, 1)}
    fetch_missing(view, dense, [view.chunk_ids[row] for row in order])
    hits = []
    for row in order:
        chunk_id = view.chunk_ids[row]
        ranks = {"graph": graph_rank.get(chunk_id, 0)}
        if chunk_id in dense_rank:
            ranks["vector"] = dense_rank[chunk_id]
        if chunk_id in lexical_rank:
            ranks["bm25"] = lexical_rank[chunk_id]
        hits.append(make_hit(view, dense, chunk_id, float(final[row]), ranks))
    return hits


def rank_without_dense(
    plan: QueryPlan, lexical: Lexical, ranking: RankingConfig
) -> SearchHit | None:
    """The best passage of ``plan``'s route ranking with no dense hits and a walk of
    ``bridge_seed_steps`` steps, ranked with a trace of its own (the query's stays
    untouched; its view keeps the records and neighbourhoods read, so the query's own walk
    reads only what this one did not, and its ranking sets the rows anew)."""
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


def walk_ahead(plan: QueryPlan, lexical: Lexical, ranking: RankingConfig) -> SearchHit | None:
    """While the dense search runs, walk the first ``bridge_seed_steps`` steps from
    ``plan``'s names and lexical hits (:func:`rank_without_dense`, as the second hop's start
    does): the neighbourhoods read stay in the query's view, so the walk after the dense
    hits reads only what is new (p50 1.49x -> 1.41x a raw query at 10k passages with two
    steps, the same with one; docs/scale.md, "Stop 46" and "Stop 47"). Returns that walk's
    best passage. Semantic queries do not walk; a failing store degrades the graph part."""
    route = plan.classification.label if plan.classification else Route.SEMANTIC
    if plan.view is None or route is Route.SEMANTIC:
        return None
    started = time.perf_counter()
    best = None
    try:
        best = rank_without_dense(plan, lexical, ranking)
    except Exception as e:
        plan.degrade("graph", e)
    plan.stages.add("walk_ahead", started)
    return best


def is_described(plan: QueryPlan, ranking: RankingConfig) -> bool:
    """Whether at least ``described_threshold`` of the query's words lie outside the names
    linked in it: its bridges are described, not named."""
    words = lexical_tokens(plan.query)
    named = {w for surface in plan.linked_surfaces for w in lexical_tokens(surface)}
    return sum(w not in named for w in words) / max(len(words), 1) >= ranking.described_threshold


def base_share(plan: QueryPlan, ranking: RankingConfig) -> float:
    """The dense+lexical score's share beside the walk: ``described_base_share`` for a
    described query (:func:`is_described`: a walk from its few names knows less), else
    ``base_share``."""
    return ranking.described_base_share if is_described(plan, ranking) else ranking.base_share


def lexical_scores(view: Candidates, lexical: Lexical) -> np.ndarray:
    """BM25 score per row of ``view`` (0 where the lexical search did not return it)."""
    scores = np.zeros(len(view.chunk_ids))
    for chunk_id, score in lexical:
        row = view.row_of.get(chunk_id)
        if row is not None:
            scores[row] = score
    return scores


def fetch_missing(view: Candidates, dense: Sequence[SearchHit], chunk_ids: Sequence[str]) -> None:
    """Read in one batch the records of the ``chunk_ids`` no dense hit carries."""
    carried = {h.chunk_id for h in dense}
    view.fetch(c for c in chunk_ids if c not in carried)


def make_hit(
    view: Candidates,
    dense: Sequence[SearchHit],
    chunk_id: str,
    score: float,
    ranks: dict[str, int],
) -> SearchHit:
    """The returned passage: text and metadata from its dense hit, else from the store."""
    for hit in dense:
        if hit.chunk_id == chunk_id:
            return SearchHit(chunk_id, hit.doc_id, hit.text, score, dict(hit.metadata), ranks)
    text, meta = view.record(chunk_id)
    return SearchHit(chunk_id, str(meta.get("doc_id", "")), text, score, dict(meta), ranks)


def _base_parts(
    view: Candidates, dense: Sequence[SearchHit], lexical: Lexical, ranking: RankingConfig
) -> tuple[np.ndarray, np.ndarray]:
    """Dense and lexical shares of the base score over the current rows (min-max scaled; a
    chunk no retriever returned scores the floor: the lowest dense score, BM25 0)."""
    n = len(view.chunk_ids)
    dense_scores = np.zeros(n)
    if dense:
        dense_scores[:] = min(h.score for h in dense)
        for hit in dense:
            dense_scores[view.row_of[hit.chunk_id]] = hit.score
    bm25 = lexical_scores(view, lexical)
    dense_part = (1 - ranking.lexical_share) * _minmax(dense_scores)
    return dense_part, ranking.lexical_share * _minmax(bm25, low=0.0)


def _select(
    view: Candidates, final: np.ndarray, top_k: int, filters: dict | None, batch: int = 64
) -> list[int]:
    """The ``top_k`` best rows whose chunks pass ``filters`` (metadata read in batches)."""
    ordered = top_rows(final, len(final))
    if not filters:
        return list(ordered[:top_k])
    chosen: list[int] = []
    for start in range(0, len(ordered), batch):
        chosen.extend(view.matching(ordered[start : start + batch], filters))
        if len(chosen) >= top_k:
            break
    return chosen[:top_k]


def _minmax(scores: np.ndarray, low: float | None = None) -> np.ndarray:
    if not scores.size:
        return scores
    low = float(scores.min()) if low is None else low
    high = float(scores.max())
    return (scores - low) / (high - low) if high > low else np.zeros_like(scores)
