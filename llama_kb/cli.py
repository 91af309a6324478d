"""The ``llama-kb`` command line.

Every command takes ``--json`` (machine-readable output, errors included); heavy modules are
imported when a command runs, so ``llama-kb --version`` and ``--help`` answer at once.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from llama_kb import __version__
from llama_kb.errors import LlamaKBError

if TYPE_CHECKING:
    from llama_kb.knowledge_base import KnowledgeBase

EXIT_OK, EXIT_FAILURES, EXIT_USER_ERROR = 0, 1, 2


EMBEDDING_CHOICES = ("minilm", "bge-small")
"""``--embedding`` values: the keys of :data:`llama_kb.embeddings.MODEL_ALIASES` (not imported
here, to keep the CLI quick to start)."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for docs and tests)."""
    parser = argparse.ArgumentParser(
        prog="llama-kb", description="One retriever over your documents and their knowledge graph."
    )
    from llama_kb import knowledge_cli as knowledge_commands
    from llama_kb.config import DEFAULT_KB_DIR

    parser.add_argument("--version", action="version", version=f"llama-kb {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    sub = parser.add_subparsers(dest="command", required=True)

    def with_kb(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p.add_argument(
            "--kb",
            default=None,
            help=f"knowledge base directory (default: $LLAMA_KB_DIR or {DEFAULT_KB_DIR})",
        )
        return p

    ingest = with_kb(sub.add_parser("ingest", help="add or update documents"))
    ingest.add_argument(
        "paths", nargs="+", help="files, directories or fsspec URLs (s3://bucket/prefix, ...)"
    )
    ingest.add_argument("--include", action="append", default=[], metavar="GLOB")
    ingest.add_argument("--exclude", action="append", default=[], metavar="GLOB")
    ingest.add_argument(
        "--prune", action="store_true", help="remove documents whose files are gone"
    )
    ingest.add_argument("--root", metavar="DIR", help="key documents by their path relative to DIR")
    ingest.add_argument(
        "--access",
        metavar="KEY",
        help="who may read documents that do not say it themselves: public, org:<org>, "
        "org:<org>#<group>,..., user:<user> (default: the configured access.default)",
    )
    ingest.add_argument(
        "--embedding",
        choices=EMBEDDING_CHOICES,
        help="bundled embedding model of a new knowledge base (default minilm); an existing "
        "one keeps the model it was built with",
    )
    ingest.add_argument("--quiet", action="store_true", help="no progress bar")
    ingest.add_argument("--json", action="store_true", help="print the report as JSON")

    query = with_kb(sub.add_parser("query", help="retrieve context for a question"))
    query.add_argument("text")
    query.add_argument("--top-k", type=int, default=5)
    query.add_argument("--route", choices=["semantic", "factual", "hybrid"], help="force a route")
    query.add_argument(
        "--as",
        dest="principal",
        metavar="USER@ORG",
        help="ask as this user of this organization (default: anonymous, public records only)",
    )
    query.add_argument("--json", action="store_true", help="print the fused context as JSON")
    query.add_argument(
        "--explain", action="store_true", help="show each candidate's scores, ranks and fate"
    )

    stats = with_kb(sub.add_parser("stats", help="what the knowledge base holds"))
    stats.add_argument("--json", action="store_true", help="print JSON")
    doctor = with_kb(
        sub.add_parser("doctor", help="check the configured backends and say how to fix them")
    )
    doctor.add_argument("--json", action="store_true", help="print the checks as JSON")
    doctor.add_argument(
        "--repair", action="store_true", help="remove orphaned vectors, graph nodes and rows"
    )
    knowledge_commands.add_parsers(sub, with_kb)

    mcp = with_kb(sub.add_parser("mcp", help="serve the KB and agent graph over MCP (stdio)"))
    mcp.add_argument("--workspace", default="default", help="workspace of new concepts")
    mcp.add_argument(
        "--link",
        action="append",
        default=[],
        metavar="WORKSPACE",
        help="another workspace traversal may enter (repeatable)",
    )
    mcp.add_argument("--context-size", type=int, default=100, help="active context LRU size")
    mcp.add_argument("--agent", metavar="YAML", help="serve an agent's knowledge (seed 004)")
    mcp.add_argument("--http", type=int, metavar="PORT", help="streamable HTTP on 127.0.0.1")
    mcp.add_argument("--git", action="store_true", help="mirror commits into <kb>/agent_git")
    mcp.add_argument(
        "--as",
        dest="principal",
        metavar="USER@ORG",
        help="the client's identity: retrieve/search read what it may read (default: public)",
    )

    boot = with_kb(sub.add_parser("bootstrap", help="describe a project tree in the agent graph"))
    boot.add_argument("directory")
    boot.add_argument("--workspace", default="default")
    boot.add_argument("--max-files", type=int, default=5000)
    boot.add_argument("--json", action="store_true", help="print the commit as JSON")
    boot.add_argument("--git", action="store_true", help="mirror the commit into <kb>/agent_git")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 ok, 1 some inputs failed, 2 user error)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == ["--version"]:  # answered before the parser imports the knowledge commands
        print(f"llama-kb {__version__}")
        return EXIT_OK
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    try:
        return _command(args.command)(args)
    except LlamaKBError as e:
        if getattr(args, "json", False):
            _print_json({"error": str(e), "type": type(e).__name__})
        print(f"llama-kb: error: {e}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("llama-kb: interrupted", file=sys.stderr)
        return 130


def _open(args: argparse.Namespace, create: bool = False) -> KnowledgeBase:
    from llama_kb.config import KBConfig
    from llama_kb.embeddings import default_embedding
    from llama_kb.knowledge_base import KnowledgeBase

    model = getattr(args, "embedding", None)
    embedding = default_embedding(model) if model else None
    config = KBConfig.from_env(args.kb)  # one command, one process: no warm-up query
    return KnowledgeBase.open(config=config, embedding=embedding, create=create, warm_up=False)


def _ingest(args: argparse.Namespace) -> int:
    local = [p for p in args.paths if "://" not in p]
    urls = [p for p in args.paths if "://" in p]
    show_progress = not args.quiet
    with _open(args, create=True) as kb:
        reports = []
        if local:
            reports.append(
                kb.ingest(
                    local,
                    include=args.include,
                    exclude=args.exclude,
                    prune=args.prune,
                    show_progress=show_progress,
                    root=args.root,
                    access=args.access,
                )
            )
        for url in urls:
            source = _remote_source(url, args.include, args.exclude)
            reports.append(
                kb.ingest(source, prune=args.prune, show_progress=show_progress, access=args.access)
            )
    report = reports[0]
    for other in reports[1:]:
        report.merge(other)
    if args.json:
        _print_json(report.to_dict())
    else:
        print(report.summary())
    for failure in report.failed:
        print(f"failed: {failure.source}: {failure.reason}", file=sys.stderr)
    return EXIT_OK if report.ok else EXIT_FAILURES


def _remote_source(url: str, include: Sequence[str], exclude: Sequence[str]) -> Any:
    """An fsspec source for ``url``; ``s3://`` credentials and endpoint come from the
    ``AWS_*`` environment variables."""
    from llama_kb.ingest.sources.fsspec import FsspecFiles

    if url.split("://", 1)[0] in ("s3", "s3a"):
        return FsspecFiles.from_env(url, include=include, exclude=exclude)
    return FsspecFiles(url, include=include, exclude=exclude)


def _query(args: argparse.Namespace) -> int:
    with _open(args) as kb:
        options = {"top_k": args.top_k, "route": args.route, "principal": args.principal}
        if args.explain:
            explanation = kb.explain(args.text, **options)
            context = explanation.context
        else:
            context = kb.retrieve(args.text, **options)
    if args.json:
        _print_json(context.to_dict())
        return EXIT_OK
    print(f"route: {context.route.value}  ({context.trace['classifier']['reason']})")
    if not context.unstructured and not context.structured_facts:
        print("no results")
    for rank, hit in enumerate(context.unstructured, 1):
        title = hit.metadata.get("title") or hit.doc_id
        print(f"{rank}. [{hit.score:.3f}] {title}")
        print("   " + hit.text.replace("\n", " ")[:300])
    if context.structured_facts:
        print("facts:")
        for fact in context.structured_facts:
            print(f"  - {fact.render()}  (cost {fact.path_cost:g})")
    if args.explain:
        print()
        print(explanation.table())
        stages = ", ".join(f"{s['name']} {s['ms']:g}" for s in context.trace["stages"])
        print(f"stages (ms): {stages}; total {context.trace['total_ms']:g}")
    return EXIT_OK


def _stats(args: argparse.Namespace) -> int:
    with _open(args) as kb:
        stats = kb.stats()
    if args.json:
        _print_json(stats)
    else:
        for key, value in stats.items():
            print(f"{key}: {value}")
    return EXIT_OK


def _doctor(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from llama_kb.config import KBConfig
    from llama_kb.doctor import check_extras, check_integrity, format_report, run_checks

    config = KBConfig.from_env(args.kb)
    checks = run_checks(config)
    if all(check.ok for check in checks):  # the stores are reachable: look inside them
        checks.append(check_integrity(config, repair=args.repair))
    checks.append(check_extras())
    ok = all(check.ok for check in checks)
    if args.json:
        _print_json({"ok": ok, "checks": [asdict(check) for check in checks]})
    else:
        print(format_report(checks))
    return EXIT_OK if ok else EXIT_FAILURES


def _mcp(args: argparse.Namespace) -> int:
    from llama_kb.integrations.mcp_server import serve

    serve(
        args.kb,
        args.workspace,
        args.link,
        args.context_size,
        args.agent,
        args.http,
        args.git,
        args.principal,
    )
    return EXIT_OK


def _bootstrap(args: argparse.Namespace) -> int:
    from llama_kb.agent_graph import AgentGraph, bootstrap

    with _open(args, create=True) as kb:
        graph = AgentGraph.open(
            kb, git=args.git, workspace=args.workspace, author="llama-kb bootstrap"
        )
        try:
            result = bootstrap(graph, args.directory, max_files=args.max_files)
        finally:
            graph.close()
    if args.json:
        _print_json(result.model_dump())
    elif result.commit is None:
        print("nothing changed")
    else:
        c = result.commit
        print(
            f"commit {c.id}: {c.message} (nodes +{len(c.nodes_added)} ~{len(c.nodes_changed)}"
            f" -{len(c.nodes_removed)}, relations +{len(c.relations_added)})"
        )
    return EXIT_OK


def _print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False, default=str))


_COMMANDS = {
    "ingest": _ingest,
    "query": _query,
    "stats": _stats,
    "doctor": _doctor,
    "mcp": _mcp,
    "bootstrap": _bootstrap,
}


def _command(name: str) -> Any:
    """The handler of sub-command ``name`` (the knowledge commands load on demand)."""
    if name in _COMMANDS:
        return _COMMANDS[name]
    from llama_kb import knowledge_cli

    return knowledge_cli.COMMANDS[name]


if __name__ == "__main__":
    sys.exit(main())
