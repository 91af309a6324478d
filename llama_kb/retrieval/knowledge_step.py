"""The engine's knowledge step: curated pieces (seed 000) beside passages and facts.

When the knowledge base holds knowledge pieces, every result also carries the pieces closest
to the query that its principal may read (:attr:`FusedContext.knowledge`), searched with the
query's own embedding. The step runs after the result cache, so a cached result still gets
current pieces; a failing piece store degrades the result (``trace["degraded"]``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from llama_index.core.base.embeddings.base import BaseEmbedding

from llama_kb.access import Principal
from llama_kb.retrieval.payload import FusedContext, KnowledgeHit
from llama_kb.retrieval.plan import QueryPlan

KnowledgeSearch = Callable[[Sequence[float], int, Principal], list[KnowledgeHit]]
"""``(query vector, top_k, principal) -> pieces`` that principal may read, best first."""


def attach(
    search: KnowledgeSearch | None,
    embedding: BaseEmbedding,
    plan: QueryPlan,
    context: FusedContext,
    degrade: Callable[[str, Exception], None],
) -> None:
    """Fill ``context.knowledge`` (down to ``min_score``) when a piece search is set."""
    if search is None:
        return
    started = time.perf_counter()
    try:
        vector = context.query_vector or embedding.get_query_embedding(plan.query)
        context.query_vector = list(vector)
        hits = search(vector, plan.options.top_k, plan.principal)
    except Exception as e:
        degrade("knowledge", e)
        context.trace["degraded"] = plan.degraded
        hits = []
    if plan.options.min_score is not None:
        hits = [h for h in hits if h.score >= plan.options.min_score]
    context.knowledge = hits
    ms = round((time.perf_counter() - started) * 1000, 3)
    context.trace.setdefault("retrievers", {})["knowledge"] = {"hits": len(hits), "ms": ms}
    plan.stages.add("knowledge", started, out=len(hits))
