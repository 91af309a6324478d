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
own document), where ``rest`` is the query's vector with the directions of the names linked
in it taken out (:func:`rest_vector`: what the question asks beyond its names, with no second
embedding). A name like the question's answer type ("the country where ...": Zimbabwe) and a
chunk like the rest of the question ("the waterfall") both count. Chunk vectors are the
stored ones and name vectors the knowledge base's phrase vectors.

The hop starts from the best passage of the ranking without dense hits (its lexical hits and
the walk from its names, :func:`~.ranking.rank_without_dense`, which the second dense hop and
the walk read ahead already rank), so its reads run in a thread while the query's own
embedding and dense search do (:func:`search_from`); a query with no such passage starts
them from the best fused one. The best ``name_hop_depth`` chunks are fused into the ranking
below its best passage by weighted reciprocal rank fusion, as the second dense hop's are
(:func:`.bridge_hop.fuse_below`). Queries naming several things (most comparisons) are left
alone: a hop from one of them pushes the other's chain out. A described query takes it beside
the second dense hop (``name_hop_described``). On by default since stop 56
(``name_hop_weight`` 0.6, chosen on the tune halves of both shared sets at stop 48;
docs/benchmarks.md, "Stop 56").
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from llama_kb.background import Pending
from llama_kb.config import RankingConfig
from llama_kb.names import fold
from llama_kb.retrieval.bridge_hop import fuse_below
from llama_kb.retrieval.index import matches_filters
from llama_kb.retrieval.plan import QueryPlan
from llama_kb.retrieval.ranking import is_described
from llama_kb.retrieval.walk import NAME_CAP
from llama_kb.stores.phrase_vectors import unit
from llama_kb.types import Route, SearchHit

Vectors = Callable[[Sequence[str]], dict[str, np.ndarray]]
"""Stored vectors of chunk ids (the ones that exist)."""
NameVectors = Callable[[list[str]], dict[str, np.ndarray]]
"""Unit vectors of names (display names), embedded once and kept."""


@dataclass
class Reached:
    """What the hop read from one passage: the chunks its names lead to, with the vectors
    that score them."""

    start: SearchHit
    via: dict[str, list[tuple[str, bool]]] = field(default_factory=dict)
    """Chunk id -> the names that reach it, each with whether it belongs to that name."""
    chunk_vectors: dict[str, np.ndarray] = field(default_factory=dict)
    name_vectors: dict[str, np.ndarray] = field(default_factory=dict)
    """Name id -> unit vector, for the names followed and the names the query links."""
    records: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    """Chunk id -> ``(text, metadata)`` of the chunks reached."""


def applies(plan: QueryPlan, ranking: RankingConfig) -> bool:
    """Whether ``plan`` takes the name hop: it is on, the query is not semantic, and it
    is described (unless it takes the dense hop and ``name_hop_described`` is off) or
    links at most one name."""
    if ranking.name_hop_weight <= 0 or plan.view is None or plan.classification is None:
        return False
    if plan.classification.label is Route.SEMANTIC:
        return False
    if is_described(plan, ranking):
        return ranking.name_hop_described or ranking.bridge_weight <= 0
    return len(set(plan.entity_ids)) <= 1


def search_from(
    plan: QueryPlan,
    start: SearchHit,
    ranking: RankingConfig,
    vectors: Vectors,
    name_vectors: NameVectors,
) -> None:
    """Start the hop's reads from ``start`` in a thread (``plan.names``), if ``plan`` takes
    the hop: the best passage of the ranking without dense hits, known while the query's own
    dense search runs."""
    if applies(plan, ranking):
        _start(plan, start, ranking, vectors, name_vectors)


def _start(
    plan: QueryPlan,
    start: SearchHit,
    ranking: RankingConfig,
    vectors: Vectors,
    name_vectors: NameVectors,
) -> None:
    plan.names = Pending(read, plan, start, ranking, vectors, name_vectors)
    plan.trace.setdefault("retrievers", {})["names"] = {"from": start.chunk_id}


def apply(
    plan: QueryPlan,
    hits: list[SearchHit],
    ranking: RankingConfig,
    keep: int,
    vectors: Vectors,
    name_vectors: NameVectors,
) -> list[SearchHit]:
    """For a plan that takes the hop (:func:`applies`): the ``keep`` best of ``hits`` with
    the best chunks the hop reached (:func:`ranked`) fused in below the best; started from
    ``hits[0]`` when :func:`search_from` did not start it. ``hits[:keep]`` when there are
    none or the step fails (``plan.degrade`` is told)."""
    if not hits:
        return hits[:keep]
    started = time.perf_counter()
    try:
        if plan.names is None:
            _start(plan, hits[0], ranking, vectors, name_vectors)
        assert plan.names is not None
        reached = ranked(plan, plan.names.result(), ranking)
    except Exception as e:
        plan.degrade("name_hop", e)
        return hits[:keep]
    out, added, _ = fuse_below(
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


def read(
    plan: QueryPlan,
    start: SearchHit,
    ranking: RankingConfig,
    vectors: Vectors,
    name_vectors: NameVectors,
) -> Reached:
    """The chunks ``start``'s names lead to (not its own chunk; names the query holds and
    hubs left out) with their stored vectors, and the vectors of those names and of the
    names the query links. Reads the index and ``plan``'s fixed parts only, so it may run
    beside the query's ranking."""
    assert plan.view is not None
    index = plan.view.index
    linked = list(dict.fromkeys(plan.entity_ids))
    links = index.chunk_links([start.chunk_id]).get(start.chunk_id, [])
    names = [n for n in dict.fromkeys(n for n, _ in links) if n not in plan.entity_ids]
    stats = index.name_stats(names)
    names = [
        n
        for n in names
        if n in stats and stats[n].titles + stats[n].mentions <= ranking.name_hop_max_degree
    ]
    shown = index.display_names([*names, *linked])
    asked = fold(plan.query)
    names = [n for n in names if n in shown and fold(shown[n]) not in asked]
    reached = Reached(start)
    if not names:
        return reached
    for name, chunks in index.name_links(names, NAME_CAP).items():
        for chunk_id, own in chunks:
            if chunk_id != start.chunk_id:
                reached.via.setdefault(chunk_id, []).append((name, own))
    if not reached.via:
        return reached
    reached.chunk_vectors = vectors(list(reached.via))
    reached.records = index.chunk_records(list(reached.via))
    known = [n for n in [*names, *linked] if n in shown]
    by_text = name_vectors(sorted({shown[n] for n in known}))
    reached.name_vectors = {n: by_text[shown[n]] for n in known if shown[n] in by_text}
    return reached


def rest_vector(query_vector: Sequence[float], names: Sequence[np.ndarray]) -> np.ndarray:
    """The unit query vector with the direction of each of ``names`` (unit vectors, in turn)
    taken out: what the question asks beyond the names it holds."""
    rest = unit(query_vector)
    for name in names:
        rest = rest - float(rest @ name) * name
    return unit(rest)


def ranked(plan: QueryPlan, reached: Reached, ranking: RankingConfig) -> list[SearchHit]:
    """The ``name_hop_depth`` best chunks of ``reached`` (scored as the module says) that
    pass the query's filters and are not of the start passage's document."""
    if not reached.via or plan.query_vector is None:
        return []
    linked = dict.fromkeys(plan.entity_ids)
    rest = rest_vector(
        plan.query_vector, [v for n, v in reached.name_vectors.items() if n in linked]
    )
    weight, bonus = ranking.name_hop_name_weight, ranking.name_hop_own_bonus
    like = {n: float(v @ rest) for n, v in reached.name_vectors.items()}
    ids = [c for c in reached.via if c in reached.chunk_vectors]
    if not ids:
        return []
    vectors = np.stack([reached.chunk_vectors[c] for c in ids]).astype(np.float32)
    norms = np.linalg.norm(vectors, axis=1)
    cosines = (vectors @ rest) / np.where(norms > 0, norms, 1.0)
    scores: dict[str, float] = {}
    for chunk_id, cosine in zip(ids, cosines.tolist(), strict=True):
        scores[chunk_id] = cosine + max(
            weight * like.get(name, 0.0) + (bonus if own else 0.0)
            for name, own in reached.via[chunk_id]
        )
    chosen: list[SearchHit] = []
    for chunk_id in sorted(scores, key=lambda c: (-scores[c], c)):
        text, meta = reached.records.get(chunk_id, ("", {}))
        doc_id = str(meta.get("doc_id", ""))
        if not meta or doc_id == reached.start.doc_id:
            continue
        if plan.options.filters and not matches_filters(meta, plan.options.filters):
            continue
        chosen.append(SearchHit(chunk_id, doc_id, text, scores[chunk_id], dict(meta)))
        if len(chosen) >= ranking.name_hop_depth:
            break
    return chosen
