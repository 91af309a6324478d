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
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import replace
from functools import partial
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding

from llama_kb.access import Principal
from llama_kb.background import Pending
from llama_kb.config import QueryOptions, RankingConfig
from llama_kb.errors import QueryError
from llama_kb.retrieval import bridge_hop, fact_step, knowledge_step, name_hop, ranking
from llama_kb.retrieval import trace as observe
from llama_kb.retrieval.after_fusion import AfterFusion
from llama_kb.retrieval.cache import QueryCache, cache_key
from llama_kb.retrieval.classifier import HeuristicClassifier, QueryClassifier
from llama_kb.retrieval.collector import collection_paused
from llama_kb.retrieval.fact_ranking import FactRanker
from llama_kb.retrieval.fuzzy_names import FuzzyNameLinker
from llama_kb.retrieval.index import Candidates
from llama_kb.retrieval.lexical import lexical_tokens
from llama_kb.retrieval.memory_index import MemorySearchIndex
from llama_kb.retrieval.options import resolve_options, resolve_principal, validate_query
from llama_kb.retrieval.payload import Classification, Fact, FusedContext
from llama_kb.retrieval.plan import QueryPlan
from llama_kb.retrieval.query_linking import link_query
from llama_kb.retrieval.rerank import Reranker
from llama_kb.stores.chroma_vector import ChromaChunkStore
from llama_kb.stores.graph import KBGraphStore
from llama_kb.stores.phrase_vectors import PhraseVectors
from llama_kb.stores.query_scope import one_query
from llama_kb.stores.search import SearchIndex, restricted
from llama_kb.types import Route, SearchHit

logger = logging.getLogger(__name__)

WARM_UP_QUERY = "How is the first part of the guide related to the second one?"
"""What :meth:`ContextEngine.warm_up` asks: no name, so it takes the graph route and the
described query's second hop, as most first queries' paths do."""


class ContextEngine:
    """Framework-neutral unified retrieval over a vector store and a graph store.

    Args:
        vectors: Chunk vector store.
        graph: Graph store.
        embedding: Embeds queries (must match the stored vectors).
        classifier: Routes queries; default :class:`HeuristicClassifier`.
        defaults: Default query options.
        ranking: Ranking weights and constants.
        cache_size: Results kept by (query, options, access, index revision); 0 disables
            the cache.
        require_principal: Refuse queries without a principal (else they read public records).
        reranker: Reorders the best ``ranking.rerank_depth`` fused passages (:mod:`.rerank`).
        phrases: Fact relation-phrase vectors stored at ingest; without it, fact ranking
            embeds the phrases it has not met in this process.
    """

    def __init__(
        self,
        vectors: ChromaChunkStore,
        graph: KBGraphStore,
        embedding: BaseEmbedding,
        classifier: QueryClassifier | None = None,
        defaults: QueryOptions | None = None,
        ranking: RankingConfig | None = None,
        cache_size: int = 256,
        require_principal: bool = False,
        reranker: Reranker | None = None,
        phrases: PhraseVectors | None = None,
    ) -> None:
        self.vectors = vectors
        self.graph = graph
        self.embedding = embedding
        self.classifier = classifier or HeuristicClassifier()
        self.defaults = defaults or QueryOptions()
        self.ranking = ranking or RankingConfig()
        own = getattr(graph, "search_index", None)
        self.search_index: SearchIndex = (
            own if own is not None else MemorySearchIndex(vectors, graph)
        )
        self._fuzzy = FuzzyNameLinker(embedding, self.ranking.name_similarity, phrases)
        self.fact_ranker = FactRanker(embedding, self.ranking, phrases)
        self.cache = QueryCache(cache_size)
        self.require_principal = require_principal
        self._reranker = reranker
        self.pause_collection = True
        """Pause Python's cyclic garbage collector while a query runs (:mod:`.collector`):
        a query's short-lived objects are then never promoted, and full collections, which
        set the p95, become rare."""
        self.knowledge_search: knowledge_step.KnowledgeSearch | None = None
        """Set by the knowledge base when it holds knowledge pieces (see
        :mod:`.knowledge_step`)."""

    # -- public -----------------------------------------------------------------------

    @property
    def reranker(self) -> Reranker | None:
        """Reorders the best fused passages (:mod:`.rerank`); setting it empties the cache."""
        return self._reranker

    @reranker.setter
    def reranker(self, value: Reranker | None) -> None:
        self._reranker = value
        self.cache.clear()

    @observe.span
    def retrieve(self, query: str, **options: Any) -> FusedContext:
        """Retrieve fused context for ``query``.

        Args:
            query: The question or keywords.
            **options: ``top_k`` (passages), ``max_facts`` (facts), ``min_score`` (in
                [0, 1], on passages and facts alike), ``principal`` (who asks: a
                :class:`~llama_kb.access.Principal`, ``"user@org"`` or a mapping; records it
                may not read do not exist for the query; none = public records), ``filters``
                (``{"field": value or [values]}``), ``route`` (force one),
                ``max_cost`` / ``max_hops`` / ``max_nodes`` (graph traversal budget),
                ``include_structural``, ``strict`` (raise instead of degrading), ``explain``
                (every candidate's score parts in ``trace["explain"]``: :mod:`.explain`).

        Raises:
            QueryError: Empty query or invalid options.
            BackendError: A backend failed and ``strict`` is set.
        """
        with self._one_query():
            return self._answer(self._plan(query, options, dense_first=True))

    def warm_up(self) -> None:
        """Answer one internal query (public records, ``top_k`` 1) and drop its result, so the
        first real query does not pay the query path's first-use costs: store connections,
        compiled statements, the indexes' first reads (docs/scale.md, "Stop 53"). It reports
        to no channel, is not cached, and a failure is only logged."""
        with self._one_query(), observe.silenced():
            try:
                plan = self._plan(WARM_UP_QUERY, {"top_k": 1}, dense_first=True, internal=True)
                self._answer(plan)
            except Exception as e:  # a warm-up must never fail the caller
                logger.debug("the warm-up query failed: %s", e)

    def retrieve_many(self, queries: Sequence[str], **options: Any) -> list[FusedContext]:
        """:meth:`retrieve` for several queries, embedding them in one batch.

        Raises:
            QueryError: A query is empty or the options are invalid.
        """
        texts = [validate_query(q) for q in queries]
        batch = getattr(self.embedding, "get_query_embedding_batch", None)
        vectors = batch(texts) if callable(batch) else [None] * len(texts)
        results = []
        for text, vector in zip(texts, vectors, strict=True):
            with self._one_query():
                plan = self._plan(text, options)
                plan.query_vector = None if vector is None else list(vector)
                results.append(self._answer(plan))
        return results

    @observe.span
    async def aretrieve(self, query: str, **options: Any) -> FusedContext:
        """Async :meth:`retrieve`: vector and graph work run concurrently in threads."""
        with self._one_query():  # the threads below run in copies of this context
            plan = await asyncio.to_thread(self._plan, query, options)
            if plan.cached is not None:
                return self._from_cache(plan)
            if plan.empty:
                return self._empty(plan)
            dense, lexical, facts = await asyncio.gather(
                asyncio.to_thread(self._dense, plan),
                asyncio.to_thread(self._lexical_and_hop, plan),
                asyncio.to_thread(self._facts, plan, plan.entity_ids),
            )
            return await asyncio.to_thread(self._finish, plan, dense, lexical, facts)

    # -- steps ------------------------------------------------------------------------

    @contextmanager
    def _one_query(self) -> Iterator[None]:
        """One query's scope: its store reads shared, the collector paused if
        :attr:`pause_collection`."""
        with one_query(), collection_paused() if self.pause_collection else nullcontext():
            yield

    def access_of(self, principal: Any) -> frozenset[str] | None:
        """The access keys ``principal`` reads when some stored record is not among them
        (``None``: it reads everything stored).

        Raises:
            QueryError: A malformed principal, or none when one is required.
        """
        return self._view(resolve_principal(principal, self.require_principal)).visible

    def _plan(
        self,
        query: str,
        options: dict[str, Any],
        dense_first: bool = False,
        internal: bool = False,
    ) -> QueryPlan:
        """Open the query: its index view (or its cached result), linked names and route.
        With ``dense_first`` the dense step starts in a thread before linking, and the
        lexical step before a fuzzy name lookup. An ``internal`` query reads public records
        whatever ``require_principal`` says and bypasses the cache."""
        options = dict(options)
        given = options.pop("principal", None)
        principal = Principal() if internal else resolve_principal(given, self.require_principal)
        plan = QueryPlan(
            validate_query(query),
            resolve_options(self.defaults, **options),
            time.perf_counter(),
            principal=principal,
        )
        observe.emit_start(plan.query, plan.options)
        started = time.perf_counter()
        chunks = 0
        plan.access = principal.own_keys()  # fail closed until the stored keys are known
        try:
            index = self._view(principal)
            plan.access = index.visible
            if self.cache.size and not plan.options.explain and not internal:
                plan.cache_key = cache_key(plan.query, plan.options, index, plan.access)
                plan.cached = None if plan.cache_key is None else self.cache.get(plan.cache_key)
                if plan.cached is not None:
                    plan.stages.add("cache", started, hit=True)
                    return plan
            chunks = index.chunk_count()
            plan.view = Candidates(index)
            if chunks and plan.options.filters:
                fields = index.metadata_fields()
                unknown = set(plan.options.filters) - fields
                if unknown:
                    raise QueryError(
                        f"unknown filter field(s) {sorted(unknown)}; known fields: "
                        f"{', '.join(sorted(fields))}"
                    )
        except QueryError:
            raise
        except Exception as e:
            plan.degrade("index", e)
        plan.trace["index_ms"] = _ms(started)
        plan.stages.add("index", started, out=chunks)
        plan.empty = plan.view is not None and not chunks
        if dense_first and not plan.empty:
            plan.dense = Pending(self._dense, plan)
        started = time.perf_counter()
        if plan.view is not None and chunks:
            ahead = partial(self._lexical_ahead, plan) if dense_first else None
            linked = link_query(plan.query, plan.view, self._fuzzy, plan.degrade, ahead)
            plan.entity_ids = [entry["id"] for entry in linked]
            plan.linked_surfaces = [str(entry.get("surface") or "") for entry in linked]
            plan.trace["linked_entities"] = linked
        plan.trace["linking_ms"] = _ms(started)
        started = plan.stages.add("linking", started, out=len(plan.entity_ids))
        names = [plan.view.name(i) for i in plan.entity_ids] if plan.view else []
        if plan.options.route is not None:
            plan.classification = Classification(
                plan.options.route, 1.0, "route given by the caller", method="override"
            )
        else:
            plan.classification = self.classifier(plan.query, names)
        plan.trace["classifier"] = {**plan.classification.to_dict(), "ms": _ms(started, 4)}
        plan.stages.add("classify", started, route=plan.classification.label.value)
        return plan

    def _answer(self, plan: QueryPlan) -> FusedContext:
        """``plan``'s result: cached, empty, or searched and fused."""
        if plan.cached is not None:
            return self._from_cache(plan)
        if plan.empty:
            return self._empty(plan)
        return self._finish(plan, *self._search(plan))

    def _view(self, principal: Principal) -> SearchIndex:
        """The search index as ``principal`` sees it: restricted when some stored record is
        not visible to it (:mod:`llama_kb.access`)."""
        index = self.search_index
        return restricted(index, principal.visible(index.access_keys()))

    def _search(
        self, plan: QueryPlan
    ) -> tuple[list[SearchHit], list[tuple[str, float]], list[Fact]]:
        """Dense hits (in a thread), lexical hits and traversed facts of ``plan``."""
        dense = plan.dense or Pending(self._dense, plan)
        lexical = self._lexical_and_hop(plan)
        facts = self._facts(plan, plan.entity_ids)
        return dense.result(), lexical, facts

    def _dense(self, plan: QueryPlan) -> list[SearchHit]:
        started = time.perf_counter()
        try:
            vector = plan.query_vector or self.embedding.get_query_embedding(plan.query)
            plan.query_vector = list(vector)
            searched = plan.stages.add("embedding", started)
            hits = self.vectors.query(
                vector, self._candidates(plan), plan.options.filters, plan.access
            )
            plan.stages.add("dense", searched, out=len(hits))
        except Exception as e:
            plan.degrade("vector", e)
            hits = []
        plan.trace.setdefault("retrievers", {})["vector"] = {"hits": len(hits), "ms": _ms(started)}
        return hits

    def _dense_search(self, plan: QueryPlan, text: str, n: int) -> list[SearchHit]:
        """Dense search of ``text`` with ``plan``'s filters and access."""
        vector = self.embedding.get_query_embedding(text)
        return self.vectors.query(vector, n, plan.options.filters, plan.access)

    def _lexical_and_hop(self, plan: QueryPlan) -> list[tuple[str, float]]:
        """Lexical hits of ``plan``; its second hop starts from them, if it takes one, else
        its walk is read ahead (:func:`~.ranking.walk_ahead`); the name hop's reads start
        from the best passage either ranked (:func:`~.name_hop.search_from`)."""
        lexical = plan.lexical.result() if plan.lexical else self._lexical(plan)
        seed = bridge_hop.start(plan, lexical, self.ranking, partial(self._dense_search, plan))
        if plan.hop is None:
            seed = ranking.walk_ahead(plan, lexical, self.ranking)
        if seed is not None:
            name_hop.search_from(plan, seed, self.ranking, *self._name_hop_reads)
        return lexical

    def _lexical_ahead(self, plan: QueryPlan) -> None:
        """Start the lexical step in a thread (it overlaps a slow fuzzy name lookup)."""
        plan.lexical = Pending(self._lexical, plan)

    def _lexical(self, plan: QueryPlan) -> list[tuple[str, float]]:
        if plan.view is None:
            return []
        started = time.perf_counter()
        try:
            hits = plan.view.index.lexical(
                lexical_tokens(plan.query), self._candidates(plan), plan.options.filters
            )
        except Exception as e:
            plan.degrade("lexical", e)
            hits = []
        plan.trace.setdefault("retrievers", {})["bm25"] = {"hits": len(hits), "ms": _ms(started)}
        plan.stages.add("lexical", started, out=len(hits))
        return hits

    def _facts(self, plan: QueryPlan, seeds: Sequence[str]) -> list[Fact]:
        return fact_step.traverse(self.graph, plan, seeds, plan.degrade)

    def _finish(
        self,
        plan: QueryPlan,
        dense: list[SearchHit],
        lexical: list[tuple[str, float]],
        facts: list[Fact],
    ) -> FusedContext:
        assert plan.classification is not None
        route = plan.classification.label
        view = plan.view
        started = time.perf_counter()
        depth = self._candidates(plan)
        after = AfterFusion.of(plan, self.ranking, self._kept(plan))
        fused = after.fused
        if view is None:
            hits = [
                replace(h, ranks={"vector": i}, score=min(1.0, max(0.0, h.score)))
                for i, h in enumerate(dense[:fused], 1)
            ]
        elif route is Route.SEMANTIC:
            hits = ranking.rank_semantic(plan, view, dense, lexical, self.ranking, depth, fused)
        else:
            hits = ranking.rank_graph(plan, view, dense, lexical, self.ranking, depth, fused)
        plan.stages.add("fusion", started, out=len(hits))
        search = partial(self._dense_search, plan)
        hits = after.apply(plan, hits, self.ranking, search, self._name_hop_reads, self.reranker)
        facts, refined = fact_step.refine(
            self.graph, plan, hits, facts, self.ranking.refine_from_top, plan.degrade
        )
        ranked = hits
        if plan.options.min_score is not None:
            started = time.perf_counter()
            hits = [h for h in hits if h.score >= plan.options.min_score]
            plan.stages.add("min_score", started, **{"in": len(ranked), "out": len(hits)})
        if plan.parts is not None and view is not None:
            scores = ranking.lexical_scores(view, lexical)
            plan.trace["explain"] = plan.parts.explain(view, dense, scores, ranked, hits)
        facts = fact_step.rank(self.fact_ranker, plan, hits, facts, plan.degrade)
        plan.trace["refined_entities"] = refined
        plan.trace["total_ms"] = _ms(plan.started)
        if plan.degraded:
            plan.trace["degraded"] = plan.degraded
        entity_ids = list(dict.fromkeys(plan.entity_ids + refined))
        if view is not None:
            view.names.update(view.index.display_names(entity_ids))
        context = FusedContext(
            query=plan.query,
            route=route,
            unstructured=hits,
            structured_facts=facts,
            entities=[view.name(e) if view else e for e in entity_ids],
            trace=plan.trace,
            query_vector=plan.query_vector,
        )
        if plan.cache_key is not None and not plan.degraded:
            plan.trace["cache"] = "miss"
            self.cache.put(plan.cache_key, context)
        return self._end(plan, context)

    def _from_cache(self, plan: QueryPlan) -> FusedContext:
        context = plan.cached
        assert context is not None
        context.trace["cache"] = "hit"
        context.trace["total_ms"] = _ms(plan.started)
        return self._end(plan, context)

    def _end(self, plan: QueryPlan, context: FusedContext) -> FusedContext:
        """Add the knowledge pieces (after the cache: always current) and report the end."""
        knowledge_step.attach(self.knowledge_search, self.embedding, plan, context, plan.degrade)
        return observe.emit_end(context, plan.stages, plan.options.top_k)

    @property
    def _name_hop_reads(self) -> tuple[name_hop.Vectors, name_hop.NameVectors]:
        """How the name hop reads stored chunk vectors and name vectors."""
        return self.vectors.get_vectors, self._fuzzy.name_vectors

    def _candidates(self, plan: QueryPlan) -> int:
        """Dense and lexical candidates to fuse: enough for the hit seeds and the passages
        kept after fusion."""
        return max(self._kept(plan), self.ranking.min_candidates)

    def _kept(self, plan: QueryPlan) -> int:
        """Passages kept after fusion: ``top_k``, or the reranker's depth when there is one."""
        if self.reranker is None:
            return plan.options.top_k
        return max(plan.options.top_k, self.ranking.rerank_depth)

    # -- helpers ----------------------------------------------------------------------

    def _empty(self, plan: QueryPlan) -> FusedContext:
        assert plan.classification is not None
        plan.trace["total_ms"] = _ms(plan.started)
        plan.trace["empty_knowledge_base"] = True
        context = FusedContext(query=plan.query, route=plan.classification.label, trace=plan.trace)
        return self._end(plan, context)


def _ms(started: float, digits: int = 3) -> float:
    return round((time.perf_counter() - started) * 1000, digits)
