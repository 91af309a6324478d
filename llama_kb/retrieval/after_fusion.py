"""What follows fusion for one query: the second hops, the question cover and the reranker.

:class:`AfterFusion` decides once per query which steps apply and so how deep fusion must
rank (a step that reorders needs the whole pool), then runs them in order: the bridge hop
(:mod:`.bridge_hop`), the opt-in name hop (:mod:`.name_hop`), the question cover of
described queries (:mod:`.question_cover`) and a user's reranker (:mod:`.rerank`). Each
step keeps the pool only when a later one reads it, so the last keeps ``keep``.
"""

from __future__ import annotations

from dataclasses import dataclass

from llama_kb.config import RankingConfig
from llama_kb.retrieval import bridge_hop, name_hop, question_cover, rerank
from llama_kb.retrieval.plan import QueryPlan
from llama_kb.retrieval.rerank import Reranker
from llama_kb.types import SearchHit


@dataclass(frozen=True)
class AfterFusion:
    """The steps after fusion that ``plan`` takes (see the module docstring).

    Args:
        hop: The bridge hop's kind (:func:`.bridge_hop.kind`), ``None`` for no hop.
        names: Whether the name hop applies.
        cover: Whether the question cover applies.
        keep: Passages kept at the end (``top_k``, or the reranker's depth).
        pool: Passages a reordering step reads.
    """

    hop: str | None
    names: bool
    cover: bool
    keep: int
    pool: int

    @classmethod
    def of(cls, plan: QueryPlan, ranking: RankingConfig, keep: int) -> AfterFusion:
        """The steps ``plan`` takes, keeping ``keep`` passages."""
        hop = bridge_hop.kind(plan, ranking) if plan.view is not None else None
        return cls(
            hop=hop,
            names=name_hop.applies(plan, ranking),
            cover=question_cover.applies(hop, ranking),
            keep=keep,
            pool=max(keep, ranking.bridge_pool),
        )

    @property
    def fused(self) -> int:
        """Passages fusion ranks: the pool when a hop follows, else ``keep``."""
        return self.pool if self.hop or self.names else self.keep

    def apply(
        self,
        plan: QueryPlan,
        hits: list[SearchHit],
        ranking: RankingConfig,
        search: bridge_hop.Search,
        reads: tuple[name_hop.Vectors, name_hop.NameVectors],
        reranker: Reranker | None,
    ) -> list[SearchHit]:
        """``hits`` (fused) after every step that applies; ``search`` is the hop's dense
        search, ``reads`` the name hop's vector reads."""
        if self.hop is not None:
            kept = self.pool if self.names or self.cover else self.keep
            hits = bridge_hop.apply(plan, hits, ranking, kept, plan.degrade, self.hop, search)
        if self.names:
            kept = self.pool if self.cover else self.keep
            hits = name_hop.apply(plan, hits, ranking, kept, *reads)
        if self.cover:
            hits = question_cover.apply(plan, hits, ranking, self.keep)
        if reranker is not None:
            hits = rerank.apply(reranker, plan, hits, plan.options.top_k, plan.degrade)
        return hits
