"""Knowledge retrieval across the three layers (seed 000, ``KnowledgeBase.retrieve``).

1. metadata: the entity's profile and the global profile, by key;
2. pieces: dense search for the query, filtered to the entity's and shared pieces (and by
   knowledge type, info type and tags when asked);
3. graph: breadth-first search from the entity's node over knowledge relations, both ways,
   up to ``graph_traversal_depth`` hops; a relation met at depth *d* scores ``1/d`` and pulls
   in the piece it links;
4. merge: one entry per ``piece_id`` with the higher score, sorted by ``(-score, piece_id)``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from llama_kb.access import PUBLIC, Principal
from llama_kb.errors import ConfigurationError, QueryError
from llama_kb.knowledge.graph import node_name
from llama_kb.knowledge.model import GLOBAL_ENTITY_ID, EntityMetadata, KnowledgePiece
from llama_kb.knowledge.pieces import piece_filters
from llama_kb.knowledge.store import HasKnowledge, KnowledgeStore, knowledge_store
from llama_kb.retrieval.knowledge_step import KnowledgeSearch
from llama_kb.retrieval.options import resolve_options
from llama_kb.retrieval.payload import KnowledgeHit

_HIDDEN_PROPERTIES = frozenset({"origin", "weight", "piece_id", "access"})


@dataclass(frozen=True)
class GraphContextItem:
    """A relation found by traversal, with how far from the entity it was met.

    Attributes:
        relation_type: The relation label (``SPECIALIZES_IN``).
        source_id: Source node id.
        target_id: Target node id.
        source_label: Display name of the source node.
        target_label: Display name of the target node.
        depth: BFS level at which the relation was met (1 = touches the entity).
        score: ``1 / depth``.
        weight: The relation's traversal cost (0..1).
        from_entity: True when the relation starts at the active entity.
        piece_id: The linked piece's id, if any.
        linked_piece: The linked piece, when it is stored.
        properties: The relation's other properties.
    """

    relation_type: str
    source_id: str
    target_id: str
    source_label: str
    target_label: str
    depth: int
    score: float
    weight: float = 1.0
    from_entity: bool = False
    piece_id: str | None = None
    linked_piece: KnowledgePiece | None = None
    properties: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable view (the linked piece by id only)."""
        return {
            "relation_type": self.relation_type,
            "source_id": self.source_id,
            "target_id": self.target_id,
            "source_label": self.source_label,
            "target_label": self.target_label,
            "depth": self.depth,
            "score": self.score,
            "weight": self.weight,
            "from_entity": self.from_entity,
            "piece_id": self.piece_id,
            "properties": dict(sorted(self.properties.items())),
        }


@dataclass(frozen=True)
class RetrievalResult:
    """What :func:`retrieve_knowledge` found.

    Attributes:
        query: The query.
        entity_id: The active entity, if any.
        metadata: The entity's metadata, if stored.
        global_metadata: Metadata shared by all entities, if stored.
        pieces: ``(piece, score)`` sorted by ``(-score, piece_id)``, one per piece id.
        graph_context: Relations around the entity, by (depth, type, source, target).
    """

    query: str
    entity_id: str | None = None
    metadata: EntityMetadata | None = None
    global_metadata: EntityMetadata | None = None
    pieces: list[tuple[KnowledgePiece, float]] = field(default_factory=list)
    graph_context: list[GraphContextItem] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable view."""
        return {
            "query": self.query,
            "entity_id": self.entity_id,
            "metadata": self.metadata.model_dump(mode="json") if self.metadata else None,
            "global_metadata": (
                self.global_metadata.model_dump(mode="json") if self.global_metadata else None
            ),
            "pieces": [{"piece": p.model_dump(mode="json"), "score": s} for p, s in self.pieces],
            "graph_context": [item.to_dict() for item in self.graph_context],
        }


def retrieve_knowledge(
    kb: KnowledgeStore | HasKnowledge,
    query: str,
    entity_id: str | None = None,
    top_k: int | None = None,
    graph_traversal_depth: int = 2,
    *,
    knowledge_types: Iterable[str] | None = None,
    info_types: Iterable[str] | None = None,
    tags: Iterable[str] | None = None,
    principal: Principal | Mapping[str, Any] | str | None = None,
) -> RetrievalResult:
    """Metadata, matching pieces and graph context for ``query`` as seen by ``entity_id``.

    Args:
        kb: An open knowledge base (or its :class:`KnowledgeStore`).
        query: The user input; an empty query skips the piece search.
        entity_id: The active entity (``user:alice``): the search is limited to its pieces
            and shared ones (without ``entity_id``) and the graph is searched from its node.
            ``None`` searches every piece and skips the graph.
        top_k: Most pieces from the search (pieces linked from the graph come on top);
            default: the knowledge base's ``retrieval.top_k``.
        graph_traversal_depth: Hops of the breadth-first search (0 = no graph).
        knowledge_types: Only pieces of these knowledge types.
        info_types: Only pieces of these info types.
        tags: Only pieces with at least one of these tags.
        principal: Who asks (:mod:`llama_kb.access`): only metadata, pieces and relations
            it may read are used; default anonymous (public knowledge).

    Returns:
        The :class:`RetrievalResult`.

    Raises:
        QueryError: ``top_k`` is not positive, ``graph_traversal_depth`` is negative or the
            principal is malformed.

    Example:
        >>> result = retrieve_knowledge(kb, "LES for jet noise", entity_id="user:alice")
        ... # doctest: +SKIP
    """
    if not isinstance(query, str):
        raise QueryError(f"query must be a string, not {type(query).__name__}")
    store = knowledge_store(kb)
    if isinstance(top_k, bool):
        raise QueryError(f"top_k must be a positive integer, got {top_k!r}")
    top_k = resolve_options(store.defaults, top_k=top_k).top_k
    depth = graph_traversal_depth
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 0:
        raise QueryError(f"graph_traversal_depth must be an integer >= 0, got {depth!r}")
    try:
        reader = Principal.parse(principal)
    except ConfigurationError as e:
        raise QueryError(f"invalid principal: {e}") from None
    wanted = _PieceFilter.build(knowledge_types, info_types, tags)
    metadata = _readable(reader, store.metadata.get(entity_id) if entity_id else None)
    global_metadata = _readable(
        reader, store.metadata.get(GLOBAL_ENTITY_ID) if entity_id != GLOBAL_ENTITY_ID else None
    )
    scored: dict[str, tuple[KnowledgePiece, float]] = {}
    if query.strip() and not wanted.empty:
        vector = store.embedding.get_query_embedding(query.strip())
        where = piece_filters(
            entity_id, wanted.knowledge_types, wanted.info_types, wanted.tags, reader
        )
        for piece, score in store.pieces.search(vector, top_k, where):
            _keep_best(scored, piece, score)
    graph_context = _graph_context(store, entity_id, depth, reader) if entity_id else []
    for item in graph_context:
        if item.linked_piece is not None and wanted.accepts(item.linked_piece):
            _keep_best(scored, item.linked_piece, item.score)
    pieces = sorted(scored.values(), key=lambda ps: (-ps[1], ps[0].piece_id))
    return RetrievalResult(query, entity_id, metadata, global_metadata, pieces, graph_context)


async def aretrieve_knowledge(
    kb: KnowledgeStore | HasKnowledge, query: str, **options: Any
) -> RetrievalResult:
    """Async :func:`retrieve_knowledge` (the blocking store calls run in a worker thread)."""
    return await asyncio.to_thread(retrieve_knowledge, kb, query, **options)


def _keep_best(
    scored: dict[str, tuple[KnowledgePiece, float]], piece: KnowledgePiece, score: float
) -> None:
    current = scored.get(piece.piece_id)
    if current is None or score > current[1]:
        scored[piece.piece_id] = (piece, score)


def _readable(reader: Principal, metadata: EntityMetadata | None) -> EntityMetadata | None:
    if metadata is None or not reader.can_read(metadata.permissions or PUBLIC):
        return None
    return metadata


def _graph_context(
    store: KnowledgeStore, entity_id: str, depth: int, reader: Principal
) -> list[GraphContextItem]:
    found = store.graph.neighbourhood(entity_id, depth, reader)
    linked = {
        piece_id: piece
        for piece_id, piece in store.pieces.get(
            sorted(
                {
                    str(t[1].properties["piece_id"])
                    for t, _ in found
                    if "piece_id" in t[1].properties
                }
            )
        ).items()
        if reader.can_read(piece.permissions or PUBLIC)
    }
    items = []
    for (source, rel, target), level in found:
        props = dict(rel.properties)
        piece_id = props.get("piece_id")
        items.append(
            GraphContextItem(
                relation_type=rel.label,
                source_id=rel.source_id,
                target_id=rel.target_id,
                source_label=node_name(source),
                target_label=node_name(target),
                depth=level,
                score=1.0 / level,
                weight=float(props.get("weight", 1.0)),
                from_entity=rel.source_id == entity_id,
                piece_id=piece_id,
                linked_piece=linked.get(piece_id) if piece_id else None,
                properties={k: v for k, v in props.items() if k not in _HIDDEN_PROPERTIES},
            )
        )
    return items


@dataclass(frozen=True)
class _PieceFilter:
    """The piece filters, applied in Python to pieces pulled in from the graph."""

    knowledge_types: frozenset[str] | None
    info_types: frozenset[str] | None
    tags: frozenset[str] | None

    @classmethod
    def build(
        cls,
        knowledge_types: Iterable[str] | None,
        info_types: Iterable[str] | None,
        tags: Iterable[str] | None,
    ) -> _PieceFilter:
        def as_set(values: Iterable[str] | None, lower: bool = False) -> frozenset[str] | None:
            if values is None:
                return None
            if isinstance(values, str):
                raise QueryError("filters take a list of values, not a single string")
            return frozenset(str(v).lower() if lower else str(v) for v in values)

        return cls(as_set(knowledge_types, lower=True), as_set(info_types), as_set(tags))

    @property
    def empty(self) -> bool:
        """True when a filter admits nothing (an empty list)."""
        return any(
            f is not None and not f for f in (self.knowledge_types, self.info_types, self.tags)
        )

    def accepts(self, piece: KnowledgePiece) -> bool:
        """Whether ``piece`` passes every filter."""
        return (
            (self.knowledge_types is None or piece.knowledge_type.value in self.knowledge_types)
            and (self.info_types is None or piece.info_type in self.info_types)
            and (self.tags is None or bool(self.tags.intersection(piece.tags)))
        )


def piece_search(store: KnowledgeStore) -> KnowledgeSearch:
    """The engine's search of ``store``'s pieces (see :mod:`llama_kb.retrieval.knowledge_step`):
    the pieces a principal may read, closest first."""

    def search(vector: Sequence[float], top_k: int, principal: Principal) -> list[KnowledgeHit]:
        found = store.pieces.search(vector, top_k, piece_filters(reader=principal))
        return [
            KnowledgeHit(
                piece.piece_id,
                piece.content,
                piece.knowledge_type.value,
                piece.info_type,
                score,
                piece.entity_id,
            )
            for piece, score in found
        ]

    return search
