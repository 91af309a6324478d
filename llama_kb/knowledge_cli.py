"""``llama-kb load``, ``structure`` and ``remember``: knowledge from JSON files, free text and
conversations.

Wired into :mod:`llama_kb.cli` with :func:`add_parsers` and :data:`COMMANDS`. Exit codes as
everywhere in the CLI: 0 ok, 1 some items were skipped, 2 user error (raised as
:class:`~llama_kb.errors.LlamaKBError`, printed by ``cli.main`` as one line).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from llama_kb.config import KBConfig
from llama_kb.errors import DocumentError
from llama_kb.knowledge.loader import LoadReport, parse_json
from llama_kb.knowledge.structuring import (
    DEFAULT_MAX_RETRIES,
    LLM_ENV,
    resolve_llm,
    structure_knowledge,
)
from llama_kb.knowledge_base import KnowledgeBase
from llama_kb.memory import DEFAULT_THRESHOLD

EXIT_OK, EXIT_FAILURES = 0, 1


def add_parsers(
    subparsers: Any, with_kb: Callable[[argparse.ArgumentParser], argparse.ArgumentParser]
) -> None:
    """Add the ``load`` and ``structure`` sub-commands.

    Args:
        subparsers: What ``ArgumentParser.add_subparsers`` returned.
        with_kb: Adds the common ``--kb`` option to a sub-command parser.
    """
    load = with_kb(subparsers.add_parser("load", help="load knowledge from a JSON file"))
    load.add_argument("file", help="knowledge JSON with metadata, pieces and/or graph")
    load.add_argument("--json", action="store_true", help="print the report as JSON")

    structure = with_kb(
        subparsers.add_parser("structure", help="structure free text with an LLM, then load it")
    )
    structure.add_argument("file", help="text file, or - to read standard input")
    structure.add_argument(
        "--llm",
        default=None,
        help=f"openai:<model> or package.module:factory (default: ${LLM_ENV})",
    )
    structure.add_argument("--entity", default=None, help="the author's entity id (user:alice)")
    structure.add_argument(
        "--max-retries",
        type=int,
        default=DEFAULT_MAX_RETRIES,
        help=f"further attempts after malformed LLM output (default {DEFAULT_MAX_RETRIES})",
    )
    structure.add_argument(
        "--no-checkin", action="store_true", help="do not write a check-in record"
    )
    structure.add_argument(
        "--dry-run", action="store_true", help="print the structured JSON, load nothing"
    )
    structure.add_argument("--json", action="store_true", help="print the report as JSON")

    remember = with_kb(
        subparsers.add_parser("remember", help="extract knowledge from a conversation (JSON)")
    )
    remember.add_argument("file", help="JSON list of {role, content[, id]} messages, or -")
    remember.add_argument("--as", dest="principal", default=None, help="who spoke: user@org")
    remember.add_argument(
        "--llm",
        default=None,
        help=f"openai:<model> or package.module:factory (default: ${LLM_ENV})",
    )
    remember.add_argument("--conversation-id", default=None, help="id kept in the audit trail")
    remember.add_argument(
        "--threshold", type=float, default=DEFAULT_THRESHOLD, help="duplicate similarity (0.8)"
    )
    remember.add_argument("--json", action="store_true", help="print the outcome as JSON")


def run_load(args: argparse.Namespace) -> int:
    """``llama-kb load FILE``."""
    with _open(args) as kb:
        report = kb.load_knowledge(args.file)
    return _print_report(report, args.json)


def run_structure(args: argparse.Namespace) -> int:
    """``llama-kb structure FILE|-``."""
    llm = resolve_llm(args.llm)
    text, source = _read_text(args.file)
    with _open(args) as kb:
        result = structure_knowledge(
            kb,
            text,
            llm,
            max_retries=args.max_retries,
            entity_id=args.entity,
            checkin=not args.no_checkin,
            load=not args.dry_run,
            source=source,
        )
    if result.report is None:
        _print_json(result.data)
        return EXIT_OK
    if result.checkin_path is not None:
        print(f"check-in record: {result.checkin_path}", file=sys.stderr)
    return _print_report(result.report, args.json)


def run_remember(args: argparse.Namespace) -> int:
    """``llama-kb remember FILE|- --as user@org``."""
    text, source = _read_text(args.file)
    conversation = parse_json(text, source)
    if not isinstance(conversation, list):
        raise DocumentError(source, "expected a JSON list of messages")
    llm = resolve_llm(args.llm) if args.llm else None
    with _open(args) as kb:
        result = kb.remember(
            conversation,
            principal=args.principal,
            llm=llm,
            conversation_id=args.conversation_id,
            threshold=args.threshold,
        )
    outcomes = [
        {"action": o.action, "piece_id": o.piece_id, "access": o.access, "content": o.item.content}
        for o in result.outcomes
    ]
    if args.json:
        _print_json(
            {
                "conversation_id": result.conversation_id,
                "outcomes": outcomes,
                "errors": result.errors,
            }
        )
    else:
        for o in outcomes:
            print(f"{o['action']:<13} {o['access']:<16} {o['piece_id']}  {o['content']}")
    for error in result.errors:
        print(f"skipped: {error}", file=sys.stderr)
    return EXIT_FAILURES if result.errors else EXIT_OK


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "load": run_load,
    "structure": run_structure,
    "remember": run_remember,
}


def _open(args: argparse.Namespace) -> KnowledgeBase:
    return KnowledgeBase.open(config=KBConfig.from_env(args.kb), create=True, warm_up=False)


def _read_text(file: str) -> tuple[str, str]:
    if file == "-":
        return sys.stdin.read(), "<stdin>"
    try:
        with open(file, encoding="utf-8") as handle:
            return handle.read(), file
    except FileNotFoundError as e:
        raise DocumentError(file, "no such file") from e
    except UnicodeDecodeError as e:
        raise DocumentError(file, "not UTF-8 text") from e
    except OSError as e:
        raise DocumentError(file, f"cannot read it ({e.strerror})") from e


def _print_report(report: LoadReport, as_json: bool) -> int:
    if as_json:
        _print_json(report.to_dict())
    else:
        print(report.summary())
    for item in report.skipped:
        print(f"skipped: {item.item}: {item.reason}", file=sys.stderr)
    return EXIT_OK if report.ok else EXIT_FAILURES


def _print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True, default=str))
