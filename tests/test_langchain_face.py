"""langchain_kb: the standard LangChain retriever suite, an LCEL chain, callbacks, runnables."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLE_DOCS
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda
from langchain_tests.integration_tests import RetrieversIntegrationTests

from langchain_kb import UnifiedKBRetriever, fused_context_runnable
from llama_kb import KnowledgeBase, default_embedding

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
    assert facts.metadata["kind"] == "facts"
    assert 0 < len(facts.metadata["facts"]) <= 4  # max_facts bounds the facts
    assert "--MENTIONS-->" not in facts.page_content  # structural edges are not answers
    assert 0.0 <= facts.metadata["score"] <= 1.0


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


def test_callbacks_fire(example_kb: KnowledgeBase):
    class Recorder(BaseCallbackHandler):
        def __init__(self) -> None:
            self.events: list[str] = []

        def on_retriever_start(self, *args: Any, **kwargs: Any) -> None:
            self.events.append("start")

        def on_retriever_end(self, documents: list[Document], **kwargs: Any) -> None:
            self.events.append(f"end:{len(documents)}")

    recorder = Recorder()
    UnifiedKBRetriever(kb=example_kb, k=2).invoke(
        "Vector Indexer", config={"callbacks": [recorder]}
    )
    assert recorder.events == ["start", "end:2"]


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
    runnable = fused_context_runnable(example_kb, top_k=2)
    values = runnable.invoke(
        {"question": "How is the Graph Updater related to the Document Interpreter?"}
    )
    assert {"question", "context", "passages", "facts", "route", "fused"} <= set(values)
    assert values["passages"].startswith("## General description")
    assert values["facts"].startswith("## Specific facts")
    prompt = ChatPromptTemplate.from_template("{passages}\n{facts}\nQ: {question}")
    assert "Graph Updater" in prompt.invoke(values).to_string()
    assert (await runnable.ainvoke("Graph Updater"))["question"] == "Graph Updater"
    with pytest.raises(TypeError):
        runnable.invoke(42)
