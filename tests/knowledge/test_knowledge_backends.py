"""The knowledge layers behave the same on embedded stores and on servers (Chroma + FalkorDB)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path

import pytest
import servers
from knowledge_helpers import SEED_QUERY, team_document
from llama_index.core.base.embeddings.base import BaseEmbedding
from servers import unique_name

from llama_kb import KBConfig, KnowledgeBase
from llama_kb.knowledge import KnowledgeProvider, load_knowledge, retrieve_knowledge

chroma_server = servers.chroma_server
falkordb_server = servers.falkordb_server


@pytest.fixture(params=["embedded", pytest.param("servers", marks=pytest.mark.integration)])
def any_kb(
    request: pytest.FixtureRequest, tmp_path: Path, embedding: BaseEmbedding
) -> Iterator[KnowledgeBase]:
    """A knowledge base on embedded stores, or on the session's Chroma and FalkorDB."""
    config = KBConfig(path=tmp_path / "kb")
    if request.param == "servers":
        env = {
            **request.getfixturevalue("chroma_server").env,
            **request.getfixturevalue("falkordb_server").env,
        }
        config = KBConfig.from_env(tmp_path / "kb", env=env, collection=unique_name())
    with KnowledgeBase.open(config=config, embedding=embedding) as kb:
        yield kb


def test_load_retrieve_and_route(any_kb: KnowledgeBase) -> None:
    first = load_knowledge(any_kb, team_document())
    assert first.ok, first.skipped
    assert first.added == {"metadata": 3, "pieces": 5, "nodes": 6, "edges": 5}
    again = load_knowledge(any_kb, team_document())
    assert again.changed == 0, again.to_dict()

    result = retrieve_knowledge(any_kb, "", entity_id="user:alice")
    assert [(p.piece_id, s) for p, s in result.pieces] == [
        ("les-rans-init", 1.0),
        ("dyn-smag-jn042", 0.5),
    ]
    sections = KnowledgeProvider(any_kb, entity_id="user:alice")(SEED_QUERY)
    assert sections["user_profile"] == (
        "specialization: turbomachinery\nteam: aero\n\n"
        "organization: NASA\n\n"
        "MEMBER_OF → team:aero (Aero team)"
    )
    assert sections["instructions"].startswith("[procedure] Initialize transient LES")
    assert "bob-fwh" not in str(sections) and "FW-H" not in str(sections)
    with nullcontext(any_kb.knowledge) as store:
        assert store.pieces.count() == 5
        assert store.pieces.collection.name == f"{any_kb.config.collection}-pieces"
    # on servers nothing but the metadata table is kept locally
    local_chroma = Path(any_kb.config.path) / "chroma"
    assert local_chroma.exists() == (any_kb.config.chroma is None)
