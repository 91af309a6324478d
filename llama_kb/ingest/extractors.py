"""Pluggable graph extractors: turn a document and its chunks into nodes and relations.

The default, :class:`StructureExtractor`, needs no LLM: it uses headings and links.
Mentions of names already in the graph are added by :mod:`llama_kb.ingest.linking`
once per run, so they also reach chunks ingested before the name existed.
:class:`LlamaIndexExtractor` runs any LlamaIndex KG extractor (e.g. ``SimpleLLMPathExtractor``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from llama_index.core.graph_stores.types import (
    KG_NODES_KEY,
    KG_RELATIONS_KEY,
    EntityNode,
    LabelledNode,
    Relation,
)
from llama_index.core.schema import TextNode

from llama_kb import graph_model as gm
from llama_kb.ingest.readers import supported_suffixes
from llama_kb.types import SourceDocument, TextChunk

_URL_SCHEMES = ("http://", "https://", "mailto:", "ftp://", "data:", "tel:")


@dataclass
class GraphFragment:
    """Nodes and relations to upsert for one document."""

    nodes: list[LabelledNode] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)


@runtime_checkable
class GraphExtractor(Protocol):
    """Anything that derives graph structure from a document's chunks."""

    def extract(self, doc: SourceDocument, chunks: Sequence[TextChunk]) -> GraphFragment:
        """Nodes and relations for ``doc``; relations should start at chunk ids."""
        ...


class StructureExtractor:
    """Section headings become ``section`` nodes (``IN_SECTION``); links ``LINKS_TO``.

    Sections are not mentions: generic headings ("Owner", "Setup") would otherwise tie
    unrelated documents together in the retrieval graph.

    A link whose target looks like a file (``guide.md``, ``../api/x.html#part``) points to
    the document at that path; a wiki link (``[[Name]]``) points to the entity ``Name``.
    URLs are ignored.
    """

    def extract(self, doc: SourceDocument, chunks: Sequence[TextChunk]) -> GraphFragment:
        """See class docstring."""
        fragment = GraphFragment()
        title_key = gm.entity_node_id(doc.title or "")
        for chunk in chunks:
            heading = _innermost_heading(chunk.metadata.get("heading_path"))
            if heading and gm.entity_node_id(heading) != title_key:
                node = gm.section_node(heading)
                fragment.nodes.append(node)
                fragment.relations.append(
                    gm.relation(chunk.chunk_id, gm.IN_SECTION, node.id, gm.MENTION_COST)
                )
        for target in doc.links:
            link = self._link(doc, target, chunks)
            if link is not None:
                target_node, chunk_id = link
                fragment.nodes.append(target_node)
                fragment.relations.append(
                    gm.relation(chunk_id, gm.LINKS_TO, target_node.id, gm.MENTION_COST, href=target)
                )
        return fragment

    @staticmethod
    def _link(
        doc: SourceDocument, target: str, chunks: Sequence[TextChunk]
    ) -> tuple[LabelledNode, str] | None:
        raw = target.strip()
        if not raw or not chunks or raw.lower().startswith(_URL_SCHEMES) or raw.startswith("#"):
            return None
        chunk_id = next((c.chunk_id for c in chunks if raw in c.text), chunks[0].chunk_id)
        path_part = raw.split("#", 1)[0]
        if "/" in path_part or Path(path_part).suffix.lower() in supported_suffixes():
            resolved = (Path(doc.source_path).parent / path_part).resolve().as_posix()
            if resolved == doc.doc_id:
                return None
            return gm.placeholder_document_node(resolved), chunk_id
        return gm.entity_node(raw), chunk_id


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


def _innermost_heading(heading_path: object) -> str | None:
    if not isinstance(heading_path, str) or not heading_path.strip():
        return None
    return heading_path.split(" > ")[-1].strip() or None
