"""Shared fixtures: the real offline embedding, example documents, fresh knowledge bases."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata
from pydantic import Field

from llama_kb import KnowledgeBase, default_embedding

REPO = Path(__file__).resolve().parents[1]
EXAMPLE_DOCS = REPO / "examples" / "docs"


@pytest.fixture(scope="session")
def embedding() -> BaseEmbedding:
    """The bundled all-MiniLM-L6-v2 ONNX model (real, offline)."""
    return default_embedding()


@pytest.fixture
def docs_dir(tmp_path: Path) -> Path:
    """A private copy of the example documents, safe to modify."""
    target = tmp_path / "docs"
    shutil.copytree(EXAMPLE_DOCS, target)
    return target


@pytest.fixture
def kb(tmp_path: Path, embedding: BaseEmbedding) -> Iterator[KnowledgeBase]:
    """An empty knowledge base in a temporary directory."""
    with KnowledgeBase.open(tmp_path / "kb", embedding=embedding) as opened:
        yield opened


@pytest.fixture
def example_kb(kb: KnowledgeBase, docs_dir: Path) -> KnowledgeBase:
    """A knowledge base holding the example documents."""
    report = kb.ingest(docs_dir)
    assert report.ok, report.failed
    return kb


class CountingEmbedding(BaseEmbedding):
    """Wraps a real embedding and counts the texts it embeds (a spy, not a fake)."""

    inner: Any = None
    texts_embedded: int = 0

    @classmethod
    def class_name(cls) -> str:
        return "CountingEmbedding"

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def _get_query_embedding(self, query: str) -> list[float]:
        return self.inner.get_query_embedding(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return await self.inner.aget_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        self.texts_embedded += 1
        return self.inner.get_text_embedding(text)

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        self.texts_embedded += len(texts)
        return self.inner.get_text_embedding_batch(texts)


class ScriptedLLMDouble(CustomLLM):
    """A test double for a LlamaIndex LLM: returns the scripted answers in order and records
    the prompts it was sent."""

    answers: list[str]
    prompts: list[str] = Field(default_factory=list)

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="scripted-llm-double")

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self.prompts.append(prompt)
        return CompletionResponse(text=self.answers.pop(0))

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        raise NotImplementedError("the scripted double does not stream")
