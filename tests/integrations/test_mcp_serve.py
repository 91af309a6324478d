"""How ``serve`` prepares a long-lived server process."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from llama_index.core import Document

from llama_kb import KnowledgeBase
from llama_kb.integrations import mcp_server

pytest.importorskip("mcp")


def test_the_server_runs_with_what_it_loaded_frozen(tmp_path: Path, embedding, monkeypatch):
    with KnowledgeBase.open(tmp_path / "kb", embedding=embedding) as kb:
        kb.add_documents([Document(text="Frozen heaps make full collections cheap.")])
    frozen_at_run: list[int] = []

    def run(self, *args, **kwargs) -> None:
        frozen_at_run.append(gc.get_freeze_count())

    from mcp.server.mcpserver import MCPServer

    monkeypatch.setattr(MCPServer, "run", run)
    gc.unfreeze()
    try:
        mcp_server.serve(str(tmp_path / "kb"))
    finally:
        gc.unfreeze()
    assert frozen_at_run and frozen_at_run[0] > 10_000  # the imports and the open stores
