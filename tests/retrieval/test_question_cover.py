"""The question-cover reordering of described queries: what it moves, what it leaves, and that
a knowledge base's answers to a described question agree whatever ``top_k`` asks for."""

from __future__ import annotations

import time

from llama_index.core import Document

from llama_kb import KBConfig, KnowledgeBase
from llama_kb.config import QueryOptions, RankingConfig
from llama_kb.retrieval import question_cover
from llama_kb.retrieval.plan import QueryPlan
from llama_kb.types import SearchHit

QUESTION = "In which country was the composer of the orchestral suite about a harbour born?"


def hit(n: int, text: str, title: str | None = None) -> SearchHit:
    metadata = {} if title is None else {"title": title}
    return SearchHit(f"c{n}", f"d{n}", text, 1.0 - n / 20, metadata, {"vector": n})


POOL = [
    hit(1, "The Harbour Suite is an orchestral work by its composer, Ilse Marr."),
    hit(2, "The Harbour Suite premiered in 1931; its composer conducted."),
    hit(3, "Ilse Marr was born in 1899.", title="Ilse Marr, country Norway"),
    hit(4, "Orchestras in the harbour town play a suite each summer."),
]


def plan(query: str) -> QueryPlan:
    return QueryPlan(query, QueryOptions(), time.perf_counter())


def test_only_described_queries_are_reordered_and_a_zero_weight_turns_it_off() -> None:
    assert question_cover.applies("dense", RankingConfig())
    assert not question_cover.applies("named", RankingConfig())
    assert not question_cover.applies(None, RankingConfig())
    assert not question_cover.applies("dense", RankingConfig(question_cover_weight=0))


def test_a_passage_with_the_words_the_places_above_lack_rises() -> None:
    query = plan(QUESTION)
    out = question_cover.apply(query, list(POOL), RankingConfig(), 3)
    # c2 repeats what c1 covers; c3 (through its title) holds "country" and "born"
    assert [h.chunk_id for h in out] == ["c1", "c3", "c2"]
    assert [h.score for h in out] == [h.score for h in POOL[:3]]  # scores stay by place
    assert out[1].text == POOL[2].text and out[1].ranks == POOL[2].ranks
    [stage] = [s for s in query.stages.to_list() if s["name"] == "question_cover"]
    assert (stage["out"], stage["moved"]) == (3, 2)


def test_without_new_words_the_order_stays() -> None:
    same = [hit(n, "The Harbour Suite.") for n in range(1, 5)]
    out = question_cover.apply(plan(QUESTION), same, RankingConfig(), 4)
    assert [h.chunk_id for h in out] == ["c1", "c2", "c3", "c4"]


def test_the_weight_sets_how_far_a_covering_passage_climbs() -> None:
    small = RankingConfig(question_cover_weight=0.01)
    assert question_cover.cover_order(QUESTION, POOL, small, 4) == [0, 1, 2, 3]
    large = RankingConfig(question_cover_weight=10)
    assert question_cover.cover_order(QUESTION, POOL, large, 2)[0] in (0, 2)


def test_a_knowledge_base_gives_the_same_first_passages_for_any_top_k(tmp_path, embedding) -> None:
    config = KBConfig(cache_size=0)
    with KnowledgeBase.open(tmp_path / "kb", embedding=embedding, config=config) as kb:
        kb.add_documents(
            [Document(text=h.text, metadata={"title": h.metadata.get("title", "")}) for h in POOL]
            + [Document(text=f"Harbour note {n}: the suite was played again.") for n in range(8)]
        )
        few = kb.retrieve(QUESTION, top_k=3)
        many = kb.retrieve(QUESTION, top_k=10)
        assert few.trace["retrievers"]["bridge"]["search"] == "dense"
        [stage] = [s for s in many.trace["stages"] if s["name"] == "question_cover"]
        assert stage["moved"] > 0  # the reordering changed something here
        assert [h.chunk_id for h in few.unstructured] == [h.chunk_id for h in many.unstructured[:3]]
        scores = [h.score for h in many.unstructured]
        assert scores == sorted(scores, reverse=True) and all(0 <= s <= 1 for s in scores)
