"""Unit tests of the retrieval parts: name matching, BM25, the name graph and PPR."""

from __future__ import annotations

import numpy as np

from llama_kb.names import NameMatcher, aliases, candidate_spans, fold, name_key, qualified_head
from llama_kb.retrieval.index import Candidates, top_rows
from llama_kb.retrieval.lexical import BM25Index, lexical_tokens
from llama_kb.retrieval.ranking import fetch_missing, make_hit
from llama_kb.types import SearchHit


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


def test_a_page_qualified_after_a_comma_is_mentioned_by_its_head() -> None:
    assert qualified_head("West Chicago, Illinois") == "West Chicago"
    assert qualified_head("Granite Peak (Humboldt County, Nevada)") is None
    # a tail with lower-case words, or more than one comma, is part of the title
    assert qualified_head("Mary, mother of Jesus") is None
    assert qualified_head("Culture, Society and Masculinities") is None
    assert qualified_head("Journal of Infrared, Millimeter, and Terahertz Waves") is None
    m = matcher("West Chicago, Illinois", "Vale, South Dakota")
    assert found(m, "a graduate of West Chicago High School") == ["id:West Chicago, Illinois"]
    assert found(m, "born in West Chicago, Illinois, in 1924") == ["id:West Chicago, Illinois"]
    assert found(m, "Vale is a town") == ["id:Vale, South Dakota"]
    assert found(m, "a vale in the hills") == []  # a one-word head keeps its exact case


def test_fuzzy_spans_are_capitalised_runs_without_leading_common_words() -> None:
    assert candidate_spans("Who directed the film about Nathan H Juran in Bank of Mars?") == [
        "Nathan H Juran",
        "Bank of Mars",
    ]
    # a capital that only starts the sentence, or a pronoun, names nothing
    assert candidate_spans("There is a country where direct-drive locomotives ran") == []
    assert candidate_spans("It was the film Walk the Line") == ["Walk the Line"]


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


def test_fuzzy_linker_preselects_by_trigrams_and_links_by_embedding(embedding, tmp_path) -> None:
    from llama_kb import graph_model as gm
    from llama_kb.retrieval.fuzzy_names import FuzzyNameLinker, trigrams
    from llama_kb.stores.sqlite_graph import SQLitePropertyGraphStore

    assert "ist" in trigrams("Mistri") and "  m" in trigrams("Mistri")
    names = ["Nathan H. Juran", "Vector Indexer", "Douglas Sirk", "Paris"]
    with SQLitePropertyGraphStore(tmp_path / "g.sqlite") as graph:
        graph.upsert_nodes([gm.entity_node(n) for n in names])
        index = graph.search_index
        found = index.similar_names(["Nathan Juran"], 4)["Nathan Juran"]
        assert next(iter(found.items())) == (
            gm.entity_node_id("Nathan H. Juran"),
            "Nathan H. Juran",
        )
        linker = FuzzyNameLinker(embedding)
        links = linker.link(["Nathan Juran", "Vector Indexr"], index)
        assert [(span, name) for span, _, name, _ in links] == [
            ("Nathan Juran", "Nathan H. Juran"),
            ("Vector Indexr", "Vector Indexer"),
        ]
        assert linker.link(["Completely Unrelated"], index) == []


def test_passages_without_a_dense_hit_have_their_records_read_in_one_batch() -> None:
    class Records:
        def __init__(self) -> None:
            self.asked: list[list[str]] = []

        def chunk_records(self, ids: list[str]) -> dict[str, tuple[str, dict[str, str]]]:
            self.asked.append(list(ids))
            return {c: (f"text of {c}", {"doc_id": f"doc-{c}"}) for c in ids}

    store = Records()
    view = Candidates(store, ("a", "b", "c", "d"))  # type: ignore[arg-type]
    dense = [SearchHit("b", "doc-b", "dense text", 0.9, {"doc_id": "doc-b"})]
    fetch_missing(view, dense, ["a", "b", "c"])
    hits = [make_hit(view, dense, c, 0.5, {}) for c in ("a", "b", "c")]
    assert store.asked == [["a", "c"]]
    assert [h.text for h in hits] == ["text of a", "dense text", "text of c"]
    assert [h.doc_id for h in hits] == ["doc-a", "doc-b", "doc-c"]
