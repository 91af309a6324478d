"""Helpers shared by the benchmark commands."""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

DEFAULT_DATASET = Path(__file__).resolve().parents[1].parent / "shared/data/2wikimultihopqa-dev500"


@contextmanager
def timer() -> Iterator[Callable[[], float]]:
    """``with timer() as elapsed: ...; elapsed()`` gives seconds since entry (frozen at exit)."""
    start = time.perf_counter()
    end: list[float] = []
    yield lambda: (end[0] if end else time.perf_counter()) - start
    end.append(time.perf_counter())


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values`` (nearest-rank on a sorted copy)."""
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def median(values: list[float]) -> float:
    """Median of ``values``."""
    return statistics.median(values)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Rows of a JSON Lines file."""
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def write_results(out_dir: Path, name: str, data: dict[str, Any], markdown: str) -> None:
    """Write ``name.json`` and ``name.md`` under ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{name}.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    (out_dir / f"{name}.md").write_text(markdown, encoding="utf-8")
