"""The CLI for scripts and new users: `--version`, `--json` everywhere, a doctor that reports."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

import llama_kb
from llama_kb.cli import build_parser, main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_version_answers_fast_without_heavy_imports() -> None:
    script = (
        "import sys; from llama_kb.cli import main; main(['--version']); "
        "print(sorted(m for m in ('llama_index', 'chromadb', 'onnxruntime') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.stdout.splitlines() == [f"llama-kb {llama_kb.__version__}", "[]"], done.stderr
    with pytest.raises(SystemExit) as exit_info:  # also listed in --help, via argparse
        build_parser().parse_args(["--version"])
    assert exit_info.value.code == 0


def test_every_command_offers_json() -> None:
    subparsers = next(
        a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)
    )
    without = [
        name
        for name, parser in subparsers.choices.items()
        if "--json" not in parser._option_string_actions
    ]
    assert without == ["mcp"]  # a server: its stdout is the MCP protocol itself


def test_doctor_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "doctor", "--kb", str(tmp_path / "kb"), "--json")
    report = json.loads(out)
    assert code == 0 and report["ok"] is True
    names = [check["name"] for check in report["checks"]]
    assert names[0] == "knowledge base directory" and names[-1] == "optional extras"


def test_doctor_reports_a_missing_extra_instead_of_a_traceback(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FALKORDB_URL", "redis://127.0.0.1:1")
    for module in ("redis", "falkordb", "yaml"):  # as if the extras were not installed
        monkeypatch.setitem(sys.modules, module, None)
    code, out, err = run(capsys, "doctor", "--kb", str(tmp_path / "kb"))
    assert code == 1 and "Traceback" not in out + err
    assert "[FAIL] graph (FalkorDB): cannot import redis" in out
    assert "fix: pip install 'llama-kb[falkordb]'" in out
    extras = next(line for line in out.splitlines() if "optional extras" in line)
    missing = extras.split("not installed: ")[1]
    assert extras.startswith("[ok]") and "falkordb" in missing and "yaml" in missing


def test_errors_are_json_too_with_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run(capsys, "stats", "--kb", str(tmp_path / "missing"), "--json")
    assert code == 2 and "no knowledge base" in json.loads(out)["error"]
    assert err.startswith("llama-kb: error:")
