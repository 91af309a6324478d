"""Ingest throughput of the token chunker vs the character chunker, as a same-process ratio.

After a small warm-up ingest (so loading spaCy and the stores' first-use costs fall on
neither side), each round ingests the same passages (the first ``passages`` of
``corpus.jsonl``) into two fresh knowledge bases, one per chunker, in alternating order
(tokens first in even rounds, characters first in odd ones), so drift in machine load hits
both sides alike. Chunking alone (the whole corpus, no embedding) is timed the same way.
Ratios are tokens / characters per round; the headline is their median.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from benchmarks._common import median, read_jsonl, timer, write_results
from llama_kb import KBConfig, KnowledgeBase, default_embedding
from llama_kb.config import ChunkingConfig
from llama_kb.ingest.chunker import Chunker
from llama_kb.ingest.readers import read_path

UNITS = ("tokens", "characters")


def run(dataset: Path, out_dir: Path, passages: int = 500, rounds: int = 3) -> dict[str, Any]:
    """Measure and report; returns the figures."""
    corpus = dataset / "corpus.jsonl"
    embedding = default_embedding()
    embedding.get_text_embedding_batch(["warm up the model"] * 8)
    documents = read_path(corpus).documents
    chunkers = {u: Chunker(ChunkingConfig(unit=u), embedding) for u in UNITS}  # type: ignore[arg-type]
    per_round: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        sample = Path(tmp) / "sample.jsonl"
        rows = read_jsonl(corpus)[:passages]
        sample.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
        warm_up = Path(tmp) / "warm-up.jsonl"  # first-use costs (spaCy, SQLite) land on no side
        warm_up.write_text("\n".join(json.dumps(r) for r in rows[:20]), encoding="utf-8")
        with KnowledgeBase.open(Path(tmp) / "kb-warm-up", embedding=embedding) as kb:
            kb.ingest(warm_up)
        for number in range(rounds):
            order = UNITS if number % 2 == 0 else UNITS[::-1]
            seconds: dict[str, float] = {}
            chunk_seconds: dict[str, float] = {}
            chunks: dict[str, int] = {}
            for unit in order:
                with timer() as chunking:
                    for doc in documents:
                        chunkers[unit](doc)
                chunk_seconds[unit] = chunking()
                config = KBConfig.build(
                    path=Path(tmp) / f"kb-{number}-{unit}", chunking={"unit": unit}
                )
                with (
                    KnowledgeBase.open(config=config, embedding=embedding) as kb,
                    timer() as ingest,
                ):
                    report = kb.ingest(sample)
                seconds[unit] = ingest()
                chunks[unit] = report.chunks_embedded
            per_round.append(
                {
                    "order": list(order),
                    "ingest_seconds": {u: round(s, 2) for u, s in seconds.items()},
                    "chunks": chunks,
                    "ingest_ratio": round(seconds["tokens"] / seconds["characters"], 3),
                    "chunking_ratio": round(
                        chunk_seconds["tokens"] / chunk_seconds["characters"], 3
                    ),
                }
            )
    figures = {
        "dataset": dataset.name,
        "passages": len(rows),
        "corpus_documents_chunked": len(documents),
        "rounds": per_round,
        "ingest_ratio_median": round(median([r["ingest_ratio"] for r in per_round]), 4),
        "chunking_ratio_median": round(median([r["chunking_ratio"] for r in per_round]), 3),
    }
    table = _markdown(figures)
    write_results(out_dir, f"chunkers-{dataset.name}", figures, table)
    print(table)
    return figures


def _markdown(figures: dict[str, Any]) -> str:
    lines = [
        f"Dataset `{figures['dataset']}`: ingest of the first {figures['passages']} passages "
        f"into fresh knowledge bases; chunking alone over all {figures['corpus_documents_chunked']}"
        " documents. Ratios are tokens / characters, timed alternately in one process.",
        "",
        "| round | order | chunks tokens / characters | ingest ratio | chunking ratio |",
        "|---|---|---|---|---|",
    ]
    for number, r in enumerate(figures["rounds"], 1):
        lines.append(
            f"| {number} | {' then '.join(r['order'])} | {r['chunks']['tokens']} / "
            f"{r['chunks']['characters']} | {r['ingest_ratio']}x | {r['chunking_ratio']}x |"
        )
    lines.append(
        f"| median | | | **{figures['ingest_ratio_median']}x** | "
        f"{figures['chunking_ratio_median']}x |"
    )
    return "\n".join(lines) + "\n"
