"""The ``benchmarks scale`` mode end to end at a tiny size, and its synthetic corpus."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo: benchmarks/

from benchmarks import scale_bench
from benchmarks.scale_corpus import SHARED_DATA, ReplicatedCorpus

pytestmark = pytest.mark.skipif(
    not (SHARED_DATA / "musique-dev" / "corpus.jsonl").exists(), reason="shared data sets missing"
)


@pytest.fixture(scope="module")
def corpus() -> ReplicatedCorpus:
    return ReplicatedCorpus()


def test_replicas_have_new_ids_and_consistently_perturbed_names(corpus: ReplicatedCorpus) -> None:
    size = len(corpus.base)
    first, second = corpus.passage(7), corpus.passage(size + 7)
    assert first["id"] != second["id"]
    assert first["title"].endswith(corpus.tag(0)) and second["title"].endswith(corpus.tag(1))
    assert corpus.passages(0, 5) == ReplicatedCorpus().passages(0, 5)  # deterministic
    question = corpus.questions_for(size * 2, 10)[0]
    replica = question.supporting_ids[0].rsplit("~r", 1)[1]
    assert all(i.endswith(f"~r{replica}") for i in question.supporting_ids)


def test_questions_name_the_replica_page_whatever_the_case_of_later_letters(
    corpus: ReplicatedCorpus,
) -> None:
    title = next(t for p in corpus.base if (t := str(p.get("title") or "")).title() != t)
    asked = f"Who directed {title.title()}?"  # 2Wiki title-cases the pages it names
    pattern = corpus._mention_pattern(asked, any_case=True)
    assert pattern is not None
    assert (
        pattern.sub(lambda m: f"{m.group(0)} Zoka", asked) == f"Who directed {title.title()} Zoka?"
    )
    lowered = f"who directed {title[0].lower()}{title[1:]}?"  # a first letter changed: not a name
    assert corpus._mention_pattern(lowered, any_case=True) is None
    assert corpus._mention_pattern(asked.replace(title.title(), title.upper())) is None


@pytest.mark.slow
def test_scale_mode_runs_at_a_tiny_size(tmp_path: Path) -> None:
    figures = scale_bench.run(
        tmp_path, [300], default_size=0, server_size=0, questions=6, images=tmp_path
    )
    (run,) = figures["runs"]
    assert run["label"] == "hash-300" and run["questions"] == 6
    for key in (
        "p50_ratio",
        "p95_ratio",
        "first_after_open_ratio",
        "first_after_add_ratio",
        "first_after_open_same_question_ratio",
        "first_after_add_same_question_ratio",
    ):
        assert run[key] > 0
    assert run["memory"]["rss_ratio"] > 0
    assert run["memory"]["fresh_process_same_question_ratio"] > 0
    assert run["writes"]["documents"] == 3
    assert run["cpu_ms_per_question"]["retrieve"]["client"] > 0  # no servers in this run
    assert "hash-300" in (tmp_path / "scale.md").read_text()
    assert json.loads((tmp_path / "scale.json").read_text())["runs"][0]["passages"] == 300
    assert (tmp_path / "scale-growth.png").stat().st_size > 0


def test_the_cpu_clock_charges_each_side_what_each_process_spent() -> None:
    import subprocess
    import time

    from benchmarks._cpu_clock import CpuClock

    burn = "import time\nend = time.process_time() + 0.4\nwhile time.process_time() < end: pass"
    server = subprocess.Popen([sys.executable, "-c", burn])
    clock = CpuClock({"server": server.pid, "gone": 2**22 + 1})  # no such process: left out
    clock.charge("waits", lambda: time.sleep(0.3))  # the other process burns meanwhile
    clock.charge("works", lambda: sum(i * i for i in range(2_000_000)))
    server.wait()
    spent = clock.per_call_ms(1)
    assert set(spent["waits"]) == {"client", "server"}
    assert spent["waits"]["server"] >= 100 and spent["waits"]["client"] < 50
    assert spent["works"]["client"] >= 20
