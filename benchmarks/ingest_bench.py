"""Ingest throughput: total ingest time vs embedding the same texts alone; unchanged re-ingest."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from benchmarks._common import timer, write_results
from llama_kb import KBConfig, KnowledgeBase, default_embedding
from llama_kb.config import ChunkingConfig
from llama_kb.ingest.chunker import Chunker, embedding_text
from llama_kb.ingest.readers import read_path


def run(dataset: Path, out_dir: Path, chunk_unit: str = "tokens") -> dict[str, Any]:
    """Measure and report; returns the figures."""
    corpus = dataset / "corpus.jsonl"
    embedding = default_embedding()
    embedding.get_text_embedding_batch(["warm up the model"] * 8)
    chunking = ChunkingConfig(unit=chunk_unit)  # type: ignore[arg-type]
    chunker = Chunker(chunking, embedding)
    chunks = [c for d in read_path(corpus).documents for c in chunker(d)]
    texts = [embedding_text(c) for c in chunks]
    # embedding alone is timed before and after the ingest, so slow drift in machine load
    # biases neither side of the ratio
    with timer() as embed_before:
        embedding.get_text_embedding_batch(texts)
    with (
        tempfile.TemporaryDirectory() as tmp,
        KnowledgeBase.open(
            config=KBConfig(path=Path(tmp) / "kb", chunking=chunking), embedding=embedding
        ) as kb,
    ):
        with timer() as first:
            report = kb.ingest(corpus)
        with timer() as again:
            unchanged = kb.ingest(corpus)
    with timer() as embed_after:
        embedding.get_text_embedding_batch(texts)
    embed_only = (embed_before() + embed_after()) / 2
    passages = len(report.added)
    figures = {
        "chunk_unit": chunk_unit,
        "passages": passages,
        "chunks": report.chunks_embedded,
        "ingest_seconds": round(first(), 2),
        "embed_only_seconds": round(embed_only, 2),
        "passages_per_second": round(passages / first(), 1),
        "ingest_over_embed_ratio": round(first() / embed_only, 3),
        "unchanged_reingest_seconds": round(again(), 3),
        "unchanged_reingest_fraction_pct": round(100 * again() / first(), 2),
        "unchanged_reported": len(unchanged.unchanged),
        "failures": len(report.failed),
        "chunks_over_window": report.chunks_over_window,
    }
    table = "\n".join(
        [
            "| metric | value | target |",
            "|---|---|---|",
            f"| chunker | {chunk_unit} ({figures['chunks']} chunks, "
            f"{figures['chunks_over_window']} over the window) | |",
            f"| passages/s | {figures['passages_per_second']} | |",
            f"| ingest / embed-alone | {figures['ingest_over_embed_ratio']} | <= 1.25 |",
            f"| unchanged re-ingest / first ingest | "
            f"{figures['unchanged_reingest_fraction_pct']} % | <= 5 % |",
            f"| first ingest | {figures['ingest_seconds']} s | |",
            f"| embedding alone | {figures['embed_only_seconds']} s | |",
        ]
    )
    write_results(out_dir, f"ingest-{chunk_unit}", figures, table + "\n")
    print(table)
    return figures
