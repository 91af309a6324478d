"""The llama-kb command line: ingest, query, stats, exit codes, a real subprocess."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from llama_kb.cli import main
from llama_kb.retrieval.explain_facts import PART_NAMES


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_ingest_query_stats(capsys, tmp_path: Path, docs_dir: Path) -> None:
    kb = str(tmp_path / "kb")
    code, out, _ = run(capsys, "ingest", str(docs_dir), "--kb", kb, "--quiet")
    assert code == 0 and out.startswith("added 5, updated 0, unchanged 0")
    code, out, _ = run(capsys, "ingest", str(docs_dir), "--kb", kb, "--quiet", "--json")
    assert code == 0 and len(json.loads(out)["unchanged"]) == 5
    code, out, _ = run(capsys, "query", "Who leads the Knowledge Team?", "--kb", kb)
    assert code == 0 and "route:" in out and "1. [" in out
    code, out, _ = run(
        capsys,
        "query",
        "How is the Graph Updater related to the Document Interpreter?",
        "--kb",
        kb,
        "--json",
        "--top-k",
        "2",
    )
    data = json.loads(out)
    assert data["route"] == "factual" and len(data["unstructured"]) == 2
    assert data["structured_facts"]
    code, out, _ = run(capsys, "query", "Describe the Vector Indexer", "--kb", kb, "--explain")
    assert code == 0 and "route: hybrid" in out and "stages (ms): index" in out
    header = next(line for line in out.splitlines() if line.lstrip().startswith("final"))
    assert {"fused", "dense", "lexical", "dropped", "title"} <= set(header.split())
    if importlib.util.find_spec("spacy"):  # typed facts: their parts, score and fate
        facts = out[out.index("fact score =") :].splitlines()[1]
        assert facts.split() == ["final", "rank", "score", *PART_NAMES, "dropped", "fact"]
    code, out, _ = run(capsys, "stats", "--kb", kb, "--json")
    assert json.loads(out)["documents"] == 5


def test_include_exclude_and_prune(capsys, tmp_path: Path, docs_dir: Path) -> None:
    kb = str(tmp_path / "kb")
    code, out, _ = run(
        capsys,
        "ingest",
        str(docs_dir),
        "--kb",
        kb,
        "--quiet",
        "--include",
        "*.md",
        "--exclude",
        "team*",
    )
    assert out.startswith("added 4,")
    (docs_dir / "vector-indexer.md").unlink()
    code, out, _ = run(
        capsys, "ingest", str(docs_dir), "--kb", kb, "--quiet", "--prune", "--include", "*.md"
    )
    assert code == 0 and "removed 1" in out


def test_user_errors_exit_2_with_one_line(capsys, tmp_path: Path) -> None:
    code, _, err = run(capsys, "query", "anything", "--kb", str(tmp_path / "missing"))
    assert code == 2 and err.count("\n") == 1 and "no knowledge base" in err
    (tmp_path / "stuff").mkdir()
    (tmp_path / "stuff" / "x.txt").write_text("x")
    code, _, err = run(capsys, "stats", "--kb", str(tmp_path / "stuff"))
    assert code == 2 and "not a llama-kb knowledge base" in err
    code, _, err = run(
        capsys, "ingest", str(tmp_path / "stuff"), "--kb", str(tmp_path / "kb"), "--quiet"
    )
    assert code == 0
    code, _, err = run(capsys, "query", "   ", "--kb", str(tmp_path / "kb"))
    assert code == 2 and "empty" in err


def test_failed_inputs_exit_1_and_are_listed(capsys, tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "ok.txt").write_text("fine text", encoding="utf-8")
    (tmp_path / "docs" / "bad.pdf").write_bytes(b"garbage")
    code, out, err = run(
        capsys, "ingest", str(tmp_path / "docs"), "--kb", str(tmp_path / "kb"), "--quiet"
    )
    assert code == 1 and "added 1" in out and "bad.pdf" in err


def test_usage_error_from_argparse(capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["query"])
    assert exit_info.value.code == 2


def test_console_entry_point_in_a_subprocess(tmp_path: Path, docs_dir: Path) -> None:
    kb = str(tmp_path / "kb")
    done = subprocess.run(
        [sys.executable, "-m", "llama_kb", "ingest", str(docs_dir), "--kb", kb],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "added 5" in done.stdout and "Ingesting" in done.stderr  # progress bar on by default


def test_ingest_from_an_fsspec_url(capsys, tmp_path: Path) -> None:
    import fsspec

    fs = fsspec.filesystem("memory")
    fs.pipe("/cli-src/docs/updater.md", b"# Graph Updater\n\nIt writes relations into the graph.")
    fs.pipe("/cli-src/docs/notes.txt", b"The Vector Indexer embeds chunks.")
    try:
        kb = str(tmp_path / "kb")
        url = "memory://cli-src/docs"
        code, out, _ = run(capsys, "ingest", url, "--kb", kb, "--quiet", "--json")
        assert code == 0 and sorted(json.loads(out)["added"]) == ["notes.txt", "updater.md"]
        fs.rm("/cli-src/docs/notes.txt")
        code, out, _ = run(capsys, "ingest", url, "--kb", kb, "--quiet", "--prune", "--json")
        report = json.loads(out)
        assert code == 0 and report["removed"] == ["notes.txt"]
        assert report["unchanged"] == ["updater.md"]
    finally:
        fs.rm("/cli-src", recursive=True)


def test_ingest_with_another_bundled_embedding(capsys, tmp_path: Path, docs_dir: Path) -> None:
    from llama_kb.cli import EMBEDDING_CHOICES
    from llama_kb.embeddings import MODEL_ALIASES

    assert set(EMBEDDING_CHOICES) == set(MODEL_ALIASES)
    kb = tmp_path / "kb"
    code, _, _ = run(capsys, "ingest", str(docs_dir), "--kb", str(kb), "--quiet", "--embedding",
                     "bge-small")  # fmt: skip
    assert code == 0
    model = json.loads((kb / "kb.json").read_text())["embedding"]["model_name"]
    assert model == MODEL_ALIASES["bge-small"]
    code, out, _ = run(capsys, "query", "Who leads the Knowledge Team?", "--kb", str(kb))
    assert code == 0 and "1. [" in out  # the query opened the KB with its own model
    code, _, err = run(capsys, "ingest", str(docs_dir), "--kb", str(kb), "--embedding", "minilm")
    assert code == 2 and "built with the bundled embedding" in err
