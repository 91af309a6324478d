"""The scale benchmark's table, summary against the issue's bounds, and growth plot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks._common import write_results

PLOT = "scale-growth.png"


def _order(run: dict[str, Any]) -> tuple[int, int]:
    kind = 0 if run["label"].startswith("hash-") else 1 if run["label"].startswith("default") else 2
    return kind, run["passages"]


def load_runs(out_dir: Path) -> list[dict[str, Any]]:
    """Every ``scale-<label>.json`` under ``out_dir``: hash sizes, then default, then servers."""
    runs = [
        json.loads(p.read_text(encoding="utf-8"))
        for p in out_dir.glob("scale-*.json")
        if p.name != "scale.json"
    ]
    return sorted(runs, key=_order)


def _cell(run: dict[str, Any], path: str) -> str:
    value: Any = run
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            return ""
        value = value[key]
    return str(value)


_ROWS = (
    ("embedding", "embedding"),
    ("backend", "backend"),
    ("questions", "questions"),
    ("first ingest, s", "ingest_seconds"),
    ("raw Chroma query p50 / p95, ms", "raw_p50_ms|raw_p95_ms"),
    ("`kb.retrieve` p50 / p95, ms", "retrieve_p50_ms|retrieve_p95_ms"),
    ("**p50 ratio** (<= 1.5 at 10k, <= 2 at 100k)", "p50_ratio"),
    ("**p95 ratio** (<= 2.5 at 100k)", "p95_ratio"),
    ("first query after reopening / p50 (<= 2)", "first_after_open_ratio"),
    ("first query in a fresh process / its p50 (<= 2)", "memory.fresh_process_first_query_ratio"),
    ("first query after adding 1 doc / p50 (<= 2)", "first_after_add_ratio"),
    ("the same first queries / that question warm: reopen, fresh process, add",
     "first_after_open_same_question_ratio|memory.fresh_process_same_question_ratio|"
     "first_after_add_same_question_ratio"),
    ("RSS query process / Chroma-only process, MB", "memory.kb_process.rss_mb|"
     "memory.chroma_process.rss_mb"),
    ("**RSS ratio** (<= 1.5 at 100k)", "memory.rss_ratio"),
    ("1 % add / change / remove, ms per doc", "writes.add_ms_per_doc|writes.change_ms_per_doc|"
     "writes.remove_ms_per_doc"),
    ("1 % add / change / remove, % of first ingest (<= 2 default)",
     "writes.add_share_of_ingest_pct|writes.change_share_of_ingest_pct|"
     "writes.remove_share_of_ingest_pct"),
    ("recall@5 raw / retrieve", "recall_at_5.raw|recall_at_5.retrieve"),
    ("CPU ms per question, raw: client / Chroma server / FalkorDB",
     "cpu_ms_per_question.raw.client|cpu_ms_per_question.raw.chroma|"
     "cpu_ms_per_question.raw.falkordb"),
    ("CPU ms per question, `kb.retrieve`: client / Chroma server / FalkorDB",
     "cpu_ms_per_question.retrieve.client|cpu_ms_per_question.retrieve.chroma|"
     "cpu_ms_per_question.retrieve.falkordb"),
)  # fmt: skip


def _growth(runs: list[dict[str, Any]]) -> list[str]:
    hashed = [r for r in runs if r["label"].startswith("hash-")]
    if len(hashed) < 2:
        return []
    small, large = hashed[0], hashed[-1]
    lines = [
        f"Growth from {small['passages']} to {large['passages']} passages (hash embedding): "
        f"`kb.retrieve` p50 x{large['retrieve_p50_ms'] / small['retrieve_p50_ms']:.2f}, "
        f"raw Chroma p50 x{large['raw_p50_ms'] / small['raw_p50_ms']:.2f}."
    ]
    if "writes" in small and "writes" in large:
        per_doc = ", ".join(
            f"{op} x{large['writes'][f'{op}_ms_per_doc'] / small['writes'][f'{op}_ms_per_doc']:.2f}"
            for op in ("add", "change", "remove")
        )
        lines.append(f"Per-document write cost, largest / smallest (<= 1.3): {per_doc}.")
    return lines


def markdown(runs: list[dict[str, Any]]) -> str:
    """The table (one column per run) and the growth lines."""
    head = "| | " + " | ".join(r["label"] for r in runs) + " |"
    rows = [head, "|---" * (len(runs) + 1) + "|"]
    for title, paths in _ROWS:
        cells = [" / ".join(_cell(r, p) for p in paths.split("|")).strip(" /") for r in runs]
        rows.append(f"| {title} | " + " | ".join(cells) + " |")
    notes = [
        "",
        "Query cache off (`cache_size=0`); top_k=10; latencies measured alternating per question "
        "in one process; raw Chroma query = `kb.search` (embed + one Chroma query). Graph "
        f"extractors: {runs[0]['extractors'] if runs else ''}. `hash-*` use a hashed "
        "bag-of-words embedding (no model), `default-*` the bundled MiniLM.",
        *_growth(runs),
    ]
    return "\n".join(rows + notes) + "\n"


def plot(runs: list[dict[str, Any]], path: Path) -> None:
    """Growth curve: p50 / p95 of ``kb.retrieve`` and the raw query, and their p50 ratio."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    hashed = [r for r in runs if r["label"].startswith("hash-")]
    if not hashed:
        return
    sizes = [r["passages"] for r in hashed]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for key, label, style in (
        ("retrieve_p50_ms", "kb.retrieve p50", "o-"),
        ("retrieve_p95_ms", "kb.retrieve p95", "o--"),
        ("raw_p50_ms", "raw Chroma p50", "s-"),
        ("raw_p95_ms", "raw Chroma p95", "s--"),
    ):
        left.plot(sizes, [r[key] for r in hashed], style, label=label)
    left.set(xscale="log", xlabel="passages", ylabel="ms", title="Latency (hash embedding)")
    left.legend()
    right.plot(sizes, [r["p50_ratio"] for r in hashed], "o-", label="p50 ratio")
    right.plot(sizes, [r["p95_ratio"] for r in hashed], "o--", label="p95 ratio")
    right.axhline(2.0, color="grey", linestyle=":", label="bound 2x")
    right.set(xscale="log", xlabel="passages", ylabel="kb.retrieve / raw", title="Ratio")
    right.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_report(out_dir: Path, images: Path | None) -> dict[str, Any]:
    """Combine every finished run into ``scale.json`` / ``scale.md`` (and the plot)."""
    runs = load_runs(out_dir)
    table = markdown(runs)
    write_results(out_dir, "scale", {"runs": runs}, table)
    if images is not None:
        plot(runs, images / PLOT)
    print(table)
    return {"runs": runs}
