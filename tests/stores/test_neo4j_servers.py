"""Neo4jGraphStore against a recording fake driver (Neo4j cannot run here).

The real-server behaviour is covered by ``test_graph_servers.py`` when ``NEO4J_URI`` is set;
these tests check llama-kb's own Cypher: values travel as parameters (never spliced into the
query text), identifiers are validated, reads and writes are routed, and driver errors
become llama-kb errors that name the server and the fix but never the password.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import neo4j
import pytest
from llama_index.core.graph_stores.types import ChunkNode

from llama_kb import graph_model as gm
from llama_kb.config import KBConfig
from llama_kb.errors import BackendError, BackendUnavailable, QueryError
from llama_kb.stores.factory import open_graph_store
from llama_kb.stores.neo4j_graph import APOC_FIX, AUTH_FIX, Neo4jGraphStore

MALICIOUS = "x'}) DETACH DELETE n //"
PASSWORD = "s3cret-pa55"


class FakeRecord:
    """What the driver returns per row: ``values()`` and ``data()``."""

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def values(self) -> list[Any]:
        return list(self._data.values())

    def data(self) -> dict[str, Any]:
        return dict(self._data)


Responder = Callable[[str, dict[str, Any]], list[dict[str, Any]]]


def default_rows(query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    if "dbms.components" in query:
        return [{"versions": ["5.26.0"]}]
    if "apoc.version" in query:
        return [{"v": "5.26.0"}]
    if "count(" in query:
        return [{"c": 0}]
    return []


class FakeDriver:
    """Records ``(query text, parameters, routing)`` of every call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any], Any]] = []
        self.respond: Responder = default_rows
        self.fail: Exception | None = None

    def execute_query(self, query: Any, parameters_=None, routing_=None, **kwargs: Any):
        text = query.text if isinstance(query, neo4j.Query) else str(query)
        params = dict(parameters_ or {})
        self.calls.append((text, params, routing_))
        if self.fail is not None:
            raise self.fail
        return [FakeRecord(r) for r in self.respond(text, params)], None, None

    def verify_connectivity(self) -> None:
        if self.fail is not None:
            raise self.fail

    def close(self) -> None:
        pass


@pytest.fixture
def driver(monkeypatch: pytest.MonkeyPatch) -> FakeDriver:
    fake = FakeDriver()
    monkeypatch.setattr(neo4j.GraphDatabase, "driver", lambda *a, **k: fake)
    monkeypatch.setattr(neo4j.AsyncGraphDatabase, "driver", lambda *a, **k: object())
    return fake


@pytest.fixture
def store(driver: FakeDriver) -> Neo4jGraphStore:
    opened = Neo4jGraphStore("neo4j://db.example:7687", "neo4j", PASSWORD, "kb")
    driver.calls.clear()
    return opened


def assert_only_in_parameters(driver: FakeDriver, value: str) -> None:
    """``value`` reached the driver as a parameter and never inside a query's text."""
    assert driver.calls, "no query was sent"
    assert all(value not in text for text, _, _ in driver.calls)
    assert any(value in json.dumps(params, default=str) for _, params, _ in driver.calls)


def test_every_product_query_passes_values_as_parameters(store, driver) -> None:
    store.upsert_nodes([gm.NamedNode(id_=MALICIOUS, name=MALICIOUS, label=gm.ENTITY)])
    store.upsert_nodes([ChunkNode(id_=MALICIOUS, text=MALICIOUS, properties={"doc_id": "d"})])
    store.upsert_relations([gm.relation(MALICIOUS, MALICIOUS, MALICIOUS, 0.5, note=MALICIOUS)])
    store.delete_by_property("doc_id", MALICIOUS)
    store.delete(entity_names=[MALICIOUS], ids=[MALICIOUS], relation_names=[MALICIOUS])
    store.delete(properties={"doc_id": MALICIOUS})
    store.named_nodes(ids=[MALICIOUS])
    store.nodes_with_incoming([MALICIOUS])
    store.relations_among([MALICIOUS, "b"])
    list(store.iter_relations([MALICIOUS]))
    store.count_relations(MALICIOUS)
    store.get(ids=[MALICIOUS], properties={"doc_id": MALICIOUS})
    store.get_triplets(entity_names=[MALICIOUS], relation_names=[MALICIOUS])
    store.traverse([MALICIOUS], relation_types=[MALICIOUS])
    assert_only_in_parameters(driver, MALICIOUS)


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.count_nodes("entity`) DETACH DELETE n //"),
        lambda s: s.delete_orphan_entities("x` DELETE n //"),
        lambda s: s.delete_by_property("doc_id = '' OR true //", "v"),
        lambda s: s.get(properties={"a`}) DETACH DELETE n //": 1}),
        lambda s: s.delete(properties={"k` = 1 OR true //": 1}),
    ],
)
def test_identifiers_are_validated_before_any_query(store, driver, call) -> None:
    with pytest.raises(QueryError, match="letters, digits and underscores"):
        call(store)
    assert driver.calls == []


def test_relation_types_go_to_apoc_as_parameters(store, driver) -> None:
    store.upsert_relations([gm.relation("a", "HAS PART", "b", 0.25)])
    text, params, routing = next(c for c in driver.calls if "apoc.merge" in c[0])
    assert "apoc.merge.relationship(source, row.label" in text
    assert params["data"][0]["label"] == "HAS PART"
    assert params["data"][0]["properties"] == {"weight": 0.25}
    assert routing == neo4j.RoutingControl.WRITE
    assert "LlamaKBMeta" in driver.calls[-1][0]  # every write batch bumps the revision


def test_reads_are_routed_to_readers(store, driver) -> None:
    store.count_nodes()
    store.named_nodes()
    list(store.iter_relations())
    assert {routing for _, _, routing in driver.calls} == {neo4j.RoutingControl.READ}
    assert all("__Node__" in text or "__Entity__" in text for text, _, _ in driver.calls)


def test_results_carry_llama_kb_ids_and_labels(store, driver) -> None:
    def rows(query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        if "coalesce(n.name" in query:
            return [
                {
                    "id": "entity:douglas-sirk",
                    "name": "Douglas Sirk",
                    "l": ["__Node__", "__Entity__", "entity"],
                },
                {
                    "id": "doc:a.md",
                    "name": "Sleep, My Love",
                    "l": ["document", "__Entity__", "__Node__"],
                },
            ]
        if "m.value" in query:
            return [{"value": 41}]
        if "n.text" in query:
            return [
                {
                    "id": "doc:a.md",
                    "name": "A",
                    "text": None,
                    "l": ["__Node__", "__Entity__", "document"],
                    "p": {"id": "doc:a.md", "name": "A", "document": "a.md", "embedding": None},
                },
                {
                    "id": "a.md#0",
                    "name": None,
                    "text": "hi",
                    "l": ["__Node__", "Chunk"],
                    "p": {"id": "a.md#0", "text": "hi", "doc_id": "a.md"},
                },
            ]
        return default_rows(query, params)

    driver.respond = rows
    assert store.named_nodes() == [
        ("doc:a.md", "Sleep, My Love", gm.DOCUMENT),
        ("entity:douglas-sirk", "Douglas Sirk", gm.ENTITY),
    ]
    assert store.named_nodes(labels=[gm.ENTITY]) == [
        ("entity:douglas-sirk", "Douglas Sirk", gm.ENTITY)
    ]
    assert store.revision == 41
    chunk, doc = store.get()  # sorted by id
    assert isinstance(doc, gm.NamedNode) and doc.id == "doc:a.md"
    assert doc.properties == {"document": "a.md"}
    assert isinstance(chunk, ChunkNode) and chunk.id == "a.md#0" and chunk.label == gm.CHUNK
    assert chunk.properties == {"doc_id": "a.md"}


def test_traversal_loads_neighbours_per_frontier(store, driver) -> None:
    def rows(query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        if "startNode(r)" in query:
            edges = {
                "entity:a": [("entity:a", "doc:b", "DIRECTED", 0.2)],
                "doc:b": [("entity:a", "doc:b", "DIRECTED", 0.2), ("c#0", "doc:b", "PART_OF", 0.0)],
                "c#0": [("c#0", "doc:b", "PART_OF", 0.0)],
            }
            return [
                {"n": node, "s": s, "t": t, "type": kind, "p": {"weight": w}}
                for node in params["ids"]
                for s, t, kind, w in edges.get(node, [])
            ]
        if "RETURN n.id" in query:
            return [{"id": i} for i in params["ids"] if i in {"entity:a", "doc:b", "c#0"}]
        return default_rows(query, params)

    driver.respond = rows
    steps = store.traverse(["entity:a"], max_cost=1.0, max_hops=3)
    assert [(s.target, s.path_cost, s.hops) for s in steps] == [("doc:b", 0.2, 1), ("c#0", 0.2, 2)]
    loads = [params["ids"] for text, params, _ in driver.calls if "startNode(r)" in text]
    assert loads == [["entity:a"], ["doc:b"], ["c#0"]]  # one query per expanded frontier


def test_unreachable_server_names_address_and_fix(driver) -> None:
    driver.fail = neo4j.exceptions.ServiceUnavailable("Couldn't connect to db.example:7687")
    with pytest.raises(BackendUnavailable) as caught:
        Neo4jGraphStore("neo4j://db.example:7687", "neo4j", PASSWORD)
    message = str(caught.value)
    assert "Neo4j at neo4j://db.example:7687" in message
    assert "docker compose -f docker/compose.yaml up -d neo4j" in message
    assert "unset NEO4J_URI" in message
    assert PASSWORD not in message


def test_wrong_password_and_missing_apoc(driver) -> None:
    driver.fail = neo4j.exceptions.AuthError("The client is unauthorized")
    with pytest.raises(BackendUnavailable, match=re.escape(AUTH_FIX)):
        Neo4jGraphStore("neo4j://db.example:7687", "neo4j", PASSWORD)
    driver.fail = None

    def no_apoc(query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        if "apoc" in query:
            raise neo4j.exceptions.ClientError("Unknown function 'apoc.version'")
        return default_rows(query, params)

    driver.respond = no_apoc
    with pytest.raises(BackendUnavailable, match=re.escape(APOC_FIX)):
        Neo4jGraphStore("neo4j://db.example:7687", "neo4j", PASSWORD)


def test_server_errors_during_use_are_backend_errors(store, driver) -> None:
    driver.fail = neo4j.exceptions.SessionExpired("leader switched")
    with pytest.raises(BackendUnavailable, match="Neo4j"):
        store.upsert_nodes([gm.entity_node("A")])
    driver.fail = neo4j.exceptions.ClientError("Invalid input")
    with pytest.raises(BackendError, match="count nodes failed"):
        store.count_nodes()


def test_config_from_env_opens_neo4j_without_leaking_the_password(driver, tmp_path) -> None:
    env = {"NEO4J_URI": "neo4j://db.example:7687", "NEO4J_PASSWORD": PASSWORD}
    config = KBConfig.from_env(tmp_path, env=env)
    store = open_graph_store(config, tmp_path)
    assert isinstance(store, Neo4jGraphStore)
    assert PASSWORD not in repr(store) and PASSWORD not in repr(config)
    assert PASSWORD not in json.dumps(config.public_dict())
    assert not (tmp_path / "graph.sqlite").exists()


def test_traversal_follows_only_relations_the_reader_may_read(store, driver) -> None:
    def rows(query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        if "startNode(r)" in query:
            edges = {
                "entity:a": [
                    ("entity:a", "doc:public", "DIRECTED", {"weight": 0.2}),
                    ("entity:a", "doc:private", "DIRECTED", {"weight": 0.1, "access": "user:bob"}),
                ],
            }
            return [
                {"n": node, "s": s, "t": t, "type": kind, "p": props}
                for node in params["ids"]
                for s, t, kind, props in edges.get(node, [])
            ]
        if "RETURN n.id" in query:
            return [{"id": i} for i in params["ids"]]
        return default_rows(query, params)

    driver.respond = rows
    public = store.traverse(["entity:a"], max_cost=1.0, max_hops=1, access={"public"})
    assert [s.target for s in public] == ["doc:public"]
    bob = store.traverse(["entity:a"], max_cost=1.0, max_hops=1, access={"public", "user:bob"})
    assert [s.target for s in bob] == ["doc:private", "doc:public"]
    assert all("user:bob" not in text for text, _, _ in driver.calls)


def test_opening_creates_the_search_indexes(driver) -> None:
    Neo4jGraphStore("neo4j://db.example:7687", "neo4j", PASSWORD, "kb")
    texts = [text for text, _, _ in driver.calls]
    for index in ("llama_kb_chunks", "llama_kb_names", "llama_kb_keys"):
        assert any(f"CREATE FULLTEXT INDEX {index} IF NOT EXISTS" in t for t in texts)
    assert any("fulltext.analyzer`: 'whitespace'" in t for t in texts)  # no stemming
    assert any("key: 'search'" in t for t in texts)  # an empty graph is marked as filled


def test_search_lookups_use_the_full_text_indexes_with_values_as_parameters(store, driver) -> None:
    def rows(query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        if "LlamaKBAccess" in query:  # the counts of every access key; the view reads its own
            return [
                {"a": a, "c": 10, "t": 100, "r": 5, "f": ["doc_id"]} for a in ("public", MALICIOUS)
            ]
        if "count(n)" in query:  # a count per value (first branch's position) or in all
            return [{"kb_at": 0, "found": 1}] if "kb_at" in query else [{"df": 1}]
        return []

    driver.respond = rows
    index = store.search_index.scoped(frozenset({MALICIOUS}))
    index.lexical([MALICIOUS, "falcon"], 5, {"doc_id": MALICIOUS})
    index.phrase_chunks([MALICIOUS])
    index.similar_names([MALICIOUS], 3)
    index.name_forms([MALICIOUS])
    index.display_names([MALICIOUS])
    index.chunk_links([MALICIOUS])
    index.name_stats([MALICIOUS])
    index.chunk_records([MALICIOUS])
    index.facts([MALICIOUS], [MALICIOUS], [MALICIOUS], 10)
    texts = [text for text, _, _ in driver.calls]
    for name in ("llama_kb_chunks", "llama_kb_names", "llama_kb_keys"):
        assert any(f"db.index.fulltext.queryNodes('{name}'" in t for t in texts)
    assert not any("db.idx.fulltext" in t for t in texts)  # FalkorDB's procedures
    assert {routing for _, _, routing in driver.calls} == {neo4j.RoutingControl.READ}
    assert_only_in_parameters(driver, MALICIOUS)
    assert_only_in_parameters(driver, "falcon_")  # the words, as the index stores them
