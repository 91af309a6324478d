"""The dense+lexical share beside the walk grows for queries described rather than named."""

from __future__ import annotations

import time

from llama_kb.config import QueryOptions, RankingConfig
from llama_kb.retrieval.plan import QueryPlan
from llama_kb.retrieval.ranking import base_share


def plan(query: str, surfaces: list[str]) -> QueryPlan:
    made = QueryPlan(query, QueryOptions(), time.perf_counter())
    made.entity_ids = [f"entity:{s}" for s in surfaces]
    made.linked_surfaces = list(surfaces)
    return made


RANKING = RankingConfig(base_share=0.03, described_base_share=0.3, described_threshold=0.7)


def test_a_query_made_of_names_keeps_the_small_share():
    named = plan("Who was born first, Adam Smith or Karl Marx?", ["Adam Smith", "Karl Marx"])
    assert base_share(named, RANKING) == 0.03


def test_a_query_whose_bridge_is_described_gets_the_larger_share():
    described = plan(
        "When was the institute that owns the newspaper of Houston's oldest Baptist college "
        "founded?",
        ["Houston"],
    )
    assert base_share(described, RANKING) == 0.3


def test_a_query_with_no_linked_name_is_described():
    assert base_share(plan("which river flows through the capital", []), RANKING) == 0.3


def test_the_threshold_is_inclusive_and_configurable():
    half = plan("Graph Updater owner team", ["Graph Updater"])  # 2 of 4 words unnamed
    assert base_share(half, RANKING) == 0.03
    assert base_share(half, RANKING.model_copy(update={"described_threshold": 0.5})) == 0.3
