"""Unit tests of the retrieval parts: name matching, BM25, the name graph and PPR."""

from __future__ import annotations

import numpy as np
import pytest

from llama_kb.names import NameMatcher, aliases, fold, name_key
from llama_kb.retrieval.index import top_rows
from llama_kb.retrieval.lexical import BM25Index, lexical_tokens
from llama_kb.retrieval.name_graph import NameGraph


def matcher(*names: str) -> NameMatcher:
    return NameMatcher().add_all((n, f"id:{n}") for n in names)


def found(m: NameMatcher, text: str) -> list[str]:
    return [x.node_id for x in m.find(text)]


def test_names_fold_and_key() -> None:
    assert fold("Café ÉCOLE") == "cafe ecole"
    assert name_key("Sleep, My Love") == "sleep-my-love"
    assert aliases("George Stevens (director)") == ["George Stevens (director)", "George Stevens"]


def test_longest_match_wins_and_no_overlap() -> None:
    m = matcher("New York", "New York City", "York")
    assert found(m, "She moved to New York City in 1990.") == ["id:New York City"]
    assert found(m, "New York and York") == ["id:New York", "id:York"]


def test_single_words_need_exact_case_multi_words_need_a_capital() -> None:
    m = matcher("Red", "Douglas Sirk", "sleep")
    assert found(m, "The red car") == []
    assert found(m, "Red is a film") == ["id:Red"]
    assert found(m, "a film by douglas sirk") == []  # no capital in the span
    assert found(m, "a film by Douglas sirk") == ["id:Douglas Sirk"]
    assert found(m, "we sleep") == []  # lower-case single words are never names


def test_punctuation_is_ignored_and_aliases_match() -> None:
    m = matcher("A. J. Mintu", "George Stevens (director)")
    assert found(m, "A J Mintu met George Stevens.") == [
        "id:A. J. Mintu",
        "id:George Stevens (director)",
    ]


def test_shared_names_link_to_every_owner() -> None:
    m = NameMatcher().add_all([("Paris", "doc:a"), ("Paris", "doc:b")])
    assert sorted(found(m, "Paris in spring")) == ["doc:a", "doc:b"]


def test_bm25_ranks_rare_terms_and_ignores_stopwords() -> None:
    index = BM25Index(["the cat sat", "the dog sat on the mat", "a zebra"])
    assert lexical_tokens("The Cat and THE dog") == ["cat", "dog"]
    scores = index.scores("zebra cat")
    assert scores.argmax() in (0, 2) and scores[1] == 0.0
    assert not index.scores("the of and").any()
    assert not index.scores("unknownword").any()


def test_top_rows_orders_and_masks() -> None:
    scores = np.array([0.1, 0.9, 0.5, 0.9])
    assert top_rows(scores, 3) == [1, 3, 2]
    assert top_rows(scores, 5, mask=np.array([True, False, True, False])) == [2, 0]
    assert top_rows(np.array([-np.inf, 1.0]), 2) == [1]


@pytest.fixture
def chain_graph() -> NameGraph:
    # chunk 0 is about A and mentions B; chunk 1 is about B and mentions C; chunk 2 about C;
    # chunk 3 is about D, which nobody mentions
    titles = [(0, "A"), (1, "B"), (2, "C"), (3, "D")]
    mentions = [(0, "B"), (1, "C")]
    return NameGraph.build(4, titles, mentions)


def test_ppr_follows_mentions_to_the_bridge_passage(chain_graph: NameGraph) -> None:
    scores = chain_graph.personalized_pagerank(np.zeros(4), chain_graph.name_vector(["A"]))
    assert list(np.argsort(-scores)[:3]) == [0, 1, 2]  # A's page, then the bridge, then C
    assert scores[3] == 0.0


def test_title_pull_makes_a_name_lead_to_its_own_page(chain_graph: NameGraph) -> None:
    scores = chain_graph.personalized_pagerank(np.zeros(4), chain_graph.name_vector(["B"]))
    assert scores.argmax() == 1  # B's own page beats chunk 0, which merely mentions B


def test_ppr_without_seeds_is_zero_and_unknown_names_are_ignored(chain_graph: NameGraph):
    assert not chain_graph.personalized_pagerank(np.zeros(4), np.zeros(4)).any()
    assert not chain_graph.name_vector(["nobody"]).any()


def test_sparse_ppr_agrees_with_dense() -> None:
    rng = np.random.default_rng(7)
    n = 5_000
    titles = [(i, f"n{i}") for i in range(n)]
    mentions = [(int(i), f"n{int(j)}") for i, j in rng.integers(0, n, size=(3 * n, 2))]
    graph = NameGraph.build(n, titles, mentions)
    seeds = graph.name_vector(["n1", "n2"])
    sparse = graph.personalized_pagerank(np.zeros(n), seeds, sparse=True)
    dense = graph.personalized_pagerank(np.zeros(n), seeds, sparse=False)
    assert {1, 2} <= set(np.argsort(-sparse)[:10])
    assert list(np.argsort(-sparse)[:5]) == list(np.argsort(-dense)[:5])


def test_fuzzy_linker_preselects_by_trigrams_and_links_by_embedding(embedding) -> None:
    from llama_kb.retrieval.fuzzy_names import FuzzyNameLinker, trigrams

    assert "ist" in trigrams("Mistri") and "  m" in trigrams("Mistri")
    names = {"a": "Nathan H. Juran", "b": "Vector Indexer", "c": "Douglas Sirk", "d": "Paris"}
    linker = FuzzyNameLinker(names, embedding)
    assert linker._candidates("Nathan Juran")[0] == "a"
    assert [(span, node) for span, node, _ in linker.link(["Nathan Juran", "Vector Indexr"])] == [
        ("Nathan Juran", "a"),
        ("Vector Indexr", "b"),
    ]
    assert linker.link(["Completely Unrelated"]) == []


def test_coverage_counts_the_query_entities_a_chunk_touches(chain_graph: NameGraph) -> None:
    assert list(chain_graph.coverage(["A", "B"])) == [2.0, 1.0, 0.0, 0.0]
    assert not chain_graph.coverage(["nobody"]).any()


def test_a_name_only_one_chunk_mentions_is_not_a_loop() -> None:
    # chunk 0 is about A and is the only one to mention X; chunk 1 is also about A
    graph = NameGraph.build(2, [(0, "A"), (1, "A")], [(0, "X")])
    scores = graph.personalized_pagerank(np.zeros(2), graph.name_vector(["A"]))
    assert scores[0] == pytest.approx(scores[1])  # X does not pump mass back into chunk 0
    seeded = graph.personalized_pagerank(np.zeros(2), graph.name_vector(["X"]))
    assert seeded[0] > seeded[1]  # but a seed on X still reaches its chunk
