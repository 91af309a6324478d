"""What a ranking change costs: ``kb.search`` (the raw dense query) against ``kb.retrieve`` with
the default ``RankingConfig`` and with the fields changed, the three timed in turn per question
(the order rotating) in one process, with recall@5 of each side.

Questions and knowledge base: a dataset in the shared JSONL layout with its ingested ``--kb``,
or, with ``--default-size N``, the scale benchmark's replicated corpus of N passages with the
bundled embedding (ingested into ``--kb`` if it holds fewer).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks._common import median, percentile, read_jsonl, write_results
from llama_kb import KBConfig, KnowledgeBase, default_embedding
from llama_kb.config import RankingConfig

TOP_K = 5
WARM_UP = 10


def run(
    out_dir: Path,
    kb_dir: Path,
    changed: dict[str, Any],
    dataset: Path | None = None,
    size: int = 0,
    questions: int = 200,
) -> dict[str, Any]:
    """Time and score the three sides; returns the figures (also written under ``out_dir``)."""
    from benchmarks.scale_bench import ReplicatedCorpus, _ingest, limited_extractors

    corpus = ReplicatedCorpus() if size else None
    if corpus is not None:
        asked = [(q.text, set(q.supporting_ids)) for q in corpus.questions_for(size, questions)]
    else:
        assert dataset is not None
        rows = read_jsonl(dataset / "questions.jsonl")
        asked = [(r["question"], set(r["supporting_ids"])) for r in rows]
    defaults, tried = RankingConfig(), RankingConfig(**changed)
    config = KBConfig(path=kb_dir, cache_size=0)
    extractors = limited_extractors() if corpus is not None else None
    with KnowledgeBase.open(
        config=config, embedding=default_embedding(), extractors=extractors
    ) as kb:
        if corpus is not None and len(kb.documents()) < size:
            _ingest(kb, corpus, len(kb.documents()), size)

        def retrieve(ranking: RankingConfig) -> Callable[[str], list[str]]:
            def call(text: str) -> list[str]:
                kb.engine.ranking = ranking
                return [h.doc_id for h in kb.retrieve(text, top_k=TOP_K).unstructured]

            return call

        sides: dict[str, Callable[[str], list[str]]] = {
            "search": lambda text: [h.doc_id for h in kb.search(text, top_k=TOP_K)],
            "defaults": retrieve(defaults),
            "changed": retrieve(tried),
        }
        for text, _ in asked[:WARM_UP]:
            for call in sides.values():
                call(text)
        figures = _timed(sides, asked)
    figures |= {"ranking_changed": changed, "questions": len(asked), "top_k": TOP_K}
    figures["source"] = f"scale corpus, {size} passages" if size else str(dataset)
    table = _markdown(figures)
    write_results(out_dir, "ranking-cost", figures, table)
    print(table)
    return figures


def _timed(
    sides: dict[str, Callable[[str], list[str]]], asked: list[tuple[str, set[str]]]
) -> dict[str, Any]:
    names = list(sides)
    ms: dict[str, list[float]] = {n: [] for n in names}
    recall: dict[str, float] = {n: 0.0 for n in names}
    for i, (text, gold) in enumerate(asked):
        for name in names[i % 3 :] + names[: i % 3]:
            started = time.perf_counter()
            ids = sides[name](text)
            ms[name].append((time.perf_counter() - started) * 1000)
            recall[name] += len(gold & set(list(dict.fromkeys(ids))[:TOP_K])) / len(gold)
    raw_p50, raw_p95 = median(ms["search"]), percentile(ms["search"], 0.95)
    return {
        name: {
            "p50_ms": round(median(ms[name]), 2),
            "p95_ms": round(percentile(ms[name], 0.95), 2),
            "p50_ratio": round(median(ms[name]) / raw_p50, 2),
            "p95_ratio": round(percentile(ms[name], 0.95) / raw_p95, 2),
            "recall_at_5": round(100 * recall[name] / len(asked), 1),
        }
        for name in names
    }


def _markdown(figures: dict[str, Any]) -> str:
    lines = [
        f"{figures['source']}, {figures['questions']} questions, top {figures['top_k']}; "
        f"changed: `{json.dumps(figures['ranking_changed'])}`",
        "",
        "| side | p50 ms | p95 ms | p50 / search | p95 / search | recall@5 |",
        "|---|---|---|---|---|---|",
    ]
    for name in ("search", "defaults", "changed"):
        f = figures[name]
        lines.append(
            f"| {name} | {f['p50_ms']} | {f['p95_ms']} | {f['p50_ratio']} | {f['p95_ratio']} "
            f"| {f['recall_at_5']} |"
        )
    return "\n".join(lines) + "\n"
