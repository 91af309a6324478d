"""Query classification: semantic, factual or hybrid, with a confidence and a reason.

The default :class:`HeuristicClassifier` needs no LLM and takes microseconds. Any callable
``(query, entities) -> Classification`` can replace it; :class:`LLMClassifier` asks a
LlamaIndex ``LLM`` or a LangChain chat model and falls back to the heuristic on error,
timeout or unparsable output (saying so in the reason).
"""

from __future__ import annotations

import concurrent.futures
import json
import logging
import re
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from llama_kb.retrieval.payload import Classification
from llama_kb.types import Route

logger = logging.getLogger(__name__)

FACTUAL_CUES = (
    "relationship",
    "relationships",
    "related to",
    "relation between",
    "relations between",
    "connects to",
    "connected to",
    "connection between",
    "connections between",
    "linked to",
    "subclass of",
    "property of",
    "properties of",
    "type of",
    "instance of",
    "part of",
    "depends on",
    "dependencies of",
    "belongs to",
    "who owns",
    "who maintains",
    "who leads",
    "who directed",
    "who wrote",
    "who founded",
    "owner of",
)
SEMANTIC_CUES = (
    "describe",
    "explain",
    "how does",
    "how do",
    "how to",
    "purpose of",
    "overview",
    "summarize",
    "summarise",
    "summary of",
    "why does",
    "why do",
    "what is the purpose",
    "tell me about",
    "walk me through",
)


def _cue_pattern(cues: Sequence[str]) -> re.Pattern[str]:
    return re.compile(r"\b(" + "|".join(re.escape(c) for c in cues) + r")\b", re.IGNORECASE)


_FACTUAL = _cue_pattern(FACTUAL_CUES)
_SEMANTIC = _cue_pattern(SEMANTIC_CUES)


@runtime_checkable
class QueryClassifier(Protocol):
    """Anything that labels a query; ``entities`` are graph names found in it."""

    def __call__(self, query: str, entities: Sequence[str]) -> Classification:
        """Classify ``query``."""
        ...


class HeuristicClassifier:
    """Cue words plus entity mentions (seed 002's heuristic dispatch).

    * factual cues ("relationship", "connects to", "subclass of", ...) -> factual, or
      hybrid when no graph entity is named (the graph would have nowhere to start);
    * semantic cues ("describe", "explain", "how does", ...) -> semantic, or hybrid when
      entities are named;
    * both kinds -> hybrid; neither -> hybrid: a question that names no graph entity and
      asks nothing conceptual is often a described multi-hop one ("the association which
      published ..."), and the walk from its best passages still finds the next hop
      (measured on musique-dev: README, "Benchmarks").
    """

    def __call__(self, query: str, entities: Sequence[str]) -> Classification:
        """Classify ``query``."""
        factual = sorted({m.lower() for m in _FACTUAL.findall(query)})
        semantic = sorted({m.lower() for m in _SEMANTIC.findall(query)})
        named = (
            f"entities named: {', '.join(entities[:5])}" if entities else "no graph entity named"
        )
        if factual and semantic:
            return Classification(
                Route.HYBRID, 0.7, f"factual cues {factual} and semantic cues {semantic}; {named}"
            )
        if factual:
            if entities:
                return Classification(Route.FACTUAL, 0.85, f"factual cues {factual}; {named}")
            return Classification(Route.HYBRID, 0.55, f"factual cues {factual} but {named}")
        if semantic:
            if entities:
                return Classification(Route.HYBRID, 0.65, f"semantic cues {semantic}; {named}")
            return Classification(Route.SEMANTIC, 0.85, f"semantic cues {semantic}; {named}")
        if entities:
            return Classification(Route.HYBRID, 0.6, f"no cue words; {named}")
        return Classification(
            Route.HYBRID, 0.5, "no cue words and no graph entity named: walk from the passages"
        )


_PROMPT = """Classify the user's question for a retrieval system.
- "semantic": asks to describe, explain or summarise something (answered by text passages).
- "factual": asks for specific facts or relationships between named things (a knowledge graph).
- "hybrid": needs both.
Graph entities named in the question: {entities}
Question: {query}
Answer with JSON only:
{{"label": "semantic|factual|hybrid", "confidence": 0.0-1.0, "reason": "..."}}"""


class LLMClassifier:
    """Classify with an LLM; fall back to ``fallback`` on error, timeout or bad output.

    Args:
        llm: A LlamaIndex ``LLM`` (``complete``) or a LangChain chat model (``invoke``).
        fallback: Used when the LLM fails; default :class:`HeuristicClassifier`.
        timeout: Seconds to wait for the LLM.
    """

    def __init__(
        self, llm: Any, fallback: QueryClassifier | None = None, timeout: float = 10.0
    ) -> None:
        self.llm = llm
        self.fallback = fallback or HeuristicClassifier()
        self.timeout = timeout
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)

    def __call__(self, query: str, entities: Sequence[str]) -> Classification:
        """Classify ``query``."""
        prompt = _PROMPT.format(query=query, entities=", ".join(entities) or "none")
        try:
            raw = self._pool.submit(self._ask, prompt).result(timeout=self.timeout)
            return parse_classification(raw)
        except concurrent.futures.TimeoutError:
            problem = f"LLM classifier timed out after {self.timeout}s"
        except Exception as e:  # any LLM failure must degrade to the heuristic
            problem = f"LLM classifier failed ({type(e).__name__}: {e})"
        logger.warning("%s; using the heuristic", problem)
        decision = self.fallback(query, entities)
        return Classification(
            decision.label,
            decision.confidence,
            f"{problem}; heuristic: {decision.reason}",
            method="fallback",
        )

    def _ask(self, prompt: str) -> str:
        if hasattr(self.llm, "complete"):
            return str(self.llm.complete(prompt).text)
        message = self.llm.invoke(prompt)
        return str(getattr(message, "content", message))


def parse_classification(raw: str) -> Classification:
    """Parse the LLM's JSON answer; raises ``ValueError`` when it is not usable."""
    match = re.search(r"\{.*\}", raw, re.DOTALL)
    if not match:
        raise ValueError(f"no JSON object in LLM output {raw[:80]!r}")
    data = json.loads(match.group())
    label = Route(str(data["label"]).strip().lower())
    confidence = min(1.0, max(0.0, float(data.get("confidence", 0.5))))
    return Classification(label, confidence, str(data.get("reason", "")), method="llm")
