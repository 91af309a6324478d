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

The hop starts from the best passage of the ranking without dense hits (its lexical hits and
the walk from its names, :func:`~.ranking.rank_without_dense`, which the second dense hop and
the walk read ahead already rank), so its reads run in a thread while the query's own
embedding and dense search do (:func:`search_from`); a query with no such passage starts it
from the best fused one. The best ``name_hop_depth`` chunks are fused into the ranking below
its best passage by weighted reciprocal rank fusion, as the second dense hop's are
(:func:`.bridge_hop.fuse_below`).
Queries naming several things (most comparisons) are left alone: a hop from one of them
pushes the other's chain out. Opt-in (``name_hop_weight``, 0.6 chosen on the tune halves
of both shared sets): its second embedding and reads compete for the cores with the query's
own work, 1.75x a raw query at 10k passages against 1.47x without it (docs/benchmarks.md,
"Stop 48").
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
from llama_kb.retrieval.walk import NAME_CAP
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


def search_from(
    plan: QueryPlan,
    best: SearchHit,
    ranking: RankingConfig,
    vectors: Vectors,
    name_vectors: NameVectors,
) -> None:
    """Start the hop's reads from ``best`` in a thread (``plan.names``): the best passage of
    the ranking without dense hits, known while the query's own dense search runs."""
    plan.names = Pending(found, plan, best, ranking, vectors, name_vectors)
    plan.trace.setdefault("retrievers", {})["names"] = {"from": best.chunk_id}


def apply(
    plan: QueryPlan,
    hits: list[SearchHit],
    ranking: RankingConfig,
    keep: int,
    vectors: Vectors,
    name_vectors: NameVectors,
) -> list[SearchHit]:
    """The ``keep`` best of ``hits`` with the chunks reached through the names of the hop's
    passage fused in below the best (:func:`found`; from ``hits[0]`` when :func:`search_from`
    did not start it); ``hits[:keep]`` when there are none or the step fails
    (``plan.degrade`` is told)."""
    if not hits or plan.rest is None or plan.view is None:
        return hits[:keep]
    started = time.perf_counter()
    try:
        if plan.names is None:
            search_from(plan, hits[0], ranking, vectors, name_vectors)
        assert plan.names is not None
        reached = plan.names.result()
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
    trace = plan.trace.setdefault("retrievers", {}).setdefault("names", {})
    trace.update(
        hits=len(reached), added=added, ms=round((time.perf_counter() - started) * 1000, 3)
    )
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
    the module says), passing the query's filters, not of ``best``'s document. Reads the
    index and ``plan``'s fixed parts only, so it may run beside the query's ranking."""
    assert plan.view is not None and plan.rest is not None
    index = plan.view.index
    linked = set(plan.entity_ids)
    links = index.chunk_links([best.chunk_id]).get(best.chunk_id, [])
    names = [n for n in dict.fromkeys(n for n, _ in links) if n not in linked]
    stats = index.name_stats(names)
    names = [
        n
        for n in names
        if n in stats and stats[n].titles + stats[n].mentions <= ranking.name_hop_max_degree
    ]
    shown = index.display_names(names)
    asked = fold(plan.query)
    names = [n for n in names if n in shown and fold(shown[n]) not in asked]
    if not names:
        return []
    reach: dict[str, list[tuple[str, bool]]] = {}
    for name, chunks in index.name_links(names, NAME_CAP).items():
        for chunk_id, own in chunks:
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
    order = sorted(scores, key=lambda c: (-scores[c], c))[: ranking.name_hop_depth * 3]
    records = index.chunk_records(order)
    chosen: list[SearchHit] = []
    for chunk_id in order:
        text, meta = records.get(chunk_id, ("", {}))
        doc_id = str(meta.get("doc_id", ""))
        if not meta or doc_id == best.doc_id:
            continue
        if plan.options.filters and not matches_filters(meta, plan.options.filters):
            continue
        chosen.append(SearchHit(chunk_id, doc_id, text, scores[chunk_id], dict(meta)))
        if len(chosen) >= ranking.name_hop_depth:
            break
    return chosen
