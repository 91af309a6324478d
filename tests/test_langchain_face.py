"""langchain_kb: the standard retriever suite, LangChain's names and conventions, runnables."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import EXAMPLE_DOCS
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import ToolMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda
from langchain_tests.integration_tests import RetrieversIntegrationTests

from langchain_kb import UnifiedKBRetriever, format_documents, fused_context_runnable
from llama_kb import (
    Fact,
    FusedContext,
    KnowledgeBase,
    Route,
    SearchHit,
    default_embedding,
)
from llama_kb.config import QueryOptions

QUESTION = "How is the Graph Updater related to the Document Interpreter?"

_shared: dict[str, KnowledgeBase] = {}


def shared_kb() -> KnowledgeBase:
    """One example knowledge base for the standard suite (its params cannot take fixtures)."""
    if "kb" not in _shared:
        root = Path(tempfile.mkdtemp(prefix="llama-kb-lc-"))
        atexit.register(shutil.rmtree, root, True)
        kb = KnowledgeBase.open(root / "kb", embedding=default_embedding())
        kb.ingest(EXAMPLE_DOCS)
        _shared["kb"] = kb
    return _shared["kb"]


class TestUnifiedKBRetrieverStandard(RetrieversIntegrationTests):
    """LangChain's own yardstick for retrievers."""

    @property
    def retriever_constructor(self) -> type[UnifiedKBRetriever]:
        return UnifiedKBRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"kb": shared_kb()}

    @property
    def retriever_query_example(self) -> str:
        return "How is the Graph Updater related to the Document Interpreter?"


def test_documents_carry_kind_and_provenance(example_kb: KnowledgeBase):
    retriever = UnifiedKBRetriever(
        kb=example_kb, k=3, include_facts=True, search_kwargs={"max_facts": 4}
    )
    docs = retriever.invoke("What is the relationship between the Graph Updater and its owner?")
    chunks, facts = docs[:-1], docs[-1]
    assert len(chunks) == 3  # k bounds the passages; the facts come in one more document
    for doc in chunks:
        assert doc.metadata["kind"] == "chunk"
        assert {"doc_id", "score", "route", "ranks"} <= set(doc.metadata)
        assert doc.id and doc.id.startswith("chunk:")  # LangChain convention: Document.id
        assert Path(doc.metadata["source"]).is_file()  # ... and metadata["source"]
    assert facts.metadata["kind"] == "facts"
    assert 0 < len(facts.metadata["facts"]) <= 4  # max_facts bounds the facts
    assert "--MENTIONS-->" not in facts.page_content  # structural edges are not answers
    assert 0.0 <= facts.metadata["score"] <= 1.0
    assert facts.metadata["source"].startswith("llama-kb") and facts.id


def test_facts_are_bounded_by_k(example_kb: KnowledgeBase):
    docs = UnifiedKBRetriever(kb=example_kb, k=3, include_facts=True).invoke(QUESTION)
    assert len(docs) == 4 and 0 < len(docs[-1].metadata["facts"]) <= 3
    wide = UnifiedKBRetriever(
        kb=example_kb, k=3, include_facts=True, search_kwargs={"max_facts": 8}
    )
    assert 3 <= len(wide.invoke(QUESTION)[-1].metadata["facts"]) <= 8


def test_search_kwargs_and_search_types(example_kb: KnowledgeBase):
    by_kwargs = UnifiedKBRetriever(kb=example_kb, search_kwargs={"k": 2})
    assert len(by_kwargs.invoke(QUESTION)) == 2
    assert len(by_kwargs.invoke(QUESTION, k=3)) == 3  # the call wins
    title = "Graph Updater"
    filtered = UnifiedKBRetriever(
        kb=example_kb, k=3, include_facts=False, search_kwargs={"filter": {"title": title}}
    )
    assert {d.metadata["title"] for d in filtered.invoke("pipeline components")} == {title}
    strict = UnifiedKBRetriever(
        kb=example_kb,
        search_type="similarity_score_threshold",
        search_kwargs={"score_threshold": 1.0},  # scores are in [0, 1]
    )
    assert all(d.metadata["score"] >= 1.0 for d in strict.invoke(QUESTION))
    with pytest.raises(ValueError, match="mmr"):
        UnifiedKBRetriever(kb=example_kb, search_type="mmr")
    with pytest.raises(ValueError, match="needs search_kwargs"):
        UnifiedKBRetriever(kb=example_kb, search_type="similarity_score_threshold")
    with pytest.raises(ValueError, match="unknown retrieval option"):
        UnifiedKBRetriever(kb=example_kb, search_kwargs={"fetch_k": 20})


def test_k_kwarg_and_semantic_route_without_facts(example_kb: KnowledgeBase):
    retriever = UnifiedKBRetriever(kb=example_kb, search_kwargs={"route": "semantic"})
    docs = retriever.invoke("Explain how failures are handled", k=2)
    assert len(docs) == 2 and all(d.metadata["kind"] == "chunk" for d in docs)


async def test_native_async(example_kb: KnowledgeBase):
    retriever = UnifiedKBRetriever(kb=example_kb, k=3)
    query = "How is the Graph Updater related to the Document Interpreter?"
    assert [d.page_content for d in await retriever.ainvoke(query)] == [
        d.page_content for d in retriever.invoke(query)
    ]


class Recorder(BaseCallbackHandler):
    """Records retriever and chain runs with their tags and metadata."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.tags: list[str] = []
        self.metadata: dict[str, Any] = {}

    def on_retriever_start(self, *args: Any, **kwargs: Any) -> None:
        self.events.append("start")
        self.tags.extend(kwargs.get("tags") or [])
        self.metadata.update(kwargs.get("metadata") or {})

    def on_retriever_end(self, documents: list[Document], **kwargs: Any) -> None:
        self.events.append(f"end:{len(documents)}")

    def on_chain_start(self, *args: Any, **kwargs: Any) -> None:
        self.tags.extend(kwargs.get("tags") or [])


def test_callbacks_fire(example_kb: KnowledgeBase):
    recorder = Recorder()
    UnifiedKBRetriever(kb=example_kb, k=2).invoke(
        "Vector Indexer", config={"callbacks": [recorder]}
    )
    assert recorder.events == ["start", "end:2"]


async def test_with_config_tags_metadata_and_callbacks_propagate(example_kb: KnowledgeBase):
    recorder = Recorder()
    retriever = UnifiedKBRetriever(kb=example_kb, k=2).with_config(
        tags=["kb"], metadata={"tenant": "docs"}, callbacks=[recorder]
    )
    chain = retriever | RunnableLambda(format_documents)
    await chain.ainvoke("Vector Indexer", config={"tags": ["outer"]})
    assert recorder.events == ["start", "end:2"]
    assert {"kb", "outer"} <= set(recorder.tags) and recorder.metadata["tenant"] == "docs"
    runnable_recorder = Recorder()
    fused_context_runnable(example_kb, k=1).invoke(
        "Vector Indexer", config={"tags": ["prompt-fill"], "callbacks": [runnable_recorder]}
    )
    assert "prompt-fill" in runnable_recorder.tags


def test_as_tool_for_agents(example_kb: KnowledgeBase):
    retriever = UnifiedKBRetriever(kb=example_kb, k=2, include_facts=True)
    tool = retriever.as_tool(name="team_docs")
    assert tool.name == "team_docs" and set(tool.args) == {"query"}
    text = tool.invoke({"query": QUESTION})
    assert text.startswith("Passages:") and "Facts from the knowledge graph:" in text
    recorder = Recorder()
    call = {"name": "team_docs", "args": {"query": QUESTION}, "id": "1", "type": "tool_call"}
    message = tool.invoke(call, config={"callbacks": [recorder]})
    assert isinstance(message, ToolMessage) and message.content == text
    assert [d.metadata["kind"] for d in message.artifact] == ["chunk", "chunk", "facts"]
    assert recorder.events == ["start", "end:3"]  # the tool's callbacks reach the retriever


def test_lcel_chain(example_kb: KnowledgeBase):
    model = FakeListChatModel(responses=["The Knowledge Team owns it."])  # scripted chat model
    seen: list[str] = []

    def format_docs(docs: list[Document]) -> str:
        text = "\n\n".join(d.page_content for d in docs)
        seen.append(text)
        return text

    prompt = ChatPromptTemplate.from_template("Context:\n{context}\n\nQuestion: {question}")
    retriever = UnifiedKBRetriever(kb=example_kb, k=3)
    chain = (
        {"context": retriever | format_docs, "question": RunnableLambda(lambda q: q)}
        | prompt
        | model
        | StrOutputParser()
    )
    assert chain.invoke("Who owns the Graph Updater?") == "The Knowledge Team owns it."
    assert "Knowledge Team" in seen[0]


async def test_fused_context_runnable_fills_prompt_variables(example_kb: KnowledgeBase):
    runnable = fused_context_runnable(example_kb, k=2)
    values = runnable.invoke({"question": QUESTION})
    assert {"question", "context", "passages", "facts", "documents", "route", "fused"} <= set(
        values
    )
    assert values["passages"].startswith("## General description")
    assert values["facts"].startswith("## Specific facts")
    assert [d.metadata["kind"] for d in values["documents"]] == ["chunk", "chunk", "facts"]
    prompt = ChatPromptTemplate.from_template("{passages}\n{facts}\nQ: {question}")
    assert "Graph Updater" in prompt.invoke(values).to_string()
    assert (await runnable.ainvoke("Graph Updater"))["question"] == "Graph Updater"
    with pytest.raises(TypeError):
        runnable.invoke(42)


def test_runnable_keeps_a_passage_with_a_heading_a_passage():
    """Passages and facts come from the payload's two lists, not from splitting text."""
    hit = SearchHit("chunk:1", "notes.md", "Intro.\n\n## Specific facts\n\nstill a passage", 0.9)
    fact = Fact("Graph Updater", "dependsOn", "Document Interpreter", "e:1", "e:2")
    context = FusedContext("q", Route.HYBRID, unstructured=[hit], structured_facts=[fact])

    class StubKB:
        """A knowledge base double returning a fixed payload."""

        engine = SimpleNamespace(defaults=QueryOptions())

        def retrieve(self, query: str, **options: Any) -> FusedContext:
            return context

    values = fused_context_runnable(StubKB()).invoke("q")
    assert "still a passage" in values["passages"] and "still a passage" not in values["facts"]
    assert values["facts"].endswith("- Graph Updater --dependsOn--> Document Interpreter")
    assert "dependsOn" not in values["passages"]
