"""llama-kb's own graph queries in Cypher, written once for Neo4j and FalkorDB.

The server graph stores subclass LlamaIndex's ``Neo4jPropertyGraphStore`` and
``FalkorDBPropertyGraphStore`` and keep their node layout, so a ``PropertyGraphIndex`` on the
same graph keeps working:

* every node has an ``id`` property: llama-kb's URI-like id (``NamedNode.id_``, a chunk id);
* entity-like nodes (``EntityNode`` / :class:`~llama_kb.graph_model.NamedNode`) carry the
  graph label ``__Entity__``, their llama-kb label (``entity``, ``document``) as a second
  graph label, and a ``name`` property;
* chunk nodes (``ChunkNode``) carry the graph label ``Chunk`` and a ``text`` property;
  llama-kb reports them with the label ``text_chunk`` (the graph does not keep a chunk's
  own label);
* Neo4j also puts ``__Node__`` on every node (FalkorDB graphs hold one knowledge base only);
* a relation's type is its label; its traversal cost is the ``weight`` property (0..1);
* one ``(:LlamaKBMeta {key: "revision"})`` node counts write batches, so readers in other
  processes notice changes (:attr:`CypherGraphStoreMixin.revision`);
* the writes add search properties (``kb_*``, never reported back) and keep per-access
  counts in ``LlamaKBMeta`` nodes, which :attr:`CypherGraphStoreMixin.search_index` reads
  (:mod:`llama_kb.stores.cypher_search`).

Differences from the embedded store: node properties are merged into the stored ones (as
LlamaIndex does) rather than replaced; results come back sorted by id, not in insertion order.

Safety: values are always query parameters. Labels and property keys cannot be parameters in
Cypher, so the few that are written into query text are first checked against the strict
:data:`IDENTIFIER` pattern (:func:`identifier`); relation types are only ever compared as
parameters (``type(r) IN $types``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from llama_index.core.graph_stores.types import ChunkNode, EntityNode, LabelledNode, Relation

from llama_kb import graph_model as gm
from llama_kb.stores._cypher_base import (
    CHUNK_LABEL,
    ENTITY_LABEL,
    IDENTIFIER,
    META_LABEL,
    NODE_LABEL,
    CypherDialect,
    CypherRunner,
    _equal_conditions,
    identifier,
    kb_label,
    to_node,
    weighted,
)
from llama_kb.stores._cypher_reads import CypherReads
from llama_kb.stores._cypher_search_base import SharedReads
from llama_kb.stores._cypher_search_fill import fill_search
from llama_kb.stores._cypher_search_props import node_properties
from llama_kb.stores._cypher_search_stats import (
    Deltas,
    RelationKey,
    SearchStats,
    chunk_deltas,
    relation_deltas,
)
from llama_kb.stores.cypher_search import CypherSearchIndex

_VALUES_PER_READ = 500
"""Property values one read of :meth:`CypherGraphStoreMixin.delete_by_values` matches."""

__all__ = [
    "CHUNK_LABEL",
    "ENTITY_LABEL",
    "IDENTIFIER",
    "META_LABEL",
    "NODE_LABEL",
    "CypherDialect",
    "CypherGraphStoreMixin",
    "CypherReads",
    "CypherRunner",
    "identifier",
    "kb_label",
    "to_node",
    "weighted",
]

logger = logging.getLogger(__name__)


class CypherGraphStoreMixin(CypherReads):
    """The :class:`~llama_kb.stores.graph.KBGraphStore` operations in Cypher.

    Mixed in before a LlamaIndex property graph store class; upserts go through that class
    (so its layout is kept) and are followed by a revision bump. Subclasses provide
    :attr:`dialect`, :attr:`endpoint` and :meth:`_run`. The reads live in
    :class:`~llama_kb.stores._cypher_reads.CypherReads`, the query plumbing in
    :class:`~llama_kb.stores._cypher_base.CypherRunner`; this class adds the writes, which
    keep the search properties and counts of :attr:`search_index` current.
    """

    def _setup_schema(self) -> None:
        super()._setup_schema()
        fill_search(self)

    @property
    def search_index(self) -> CypherSearchIndex:
        """Bounded lookups for retrieval (full-text, names, neighbourhoods, facts)."""
        if getattr(self, "_shared_reads", None) is None:  # shared by every index of this store
            self._shared_reads = SharedReads()
        return CypherSearchIndex(self, shared=self._shared_reads)

    # -- KBGraphStore: writes ---------------------------------------------------------

    def upsert_nodes(self, nodes: Sequence[LabelledNode]) -> None:
        """Insert or update nodes (LlamaIndex's upsert; properties are merged)."""
        nodes = [_searchable(n) for n in nodes]
        if not nodes:
            return
        stats = SearchStats(self)
        chunk_ids = [n.id for n in nodes if isinstance(n, ChunkNode)]
        before = stats.chunk_rows(chunk_ids) if chunk_ids else {}
        with self.endpoint.errors("upsert nodes"):
            super().upsert_nodes(nodes)  # type: ignore[misc]
        if chunk_ids:
            deltas = Deltas()
            chunk_deltas(deltas, before, stats.chunk_rows(chunk_ids))
            stats.apply(deltas)
        self._bump()

    def upsert_relations(self, relations: list[Relation]) -> None:
        """Insert or update relations; ``weight`` is validated and defaults to 1.0.

        Raises:
            DocumentError: A relation has an invalid weight.
        """
        if not relations:
            return
        checked = [weighted(r) for r in relations]
        stats = SearchStats(self)
        keys: list[RelationKey] = [(r.source_id, r.label, r.target_id) for r in checked]
        before = stats.relation_rows(keys)
        with self.endpoint.errors("upsert relations"):
            self._write_relations(checked)
        deltas = Deltas()
        relation_deltas(deltas, before, stats.relation_rows(keys))
        stats.apply(deltas)
        self._bump()

    def _write_relations(self, relations: list[Relation]) -> None:
        super().upsert_relations(relations)  # type: ignore[misc]

    def delete(
        self,
        entity_names: list[str] | None = None,
        relation_names: list[str] | None = None,
        properties: dict | None = None,
        ids: list[str] | None = None,
    ) -> None:
        """Delete matching data.

        Args:
            entity_names: Delete the nodes with these names or ids, and their relations.
            relation_names: Delete every relation of these types (the nodes stay).
            properties: Delete the nodes, and the relations, whose properties match all pairs.
            ids: Delete the nodes with these ids, and their relations.
        """
        if not (entity_names or relation_names or properties or ids):
            return
        action = "delete"
        doomed: list[str] = list(ids or [])
        if entity_names:
            rows = self._per_id_label(
                "MATCH (n:{label}) WHERE n.name IN $names OR n.id IN $names RETURN n.id",
                {"names": list(entity_names)},
                action=action,
            )
            doomed.extend(r[0] for r in rows)
        params = {f"p{i}": v for i, v in enumerate((properties or {}).values())}
        if properties:
            rows = self._per_id_label(
                f"MATCH (n:{{label}}) WHERE {_equal_conditions('n', properties)} RETURN n.id",
                params,
                action=action,
            )
            doomed.extend(r[0] for r in rows)
        self._delete_nodes(doomed)
        any_node = self.dialect.any_node
        if relation_names:
            self._delete_relations(
                f"MATCH (s{any_node})-[r]->(t{any_node}) WHERE type(r) IN $types",
                {"types": list(relation_names)},
            )
        if properties:
            self._delete_relations(
                f"MATCH (s{any_node})-[r]->(t{any_node}) "
                f"WHERE {_equal_conditions('r', properties)}",
                params,
            )
        self._bump()

    def _delete_nodes(self, ids: list[str]) -> int:
        """Delete the nodes with ``ids`` and their relations, uncounting them; how many."""
        if not ids:
            return 0
        stats = SearchStats(self)
        deltas = Deltas()
        chunk_deltas(deltas, stats.chunk_rows(ids), {})
        deltas.relations(stats.touching(ids), -1)
        rows = self._by_ids(
            "UNWIND $ids AS node_id MATCH (n:{label} {id: node_id}) DETACH DELETE n "
            "RETURN count(n)",
            ids,
            write=True,
            action="delete",
        )
        stats.apply(deltas)
        return sum(int(r[0]) for r in rows)

    def _delete_relations(self, match: str, params: dict[str, Any]) -> None:
        """Delete the relations ``r`` that ``match`` finds, uncounting them."""
        rows = self._query(
            f"{match} RETURN s.id, t.id, type(r), coalesce(r.access, 'public')",
            params,
            action="delete",
        )
        if not rows:
            return
        self._query(f"{match} DELETE r", params, write=True, action="delete")
        deltas = Deltas()
        deltas.relations(((str(a), str(b), str(c), str(d)) for a, b, c, d in rows), -1)
        SearchStats(self).apply(deltas)

    def delete_by_property(self, key: str, value: Any) -> int:
        """Delete the nodes whose property ``key`` equals ``value``, with their relations.

        Returns:
            The number of nodes deleted.
        """
        return self.delete_by_values(key, [value])

    def delete_by_values(self, key: str, values: Sequence[Any]) -> int:
        """Delete the nodes whose property ``key`` equals one of ``values``, with their
        relations: a few round trips for all of them, not a few per value.

        Returns:
            The number of nodes deleted.
        """
        template = (
            f"MATCH (n:{{label}}) WHERE n.{identifier(key, 'property')} IN $values RETURN n.id"
        )
        ids: list[str] = []
        unique = list(dict.fromkeys(values))
        for start in range(0, len(unique), _VALUES_PER_READ):
            params = {"values": unique[start : start + _VALUES_PER_READ]}
            rows = self._per_id_label(template, params, action=f"delete nodes by {key}")
            ids.extend(str(r[0]) for r in rows)
        count = self._delete_nodes(list(dict.fromkeys(ids)))
        if count:
            self._bump()
        logger.debug("deleted %d nodes with %s in %d values", count, key, len(unique))
        return count

    def delete_orphan_entities(self, label: str = gm.ENTITY) -> int:
        """Delete the nodes labelled ``label`` that no relation touches any more."""
        pattern, conds = self._label_match(label)
        where = f" WHERE {' AND '.join(conds)}" if conds else ""
        # Counting relations instead of `WHERE NOT (n)--()`: FalkorDB 4.x crashes on a
        # pattern predicate over a two-label node pattern.
        rows = self._query(
            f"MATCH {pattern}{where} OPTIONAL MATCH (n)-[r]-() WITH n, count(r) AS degree "
            "WHERE degree = 0 DELETE n RETURN count(n)",
            write=True,
            action="delete orphan nodes",
        )
        count = int(rows[0][0]) if rows else 0
        if count:
            self._bump()
        return count


def _searchable(node: LabelledNode) -> LabelledNode:
    """``node`` with its search properties (see :mod:`._cypher_search_props`)."""
    if isinstance(node, ChunkNode):
        extra = node_properties(gm.CHUNK, None, node.text, node.properties)
    elif isinstance(node, EntityNode):
        extra = node_properties(node.label, node.name, None, node.properties)
    else:
        return node
    return node.model_copy(update={"properties": {**node.properties, **extra}})
