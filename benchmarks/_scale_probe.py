"""One query process for the scale benchmark's memory figures (run as a subprocess).

``python -m benchmarks._scale_probe {kb,chroma} KB_DIR COLLECTION QUESTIONS_JSON TOP_K
[{hash,default}]`` (servers from the environment: ``CHROMA_HOST`` / ``CHROMA_PORT`` /
``FALKORDB_URL``) answers every question, then prints one JSON line: resident memory now and
at its peak (``VmRSS`` / ``VmHWM``), the first query's and the median query's milliseconds.
``kb`` opens the knowledge base and calls ``kb.retrieve``; ``chroma`` opens only the Chroma
collection and queries it with the same embedding: the hashed one (default) or the bundled
model.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _status_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise KeyError(field)


def _embedding(kind: str) -> Any:
    from benchmarks.scale_bench import HashEmbedding
    from llama_kb import default_embedding

    return HashEmbedding() if kind == "hash" else default_embedding()


def _kb_query(kb_dir: str, collection: str, top_k: int, kind: str) -> Callable[[str], object]:
    from benchmarks.scale_bench import limited_extractors
    from llama_kb import KBConfig, KnowledgeBase

    config = KBConfig.from_env(
        Path(kb_dir), env=dict(os.environ), cache_size=0, collection=collection
    )
    kb = KnowledgeBase.open(
        config=config, embedding=_embedding(kind), extractors=limited_extractors()
    )
    return lambda q: kb.retrieve(q, top_k=top_k)


def _chroma_query(kb_dir: str, collection: str, top_k: int, kind: str) -> Callable[[str], object]:
    import chromadb
    from chromadb.config import Settings

    embedding = _embedding(kind)

    settings = Settings(anonymized_telemetry=False)
    if os.environ.get("CHROMA_HOST"):  # the server run
        client: Any = chromadb.HttpClient(
            host=os.environ["CHROMA_HOST"], port=int(os.environ["CHROMA_PORT"]), settings=settings
        )
    else:
        client = chromadb.PersistentClient(path=str(Path(kb_dir) / "chroma"), settings=settings)
    chunks = client.get_collection(collection, embedding_function=None)
    return lambda q: chunks.query(
        query_embeddings=[embedding.get_query_embedding(q)],
        n_results=top_k,
        include=["documents", "metadatas", "distances"],
    )


def main() -> None:
    """Open, answer the questions, print the JSON line."""
    mode, kb_dir, collection, questions_file, top_k = sys.argv[1:6]
    kind = sys.argv[6] if len(sys.argv) > 6 else "hash"
    questions = json.loads(Path(questions_file).read_text(encoding="utf-8"))
    started = time.perf_counter()
    if mode == "kb":
        query = _kb_query(kb_dir, collection, int(top_k), kind)
    else:
        query = _chroma_query(kb_dir, collection, int(top_k), kind)
    open_ms = (time.perf_counter() - started) * 1000
    times: list[float] = []
    for question in questions:
        started = time.perf_counter()
        query(question)
        times.append((time.perf_counter() - started) * 1000)
    print(json.dumps({
        "mode": mode,
        "rss_mb": round(_status_mb("VmRSS"), 1),
        "peak_rss_mb": round(_status_mb("VmHWM"), 1),
        "open_ms": round(open_ms, 1),
        "first_ms": round(times[0], 2),
        "p50_ms": round(statistics.median(times[1:] or times), 2),
    }))  # fmt: skip


if __name__ == "__main__":
    main()
