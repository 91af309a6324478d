"""The MCP face end to end: ``python -m llama_kb mcp`` driven by the SDK's own stdio client.

One server process serves the whole module (starting one costs ~3 s); tests use distinct
concept paths so they do not depend on each other's writes.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import EXAMPLE_DOCS
from mcp.shared.exceptions import MCPError
from mcp_helpers import BlockingSession, server_params

from llama_kb import KnowledgeBase

pytestmark = [pytest.mark.integration, pytest.mark.slow]

CONTEXT_SIZE = 5
TOOLS = {
    "retrieve",
    "search",
    "remember",
    "traverse",
    "get_concept",
    "add_concept",
    "update_concept",
    "add_relation",
    "remove_concept",
    "remove_relation",
    "active_context",
    "history",
    "revert",
    "bootstrap",
}


@pytest.fixture(scope="module")
def kb_dir(tmp_path_factory: pytest.TempPathFactory, embedding) -> Path:
    root = tmp_path_factory.mktemp("mcp")
    docs = root / "docs"
    shutil.copytree(EXAMPLE_DOCS, docs)
    with KnowledgeBase.open(root / "kb", embedding=embedding) as kb:
        assert kb.ingest(docs).ok
    return root / "kb"


@pytest.fixture(scope="module")
def client(kb_dir: Path) -> Iterator[BlockingSession]:
    params = server_params(
        "--kb", str(kb_dir), "--workspace", "app", "--link", "shared",
        "--context-size", str(CONTEXT_SIZE),
    )  # fmt: skip
    session = BlockingSession(params, kb_dir.parent / "server.log")
    yield session
    session.close()


def ok(result) -> dict:
    """The structured content of a successful tool call."""
    assert not result.is_error, result.content[0].text
    return result.structured_content


def error_text(result) -> str:
    assert result.is_error, result.structured_content
    return result.content[0].text


def last_commit(client: BlockingSession) -> int:
    commits = ok(client.tool("history", limit=1, all_workspaces=True))["commits"]
    return commits[0]["id"] if commits else 0


def test_lists_every_tool_with_typed_schemas(client: BlockingSession) -> None:
    tools = client.run(lambda s: s.list_tools()).tools
    assert {t.name for t in tools} == TOOLS
    for tool in tools:
        assert tool.input_schema["type"] == "object"
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"
        assert tool.description
    add_relation = next(t for t in tools if t.name == "add_relation")
    weight = add_relation.input_schema["properties"]["weight"]
    assert (weight["minimum"], weight["maximum"]) == (0, 1)
    templates = client.run(lambda s: s.list_resource_templates()).resource_templates
    assert {t.uri_template for t in templates} == {
        "concept://{workspace}/{+path}",
        "file://{workspace}/{+path}",
    }


def test_retrieve_and_search(client: BlockingSession) -> None:
    fused = ok(client.tool("retrieve", query="What does the Ingestion Pipeline do?", top_k=3))
    assert fused["route"] in {"semantic", "factual", "hybrid"}
    assert 1 <= len(fused["unstructured"]) <= 3
    assert "classifier" in fused["trace"]
    hits = ok(client.tool("search", query="offline embedding model", top_k=2))["passages"]
    assert len(hits) == 2 and hits[0]["score"] >= hits[1]["score"]
    assert "Vector Indexer" in hits[0]["text"]


def test_concept_lifecycle_with_missing_concept_warning(client: BlockingSession) -> None:
    added = ok(client.tool("add_concept", uri="life/ingest", content="Reads and chunks files."))
    assert added["commit"]["nodes_added"] == ["concept://app/life/ingest"]
    linked = ok(
        client.tool("add_relation", source="life/ingest", target="life/chunker", type="uses",
                    weight=0.5)
    )  # fmt: skip
    assert any("concept://app/life/chunker does not exist" in w for w in linked["warnings"])
    res = ok(
        client.tool("add_relation", source="life/ingest", target="file://app/src/ingest.py",
                    type="implemented_in", weight=0)
    )  # fmt: skip
    assert res["commit"]["nodes_added"] == ["file://app/src/ingest.py"]  # resource auto-created

    walk = ok(client.tool("traverse", uri="concept://app/life/ingest"))
    assert [n["uri"] for n in walk["nodes"]] == [
        "concept://app/life/ingest",
        "file://app/src/ingest.py",
    ]
    assert walk["broken_links"] == ["concept://app/life/chunker"]

    got = ok(client.tool("get_concept", uri="concept://app/life/ingest"))
    assert got["node"]["content"] == "Reads and chunks files."
    assert {r["target"] for r in got["outgoing"]} == {
        "concept://app/life/chunker",
        "file://app/src/ingest.py",
    }
    assert any("life/chunker" in w for w in got["warnings"])

    ok(client.tool("update_concept", uri="life/ingest", metadata={"importance": "high"}))
    read = client.run(lambda s: s.read_resource("concept://app/life/ingest"))
    data = json.loads(read.contents[0].text)
    assert data["node"]["metadata"] == {"importance": "high"}
    assert data["node"]["content"] == "Reads and chunks files."
    file_read = client.run(lambda s: s.read_resource("file://app/src/ingest.py"))
    assert json.loads(file_read.contents[0].text)["node"]["kind"] == "resource"

    ok(client.tool("add_concept", uri="life/chunker", content="Splits text."))
    walk = ok(client.tool("traverse", uri="life/ingest"))
    assert walk["broken_links"] == [] and len(walk["nodes"]) == 3
    ok(client.tool("remove_relation", source="life/ingest", target="life/chunker", type="uses"))
    removed = ok(client.tool("remove_concept", uri="life/chunker"))
    assert removed["commit"]["nodes_removed"] == ["concept://app/life/chunker"]
    assert "unknown URI" in error_text(client.tool("get_concept", uri="life/chunker"))


def test_active_context_is_an_lru_of_limited_size(client: BlockingSession) -> None:
    uris = [f"concept://app/lru/n{i}" for i in range(CONTEXT_SIZE + 3)]
    for uri in uris:
        ok(client.tool("add_concept", uri=uri, content=f"node {uri}"))
    evicted: list[str] = []
    for uri in uris:
        evicted += ok(client.tool("get_concept", uri=uri))["evicted"]
    context = ok(client.tool("active_context"))
    assert context["limit"] == CONTEXT_SIZE
    assert [n["uri"] for n in context["nodes"]] == uris[::-1][:CONTEXT_SIZE]
    assert set(uris[:3]) <= set(evicted)
    # traverse fills the context too, nearest node most recent
    ok(client.tool("add_relation", source=uris[0], target=uris[1], type="next", weight=0.2))
    walk = ok(client.tool("traverse", uri=uris[0]))
    assert walk["active_context"][:2] == [uris[0], uris[1]]


def test_commit_history_and_revert(client: BlockingSession) -> None:
    first = ok(client.tool("add_concept", uri="rev/a", content="v1", message="write a"))["commit"]
    second = ok(client.tool("update_concept", uri="rev/a", content="v2"))["commit"]
    history = ok(client.tool("history", limit=2))["commits"]
    assert [c["id"] for c in history] == [second["id"], first["id"]]
    assert history[1]["message"] == "write a" and history[1]["author"] == "agent"
    assert history[0]["nodes_changed"] == ["concept://app/rev/a"]

    message = error_text(client.tool("revert", commit_id=first["id"]))
    assert f"revert commit {second['id']} first" in message

    undo = ok(client.tool("revert", commit_id=second["id"]))["commit"]
    assert undo["reverts"] == second["id"]
    assert ok(client.tool("get_concept", uri="rev/a"))["node"]["content"] == "v1"
    assert "already reverted" in error_text(client.tool("revert", commit_id=second["id"]))
    ok(client.tool("revert", commit_id=undo["id"]))  # a revert can itself be reverted
    assert ok(client.tool("get_concept", uri="rev/a"))["node"]["content"] == "v2"


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("get_concept", {"uri": "concept://app/nowhere"}, "unknown URI"),
        ("traverse", {"uri": "concept://app/nowhere"}, "unknown URI"),
        ("get_concept", {"uri": "http://app/x"}, "unknown URI scheme"),
        ("add_concept", {"uri": "concept://other/x", "content": "c"}, "not registered"),
        ("add_concept", {"uri": "bad/../x", "content": "c"}, "'..' path segment"),
        ("add_relation", {"source": "bad/a", "target": "bad/b", "type": "t", "weight": 1.5},
         "less than or equal to 1"),
        ("add_relation", {"source": "bad/a", "target": "bad/b", "type": "t", "weight": -0.1},
         "greater than or equal to 0"),
        ("add_relation", {"source": "bad/a", "target": "bad/b", "type": "no spaces"},
         "invalid relation type"),
        ("add_concept", {"uri": "bad/huge", "content": "x" * 100_001}, "at most 100000"),
        ("add_concept", {"uri": "bad/meta", "content": "c", "metadata": {"k": "v" * 30_000}},
         "the limit is 20000"),
        ("add_concept", {"uri": "b/" + "x" * 2000, "content": "c"}, "at most 1024"),
        ("revert", {"commit_id": 99_999}, "no commit 99999"),
        ("remove_relation", {"source": "bad/a", "target": "bad/b", "type": "t"}, "no relation"),
    ],
)  # fmt: skip
def test_bad_input_is_an_error_and_changes_nothing(
    client: BlockingSession, tool: str, arguments: dict, expected: str
) -> None:
    before = last_commit(client)
    assert expected in error_text(client.tool(tool, **arguments))
    assert last_commit(client) == before


def test_cycle_of_weight_zero_relations_is_rejected(client: BlockingSession) -> None:
    ok(client.tool("add_relation", source="cyc/a", target="cyc/b", type="with", weight=0))
    ok(client.tool("add_relation", source="cyc/b", target="cyc/c", type="with", weight=0))
    before = last_commit(client)
    message = error_text(
        client.tool("add_relation", source="cyc/c", target="cyc/a", type="with", weight=0)
    )
    assert "cycle of weight-0 relations" in message
    assert last_commit(client) == before
    ok(client.tool("add_relation", source="cyc/c", target="cyc/a", type="with", weight=0.1))


def test_unknown_resource_is_an_mcp_error(client: BlockingSession) -> None:
    with pytest.raises(MCPError, match="unknown URI concept://app/no/such"):
        client.run(lambda s: s.read_resource("concept://app/no/such"))


def test_traversal_stays_in_registered_workspaces(client: BlockingSession) -> None:
    ok(client.tool("add_concept", uri="concept://shared/glossary", content="Shared terms."))
    ok(client.tool("add_concept", uri="ws/a", content="Uses the shared glossary."))
    ok(client.tool("add_relation", source="ws/a", target="concept://shared/glossary", type="see"))
    walk = ok(client.tool("traverse", uri="ws/a", max_cost=1))
    assert "concept://shared/glossary" in [n["uri"] for n in walk["nodes"]]


def test_bootstrap_tool_creates_resources_and_directory_concepts(
    client: BlockingSession, tmp_path: Path
) -> None:
    project = tmp_path / "proj"
    (project / "src").mkdir(parents=True)
    (project / "src" / "main.py").write_text("print('hi')\nprint('bye')\n")
    (project / "README.md").write_text("# Proj\n")
    commit = ok(client.tool("bootstrap", directory=str(project)))["commit"]
    assert set(commit["nodes_added"]) >= {
        "file://app/src/main.py",
        "file://app/README.md",
        "concept://app/root",
        "concept://app/src",
    }
    node = ok(client.tool("get_concept", uri="file://app/src/main.py"))["node"]
    assert node["metadata"]["file_type"] == "python"
    assert node["metadata"]["line_count"] == 2 and node["metadata"]["size_bytes"] == 25
    src = ok(client.tool("get_concept", uri="concept://app/src"))["node"]["metadata"]
    assert src == {"node_type": "directory", "file_count": 1, "total_size": 25, "depth": 1}
    again = ok(client.tool("bootstrap", directory=str(project)))
    assert again["commit"] is None


def test_agent_yaml_server_uses_its_knowledge_options(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLE_DOCS, tmp_path / "knowledge")
    config = tmp_path / "agent.yaml"
    config.write_text(
        "agent_id: helper\nknowledge:\n  - path: knowledge/vector-indexer.md\n"
        "knowledge_options: {max_results: 2, relevance_threshold: 0.1}\n",
        encoding="utf-8",
    )
    session = BlockingSession(server_params("--agent", str(config)), tmp_path / "agent.log")
    try:
        hits = ok(session.tool("search", query="Which model embeds chunks?"))["passages"]
        assert 1 <= len(hits) <= 2 and all(h["score"] >= 0.1 for h in hits)
        assert len(ok(session.tool("retrieve", query="Vector Indexer"))["unstructured"]) <= 2
    finally:
        session.close()
    assert (tmp_path / ".llama-kb" / "helper" / "kb.json").is_file()
