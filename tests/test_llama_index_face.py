"""llama_kb's LlamaIndex face: retriever nodes, from_indexes, query engines, instrumentation."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import chromadb
import pytest
from llama_index.core import PropertyGraphIndex, StorageContext, VectorStoreIndex
from llama_index.core.base.base_selector import BaseSelector, SelectorResult, SingleSelection
from llama_index.core.base.response.schema import AsyncStreamingResponse, StreamingResponse
from llama_index.core.bridge.pydantic import Field
from llama_index.core.graph_stores.simple_labelled import SimplePropertyGraphStore
from llama_index.core.graph_stores.types import EntityNode, Relation
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.llms.mock import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine, RouterQueryEngine
from llama_index.core.retrievers import QueryFusionRetriever, RouterRetriever
from llama_index.core.schema import MetadataMode, TextNode
from llama_index.core.settings import Settings
from llama_index.core.tools import QueryEngineTool, RetrieverTool
from llama_index.vector_stores.chroma import ChromaVectorStore

from llama_kb import KnowledgeBase, UnifiedContextRetriever
from llama_kb.stores.chroma_vector import chroma_settings, open_collection

QUESTION = "How is the Graph Updater related to the Document Interpreter?"


class ScriptedLLM(CustomLLM):
    """A scripted LLM double: answers a fixed text and records the prompts it was given."""

    answer: str = "scripted answer"
    prompts: list[str] = Field(default_factory=list)

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="scripted")

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self.prompts.append(prompt)
        return CompletionResponse(text=self.answer)

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any):
        self.prompts.append(prompt)
        text = ""
        for word in self.answer.split(" "):
            delta = word if not text else " " + word
            text += delta
            yield CompletionResponse(text=text, delta=delta)


class FirstSelector(BaseSelector):
    """Always picks the first choice (a selector double; no LLM)."""

    def _get_prompts(self) -> dict:
        return {}

    def _update_prompts(self, prompts: dict) -> None:
        pass

    def _select(self, choices, query) -> SelectorResult:
        return SelectorResult(selections=[SingleSelection(index=0, reason="first")])

    async def _aselect(self, choices, query) -> SelectorResult:
        return self._select(choices, query)


@pytest.fixture
def settings() -> Iterator[Any]:
    """LlamaIndex's global ``Settings``, restored after the test."""
    saved = (Settings._llm, Settings._embed_model)
    try:
        yield Settings
    finally:
        Settings._llm, Settings._embed_model = saved


def test_retriever_returns_chunks_then_marked_facts(example_kb: KnowledgeBase):
    nodes = example_kb.as_retriever(top_k=3).retrieve(QUESTION)
    kinds = [n.node.metadata["kind"] for n in nodes]
    assert kinds[:3] == ["chunk"] * 3 and set(kinds[3:]) == {"fact"}
    fact = nodes[3].node.metadata
    assert {"subject", "predicate", "object", "source_ids", "path_cost"} <= set(fact)
    assert nodes[0].node.metadata["route"] == "factual"


async def test_async_retrieve(example_kb: KnowledgeBase):
    retriever = example_kb.as_retriever(top_k=2, include_facts=False)
    nodes = await retriever.aretrieve(QUESTION)
    assert [n.node.node_id for n in nodes] == [n.node.node_id for n in retriever.retrieve(QUESTION)]


def test_instrumentation_events_fire(example_kb: KnowledgeBase):
    class Collector(BaseEventHandler):
        events: list[str] = Field(default_factory=list)

        @classmethod
        def class_name(cls) -> str:
            return "Collector"

        def handle(self, event: BaseEvent, **kwargs: Any) -> None:
            self.events.append(event.class_name())

    collector = Collector()
    dispatcher = get_dispatcher()
    dispatcher.add_event_handler(collector)
    try:
        example_kb.as_retriever(top_k=1).retrieve("Vector Indexer")
    finally:
        dispatcher.event_handlers.remove(collector)
    assert "RetrievalStartEvent" in collector.events and "RetrievalEndEvent" in collector.events


def test_query_engine_without_llm_returns_context(example_kb: KnowledgeBase):
    response = example_kb.as_query_engine(top_k=2).query(QUESTION)
    assert "General description" in str(response) and "Specific facts" in str(response)
    assert response.source_nodes and response.metadata["route"] == "factual"


def test_query_engine_with_scripted_llm_labels_both_kinds(example_kb: KnowledgeBase):
    llm = ScriptedLLM()
    response = example_kb.as_query_engine(llm=llm, top_k=2).query(QUESTION)
    assert str(response) == "scripted answer"
    assert "General description" in llm.prompts[0] and "Specific facts" in llm.prompts[0]
    assert QUESTION in llm.prompts[0]


def test_inside_llama_index_compositions(example_kb: KnowledgeBase):
    retriever = example_kb.as_retriever(top_k=2)
    engine = RetrieverQueryEngine.from_args(retriever, llm=ScriptedLLM())
    assert str(engine.query(QUESTION)) == "scripted answer"
    fusion = QueryFusionRetriever([retriever], llm=MockLLM(), num_queries=1, similarity_top_k=3)
    assert len(fusion.retrieve(QUESTION)) == 3
    router = RouterRetriever(
        selector=FirstSelector(),
        retriever_tools=[RetrieverTool.from_defaults(retriever, description="kb")],
        llm=MockLLM(),
    )
    assert router.retrieve(QUESTION)


def test_router_query_engine_with_the_kb_as_a_tool(example_kb: KnowledgeBase):
    tool = QueryEngineTool.from_defaults(
        example_kb.as_query_engine(llm=ScriptedLLM(), similarity_top_k=2),
        name="team_docs",
        description="Documents and knowledge graph about the ingestion pipeline",
    )
    router = RouterQueryEngine(selector=FirstSelector(), query_engine_tools=[tool], llm=MockLLM())
    response = router.query(QUESTION)
    assert str(response) == "scripted answer"
    kinds = [n.node.metadata["kind"] for n in response.source_nodes]
    assert kinds[:2] == ["chunk", "chunk"] and "fact" in kinds


def test_similarity_top_k_search_kwargs_and_bounded_facts(example_kb: KnowledgeBase):
    retriever = example_kb.as_retriever(similarity_top_k=2)
    kinds = [n.node.metadata["kind"] for n in retriever.retrieve(QUESTION)]
    assert retriever.similarity_top_k == 2 and kinds == ["chunk", "chunk", "fact", "fact"]
    by_kwargs = example_kb.as_retriever(search_kwargs={"k": 3}, max_facts=5)
    kinds = [n.node.metadata["kind"] for n in by_kwargs.retrieve(QUESTION)]
    assert kinds.count("chunk") == 3 and kinds.count("fact") == 5
    with pytest.raises(ValueError, match="unknown retrieval option"):
        example_kb.as_retriever(fetch_k=10)


def test_nodes_carry_ref_doc_id_and_file_path(example_kb: KnowledgeBase):
    node = example_kb.as_retriever(similarity_top_k=1).retrieve(QUESTION)[0].node
    assert node.ref_doc_id == node.metadata["doc_id"]
    assert Path(node.metadata["file_path"]).is_file()
    assert node.metadata["file_name"] == Path(node.metadata["file_path"]).name
    seen_by_llm = node.get_content(metadata_mode=MetadataMode.LLM)
    assert "file_path" in seen_by_llm and "content_hash" not in seen_by_llm


def test_query_engine_uses_settings_llm(example_kb: KnowledgeBase, settings: Any):
    engine = example_kb.as_query_engine(similarity_top_k=2)
    settings.llm = ScriptedLLM(answer="from Settings.llm")
    assert str(engine.query(QUESTION)) == "from Settings.llm"


async def test_streaming_query_engine(example_kb: KnowledgeBase):
    llm = ScriptedLLM(answer="the Knowledge Team owns it")
    engine = example_kb.as_query_engine(llm=llm, streaming=True, similarity_top_k=2)
    response = engine.query(QUESTION)
    assert isinstance(response, StreamingResponse)
    assert list(response.response_gen) == ["the", " Knowledge", " Team", " owns", " it"]
    assert response.source_nodes and response.metadata["route"] == "factual"
    aresponse = await engine.aquery(QUESTION)
    assert isinstance(aresponse, AsyncStreamingResponse)
    assert "".join([t async for t in aresponse.response_gen]) == "the Knowledge Team owns it"
    offline = example_kb.as_query_engine(streaming=True).query(QUESTION)
    assert "Specific facts" in "".join(offline.response_gen)


def test_from_existing_indexes_without_reingesting(tmp_path: Path, embedding, settings: Any):
    client = chromadb.PersistentClient(path=str(tmp_path / "chroma"), settings=chroma_settings())
    store = ChromaVectorStore(chroma_collection=open_collection(client, "mine"))
    texts = {
        "n1": "Douglas Sirk directed Sleep, My Love in 1948.",
        "n2": "Sleep, My Love is an American film noir starring Claudette Colbert.",
        "n3": "Claudette Colbert was a French-born American actress.",
    }
    nodes = [TextNode(id_=i, text=t) for i, t in texts.items()]
    settings.embed_model = embedding  # honoured: the index and the retriever use it
    vector_index = VectorStoreIndex(
        nodes, storage_context=StorageContext.from_defaults(vector_store=store)
    )
    graph_store = SimplePropertyGraphStore()
    entities = [EntityNode(name=n) for n in ("Douglas Sirk", "Sleep, My Love", "Claudette Colbert")]
    graph_store.upsert_nodes(entities)
    graph_store.upsert_relations(
        [
            Relation(label="DIRECTED", source_id="Douglas Sirk", target_id="Sleep, My Love"),
            Relation(label="STARS", source_id="Sleep, My Love", target_id="Claudette Colbert"),
            Relation(label="MENTIONS", source_id="n1", target_id="Douglas Sirk"),
            Relation(label="MENTIONS", source_id="n1", target_id="Sleep, My Love"),
            Relation(label="MENTIONS", source_id="n2", target_id="Sleep, My Love"),
            Relation(label="MENTIONS", source_id="n2", target_id="Claudette Colbert"),
            Relation(label="MENTIONS", source_id="n3", target_id="Claudette Colbert"),
        ]
    )
    graph_index = PropertyGraphIndex.from_existing(
        property_graph_store=graph_store, embed_model=embedding, embed_kg_nodes=False, llm=MockLLM()
    )
    retriever = UnifiedContextRetriever.from_indexes(vector_index, graph_index, top_k=2)
    context = retriever.retrieve_context("Who directed Sleep, My Love?")
    assert "n1" in [h.chunk_id for h in context.unstructured]
    assert [e["name"] for e in context.trace["linked_entities"]] == ["Sleep, My Love"]
    facts = {(f.subject, f.predicate, f.object) for f in context.structured_facts}
    assert ("Douglas Sirk", "DIRECTED", "Sleep, My Love") in facts
    assert store._collection.count() == 3  # nothing was re-ingested
