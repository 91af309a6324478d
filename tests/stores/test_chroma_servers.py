"""Chunks on a real Chroma server behave like the embedded store; faults are llama-kb errors."""

from __future__ import annotations

from pathlib import Path

import pytest
import servers
from servers import free_port, unique_name

from llama_kb.config import ChromaServerConfig, KBConfig
from llama_kb.errors import BackendUnavailable
from llama_kb.stores.chroma_server import ChromaServerChunkStore
from llama_kb.stores.chroma_vector import ChromaChunkStore, embedded_client, open_collection
from llama_kb.stores.factory import open_vector_store
from llama_kb.types import TextChunk

chroma_server = servers.chroma_server  # the session fixture


def chunks() -> list[TextChunk]:
    return [
        TextChunk(
            chunk_id=f"c{i}",
            doc_id=f"d{i % 2}",
            text=f"text {i}",
            chunk_index=i,
            content_hash=f"h{i}",
            metadata={"doc_id": f"d{i % 2}", "chunk_index": i},
        )
        for i in range(4)
    ]


VECTORS = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.7, 0.7, 0.0]]


@pytest.mark.integration
def test_server_store_matches_embedded(chroma_server, tmp_path: Path) -> None:
    config = KBConfig.from_env(tmp_path, env=chroma_server.env, collection=unique_name())
    server = open_vector_store(config, tmp_path)
    assert isinstance(server, ChromaServerChunkStore)
    assert not (tmp_path / "chroma").exists()
    embedded = ChromaChunkStore.from_collection(
        open_collection(embedded_client(tmp_path / "embedded"), "same")
    )
    for store in (server, embedded):
        store.add(chunks(), VECTORS)
    for store in (server, embedded):
        assert store.count() == 4
        hits = store.query([1.0, 0.1, 0.0], top_k=2)
        assert [h.chunk_id for h in hits] == ["c0", "c3"]
        assert store.query([1.0, 0.1, 0.0], top_k=4, filters={"doc_id": "d1"})[0].chunk_id == "c3"
        assert sorted(c for c, _, _ in store.iter_chunks(page_size=3)) == ["c0", "c1", "c2", "c3"]
        assert store.get_chunks(["c1", "nope"])["c1"][0] == "text 1"
        store.delete_documents(["d0"])
        assert sorted(c for c, _, _ in store.iter_chunks()) == ["c1", "c3"]


def test_unreachable_server_names_backend_address_and_fix(tmp_path: Path) -> None:
    port = free_port()
    config = KBConfig.build(
        path=tmp_path,
        chroma=ChromaServerConfig(host="127.0.0.1", port=port, headers={"x-token": "hush"}),
    )
    with pytest.raises(BackendUnavailable) as caught:
        open_vector_store(config, tmp_path)
    message = str(caught.value)
    assert f"Chroma server at http://127.0.0.1:{port} is unreachable" in message
    assert "docker compose -f docker/compose.yaml up -d chroma" in message
    assert "unset CHROMA_HOST" in message
    assert "hush" not in message and "hush" not in repr(config)
