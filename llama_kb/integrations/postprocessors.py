"""A LlamaIndex node postprocessor as the unified retriever's reranker.

Any ``BaseNodePostprocessor`` that reorders nodes for a query (``SentenceTransformerRerank``,
``LLMRerank``, ``ColbertRerank``, a user's own) becomes a
:class:`~llama_kb.retrieval.rerank.Reranker`::

    KnowledgeBase.open(path, reranker=NodePostprocessorReranker(my_postprocessor))

Passages travel as ``TextNode`` s whose ids are the chunk ids; the postprocessor's scores are
mapped to [0, 1] (:func:`~llama_kb.retrieval.rerank.unit_score`), and a node it returns
without a score keeps its fused score.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, TextNode

from llama_kb.retrieval.rerank import unit_score
from llama_kb.types import SearchHit


class NodePostprocessorReranker:
    """Reranks with a LlamaIndex node postprocessor.

    Args:
        postprocessor: Reorders (and may drop) nodes given ``query_str``.
    """

    def __init__(self, postprocessor: BaseNodePostprocessor) -> None:
        self.postprocessor = postprocessor

    def rerank(self, query: str, hits: Sequence[SearchHit]) -> list[SearchHit]:
        """``hits`` in the postprocessor's order."""
        nodes = [
            NodeWithScore(
                node=TextNode(id_=hit.chunk_id, text=hit.text, metadata=dict(hit.metadata)),
                score=hit.score,
            )
            for hit in hits
        ]
        given = {hit.chunk_id: hit for hit in hits}
        reranked = []
        for node in self.postprocessor.postprocess_nodes(nodes, query_str=query):
            hit = given.get(node.node.node_id) or SearchHit(node.node.node_id, "", "", 0.0)
            score = hit.score if node.score is None else unit_score(float(node.score))
            reranked.append(replace(hit, score=score))
        return reranked
