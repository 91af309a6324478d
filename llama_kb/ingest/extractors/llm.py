"""Adapter running any LlamaIndex KG extractor (e.g. ``SimpleLLMPathExtractor``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.graph_stores.types import (
    KG_NODES_KEY,
    KG_RELATIONS_KEY,
    EntityNode,
    LabelledNode,
    Relation,
)
from llama_index.core.schema import TextNode

from llama_kb import graph_model as gm
from llama_kb.ingest.extractors.base import GraphFragment
from llama_kb.types import SourceDocument, TextChunk

__all__ = ["LlamaIndexExtractor"]


class LlamaIndexExtractor:
    """Adapts a LlamaIndex KG extractor (a ``TransformComponent`` that fills
    ``kg_nodes`` / ``kg_relations`` metadata, e.g. ``SimpleLLMPathExtractor``).

    Extracted entities get llama-kb ids (``entity:<name-key>``) and a ``MENTIONS``
    relation from the chunk they came from.
    """

    def __init__(self, transform: Any) -> None:
        self.transform = transform

    def extract(self, doc: SourceDocument, chunks: Sequence[TextChunk]) -> GraphFragment:
        """Run the wrapped extractor over the chunks."""
        nodes = [TextNode(id_=c.chunk_id, text=c.text, metadata=dict(c.metadata)) for c in chunks]
        fragment = GraphFragment()
        for node in self.transform(nodes):
            id_map: dict[str, str] = {}
            for kg_node in node.metadata.pop(KG_NODES_KEY, []):
                converted = _convert_entity(kg_node)
                id_map[kg_node.id] = converted.id
                fragment.nodes.append(converted)
                fragment.relations.append(
                    gm.relation(
                        node.node_id, gm.MENTIONS, converted.id, gm.MENTION_COST, signal="llm"
                    )
                )
            for rel in node.metadata.pop(KG_RELATIONS_KEY, []):
                source = id_map.get(rel.source_id, gm.entity_node_id(rel.source_id))
                target = id_map.get(rel.target_id, gm.entity_node_id(rel.target_id))
                props = {"weight": 1.0, **rel.properties, "chunk_id": node.node_id}
                fragment.relations.append(
                    Relation(label=rel.label, source_id=source, target_id=target, properties=props)
                )
        return fragment


def _convert_entity(node: LabelledNode) -> LabelledNode:
    if isinstance(node, EntityNode):
        return gm.NamedNode(
            id_=gm.entity_node_id(node.name),
            name=node.name,
            label=node.label,
            properties=dict(node.properties),
        )
    return node
