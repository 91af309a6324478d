"""Opening a knowledge base answers one internal query: silently, uncached, never failing."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.base.embeddings.base import BaseEmbedding

from llama_kb import KBConfig, KnowledgeBase
from llama_kb.retrieval.engine import WARM_UP_QUERY
from tests.conftest import CountingEmbedding
from tests.retrieval.test_trace import Collector, collector  # noqa: F401 (a fixture)


class QueryCounting(CountingEmbedding):
    """Also counts the queries it embeds."""

    queries_embedded: int = 0

    def _get_query_embedding(self, query: str) -> list[float]:
        self.queries_embedded += 1
        return super()._get_query_embedding(query)


def reopened(example_kb: KnowledgeBase, embedding: BaseEmbedding, **config: Any) -> KnowledgeBase:
    path = Path(example_kb.config.path)
    example_kb.close()
    return KnowledgeBase.open(config=KBConfig(path=path, **config), embedding=embedding)


def test_opening_asks_one_query_that_no_channel_hears_and_no_cache_keeps(
    example_kb: KnowledgeBase,
    embedding: BaseEmbedding,
    collector: Collector,  # noqa: F811
    caplog: pytest.LogCaptureFixture,
) -> None:
    counting = QueryCounting(inner=embedding)
    with caplog.at_level(logging.DEBUG, logger="llama_kb.retrieval"):
        kb = reopened(example_kb, counting)
    with kb:
        assert counting.queries_embedded >= 1  # the warm-up query was embedded and searched
        assert not [e for e in collector.events if "KBRetrieval" in type(e).__name__]
        assert WARM_UP_QUERY not in caplog.text  # the one-line summary was not logged
        context = kb.retrieve(WARM_UP_QUERY, top_k=1)
        assert context.trace.get("cache") == "miss"  # the warm-up left nothing cached
        assert [e for e in collector.events if "KBRetrieval" in type(e).__name__]


def test_a_knowledge_base_requiring_a_principal_still_warms_up(
    example_kb: KnowledgeBase, embedding: BaseEmbedding
) -> None:
    counting = QueryCounting(inner=embedding)
    with reopened(example_kb, counting, access={"require_principal": True}):
        assert counting.queries_embedded >= 1


def test_a_failing_warm_up_is_only_logged(
    example_kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def down(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("graph store down")

    monkeypatch.setattr(example_kb.engine, "_search", down)
    with caplog.at_level(logging.DEBUG, logger="llama_kb.retrieval.engine"):
        example_kb.engine.warm_up()
    assert "the warm-up query failed: graph store down" in caplog.text


def test_without_warm_up_opening_embeds_nothing(
    example_kb: KnowledgeBase, embedding: BaseEmbedding
) -> None:
    counting = QueryCounting(inner=embedding)
    path = Path(example_kb.config.path)
    example_kb.close()
    with KnowledgeBase.open(path, embedding=counting, warm_up=False):
        assert counting.queries_embedded == 0
