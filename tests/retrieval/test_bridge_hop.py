"""The second dense hop of described queries: what it moves, what it never moves, and whom it
lets see what."""

from __future__ import annotations

import threading
import time

import pytest
from llama_index.core import Document

from llama_kb import KBConfig, KnowledgeBase
from llama_kb.background import Pending
from llama_kb.config import QueryOptions, RankingConfig
from llama_kb.retrieval import bridge_hop
from llama_kb.retrieval.plan import QueryPlan
from llama_kb.types import SearchHit

RANKING = RankingConfig(
    bridge_weight=0.5, bridge_keep=2, bridge_depth=10, bridge_rrf_k=1.0, bridge_names=1
)


def plan(query: str, surfaces: list[str]) -> QueryPlan:
    made = QueryPlan(query, QueryOptions(), time.perf_counter())
    made.linked_surfaces = list(surfaces)
    return made


def hit(n: int, score: float = 0.5) -> SearchHit:
    return SearchHit(f"c{n}", f"d{n}", f"passage {n}", score, {}, {"vector": n})


FUSED = [hit(n, 1.0 - n / 20) for n in range(1, 11)]  # c1 (0.95) ... c10 (0.5)


def test_described_and_single_name_queries_hop_the_rest_not() -> None:
    described = plan("who founded the society that publishes the journal", [])
    assert bridge_hop.kind(described, RANKING) == "dense"
    single = plan("In what county is the city where Adam Smith was born?", ["Adam Smith"])
    assert bridge_hop.kind(single, RANKING) == "named"
    assert bridge_hop.kind(single, RankingConfig()) is None  # off by default
    assert bridge_hop.kind(plan("the Adam Smith", ["Adam Smith"]), RANKING) is None  # no more
    named = plan("Who was born first, Adam Smith or Karl Marx?", ["Adam Smith", "Karl Marx"])
    assert bridge_hop.kind(named, RANKING) is None
    off = RANKING.model_copy(update={"bridge_weight": 0.0})
    assert bridge_hop.kind(described, off) is None and bridge_hop.kind(single, off) is None


def must_not_fail(backend: str, e: Exception) -> None:
    raise AssertionError(f"{backend}: {e}")


def test_the_top_stays_a_shared_passage_rises_and_a_new_one_enters() -> None:
    asked: list[tuple[str, int]] = []

    def search(text: str, n: int) -> list[SearchHit]:
        asked.append((text, n))
        return [hit(1), hit(42), hit(9)]  # c1 is fixed at the top: never counted twice

    query = plan("who founded the society that publishes the journal", [])
    out = bridge_hop.apply(query, list(FUSED), RANKING, 6, must_not_fail, "dense", search)
    assert asked == [(f"{query.query} 1 passage", 12)]  # not started before: from the best
    assert [h.chunk_id for h in out[:2]] == ["c1", "c2"]
    # rest 1/(1 + rank) + hop 0.5/(1 + rank): c3 1, c4 .5, c42 .5, c9 1/7 + .25, c5 1/3
    assert [h.chunk_id for h in out] == ["c1", "c2", "c3", "c4", "c42", "c9"]
    assert out[4].ranks == {"vector": 42, "bridge": 1}
    assert out[5].ranks == {"vector": 9, "bridge": 2}
    assert [h.score for h in out] == [h.score for h in FUSED[:6]]  # fused scores by position
    bridge = query.trace["retrievers"]["bridge"]
    assert (bridge["from"], bridge["search"], bridge["added"]) == ("c1", "dense", 2)


def test_by_default_a_described_hop_can_take_second_place_a_named_one_cannot() -> None:
    def search(text: str, n: int) -> list[SearchHit]:
        return [hit(42), hit(43)]

    defaults = RankingConfig(bridge_names=1)
    described = plan("who founded the society that publishes the journal", [])
    out = bridge_hop.apply(described, list(FUSED), defaults, 4, must_not_fail, "dense", search)
    # below c1: c2 1/2, c42 1.2/2, c3 1/3, c43 1.2/3
    assert [h.chunk_id for h in out] == ["c1", "c42", "c2", "c43"]
    named = plan("In what county is the city where Adam Smith was born?", ["Adam Smith"])
    out = bridge_hop.apply(named, list(FUSED), defaults, 6, must_not_fail, "named", search)
    # below c1 and c2: c3 1/2, c42 0.8/2, c4 1/3, c43 0.8/3, c5 1/4
    assert [h.chunk_id for h in out] == ["c1", "c2", "c3", "c42", "c4", "c43"]


def test_the_hop_embeds_the_words_of_the_best_passage_the_question_lacks_names_first() -> None:
    asked: list[str] = []

    def search(text: str, n: int) -> list[SearchHit]:
        asked.append(text)
        return []

    best = SearchHit(
        "c1",
        "d1",
        "The Society publishes the Journal of Trade; the society was founded in 1851 by the "
        "(Royal) Guild of Weavers in old Bristol, and the guild still funds it. " * 5,
        0.9,
        {},
        {},
    )
    query = plan("who founded the society that publishes the journal", [])
    seven = RANKING.model_copy(update={"bridge_words": 7})
    bridge_hop.apply(query, [best, *FUSED[1:]], seven, 6, must_not_fail, "dense", search)
    # question words, stopwords and repeats left out; names (and numbers) before other words
    assert asked == [f"{query.query} Trade; 1851 (Royal) Guild Weavers Bristol, old"]
    text = bridge_hop.bridge_text("who founded it", best.text, 100)
    assert text.split()[-3:] == ["old", "still", "funds"]
    assert bridge_hop.bridge_text("society journal trade", "the Society of the Journal", 5) == ""


def test_a_named_hop_embeds_the_question_less_its_names() -> None:
    asked: list[str] = []

    def search(text: str, n: int) -> list[SearchHit]:
        asked.append(text)
        return []

    query = plan("In what county is the city where adam smith was born?", ["Adam Smith"])
    best = SearchHit("c1", "d1", "Adam Smith was born in Kirkcaldy, Fife.", 0.9, {}, {})
    bridge_hop.apply(query, [best, *FUSED[1:]], RANKING, 6, must_not_fail, "named", search)
    assert asked == ["In what county is the city where was born? Kirkcaldy, Fife."]
    assert query.trace["retrievers"]["bridge"]["search"] == "named"
    longest_first = bridge_hop.without_names("Smith of Adam Smith Hall", ["Smith", "Adam Smith"])
    assert longest_first == "of Hall"
    spliced = bridge_hop.without_names("Who was A.B. (born 1900)?", ["A.B. (born", ""])
    assert spliced == "Who was 1900)?"  # a name is matched as text, never as a pattern


def test_a_hop_already_started_is_waited_for_not_searched_again() -> None:
    def search(text: str, n: int) -> list[SearchHit]:
        raise AssertionError("searched again")

    query = plan("In what county is the city where Adam Smith was born?", ["Adam Smith"])
    query.hop = Pending(lambda: [hit(7)])
    out = bridge_hop.apply(query, list(FUSED), RANKING, 6, must_not_fail, "named", search)
    assert next(h for h in out if h.chunk_id == "c7").ranks["bridge"] == 1


def test_a_failing_hop_leaves_the_fused_ranking() -> None:
    errors: list[str] = []

    def broken(text: str, n: int) -> list[SearchHit]:
        raise RuntimeError("vector store down")

    def degrade(backend: str, e: Exception) -> None:
        errors.append(f"{backend}: {e}")

    query = plan("who founded the society that publishes the journal", [])
    out = bridge_hop.apply(query, list(FUSED), RANKING, 3, degrade, "dense", broken)
    assert out == FUSED[:3] and errors == ["bridge: vector store down"]
    assert bridge_hop.apply(query, [], RANKING, 3, degrade, "dense", broken) == []


@pytest.fixture
def journal_kb(tmp_path, embedding):
    with KnowledgeBase.open(
        tmp_path / "kb", embedding=embedding, config=KBConfig(cache_size=0)
    ) as kb:
        kb.add_documents(
            [
                Document(text="The Quarterly of Tidal Studies is published by the Lumen Society."),
                Document(text="Tidal studies measure how the sea rises and falls each day."),
                Document(text="Journals publish peer-reviewed articles several times a year."),
            ]
        )
        kb.add_documents(
            [Document(text="The Lumen Society's first president was Ada Ferrow, in 1901.")],
            access="user:bob",
        )
        yield kb


class HeldQuestion:
    """Embeds as ``inner``, but holds the question's embedding until another text (the
    hop's) is embedded, or 10 s pass; records the order."""

    def __init__(self, inner, question: str) -> None:
        self.inner, self.question = inner, question
        self.other_started = threading.Event()
        self.order: list[str] = []

    def get_query_embedding(self, text: str) -> list[float]:
        if text == self.question:
            self.other_started.wait(10)
        else:
            self.other_started.set()
        self.order.append("question" if text == self.question else "hop")
        return self.inner.get_query_embedding(text)


def test_the_hop_searches_while_the_questions_own_dense_search_runs(journal_kb) -> None:
    question = "Who was the first president of the society that publishes the tidal quarterly?"
    held = HeldQuestion(journal_kb.engine.embedding, question)
    journal_kb.engine.embedding = held
    found = journal_kb.retrieve(question, top_k=4)
    assert held.order == ["hop", "question"]  # the hop did not wait for the dense search
    # it started from the best passage without dense hits: the lexical and graph ranking's
    quarterly = next(h for h in found.unstructured if "Quarterly" in h.text)
    assert found.trace["retrievers"]["bridge"]["from"] == quarterly.chunk_id
    assert found.trace["retrievers"]["bridge"]["search"] == "dense"
    assert "bridge_seed" in [stage["name"] for stage in found.trace["stages"]]


def test_the_hop_runs_for_described_queries_and_respects_access(journal_kb) -> None:
    question = "Who was the first president of the society that publishes the tidal quarterly?"
    anonymous = journal_kb.retrieve(question, top_k=4)
    assert "bridge" in anonymous.trace["retrievers"]
    assert all("Ferrow" not in h.text for h in anonymous.unstructured)
    bob = journal_kb.retrieve(question, top_k=4, principal="bob")
    assert any("Ferrow" in h.text for h in bob.unstructured)
    scores = [h.score for h in bob.unstructured]
    assert scores == sorted(scores, reverse=True) and all(0 <= s <= 1 for s in scores)


def test_a_query_naming_one_thing_hops_from_its_page_within_access(tmp_path, embedding) -> None:
    def page(title: str, text: str) -> Document:
        return Document(text=text, metadata={"title": title})

    config = KBConfig(cache_size=0, ranking=RANKING)
    with KnowledgeBase.open(tmp_path / "kb", embedding=embedding, config=config) as kb:
        kb.add_documents(
            [
                page("Lumen Society", "The Lumen Society has its seat in Harrowgate."),
                page("Harrowgate", "Harrowgate is a town on the river Dunmere."),
                page("Tides", "Tides rise and fall twice a day."),
            ]
        )
        kb.add_documents(
            [page("Harrowgate Council", "Harrowgate's mayor in 1901 was Ada Ferrow.")],
            access="user:bob",
        )
        question = "Who was the mayor of the seat of the Lumen Society?"
        anonymous = kb.retrieve(question, top_k=3)
        assert anonymous.trace["retrievers"]["bridge"]["search"] == "named"
        society = next(h for h in anonymous.unstructured if h.text.startswith("The Lumen"))
        assert anonymous.trace["retrievers"]["bridge"]["from"] == society.chunk_id
        assert all("Ferrow" not in h.text for h in anonymous.unstructured)
        bob = kb.retrieve(question, top_k=3, principal="bob")
        assert bob.trace["retrievers"]["bridge"]["search"] == "named"
        assert any("Ferrow" in h.text for h in bob.unstructured)
