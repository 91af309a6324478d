"""Shared data and helpers for the knowledge tests (not a test module)."""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path
from typing import Any

from llama_kb.errors import LlamaKBError

REPO = Path(__file__).resolve().parents[2]
SEED_EXAMPLE = REPO / "examples" / "knowledge" / "seed_example.json"
SEED_QUERY = "Set up an LES simulation for jet noise"

SEED_SECTIONS = {
    "instructions": (
        "[procedure] Initialize transient LES from converged RANS -- cuts spin-up by ~40%\n"
        "  Tags: les, initialization, rans\n"
        "\n"
        "SPECIALIZES_IN → technique:les (LES)"
    ),
    "user_profile": "specialization: turbomachinery\nteam: aero",
}
"""The provider's output for the seed example and :data:`SEED_QUERY` as ``user:alice``."""

_TEAM: dict[str, Any] = {
    "metadata": {
        "user:alice": {
            "entity_type": "user",
            "properties": {"specialization": "turbomachinery", "team": "aero"},
        },
        "user:bob": {"entity_type": "user", "properties": {"team": "acoustics"}},
        "global": {"entity_type": "global", "properties": {"organization": "NASA"}},
    },
    "pieces": [
        {
            "piece_id": "les-rans-init",
            "content": "Initialize transient LES from converged RANS -- cuts spin-up by ~40%",
            "knowledge_type": "Procedure",
            "info_type": "instructions",
            "tags": ["les", "initialization", "rans"],
            "entity_id": "user:alice",
            "embedding_text": "LES RANS initialization spin-up transient",
        },
        {
            "piece_id": "smagorinsky-constant",
            "content": "Smagorinsky constant of 0.1 works better than default 0.17",
            "knowledge_type": "fact",
            "info_type": "context",
            "tags": ["les", "smagorinsky"],
        },
        {
            "piece_id": "dyn-smag-jn042",
            "content": "On case JN-042 we tried dynamic Smagorinsky and saw 15% improvement",
            "knowledge_type": "episodic",
            "info_type": "context",
            "tags": ["smagorinsky"],
        },
        {
            "piece_id": "bob-fwh",
            "content": "Use FW-H surfaces for far-field jet noise predictions",
            "knowledge_type": "instruction",
            "info_type": "instructions",
            "tags": ["acoustics", "jet-noise"],
            "entity_id": "user:bob",
        },
        {
            "piece_id": "skill-mesh-check",
            "content": "Check mesh quality (skewness below 0.85) before CHT runs",
            "knowledge_type": "instruction",
            "info_type": "skills",
            "tags": ["mesh"],
            "entity_id": "user:alice",
        },
    ],
    "graph": {
        "nodes": [
            {"node_id": "user:alice", "node_type": "user", "label": "Alice"},
            {"node_id": "user:bob", "node_type": "user", "label": "Bob"},
            {"node_id": "team:aero", "node_type": "team", "label": "Aero team"},
            {"node_id": "technique:les", "node_type": "technique", "label": "LES"},
            {
                "node_id": "technique:dynamic-smagorinsky",
                "node_type": "technique",
                "label": "Dynamic Smagorinsky",
            },
            {"node_id": "case:jn-042", "node_type": "case"},
        ],
        "edges": [
            {
                "source_id": "user:alice",
                "target_id": "technique:les",
                "edge_type": "SPECIALIZES_IN",
                "properties": {"piece_id": "les-rans-init"},
            },
            {"source_id": "user:alice", "target_id": "team:aero", "edge_type": "MEMBER_OF"},
            {
                "source_id": "user:bob",
                "target_id": "user:alice",
                "edge_type": "COLLABORATES_WITH",
                "properties": {"weight": 0.5, "description": "jet noise study"},
            },
            {
                "source_id": "technique:les",
                "target_id": "technique:dynamic-smagorinsky",
                "edge_type": "USES",
                "properties": {"piece_id": "dyn-smag-jn042"},
            },
            {
                "source_id": "technique:dynamic-smagorinsky",
                "target_id": "case:jn-042",
                "edge_type": "VALIDATED_ON",
            },
        ],
    },
}


def team_document() -> dict[str, Any]:
    """A richer document: two users, global metadata, a three-hop graph (a fresh copy)."""
    return copy.deepcopy(_TEAM)


def run_command(capsys: Any, *argv: str) -> tuple[int, str, str]:
    """Run a knowledge CLI command as ``llama-kb`` would; ``(exit code, stdout, stderr)``.

    Uses ``llama_kb.cli.main`` once the commands are wired in, else the same parser and
    error handling around :mod:`llama_kb.knowledge_cli`.
    """
    from llama_kb import cli
    from llama_kb import knowledge_cli as commands

    if argv[0] in getattr(cli, "_COMMANDS", {}):
        code = cli.main(list(argv))
    else:
        parser = argparse.ArgumentParser(prog="llama-kb")
        sub = parser.add_subparsers(dest="command", required=True)

        def with_kb(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
            p.add_argument("--kb", default=None)
            return p

        commands.add_parsers(sub, with_kb)
        args = parser.parse_args(list(argv))
        try:
            code = commands.COMMANDS[args.command](args)
        except LlamaKBError as e:
            print(f"llama-kb: error: {e}", file=sys.stderr)
            code = 2
    out, err = capsys.readouterr()
    return code, out, err
