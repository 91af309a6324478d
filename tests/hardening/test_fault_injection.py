"""Fault injection: ``kill -9`` at random points of ingest, prune, remove and rebuild.

Each run changes the source files, starts one operation in a child process and kills it
with SIGKILL after a random delay (some runs finish first). The next child first does a
normal run (ingest with prune) and reports every store, which the test checks: no
document lost or left over, none pending, no duplicated chunk, each document's vectors and
graph chunks match its manifest chunk count, and no orphans.

Children come from a ``forkserver`` that has llama-kb imported once, so a run costs
milliseconds of start-up instead of seconds.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

import pytest

RUNS = int(os.environ.get("LLAMA_KB_FAULT_RUNS", "30"))
OPS = ("ingest", "prune", "remove", "rebuild")


class Corpus:
    """Markdown files and one JSONL file that the test rewrites between runs."""

    def __init__(self, root: Path, rng: random.Random) -> None:
        self.root = root
        self.rng = rng
        self.serial = 0
        self.records: dict[str, str] = {}
        root.mkdir()
        for _ in range(8):
            self.add_file()
        for _ in range(12):
            self.add_record()
        self.write_jsonl()

    def _text(self) -> str:
        words = " ".join(
            self.rng.choice(["rotor", "blade", "pump", "valve", "seal"]) for _ in range(100)
        )
        return f"{words}.\n\n{self.rng.random()}"

    def add_file(self) -> None:
        self.serial += 1
        body = "\n\n".join(f"## Part {i}\n{self._text()}" for i in range(self.rng.randint(1, 3)))
        (self.root / f"doc{self.serial}.md").write_text(f"# Doc {self.serial}\n{body}\n")

    def add_record(self) -> None:
        self.serial += 1
        self.records[f"rec-{self.serial}"] = self._text()

    def write_jsonl(self) -> None:
        lines = [json.dumps({"id": k, "text": v}) for k, v in self.records.items()]
        (self.root / "records.jsonl").write_text("\n".join(lines) + "\n")

    def files(self) -> list[Path]:
        return sorted(self.root.glob("*.md"))

    def expected_ids(self) -> set[str]:
        return {f.resolve().as_posix() for f in self.files()} | set(self.records)

    def mutate(self, op: str) -> list[str]:
        """Change the files for ``op``; returns the document ids ``remove`` should delete."""
        if op == "ingest":
            for path in self.rng.sample(self.files(), 3):
                path.write_text(path.read_text() + f"\nchanged {self.rng.random()}\n")
            for _ in range(4):  # as many as prune and remove delete: the corpus keeps its size
                self.add_file()
            for key in self.rng.sample(sorted(self.records), 4):
                self.records[key] = self._text()
            for _ in range(4):
                self.add_record()
            self.write_jsonl()
        elif op in ("prune", "remove"):
            gone = self.rng.sample(self.files(), 2)
            dropped = self.rng.sample(sorted(self.records), 2)
            for path in gone:
                path.unlink()
            for key in dropped:
                del self.records[key]
            self.write_jsonl()
            if op == "remove":
                return [p.resolve().as_posix() for p in gone] + dropped
        return []


def _check(state: dict[str, Any], expected: set[str], run: str) -> None:
    ready = state["ready"]
    assert state["failed"] == [], run
    assert set(ready) == expected, (run, expected ^ set(ready))  # none lost, none left over
    assert state["pending"] == [], run
    assert state["duplicate_chunk_ids"] == 0, run
    assert state["vectors_per_doc"] == {d: n for d, n in ready.items() if n}, run
    assert state["graph_chunks_per_doc"] == {d: n for d, n in ready.items() if n}, run
    assert state["chunk_nodes"] == sum(ready.values()), run
    assert state["orphans"].startswith("no orphans"), (run, state["orphans"])


@pytest.mark.slow
def test_kill_9_at_random_points_loses_nothing(tmp_path: Path) -> None:
    here = str(Path(__file__).resolve().parent)
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["fault_worker"])
    if here not in sys.path:
        sys.path.insert(0, here)
    import fault_worker

    rng = random.Random(1717)
    corpus = Corpus(tmp_path / "docs", rng)
    kb_dir, docs_dir = str(tmp_path / "kb"), str(corpus.root)

    killed = 0
    previous = "initial"
    for i in range(RUNS + 1):
        parent, child_end = context.Pipe()
        child = context.Process(target=fault_worker.cycle, args=(kb_dir, docs_dir, child_end))
        child.start()
        child_end.close()  # so that a child dying without an answer ends recv() with EOFError
        assert parent.poll(180), f"the normal run after {previous} did not answer"
        _check(parent.recv(), corpus.expected_ids(), f"normal run after {previous}")
        if i == RUNS:
            parent.send(None)
            child.join()
            break
        op = OPS[i % len(OPS)]
        parent.send((op, corpus.mutate(op)))
        assert parent.recv() == "started"
        time.sleep(rng.uniform(0, 0.5))
        if child.is_alive():
            child.kill()  # SIGKILL
            killed += 1
        child.join()
        previous = f"run {i} ({op}, exit code {child.exitcode})"
    print(f"{RUNS} runs, {killed} killed mid-way by SIGKILL; every normal run after was sound")
    assert killed >= RUNS // 2, f"only {killed} of {RUNS} runs were killed mid-way"
