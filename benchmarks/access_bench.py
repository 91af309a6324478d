"""Access scopes on vs off: ``kb.retrieve`` latency at 10k passages, half of them private.

The same replicated corpus (:mod:`benchmarks.scale_corpus`) is ingested twice with the cheap
:class:`~benchmarks.scale_bench.HashEmbedding` (so retrieval cost, not the model, is what is
compared): once all public ("off"), once with every second passage private, spread over four
keys (two users, an organization, an organization group). Each question is then asked of both,
alternating which goes first, with the query cache off; the "on" side asks as a principal who
reads the public half and two of the private keys (a restricted view: every lookup filtered by
access, BM25 over the visible rows). Figures are ratios on vs off, measured in one process.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from llama_index.core import Document

from benchmarks._common import median, percentile, write_results
from benchmarks.scale_bench import HashEmbedding, limited_extractors
from benchmarks.scale_corpus import ReplicatedCorpus
from llama_kb import KBConfig, KnowledgeBase, Principal

PRIVATE_KEYS = ("user:u0", "org:o0", "user:u1", "org:o1#g1")
PRINCIPAL = Principal(user_id="u0", org_id="o0")
TOP_K = 10
BATCH = 1000


def run(out_dir: Path, size: int = 10_000, questions: int = 200) -> dict[str, Any]:
    """Ingest both knowledge bases (reused when already complete) and compare latency."""
    corpus = ReplicatedCorpus()
    asked = [q.text for q in corpus.questions_for(size, questions)]
    kbs = {side: _filled(out_dir / f"access-kb-{side}", corpus, size, side == "on")
           for side in ("off", "on")}  # fmt: skip
    try:
        for question in asked[:3]:  # warm up both
            kbs["off"].retrieve(question, top_k=TOP_K)
            kbs["on"].retrieve(question, top_k=TOP_K, principal=PRINCIPAL)
        times: dict[str, list[float]] = {"off": [], "on": []}
        visible = []
        for i, question in enumerate(asked):
            order = ("off", "on") if i % 2 == 0 else ("on", "off")
            for side in order:
                principal = PRINCIPAL if side == "on" else None
                started = time.perf_counter()
                context = kbs[side].retrieve(question, top_k=TOP_K, principal=principal)
                times[side].append((time.perf_counter() - started) * 1000)
                if side == "on":
                    visible.append(all(_readable(h.metadata) for h in context.unstructured))
    finally:
        for kb in kbs.values():
            kb.close()
    figures = {
        "passages": size,
        "private_share": 0.5,
        "private_keys": list(PRIVATE_KEYS),
        "principal": "u0@o0 (reads public, user:u0, org:o0)",
        "questions": len(asked),
        "embedding": HashEmbedding().model_name,
        "off_p50_ms": round(median(times["off"]), 2),
        "on_p50_ms": round(median(times["on"]), 2),
        "p50_ratio": round(median(times["on"]) / median(times["off"]), 3),
        "p90_ratio": round(percentile(times["on"], 90) / percentile(times["off"], 90), 3),
        "results_only_readable": all(visible),
    }
    text = json.dumps(figures, indent=2) + "\n"
    write_results(out_dir, "access", figures, text)
    print(text, flush=True)
    return figures


def _readable(metadata: dict[str, Any]) -> bool:
    return PRINCIPAL.can_read(str(metadata.get("access", "public")))


def _open(path: Path) -> KnowledgeBase:
    config = KBConfig(path=path, cache_size=0)
    return KnowledgeBase.open(config=config, embedding=HashEmbedding(),
                              extractors=limited_extractors())  # fmt: skip


def _filled(path: Path, corpus: ReplicatedCorpus, size: int, private: bool) -> KnowledgeBase:
    """The knowledge base at ``path`` holding ``size`` passages (ingested when new)."""
    kb = _open(path)
    stored = len(kb.documents())
    if stored == size:
        return kb
    if stored:
        kb.close()
        raise SystemExit(f"{path} holds {stored} passages, not {size}: delete it and run again")
    for start in range(0, size, BATCH):
        by_access: dict[str, list[Document]] = {}
        for position, p in enumerate(corpus.passages(start, min(size, start + BATCH)), start):
            key = "public"
            if private and position % 2:
                key = PRIVATE_KEYS[(position // 2) % len(PRIVATE_KEYS)]
            doc = Document(text=p["text"], id_=p["id"], metadata={"title": p["title"]})
            by_access.setdefault(key, []).append(doc)
        for key, docs in by_access.items():
            kb.add_documents(docs, access=key)
    return kb
