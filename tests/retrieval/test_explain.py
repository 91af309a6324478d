"""The debug view: score parts add up, and every drop is reported with its reason."""

from __future__ import annotations

import pytest

from llama_kb import KnowledgeBase
from llama_kb.retrieval.explain import GRAPH_FORMULA, SEMANTIC_FORMULA, Explanation

FACTUAL = "How is the Graph Updater related to the Document Interpreter?"


@pytest.mark.parametrize(
    ("route", "formula"), [("semantic", SEMANTIC_FORMULA), ("factual", GRAPH_FORMULA)]
)
def test_parts_recompute_every_fused_score(example_kb: KnowledgeBase, route: str, formula: str):
    explanation = example_kb.explain(FACTUAL, route=route, top_k=3)
    assert explanation.formula == formula
    scored = [c for c in explanation.candidates if c.fused is not None]
    assert len(scored) > 3
    for candidate in scored:
        assert candidate.recomputed() == pytest.approx(candidate.fused, rel=1e-9, abs=1e-12)
    # the returned chunks are the first candidates, with the scores retrieve() gives them
    returned = explanation.context.unstructured
    assert [c.chunk_id for c in explanation.candidates[:3]] == [h.chunk_id for h in returned]
    assert [c.fused for c in explanation.candidates[:3]] == [h.score for h in returned]
    assert [c.final_rank for c in explanation.candidates[:3]] == [1, 2, 3]
    plain = example_kb.retrieve(FACTUAL, route=route, top_k=3)
    assert [h.chunk_id for h in plain.unstructured] == [h.chunk_id for h in returned]


def test_semantic_parts_are_reciprocal_ranks(example_kb: KnowledgeBase):
    rrf_k = example_kb.engine.ranking.rrf_k
    explanation = example_kb.explain("Describe the Vector Indexer", route="semantic")
    scale = explanation.scale  # fused scores are in [0, 1]: RRF over its best, 2/(rrf_k + 1)
    assert scale == pytest.approx(2 / (rrf_k + 1))
    for c in explanation.candidates:
        if c.fused is None:
            continue
        expected = {}
        if c.dense_rank is not None and "dense" in c.parts and c.parts["dense"]:
            expected["dense"] = 1 / (rrf_k + c.dense_rank) / scale
        if c.parts.get("lexical"):
            expected["lexical"] = 1 / (rrf_k + c.lexical_rank) / scale
        assert {k: v for k, v in c.parts.items() if v} == pytest.approx(expected)


def test_top_k_cut_and_min_score_drop_are_reported(example_kb: KnowledgeBase):
    full = example_kb.explain(FACTUAL, top_k=3)
    threshold = (full.candidates[1].fused + full.candidates[2].fused) / 2
    explanation = example_kb.explain(FACTUAL, top_k=3, min_score=threshold)
    fates = [(c.final_rank, c.dropped) for c in explanation.candidates]
    assert fates[:3] == [(1, None), (2, None), (None, "min_score")]
    assert {d for _, d in fates[3:]} == {"top_k"}
    assert all(c.fused_rank > 3 for c in explanation.candidates[3:] if c.fused_rank)
    assert len(explanation.context.unstructured) == 2
    table = explanation.table()
    assert "min_score" in table and "top_k" in table


def test_filtered_candidates_are_reported(example_kb: KnowledgeBase):
    target = example_kb.retrieve("Graph Updater", top_k=1).unstructured[0].doc_id
    explanation = example_kb.explain("Who owns the Graph Updater?", filters={"doc_id": target})
    dropped = {c.dropped for c in explanation.candidates if c.doc_id != target}
    assert dropped == {"filtered"}
    assert all(c.doc_id == target for c in explanation.candidates if c.final_rank)


def test_faces_carry_the_explanation(example_kb: KnowledgeBase):
    from langchain_kb import UnifiedKBRetriever

    docs = UnifiedKBRetriever(kb=example_kb, k=2, include_facts=False).invoke(FACTUAL, explain=True)
    assert [d.metadata["explain"]["final_rank"] for d in docs] == [1, 2]
    nodes = example_kb.as_retriever(top_k=2, include_facts=False, explain=True).retrieve(FACTUAL)
    part = nodes[0].node.metadata["explain"]
    assert sum(part["parts"].values()) == pytest.approx(nodes[0].score)
    assert "explain" not in example_kb.retrieve(FACTUAL).trace


def test_explanation_round_trips_through_the_trace(example_kb: KnowledgeBase):
    context = example_kb.retrieve(FACTUAL, explain=True)
    again = Explanation.from_context(context)
    assert again.to_dict() == context.to_dict()["trace"]["explain"]
