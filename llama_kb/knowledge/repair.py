"""Find and remove knowledge orphans: records the knowledge layers cannot account for.

* ``unreadable_pieces``: records in the pieces collection that hold no valid knowledge piece
  (missing or broken piece JSON, or a piece whose id differs from the record's): search
  would fail on them and no load rewrites them, so repair deletes them;
* ``dangling_links``: knowledge relations whose ``piece_id`` names a piece that is not
  stored (its write failed after the relation's validation): repair rewrites the relation
  without the link, as the loader would have stored it.

Run it under the knowledge base's write lock (``kb.repair()`` takes it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from llama_index.core.graph_stores.types import Relation
from pydantic import ValidationError

from llama_kb.errors import BackendError
from llama_kb.ingest.repair import OrphanReport
from llama_kb.knowledge.graph import ORIGIN
from llama_kb.knowledge.model import KnowledgePiece
from llama_kb.knowledge.store import KnowledgeStore

__all__ = ["KnowledgeOrphans", "find_knowledge_orphans", "repair_knowledge", "with_knowledge"]

_PAGE = 500


@dataclass
class KnowledgeOrphans:
    """Knowledge orphans by kind (see the module docstring)."""

    unreadable_pieces: list[str] = field(default_factory=list)
    dangling_links: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when nothing needs repair."""
        return not (self.unreadable_pieces or self.dangling_links)


def find_knowledge_orphans(store: KnowledgeStore) -> KnowledgeOrphans:
    """Check the pieces collection and the knowledge relations; reads only."""
    stored, unreadable = _scan_pieces(store)
    dangling = [_describe(rel) for rel in _dangling_relations(store, stored)]
    return KnowledgeOrphans(unreadable_pieces=unreadable, dangling_links=dangling)


def repair_knowledge(store: KnowledgeStore) -> KnowledgeOrphans:
    """Find knowledge orphans and remove them; returns what was found.

    Raises:
        BackendError: A store failed while deleting or rewriting.
    """
    stored, unreadable = _scan_pieces(store)
    if unreadable:
        try:
            store.pieces.collection.delete(ids=unreadable)
        except Exception as e:  # chromadb raises bare exceptions
            raise BackendError(f"Chroma delete of knowledge pieces failed: {e}") from e
    dangling = _dangling_relations(store, stored)
    if dangling:
        store.graph.graph.upsert_relations(
            [
                Relation(
                    label=rel.label,
                    source_id=rel.source_id,
                    target_id=rel.target_id,
                    properties={k: v for k, v in rel.properties.items() if k != "piece_id"},
                )
                for rel in dangling
            ]
        )
    return KnowledgeOrphans(unreadable, [_describe(rel) for rel in dangling])


def with_knowledge(report: OrphanReport, store: KnowledgeStore, repair: bool) -> OrphanReport:
    """``report`` (of the document stores) completed with the knowledge orphans.

    Args:
        report: What :func:`llama_kb.ingest.repair.find_orphans` or ``repair`` returned.
        store: The knowledge layers.
        repair: Remove the knowledge orphans too (else only look).
    """
    found = repair_knowledge(store) if repair else find_knowledge_orphans(store)
    report.orphan_pieces = found.unreadable_pieces
    report.dangling_links = found.dangling_links
    report.repaired = repair and not report.ok
    return report


def _scan_pieces(store: KnowledgeStore) -> tuple[set[str], list[str]]:
    """Ids of readable pieces, and ids of unreadable records (sorted)."""
    readable: set[str] = set()
    unreadable: list[str] = []
    collection = store.pieces.collection
    offset = 0
    while True:
        try:
            page = collection.get(include=["metadatas"], limit=_PAGE, offset=offset)
        except Exception as e:
            raise BackendError(f"Chroma read of knowledge pieces failed: {e}") from e
        ids = page["ids"]
        for record_id, meta in zip(ids, page["metadatas"] or [None] * len(ids), strict=True):
            (readable.add if _readable(record_id, meta) else unreadable.append)(record_id)
        if len(ids) < _PAGE:
            return readable, sorted(unreadable)
        offset += _PAGE


def _readable(record_id: str, meta: object) -> bool:
    if not isinstance(meta, dict) or not isinstance(meta.get("piece"), str):
        return False
    try:
        return KnowledgePiece.model_validate_json(meta["piece"]).piece_id == record_id
    except ValidationError:
        return False


def _dangling_relations(store: KnowledgeStore, pieces: set[str]) -> list[Relation]:
    graph = store.graph.graph
    node_ids = [node.id for node in graph.get(properties={"origin": ORIGIN})]
    if not node_ids:
        return []
    found: dict[tuple[str, str, str], Relation] = {}
    for _, rel, _ in graph.get_triplets(ids=node_ids):
        piece_id = rel.properties.get("piece_id")
        if rel.properties.get("origin") == ORIGIN and piece_id and piece_id not in pieces:
            found[(rel.source_id, rel.label, rel.target_id)] = rel
    return [found[key] for key in sorted(found)]


def _describe(rel: Relation) -> str:
    return f"{rel.source_id} -[{rel.label}]-> {rel.target_id}"
