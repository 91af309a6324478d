"""The debug view of facts: relevance parts add up to each score, and every drop has a reason."""

from __future__ import annotations

import pytest

from llama_kb import KnowledgeBase
from llama_kb.config import QueryOptions, RankingConfig
from llama_kb.retrieval import explain_facts
from llama_kb.retrieval.explain import Explanation
from llama_kb.retrieval.fact_ranking import fact_key, fact_weights, weighted_parts
from llama_kb.retrieval.payload import Fact

pytest.importorskip("spacy")  # typed facts come from the sentence extractor

QUESTION = "What does the component that the Vector Indexer depends on do?"


def test_fact_parts_recompute_every_score(example_kb: KnowledgeBase):
    explanation = example_kb.explain(QUESTION, top_k=3, max_facts=3)
    facts = explanation.facts
    assert len(facts) > 3 and explanation.fact_formula.startswith("fact score = 0.3*proximity")
    weights = fact_weights(example_kb.engine.ranking)
    for row in facts:
        assert row.recomputed() == row.score
        raw = (row.proximity, row.lexical, row.embedding)
        assert all(0.0 <= value <= 1.0 for value in raw)
        assert sum(weighted_parts(weights, raw)) == pytest.approx(row.score, abs=2e-6)
    assert [row.rank for row in facts] == list(range(1, len(facts) + 1))
    assert [row.score for row in facts] == sorted((row.score for row in facts), reverse=True)
    # the facts returned are the first candidates, in order, with the same scores
    returned = explanation.context.structured_facts
    kept = [row for row in facts if row.final_rank is not None]
    assert [(r.subject, r.predicate, r.object, r.score) for r in kept] == [
        (f.subject, f.predicate, f.object, f.score) for f in returned
    ]
    assert [r.final_rank for r in kept] == [1, 2, 3] and type(returned) is list
    plain = example_kb.retrieve(QUESTION, top_k=3, max_facts=3)
    assert plain.structured_facts == returned and "explain" not in plain.trace


def test_max_facts_cut_and_min_score_drop_are_reported(example_kb: KnowledgeBase):
    full = example_kb.explain(QUESTION, max_facts=3).facts
    assert [r.dropped for r in full[:3]] == [None] * 3
    assert {r.dropped for r in full[3:]} == {"max_facts"}
    threshold = full[1].score  # min_score also drops passages, so the facts move a little
    explanation = example_kb.explain(QUESTION, max_facts=3, min_score=threshold)
    returned = explanation.context.structured_facts
    assert 1 <= len(returned) <= 3 and all(f.score >= threshold for f in returned)
    for row in explanation.facts:
        if row.score < threshold:
            assert row.dropped == "min_score" and row.final_rank is None
        else:
            assert row.dropped in {None, "max_facts"}
    assert any(row.dropped == "min_score" for row in explanation.facts)
    kept = [row.final_rank for row in explanation.facts if row.final_rank is not None]
    assert kept == list(range(1, len(returned) + 1))
    table = explanation.table()
    assert "fact score =" in table and "proximity" in table and "min_score" in table


def test_a_duplicate_triple_is_reported_as_such():
    weights = fact_weights(RankingConfig())
    best = Fact("Vector Indexer", "store in", "Chroma", "a", "b", score=0.6)
    again = Fact("vector indexer", "store in", "Chroma", "a", "b", score=0.4)
    other = Fact("Vector Indexer", "embed with", "MiniLM", "a", "c", score=0.3)
    raw = {id(best): (1.0, 0.5, 0.4), id(again): (0.5, 0.5, 0.4), id(other): (1.0, 0.0, 0.0)}
    ranked = [(f, raw[id(f)], weighted_parts(weights, raw[id(f)])) for f in (best, again, other)]
    result = explain_facts.explained(
        [best], ranked, fact_key, QueryOptions(max_facts=1, explain=True), None, weights
    )
    rows = result.explanation["facts"]["candidates"]
    assert [row["dropped"] for row in rows] == [None, "duplicate", "max_facts"]
    assert list(result) == [best] and "query_embedding" not in result.explanation


def test_query_embedding_only_when_asked(example_kb: KnowledgeBase):
    assert example_kb.explain(QUESTION).query_embedding is None
    explanation = example_kb.explain(QUESTION, include_embedding=True)
    vector = example_kb.embedding.get_query_embedding(QUESTION)
    assert explanation.query_embedding == pytest.approx(vector, abs=1e-6)
    # include_embedding turns explain on (any face, any route)
    context = example_kb.retrieve(QUESTION, include_embedding=True, route="semantic")
    again = Explanation.from_context(context)
    assert again.candidates and again.facts and len(again.query_embedding or []) == len(vector)
