"""The graph an ingest batch writes: its documents' and chunks' nodes, what its extractors
found, the names its facts hold (:mod:`.fact_names`), and the access of each (what a document
says is as private as the document)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from llama_kb import graph_model as gm
from llama_kb.access import ACCESS_FIELD, PUBLIC
from llama_kb.ingest._doc_codec import document_access
from llama_kb.ingest.extractors import GraphFragment
from llama_kb.ingest.fact_names import fact_names
from llama_kb.types import SourceDocument, TextChunk


@dataclass
class BatchGraph:
    """Nodes and relations of one batch."""

    owned: list[Any] = field(default_factory=list)
    """Nodes the batch's documents own (replaced with them)."""
    extracted: list[Any] = field(default_factory=list)
    """Nodes found in the batch that others may share (written only when new)."""
    relations: list[Any] = field(default_factory=list)


def batch_graph(
    items: Sequence[tuple[SourceDocument, Sequence[TextChunk]]],
    fragments: Sequence[Sequence[GraphFragment]],
) -> BatchGraph:
    """The graph of ``items`` (documents and their chunks) given each extractor's fragments
    (one per document, in order)."""
    graph = BatchGraph()
    for doc, doc_chunks in items:
        graph.owned.append(gm.document_node(doc))
        graph.owned.extend(gm.chunk_node(c) for c in doc_chunks)
        doc_node = gm.doc_node_id(doc.doc_id)
        graph.relations.extend(
            gm.relation(c.chunk_id, gm.PART_OF, doc_node, 0.0) for c in doc_chunks
        )
    access = {doc.doc_id: document_access(doc) or PUBLIC for doc, _ in items}
    chunk_access = {c.chunk_id: access[c.doc_id] for _, cs in items for c in cs}
    for extracted_by_one in fragments:
        for (doc, _), fragment in zip(items, extracted_by_one, strict=True):
            for node in fragment.nodes:  # nodes carrying a doc_id of the batch are its own
                own = node.properties.get("doc_id") in access
                if own and node.label == gm.FACT:  # as private as its document
                    node.properties[ACCESS_FIELD] = access[node.properties["doc_id"]]
                (graph.owned if own else graph.extracted).append(node)
            for rel in fragment.relations:  # what a document says is as private as it
                rel.properties.setdefault(ACCESS_FIELD, access[doc.doc_id])
            graph.relations.extend(fragment.relations)
            facts = (n for n in fragment.nodes if n.label == gm.FACT)
            names, mentions = fact_names(facts, doc.title, access[doc.doc_id])
            graph.extracted.extend(names)
            graph.relations.extend(mentions)
    for rel in graph.relations:
        rel.properties.setdefault(ACCESS_FIELD, chunk_access.get(rel.source_id, PUBLIC))
    return graph
