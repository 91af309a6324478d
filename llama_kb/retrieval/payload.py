"""The fused payload: chunks and facts kept apart, with provenance and a trace."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from llama_kb.graph_model import STRUCTURAL_RELATIONS
from llama_kb.types import Route, SearchHit

UNSTRUCTURED_HEADING = "General description (retrieved passages)"
STRUCTURED_HEADING = "Specific facts and relationships (knowledge graph)"
KNOWLEDGE_HEADING = "Curated knowledge (knowledge pieces)"


@dataclass(frozen=True)
class KnowledgeHit:
    """A knowledge piece (seed 000's second layer) close to the query.

    Attributes:
        piece_id: The piece's id.
        content: Its text.
        knowledge_type: What it is (``fact``, ``instruction``, ``procedure`` ...).
        info_type: The prompt section it belongs to (``instructions``, ``context`` ...).
        score: Cosine similarity to the query in [0, 1].
        entity_id: The entity it belongs to (``None``: shared by all).
    """

    piece_id: str
    content: str
    knowledge_type: str
    info_type: str
    score: float
    entity_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable view."""
        return asdict(self)


@dataclass(frozen=True)
class Fact:
    """A (subject, predicate, object) fact from the graph, with where it came from.

    Attributes:
        subject: Name of the subject node (a chunk is shown as its document's title).
        predicate: The relation label, e.g. ``MENTIONS`` or ``directed``.
        object: Name of the object node.
        subject_id: Graph id of the subject.
        object_id: Graph id of the object.
        source_ids: Chunk or document ids the fact was read from.
        path_cost: Summed relation weights from the nearest seed entity (0 = a seed's own edge).
        hops: Relations between the nearest seed and this fact.
        score: Relevance to the query in [0, 1] (the same scale as passage scores).
        evidence: The sentence, line or table cell the fact was read from.
        chunk_id: The chunk holding the evidence, when known.
        doc_id: The document holding the evidence, when known.
        extractor: Who produced it: ``pattern`` (sentences), ``structure`` (records),
            ``llm``, ``knowledge`` or ``graph`` (a structural edge).
    """

    subject: str
    predicate: str
    object: str
    subject_id: str
    object_id: str
    source_ids: tuple[str, ...] = ()
    path_cost: float = 0.0
    hops: int = 1
    score: float = 0.0
    evidence: str = ""
    chunk_id: str | None = None
    doc_id: str | None = None
    extractor: str = "graph"

    @property
    def structural(self) -> bool:
        """A plumbing edge (``MENTIONS``, ``LINKS_TO``, ``IN_SECTION``, ``PART_OF``)."""
        return self.predicate in STRUCTURAL_RELATIONS

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable view."""
        data = asdict(self)
        data["source_ids"] = list(self.source_ids)
        return data

    def render(self) -> str:
        """``subject --predicate--> object``, with the evidence sentence when there is one."""
        line = f"{self.subject} --{self.predicate}--> {self.object}"
        return f'{line} (evidence: "{self.evidence}")' if self.evidence else line


@dataclass(frozen=True)
class Classification:
    """How a query was routed, and why."""

    label: Route
    confidence: float
    reason: str
    method: str = "heuristic"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable view."""
        return {
            "label": self.label.value,
            "confidence": round(self.confidence, 3),
            "reason": self.reason,
            "method": self.method,
        }


@dataclass
class FusedContext:
    """What the unified retriever returns.

    Attributes:
        query: The query as answered.
        route: ``semantic``, ``factual`` or ``hybrid``.
        unstructured: Chunks, best first, deduplicated, each with per-retriever ranks.
        structured_facts: Deduplicated facts, most relevant first (``score`` in [0, 1]).
        entities: Names of the graph entities the answer is about.
        trace: Classifier decision, linked entities, per-retriever hits and timings,
            and anything that degraded.
        knowledge: Knowledge pieces close to the query that the principal may read (when
            the knowledge base holds any), labelled as such.
        query_vector: The query's embedding (not serialised; reused for knowledge pieces).
    """

    query: str
    route: Route
    unstructured: list[SearchHit] = field(default_factory=list)
    structured_facts: list[Fact] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    trace: dict[str, Any] = field(default_factory=dict)
    knowledge: list[KnowledgeHit] = field(default_factory=list)
    query_vector: list[float] | None = field(default=None, repr=False, compare=False)

    @property
    def degraded(self) -> list[str]:
        """Backends that failed for this query (empty when everything answered)."""
        return list(self.trace.get("degraded", []))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable view (``json.dumps`` works on it as is)."""
        return {
            "query": self.query,
            "route": self.route.value,
            "unstructured": [
                {
                    "chunk_id": h.chunk_id,
                    "doc_id": h.doc_id,
                    "text": h.text,
                    "score": round(h.score, 6),
                    "ranks": dict(h.ranks),
                    "metadata": dict(h.metadata),
                }
                for h in self.unstructured
            ],
            "structured_facts": [f.to_dict() for f in self.structured_facts],
            "entities": list(self.entities),
            "knowledge": [k.to_dict() for k in self.knowledge],
            "trace": json.loads(json.dumps(self.trace, default=str)),
        }

    def render(self, max_chars_per_chunk: int | None = None) -> str:
        """Prompt-ready text with the two kinds of context under separate headings."""
        passages = [
            f"[{i}] ({hit.metadata.get('title') or hit.doc_id})\n"
            + (hit.text if max_chars_per_chunk is None else hit.text[:max_chars_per_chunk]).strip()
            for i, hit in enumerate(self.unstructured, 1)
        ]
        facts = [f"- {fact.render()}" for fact in self.structured_facts]
        knowledge = [f"- [{k.knowledge_type}] {k.content}" for k in self.knowledge]
        return (
            f"## {UNSTRUCTURED_HEADING}\n\n"
            + ("\n\n".join(passages) or "(none)")
            + f"\n\n## {STRUCTURED_HEADING}\n\n"
            + ("\n".join(facts) or "(none)")
            + (f"\n\n## {KNOWLEDGE_HEADING}\n\n" + "\n".join(knowledge) if knowledge else "")
        )
