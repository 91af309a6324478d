"""Dense search explores enough HNSW candidates to return the exact nearest chunks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from llama_kb.stores.chroma_vector import SEARCH_EF, embedded_client, open_collection

_ROWS, _DIM, _K = 3000, 48, 30
_LEGACY = """
import sys
from pathlib import Path
import numpy as np
from llama_kb.stores.chroma_vector import embedded_client
vectors = np.random.default_rng(0).normal(size=({rows}, {dim})).astype(np.float32)
made = embedded_client(Path(sys.argv[1])).get_or_create_collection(
    "legacy", embedding_function=None, metadata={{"hnsw:space": "cosine"}}
)
for start in range(0, {rows}, 1000):
    ids = [str(i) for i in range(start, start + 1000)]
    made.add(ids=ids, embeddings=vectors[start:start + 1000])
"""


def _vectors() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    stored = rng.normal(size=(_ROWS, _DIM)).astype(np.float32)
    asked = rng.normal(size=(60, _DIM)).astype(np.float32)
    return stored, asked


def _overlap(collection: object, stored: np.ndarray, asked: np.ndarray) -> float:
    """Mean share of the exact ``_K`` nearest (cosine) that the collection returns."""
    unit = stored / np.linalg.norm(stored, axis=1, keepdims=True)
    shares = []
    for query in asked:
        exact = {str(i) for i in np.argsort(-(unit @ query))[:_K]}
        found = collection.query(query_embeddings=[query.tolist()], n_results=_K)  # type: ignore[attr-defined]
        shares.append(len(exact & set(found["ids"][0])) / _K)
    return float(np.mean(shares))


def test_a_new_collection_returns_the_exact_nearest_chunks(tmp_path: Path) -> None:
    stored, asked = _vectors()
    collection = open_collection(embedded_client(tmp_path), "fresh")
    for start in range(0, _ROWS, 1000):
        ids = [str(i) for i in range(start, start + 1000)]
        collection.add(ids=ids, embeddings=stored[start : start + 1000])
    assert collection.configuration["hnsw"]["ef_search"] == SEARCH_EF
    assert _overlap(collection, stored, asked) >= 0.995


def test_a_collection_made_with_chroma_defaults_is_raised_when_opened(tmp_path: Path) -> None:
    script = _LEGACY.format(rows=_ROWS, dim=_DIM)
    subprocess.run([sys.executable, "-c", script, str(tmp_path)], check=True)
    stored, asked = _vectors()
    client = embedded_client(tmp_path)
    before = _overlap(client.get_collection("legacy"), stored, asked)
    assert before < 0.99  # Chroma's default ef_search misses some of the exact nearest
    opened = open_collection(embedded_client(tmp_path), "legacy")
    assert opened.configuration["hnsw"]["ef_search"] == SEARCH_EF
    check = "\n".join(
        [
            "import sys, numpy as np",
            "from pathlib import Path",
            "from llama_kb.stores.chroma_vector import embedded_client, open_collection",
            "from tests.stores.test_chroma_search_ef import _overlap, _vectors",
            "stored, asked = _vectors()",
            "c = open_collection(embedded_client(Path(sys.argv[1])), 'legacy')",
            "print(_overlap(c, stored, asked))",
        ]
    )
    out = subprocess.run(
        [sys.executable, "-c", check, str(tmp_path)], check=True, capture_output=True, text=True
    )
    assert float(out.stdout.strip().splitlines()[-1]) >= 0.995
