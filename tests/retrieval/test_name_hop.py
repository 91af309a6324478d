"""The hop through the best passage's names: which queries take it, what it finds, and whom
it lets see what."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
import servers
from llama_index.core import Document

from llama_kb import KBConfig, KnowledgeBase
from llama_kb.config import QueryOptions, RankingConfig
from llama_kb.errors import LlamaKBError
from llama_kb.retrieval import name_hop
from llama_kb.retrieval.index import Candidates
from llama_kb.retrieval.payload import Classification
from llama_kb.retrieval.plan import QueryPlan
from llama_kb.types import Route

chroma_server = servers.chroma_server
falkordb_server = servers.falkordb_server

ON = RankingConfig(name_hop_weight=0.6)
QUESTION = "What is the name of the waterfall in the country where the Dunmere River flows?"


def plan(query: str, entity_ids: list[str], surfaces: list[str], view: object) -> QueryPlan:
    made = QueryPlan(query, QueryOptions(), time.perf_counter(), view=view)  # type: ignore[arg-type]
    made.entity_ids, made.linked_surfaces = list(entity_ids), list(surfaces)
    made.classification = Classification(Route.HYBRID, 1.0, "test")
    return made


def test_queries_naming_at_most_one_thing_or_describing_take_the_hop() -> None:
    view = object()
    ranking = ON
    one = plan(QUESTION, ["doc:d"], ["Dunmere River"], view)
    assert name_hop.applies(one, ranking)
    described = plan("who founded the society that publishes the journal", [], [], view)
    assert name_hop.applies(described, ranking)
    two = plan(
        "Who was born first, Adam Smith or Karl Marx?",
        ["e:a", "e:b"],
        ["Adam Smith", "Karl Marx"],
        view,
    )
    assert not name_hop.applies(two, ranking)
    assert name_hop.applies(one, RankingConfig())  # on by default
    assert not name_hop.applies(one, RankingConfig(name_hop_weight=0))
    assert not name_hop.applies(plan(QUESTION, [], [], None), ranking)  # no index
    one.classification = Classification(Route.SEMANTIC, 1.0, "test")
    assert not name_hop.applies(one, ranking)


def test_described_queries_can_leave_the_name_hop_to_the_dense_hop() -> None:
    view = object()
    named_only = RankingConfig(name_hop_weight=0.6, name_hop_described=False)
    described = plan("who founded the society that publishes the journal", [], [], view)
    one = plan(QUESTION, ["doc:d"], ["Dunmere River"], view)
    assert not name_hop.applies(described, named_only)  # the dense hop takes it
    assert name_hop.applies(one, named_only)
    no_dense = named_only.model_copy(update={"bridge_weight": 0.0})
    assert name_hop.applies(described, no_dense)  # no other hop: the name hop takes it


def page(title: str, text: str, **metadata: str) -> Document:
    return Document(text=text, metadata={"title": title, **metadata})


@pytest.fixture(params=["embedded", pytest.param("servers", marks=pytest.mark.integration)])
def rivers_kb(request, tmp_path, embedding):
    """Pages where the bridge (Osland) is named in the river's page and the waterfall's:
    embedded, or on a Chroma server and FalkorDB (started by the tests)."""
    env: dict[str, str] = {}
    if request.param == "servers":
        env = {**request.getfixturevalue("chroma_server").env}
        env |= request.getfixturevalue("falkordb_server").env
    config = KBConfig.from_env(tmp_path / "kb", env=env, cache_size=0, ranking=ON)
    with KnowledgeBase.open(config=config, embedding=embedding) as kb:
        kb.add_documents(
            [
                page(
                    "Dunmere River",
                    "The Dunmere River is a tributary of the Kell in Osland.",
                    topic="geo",
                ),
                page(
                    "Osland", "Osland is a country in the far north with long winters.", topic="geo"
                ),
                page(
                    "Farrow Falls", "Farrow Falls is a waterfall on the border of Osland and Vell."
                ),
                page(
                    "Brin Cascade", "Brin Cascade is the tallest waterfall of Tarsk.", topic="geo"
                ),
                page(
                    "Waterfalls", "A waterfall forms where a river drops over a ledge.", topic="geo"
                ),
            ]
        )
        kb.add_documents(
            [page("Kell Gorge", "Kell Gorge in Osland holds a hidden waterfall, Ada's Veil.")],
            access="user:bob",
        )
        yield kb


def test_the_hop_reaches_the_passage_naming_the_bridge(rivers_kb) -> None:
    found = rivers_kb.retrieve(QUESTION, top_k=4)
    names = found.trace["retrievers"]["names"]
    river = next(h for h in found.unstructured if h.text.startswith("The Dunmere"))
    assert names["from"] == found.unstructured[0].chunk_id == river.chunk_id
    falls = next(h for h in found.unstructured if h.text.startswith("Farrow Falls"))
    assert falls.ranks["names"] >= 1
    assert "name_hop" in [stage["name"] for stage in found.trace["stages"]]
    scores = [h.score for h in found.unstructured]
    assert scores == sorted(scores, reverse=True) and all(0 <= s <= 1 for s in scores)
    rivers_kb.engine.ranking = RankingConfig(name_hop_weight=0)
    assert "names" not in rivers_kb.retrieve(QUESTION, top_k=4).trace["retrievers"]


def test_the_hop_respects_access_and_filters(rivers_kb) -> None:
    anonymous = rivers_kb.retrieve(QUESTION, top_k=6)
    assert all("Veil" not in h.text for h in anonymous.unstructured)
    bob = rivers_kb.retrieve(QUESTION, top_k=6, principal="bob")
    assert any("Veil" in h.text for h in bob.unstructured)
    assert (
        bob.trace["retrievers"]["names"]["hits"]
        == anonymous.trace["retrievers"]["names"]["hits"] + 1
    )
    geo = rivers_kb.retrieve(QUESTION, top_k=6, filters={"topic": "geo"})
    assert geo.unstructured and all(h.metadata.get("topic") == "geo" for h in geo.unstructured)


def test_a_failing_vector_read_leaves_the_ranking_or_raises_when_strict(
    rivers_kb, monkeypatch
) -> None:
    def down(chunk_ids):
        raise RuntimeError("vector store down")

    monkeypatch.setattr(rivers_kb.engine.vectors, "get_vectors", down)
    found = rivers_kb.retrieve(QUESTION, top_k=3)
    assert len(found.unstructured) == 3
    assert any(d.startswith("name_hop: RuntimeError") for d in found.trace["degraded"])
    with pytest.raises(LlamaKBError, match="vector store down"):
        rivers_kb.retrieve(QUESTION, top_k=3, strict=True)


def test_hubs_and_the_questions_own_names_are_not_followed(rivers_kb) -> None:
    engine = rivers_kb.engine
    view = Candidates(engine.search_index)
    best = rivers_kb.retrieve(QUESTION, top_k=1).unstructured[0]
    asked = plan(QUESTION, [], ["Dunmere River"], view)
    reached = name_hop.read(asked, best, ON, *engine._name_hop_reads)
    texts = [t for t, _ in engine.search_index.chunk_records(list(reached.via)).values()]
    assert any(t.startswith("Farrow Falls") for t in texts)
    assert best.chunk_id not in reached.via and set(reached.chunk_vectors) == set(reached.via)
    # every name here has two chunks or more
    hubs = ON.model_copy(update={"name_hop_max_degree": 1})
    assert name_hop.read(asked, best, hubs, *engine._name_hop_reads).via == {}


def test_the_rest_of_a_query_has_no_part_along_its_names() -> None:
    rng = np.random.default_rng(0)
    query, first, second = (rng.normal(size=8) for _ in range(3))
    names = [
        v / np.linalg.norm(v) for v in (first, second - (second @ first) / (first @ first) * first)
    ]
    rest = name_hop.rest_vector(query, names)
    assert abs(float(np.linalg.norm(rest)) - 1) < 1e-6
    assert all(abs(float(rest @ n)) < 1e-6 for n in names)
    assert float(rest @ (query / np.linalg.norm(query))) > 0  # what is left still points its way
    assert np.allclose(name_hop.rest_vector(query, []), query / np.linalg.norm(query))


def test_the_reads_run_while_the_questions_own_dense_search_runs(rivers_kb, monkeypatch) -> None:
    engine = rivers_kb.engine
    inner, read = engine.embedding, engine.vectors.get_vectors
    vectors_read = threading.Event()
    order: list[str] = []

    class HeldQuestion:
        """Holds the question's embedding until the hop has read its chunk vectors."""

        def get_query_embedding(self, text: str) -> list[float]:
            if text == QUESTION:
                vectors_read.wait(10)
                order.append("question")
            return inner.get_query_embedding(text)

    def reading(chunk_ids):
        order.append("vectors")
        vectors_read.set()
        return read(chunk_ids)

    monkeypatch.setattr(engine, "embedding", HeldQuestion())
    monkeypatch.setattr(engine.vectors, "get_vectors", reading)
    found = rivers_kb.retrieve(QUESTION, top_k=4)
    assert order == ["vectors", "question"]  # the hop did not wait for the dense search
    assert any(h.ranks.get("names") for h in found.unstructured)
