"""The ``benchmarks ranking-cost`` mode: three sides timed in turn, ratios against the search."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo: benchmarks/

from benchmarks import ranking_cost_bench
from llama_kb import KnowledgeBase


def test_the_order_rotates_and_each_side_is_scored(monkeypatch) -> None:
    calls: list[str] = []
    clock = iter(float(t) for t in range(100))
    monkeypatch.setattr(ranking_cost_bench.time, "perf_counter", lambda: next(clock))

    def side(name: str, found: list[str]):
        return lambda text: calls.append(name) or found

    sides = {
        "search": side("s", ["a"]),
        "defaults": side("d", ["a", "b"]),
        "changed": side("c", []),
    }
    figures = ranking_cost_bench._timed(sides, [("q1", {"a", "b"}), ("q2", {"a", "b"})])
    assert calls == ["s", "d", "c", "d", "c", "s"]
    assert [figures[n]["recall_at_5"] for n in sides] == [50.0, 100.0, 0.0]
    assert figures["search"]["p50_ratio"] == 1.0 and figures["changed"]["p50_ms"] > 0


def test_a_dataset_run_reports_the_changed_fields(tmp_path: Path, embedding) -> None:
    dataset = tmp_path / "tiny"
    dataset.mkdir()
    question = {"id": "q", "question": "Which river is in Osland?", "supporting_ids": ["p1"]}
    (dataset / "questions.jsonl").write_text(json.dumps(question))
    with KnowledgeBase.open(tmp_path / "kb", embedding=embedding) as kb:
        from llama_index.core import Document

        kb.add_documents([Document(text="The Dunmere River flows in Osland.", id_="p1")])
    changed = {"name_hop_weight": 0.0}
    figures = ranking_cost_bench.run(tmp_path / "out", tmp_path / "kb", changed, dataset=dataset)
    assert figures["ranking_changed"] == changed and figures["changed"]["recall_at_5"] == 100.0
    assert '`{"name_hop_weight": 0.0}`' in (tmp_path / "out" / "ranking-cost.md").read_text()
