"""The unified retrieval engine through kb.retrieve / kb.aretrieve on the example documents."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from llama_kb import KnowledgeBase, QueryError, Route
from llama_kb import graph_model as gm
from llama_kb.config import RankingConfig
from llama_kb.errors import BackendError


def doc(docs_dir: Path, name: str) -> str:
    return (docs_dir / name).resolve().as_posix()


def test_semantic_route_fuses_vector_and_bm25(example_kb: KnowledgeBase, docs_dir: Path):
    context = example_kb.retrieve("Explain how interrupted runs are resumed", top_k=3)
    assert context.route is Route.SEMANTIC
    assert context.trace["classifier"]["method"] == "heuristic"
    assert "explain" in context.trace["classifier"]["reason"]
    top = context.unstructured[0]
    assert top.doc_id == doc(docs_dir, "ingestion-pipeline.md")
    assert set(top.ranks) <= {"vector", "bm25"} and top.ranks
    # facts come on every route; structural edges are plumbing, not answers
    assert all(not f.structural for f in context.structured_facts)


def test_factual_route_returns_graph_facts(example_kb: KnowledgeBase, docs_dir: Path):
    context = example_kb.retrieve(
        "What is the relationship between the Graph Updater and the Document Interpreter?",
        include_structural=True,
        max_facts=100,
    )
    assert context.route is Route.FACTUAL
    assert {"Graph Updater", "Document Interpreter"} <= set(context.entities)
    facts = {(f.subject, f.predicate, f.object) for f in context.structured_facts}
    assert ("Graph Updater", gm.MENTIONS, "Document Interpreter") in facts
    fact = next(f for f in context.structured_facts if f.subject == "Graph Updater")
    assert fact.source_ids and fact.path_cost <= 1.0
    assert context.unstructured[0].doc_id in {
        doc(docs_dir, "graph-updater.md"),
        doc(docs_dir, "document-interpreter.md"),
    }
    assert "graph" in context.unstructured[0].ranks


def test_facts_respect_the_cost_budget(example_kb: KnowledgeBase):
    query = "What is the relationship between the Graph Updater and the Document Interpreter?"

    def traversed(**options: object) -> list:
        context = example_kb.retrieve(query, include_structural=True, max_facts=100, **options)
        return [f for f in context.structured_facts if f.structural]

    near, far = traversed(max_cost=0.5), traversed(max_cost=1.0)
    assert near and all(f.path_cost <= 0.5 for f in near)
    assert len(far) >= len(near)
    assert all(f.path_cost == 0.0 for f in traversed(max_cost=0.0))
    assert len(traversed(max_nodes=1)) <= 1


def test_hybrid_route_refines_from_top_chunks(example_kb: KnowledgeBase, docs_dir: Path):
    context = example_kb.retrieve("Describe what the Vector Indexer does", top_k=4)
    assert context.route is Route.HYBRID
    refined = context.trace["refined_entities"]
    linked = [e["id"] for e in context.trace["linked_entities"]]
    assert refined and not set(refined) & set(linked)  # new seeds came from the chunks
    assert context.unstructured[0].doc_id == doc(docs_dir, "vector-indexer.md")
    assert context.structured_facts
    graph = context.trace["retrievers"]["graph"]["seeds"]
    assert graph["entities"] >= 1 and graph["hits"] >= 1


def test_route_override_and_trace(example_kb: KnowledgeBase):
    context = example_kb.retrieve("Vector Indexer", route="factual")
    assert context.route is Route.FACTUAL
    assert context.trace["classifier"]["method"] == "override"
    for key in ("linked_entities", "retrievers", "total_ms", "classifier"):
        assert key in context.trace


def test_fused_chunks_are_unique_and_best_first(example_kb: KnowledgeBase):
    for route in ("semantic", "factual", "hybrid"):
        context = example_kb.retrieve("Graph Updater relations weight", top_k=6, route=route)
        ids = [h.chunk_id for h in context.unstructured]
        scores = [h.score for h in context.unstructured]
        assert len(ids) == len(set(ids))
        assert scores == sorted(scores, reverse=True)
        facts = [(f.subject_id, f.predicate, f.object_id) for f in context.structured_facts]
        assert len(facts) == len(set(facts))


def test_to_dict_is_json_and_render_labels_both_kinds(example_kb: KnowledgeBase):
    context = example_kb.retrieve("Describe the Graph Updater and how it relates to owners")
    data = json.loads(json.dumps(context.to_dict()))
    assert data["route"] == context.route.value
    assert {"unstructured", "structured_facts", "entities", "trace"} <= set(data)
    rendered = context.render()
    assert "General description" in rendered and "Specific facts and relationships" in rendered


def test_min_score_and_filters(example_kb: KnowledgeBase, docs_dir: Path):
    target = doc(docs_dir, "team.txt")
    context = example_kb.retrieve("Who leads which team?", filters={"doc_id": target})
    assert context.unstructured and {h.doc_id for h in context.unstructured} == {target}
    high = example_kb.retrieve("Who leads which team?", min_score=1.0)
    assert all(h.score == 1.0 for h in high.unstructured)
    assert all(f.score == 1.0 for f in high.structured_facts)
    with pytest.raises(QueryError, match="min_score"):
        example_kb.retrieve("Who leads which team?", min_score=10.0)  # scores are in [0, 1]
    with pytest.raises(QueryError, match="unknown filter field"):
        example_kb.retrieve("anything", filters={"no_such_field": 1})


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"route": "telepathic"}, "unknown route"),
        ({"top_k": 0}, "top_k"),
        ({"top_k": -3}, "top_k"),
        ({"max_cost": -1}, "must not be negative"),
        ({"surprise": True}, "unknown retrieval option"),
        ({"filters": "doc_id=1"}, "filters must be a mapping"),
    ],
)
def test_invalid_options(example_kb: KnowledgeBase, options: dict, message: str):
    with pytest.raises(QueryError, match=message):
        example_kb.retrieve("Graph Updater", **options)


@pytest.mark.parametrize("query", ["", "  \n ", None])
def test_empty_query(example_kb: KnowledgeBase, query):
    with pytest.raises(QueryError):
        example_kb.retrieve(query)


def test_very_long_query_is_truncated_not_refused(example_kb: KnowledgeBase):
    context = example_kb.retrieve("Graph Updater " * 5000, top_k=2)
    assert len(context.query) <= 8000 and context.unstructured


@pytest.mark.parametrize(
    "query",
    [
        "MATCH (n) DETACH DELETE n",
        "'); DROP TABLE nodes; --",
        'Graph Updater"}) RETURN n //',
        ".*[(?<=]\\d+$^",
        "{$where: 'sleep(1000)'}",
    ],
)
def test_metacharacters_are_harmless(example_kb: KnowledgeBase, query: str):
    before = example_kb.stats()
    for route in ("semantic", "factual", "hybrid"):
        example_kb.retrieve(query, route=route)
    assert example_kb.stats() == before


def test_empty_knowledge_base(kb: KnowledgeBase):
    context = kb.retrieve("Who directed Sleep, My Love?")
    assert context.unstructured == [] and context.structured_facts == []
    assert context.trace["empty_knowledge_base"] is True


def test_knowledge_base_sees_new_documents_without_restart(
    example_kb: KnowledgeBase, tmp_path: Path
):
    example_kb.retrieve("warm the index")
    note = tmp_path / "zebra.md"
    note.write_text("# Zebra Protocol\n\nThe Zebra Protocol syncs the Graph Updater nightly.")
    example_kb.ingest(note)
    context = example_kb.retrieve("What is the Zebra Protocol?")
    assert context.unstructured[0].doc_id == note.resolve().as_posix()


async def test_async_matches_sync(example_kb: KnowledgeBase):
    query = "How is the Graph Updater related to the Document Interpreter?"
    sync = example_kb.retrieve(query)
    concurrent = await example_kb.aretrieve(query)
    assert [h.chunk_id for h in concurrent.unstructured] == [h.chunk_id for h in sync.unstructured]
    assert concurrent.structured_facts == sync.structured_facts


def _fail(name: str):
    def fail(*args, **kwargs):
        raise BackendError(f"{name} failed: connection refused")

    return fail


@pytest.fixture
def uncached(example_kb: KnowledgeBase) -> KnowledgeBase:
    """The example KB without its query cache: a backend failing after a first query must
    show, not the cached answer of the unchanged stores."""
    example_kb.engine.cache.size = 0
    return example_kb


def test_graph_failure_degrades_to_vector_results(uncached: KnowledgeBase, monkeypatch):
    example_kb = uncached
    query = "How is the Graph Updater related to the Document Interpreter?"
    example_kb.retrieve(query)
    monkeypatch.setattr(example_kb.graph, "traverse", _fail("traverse"))
    context = example_kb.retrieve(query, include_structural=True)
    assert context.unstructured and not any(f.structural for f in context.structured_facts)
    assert any(d.startswith("graph:") for d in context.degraded)
    with pytest.raises(BackendError, match="traverse failed"):
        example_kb.retrieve(query, include_structural=True, strict=True)


def test_traversal_is_skipped_when_it_could_only_reach_structural_edges(
    uncached: KnowledgeBase, monkeypatch
):
    query = "How is the Graph Updater related to the Document Interpreter?"
    index = uncached.engine.search_index
    assert not index.has_relations_besides(gm.STRUCTURAL_RELATIONS)
    monkeypatch.setattr(uncached.graph, "traverse", _fail("traverse"))
    assert not uncached.retrieve(query).degraded  # nothing to find: not read at all
    assert uncached.retrieve(query, include_structural=True).degraded  # wanted: read
    a, b = (e["id"] for e in uncached.retrieve(query).trace["linked_entities"][:2])
    uncached.graph.upsert_relations([gm.relation(a, "FEEDS", b, 0.5)])
    assert index.has_relations_besides(gm.STRUCTURAL_RELATIONS)
    assert any(d.startswith("graph:") for d in uncached.retrieve(query).degraded)


def test_vector_failure_degrades_to_graph_and_lexical(uncached: KnowledgeBase, monkeypatch):
    example_kb = uncached
    query = "How is the Graph Updater related to the Document Interpreter?"
    example_kb.retrieve(query)
    for method in ("query", "iter_chunks"):
        monkeypatch.setattr(example_kb.vectors, method, _fail(method))
    context = example_kb.retrieve(query)
    assert context.unstructured and context.structured_facts
    assert any(d.startswith("vector:") for d in context.degraded)
    assert all("vector" not in h.ranks for h in context.unstructured)
    with pytest.raises(BackendError):
        example_kb.retrieve(query, strict=True)


def test_vector_store_down_before_first_query(example_kb: KnowledgeBase, monkeypatch):
    # no query path reads the whole vector store any more: the graph file's own indexes answer
    monkeypatch.setattr(example_kb.vectors, "iter_chunks", _fail("iter_chunks"))
    monkeypatch.setattr(example_kb.vectors, "query", _fail("query"))
    context = example_kb.retrieve("Graph Updater")
    assert context.unstructured and context.unstructured[0].metadata["title"] == "Graph Updater"
    assert all("vector" not in h.ranks for h in context.unstructured)
    assert [d.split(":")[0] for d in context.degraded] == ["vector"]
    with pytest.raises(BackendError, match="query failed"):
        example_kb.retrieve("Graph Updater", strict=True)


def test_graph_store_down_degrades_to_dense(example_kb: KnowledgeBase, monkeypatch):
    def down() -> int:
        raise BackendError("graph store down")

    monkeypatch.setattr(example_kb.engine.search_index, "chunk_count", down)
    context = example_kb.retrieve("Graph Updater")
    assert context.unstructured and all(
        h.ranks == {"vector": i + 1} for i, h in enumerate(context.unstructured)
    )
    assert [d.split(":")[0] for d in context.degraded] == ["index"]


def test_misspelt_names_link_by_embedding_similarity(example_kb: KnowledgeBase, docs_dir: Path):
    context = example_kb.retrieve("What does the Vector Indexr relate to?")
    linked = context.trace["linked_entities"]
    assert [(e["name"], e["method"]) for e in linked] == [("Vector Indexer", "embedding")]
    assert linked[0]["similarity"] >= 0.85
    assert context.unstructured[0].doc_id == doc(docs_dir, "vector-indexer.md")
    # an exact match never goes through embeddings, and unrelated names do not link
    exact = example_kb.retrieve("What does the Vector Indexer relate to?")
    assert [e["method"] for e in exact.trace["linked_entities"]] == ["name"]
    assert example_kb.retrieve("What does Zanzibar relate to?").trace["linked_entities"] == []


def started_first(monkeypatch, first: tuple[object, str], then: tuple[object, str]) -> list[bool]:
    """Patch ``first`` (owner, attribute) to record that it started, and ``then`` to wait up
    to 5 s for that before it runs; the list gets, per call of ``then``, whether it had."""
    started = threading.Event()
    seen: list[bool] = []
    run_first, run_then = getattr(*first), getattr(*then)

    def recorded(*args, **kwargs):
        started.set()
        return run_first(*args, **kwargs)

    def waiting(*args, **kwargs):
        seen.append(started.wait(timeout=5))
        started.clear()
        return run_then(*args, **kwargs)

    monkeypatch.setattr(*first, recorded)
    monkeypatch.setattr(*then, waiting)
    return seen


def test_the_dense_step_starts_before_the_query_is_linked(example_kb, monkeypatch) -> None:
    from llama_kb.retrieval import engine as engine_module

    engine = example_kb.engine
    engine.cache.clear()
    seen = started_first(monkeypatch, (engine, "_dense"), (engine_module, "link_query"))
    context = example_kb.retrieve("Who directed the film about Lyon?", top_k=3)
    assert seen == [True]
    assert context.unstructured and context.trace["retrievers"]["vector"]["hits"] > 0


def test_the_lexical_step_starts_before_a_fuzzy_name_lookup(example_kb, monkeypatch) -> None:
    engine = example_kb.engine
    engine.cache.clear()
    seen = started_first(monkeypatch, (engine, "_lexical"), (engine._fuzzy, "link"))
    context = example_kb.retrieve("What does the Vector Indexr relate to?")
    assert seen == [True]  # the lexical search ran while the misspelt name was looked up
    assert context.trace["linked_entities"][0]["name"] == "Vector Indexer"
    assert context.trace["retrievers"]["bm25"]["hits"] > 0
    exact = example_kb.retrieve("What does the Vector Indexer relate to?")
    assert seen == [True] and exact.trace["retrievers"]["bm25"]["hits"] > 0  # no fuzzy lookup


def test_spans_are_embedded_while_their_names_are_looked_up(example_kb, monkeypatch) -> None:
    from llama_kb.stores.sqlite_search import SQLiteSearchIndex

    class Recorded:  # the linker's embedding, with a patchable batch call
        def __init__(self, embedding) -> None:
            self.get_text_embedding_batch = embedding.get_text_embedding_batch

    engine = example_kb.engine
    engine.cache.clear()
    linker = engine._fuzzy
    monkeypatch.setattr(linker, "embedding", Recorded(linker.embedding))
    first = (linker.embedding, "get_text_embedding_batch")
    seen = started_first(monkeypatch, first, (SQLiteSearchIndex, "similar_names"))
    context = example_kb.retrieve("What does the Vector Indexr relate to?")
    assert seen == [True]  # the spans' embedding had started when the lookup ran
    assert context.trace["linked_entities"][0]["name"] == "Vector Indexer"


def test_the_walk_read_ahead_changes_no_result(uncached: KnowledgeBase, monkeypatch):
    from llama_kb.retrieval import ranking

    queries = ["How is the Graph Updater related to the Document Interpreter?", "Graph Updater"]
    # Without the name hop, which starts from the passage the read-ahead ranks first.
    monkeypatch.setattr(uncached.engine, "ranking", RankingConfig(name_hop_weight=0))
    ahead = [uncached.retrieve(q) for q in queries]
    assert all("walk_ahead" in [s["name"] for s in c.trace["stages"]] for c in ahead)
    monkeypatch.setattr(ranking, "walk_ahead", lambda *args: None)
    plain = [uncached.retrieve(q) for q in queries]
    assert all("walk_ahead" not in [s["name"] for s in c.trace["stages"]] for c in plain)
    for read_ahead, walked_once in zip(ahead, plain, strict=True):
        assert [(h.chunk_id, h.score) for h in read_ahead.unstructured] == [
            (h.chunk_id, h.score) for h in walked_once.unstructured
        ]


def test_one_failure_met_by_several_steps_is_named_once(uncached: KnowledgeBase, monkeypatch):
    from llama_kb.retrieval.options import resolve_options
    from llama_kb.retrieval.plan import QueryPlan

    plan = QueryPlan("q", resolve_options(uncached.engine.defaults), 0.0)
    error = BackendError("graph store down")
    plan.degrade("graph", error)
    plan.degrade("graph", error)
    plan.degrade("vector", error)
    assert plan.degraded == [
        "graph: BackendError: graph store down",
        "vector: BackendError: graph store down",
    ]
