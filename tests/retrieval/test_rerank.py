"""Rerankers: the engine step, the built-in cross-encoder and the two framework adapters."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest
from langchain_core.documents import BaseDocumentCompressor, Document
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.postprocessor import SimilarityPostprocessor

from langchain_kb import CompressorReranker
from llama_kb import CrossEncoderReranker, KnowledgeBase, LlamaKBError, NodePostprocessorReranker
from llama_kb.retrieval.rerank import Reranker, unit_score
from llama_kb.types import SearchHit

QUERY = "How are interrupted ingestion runs resumed?"


class Reversing:
    """Returns the passages it is given in reverse order, recording what it saw."""

    def __init__(self) -> None:
        self.seen: list[list[str]] = []

    def rerank(self, query: str, hits: Sequence[SearchHit]) -> list[SearchHit]:
        self.seen.append([h.chunk_id for h in hits])
        return [replace(h, score=1 - i / (len(hits) + 1)) for i, h in enumerate(reversed(hits))]


class Failing:
    def rerank(self, query: str, hits: Sequence[SearchHit]) -> list[SearchHit]:
        raise RuntimeError("model crashed")


class Inventing:
    def rerank(self, query: str, hits: Sequence[SearchHit]) -> list[SearchHit]:
        return [SearchHit("chunk:made-up", "doc", "text", 0.9), *hits]


def test_reranker_reorders_the_fused_passages_before_top_k(example_kb: KnowledgeBase):
    fused = example_kb.retrieve(QUERY, top_k=20).unstructured
    reranker = Reversing()
    example_kb.engine.reranker = reranker
    context = example_kb.retrieve(QUERY, top_k=3)
    assert isinstance(reranker, Reranker)
    assert reranker.seen == [[h.chunk_id for h in fused]]  # rerank_depth (20) fused passages
    assert [h.chunk_id for h in context.unstructured] == [h.chunk_id for h in fused[::-1][:3]]
    assert [h.ranks["rerank"] for h in context.unstructured] == [1, 2, 3]
    assert all(0 <= h.score <= 1 for h in context.unstructured)
    assert context.trace["rerank"]["reranker"] == "Reversing"
    assert context.trace["rerank"]["in"] == len(fused)


def test_setting_a_reranker_empties_the_result_cache(example_kb: KnowledgeBase):
    first = example_kb.retrieve(QUERY, top_k=3)
    example_kb.engine.reranker = Reversing()
    again = example_kb.retrieve(QUERY, top_k=3)
    assert again.trace.get("cache") != "hit"
    assert [h.chunk_id for h in again.unstructured] != [h.chunk_id for h in first.unstructured]


@pytest.mark.parametrize("bad", [Failing(), Inventing()], ids=["raises", "invents"])
def test_a_failing_reranker_degrades_to_the_fused_order(example_kb: KnowledgeBase, bad: Reranker):
    fused = example_kb.retrieve(QUERY, top_k=3)
    example_kb.engine.reranker = bad
    context = example_kb.retrieve(QUERY, top_k=3)
    assert [h.chunk_id for h in context.unstructured] == [h.chunk_id for h in fused.unstructured]
    assert any(d.startswith("reranker:") for d in context.trace["degraded"])
    with pytest.raises(LlamaKBError, match="reranker"):
        example_kb.retrieve(QUERY, top_k=3, strict=True)


def test_reranker_sees_only_passages_the_principal_may_read(
    tmp_path: Path, embedding: BaseEmbedding
):
    reranker = Reversing()
    with KnowledgeBase.open(tmp_path / "kb", embedding=embedding, reranker=reranker) as kb:
        kb.add_documents(
            [Document(page_content="Resuming interrupted runs uses the manifest.", id="pub")]
        )
        kb.add_documents(
            [Document(page_content="Secret plan: resume runs from the vault.", id="sec")],
            access="user:alice",
        )
        anonymous = kb.retrieve("How are runs resumed?", top_k=5)
        alice = kb.retrieve("How are runs resumed?", top_k=5, principal="alice")
    assert all("vault" not in h.text for h in anonymous.unstructured)
    assert len(reranker.seen[0]) == 1  # the restricted passage never reached the reranker
    assert any("vault" in h.text for h in alice.unstructured)


def test_unit_score_maps_logits_to_the_payload_scale():
    assert unit_score(0.25) == 0.25
    assert unit_score(8.0) > 0.99 and unit_score(-8.0) < 0.01
    assert unit_score(1e6) == pytest.approx(1.0) and unit_score(-1e6) == pytest.approx(0.0)


def test_cross_encoder_ranks_the_answering_passage_first():
    reranker = CrossEncoderReranker()
    texts = [
        "The Eiffel Tower was completed in 1889 for the World's Fair.",
        "Paris is the capital and largest city of France.",
        "Lyon is known for its cuisine and silk weaving history.",
    ]
    hits = [SearchHit(f"c{i}", f"d{i}", t, 0.5) for i, t in enumerate(texts)]
    ranked = reranker.rerank("What is the capital of France?", hits)
    assert ranked[0].chunk_id == "c1"
    assert {h.chunk_id for h in ranked} == {"c0", "c1", "c2"}
    assert ranked[0].score > 0.5 > ranked[-1].score


def test_cross_encoder_with_a_missing_model_names_the_directory(tmp_path: Path):
    with pytest.raises(LlamaKBError, match="cannot load the cross-encoder"):
        CrossEncoderReranker(model_dir=tmp_path).score("q", ["text"])


def test_llamaindex_postprocessor_as_reranker(example_kb: KnowledgeBase):
    fused = example_kb.retrieve(QUERY, top_k=20).unstructured
    cutoff = fused[2].score
    example_kb.engine.reranker = NodePostprocessorReranker(
        SimilarityPostprocessor(similarity_cutoff=cutoff)
    )
    context = example_kb.retrieve(QUERY, top_k=10)
    assert [h.chunk_id for h in context.unstructured] == [
        h.chunk_id for h in fused if h.score >= cutoff
    ][:10]
    assert context.trace["rerank"]["reranker"] == "NodePostprocessorReranker"


class KeywordCompressor(BaseDocumentCompressor):
    """A user's own compressor: keeps documents naming ``word``, most mentions first."""

    word: str

    def compress_documents(
        self, documents: Sequence[Document], query: str, callbacks: object = None
    ) -> Sequence[Document]:
        counted = [(d.page_content.lower().count(self.word), d) for d in documents]
        kept = sorted(((c, d) for c, d in counted if c), key=lambda cd: -cd[0])
        return [
            Document(id=d.id, page_content=d.page_content, metadata={"relevance_score": c / 10})
            for c, d in kept
        ]


def test_langchain_compressor_as_reranker(example_kb: KnowledgeBase):
    example_kb.engine.reranker = CompressorReranker(KeywordCompressor(word="manifest"))
    context = example_kb.retrieve(QUERY, top_k=5)
    assert context.unstructured
    counts = [h.text.lower().count("manifest") for h in context.unstructured]
    assert all(counts) and counts == sorted(counts, reverse=True)
    assert [h.score for h in context.unstructured] == [min(1.0, c / 10) for c in counts]
