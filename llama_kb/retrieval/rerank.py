"""Second-stage reranking of the fused passages: the interface and the engine's step.

A :class:`Reranker` reads the query and the best ``rerank_depth`` fused passages
(:class:`~llama_kb.config.RankingConfig`) and returns them in its own order with its own
scores; it may drop passages but never add one. The engine then keeps ``top_k``.

Rerankers see only passages the query's principal may read: they run after access
filtering, on the fused list. A failing reranker degrades the query (the fused order
stands) unless ``strict``.

Ready-made rerankers: :class:`llama_kb.rerankers.CrossEncoderReranker` (an offline ONNX
cross-encoder, optional extra), ``NodePostprocessorReranker`` in
:mod:`llama_kb.integrations.postprocessors` (any LlamaIndex node postprocessor) and
:class:`langchain_kb.CompressorReranker` (any LangChain document compressor).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Protocol, runtime_checkable

from llama_kb.retrieval.plan import QueryPlan
from llama_kb.types import SearchHit


@runtime_checkable
class Reranker(Protocol):
    """Reorders passages for a query."""

    def rerank(self, query: str, hits: Sequence[SearchHit]) -> list[SearchHit]:
        """``hits`` (a subset allowed) best first, each with its reranked ``score`` in [0, 1]."""
        ...


def unit_score(value: float) -> float:
    """A reranker's raw score on the payload's [0, 1] scale: kept when already in it, else
    passed through the logistic function (cross-encoder logits)."""
    if 0.0 <= value <= 1.0:
        return value
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, value))))


def apply(
    reranker: Reranker,
    plan: QueryPlan,
    hits: list[SearchHit],
    top_k: int,
    degrade: Callable[[str, Exception], None],
) -> list[SearchHit]:
    """The ``top_k`` best of ``hits`` in ``reranker``'s order (``rerank`` added to each
    hit's ranks); the fused order when it fails or returns a passage it was not given."""
    started = time.perf_counter()
    given = {hit.chunk_id: hit for hit in hits}
    try:
        reranked = reranker.rerank(plan.query, hits)
        unknown = [h.chunk_id for h in reranked if h.chunk_id not in given]
        if unknown:
            raise ValueError(f"reranker returned passages it was not given: {unknown[:3]}")
    except Exception as e:
        degrade("reranker", e)
        return hits[:top_k]
    chosen = []
    for rank, hit in enumerate(dict((h.chunk_id, h) for h in reranked).values(), 1):
        ranks = {**given[hit.chunk_id].ranks, "rerank": rank}
        chosen.append(replace(given[hit.chunk_id], score=unit_score(hit.score), ranks=ranks))
    plan.trace["rerank"] = {
        "reranker": type(reranker).__name__,
        "in": len(hits),
        "out": len(chosen),
        "ms": round((time.perf_counter() - started) * 1000, 3),
    }
    plan.stages.add("rerank", started, **{"in": len(hits), "out": len(chosen)})
    return chosen[:top_k]
