"""Structuring free text with an LLM: retries, validation, redaction, check-ins, CLI.

The only double here is the LLM: :class:`ScriptedLLMDouble` answers from a script.
"""

from __future__ import annotations

import io
import json
import tempfile
import textwrap
from pathlib import Path

import pytest
from conftest import ScriptedLLMDouble
from knowledge_helpers import SEED_EXAMPLE, SEED_QUERY, SEED_SECTIONS, run_command
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from llama_kb import ConfigurationError, DocumentError, KnowledgeBase
from llama_kb.knowledge import KnowledgeProvider, resolve_llm, structure_knowledge
from llama_kb.knowledge.structuring import build_prompt

NOTES = """\
Alice (aero team, turbomachinery) says: initialize transient LES from converged RANS --
it cuts spin-up by ~40%. Our cluster login is password=Hunter2024 by the way.
"""
VALID = SEED_EXAMPLE.read_text()
MALFORMED = '{"pieces": [{"piece_id": "les-rans-init", "content": '
INVALID = json.dumps({"pieces": [{"piece_id": "x", "content": "y", "knowledge_type": "recipe"}]})


def test_malformed_then_valid_output_is_retried_and_loaded(kb: KnowledgeBase) -> None:
    llm = ScriptedLLMDouble(answers=[MALFORMED, INVALID, f"Here you go:\n```json\n{VALID}\n```"])
    result = structure_knowledge(kb, NOTES, llm, max_retries=2, entity_id="user:alice")
    assert result.attempts == 3 and result.model == "scripted-llm-double"
    assert result.report is not None and result.report.ok
    assert result.data == json.loads(VALID)
    assert KnowledgeProvider(kb, entity_id="user:alice")(SEED_QUERY) == SEED_SECTIONS
    first, second, third = llm.prompts
    # credentials never reach the LLM; the prompt forbids them and names the author
    assert "Hunter2024" not in "".join(llm.prompts)
    assert "[REDACTED:credential_assignment]" in first
    assert "Never include credentials" in first and "'user:alice'" in first
    # each retry says what was wrong with the previous answer
    assert "not valid JSON" in second
    assert "pieces[0] 'x': knowledge_type 'recipe' is not one of" in third
    assert result.checkin_path is None


def test_gives_up_after_max_retries_and_loads_nothing(kb: KnowledgeBase) -> None:
    llm = ScriptedLLMDouble(answers=[MALFORMED, "no json at all", VALID])
    with pytest.raises(DocumentError, match=r"no valid knowledge in 2 attempt\(s\)"):
        structure_knowledge(kb, NOTES, llm, max_retries=1)
    assert llm.answers == [VALID]
    assert kb.graph.count_nodes() == 0
    with pytest.raises(DocumentError, match="empty"):
        structure_knowledge(kb, "  \n", llm)


def test_checkin_record(kb: KnowledgeBase) -> None:
    chat = FakeListChatModel(responses=[VALID])  # a LangChain chat model double
    result = structure_knowledge(kb, NOTES, chat, checkin=True)
    assert result.checkin_path is not None
    assert result.checkin_path.parent == Path(kb.config.path) / "checkins"
    record = json.loads(result.checkin_path.read_text())
    assert record["model"] == "FakeListChatModel" and record["attempts"] == 1
    assert record["structured"] == json.loads(VALID)
    assert record["report"]["added"]["pieces"] == 1 and record["created_at"].endswith("Z")
    assert "Hunter2024" not in result.checkin_path.read_text()
    assert "initialize transient LES" in record["input"]


def test_dry_run_returns_without_loading(kb: KnowledgeBase) -> None:
    result = structure_knowledge(kb, NOTES, lambda prompt: VALID, load=False)
    assert result.report is None and result.data["pieces"][0]["piece_id"] == "les-rans-init"
    assert kb.graph.count_nodes() == 0


def test_prompt_lists_the_schema() -> None:
    prompt = build_prompt("some notes")
    for word in ("metadata", "pieces", "graph", "episodic", "info_type", "embedding_text"):
        assert word in prompt
    assert prompt.rstrip().endswith("<<<\nsome notes\n>>>")


def test_resolve_llm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LLAMA_KB_LLM", raising=False)
    with pytest.raises(ConfigurationError, match="no LLM configured"):
        resolve_llm(None)
    with pytest.raises(ConfigurationError, match="must look like"):
        resolve_llm("gpt-4o")
    with pytest.raises(ConfigurationError, match="cannot import"):
        resolve_llm("no_such_module_here:make")
    monkeypatch.setenv("LLAMA_KB_LLM", "builtins:len")
    assert resolve_llm(None) is len
    # a function taking the prompt is the LLM; one without arguments is a factory
    assert resolve_llm("textwrap:dedent") is textwrap.dedent
    assert resolve_llm("tempfile:gettempdir") == tempfile.gettempdir()


_DOUBLE_MODULE = '''
"""A scripted LLM double for the CLI test: one malformed answer, then a valid one."""
import pathlib

ANSWERS = ["{{broken", pathlib.Path({example!r}).read_text()]


def make():
    answers = list(ANSWERS)
    return lambda prompt: answers.pop(0)
'''


def test_cli_structure(capsys, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    kb_dir = str(tmp_path / "kb")
    notes = tmp_path / "notes.txt"
    notes.write_text(NOTES)
    monkeypatch.delenv("LLAMA_KB_LLM", raising=False)
    code, out, err = run_command(capsys, "structure", str(notes), "--kb", kb_dir)
    assert code == 2 and out == "" and "no LLM configured" in err
    assert len(err.strip().splitlines()) == 1

    module = tmp_path / "llm_double_for_cli.py"
    module.write_text(textwrap.dedent(_DOUBLE_MODULE.format(example=str(SEED_EXAMPLE))))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr("sys.stdin", io.StringIO(NOTES))
    code, out, err = run_command(
        capsys, "structure", "-", "--kb", kb_dir, "--llm", "llm_double_for_cli:make"
    )
    assert code == 0, err
    assert out.startswith("added 5, updated 0, unchanged 0, skipped 0")
    assert "check-in record: " in err
    assert len(list((tmp_path / "kb" / "checkins").glob("*.json"))) == 1

    code, out, err = run_command(
        capsys,
        "structure",
        str(notes),
        "--kb",
        kb_dir,
        "--llm",
        "llm_double_for_cli:make",
        "--dry-run",
        "--max-retries",
        "0",
    )
    assert code == 2 and "no valid knowledge in 1 attempt(s)" in err
