"""The default extractor: section headings and links, no LLM needed."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from llama_index.core.graph_stores.types import LabelledNode

from llama_kb import graph_model as gm
from llama_kb.ingest.extractors.base import GraphFragment
from llama_kb.ingest.readers import supported_suffixes
from llama_kb.types import SourceDocument, TextChunk

__all__ = ["StructureExtractor"]

_URL_SCHEMES = ("http://", "https://", "mailto:", "ftp://", "data:", "tel:")


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


def _innermost_heading(heading_path: object) -> str | None:
    if not isinstance(heading_path, str) or not heading_path.strip():
        return None
    return heading_path.split(" > ")[-1].strip() or None
