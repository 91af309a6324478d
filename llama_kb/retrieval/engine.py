"""The unified retrieval engine: classify, dispatch, refine, fuse (framework-neutral).

Per query:

1. link names in the query to graph nodes and classify it (semantic / factual / hybrid);
2. query the vector store (dense) and the lexical index; for graph routes, read facts around
   the query's entities — in the async path these run concurrently;
3. rank chunks: *semantic* fuses dense and BM25 ranks (RRF); *factual* and *hybrid* run a
   Personalized PageRank over the chunk–name graph seeded by the query's entities (and, for
   hybrid, by the top hits), then add a small share of the dense+BM25 score;
4. refine (hybrid): the documents of the top chunks seed a second graph deep-dive;
5. rank facts (every route): typed facts about the linked entities and from the top passages,
   plus facts reached by traversal, scored by relevance (:mod:`.fact_ranking`); structural
   edges only with ``include_structural``;
6. return a :class:`FusedContext` with both kinds of context, provenance and a trace.

Scores are in [0, 1] for passages (the route's fused score over its largest possible value,
``scale`` in :mod:`.explain`) and facts (:mod:`.fact_ranking`); ``min_score`` drops both below.

A failing backend degrades the result (named in ``trace["degraded"]``) unless ``strict``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding

from llama_kb.config import QueryOptions, RankingConfig
from llama_kb.errors import LlamaKBError, QueryError
from llama_kb.names import candidate_spans
from llama_kb.retrieval import explain as debug
from llama_kb.retrieval import fact_step
from llama_kb.retrieval import trace as observe
from llama_kb.retrieval.classifier import HeuristicClassifier, QueryClassifier
from llama_kb.retrieval.fact_ranking import FactRanker
from llama_kb.retrieval.facts import merge_facts
from llama_kb.retrieval.fuzzy_names import FuzzyNameLinker
from llama_kb.retrieval.index import IndexSnapshot, RetrievalIndex, top_rows
from llama_kb.retrieval.options import resolve_options, validate_query
from llama_kb.retrieval.payload import Classification, Fact, FusedContext
from llama_kb.retrieval.plan import QueryPlan
from llama_kb.stores.chroma_vector import ChromaChunkStore
from llama_kb.stores.graph import KBGraphStore
from llama_kb.types import Route, SearchHit

logger = logging.getLogger(__name__)


class ContextEngine:
    """Framework-neutral unified retrieval over a vector store and a graph store.

    Args:
        vectors: Chunk vector store.
        graph: Graph store.
        embedding: Embeds queries (must match the stored vectors).
        classifier: Routes queries; default :class:`HeuristicClassifier`.
        defaults: Default query options.
        ranking: Ranking weights and constants.
    """

    def __init__(
        self,
        vectors: ChromaChunkStore,
        graph: KBGraphStore,
        embedding: BaseEmbedding,
        classifier: QueryClassifier | None = None,
        defaults: QueryOptions | None = None,
        ranking: RankingConfig | None = None,
    ) -> None:
        self.vectors = vectors
        self.graph = graph
        self.embedding = embedding
        self.classifier = classifier or HeuristicClassifier()
        self.defaults = defaults or QueryOptions()
        self.ranking = ranking or RankingConfig()
        self.index = RetrievalIndex(vectors, graph, title_pull=self.ranking.title_pull)
        self._fuzzy: tuple[IndexSnapshot, FuzzyNameLinker] | None = None
        self.fact_ranker = FactRanker(embedding, self.ranking)

    # -- public -----------------------------------------------------------------------

    @observe.span
    def retrieve(self, query: str, **options: Any) -> FusedContext:
        """Retrieve fused context for ``query``.

        Args:
            query: The question or keywords.
            **options: ``top_k`` (passages), ``max_facts`` (facts), ``min_score`` (in
                [0, 1], on passages and facts alike), ``filters``
                (``{"field": value or [values]}``), ``route`` (force one),
                ``max_cost`` / ``max_hops`` / ``max_nodes`` (graph traversal budget),
                ``include_structural``, ``strict`` (raise instead of degrading), ``explain``
                (every candidate's score parts in ``trace["explain"]``: :mod:`.explain`).

        Raises:
            QueryError: Empty query or invalid options.
            BackendError: A backend failed and ``strict`` is set.
        """
        plan = self._plan(query, options)
        if plan.snapshot is not None and not plan.snapshot.chunk_ids:
            return self._empty(plan)
        dense = self._dense(plan)
        lexical = self._lexical(plan)
        facts = self._facts(plan, plan.entity_ids)
        return self._finish(plan, dense, lexical, facts)

    @observe.span
    async def aretrieve(self, query: str, **options: Any) -> FusedContext:
        """Async :meth:`retrieve`: vector and graph work run concurrently in threads."""
        plan = await asyncio.to_thread(self._plan, query, options)
        if plan.snapshot is not None and not plan.snapshot.chunk_ids:
            return self._empty(plan)
        dense, lexical, facts = await asyncio.gather(
            asyncio.to_thread(self._dense, plan),
            asyncio.to_thread(self._lexical, plan),
            asyncio.to_thread(self._facts, plan, plan.entity_ids),
        )
        return await asyncio.to_thread(self._finish, plan, dense, lexical, facts)

    # -- steps ------------------------------------------------------------------------

    def _plan(self, query: str, options: dict[str, Any]) -> QueryPlan:
        plan = QueryPlan(
            validate_query(query),
            resolve_options(self.defaults, **options),
            time.perf_counter(),
        )
        observe.emit_start(plan.query, plan.options)
        started = time.perf_counter()
        try:
            plan.snapshot = self.index.snapshot()
        except Exception as e:
            self._degrade(plan, "index", e)
        plan.trace["index_ms"] = _ms(started)
        plan.stages.add("index", started, out=len(plan.snapshot.chunk_ids) if plan.snapshot else 0)
        snapshot = plan.snapshot
        if snapshot is not None and snapshot.chunk_ids and plan.options.filters:
            unknown = set(plan.options.filters) - snapshot.metadata_keys
            if unknown:
                raise QueryError(
                    f"unknown filter field(s) {sorted(unknown)}; known fields: "
                    f"{', '.join(sorted(snapshot.metadata_keys))}"
                )
            plan.mask = snapshot.rows_matching(plan.options.filters)
        started = time.perf_counter()
        if snapshot is not None:
            linked = self._link(plan.query, snapshot, plan)
            plan.entity_ids = [entry["id"] for entry in linked]
            plan.trace["linked_entities"] = linked
        plan.trace["linking_ms"] = _ms(started)
        started = plan.stages.add("linking", started, out=len(plan.entity_ids))
        names = [snapshot.names.get(i, i) for i in plan.entity_ids] if snapshot else []
        if plan.options.route is not None:
            plan.classification = Classification(
                plan.options.route, 1.0, "route given by the caller", method="override"
            )
        else:
            plan.classification = self.classifier(plan.query, names)
        plan.trace["classifier"] = {**plan.classification.to_dict(), "ms": _ms(started, 4)}
        plan.stages.add("classify", started, route=plan.classification.label.value)
        return plan

    def _link(self, query: str, snapshot: IndexSnapshot, plan: QueryPlan) -> list[dict[str, Any]]:
        """Graph names in the query: exact/alias matches, else embedding similarity of the
        query's capitalised spans to candidate names (see :mod:`.fuzzy_names`)."""
        linked = [
            {
                "id": m.node_id,
                "name": snapshot.names.get(m.node_id, m.node_id),
                "surface": m.surface,
                "method": "name",
            }
            for m in snapshot.link(query)
        ]
        spans = candidate_spans(query) if not linked else []
        if not spans:
            return linked
        try:
            found = self._fuzzy_linker(snapshot).link(spans)
        except Exception as e:
            self._degrade(plan, "embedding", e)
            return linked
        by_id = {
            node_id: {
                "id": node_id,
                "name": snapshot.names[node_id],
                "surface": span,
                "method": "embedding",
                "similarity": similarity,
            }
            for span, node_id, similarity in found
        }
        return list(by_id.values())

    def _fuzzy_linker(self, snapshot: IndexSnapshot) -> FuzzyNameLinker:
        current = self._fuzzy
        if current is None or current[0] is not snapshot:
            linker = FuzzyNameLinker(snapshot.names, self.embedding, self.ranking.name_similarity)
            if current is not None:
                linker.reuse_vectors(current[1])
            current = (snapshot, linker)
            self._fuzzy = current
        return current[1]

    def _dense(self, plan: QueryPlan) -> list[SearchHit]:
        started = time.perf_counter()
        try:
            vector = self.embedding.get_query_embedding(plan.query)
            plan.query_vector = list(vector)
            searched = plan.stages.add("embedding", started)
            hits = self.vectors.query(vector, self._candidates(plan), plan.options.filters)
            plan.stages.add("dense", searched, out=len(hits))
        except Exception as e:
            self._degrade(plan, "vector", e)
            hits = []
        plan.trace.setdefault("retrievers", {})["vector"] = {"hits": len(hits), "ms": _ms(started)}
        return hits

    def _lexical(self, plan: QueryPlan) -> np.ndarray | None:
        if plan.snapshot is None:
            return None
        started = time.perf_counter()
        scores = plan.snapshot.bm25.scores(plan.query)
        plan.trace.setdefault("retrievers", {})["bm25"] = {
            "hits": int((scores > 0).sum()),
            "ms": _ms(started),
        }
        plan.stages.add("lexical", started, out=plan.trace["retrievers"]["bm25"]["hits"])
        return scores

    def _facts(self, plan: QueryPlan, seeds: Sequence[str]) -> list[Fact]:
        return fact_step.traverse(self.graph, plan, seeds, partial(self._degrade, plan))

    def _finish(
        self, plan: QueryPlan, dense: list[SearchHit], lexical: np.ndarray | None, facts: list[Fact]
    ) -> FusedContext:
        assert plan.classification is not None
        route = plan.classification.label
        snapshot = plan.snapshot
        started = time.perf_counter()
        if snapshot is None:
            hits = [
                replace(h, ranks={"vector": i}, score=min(1.0, max(0.0, h.score)))
                for i, h in enumerate(dense[: plan.options.top_k], 1)
            ]
        elif route is Route.SEMANTIC:
            hits = self._rank_semantic(plan, snapshot, dense, lexical)
        else:
            hits = self._rank_graph(plan, snapshot, dense, lexical)
        plan.stages.add("fusion", started, out=len(hits))
        refined: list[str] = []
        if route is Route.HYBRID and snapshot is not None:
            refined = [
                snapshot.doc_node_of_row[snapshot.row_of[h.chunk_id]]
                for h in hits[: self.ranking.refine_from_top]
                if h.chunk_id in snapshot.row_of
            ]
            refined = [e for e in dict.fromkeys(refined) if e not in plan.entity_ids]
            more = self._facts(plan, refined)
            facts = merge_facts(facts, more, plan.options.max_facts * fact_step.TRAVERSAL_SHARE)
        ranked = hits
        if plan.options.min_score is not None:
            started = time.perf_counter()
            hits = [h for h in hits if h.score >= plan.options.min_score]
            plan.stages.add("min_score", started, **{"in": len(ranked), "out": len(hits)})
        if plan.parts is not None and snapshot is not None:
            plan.trace["explain"] = plan.parts.explain(snapshot, dense, lexical, ranked, hits)
        degrade = partial(self._degrade, plan)
        facts = fact_step.rank(self.fact_ranker, self.graph, plan, hits, facts, degrade)
        plan.trace["refined_entities"] = refined
        plan.trace["total_ms"] = _ms(plan.started)
        if plan.degraded:
            plan.trace["degraded"] = plan.degraded
        names = snapshot.names if snapshot is not None else {}
        entity_ids = list(dict.fromkeys(plan.entity_ids + refined))
        context = FusedContext(
            query=plan.query,
            route=route,
            unstructured=hits,
            structured_facts=facts,
            entities=[names.get(e, e) for e in entity_ids],
            trace=plan.trace,
        )
        return observe.emit_end(context, plan.stages, plan.options.top_k)

    # -- ranking ----------------------------------------------------------------------

    def _rank_semantic(
        self,
        plan: QueryPlan,
        snapshot: IndexSnapshot,
        dense: list[SearchHit],
        lexical: np.ndarray | None,
    ) -> list[SearchHit]:
        """Reciprocal rank fusion of dense and BM25 rankings."""
        depth = self._candidates(plan)
        ranks: dict[str, dict[str, int]] = {}
        for rank, hit in enumerate(dense, 1):
            ranks.setdefault(hit.chunk_id, {})["vector"] = rank
        if lexical is not None:
            for row, rank in _rank_of(lexical, plan.mask, depth).items():
                ranks.setdefault(snapshot.chunk_ids[row], {})["bm25"] = rank
        rrf_k = self.ranking.rrf_k
        best = 2.0 / (rrf_k + 1)  # rank 1 in both lists: fused scores are in [0, 1]
        parts = {
            c: {name: 1.0 / (rrf_k + r) / best for name, r in rs.items()} for c, rs in ranks.items()
        }
        fused = {c: min(1.0, sum(p.values())) for c, p in parts.items()}
        if plan.options.explain:
            plan.parts = debug.ScoreParts.semantic(snapshot, parts, fused, plan.mask, depth, best)
        order = sorted(fused, key=lambda c: (-fused[c], c))[: plan.options.top_k]
        return [self._hit(snapshot, c, fused[c], ranks[c]) for c in order]

    def _rank_graph(
        self,
        plan: QueryPlan,
        snapshot: IndexSnapshot,
        dense: list[SearchHit],
        lexical: np.ndarray | None,
    ) -> list[SearchHit]:
        """PPR over the chunk–name graph seeded by entities (and hits), plus a base share."""
        n = len(snapshot.chunk_ids)
        dense_scores = np.zeros(n)
        if dense:
            floor = min(h.score for h in dense)
            dense_scores[:] = floor
            for hit in dense:
                row = snapshot.row_of.get(hit.chunk_id)
                if row is not None:
                    dense_scores[row] = hit.score
        ranking = self.ranking
        dense_part = (1 - ranking.lexical_share) * _minmax(dense_scores)
        lexical_part = np.zeros(n)
        if lexical is not None:
            lexical_part = ranking.lexical_share * _minmax(lexical)
        base = dense_part + lexical_part
        assert plan.classification is not None
        name_seeds = snapshot.graph.name_vector(plan.entity_ids)
        use_hits = plan.classification.label is Route.HYBRID or not name_seeds.any()
        chunk_seeds = np.zeros(n)
        if use_hits:
            top = np.asarray(top_rows(base, ranking.hit_seeds, plan.mask), dtype=int)
            if top.size:
                weights = np.exp((base[top] - base[top].max()) / ranking.hit_temperature)
                mass = ranking.hit_seed_mass if name_seeds.any() else 1.0
                chunk_seeds[top] = mass * weights / weights.sum()
        started = time.perf_counter()
        walk = snapshot.graph.personalized_pagerank(
            chunk_seeds, name_seeds, ranking.ppr_damping, ranking.ppr_iterations
        )
        seeds = {"entities": int((name_seeds > 0).sum()), "hits": int((chunk_seeds > 0).sum())}
        plan.trace.setdefault("retrievers", {})["graph"] = {"seeds": seeds, "ms": _ms(started)}
        plan.stages.add("graph_walk", started, **seeds)
        peak = walk.max()
        walk_part = walk / peak if peak > 0 else walk
        coverage_part = np.zeros(n)
        ceiling = 1.0 + ranking.base_share  # the largest possible sum: scores are in [0, 1]
        if len(plan.entity_ids) > 1:
            # a chunk that ties together several of the query's entities answers how they
            # relate; PPR alone ranks every chunk of an entity's document alike
            covered = snapshot.graph.coverage(plan.entity_ids)
            coverage_part = ranking.coverage_bonus * np.maximum(covered - 1, 0)
            ceiling += ranking.coverage_bonus * (len(plan.entity_ids) - 1)
        final = np.clip((walk_part + ranking.base_share * base + coverage_part) / ceiling, 0, 1)
        order = top_rows(final, plan.options.top_k, plan.mask)
        if plan.options.explain:
            arrays = (walk_part, dense_part, lexical_part, coverage_part, final)
            depth = self._candidates(plan)
            share = ranking.base_share
            plan.parts = debug.ScoreParts.graph(share, arrays, plan.mask, depth, ceiling)
        dense_rank = {h.chunk_id: i for i, h in enumerate(dense, 1)}
        lexical_rank = _rank_of(lexical, plan.mask) if lexical is not None else {}
        graph_rank = {row: i for i, row in enumerate(top_rows(walk, len(order) * 4, plan.mask), 1)}
        hits = []
        for row in order:
            chunk_id = snapshot.chunk_ids[row]
            ranks = {"graph": graph_rank.get(row, 0)}
            if chunk_id in dense_rank:
                ranks["vector"] = dense_rank[chunk_id]
            if row in lexical_rank:
                ranks["bm25"] = lexical_rank[row]
            hits.append(self._hit(snapshot, chunk_id, float(final[row]), ranks))
        return hits

    def _candidates(self, plan: QueryPlan) -> int:
        """Dense and lexical candidates to fuse: enough for the hit seeds and the final top_k."""
        return max(plan.options.top_k, self.ranking.min_candidates)

    @staticmethod
    def _hit(
        snapshot: IndexSnapshot, chunk_id: str, score: float, ranks: dict[str, int]
    ) -> SearchHit:
        row = snapshot.row_of[chunk_id]
        meta = snapshot.metadata[row]
        return SearchHit(
            chunk_id=chunk_id,
            doc_id=str(meta.get("doc_id", "")),
            text=snapshot.texts[row],
            score=score,
            metadata=dict(meta),
            ranks=ranks,
        )

    # -- helpers ----------------------------------------------------------------------

    def _empty(self, plan: QueryPlan) -> FusedContext:
        assert plan.classification is not None
        plan.trace["total_ms"] = _ms(plan.started)
        plan.trace["empty_knowledge_base"] = True
        context = FusedContext(query=plan.query, route=plan.classification.label, trace=plan.trace)
        return observe.emit_end(context, plan.stages, plan.options.top_k)

    @staticmethod
    def _degrade(plan: QueryPlan, backend: str, error: Exception) -> None:
        if plan.options.strict:
            if isinstance(error, LlamaKBError):
                raise error
            raise LlamaKBError(f"{backend} backend failed: {error}") from error
        logger.warning("%s backend failed, continuing without it: %s", backend, error)
        plan.degraded.append(f"{backend}: {type(error).__name__}: {error}")


def _minmax(scores: np.ndarray) -> np.ndarray:
    low, high = float(scores.min()), float(scores.max())
    return (scores - low) / (high - low) if high > low else np.zeros_like(scores)


def _rank_of(scores: np.ndarray, mask: np.ndarray | None, depth: int = 100) -> dict[int, int]:
    positive = np.where(scores > 0, scores, -np.inf)
    return {row: i for i, row in enumerate(top_rows(positive, depth, mask), 1)}


def _ms(started: float, digits: int = 3) -> float:
    return round((time.perf_counter() - started) * 1000, digits)
