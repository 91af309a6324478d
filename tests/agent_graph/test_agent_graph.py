"""The agent graph through its Python API, over the embedded SQLite graph store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from llama_kb.agent_graph import AgentGraph, CommitLog, bootstrap, parse_uri
from llama_kb.agent_graph.git_mirror import GitMirror
from llama_kb.errors import MissingDependencyError, QueryError
from llama_kb.stores.sqlite_graph import SQLitePropertyGraphStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLitePropertyGraphStore]:
    with SQLitePropertyGraphStore(tmp_path / "graph.sqlite") as opened:
        yield opened


@pytest.fixture
def graph(store: SQLitePropertyGraphStore, tmp_path: Path) -> Iterator[AgentGraph]:
    agent = AgentGraph(store, CommitLog(tmp_path / "commits.sqlite"), workspace="ws")
    yield agent
    agent.close()


def uris(view) -> list[str]:
    return [n.uri for n in view.nodes]


def test_uris_are_validated() -> None:
    assert str(parse_uri("a/b", "ws")) == "concept://ws/a/b"
    assert parse_uri("file://ws/src/x.py").kind == "resource"
    for bad in ["", "concept://", "concept://ws/", "ftp://ws/x", "concept://w s/x",
                "concept://ws/a/../b", "concept://ws/a\x00"]:  # fmt: skip
        with pytest.raises(QueryError):
            parse_uri(bad, "ws")


def test_traversal_budget_and_weight_zero(graph: AgentGraph) -> None:
    for name in "abcde":
        graph.add_concept(name, f"concept {name}")
    graph.add_relation("a", "b", "near", 0.6)
    graph.add_relation("b", "c", "near", 0.4)  # a->c costs 1.0: inside the budget
    graph.add_relation("c", "d", "near", 0.1)  # 1.1: outside
    graph.add_relation("d", "e", "together", 0)
    view = graph.traverse("a")
    assert uris(view) == ["concept://ws/a", "concept://ws/b", "concept://ws/c"]
    assert [n.path_cost for n in view.nodes] == [0.0, 0.6, 1.0]
    # weight 0: starting at d always brings e, even with no budget
    assert uris(graph.traverse("d", max_cost=0)) == ["concept://ws/d", "concept://ws/e"]


def test_traversal_stays_inside_registered_workspaces(
    store: SQLitePropertyGraphStore, tmp_path: Path
) -> None:
    log = CommitLog(tmp_path / "commits.sqlite")
    writer = AgentGraph(store, log, workspace="ws", linked=["other"])
    writer.add_concept("a", "in ws")
    writer.add_concept("concept://other/b", "in other")
    writer.add_relation("a", "concept://other/b", "see", 0.5)
    assert "concept://other/b" in uris(writer.traverse("a"))
    alone = AgentGraph(store, log, workspace="ws")
    assert uris(alone.traverse("a")) == ["concept://ws/a"]
    with pytest.raises(QueryError, match="not registered"):
        alone.get_concept("concept://other/b")


def test_revert_of_a_removal_restores_node_and_relations(graph: AgentGraph) -> None:
    graph.add_concept("a", "A", metadata={"owner": "team"})
    graph.add_concept("b", "B")
    graph.add_relation("a", "b", "uses", 0.3, metadata={"why": "x"})
    removed = graph.remove_concept("b").commit
    assert removed is not None and removed.relations_removed == [
        "concept://ws/a -[uses]-> concept://ws/b"
    ]
    assert uris(graph.traverse("a")) == ["concept://ws/a"]
    graph.revert(removed.id)
    view = graph.get_concept("a")
    assert [(r.target, r.weight, r.metadata) for r in view.outgoing] == [
        ("concept://ws/b", 0.3, {"why": "x"})
    ]
    assert view.node.metadata == {"owner": "team"}


def test_rejected_writes_record_nothing(graph: AgentGraph, store: SQLitePropertyGraphStore) -> None:
    graph.add_concept("a", "A")
    nodes, relations = store.count_nodes(), store.count_relations()
    for call in [
        lambda: graph.add_concept("a", "again"),
        lambda: graph.add_relation("a", "a", "self", 0.5),
        lambda: graph.add_relation("a", "b", "t", float("nan")),
        lambda: graph.add_concept("c", "x", metadata={"content": "reserved"}),
        lambda: graph.update_concept("file://ws/nope.py", metadata={"k": 1}),
    ]:
        with pytest.raises(QueryError):
            call()
    assert (store.count_nodes(), store.count_relations()) == (nodes, relations)
    assert len(graph.history().commits) == 1


def test_identical_write_makes_no_commit(graph: AgentGraph) -> None:
    graph.add_concept("a", "A")
    result = graph.update_concept("a", content="A")
    assert result.commit is None and "nothing changed" in result.warnings[0]


def test_bootstrap_describes_a_tree_and_is_incremental(graph: AgentGraph, tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / "pkg" / "sub").mkdir(parents=True)
    (project / "pkg" / "sub" / "m.py").write_text("x = 1\n")
    (project / "pkg" / "a.md").write_text("# A\n\ntext")
    (project / ".git").mkdir()
    (project / ".git" / "HEAD").write_text("ref")
    first = bootstrap(graph, project).commit
    assert first is not None
    assert sorted(first.nodes_added) == [
        "concept://ws/pkg",
        "concept://ws/pkg/sub",
        "concept://ws/root",
        "file://ws/pkg/a.md",
        "file://ws/pkg/sub/m.py",
    ]
    root = graph.get_concept("concept://ws/root").node.metadata
    assert root == {"node_type": "directory", "file_count": 2, "total_size": 15, "depth": 0}
    md = graph.get_concept("file://ws/pkg/a.md").node.metadata
    assert (md["file_type"], md["line_count"], md["mime_type"]) == ("markdown", 3, "text/markdown")
    (project / "pkg" / "a.md").write_text("# A\n")
    second = bootstrap(graph, project).commit
    assert second is not None
    assert set(second.nodes_changed) == {
        "file://ws/pkg/a.md",
        "concept://ws/pkg",
        "concept://ws/root",
    }
    with pytest.raises(QueryError, match="more than 1 files"):
        bootstrap(graph, project, max_files=1)


def test_missing_mcp_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from llama_kb.integrations import mcp_server

    monkeypatch.setitem(sys.modules, "mcp.server.mcpserver", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'llama-kb\[mcp\]'"):
        mcp_server.require_mcp()


@pytest.mark.slow
def test_mcp_is_imported_lazily() -> None:
    code = (
        "import sys, llama_kb.cli, llama_kb.integrations.mcp_server; sys.exit('mcp' in sys.modules)"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    assert subprocess.run([sys.executable, "-c", code], env=env, check=False).returncode == 0


def test_git_mirror_commits_node_files(store: SQLitePropertyGraphStore, tmp_path: Path) -> None:
    repo = tmp_path / "git"
    graph = AgentGraph(
        store, CommitLog(tmp_path / "c.sqlite"), workspace="ws", mirror=GitMirror(repo)
    )
    graph.add_concept("a", "A", message="first note", author="alice")
    graph.add_relation("a", "file://ws/x.py", "implemented_in", 0.5)
    removed = graph.remove_concept("a").commit
    assert removed is not None
    graph.revert(removed.id)
    node_file = json.loads((repo / "concept" / "ws" / "a.json").read_text())
    assert node_file["properties"]["content"] == "A"
    assert [r["target"] for r in node_file["relations"]] == ["file://ws/x.py"]
    log = subprocess.run(
        ["git", "log", "--format=%an|%s"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert len(log) == 4 and log[-1] == "alice|first note" and log[0].startswith("agent|revert")
