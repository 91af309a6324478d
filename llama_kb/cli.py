"""The ``llama-kb`` command line."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from typing import Any

from llama_kb import knowledge_cli as knowledge_commands
from llama_kb.config import DEFAULT_KB_DIR, KBConfig
from llama_kb.errors import LlamaKBError
from llama_kb.knowledge_base import KnowledgeBase

EXIT_OK, EXIT_FAILURES, EXIT_USER_ERROR = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for docs and tests)."""
    parser = argparse.ArgumentParser(
        prog="llama-kb", description="One retriever over your documents and their knowledge graph."
    )
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
    ingest.add_argument("paths", nargs="+", help="files or directories")
    ingest.add_argument("--include", action="append", default=[], metavar="GLOB")
    ingest.add_argument("--exclude", action="append", default=[], metavar="GLOB")
    ingest.add_argument(
        "--prune", action="store_true", help="remove documents whose files are gone"
    )
    ingest.add_argument("--quiet", action="store_true", help="no progress bar")
    ingest.add_argument("--json", action="store_true", help="print the report as JSON")

    query = with_kb(sub.add_parser("query", help="retrieve context for a question"))
    query.add_argument("text")
    query.add_argument("--top-k", type=int, default=5)
    query.add_argument("--route", choices=["semantic", "factual", "hybrid"], help="force a route")
    query.add_argument("--json", action="store_true", help="print the fused context as JSON")
    query.add_argument("--explain", action="store_true", help="show how the query was answered")

    stats = with_kb(sub.add_parser("stats", help="what the knowledge base holds"))
    stats.add_argument("--json", action="store_true", help="print JSON")
    doctor = with_kb(
        sub.add_parser("doctor", help="check the configured backends and say how to fix them")
    )
    doctor.add_argument(
        "--repair", action="store_true", help="remove orphaned vectors, graph nodes and rows"
    )
    knowledge_commands.add_parsers(sub, with_kb)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 ok, 1 some inputs failed, 2 user error)."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    try:
        return _COMMANDS[args.command](args)
    except LlamaKBError as e:
        print(f"llama-kb: error: {e}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("llama-kb: interrupted", file=sys.stderr)
        return 130


def _open(args: argparse.Namespace, create: bool = False) -> KnowledgeBase:
    return KnowledgeBase.open(config=KBConfig.from_env(args.kb), create=create)


def _ingest(args: argparse.Namespace) -> int:
    with _open(args, create=True) as kb:
        report = kb.ingest(
            args.paths,
            include=args.include,
            exclude=args.exclude,
            prune=args.prune,
            show_progress=not args.quiet,
        )
    if args.json:
        _print_json(report.to_dict())
    else:
        print(report.summary())
    for failure in report.failed:
        print(f"failed: {failure.source}: {failure.reason}", file=sys.stderr)
    return EXIT_OK if report.ok else EXIT_FAILURES


def _query(args: argparse.Namespace) -> int:
    with _open(args) as kb:
        context = kb.retrieve(args.text, top_k=args.top_k, route=args.route)
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
        print("trace:")
        _print_json(context.trace)
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
    from llama_kb.doctor import check_integrity, format_report, run_checks

    config = KBConfig.from_env(args.kb)
    checks = run_checks(config)
    if all(check.ok for check in checks):
        checks.append(check_integrity(config, repair=args.repair))
    print(format_report(checks))
    return EXIT_OK if all(check.ok for check in checks) else EXIT_FAILURES


def _print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False, default=str))


_COMMANDS = {
    "ingest": _ingest,
    "query": _query,
    "stats": _stats,
    "doctor": _doctor,
    **knowledge_commands.COMMANDS,
}


if __name__ == "__main__":
    sys.exit(main())
