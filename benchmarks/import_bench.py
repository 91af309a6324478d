"""Import-time benchmark: what ``import llama_kb`` and first use cost in a fresh interpreter.

``python -m benchmarks import`` runs each probe in new processes (``--repeat`` times, median
reported) so nothing is cached in ``sys.modules``; the target is ``import llama_kb`` < 0.5 s.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from benchmarks._common import median, write_results

TARGET_S = 0.5

PROBES: dict[str, str] = {
    "import llama_kb": "import llama_kb",
    "import langchain_kb": "import langchain_kb",
    "from llama_kb import KnowledgeBase": "from llama_kb import KnowledgeBase",
    "llama-kb --version": "from llama_kb.cli import main; main(['--version'])",
}
"""Probe name -> the statement timed (the interpreter's own start-up is not counted)."""

HEAVY = ("llama_index", "chromadb", "onnxruntime", "langchain_core")


def _probe(statement: str) -> tuple[float, list[str]]:
    """Seconds ``statement`` takes in a fresh interpreter, and the heavy packages it loaded."""
    script = (
        "import sys, time\n"
        "t = time.perf_counter()\n"
        f"{statement}\n"
        "elapsed = time.perf_counter() - t\n"
        f"print(elapsed, *[m for m in {HEAVY!r} if m in sys.modules])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    elapsed, *loaded = done.stdout.strip().splitlines()[-1].split()  # after any output
    return float(elapsed), loaded


def run(out_dir: Path, repeat: int = 5) -> dict[str, Any]:
    """Time every probe ``repeat`` times; print and write a Markdown table."""
    rows: dict[str, Any] = {}
    for name, statement in PROBES.items():
        runs = [_probe(statement) for _ in range(repeat)]
        rows[name] = {
            "median_s": round(median([seconds for seconds, _ in runs]), 3),
            "max_s": round(max(seconds for seconds, _ in runs), 3),
            "heavy_modules_loaded": runs[0][1],
        }
    lines = [
        f"| statement (fresh interpreter, median of {repeat}) | seconds | heavy packages loaded |",
        "|---|---|---|",
    ]
    for name, row in rows.items():
        loaded = ", ".join(row["heavy_modules_loaded"]) or "none"
        lines.append(f"| `{name}` | {row['median_s']:.3f} | {loaded} |")
    verdict = rows["import llama_kb"]["median_s"] < TARGET_S
    lines.append("")
    lines.append(f"`import llama_kb` under {TARGET_S} s: {'yes' if verdict else 'NO'}")
    markdown = "\n".join(lines)
    data = {"repeat": repeat, "target_s": TARGET_S, "probes": rows, "meets_target": verdict}
    write_results(out_dir, "import", data, markdown)
    print(markdown)
    return data
