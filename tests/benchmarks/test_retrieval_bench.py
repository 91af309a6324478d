"""The ``benchmarks retrieval`` mode: ranking fields changed from the command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo: benchmarks/

from benchmarks import retrieval_bench
from llama_kb.errors import ConfigurationError


def _tiny(dataset: Path) -> Path:
    dataset.mkdir()
    pages = {
        "Bubye River": "The Bubye River is a river in Zimbabwe.",
        "Victoria Falls": "Victoria Falls is a waterfall on the Zambezi in Zimbabwe.",
        "Zimbabwe": "Zimbabwe is a landlocked country in southern Africa.",
        "Glaciers": "Glaciers retreat as the climate warms.",
    }
    rows = [{"id": f"p{i}", "title": t, "text": x} for i, (t, x) in enumerate(pages.items())]
    (dataset / "corpus.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    question = {
        "id": "q0",
        "type": "2hop",
        "question": "What is the waterfall in the country where the Bubye River is found?",
        "supporting_ids": ["p0", "p1"],
    }
    (dataset / "questions.jsonl").write_text(json.dumps(question))
    return dataset


def test_the_ranking_can_be_changed_for_a_run_and_the_report_says_so(tmp_path: Path) -> None:
    dataset = _tiny(tmp_path / "tiny")
    figures = retrieval_bench.run(dataset, tmp_path / "out", ranking={"bridge_names": 1})
    assert figures["ranking_changed"] == {"bridge_names": 1}
    assert figures["modes"]["unified"]["R@10"] == 100.0
    report = next((tmp_path / "out").glob("retrieval-tiny-*.md")).read_text()
    assert 'ranking changed: `{"bridge_names": 1}`' in report
    with pytest.raises(ConfigurationError, match="bridge_lexical_names"):
        retrieval_bench.run(dataset, tmp_path / "out", ranking={"bridge_lexical_names": 1})
