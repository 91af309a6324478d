"""The Cypher search index answers as the embedded SQLite one, from indexes kept by the writes.

The same graph is written into an in-memory SQLite store and into a FalkorDB graph (a real
server started by the tests); every :class:`~llama_kb.stores.search.SearchIndex` lookup is
compared, for everything and for a restricted view, before and after adds, changes and
removals. A knowledge base on FalkorDB retrieves what the same knowledge base on SQLite does.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
import servers
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.graph_stores.types import ChunkNode, Relation
from search_helpers import nearest
from servers import unique_name

from benchmarks.scale_corpus import ReplicatedCorpus
from llama_kb import KBConfig, KnowledgeBase
from llama_kb import graph_model as gm
from llama_kb.names import fold
from llama_kb.retrieval.lexical import lexical_tokens
from llama_kb.stores._cypher_per_value import BRANCHES
from llama_kb.stores.graph import KBGraphStore
from llama_kb.stores.query_scope import one_query
from llama_kb.stores.search import SearchIndex
from llama_kb.stores.sqlite_graph import SQLitePropertyGraphStore

falkordb_server = servers.falkordb_server

pytestmark = pytest.mark.integration

WORDS = "falcon heron robot budget launch satellite lyon berlin secret plan board lead Zürich café"
VOCAB = WORDS.split()
PUBLIC_ONLY = frozenset({"public"})
QUERY_TERMS = (
    ["falcon"],
    ["falcon", "heron", "zurich"],
    ["cafe", "board"],
    ["secret", "plan", "lead", "robot", "budget"],
)


def _chunks(seed: int, count: int, access: str) -> list[ChunkNode]:
    rng = random.Random(seed)
    return [
        ChunkNode(
            text=" ".join(rng.choice(VOCAB) for _ in range(rng.randint(3, 40))),
            id_=f"{access}-{i}",
            properties={"doc_id": f"{access}-{i}", "access": access, "title": rng.choice(VOCAB)},
        )
        for i in range(count)
    ]


def _fact(i: int) -> gm.NamedNode:
    return gm.NamedNode(
        id_=f"fact:{i}",
        name=f"Falcon owns Thing {i}",
        label=gm.FACT,
        properties={
            "subject": "Falcon", "predicate": "owns", "object": f"Thing {i}",
            "doc_id": f"public-{i}", "chunk_id": f"public-{i}", "access": "public",
            "evidence": "e", "extractor": "test",
        },
    )  # fmt: skip


def _load(store: KBGraphStore) -> None:
    public, private = _chunks(1, 60, "public"), _chunks(2, 90, "user:bob")
    names = [gm.entity_node("Falcon"), gm.entity_node("Heron Robot"), gm.entity_node("Lyon (city)")]
    store.upsert_nodes([*public, *private, *names, *(_fact(i) for i in range(5))])
    links = [
        Relation(label=gm.MENTIONS, source_id=c.id_, target_id="entity:falcon",
                 properties={"access": c.properties["access"]})
        for c in public[:30] + private[:40]
    ] + [
        Relation(label=gm.PART_OF, source_id=c.id_, target_id="entity:heron-robot",
                 properties={"access": "public"})
        for c in public[30:35]
    ]  # fmt: skip
    store.upsert_relations(links)


@pytest.fixture
def stores(falkordb_server: servers.FalkorDBServer) -> Iterator[tuple[KBGraphStore, KBGraphStore]]:
    """The same graph in SQLite and in a fresh FalkorDB graph."""
    from llama_kb.stores.falkordb_graph import FalkorDBGraphStore

    sqlite = SQLitePropertyGraphStore(":memory:")
    falkor = FalkorDBGraphStore(falkordb_server.url, unique_name("s"))
    for store in (sqlite, falkor):
        _load(store)
    yield sqlite, falkor
    falkor.client.delete()
    falkor.close()
    sqlite.close()


def _scores(ranked: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """``ranked`` with scores to 12 digits: the server sums them and sends 15."""
    return [(chunk, float(f"{score:.12g}")) for chunk, score in ranked]


def _answers(index: SearchIndex) -> dict[str, object]:
    """What every lookup returns on the test graph (order-free where the protocol is)."""
    names = ["entity:falcon", "entity:heron-robot", "entity:lyon-city", "nothing"]
    chunk_ids = ["public-1", "public-31", "user:bob-1", "user:bob-70"]
    return {
        "count": index.chunk_count(),
        "fields": index.metadata_fields(),
        "keys": index.access_keys(),
        "lexical": [_scores(index.lexical(terms, 5)) for terms in QUERY_TERMS],
        "filtered": _scores(index.lexical(["falcon", "plan"], 5, {"title": ["heron", "lyon"]})),
        "forms": sorted(map(repr, index.name_forms(["falcon", "lyon", "heron-robot", "x"]))),
        "entity forms": sorted(map(repr, index.name_forms(["falcon"], ["document"]))),
        "phrases": index.phrase_chunks(["heron robot", "Zürich café", "nothing here"]),
        "similar": index.similar_names(["Falcn", "Lyon Cty", "  "], 2),
        "display": index.display_names([*names, "public-1"]),
        "chunk links": _sorted(index.chunk_links(chunk_ids)),
        "name links": _sorted(index.name_links(names, 100)),
        # SQLite keeps a zero row for a name whose links are gone; the server drops it
        "stats": {n: s for n, s in index.name_stats(names).items() if s.titles or s.mentions},
        "records": index.chunk_records(chunk_ids),
        "facts": sorted(
            map(str, index.facts(["falcon", "thing-3"], ["public-1"], ["public-2"], 50))
        ),
        "beyond structural": index.has_relations_besides(gm.STRUCTURAL_RELATIONS),
        "beyond all": index.has_relations_besides({"PART_OF", "MENTIONS", "LINKS_TO", "R"}),
    }


@pytest.mark.parametrize("visible", [None, PUBLIC_ONLY], ids=["everything", "public view"])
def test_every_lookup_answers_as_the_sqlite_index(stores, visible) -> None:
    sqlite, falkor = stores
    assert _answers(falkor.search_index.scoped(visible)) == _answers(
        sqlite.search_index.scoped(visible)
    )


def test_lexical_scores_are_the_sqlite_bm25_scores(stores) -> None:
    sqlite, falkor = stores
    rare = [
        ChunkNode(text=f"quasar pulsar nebula {w}", id_=f"rare-{i}", properties={"doc_id": f"r{i}"})
        for i, w in enumerate(VOCAB[:6])
    ]
    for store in (sqlite, falkor):
        store.upsert_nodes(rare)
    rng = random.Random(5)
    queries = [["quasar", "pulsar", "falcon", "nebula"], ["board", "plan", "quasar", "nebula"]]
    for _ in range(20):  # common words are skipped, rare ones kept, as SQLite does
        queries.append([fold(w) for w in rng.sample([*VOCAB, "quasar"], rng.randint(1, 5))])
    for terms in queries:
        got, want = falkor.search_index.lexical(terms, 10), sqlite.search_index.lexical(terms, 10)
        assert [c for c, _ in got] == [c for c, _ in want]
        assert all(abs(a - b) < 1e-9 for (_, a), (_, b) in zip(got, want, strict=True))


@pytest.mark.slow
def test_lexical_searches_leave_the_servers_full_text_index_in_place(stores) -> None:
    """FalkorDB 4 lost its index list to a string built from a chunk's property (``' ' +
    n.kb_lex``) after some dozens of searches over a few thousand real passages."""
    _, falkor = stores
    corpus = ReplicatedCorpus()
    falkor.upsert_nodes(
        [ChunkNode(text=p["text"], id_=p["id"], properties={"title": p["title"]})
         for p in corpus.passages(0, 3_000)]
    )  # fmt: skip
    for question in corpus.questions_for(3_000, 120):
        falkor.search_index.lexical(lexical_tokens(question.text), 10)
    listed = falkor._query("CALL db.indexes()", {}, action="list indexes")
    assert any(row[0] == "Chunk" and "kb_lex" in row[1] for row in listed)


def test_a_hub_is_read_up_to_the_cap_its_own_chunks_first(stores) -> None:
    _, falkor = stores
    falkor.upsert_relations(
        [Relation(label=gm.PART_OF, source_id="user:bob-5", target_id="entity:falcon",
                  properties={"access": "user:bob"})]
    )  # fmt: skip
    capped = falkor.search_index.name_links(["entity:falcon"], 8)["entity:falcon"]
    assert len(capped) == 8 and capped[0] == ("user:bob-5", True)
    assert not any(own for _, own in capped[1:])
    public = falkor.search_index.scoped(PUBLIC_ONLY).name_links(["entity:falcon"], 8)
    assert len(public["entity:falcon"]) == 8
    assert all(c.startswith("public-") and not own for c, own in public["entity:falcon"])


def test_small_names_and_hubs_are_read_in_one_round_trip(stores) -> None:
    sqlite, falkor = stores
    names = ["entity:falcon", "entity:heron-robot", "entity:lyon-city", "nothing"]
    totals = {n: s.titles + s.mentions for n, s in falkor.search_index.name_stats(names).items()}
    cap = 8
    assert totals == {"entity:falcon": 70, "entity:heron-robot": 5}  # a hub and a small name
    sent = _record_actions(falkor)
    got = falkor.search_index.name_links(names, cap)
    assert sent.count("read links") == 1  # the small name and the hub together
    want = sqlite.search_index.name_links(names, cap)
    for name, total in totals.items():
        assert len(got[name]) == min(total, cap)
        if total <= cap:
            assert got[name] == want[name]
    assert got["nothing"] == want["nothing"] == []


@pytest.mark.slow
def test_a_hub_with_10k_edges_is_counted_and_capped_inside_the_server(stores) -> None:
    _, falkor = stores
    falkor.upsert_relations(
        [Relation(label=gm.MENTIONS, source_id=f"hub-{i}", target_id="entity:lyon-city",
                  properties={"access": "public" if i % 2 else "user:bob"})
         for i in range(10_000)]
    )  # fmt: skip
    index = falkor.search_index
    assert index.name_stats(["entity:lyon-city"])["entity:lyon-city"].mentions == 10_000
    view = index.scoped(PUBLIC_ONLY)
    assert view.name_stats(["entity:lyon-city"])["entity:lyon-city"].mentions == 5_000
    capped = view.name_links(["entity:lyon-city"], 64)["entity:lyon-city"]
    assert len(capped) == 64 and all(int(c.split("-")[1]) % 2 for c, _ in capped)


def test_adds_changes_and_removes_keep_both_indexes_equal(stores) -> None:
    sqlite, falkor = stores
    changed = ChunkNode(
        text="zorblat engine falcon", id_="public-7",
        properties={"doc_id": "public-7", "access": "user:bob", "title": "Zorblat", "lang": "en"},
    )  # fmt: skip
    for store in (sqlite, falkor):  # a changed document: its chunks deleted, then written
        store.delete_by_property("doc_id", "public-7")
        store.upsert_nodes([changed, gm.entity_node("Zorblat Engine")])
        store.upsert_relations(
            [Relation(label=gm.MENTIONS, source_id="public-7", target_id="entity:zorblat-engine",
                      properties={"access": "user:bob"})]
        )  # fmt: skip
        store.delete_by_property("doc_id", "public-3")
        store.delete(ids=["entity:heron-robot"])
        store.delete(relation_names=[gm.PART_OF])
    for visible in (None, PUBLIC_ONLY, frozenset({"user:bob"})):
        assert _answers(falkor.search_index.scoped(visible)) == _answers(
            sqlite.search_index.scoped(visible)
        )
    index = falkor.search_index
    assert index.lexical(["zorblat"], 5)[0][0] == "public-7"
    assert index.scoped(PUBLIC_ONLY).lexical(["zorblat"], 5) == []
    assert "lang" in index.metadata_fields()
    assert index.name_stats(["entity:zorblat-engine"])["entity:zorblat-engine"].mentions == 1
    assert index.chunk_records(["public-3"]) == {}
    assert index.name_forms(["heron-robot"]) == []


def test_rewriting_a_chunk_in_place_moves_its_counts(stores) -> None:
    _, falkor = stores
    public, bob = (
        falkor.search_index.scoped(PUBLIC_ONLY),
        falkor.search_index.scoped(frozenset({"user:bob"})),
    )
    before = (public.chunk_count(), bob.chunk_count())
    falkor.upsert_nodes(
        [ChunkNode(text="zorblat", id_="public-8",
                   properties={"doc_id": "public-8", "access": "user:bob"})]
    )  # fmt: skip
    assert (public.chunk_count(), bob.chunk_count()) == (before[0] - 1, before[1] + 1)
    assert public.lexical(["zorblat"], 3) == []
    assert [c for c, _ in bob.lexical(["zorblat"], 3)] == ["public-8"]


def test_search_properties_stay_out_of_node_properties(stores) -> None:
    _, falkor = stores
    (chunk,) = falkor.get(ids=["public-1"])
    (name,) = falkor.get(ids=["entity:falcon"])
    assert not {k for k in (*chunk.properties, *name.properties) if k.startswith("kb_")}


def test_a_graph_written_before_the_search_index_gets_it_filled_when_opened(
    stores, falkordb_server
) -> None:
    from llama_kb.stores.falkordb_graph import FalkorDBGraphStore

    sqlite, falkor = stores
    falkor.structured_query(  # what an older llama-kb left: no search properties, no counts
        "MATCH (n) WHERE n:LlamaKBAccess OR n:LlamaKBNameStat OR n.key = 'search' DELETE n"
    )
    falkor.structured_query(
        "MATCH (n) REMOVE n.kb_lex, n.kb_len, n.kb_keys, n.kb_key_text, n.kb_grams, "
        "n.kb_fact_keys, n.kb_fact_key_text"
    )
    assert falkor.search_index.lexical(["falcon"], 5) == []
    reopened = FalkorDBGraphStore(falkordb_server.url, falkor.graph_name)
    try:
        for visible in (None, PUBLIC_ONLY):
            assert _answers(reopened.search_index.scoped(visible)) == _answers(
                sqlite.search_index.scoped(visible)
            )
    finally:
        reopened.close()


def test_a_graph_of_search_version_1_gets_its_word_repeats_when_opened(
    stores, falkordb_server
) -> None:
    from llama_kb.stores.falkordb_graph import FalkorDBGraphStore

    sqlite, falkor = stores
    repeated = ChunkNode(text="lyon robot lyon lyon robot", id_="rep-1", properties={"doc_id": "r"})
    for store in (sqlite, falkor):  # "lyon" three times, "robot" twice: the repeats count
        store.upsert_nodes([repeated])
    falkor.structured_query("MATCH (n:Chunk) REMOVE n.kb_repeats")
    falkor.structured_query("MATCH (m:LlamaKBMeta {key: 'search'}) SET m.value = 1")
    reopened = FalkorDBGraphStore(falkordb_server.url, falkor.graph_name)
    try:
        missing = reopened.structured_query(
            "MATCH (n:Chunk) WHERE n.kb_repeats IS NULL RETURN count(n)"
        )
        assert missing == [{"count(n)": 0}]
        for terms in (["lyon"], ["robot", "lyon", "falcon"]):
            got = reopened.search_index.lexical(terms, 10)
            want = sqlite.search_index.lexical(terms, 10)
            assert [c for c, _ in got] == [c for c, _ in want]
            assert all(abs(a - b) < 1e-9 for (_, a), (_, b) in zip(got, want, strict=True))
    finally:
        reopened.close()


def test_filling_word_repeats_stops_at_a_chunk_without_an_id(
    stores, falkordb_server, caplog
) -> None:
    from llama_kb.stores.falkordb_graph import FalkorDBGraphStore

    _, falkor = stores
    falkor.structured_query("CREATE (:Chunk {kb_lex: 'lyon_ lyon_', kb_len: 2})")
    falkor.structured_query("MATCH (n:Chunk) WHERE n.id IS NOT NULL REMOVE n.kb_repeats")
    falkor.structured_query("MATCH (m:LlamaKBMeta {key: 'search'}) SET m.value = 1")
    reopened = FalkorDBGraphStore(falkordb_server.url, falkor.graph_name)  # must not loop
    try:
        assert "1 chunks without an id keep no word repeats" in caplog.text
        counts = reopened.structured_query(
            "MATCH (n:Chunk) RETURN n.id IS NULL AS anonymous, count(n.kb_repeats) AS filled"
        )
        assert {(r["anonymous"], r["filled"]) for r in counts} == {(True, 0), (False, 150)}
    finally:
        reopened.close()


@pytest.fixture(scope="module")
def twin_kbs(
    tmp_path_factory: pytest.TempPathFactory,
    embedding: BaseEmbedding,
    falkordb_server: servers.FalkorDBServer,
) -> Iterator[tuple[KnowledgeBase, KnowledgeBase]]:
    """The example documents in an embedded knowledge base and in one whose graph is on
    FalkorDB (vectors embedded in both)."""
    docs = Path(__file__).resolve().parents[2] / "examples" / "docs"
    root = tmp_path_factory.mktemp("twins")
    opened = []
    for name, env in (("sqlite", {}), ("falkordb", falkordb_server.env)):
        config = KBConfig.from_env(root / name, env=env)
        kb = KnowledgeBase.open(config=config, embedding=embedding)
        assert kb.ingest(docs).ok
        opened.append(kb)
    yield opened[0], opened[1]
    for kb in opened:
        kb.close()


QUESTIONS = [
    "How does the ingestion pipeline work?",
    "What does the document interpreter depend on?",
    "retry policy",
    "Which components handle chunking and embeddings?",
]


@pytest.mark.parametrize("question", QUESTIONS)
def test_a_knowledge_base_on_falkordb_retrieves_what_it_does_on_sqlite(twin_kbs, question) -> None:
    embedded, server = twin_kbs
    want = embedded.retrieve(question, top_k=8, min_score=0)
    got = server.retrieve(question, top_k=8, min_score=0)
    assert [p.chunk_id for p in got.unstructured] == [p.chunk_id for p in want.unstructured]
    assert [round(p.score, 6) for p in got.unstructured] == [
        round(p.score, 6) for p in want.unstructured
    ]
    assert got.entities == want.entities
    assert {(f.subject, f.predicate, f.object) for f in got.structured_facts} == {
        (f.subject, f.predicate, f.object) for f in want.structured_facts
    }


def _record_actions(store: KBGraphStore) -> list[str]:
    """The action name of every query ``store`` sends from now on, in order."""
    sent: list[str] = []
    query = store._query  # type: ignore[attr-defined]

    def counting(cypher: str, params: dict | None = None, **kwargs: object) -> list:
        sent.append(str(kwargs["action"]))
        return query(cypher, params, **kwargs)

    store._query = counting  # type: ignore[attr-defined]
    return sent


def test_one_query_reads_the_stored_counts_once_and_sees_a_write_in_the_next(stores) -> None:
    _, falkor = stores
    index = falkor.search_index
    sent = _record_actions(falkor)
    bob = index.scoped(frozenset({"public", "user:bob"}))
    with one_query():
        before = (index.chunk_count(), bob.chunk_count(), index.access_keys())
        bob.lexical(["falcon"], 5)
        names = ["entity:falcon", "entity:heron-robot", "nothing"]
        stats = [bob.name_stats(names), bob.name_stats(names[:1]), index.name_stats(names)]
    assert sent.count("read search counts") == 1
    assert sent.count("read name counts") == 2  # once per view
    assert stats[1] == {"entity:falcon": stats[0]["entity:falcon"]}
    assert stats[0] == stats[2] and set(stats[0]) == {"entity:falcon", "entity:heron-robot"}
    assert before == (150, 150, frozenset({"public", "user:bob"}))
    assert index.scoped(PUBLIC_ONLY).chunk_count() == 60
    assert index.chunk_count() == 150
    # outside a query each call asks the revision; the counts are kept for it
    assert sent.count("read the revision counter") == 3
    assert sent.count("read search counts") == 1
    late = ChunkNode(text="falcon", id_="late", properties={"doc_id": "late", "access": "public"})
    falkor.upsert_nodes([late])
    with one_query():
        assert index.scoped(PUBLIC_ONLY).chunk_count() == 61


def test_word_counts_are_asked_once_per_revision_and_again_after_a_write(stores) -> None:
    sqlite, falkor = stores
    sent = _record_actions(falkor)
    terms = ["quasar", "falcon", "heron"]
    first = falkor.search_index.lexical(terms, 10)
    asked = sent.count("lexical statistics")
    again = falkor.search_index.scoped(None).lexical(terms, 10)
    assert again == first and 1 <= asked <= 2  # all words at once (then the common ones)
    assert sent.count("lexical statistics") == asked  # another index of the same store
    rare = ChunkNode(text="quasar quasar heron", id_="q-1", properties={"doc_id": "q"})
    for store in (sqlite, falkor):
        store.upsert_nodes([rare])
    after = falkor.search_index.lexical(terms, 10)
    assert sent.count("lexical statistics") > asked
    assert _scores(after) == _scores(sqlite.search_index.lexical(terms, 10))
    assert after[0][0] == "q-1"


def test_name_links_and_counts_are_read_once_per_revision_and_view(stores) -> None:
    sqlite, falkor = stores
    names = ["entity:falcon", "entity:heron-robot", "nothing"]
    sent = _record_actions(falkor)
    first = falkor.search_index.name_links(names, 100)
    read = [sent.count(a) for a in ("read links", "read name counts")]
    assert read == [1, 1]
    assert falkor.search_index.name_links(names, 100) == first  # a later query, same revision
    assert falkor.search_index.name_stats(names) == sqlite.search_index.name_stats(names[:2])
    assert [sent.count(a) for a in ("read links", "read name counts")] == read
    public = falkor.search_index.scoped(PUBLIC_ONLY).name_links(names, 100)  # its own reads
    assert _sorted(public) == _sorted(
        sqlite.search_index.scoped(PUBLIC_ONLY).name_links(names, 100)
    )
    assert len(public["entity:falcon"]) == 30 < len(first["entity:falcon"]) == 70
    assert sent.count("read links") == 2
    falkor.search_index.name_links(names, 8)  # another cap is another read
    assert sent.count("read links") == 3
    late = ChunkNode(text="falcon", id_="late", properties={"doc_id": "late", "access": "public"})
    mention = Relation(label=gm.MENTIONS, source_id="late", target_id="entity:falcon",
                       properties={"access": "public"})  # fmt: skip
    for store in (sqlite, falkor):
        store.upsert_nodes([late])
        store.upsert_relations([mention])
    after = falkor.search_index.name_links(names, 100)
    assert ("late", False) in after["entity:falcon"] and sent.count("read links") == 4
    assert falkor.search_index.name_stats(names)["entity:falcon"].mentions == 71
    assert _sorted(after) == _sorted(sqlite.search_index.name_links(names, 100))


def _sorted(links: dict[str, list[tuple[str, bool]]]) -> dict[str, list[tuple[str, bool]]]:
    return {n: sorted(v) for n, v in links.items()}


def test_whole_store_counts_are_read_once_per_revision_and_again_after_a_write(stores) -> None:
    sqlite, falkor = stores
    sent = _record_actions(falkor)
    whole = ("read search counts", "read relation types")
    for index in (falkor.search_index, falkor.search_index.scoped(PUBLIC_ONLY)):
        assert index.chunk_count() and index.has_relations_besides({"PART_OF"})
    assert [sent.count(action) for action in whole] == [1, 1]
    before = falkor.search_index.chunk_count()
    extra = ChunkNode(text="quasar heron", id_="extra-1", properties={"doc_id": "extra"})
    for store in (sqlite, falkor):
        store.upsert_nodes([extra])
    assert falkor.search_index.chunk_count() == before + 1 == sqlite.search_index.chunk_count()
    assert falkor.search_index.has_relations_besides({"PART_OF"})
    assert [sent.count(action) for action in whole] == [2, 2]


def test_more_words_than_one_query_holds_are_counted_in_a_few_round_trips(stores) -> None:
    sqlite, falkor = stores
    rare = ChunkNode(text="nebula falcon", id_="n-1", properties={"doc_id": "n"})
    for store in (sqlite, falkor):
        store.upsert_nodes([rare])
    sent = _record_actions(falkor)
    terms = [fold(w) for w in VOCAB] + [f"absent{i}" for i in range(BRANCHES + 5)] + ["nebula"]
    got = falkor.search_index.lexical(terms, 10)
    assert _scores(got) == _scores(sqlite.search_index.lexical(terms, 10)) and got
    assert sent.count("lexical statistics") <= 2 * -(-len(terms) // BRANCHES)
    assert sent.count("lexical search") == 2  # each sums its words; the two are added here


PUBLIC_NAMES = ["Marlow Quay", "Marlon Quest", "Harlow Quays", "Quayside Marlowe", "Mar Lowquay"]
HIDDEN_NAMES = [f"Marlowquay Annex {i}" for i in range(40)] + [f"Quay Marl {i}" for i in range(40)]
FUZZY_SPANS = ["Marlo Quai", "Marlowquay", "Quay Marlow", "Harlo Quay"]


def _names(store: KBGraphStore, names: list[str], access: str) -> None:
    """``names`` as entities, each mentioned by one chunk of ``access``."""
    props = {"access": access}
    chunks = [
        ChunkNode(text=f"about {n}", id_=f"{access}-{n}", properties={"doc_id": n, **props})
        for n in names
    ]
    store.upsert_nodes([*chunks, *(gm.entity_node(n) for n in names)])
    store.upsert_relations(
        [Relation(label=gm.MENTIONS, source_id=c.id_, target_id=gm.entity_node_id(n),
                  properties={"access": access})
         for c, n in zip(chunks, names, strict=True)]
    )  # fmt: skip


@pytest.fixture(params=["sqlite", "falkordb"])
def two_stores(request, falkordb_server) -> Iterator[tuple[KBGraphStore, KBGraphStore]]:
    """Two empty stores of one backend: one to share with hidden names, one without them."""
    from llama_kb.stores.falkordb_graph import FalkorDBGraphStore

    def store() -> KBGraphStore:
        if request.param == "sqlite":
            return SQLitePropertyGraphStore(":memory:")
        return FalkorDBGraphStore(falkordb_server.url, unique_name("fuzzy"))

    made = (store(), store())
    yield made
    for one in made:
        if isinstance(one, FalkorDBGraphStore):
            one.client.delete()
        one.close()


def test_hidden_names_do_not_move_a_views_fuzzy_name_lookup(two_stores) -> None:
    """A restricted view's fuzzy lookup equals the lookup of a store holding only what the
    view sees: the hidden names (sharing the spans' trigrams, so that counts over every
    name would pick other trigrams and weigh them otherwise) change nothing."""
    shared, alone = two_stores
    _names(shared, PUBLIC_NAMES, "public")
    _names(shared, HIDDEN_NAMES, "user:bob")
    _names(alone, PUBLIC_NAMES, "public")
    view = shared.search_index.scoped(PUBLIC_ONLY)
    for span in FUZZY_SPANS:
        got = nearest(view, span, 3)
        assert got == nearest(alone.search_index, span, 3), span
        assert got and all(n in {gm.entity_node_id(p) for p in PUBLIC_NAMES} for n in got)
    everything = nearest(shared.search_index, "Marlowquay", 3)
    assert any(n.startswith("entity:marlowquay-annex") for n in everything)


def test_spans_looked_up_together_get_what_each_gets_alone(two_stores) -> None:
    """Several spans' fuzzy lookups are one lookup: each span gets what it gets alone (ids and
    names, best first), and on a server all spans share each round trip (counts, holders,
    names) instead of paying their own."""
    shared, _ = two_stores
    _names(shared, PUBLIC_NAMES, "public")
    _names(shared, HIDDEN_NAMES, "user:bob")
    for index in (shared.search_index, shared.search_index.scoped(PUBLIC_ONLY)):
        alone = {span: index.similar_names([span], 3)[span] for span in FUZZY_SPANS}
        together = index.similar_names([*FUZZY_SPANS, "?", FUZZY_SPANS[0]], 3)
        assert together == {**alone, "?": {}}
        assert all(len(found) == 3 for found in alone.values())
        assert index.display_names(list(alone["Marlo Quai"])) == alone["Marlo Quai"]
    if isinstance(shared, SQLitePropertyGraphStore):
        return
    sent = _record_actions(shared)
    shared.search_index.similar_names([f"Quai {span}" for span in FUZZY_SPANS], 3)
    assert sent.count("fuzzy name counts") == 1  # the grams not counted yet, all spans at once
    assert sent.count("fuzzy name search") == 1 and "read names" not in sent  # names come along


def test_the_server_picks_the_fuzzy_contenders_sqlite_picks(stores) -> None:
    """The server counts shared trigrams and keeps the holders at or above the k-th count
    itself (ties at that count included): its ranking equals SQLite's, which reads every
    holder's count, on names sharing one, two or three rare trigrams with the spans."""
    crowd = [f"Qzx{'w' * (i % 7)} Vby{'k' * (i % 5)}" for i in range(120)]
    crowd += [f"Item {i} Qzx" for i in range(60)] + ["Qzxw Vbyk Jqp"]
    for store in stores:
        store.upsert_nodes([gm.entity_node(n) for n in crowd])
    sqlite, falkor = (store.search_index for store in stores)
    for spans, k in [(["Qzxw Vbyk Jqp", "Qzx Vby"], 5), (["Qzx Vby", "Qzxww"], 16)]:
        found = falkor.similar_names(spans, k)
        assert found == sqlite.similar_names(spans, k) and all(found.values())


def test_a_views_trigram_counts_are_kept_until_a_write(two_stores) -> None:
    """A restricted view counts a span's trigrams over its visible names once per revision:
    the same lookup again asks no count, and after writes (names it sees, names it does not)
    it still equals the lookup of a store holding only what it sees."""
    shared, alone = two_stores
    _names(shared, HIDDEN_NAMES, "user:bob")
    for names, access, both in (
        (PUBLIC_NAMES[:2], "public", True),
        (PUBLIC_NAMES[2:], "public", True),
        ([f"Quay Marlo {i}" for i in range(30)], "user:bob", False),
    ):
        for made in (shared, alone) if both else (shared,):
            _names(made, names, access)
        view = shared.search_index.scoped(PUBLIC_ONLY)
        for span in FUZZY_SPANS:
            assert nearest(view, span, 3) == nearest(alone.search_index, span, 3)
    if isinstance(shared, SQLitePropertyGraphStore):  # it reads through its one connection
        statements: list[str] = []
        shared._db.connection().set_trace_callback(statements.append)
        asked = lambda: sum("name_fts MATCH" in s for s in statements)  # noqa: E731
    else:
        sent = _record_actions(shared)
        asked = lambda: sum(a.startswith("fuzzy name") for a in sent)  # noqa: E731
    nearest(shared.search_index.scoped(PUBLIC_ONLY), "Harlow Quayside", 3)
    cold = asked()  # the trigrams not counted before, then the kept ones' names
    nearest(shared.search_index.scoped(PUBLIC_ONLY), "Harlow Quayside", 3)
    warm = asked() - cold  # the kept trigrams' names only
    assert 0 < warm <= shared.search_index.rare_grams and warm < cold


@pytest.mark.parametrize("visible", [None, PUBLIC_ONLY], ids=["everything", "public view"])
def test_a_chunks_links_bring_their_names_counts_within_a_query(stores, visible) -> None:
    sqlite, falkor = stores
    chunk_ids = ["public-1", "public-31", "user:bob-1"]
    index = falkor.search_index.scoped(visible)
    sent = _record_actions(falkor)
    with one_query():
        links = index.chunk_links(chunk_ids)
        names = [name for found in links.values() for name, _ in found]
        stats = index.name_stats(names)
    assert names and "read name counts" not in sent  # one round trip for both
    assert stats == sqlite.search_index.scoped(visible).name_stats(names)
