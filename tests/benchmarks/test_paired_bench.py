"""The ``benchmarks paired`` mode: per-question recall of several knowledge bases, paired."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo: benchmarks/

from benchmarks import paired_bench
from llama_kb import KnowledgeBase


def test_paired_difference_counts_questions_and_brackets_the_mean() -> None:
    figures = paired_bench.paired_difference([1.0, 1.0, 0.0, 0.5], [0.0, 1.0, 0.0, 1.0])
    assert figures["mean"] == 12.5 and (figures["better"], figures["worse"]) == (1, 1)
    assert figures["low"] <= figures["mean"] <= figures["high"]
    same = paired_bench.paired_difference([0.5, 1.0], [0.5, 1.0])
    assert same == {"mean": 0.0, "low": 0.0, "high": 0.0, "better": 0, "worse": 0}


def test_question_recall_is_counted_by_passage() -> None:
    scores = paired_bench.question_recall(["a", "a", "x", "b", "y", "z", "c"], {"a", "b", "c"})
    assert scores["R@2"] == pytest.approx(1 / 3)  # a and x: the repeated chunk counts once
    assert scores["R@5"] == pytest.approx(2 / 3) and scores["all_gold@5"] == 0.0
    assert scores["R@10"] == 1.0


@pytest.mark.slow
def test_paired_mode_compares_each_knowledge_base_with_the_first(
    tmp_path: Path, embedding, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = tmp_path / "tiny"
    dataset.mkdir()
    topics = ["volcano eruptions", "river deltas", "glacier retreat", "coral reefs"]
    rows = [
        {"id": f"p{i}", "title": t.title(), "text": f"{t.title()} are studied by geologists."}
        for i, t in enumerate(topics)
    ]
    (dataset / "corpus.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    questions = [
        {"id": f"q{i}", "question": f"Who studies {t}?", "supporting_ids": [f"p{i}"]}
        for i, t in enumerate(topics)
    ]
    (dataset / "questions.jsonl").write_text("\n".join(json.dumps(q) for q in questions))
    full, half = tmp_path / "full", tmp_path / "half"
    with KnowledgeBase.open(full, embedding=embedding) as kb:
        kb.ingest(dataset / "corpus.jsonl")
    (tmp_path / "half.jsonl").write_text("\n".join(json.dumps(r) for r in rows[:2]))
    with KnowledgeBase.open(half, embedding=embedding) as kb:
        kb.ingest(tmp_path / "half.jsonl")  # two of the four gold passages are missing
    figures = paired_bench.run(dataset, tmp_path / "out", [full, half, full])
    first, missing, again = figures["rows"]
    assert first["all"]["R@10"] == 100.0 and missing["all"]["R@10"] == 50.0
    lost = missing["vs_first"]["R@10"]
    assert (lost["mean"], lost["better"], lost["worse"]) == (-50.0, 0, 2)
    assert -100.0 <= lost["low"] <= lost["mean"] <= lost["high"] <= 0.0
    assert all(d["mean"] == 0 for d in again["vs_first"].values())
    assert "| knowledge base |" in capsys.readouterr().out
    assert (tmp_path / "out" / "paired-tiny.json").exists()
