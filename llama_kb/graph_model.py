"""How documents, chunks and entities are laid out in the property graph.

Nodes (ids are URI-like, as in seed 003):

* ``doc:<doc_id>`` label ``document``, name = the document title;
* chunk ids from the chunker, label ``text_chunk`` (LlamaIndex ``ChunkNode``), text = chunk;
* ``entity:<name-key>`` label ``entity``, name = the entity's surface name;
* ``section:<name-key>`` label ``section``, name = a section heading (a label for where a
  chunk sits, not a named thing: chunks are never linked to it by mention);
* ``symbol:<file key>#<qualified name>`` label ``symbol``, name = the qualified name, a code
  definition (function, class, method); ``symbol:<name>`` a name whose file is not known (an
  imported name); an imported module is ``module:<name>``, label ``symbol`` too.
* ``fact:<hash>`` label ``fact``: one typed relation (subject, predicate, object) read from a
  sentence or a record, stored with its evidence and ``doc_id`` (so re-ingesting a document
  replaces its facts). Linking and the retrieval name index skip fact nodes.

Relations carry a traversal cost ``weight`` in 0..1 (0 = always loaded together):

* chunk ``PART_OF`` document (0.0);
* chunk ``MENTIONS`` document or entity (0.5), property ``signal`` says how it was found
  (``name``, ``llm``);
* chunk ``IN_SECTION`` section (0.5);
* chunk ``LINKS_TO`` document (0.5), from a link in the source;
* code: chunk ``DEFINES`` symbol (0.0), symbol ``MEMBER_OF`` symbol (0.0), symbol ``CALLS``
  symbol (0.5), chunk ``IMPORTS`` module (0.5).

Relations produced by LLM extractors or loaded knowledge keep their own labels and weights.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from llama_index.core.bridge.pydantic import Field
from llama_index.core.graph_stores.types import ChunkNode, EntityNode, Relation

from llama_kb.names import name_key
from llama_kb.types import SourceDocument, TextChunk

DOCUMENT = "document"
CHUNK = "text_chunk"
ENTITY = "entity"
SECTION = "section"
SYMBOL = "symbol"
FACT = "fact"

PART_OF = "PART_OF"
MENTIONS = "MENTIONS"
LINKS_TO = "LINKS_TO"
IN_SECTION = "IN_SECTION"

MENTION_COST = 0.5

STRUCTURAL_RELATIONS = frozenset({PART_OF, MENTIONS, LINKS_TO, IN_SECTION})
"""Plumbing relations: kept for traversal and provenance, not returned as facts by default."""


class NamedNode(EntityNode):
    """An ``EntityNode`` with an explicit URI-like id (LlamaIndex derives ids from names)."""

    id_: str = Field(description="The node id, e.g. 'doc:...' or 'entity:...'.")

    @property
    def id(self) -> str:
        """The node id."""
        return self.id_


def doc_node_id(doc_id: str) -> str:
    """Graph id of the node standing for document ``doc_id``."""
    return f"doc:{doc_id}"


def entity_node_id(name: str) -> str:
    """Graph id of the entity called ``name`` (case and punctuation insensitive)."""
    return entity_id_of_key(name_key(name))


def entity_id_of_key(key: str) -> str:
    """Graph id of the entity whose :func:`~llama_kb.names.name_key` is ``key``."""
    return f"entity:{key}"


def document_node(doc: SourceDocument) -> NamedNode:
    """The node for a document; its name is the title, so mentions of the title link to it."""
    title = doc.title or doc.doc_id
    return NamedNode(
        id_=doc_node_id(doc.doc_id),
        name=title,
        label=DOCUMENT,
        properties={"document": doc.doc_id, "source_path": doc.source_path},
    )


def placeholder_document_node(doc_id: str) -> NamedNode:
    """A node for a linked-to document that is not ingested (seed 003: create missing resources)."""
    return NamedNode(
        id_=doc_node_id(doc_id),
        name=doc_id,
        label=DOCUMENT,
        properties={"document": doc_id, "placeholder": True},
    )


def entity_node(name: str, **properties: Any) -> NamedNode:
    """An entity node with a stable id derived from ``name``."""
    return NamedNode(id_=entity_node_id(name), name=name, label=ENTITY, properties=properties)


def section_node(heading: str) -> NamedNode:
    """The node of a section heading, shared by every chunk under a heading of that name."""
    return NamedNode(id_=f"section:{name_key(heading)}", name=heading, label=SECTION)


def chunk_node(chunk: TextChunk) -> ChunkNode:
    """The graph node of a chunk; it carries ``doc_id`` so a document's chunks can be deleted."""
    props = {k: v for k, v in chunk.metadata.items() if v is not None}
    props["doc_id"] = chunk.doc_id
    return ChunkNode(text=chunk.text, id_=chunk.chunk_id, label=CHUNK, properties=props)


def relation(source: str, label: str, target: str, weight: float, **properties: Any) -> Relation:
    """A relation with its traversal cost stored as the ``weight`` property."""
    return Relation(
        label=label, source_id=source, target_id=target, properties={"weight": weight, **properties}
    )


def fact_node(
    subject: str,
    predicate: str,
    obj: str,
    chunk: TextChunk,
    evidence: str,
    extractor: str,
) -> NamedNode:
    """A typed fact read from ``chunk``; its name is the text form ``"subject predicate object"``
    (name lookups for linking skip the ``fact`` label).

    Args:
        subject: Subject name as written.
        predicate: Normalised relational phrase (lower case, lemmas), e.g. ``"depend on"``.
        obj: Object name or value as written.
        chunk: The chunk the fact was read from.
        evidence: The sentence, line or table cell the fact comes from.
        extractor: ``pattern`` (sentences), ``structure`` (records), ``llm`` or ``knowledge``.
    """
    subject, predicate, obj, evidence = (
        " ".join(t.split()) for t in (subject, predicate, obj, evidence)
    )
    key = f"{chunk.chunk_id}|{name_key(subject)}|{predicate}|{name_key(obj)}"
    digest = hashlib.sha1(key.encode("utf-8")).hexdigest()[:20]
    return NamedNode(
        id_=f"fact:{digest}",
        name=f"{subject} {predicate} {obj}",
        label=FACT,
        properties={
            "kind": FACT,
            "subject": subject,
            "predicate": predicate,
            "object": obj,
            "evidence": evidence,
            "chunk_id": chunk.chunk_id,
            "doc_id": chunk.doc_id,
            "extractor": extractor,
        },
    )


def embedded_phrases(nodes: Sequence[Any]) -> list[str]:
    """What queries compare by embedding: facts' relation phrases (fact ranking) and the names
    of entities and documents (fuzzy name linking)."""
    found: list[str] = []
    for node in nodes:
        if node.label == FACT:
            phrase = node.properties.get("predicate")
        elif node.label != CHUNK:
            phrase = getattr(node, "name", None)
        else:
            continue
        if isinstance(phrase, str) and phrase:
            found.append(phrase)
    return found
