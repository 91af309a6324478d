"""The MCP face under access scopes: the server's principal is fixed by whoever starts it.

Two real server processes over stdio (the SDK's client) on one knowledge base: anonymous, and
``--as dana@`` (the owner of a private document). ``retrieve`` and ``search`` of the
anonymous server never return the private document, in text, ids or facts.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from llama_index.core import Document
from mcp_helpers import BlockingSession, server_params
from scripted_memory_llm import ITEM

from llama_kb import KnowledgeBase

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SECRET = "heronsbill"


@pytest.fixture(scope="module")
def kb_dir(tmp_path_factory: pytest.TempPathFactory, embedding) -> Path:
    root = tmp_path_factory.mktemp("mcp-access") / "kb"
    with KnowledgeBase.open(root, embedding=embedding) as kb:
        kb.add_documents([Document(text="Project Falcon is a public robot programme.")])
        kb.add_documents(
            [Document(text="Project Falcon hides the codeword Heronsbill.", id_="plan")],
            access="user:dana",
        )
    return root


def _session(kb_dir: Path, *extra: str, env: dict[str, str] | None = None) -> BlockingSession:
    params = server_params("--kb", str(kb_dir), *extra, env=env)
    return BlockingSession(params, kb_dir.parent / "s.log")


def _texts(kb_dir: Path, *extra: str) -> str:
    session = _session(kb_dir, *extra)
    try:
        found = []
        for tool in ("retrieve", "search"):
            result = session.tool(tool, query="Project Falcon codeword", top_k=10)
            assert not result.is_error, result.content[0].text
            found.append(json.dumps(result.structured_content))
        return " ".join(found).lower()
    finally:
        session.close()


def test_an_anonymous_server_serves_public_records_only(kb_dir: Path) -> None:
    seen = _texts(kb_dir)
    assert "falcon" in seen and SECRET not in seen and '"plan' not in seen


def test_a_server_started_as_the_owner_serves_its_records(kb_dir: Path) -> None:
    assert SECRET in _texts(kb_dir, "--as", "dana@")


CONVERSATION = [
    {"id": "m1", "role": "user", "content": "I like the Heronsbill layout for Falcon reports."},
    {"id": "m2", "role": "assistant", "content": "Noted."},
]


def test_remember_over_mcp_stores_pieces_for_the_servers_principal(kb_dir: Path) -> None:
    anonymous = _session(kb_dir)
    try:
        refused = anonymous.tool("remember", messages=CONVERSATION)
        assert refused.is_error and "needs a principal" in refused.content[0].text
    finally:
        anonymous.close()
    env = {
        "LLAMA_KB_LLM": "scripted_memory_llm:answer",
        "PYTHONPATH": f"{Path(__file__).parents[2]}{os.pathsep}{Path(__file__).parent}",
    }
    dana = _session(kb_dir, "--as", "dana@", env=env)
    try:
        stored = dana.tool("remember", messages=CONVERSATION, conversation_id="c1")
        assert not stored.is_error, stored.content[0].text
        assert stored.structured_content["outcomes"][0]["access"] == "user:dana"
        found = dana.tool("retrieve", query="Which layout does Dana prefer for reports?")
        assert ITEM in json.dumps(found.structured_content["knowledge"])
    finally:
        dana.close()
    assert ITEM.lower() not in _texts(kb_dir)
