"""Query classification: the heuristic, and LLM classification with fallback."""

from __future__ import annotations

import time
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from llama_index.core.bridge.pydantic import Field
from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata
from llama_index.core.llms.callbacks import llm_completion_callback

from llama_kb import HeuristicClassifier, KnowledgeBase, LLMClassifier, Route
from llama_kb.retrieval.classifier import parse_classification

heuristic = HeuristicClassifier()


@pytest.mark.parametrize(
    ("query", "entities", "route"),
    [
        ("What is the relationship between X and Y?", ["X", "Y"], Route.FACTUAL),
        ("How does the cache connect to the queue?", [], Route.SEMANTIC),
        ("Which component connects to the Graph Updater?", ["Graph Updater"], Route.FACTUAL),
        ("Is a sparrow a subclass of bird?", [], Route.HYBRID),
        ("Explain the purpose of the Vector Indexer", ["Vector Indexer"], Route.HYBRID),
        ("Explain vector search", [], Route.SEMANTIC),
        ("Describe the relationship between A and B", ["A", "B"], Route.HYBRID),
        ("Where was Charles Mathew's father buried?", ["Charles Mathew"], Route.HYBRID),
        ("what about the weather", [], Route.HYBRID),
        ("who founded the society that publishes the journal", [], Route.HYBRID),
    ],
)
def test_heuristic_routes(query: str, entities: list[str], route: Route) -> None:
    decision = heuristic(query, entities)
    assert decision.label is route
    assert 0 < decision.confidence <= 1 and decision.reason and decision.method == "heuristic"


class ScriptedLLM(CustomLLM):
    """A scripted LLM double: returns the given outputs in turn, or raises / stalls."""

    outputs: list[str] = Field(default_factory=list)
    delay: float = 0.0
    error: str | None = None

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="scripted")

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        if self.error:
            raise RuntimeError(self.error)
        time.sleep(self.delay)
        return CompletionResponse(text=self.outputs.pop(0))

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any):
        yield self.complete(prompt)


def test_llm_classifier_uses_the_llm_answer() -> None:
    llm = ScriptedLLM(outputs=['{"label": "FACTUAL", "confidence": 0.9, "reason": "asks who"}'])
    decision = LLMClassifier(llm)("Who directed Sleep, My Love?", [])
    assert (decision.label, decision.confidence, decision.method) == (Route.FACTUAL, 0.9, "llm")


def test_langchain_chat_model_classifies_too() -> None:
    model = FakeListChatModel(responses=['Sure: {"label": "semantic", "reason": "explain"}'])
    assert LLMClassifier(model)("Explain things", []).label is Route.SEMANTIC


@pytest.mark.parametrize(
    ("llm", "problem"),
    [
        (ScriptedLLM(outputs=["I think it is factual"]), "LLM classifier failed"),
        (ScriptedLLM(outputs=['{"label": "telepathic"}']), "LLM classifier failed"),
        (ScriptedLLM(error="rate limited"), "rate limited"),
        (ScriptedLLM(outputs=['{"label": "factual"}'], delay=1.0), "timed out"),
    ],
)
def test_llm_problems_fall_back_to_the_heuristic(llm: ScriptedLLM, problem: str) -> None:
    decision = LLMClassifier(llm, timeout=0.2)("Explain vector search", [])
    assert decision.method == "fallback" and decision.label is Route.SEMANTIC
    assert problem in decision.reason and "heuristic:" in decision.reason


def test_parse_classification_clamps_confidence() -> None:
    assert parse_classification('{"label": "hybrid", "confidence": 7}').confidence == 1.0
    with pytest.raises(ValueError):
        parse_classification("no json here")


def test_custom_classifier_and_fallback_are_in_the_trace(example_kb: KnowledgeBase) -> None:
    example_kb.set_classifier(LLMClassifier(ScriptedLLM(outputs=["garbage"]), timeout=5))
    context = example_kb.retrieve("Explain how failures are handled")
    assert context.trace["classifier"]["method"] == "fallback"
    assert context.route is Route.SEMANTIC
    example_kb.set_classifier(lambda query, entities: heuristic(query, entities))
    assert example_kb.retrieve("Explain failures").trace["classifier"]["method"] == "heuristic"
