"""Each knowledge base owns its server namespaces (seed 001 multi-tenancy, issue 14).

Against a Chroma server and FalkorDB started by the tests: two knowledge bases that do not
name a collection get their own (derived from their directory); two that name the same one
cannot both use it; reopening with another collection than the stored one is refused.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import servers
from llama_index.core import Document
from llama_index.core.base.embeddings.base import BaseEmbedding
from servers import unique_name

from llama_kb import KBConfig, KnowledgeBase
from llama_kb.errors import KnowledgeBaseError

chroma_server = servers.chroma_server
falkordb_server = servers.falkordb_server

pytestmark = pytest.mark.integration


@pytest.fixture
def server_env(
    chroma_server: servers.ChromaServer, falkordb_server: servers.FalkorDBServer
) -> dict:
    return {**chroma_server.env, **falkordb_server.env}


def _open(path: Path, env: dict, embedding: BaseEmbedding, **overrides: object) -> KnowledgeBase:
    return KnowledgeBase.open(config=KBConfig.from_env(path, env=env, **overrides),
                              embedding=embedding)  # fmt: skip


def test_two_bases_on_one_server_do_not_share(
    tmp_path: Path, server_env: dict, embedding: BaseEmbedding
) -> None:
    one, two = tmp_path / unique_name("one"), tmp_path / unique_name("two")
    with _open(one, server_env, embedding) as first, _open(two, server_env, embedding) as second:
        first.add_documents([Document(text="Heronsbill is the first base's secret word.")])
        assert first.config.collection != second.config.collection
        assert second.vectors.count() == 0 and second.graph.count_nodes() == 0
        context = second.retrieve("Heronsbill", min_score=0, top_k=20)
        assert not context.unstructured and not context.structured_facts
    stored = json.loads((one / "kb.json").read_text())
    assert stored["collection"] == first.config.collection and stored["id"]


def test_a_collection_of_another_base_is_refused(
    tmp_path: Path, server_env: dict, embedding: BaseEmbedding
) -> None:
    shared = unique_name("shared")
    with _open(tmp_path / "a", server_env, embedding, collection=shared) as first:
        first.add_documents([Document(text="Only the first base wrote this.")])
    with pytest.raises(KnowledgeBaseError, match="belongs to another knowledge base"):
        _open(tmp_path / "b", server_env, embedding, collection=shared)
    with _open(tmp_path / "a", server_env, embedding) as again:  # its own: fine
        assert again.vectors.count() == 1


def test_reopening_with_another_collection_is_refused(
    tmp_path: Path, server_env: dict, embedding: BaseEmbedding
) -> None:
    with _open(tmp_path / "kb", server_env, embedding):
        pass
    with pytest.raises(KnowledgeBaseError, match="was created with collection"):
        _open(tmp_path / "kb", server_env, embedding, collection=unique_name("other"))
