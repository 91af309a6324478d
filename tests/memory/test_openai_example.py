"""The README example against a real OpenAI-compatible LLM (skipped without a key).

Set ``OPENAI_API_KEY`` (and ``OPENAI_BASE_URL`` for another OpenAI-compatible server,
``LLAMA_KB_TEST_LLM_MODEL`` for the model; default ``gpt-4o-mini``) and install
``llama-kb[openai]``.
"""

from __future__ import annotations

import json
import os
from contextlib import closing

import pytest
from conftest import REPO

from llama_kb import KnowledgeBase
from llama_kb.memory import MemoryAudit

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not os.environ.get("OPENAI_API_KEY"), reason="needs OPENAI_API_KEY"),
]


def test_remember_the_example_conversation_twice(kb: KnowledgeBase) -> None:
    openai = pytest.importorskip("llama_index.llms.openai", reason="needs llama-kb[openai]")
    llm = openai.OpenAI(
        model=os.environ.get("LLAMA_KB_TEST_LLM_MODEL", "gpt-4o-mini"),
        api_base=os.environ.get("OPENAI_BASE_URL"),
        temperature=0,
    )
    conversation = json.loads((REPO / "examples" / "memory" / "conversation.json").read_text())
    first = kb.remember(conversation, principal="alice@acme", llm=llm, conversation_id="c1")
    assert first.outcomes and not first.errors
    assert {o.access for o in first.outcomes} <= {"user:alice", "org:acme", "public"}
    second = kb.remember(conversation, principal="alice@acme", llm=llm, conversation_id="c2")
    # the same conversation again adds (almost) nothing new
    assert sum(o.action == "added" for o in second.outcomes) <= 1
    with closing(MemoryAudit(kb.config.path)) as audit:
        assert {r.conversation_id for r in audit.records()} == {"c1", "c2"}
