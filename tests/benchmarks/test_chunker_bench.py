"""The ``benchmarks chunkers`` mode on a tiny corpus: alternating rounds, ratios printed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo: benchmarks/

from benchmarks import chunker_bench


@pytest.mark.slow
def test_chunkers_mode_alternates_and_reports_ratios(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = tmp_path / "tiny"
    dataset.mkdir()
    rows = [
        {
            "id": f"p{i}",
            "title": f"Topic {i}",
            "text": f"Topic {i} is described here. " * (8 * i + 1),
        }
        for i in range(6)
    ]
    (dataset / "corpus.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    figures = chunker_bench.run(dataset, tmp_path / "out", passages=4, rounds=2)
    assert figures["passages"] == 4 and figures["corpus_documents_chunked"] == 6
    first, second = figures["rounds"]
    assert first["order"] == ["tokens", "characters"] == second["order"][::-1]
    assert all(r["ingest_ratio"] > 0 and r["chunking_ratio"] > 0 for r in figures["rounds"])
    assert "| median |" in capsys.readouterr().out
    assert (tmp_path / "out" / "chunkers-tiny.json").exists()
