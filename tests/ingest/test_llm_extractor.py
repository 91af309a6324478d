"""An LLM extractor plugged into ingestion (LlamaIndex's SimpleLLMPathExtractor, scripted LLM)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from llama_index.core.indices.property_graph import SimpleLLMPathExtractor
from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata
from llama_index.core.llms.callbacks import llm_completion_callback

from llama_kb import KnowledgeBase, LlamaIndexExtractor, StructureExtractor
from llama_kb import graph_model as gm


class ScriptedLLM(CustomLLM):
    """A scripted LLM double that always answers with the same triplets."""

    answer: str = ""

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="scripted")

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self.answer)

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any):
        yield self.complete(prompt)


def test_llm_path_extractor_adds_entities_and_relations(tmp_path: Path, embedding) -> None:
    llm = ScriptedLLM(answer="(Graph Updater, depends on, Document Interpreter)\nnot a triplet")
    extractor = LlamaIndexExtractor(SimpleLLMPathExtractor(llm=llm, num_workers=1))
    doc = tmp_path / "updater.md"
    doc.write_text("# Updater\n\nThe Graph Updater needs the Document Interpreter.", "utf-8")
    with KnowledgeBase.open(
        tmp_path / "kb", embedding=embedding, extractors=[StructureExtractor(), extractor]
    ) as kb:
        assert kb.ingest(doc).added
        relations = {(s, kind, t) for s, t, kind, _ in kb.graph.iter_relations()}
        source, target = (
            gm.entity_node_id("Graph updater"),
            gm.entity_node_id("Document interpreter"),
        )
        assert (source, "Depends on", target) in relations
        chunk_ids = {s for s, kind, _ in relations if kind == gm.PART_OF}
        assert any((c, gm.MENTIONS, source) in relations for c in chunk_ids)
        context = kb.retrieve("What is the relationship between Graph Updater and others?")
        facts = {(f.subject, f.predicate, f.object) for f in context.structured_facts}
        assert ("Graph updater", "Depends on", "Document interpreter") in facts
