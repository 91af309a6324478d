"""Facts ranked by relevance, one score scale, and the bounds of every face."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from llama_index.core.base.embeddings.base import BaseEmbedding

from llama_kb import KnowledgeBase
from llama_kb.config import RankingConfig
from llama_kb.retrieval.fact_ranking import (
    FactRanker,
    FactTable,
    fact_weights,
    weighted_parts,
)
from llama_kb.retrieval.payload import Fact
from llama_kb.types import SearchHit

pytest.importorskip("spacy")

TECHNICAL = Path(__file__).resolve().parents[2] / "examples" / "technical"
QUESTION = "What does the ingestion pipeline depend on?"
ROUTES = ("semantic", "factual", "hybrid")


@pytest.fixture(scope="module")
def tech_kb(
    tmp_path_factory: pytest.TempPathFactory, embedding: BaseEmbedding
) -> Iterator[KnowledgeBase]:
    """The README's small technical corpus (markdown prose, front matter and a table)."""
    with KnowledgeBase.open(tmp_path_factory.mktemp("tech") / "kb", embedding=embedding) as kb:
        assert kb.ingest(TECHNICAL).ok
        yield kb


def test_readme_example_typed_fact_with_evidence_comes_first(tech_kb: KnowledgeBase):
    context = tech_kb.retrieve(QUESTION)
    first = context.structured_facts[0]
    assert (first.subject.lower(), first.predicate, first.object) == (
        "ingestion pipeline",
        "depend on",
        "document interpreter",
    )
    assert first.evidence == "The ingestion pipeline depends on the document interpreter."
    assert first.extractor == "pattern" and first.doc_id and first.chunk_id
    assert not any(f.structural for f in context.structured_facts)


def test_table_cells_are_facts_with_their_row(tech_kb: KnowledgeBase):
    context = tech_kb.retrieve("Which language is the vector index written in?", max_facts=50)
    facts = {(f.subject, f.predicate, f.object) for f in context.structured_facts}
    assert ("Vector index", "language", "Rust") in facts


def test_structural_edges_only_when_asked(tech_kb: KnowledgeBase):
    query = "How is the Document interpreter related to the Ingestion pipeline?"
    plain = tech_kb.retrieve(query, route="factual", max_facts=100)
    assert plain.structured_facts and not any(f.structural for f in plain.structured_facts)
    full = tech_kb.retrieve(query, route="factual", max_facts=100, include_structural=True)
    assert any(f.structural for f in full.structured_facts)


@pytest.mark.parametrize("route", ROUTES)
def test_one_score_scale_and_min_score_on_every_route(tech_kb: KnowledgeBase, route: str):
    context = tech_kb.retrieve(QUESTION, route=route, top_k=5, max_facts=10)
    for items in (context.unstructured, context.structured_facts):
        scores = [item.score for item in items]
        assert scores and all(0.0 <= s <= 1.0 for s in scores)
        assert scores == sorted(scores, reverse=True)
    threshold = 0.5
    kept = tech_kb.retrieve(QUESTION, route=route, min_score=threshold, max_facts=10)
    assert all(h.score >= threshold for h in kept.unstructured)
    assert all(f.score >= threshold for f in kept.structured_facts)
    assert len(kept.unstructured) == sum(h.score >= threshold for h in context.unstructured)


def test_top_k_bounds_passages_and_max_facts_bounds_facts(tech_kb: KnowledgeBase):
    context = tech_kb.retrieve(QUESTION, top_k=1, max_facts=2)
    assert len(context.unstructured) == 1 and len(context.structured_facts) == 2


def test_langchain_face_bounds_and_min_score(tech_kb: KnowledgeBase):
    from langchain_kb import UnifiedKBRetriever

    retriever = UnifiedKBRetriever(
        kb=tech_kb, k=2, include_facts=True, search_kwargs={"max_facts": 3}
    )
    docs = retriever.invoke(QUESTION)
    chunks = [d for d in docs if d.metadata["kind"] == "chunk"]
    facts = [d for d in docs if d.metadata["kind"] == "facts"]
    assert len(chunks) == 2 and len(facts) == 1 and len(facts[0].metadata["facts"]) == 3
    assert "depend on" in facts[0].page_content.splitlines()[0]
    assert len(UnifiedKBRetriever(kb=tech_kb, k=2).invoke(QUESTION)) == 2
    strict = UnifiedKBRetriever(
        kb=tech_kb, k=5, include_facts=True, search_kwargs={"min_score": 0.6}
    ).invoke(QUESTION)
    for doc in strict:
        scores = [f["score"] for f in doc.metadata.get("facts", [])] or [doc.metadata["score"]]
        assert min(scores) >= 0.6


def test_llamaindex_face_bounds_and_min_score(tech_kb: KnowledgeBase):
    nodes = tech_kb.as_retriever(similarity_top_k=2, max_facts=3).retrieve(QUESTION)
    kinds = [n.node.metadata["kind"] for n in nodes]
    assert kinds.count("chunk") == 2 and kinds.count("fact") == 3
    assert all(0.0 <= (n.score or 0.0) <= 1.0 for n in nodes)
    assert nodes[2].node.metadata["evidence"].startswith("The ingestion pipeline depends")
    strict = tech_kb.as_retriever(top_k=5, min_score=0.6).retrieve(QUESTION)
    assert all((n.score or 0.0) >= 0.6 for n in strict)


def _fact(subject: str, predicate: str, obj: str, doc: str) -> Fact:
    return Fact(
        subject=subject,
        predicate=predicate,
        object=obj,
        subject_id=f"entity:{subject}",
        object_id=f"entity:{obj}",
        chunk_id=f"{doc}#0",
        doc_id=doc,
        extractor="pattern",
    )


def test_ranker_prefers_the_relation_the_question_asks_about(embedding: BaseEmbedding):
    facts = [
        _fact("George Stevens", "born", "December 18, 1904", "stevens"),
        _fact("George Stevens", "died", "March 8, 1975", "stevens"),
        _fact("Sleep, My Love", "direct by", "Douglas Sirk", "sleep"),
        _fact("Douglas Sirk", "died", "14 January 1987", "sirk"),
    ]
    table = _table(facts)
    ranker = FactRanker(embedding, RankingConfig())
    query = "When did George Stevens die?"
    with_parts = ranker.rank(
        query,
        embedding.get_query_embedding(query),
        table,
        {"doc:stevens": "George Stevens"},
        [SearchHit("sirk#0", "sirk", "Douglas Sirk ...", 0.4, {"title": "Douglas Sirk"})],
    )
    ranked = [fact for fact, _ in with_parts]
    assert (ranked[0].subject, ranked[0].predicate) == ("George Stevens", "died")
    order = [(f.subject, f.predicate) for f in ranked]
    # the question's entity, other relation, before an unrelated relation of a passage's entity
    assert order.index(("George Stevens", "born")) < order.index(("Sleep, My Love", "direct by"))
    assert all(0.0 <= f.score <= 1.0 for f in ranked)
    # the raw parts (proximity, lexical, embedding) give the score, and the question's own
    # entity is at proximity 1
    weights = fact_weights(ranker.ranking)
    assert all(f.score == round(sum(weighted_parts(weights, raw)), 6) for f, raw in with_parts)
    assert with_parts[0][1][0] == 1.0


def test_a_fact_between_names_beats_one_that_only_describes(embedding: BaseEmbedding):
    # "film direction" repeats the question's words but answers nothing
    facts = [
        _fact("Douglas Sirk", "direct", "film direction", "sirk"),
        _fact("Douglas Sirk", "direct", "Sleep, My Love", "sirk"),
    ]
    ranker = FactRanker(embedding, RankingConfig())
    query = "Which film did Douglas Sirk direct?"
    ranked = ranker.rank(
        query, embedding.get_query_embedding(query), _table(facts), {"doc:sirk": "Douglas Sirk"}, []
    )
    assert [f.object for f, _ in ranked] == ["Sleep, My Love", "film direction"]
    plain = FactRanker(embedding, RankingConfig(description_factor=1.0))
    unscaled = plain.rank(
        query, embedding.get_query_embedding(query), _table(facts), {"doc:sirk": "Douglas Sirk"}, []
    )
    assert unscaled[0][0].object == "film direction"


def test_lexical_match_counts_the_names_of_the_question(embedding: BaseEmbedding):
    # same relation phrase and proximity: the fact naming the asked-about entity wins
    facts = [
        _fact("Abe Meyer", "composer of", "Café Music", "hit"),
        _fact("Before Sunset", "composer of", "Julie Delpy", "hit"),
    ]
    ranker = FactRanker(embedding, RankingConfig())
    query = "Who is the composer of film Before Sunset?"
    hit = SearchHit("hit#0", "hit", "...", 0.9, {"title": "Soundtracks"})
    ranked = ranker.rank(query, embedding.get_query_embedding(query), _table(facts), {}, [hit])
    assert ranked[0][0].subject == "Before Sunset"


def _table(facts: list[Fact]) -> FactTable:
    from llama_kb import graph_model as gm
    from llama_kb.types import TextChunk

    nodes = [
        gm.fact_node(
            f.subject,
            f.predicate,
            f.object,
            TextChunk(str(f.chunk_id), str(f.doc_id), "text", 0, "h", {}),
            "evidence",
            "pattern",
        )
        for f in facts
    ]
    return FactTable.from_properties(node.properties for node in nodes)
