"""The state of one query as it moves through the engine's steps."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from llama_kb.config import QueryOptions
from llama_kb.retrieval import explain as debug
from llama_kb.retrieval import trace as observe
from llama_kb.retrieval.index import IndexSnapshot
from llama_kb.retrieval.payload import Classification


@dataclass
class QueryPlan:
    """State of one query between steps."""

    query: str
    options: QueryOptions
    started: float
    snapshot: IndexSnapshot | None = None
    mask: np.ndarray | None = None
    entity_ids: list[str] = field(default_factory=list)
    query_vector: list[float] | None = None
    classification: Classification | None = None
    trace: dict[str, Any] = field(default_factory=dict)
    degraded: list[str] = field(default_factory=list)
    stages: observe.StageRecorder = field(default_factory=observe.StageRecorder)
    parts: debug.ScoreParts | None = None
