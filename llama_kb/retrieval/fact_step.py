"""The engine's fact step: facts reached by graph traversal, then every candidate fact ranked.

:func:`traverse` reads the facts around seed entities (graph routes only) within the query's
traversal budget; :func:`rank` scores them with the typed facts of the knowledge base
(:mod:`.fact_ranking`) and keeps ``max_facts`` of them down to ``min_score``. Both record
their time in ``trace["retrievers"]["facts"]`` and a stage; a failing backend goes to
``degrade`` (the engine raises with ``strict``, else names it in ``trace["degraded"]``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from llama_kb import graph_model as gm
from llama_kb.retrieval.fact_ranking import FactRanker, select_facts
from llama_kb.retrieval.facts import graph_facts, merge_facts
from llama_kb.retrieval.payload import Fact
from llama_kb.retrieval.plan import QueryPlan
from llama_kb.types import Route, SearchHit

Degrade = Callable[[str, Exception], None]

TRAVERSAL_SHARE = 3
"""Traversal reads this many times ``max_facts`` facts, for the ranking to choose from."""


def traverse(graph: Any, plan: QueryPlan, seeds: Sequence[str], degrade: Degrade) -> list[Fact]:
    """Facts around ``seeds`` within the traversal budget (none on the semantic route, and
    none read when the store holds only structural relations that the query does not want)."""
    assert plan.classification is not None
    if plan.view is None or plan.classification.label is Route.SEMANTIC or not seeds:
        return []
    started = time.perf_counter()
    opts = plan.options
    try:
        if not opts.include_structural and not plan.view.index.has_relations_besides(
            gm.STRUCTURAL_RELATIONS
        ):  # all a traversal could reach is structural, which is not returned
            facts = []
        else:
            facts = graph_facts(
                graph,
                plan.view,
                seeds,
                opts.max_cost,
                opts.max_hops,
                opts.max_nodes,
                opts.max_facts * TRAVERSAL_SHARE,
            )
    except Exception as e:
        degrade("graph", e)
        facts = []
    _timed(plan, started)
    plan.stages.add("facts", started, seeds=len(seeds), out=len(facts))
    return facts


def refine(
    graph: Any,
    plan: QueryPlan,
    hits: Sequence[SearchHit],
    facts: list[Fact],
    from_top: int,
    degrade: Degrade,
) -> tuple[list[Fact], list[str]]:
    """The hybrid route's deep-dive: ``facts`` merged with those around the documents of the
    ``from_top`` best passages, and those documents' node ids (the other routes: unchanged,
    none)."""
    assert plan.classification is not None
    if plan.classification.label is not Route.HYBRID or plan.view is None:
        return facts, []
    refined = [gm.doc_node_id(h.doc_id) for h in hits[:from_top] if h.doc_id]
    refined = [e for e in dict.fromkeys(refined) if e not in plan.entity_ids]
    more = traverse(graph, plan, refined, degrade)
    return merge_facts(facts, more, plan.options.max_facts * TRAVERSAL_SHARE), refined


def rank(
    ranker: FactRanker,
    plan: QueryPlan,
    hits: Sequence[SearchHit],
    traversed: Sequence[Fact],
    degrade: Degrade,
) -> list[Fact]:
    """Typed facts near the query's entities and passages, best first; structural edges only
    with ``include_structural``."""
    if plan.view is None:
        return []
    started = time.perf_counter()
    query = (plan.query, plan.query_vector, plan.entity_ids)
    on_error = lambda e: degrade("facts", e)  # noqa: E731
    facts = select_facts(ranker, plan.view, query, hits, traversed, plan.options, on_error)
    _timed(plan, started)["returned"] = len(facts)
    plan.stages.add("fact_ranking", started, out=len(facts))
    return facts


def _timed(plan: QueryPlan, started: float) -> dict[str, Any]:
    """Add the time since ``started`` to ``trace["retrievers"]["facts"]["ms"]``."""
    timing = plan.trace.setdefault("retrievers", {}).setdefault("facts", {"ms": 0.0})
    timing["ms"] = round(timing["ms"] + (time.perf_counter() - started) * 1000, 3)
    return timing
