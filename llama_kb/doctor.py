"""``llama-kb doctor``: check that every configured store is usable, and say how to fix it.

Checks only read: the knowledge base directory is writable (embedded stores), a Chroma
server answers its heartbeat, a FalkorDB server answers and has the graph module, a Neo4j
server accepts the credentials and has APOC. Nothing is created or written on servers.
:func:`check_integrity` opens an existing knowledge base and reports orphans (damaged store
files fail it); only with ``repair`` (``llama-kb doctor --repair``) does it remove them.

Example:
    >>> from llama_kb.doctor import format_report, run_checks
    >>> print(format_report(run_checks(KBConfig.from_env())))  # doctest: +SKIP
"""

from __future__ import annotations

import importlib.util
import os
import sqlite3
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from llama_kb.config import ChromaServerConfig, FalkorDBConfig, KBConfig, Neo4jConfig
from llama_kb.errors import BackendUnavailable, LlamaKBError, MissingDependencyError

__all__ = ["EXTRAS", "Check", "check_extras", "format_report", "run_checks"]

EXTRAS: dict[str, tuple[str, ...]] = {
    "neo4j": ("neo4j", "llama_index.graph_stores.neo4j"),
    "falkordb": ("falkordb", "redis", "llama_index.graph_stores.falkordb"),
    "openai": ("llama_index.llms.openai", "llama_index.embeddings.openai"),
    "yaml": ("yaml",),
    "mcp": ("mcp",),
    "notebooks": ("networkx", "matplotlib", "ipykernel"),
}
"""Optional extra -> the modules it provides (``pip install 'llama-kb[extra]'``)."""

NEO4J_MIN_VERSION = (5, 23)
"""LlamaIndex's Neo4j store writes with Cypher subquery syntax introduced in Neo4j 5.23."""


@dataclass(frozen=True)
class Check:
    """The outcome of one check.

    Attributes:
        name: What was checked, e.g. ``"graph (FalkorDB)"``.
        ok: Whether it is usable.
        detail: What was found (never a secret).
        fix: What to do when it is not usable (empty when ``ok``).
    """

    name: str
    ok: bool
    detail: str
    fix: str = ""


def run_checks(config: KBConfig) -> list[Check]:
    """Check the knowledge base directory and each configured backend.

    Args:
        config: The configuration to check (e.g. ``KBConfig.from_env()``).

    Returns:
        One :class:`Check` for the directory, one for vectors, one for the graph (the CLI
        adds :func:`check_extras`).
    """
    root = config.path.expanduser()
    checks = [_guarded("knowledge base directory", lambda: _check_directory(root))]
    if config.chroma is not None:
        server = config.chroma
        checks.append(_guarded("vectors (Chroma server)", lambda: _check_chroma(server, config)))
    else:
        checks.append(_embedded("vectors (embedded Chroma)", root / "chroma"))
    if config.neo4j is not None:
        neo = config.neo4j
        checks.append(_guarded("graph (Neo4j)", lambda: _check_neo4j(neo)))
    elif config.falkordb is not None:
        falkor = config.falkordb
        checks.append(_guarded("graph (FalkorDB)", lambda: _check_falkordb(falkor, config)))
    else:
        checks.append(_guarded("graph (embedded SQLite)", lambda: _check_sqlite(root)))
    return checks


def check_integrity(config: KBConfig, repair: bool = False) -> Check:
    """Open the knowledge base and look for orphans (and, with ``repair``, remove them).

    A damaged store file fails the check with the recovery hint; a directory that is no
    knowledge base yet passes.
    """
    from llama_kb.kb_directory import KB_FILE
    from llama_kb.knowledge_base import KnowledgeBase

    name = "stores integrity"
    if not (config.path.expanduser() / KB_FILE).is_file():
        return Check(name, True, "no knowledge base yet")

    def check() -> Check:
        with KnowledgeBase.open(config=config, create=False) as kb:
            report = kb.repair(dry_run=not repair)
        if report.ok or report.repaired:
            return Check(name, True, report.summary())
        return Check(name, False, report.summary(), "run `llama-kb doctor --repair`")

    return _guarded(name, check)


def check_extras() -> Check:
    """Which optional extras are installed: a finding, never an error.

    Missing extras are fine unless the configuration uses them; the backend checks then
    fail with the ``pip install`` that fixes it.
    """
    installed: list[str] = []
    missing: list[str] = []
    for extra, modules in EXTRAS.items():
        (installed if all(_importable(m) for m in modules) else missing).append(extra)
    detail = f"installed: {', '.join(installed) or 'none'}"
    if missing:
        detail += f"; not installed: {', '.join(missing)} (pip install 'llama-kb[<extra>]')"
    return Check("optional extras", True, detail)


def format_report(checks: list[Check]) -> str:
    """A plain-text report: one line per check, its fix below a failed one, and a summary."""
    lines = []
    for check in checks:
        lines.append(f"[{'ok' if check.ok else 'FAIL'}] {check.name}: {check.detail}")
        if not check.ok and check.fix:
            lines.append(f"       fix: {check.fix}")
    failed = sum(not c.ok for c in checks)
    lines.append("all checks passed" if not failed else f"{failed} of {len(checks)} checks failed")
    return "\n".join(lines)


# -- helpers --------------------------------------------------------------------------


def _guarded(name: str, check: Callable[[], Check]) -> Check:
    """Run ``check``; a missing extra or an unexpected error becomes a failed check."""
    try:
        return check()
    except MissingDependencyError as e:
        fix = f"pip install 'llama-kb[{e.extra}]'"
        return Check(name, False, f"the optional package {e.package!r} is not installed", fix)
    except (LlamaKBError, OSError) as e:
        return Check(name, False, str(e), "see the message")
    except ImportError as e:  # an extra's package is missing or broken
        extra = next((x for x, mods in EXTRAS.items() if e.name and e.name in mods), None)
        fix = f"pip install 'llama-kb[{extra}]'" if extra else "reinstall llama-kb"
        return Check(name, False, f"cannot import {e.name or 'a dependency'}: {e}", fix)
    except Exception as e:  # a diagnostic tool reports, it does not crash
        return Check(name, False, f"unexpected {type(e).__name__}: {e}", "run with -v; report it")


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a missing parent package
        return False


def _failure(error: LlamaKBError) -> str:
    """What went wrong, without the fix (a :class:`Check` carries it separately)."""
    if isinstance(error, BackendUnavailable):
        return f"{error.address} is unreachable ({error.__cause__ or 'no answer'})"
    return str(error)


def _writable(directory: Path) -> bool:
    try:
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".doctor-"):
            return True
    except OSError:
        return False


def _check_directory(root: Path) -> Check:
    name = "knowledge base directory"
    if root.exists() and not root.is_dir():
        return Check(name, False, f"{root} is a file", "choose a directory (--kb or LLAMA_KB_DIR)")
    if not root.exists():
        parent = next((p for p in root.parents if p.exists()), Path("/"))
        if _writable(parent):
            return Check(name, True, f"{root} does not exist yet; it will be created")
        return Check(name, False, f"{root} cannot be created", f"make {parent} writable")
    if not _writable(root):
        return Check(name, False, f"{root} is not writable", f"make {root} writable")
    kind = "a knowledge base" if (root / "kb.json").is_file() else "empty or new"
    return Check(name, True, f"{root} is writable ({kind})")


def _embedded(name: str, directory: Path) -> Check:
    if directory.exists() and not os.access(directory, os.W_OK):
        return Check(name, False, f"{directory} is not writable", f"make {directory} writable")
    return Check(name, True, f"stored in {directory}")


def _check_sqlite(root: Path) -> Check:
    from llama_kb.stores.sqlite_graph import SCHEMA_VERSION

    name = "graph (embedded SQLite)"
    file = root / "graph.sqlite"
    if not file.exists():
        return Check(name, True, f"{file} will be created")
    try:
        with sqlite3.connect(f"file:{file}?mode=ro", uri=True) as conn:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.Error as e:
        return Check(name, False, f"{file} is unreadable: {e}", "restore it or re-ingest")
    if version > SCHEMA_VERSION:
        return Check(name, False, f"{file} has graph schema {version}", "upgrade llama-kb")
    return Check(name, True, f"{file} (schema {version})")


def _check_chroma(server: ChromaServerConfig, config: KBConfig) -> Check:
    from llama_kb.stores.chroma_server import CHROMA_FIX, chroma_endpoint, server_client

    name = "vectors (Chroma server)"
    endpoint = chroma_endpoint(server)
    try:
        client = server_client(server)
        with endpoint.errors("heartbeat"):
            client.heartbeat()
            version = client.get_version()
            names = {c.name for c in client.list_collections()}
    except LlamaKBError as e:
        return Check(name, False, _failure(e), CHROMA_FIX)
    state = "exists" if config.collection in names else "will be created"
    return Check(
        name,
        True,
        f"{endpoint.address} answers (server {version}, tenant {server.tenant!r}, "
        f"database {server.database!r}); collection {config.collection!r} {state}",
    )


def _check_falkordb(server: FalkorDBConfig, config: KBConfig) -> Check:
    import redis

    from llama_kb.stores.factory import falkordb_graph_name
    from llama_kb.stores.falkordb_graph import FALKORDB_FIX, MODULE_FIX, falkordb_endpoint

    name = "graph (FalkorDB)"
    url = server.url.get_secret_value()
    endpoint = falkordb_endpoint(url)
    graph = falkordb_graph_name(config)
    try:
        with endpoint.errors("ping"):
            client = redis.Redis.from_url(url, socket_connect_timeout=5, decode_responses=True)
            try:
                client.ping()
                modules = {m["name"]: m.get("ver") for m in client.execute_command("MODULE LIST")}
                graphs = client.execute_command("GRAPH.LIST") if "graph" in modules else []
            finally:
                client.close()
    except LlamaKBError as e:
        return Check(name, False, _failure(e), FALKORDB_FIX)
    if "graph" not in modules:
        return Check(name, False, f"{endpoint.address} answers but has no graph module", MODULE_FIX)
    state = "exists" if graph in graphs else "will be created"
    return Check(
        name,
        True,
        f"{endpoint.address} answers; graph module {modules['graph']} loaded; "
        f"graph {graph!r} {state}",
    )


def _check_neo4j(server: Neo4jConfig) -> Check:
    import neo4j

    from llama_kb.stores.neo4j_graph import APOC_FIX, AUTH_FIX, NEO4J_FIX, neo4j_endpoint

    name = "graph (Neo4j)"
    endpoint = neo4j_endpoint(server.uri, server.database)
    auth = (server.username, server.password.get_secret_value())
    try:
        with (
            endpoint.errors("connect"),
            neo4j.GraphDatabase.driver(
                server.uri, auth=auth, connection_timeout=10.0, max_transaction_retry_time=0
            ) as driver,
        ):
            driver.verify_connectivity()
            records, _, _ = driver.execute_query(
                "CALL dbms.components() YIELD name, versions, edition "
                "RETURN versions[0] AS version, edition",
                database_=server.database,
                routing_=neo4j.RoutingControl.READ,
            )
            version, edition = records[0]["version"], records[0]["edition"]
            try:
                apoc = driver.execute_query(
                    "RETURN apoc.version() AS v",
                    database_=server.database,
                    routing_=neo4j.RoutingControl.READ,
                )[0][0]["v"]
            except neo4j.exceptions.ClientError:
                apoc = None
    except LlamaKBError as e:
        fix = AUTH_FIX if isinstance(e.__cause__, neo4j.exceptions.AuthError) else NEO4J_FIX
        return Check(name, False, _failure(e), fix)
    where = f"{endpoint.address} answers (Neo4j {version} {edition})"
    if apoc is None:
        return Check(name, False, f"{where} but APOC is not installed", APOC_FIX)
    numbers = tuple(int(p) for p in str(version).split("-")[0].split(".")[:2] if p.isdigit())
    if numbers and numbers < NEO4J_MIN_VERSION:
        return Check(name, False, f"{where}; llama-kb needs 5.23 or later", "upgrade Neo4j")
    return Check(name, True, f"{where}; APOC {apoc}")
