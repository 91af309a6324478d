"""A LangChain document compressor as the unified retriever's reranker.

Any ``BaseDocumentCompressor`` that reorders documents for a query (``CrossEncoderReranker``,
``FlashrankRerank``, ``LLMListwiseRerank``, a user's own) becomes a
:class:`~llama_kb.retrieval.rerank.Reranker`::

    KnowledgeBase.open(path, reranker=CompressorReranker(my_compressor))

Passages travel as ``Document`` s whose ``id`` is the chunk id. A document's
``metadata["relevance_score"]`` (the convention of LangChain's rerankers) becomes its score,
mapped to [0, 1] (:func:`~llama_kb.retrieval.rerank.unit_score`); without one, scores fall
evenly with rank from the best fused score.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from langchain_core.documents import BaseDocumentCompressor, Document

from llama_kb.retrieval.rerank import unit_score
from llama_kb.types import SearchHit

SCORE_KEY = "relevance_score"


class CompressorReranker:
    """Reranks with a LangChain document compressor.

    Args:
        compressor: Reorders (and may drop) documents for a query.
    """

    def __init__(self, compressor: BaseDocumentCompressor) -> None:
        self.compressor = compressor

    def rerank(self, query: str, hits: Sequence[SearchHit]) -> list[SearchHit]:
        """``hits`` in the compressor's order."""
        documents = [
            Document(id=hit.chunk_id, page_content=hit.text, metadata=dict(hit.metadata))
            for hit in hits
        ]
        given = {hit.chunk_id: hit for hit in hits}
        kept = list(self.compressor.compress_documents(documents, query))
        top = max((hit.score for hit in hits), default=1.0)
        reranked = []
        for rank, document in enumerate(kept):
            hit = given.get(document.id or "") or SearchHit(str(document.id), "", "", 0.0)
            score = document.metadata.get(SCORE_KEY)
            if isinstance(score, int | float):
                value = unit_score(float(score))
            else:
                value = top * (1 - rank / len(kept))
            reranked.append(replace(hit, score=value))
        return reranked
