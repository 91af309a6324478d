"""The MCP face under access scopes: the server's principal is fixed by whoever starts it.

Two real server processes over stdio (the SDK's client) on one knowledge base: anonymous, and
``--as dana@`` (the owner of a private document). ``retrieve`` and ``search`` of the
anonymous server never return the private document, in text, ids or facts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from llama_index.core import Document
from mcp_helpers import BlockingSession, server_params

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


def _texts(kb_dir: Path, *extra: str) -> str:
    session = BlockingSession(server_params("--kb", str(kb_dir), *extra), kb_dir.parent / "s.log")
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
