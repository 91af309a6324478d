"""Restricted dense search on Chroma: the nearest readable chunks, whatever their share."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from llama_kb.stores.chroma_vector import ChromaChunkStore, embedded_client, open_collection
from llama_kb.types import TextChunk


def _store(tmp_path: Path, keys: list[str]) -> tuple[ChromaChunkStore, np.ndarray]:
    client = embedded_client(tmp_path / "chroma")
    store = ChromaChunkStore.from_collection(open_collection(client, "access_test"), client)
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(len(keys), 16))
    chunks = [
        TextChunk(f"c{i}", f"d{i}", f"text {i}", 0, f"h{i}", {"doc_id": f"d{i}", "access": key})
        for i, key in enumerate(keys)
    ]
    store.add(chunks, vectors.tolist())
    return store, vectors


def test_restricted_search_returns_the_nearest_readable_chunks(tmp_path: Path) -> None:
    keys = ["public"] * 70 + ["user:bob"] * 3 + ["user:eve"] * 27
    store, vectors = _store(tmp_path, keys)
    query = vectors[5] + 0.01
    everything = store.query(query.tolist(), len(keys))
    for access in ({"public"}, {"user:bob"}, {"public", "user:bob"}, {"user:zed"}):
        got = store.query(query.tolist(), 5, access=access)
        want = [h.chunk_id for h in everything if h.metadata["access"] in access][:5]
        assert [h.chunk_id for h in got] == want  # over-fetch or, when too few, the where
    rare = store.query(query.tolist(), 5, access={"user:bob"})  # 3 of 100: the where query
    assert {h.chunk_id for h in rare} == {"c70", "c71", "c72"}
