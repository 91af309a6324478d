"""Retrieval at 10k / 30k / 100k passages: ``kb.retrieve`` against a raw Chroma query.

Corpora come from :mod:`benchmarks.scale_corpus` (the shared data sets replicated with new
ids and perturbed names). Every figure is measured through the public API with the query
cache off (``KBConfig(cache_size=0)``), and every latency is a ratio to the raw dense query
(``kb.search``: embed the question + one Chroma query, same ``top_k``) measured in the same
process, alternating per question. Graph extraction is limited to the structure and record
extractors (the spaCy sentence facts are off) to keep a 100k ingest within reach.

Runs, each written as ``scale-<label>.json`` as soon as it finishes:

* ``hash-<size>`` for every size: the cheap :class:`HashEmbedding`, so only retrieval cost
  grows (the growth curve), plus resident memory against a Chroma-only process;
* ``default-<size>``: the bundled MiniLM embedding, for the latency ratio a user sees and the
  cost of a 1 % change as a share of the first ingest;
* ``servers-hash-<size>``: a Chroma server + FalkorDB started locally.
"""

from __future__ import annotations

import json
import logging
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from typing import Any

from llama_index.core import Document
from llama_index.core.base.embeddings.base import BaseEmbedding

from benchmarks._common import median, percentile, timer, write_results
from benchmarks._cpu_clock import CpuClock
from benchmarks._hash_embed import DIMENSION, hash_vector
from benchmarks.scale_corpus import ReplicatedCorpus, ScaleQuestion
from benchmarks.scale_report import write_report
from llama_kb import KBConfig, KnowledgeBase, default_embedding
from llama_kb.ingest.extractors import GraphExtractor, RecordExtractor, StructureExtractor

logger = logging.getLogger(__name__)

TOP_K = 10
GROWTH_KB = "hash"
BATCH = 1000
WARM_UP = 3
EXTRACTORS_NOTE = "structure + records (spaCy sentence facts off)"


class HashEmbedding(BaseEmbedding):
    """Hashed bag of words in 384 dimensions: deterministic, no model, ~0.5 ms per passage.

    Labelled ``hash-bow-384`` in the results. Not an embedding to retrieve with: it keeps the
    model's cost out of the growth curve so that only retrieval cost grows.
    """

    model_name: str = "hash-bow-384"

    @classmethod
    def class_name(cls) -> str:
        return "HashEmbedding"

    @property
    def dimension(self) -> int:
        return DIMENSION

    def _get_query_embedding(self, query: str) -> list[float]:
        return hash_vector(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return hash_vector(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return hash_vector(text)


def limited_extractors() -> list[GraphExtractor]:
    """The graph extractors used by this benchmark (see :data:`EXTRACTORS_NOTE`)."""
    return [StructureExtractor(), RecordExtractor()]


def run(
    out_dir: Path,
    sizes: list[int],
    default_size: int = 10_000,
    server_size: int = 30_000,
    questions: int = 200,
    images: Path | None = Path("docs/images"),
    resume: bool = False,
    server_embedding: str = "hash",
) -> dict[str, Any]:
    """Measure every size with the cheap embedding, then the default and server runs.

    Args:
        out_dir: Where ``scale-*.json``, ``scale.md`` and the knowledge bases go.
        sizes: Corpus sizes (passages) for the growth curve.
        default_size: Size measured with the default embedding; 0 skips it.
        server_size: Size measured on a Chroma server + FalkorDB; 0 skips it.
        server_embedding: ``"hash"`` (the growth curve's cheap embedding) or ``"default"``
            (the bundled model, as the embedded bounds are stated) for the server run.
        questions: Questions per size (re-targeted shared questions).
        images: Where the growth plot goes; ``None`` skips the plot.
        resume: Keep the growth knowledge base of an earlier run and ingest only what the
            next size adds (sizes grow one knowledge base, each size adding the passages
            after the previous one).

    Returns:
        The combined figures (also written as ``scale.json`` / ``scale.md``).
    """
    corpus = ReplicatedCorpus()
    if not resume:
        shutil.rmtree(out_dir / "scale-kb" / GROWTH_KB, ignore_errors=True)
    for size in sorted(sizes):
        _run_one(corpus, out_dir, f"hash-{size}", size, questions, HashEmbedding(), memory=True,
                 kb_name=GROWTH_KB)  # fmt: skip
    if default_size:
        _run_one(corpus, out_dir, f"default-{default_size}", default_size, questions,
                 default_embedding(), memory=True)  # fmt: skip
    if server_size:
        _run_servers(corpus, out_dir, server_size, questions, server_embedding)
    return write_report(out_dir, images)


def _run_one(
    corpus: ReplicatedCorpus,
    out_dir: Path,
    label: str,
    size: int,
    count: int,
    embedding: BaseEmbedding,
    memory: bool = False,
    config: KBConfig | None = None,
    env: dict[str, str] | None = None,
    kb_name: str | None = None,
    server_pids: dict[str, int] | None = None,
) -> dict[str, Any]:
    """Ingest up to ``size`` passages (fresh, or growing the ``kb_name`` base) and measure
    (``server_pids``: local servers whose CPU time is counted per question)."""
    kb_dir = out_dir / "scale-kb" / (kb_name or label)
    if kb_name is None:
        shutil.rmtree(kb_dir, ignore_errors=True)
    config = (config or KBConfig()).model_copy(update={"path": kb_dir, "cache_size": 0})
    asked = corpus.questions_for(size, count)
    figures: dict[str, Any] = {
        "label": label,
        "passages": size,
        "questions": len(asked),
        "top_k": TOP_K,
        "embedding": embedding.model_name,
        "extractors": EXTRACTORS_NOTE,
        "backend": "servers" if config.chroma is not None else "embedded",
    }
    opened = lambda: KnowledgeBase.open(  # noqa: E731
        config=config, embedding=embedding, extractors=limited_extractors()
    )
    with opened() as kb:
        have = len(kb.documents())
        seconds, batches = _ingest(kb, corpus, have, size)
        figures["ingested_from"] = have
        figures["ingest_seconds"] = round(seconds + _earlier_ingest(out_dir, label, have), 2)
        figures["ingest_batch_seconds"] = batches
        figures.update(_latency(kb, asked, CpuClock(server_pids)))
        steady = figures["steady_ms_of_first_questions"]
        figures.update(_first_after_add(kb, corpus, size, asked, figures["retrieve_p50_ms"]))
        figures["first_after_add_same_question_ratio"] = round(
            figures["first_after_add_ms"] / steady[0], 2
        )
        figures["writes"] = _writes(kb, corpus, size, figures["ingest_seconds"])
    with timer() as reopen:
        kb = opened()
    with kb:
        started = time.perf_counter()
        kb.retrieve(asked[1].text, top_k=TOP_K)
        first_ms = (time.perf_counter() - started) * 1000
    figures["open_seconds"] = round(reopen(), 3)
    figures["first_after_open_ms"] = round(first_ms, 2)
    figures["first_after_open_ratio"] = round(first_ms / figures["retrieve_p50_ms"], 2)
    figures["first_after_open_same_question_ratio"] = round(first_ms / steady[1], 2)
    if memory:
        kind = "hash" if isinstance(embedding, HashEmbedding) else "default"
        figures["memory"] = _memory(kb_dir, config.collection, asked, env, kind)
    write_results(out_dir, f"scale-{label}", figures, json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2), flush=True)
    return figures


def _earlier_ingest(out_dir: Path, label: str, have: int) -> float:
    """Seconds the earlier run of the growth series spent ingesting its ``have`` passages."""
    if not have:
        return 0.0
    earlier = out_dir / f"scale-{label.rsplit('-', 1)[0]}-{have}.json"
    return float(json.loads(earlier.read_text(encoding="utf-8"))["ingest_seconds"])


def _ingest(
    kb: KnowledgeBase, corpus: ReplicatedCorpus, have: int, size: int
) -> tuple[float, list[float]]:
    """Ingest passages ``have`` .. ``size`` in batches: total and per-batch seconds."""
    batches: list[float] = []
    with timer() as elapsed:
        for start in range(have, size, BATCH):
            with timer() as batch:
                kb.add_documents(_documents(corpus.passages(start, min(size, start + BATCH))))
            batches.append(round(batch(), 2))
            logger.info("ingested %d passages, last batch %.1f s", start + BATCH, batches[-1])
    return elapsed(), batches


def _documents(passages: list[dict[str, Any]]) -> list[Document]:
    return [Document(text=p["text"], id_=p["id"], metadata={"title": p["title"]}) for p in passages]


def _latency(kb: KnowledgeBase, asked: list[ScaleQuestion], clock: CpuClock) -> dict[str, Any]:
    """Raw dense query vs ``kb.retrieve``, alternating which goes first per question; the CPU
    each side costs per question (this process, and the servers ``clock`` reads)."""
    for question in asked[:WARM_UP]:
        kb.search(question.text, top_k=TOP_K)
        kb.retrieve(question.text, top_k=TOP_K)
    raw: list[float] = []
    unified: list[float] = []
    hits = {"raw": 0.0, "retrieve": 0.0}

    def raw_ids(q: str) -> list[str]:
        return [h.doc_id for h in kb.search(q, top_k=TOP_K)]

    def unified_ids(q: str) -> list[str]:
        return [h.doc_id for h in kb.retrieve(q, top_k=TOP_K).unstructured]

    sides: list[tuple[str, Callable[[str], list[str]], list[float]]] = [
        ("raw", raw_ids, raw), ("retrieve", unified_ids, unified)
    ]  # fmt: skip
    for n, question in enumerate(asked):
        for name, call, sink in sides if n % 2 == 0 else sides[::-1]:
            ids, ms = clock.charge(name, partial(_timed, call, question.text))
            sink.append(ms)
            gold = set(question.supporting_ids)
            hits[name] += len(gold & set(list(dict.fromkeys(ids))[:5])) / len(gold)
    p50 = {name: median(values) for name, values in (("raw", raw), ("retrieve", unified))}
    p95 = {name: percentile(v, 0.95) for name, v in (("raw", raw), ("retrieve", unified))}
    return {
        "raw_p50_ms": round(p50["raw"], 2),
        "raw_p95_ms": round(p95["raw"], 2),
        "retrieve_p50_ms": round(p50["retrieve"], 2),
        "retrieve_p95_ms": round(p95["retrieve"], 2),
        "p50_ratio": round(p50["retrieve"] / p50["raw"], 2),
        "p95_ratio": round(p95["retrieve"] / p95["raw"], 2),
        "recall_at_5": {k: round(100 * v / len(asked), 1) for k, v in hits.items()},
        "cpu_ms_per_question": clock.per_call_ms(len(asked)),
        "steady_ms_of_first_questions": [round(ms, 2) for ms in unified[:2]],
    }


def _timed(call: Callable[[str], list[str]], text: str) -> tuple[list[str], float]:
    """``call(text)`` and its milliseconds (the CPU clock's reads stay outside them)."""
    started = time.perf_counter()
    ids = call(text)
    return ids, (time.perf_counter() - started) * 1000


def _first_after_add(
    kb: KnowledgeBase,
    corpus: ReplicatedCorpus,
    size: int,
    asked: list[ScaleQuestion],
    steady_p50: float,
) -> dict[str, Any]:
    """Add one document, time the next query, then delete the document again."""
    passage = corpus.passage(size + size // 100 + 1)
    with timer() as add_time:
        kb.add_documents(_documents([passage]))
    started = time.perf_counter()
    kb.retrieve(asked[0].text, top_k=TOP_K)
    first_ms = (time.perf_counter() - started) * 1000
    kb.delete([passage["id"]])
    return {
        "add_one_ms": round(add_time() * 1000, 2),
        "first_after_add_ms": round(first_ms, 2),
        "first_after_add_ratio": round(first_ms / steady_p50, 2),
    }


def _writes(
    kb: KnowledgeBase, corpus: ReplicatedCorpus, size: int, ingest_seconds: float
) -> dict[str, Any]:
    """Add, change and remove 1 % of the documents: ms per document and share of the ingest."""
    count = max(1, size // 100)
    added = corpus.passages(size, size + count)
    rng = random.Random(size)
    changed = [corpus.passage(i) for i in rng.sample(range(size), count)]
    for passage in changed:
        passage["text"] += " This passage was revised."
    with timer() as add_time:
        kb.add_documents(_documents(added))
    with timer() as change_time:
        kb.add_documents(_documents(changed))
    with timer() as remove_time:
        kb.delete([p["id"] for p in added])
    out: dict[str, Any] = {"documents": count}
    for name, seconds in (
        ("add", add_time()),
        ("change", change_time()),
        ("remove", remove_time()),
    ):
        out[f"{name}_ms_per_doc"] = round(1000 * seconds / count, 2)
        out[f"{name}_share_of_ingest_pct"] = round(100 * seconds / ingest_seconds, 2)
    return out


def _memory(
    kb_dir: Path,
    collection: str,
    asked: list[ScaleQuestion],
    env: dict[str, str] | None = None,
    embedding: str = "hash",
) -> dict[str, Any]:
    """Resident memory of a fresh query process vs a fresh process holding only Chroma and
    the same ``embedding`` (``"hash"`` or ``"default"``; ``env`` points both at servers, if
    any)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump([q.text for q in asked], f)
    try:
        probes = {
            mode: json.loads(
                subprocess.run(
                    [sys.executable, "-m", "benchmarks._scale_probe", mode, str(kb_dir),
                     collection, f.name, str(TOP_K), embedding],
                    check=True, capture_output=True, text=True, env={**os.environ, **(env or {})},
                ).stdout.strip().splitlines()[-1]
            )
            for mode in ("kb", "chroma")
        }  # fmt: skip
    finally:
        Path(f.name).unlink()
    kb, chroma = probes["kb"], probes["chroma"]
    return {
        "kb_process": kb,
        "chroma_process": chroma,
        "rss_ratio": round(kb["rss_mb"] / chroma["rss_mb"], 2),
        "peak_rss_ratio": round(kb["peak_rss_mb"] / chroma["peak_rss_mb"], 2),
        "fresh_process_first_query_ratio": round(kb["first_ms"] / kb["p50_ms"], 2),
        "fresh_process_same_question_ratio": round(kb["first_ms"] / kb["first_again_ms"], 2),
    }


def _run_servers(
    corpus: ReplicatedCorpus, out_dir: Path, size: int, count: int, kind: str = "hash"
) -> None:
    from benchmarks.backends_bench import _servers

    with ExitStack() as stack:
        root = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        pids: dict[str, int] = {}
        env = stack.enter_context(_servers(root / "servers", pids))
        config = KBConfig.from_env(root / "kb", env=env, collection=f"scale-{uuid.uuid4().hex[:8]}")
        embedding = HashEmbedding() if kind == "hash" else default_embedding()
        _run_one(corpus, out_dir, f"servers-{kind}-{size}", size, count, embedding,
                 memory=True, config=config, env=env, server_pids=pids)  # fmt: skip
