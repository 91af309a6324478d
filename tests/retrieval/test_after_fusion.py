"""The steps after fusion: how deep fusion ranks for each combination, and their order."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

from llama_kb.config import QueryOptions, RankingConfig
from llama_kb.retrieval.after_fusion import AfterFusion
from llama_kb.retrieval.plan import QueryPlan
from llama_kb.types import SearchHit
from tests.retrieval.test_question_cover import POOL, QUESTION


class Reversed:
    """A reranker that puts the passages it is given in reverse order."""

    def __init__(self) -> None:
        self.given: list[str] = []

    def rerank(self, query: str, hits: Sequence[SearchHit]) -> list[SearchHit]:
        self.given = [h.chunk_id for h in hits]
        return [replace(h, score=0.5) for h in reversed(hits)]


def plan() -> QueryPlan:
    return QueryPlan(QUESTION, QueryOptions(top_k=3), time.perf_counter())


def test_fusion_ranks_the_pool_only_when_a_hop_follows() -> None:
    steps = dict(keep=3, pool=30, cover=False)
    assert AfterFusion(hop=None, names=False, **steps).fused == 3
    assert AfterFusion(hop="dense", names=False, **steps).fused == 30
    assert AfterFusion(hop=None, names=True, **steps).fused == 30


def test_a_query_without_an_index_view_takes_no_step() -> None:
    after = AfterFusion.of(plan(), RankingConfig(), keep=3)
    assert (after.hop, after.names, after.cover, after.fused) == (None, False, False, 3)
    out = after.apply(plan(), list(POOL[:3]), RankingConfig(), lambda t, n: [], (dict, dict), None)
    assert [h.chunk_id for h in out] == ["c1", "c2", "c3"]


def test_the_cover_keeps_the_passages_kept_and_the_reranker_reads_its_order() -> None:
    reranker = Reversed()
    after = AfterFusion(hop=None, names=False, cover=True, keep=3, pool=30)
    out = after.apply(plan(), list(POOL), RankingConfig(), lambda t, n: [], (dict, dict), reranker)
    assert reranker.given == ["c1", "c3", "c2"]  # the cover's order, trimmed to keep
    assert [h.chunk_id for h in out] == ["c2", "c3", "c1"]
    assert out[0].ranks["rerank"] == 1
