"""A hop through the names of the best passage, without an LLM.

The passage that answers a chain's first step names the bridge the next step needs ("The
Bubye River ... is a tributary of the Limpopo River in ... Zimbabwe"): the next passage is
one that mentions that name ("Victoria Falls ... on the border between Zambia and
Zimbabwe"). The graph walk reaches such passages, but spreads its mass over every name of
the passage alike and ranks what it reaches by the whole question, whose named part pulls
back to the page already found.

So for a query that names at most one thing, or describes its bridges
(:func:`~llama_kb.retrieval.ranking.is_described`), this step reads the names of the best
passage that the question does not hold (and that are not hubs: ``name_hop_max_degree``),
the chunks that belong to or mention each, and scores each such chunk by

    cosine(rest, name) * name_hop_name_weight + cosine(rest, chunk) + name_hop_own_bonus

(the best over the names that reach it; the last term when the chunk belongs to the name's
own document), where ``rest`` is the question less the names linked in it, embedded in a
thread while the query's own search runs (:func:`start`). A name like the question's
answer type ("the country where ...": Zimbabwe) and a chunk like the rest of the question
("the waterfall") both count. Chunk vectors are the stored ones and name vectors the
knowledge base's phrase vectors, so the only embedding is the rest of the question.

The best ``name_hop_depth`` chunks are fused into the ranking below its best passage by
weighted reciprocal rank fusion, as the second dense hop's are (:func:`.bridge_hop.fuse`).
Queries naming several things (most comparisons) are left alone: a hop from one of them
pushes the other's chain out. Opt-in (``name_hop_weight``, 0.6 chosen on the tune halves
of both shared sets): it reads the store after fusion, and its cost at scale is not measured
yet (docs/benchmarks.md, "Stop 48").
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from llama_kb.background import Pending
from llama_kb.config import RankingConfig
from llama_kb.names import fold
from llama_kb.retrieval.bridge_hop import fuse_below, without_names
from llama_kb.retrieval.index import matches_filters
from llama_kb.retrieval.plan import QueryPlan
from llama_kb.retrieval.ranking import is_described
from llama_kb.stores.phrase_vectors import unit
from llama_kb.types import SearchHit

Vectors = Callable[[Sequence[str]], dict[str, np.ndarray]]
"""Stored vectors of chunk ids (the ones that exist)."""
NameVectors = Callable[[list[str]], dict[str, np.ndarray]]
"""Unit vectors of names (display names), embedded once and kept."""


def applies(plan: QueryPlan, ranking: RankingConfig) -> bool:
    """Whether ``plan`` takes the name hop: it is on, and the query links at most one name
    or is described."""
    if ranking.name_hop_weight <= 0 or plan.view is None:
        return False
    return len(set(plan.entity_ids)) <= 1 or is_described(plan, ranking)


def start(plan: QueryPlan, ranking: RankingConfig, embed: Callable[[str], Any]) -> None:
    """Embed the question less its linked names in a thread (``plan.rest``), if the query
    takes the hop; a question without linked names is its own rest."""
    if not applies(plan, ranking):
        return
    rest = without_names(plan.query, plan.linked_surfaces) or plan.query
    plan.rest = Pending(embed, rest)


def apply(
    plan: QueryPlan,
    hits: list[SearchHit],
    ranking: RankingConfig,
    keep: int,
    vectors: Vectors,
    name_vectors: NameVectors,
) -> list[SearchHit]:
    """The ``keep`` best of ``hits`` with the chunks reached through the best passage's
    names fused in (:func:`found`); ``hits[:keep]`` when there are none or the step fails
    (``plan.degrade`` is told)."""
    if not hits or plan.rest is None or plan.view is None:
        return hits[:keep]
    started = time.perf_counter()
    try:
        reached = found(plan, hits[0], ranking, vectors, name_vectors)
    except Exception as e:
        plan.degrade("name_hop", e)
        return hits[:keep]
    out, added = fuse_below(
        hits,
        reached,
        ranking.name_hop_keep,
        ranking.name_hop_weight,
        ranking.name_hop_rrf_k,
        keep,
        "names",
    )
    plan.trace.setdefault("retrievers", {})["names"] = {
        "from": hits[0].chunk_id,
        "hits": len(reached),
        "added": added,
        "ms": round((time.perf_counter() - started) * 1000, 3),
    }
    plan.stages.add("name_hop", started, out=len(reached), added=added)
    return out


def found(
    plan: QueryPlan,
    best: SearchHit,
    ranking: RankingConfig,
    vectors: Vectors,
    name_vectors: NameVectors,
) -> list[SearchHit]:
    """The ``name_hop_depth`` best chunks reached from ``best`` through its names (scored as
    the module says), passing the query's filters, not of ``best``'s document."""
    assert plan.view is not None and plan.rest is not None
    view, index = plan.view, plan.view.index
    asked = fold(plan.query)
    linked = set(plan.entity_ids)
    names = [n for n, _ in index.chunk_links([best.chunk_id]).get(best.chunk_id, [])]
    names = [n for n in dict.fromkeys(names) if n not in linked]
    stats = index.name_stats(names)
    names = [
        n
        for n in names
        if n in stats and stats[n].titles + stats[n].mentions <= ranking.name_hop_max_degree
    ]
    shown = index.display_names(names)
    names = [n for n in names if n in shown and fold(shown[n]) not in asked]
    if not names:
        return []
    links = index.name_links(names, ranking.name_hop_links)
    reach: dict[str, list[tuple[str, bool]]] = {}
    for name in names:
        for chunk_id, own in links.get(name, []):
            if chunk_id != best.chunk_id:
                reach.setdefault(chunk_id, []).append((name, own))
    if not reach:
        return []
    rest = unit(plan.rest.result())
    by_name = name_vectors(sorted({shown[n] for n in names}))
    name_score = {n: float(by_name[shown[n]] @ rest) for n in names if shown[n] in by_name}
    stored = vectors(list(reach))
    scores: dict[str, float] = {}
    for chunk_id, via in reach.items():
        vector = stored.get(chunk_id)
        if vector is None:
            continue
        chunk_score = float(unit(vector) @ rest)
        scores[chunk_id] = max(
            ranking.name_hop_name_weight * name_score.get(name, 0.0)
            + chunk_score
            + (ranking.name_hop_own_bonus if own else 0.0)
            for name, own in via
        )
    order = sorted(scores, key=lambda c: (-scores[c], c))
    view.fetch(order[: ranking.name_hop_depth * 3])
    chosen: list[SearchHit] = []
    for chunk_id in order:
        text, meta = view.record(chunk_id)
        doc_id = str(meta.get("doc_id", ""))
        if not meta or doc_id == best.doc_id:
            continue
        if plan.options.filters and not matches_filters(meta, plan.options.filters):
            continue
        chosen.append(SearchHit(chunk_id, doc_id, text, scores[chunk_id], dict(meta)))
        if len(chosen) >= ranking.name_hop_depth:
            break
    return chosen
