"""Paired recall of several knowledge bases over one data set's questions.

Each knowledge base (e.g. the same corpus under two chunkers, or a placebo: the same chunker
with an immaterial change) answers every question with ``kb.retrieve`` (top 30, query cache
off); recall is counted by passage (``doc_id``). Every knowledge base after the first is
compared with the first per question: the mean difference in points with a 95 % paired
bootstrap interval (2,000 resamples, fixed seed), and how many questions gain or lose. Also
per half (the retrieval benchmark's fixed md5 split: parameters are chosen on the even half).
"""

from __future__ import annotations

import hashlib
import random
from pathlib import Path
from typing import Any

from benchmarks._common import read_jsonl, write_results
from llama_kb import KBConfig, KnowledgeBase

KS = (2, 5, 10)
METRICS = (*(f"R@{k}" for k in KS), "all_gold@5")
DEPTH = 30
RESAMPLES = 2000


def question_recall(ranked_docs: list[str], gold: set[str]) -> dict[str, float]:
    """Recall at each cutoff and whether every gold passage is in the top 5."""
    docs = list(dict.fromkeys(ranked_docs))
    scores = {f"R@{k}": len(gold & set(docs[:k])) / len(gold) for k in KS}
    return scores | {"all_gold@5": float(gold <= set(docs[:5]))}


def half_of(question: dict[str, Any]) -> str:
    """``tune`` (even md5 of the id) or ``check`` (odd)."""
    parity = int(hashlib.md5(str(question["id"]).encode()).hexdigest(), 16) % 2
    return "check" if parity else "tune"


def paired_difference(
    ours: list[float], base: list[float], seed: int = 0, resamples: int = RESAMPLES
) -> dict[str, float | int]:
    """Mean of ``ours - base`` in points, its 95 % bootstrap interval, questions up / down."""
    diffs = [a - b for a, b in zip(ours, base, strict=True)]
    n = len(diffs)
    rng = random.Random(seed)
    means = sorted(sum(diffs[rng.randrange(n)] for _ in range(n)) / n for _ in range(resamples))
    return {
        "mean": round(100 * sum(diffs) / n, 2),
        "low": round(100 * means[int(0.025 * resamples)], 2),
        "high": round(100 * means[int(0.975 * resamples) - 1], 2),
        "better": sum(d > 0 for d in diffs),
        "worse": sum(d < 0 for d in diffs),
    }


def _percent(values: list[float]) -> float:
    return round(100 * sum(values) / max(len(values), 1), 2)


def _score(kb_dir: Path, questions: list[dict[str, Any]]) -> list[dict[str, float]]:
    with KnowledgeBase.open(kb_dir, config=KBConfig(cache_size=0), create=False) as kb:
        return [
            question_recall(
                [h.doc_id for h in kb.retrieve(q["question"], top_k=DEPTH).unstructured],
                set(q["supporting_ids"]),
            )
            for q in questions
        ]


def run(
    dataset: Path, out_dir: Path, kb_dirs: list[Path], limit: int | None = None
) -> dict[str, Any]:
    """Score every knowledge base, compare each with the first; returns the figures."""
    if len(kb_dirs) < 2:
        raise ValueError("paired needs at least two knowledge bases (--kbs A,B)")
    questions = read_jsonl(dataset / "questions.jsonl")[:limit]
    scored = [(str(path), _score(path, questions)) for path in kb_dirs]
    halves = [half_of(q) for q in questions]
    base = scored[0][1]
    figures: dict[str, Any] = {"dataset": dataset.name, "questions": len(questions), "rows": []}
    for number, (path, rows) in enumerate(scored):
        row: dict[str, Any] = {"kb": path}
        for part in ("all", "tune", "check"):
            chosen = [r for r, h in zip(rows, halves, strict=True) if part in ("all", h)]
            row[part] = {m: _percent([r[m] for r in chosen]) for m in METRICS}
        if number:
            row["vs_first"] = {
                m: paired_difference([r[m] for r in rows], [r[m] for r in base]) for m in METRICS
            }
        figures["rows"].append(row)
    table = _markdown(figures)
    write_results(out_dir, f"paired-{dataset.name}", figures, table)
    print(table)
    return figures


def _markdown(figures: dict[str, Any]) -> str:
    lines = [
        f"Dataset `{figures['dataset']}`, {figures['questions']} questions, `kb.retrieve` top "
        f"{DEPTH}, recall by passage; differences from the first knowledge base per question "
        "(points, 95 % paired bootstrap, questions better / worse).",
        "",
        "| knowledge base | " + " | ".join(METRICS) + " | tune R@2 / R@5 | check R@2 / R@5 |",
        "|---" * (len(METRICS) + 3) + "|",
    ]
    for row in figures["rows"]:
        if "vs_first" in row:
            cells = [
                f"{d['mean']:+.2f} [{d['low']:+.2f}, {d['high']:+.2f}] {d['better']}/{d['worse']}"
                for d in (row["vs_first"][m] for m in METRICS)
            ]
        else:
            cells = [f"{row['all'][m]:.2f}" for m in METRICS]
        halves = [f"{row[h]['R@2']:.2f} / {row[h]['R@5']:.2f}" for h in ("tune", "check")]
        lines.append(f"| {row['kb']} | " + " | ".join(cells + halves) + " |")
    return "\n".join(lines) + "\n"
