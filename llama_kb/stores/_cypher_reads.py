"""The read operations of :class:`~llama_kb.stores.cypher.CypherGraphStoreMixin`.

Results carry llama-kb ids and come back sorted by id (see :mod:`llama_kb.stores.cypher`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from typing import Any

from llama_index.core.graph_stores.types import LabelledNode, Relation, Triplet

from llama_kb.access import readable
from llama_kb.stores._cypher_base import (
    _PATTERNS,
    ENTITY_LABEL,
    META_LABEL,
    CypherRunner,
    _batches,
    _relation,
    identifier,
    kb_label,
    to_node,
)
from llama_kb.stores.ownership import check_owner
from llama_kb.stores.traversal import Direction, TraversalStep, traverse_fetched


class CypherReads(CypherRunner):
    """The :class:`~llama_kb.stores.graph.KBGraphStore` reads in Cypher."""

    @property
    def revision(self) -> int:
        """The number of write batches so far, stored in the graph (seen by all processes)."""
        rows = self._query(
            f"MATCH (m:{META_LABEL} {{key: 'revision'}}) RETURN m.value",
            action="read the revision counter",
        )
        return int(rows[0][0]) if rows and rows[0][0] is not None else 0

    def get(
        self, properties: dict[str, Any] | None = None, ids: list[str] | None = None
    ) -> list[LabelledNode]:
        """Nodes matching every given filter, with llama-kb ids (all nodes without filters).

        Unlike LlamaIndex's server stores, entity nodes come back with their stored ``id``
        (a :class:`~llama_kb.graph_model.NamedNode` when it differs from the name).
        """
        params: dict[str, Any] = {}
        conds = ["n.id IS NOT NULL"]
        for i, (key, value) in enumerate((properties or {}).items()):
            conds.append(f"n.{identifier(key, 'property')} = $p{i}")
            params[f"p{i}"] = value
        ret = " RETURN n.id, n.name, n.text, labels(n), n{.*, embedding: null}"
        where = " WHERE " + " AND ".join(conds)
        rows: list[list[Any]] = []
        if ids:
            for batch in _batches(ids):
                rows.extend(
                    self._per_id_label(
                        "UNWIND $ids AS node_id MATCH (n:{label} {id: node_id})" + where + ret,
                        {**params, "ids": batch},
                        action="read nodes",
                    )
                )
        else:
            rows = self._per_id_label("MATCH (n:{label})" + where + ret, params, action="read")
        found = {r[0]: to_node(*r) for r in rows}
        return [found[k] for k in sorted(found)]

    def get_triplets(
        self,
        entity_names: list[str] | None = None,
        relation_names: list[str] | None = None,
        properties: dict[str, Any] | None = None,
        ids: list[str] | None = None,
    ) -> list[Triplet]:
        """Triplets ``(subject, relation, object)`` matching every given filter, with llama-kb ids.

        As in the embedded store (and unlike LlamaIndex's server stores, which report names
        as ids and skip chunks): ``entity_names`` and ``ids`` match the subject or the object
        (by name or id, and by id), ``relation_names`` the relation type, and each
        ``properties`` pair the subject, the relation or the object. No filter: no triplets.
        Sorted by (subject id, type, object id).
        """
        if not (entity_names or relation_names or properties or ids):
            return []
        endpoint_sets: list[set[str]] = []
        if entity_names:
            rows = self._per_id_label(
                "MATCH (n:{label}) WHERE n.name IN $names OR n.id IN $names RETURN n.id",
                {"names": list(entity_names)},
                action="read nodes",
            )
            endpoint_sets.append({r[0] for r in rows})
        if ids:
            endpoint_sets.append(set(ids))
        conds: list[str] = []
        params: dict[str, Any] = {}
        if relation_names:
            conds.append("type(r) IN $types")
            params["types"] = list(relation_names)
        for i, (key, value) in enumerate((properties or {}).items()):
            quoted = identifier(key, "property")
            conds.append(f"(s.{quoted} = $p{i} OR r.{quoted} = $p{i} OR t.{quoted} = $p{i})")
            params[f"p{i}"] = value
        ret = (
            " RETURN s.id, s.name, s.text, labels(s), s{.*, embedding: null}, type(r), r{.*},"
            " t.id, t.name, t.text, labels(t), t{.*, embedding: null}"
        )
        rows = []
        if endpoint_sets:
            first, *others = endpoint_sets
            where = f" WHERE {' AND '.join(conds)}" if conds else ""
            query = (
                "UNWIND $ids AS node_id MATCH (n:{label} {id: node_id})-[r]-() "
                f"WITH startNode(r) AS s, r, endNode(r) AS t{where}{ret}"
            )
            for batch in _batches(sorted(first)):
                rows.extend(self._per_id_label(query, {**params, "ids": batch}, action="read"))
            rows = [r for r in rows if all(r[0] in o or r[7] in o for o in others)]
        else:
            any_node = self.dialect.any_node
            where = f" WHERE {' AND '.join(conds)}"
            rows = self._query(
                f"MATCH (s{any_node})-[r]->(t{any_node}){where}{ret}", params, action="read"
            )
        found: dict[tuple[str, str, str], Triplet] = {}
        for row in rows:
            source, target = to_node(*row[0:5]), to_node(*row[7:12])
            found[(row[0], row[5], row[7])] = (
                source,
                _relation(row[0], row[7], row[5], row[6]),
                target,
            )
        return [found[k] for k in sorted(found)]

    def named_nodes(
        self, labels: Iterable[str] | None = None, ids: Iterable[str] | None = None
    ) -> list[tuple[str, str, str]]:
        """``(id, name, label)`` of entity-like nodes (not chunks), sorted by id.

        Args:
            labels: Only nodes with one of these llama-kb labels.
            ids: Only nodes with one of these ids.
        """
        wanted = None if labels is None else set(labels)
        if wanted == set():
            return []
        entity = identifier(ENTITY_LABEL)
        ret = " RETURN n.id, coalesce(n.name, n.id), labels(n)"
        if ids is None:
            rows = self._query(f"MATCH (n:{entity})" + ret, action="read names")
        else:
            rows = []
            for batch in _batches(ids):
                rows.extend(
                    self._query(
                        f"UNWIND $ids AS node_id MATCH (n:{entity} {{id: node_id}})" + ret,
                        {"ids": batch},
                        action="read names",
                    )
                )
        found = {r[0]: (r[0], r[1], kb_label(r[2])) for r in rows}
        return [found[k] for k in sorted(found) if wanted is None or found[k][2] in wanted]

    def nodes_with_incoming(self, ids: Iterable[str]) -> set[str]:
        """Those of ``ids`` that some relation points to."""
        rows = self._by_ids(
            "UNWIND $ids AS node_id MATCH (n:{label} {id: node_id}) WHERE (n)<--() "
            "RETURN DISTINCT n.id",
            ids,
            action="read incoming relations",
        )
        return {r[0] for r in rows}

    def relations_among(
        self, ids: Iterable[str], access: Collection[str] | None = None
    ) -> list[Relation]:
        """Relations whose source and target are both in ``ids`` (readable with ``access``),
        sorted."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return []
        rows = self._per_id_label(
            "UNWIND $ids AS node_id MATCH (n:{label} {id: node_id})-[r]->(m) "
            "WHERE m.id IN $ids RETURN n.id, m.id, type(r), r{.*}",
            {"ids": wanted},
            action="read relations",
        )
        found = {
            (s, t, kind): _relation(s, t, kind, props)
            for s, t, kind, props in rows
            if readable(props or {}, access)
        }
        return [found[k] for k in sorted(found)]

    def iter_relations(
        self, relation_types: Iterable[str] | None = None
    ) -> Iterator[tuple[str, str, str, float]]:
        """Every relation as ``(source_id, target_id, type, weight)``.

        One query: the rows are fetched before the first one is yielded.
        """
        types = None if relation_types is None else list(dict.fromkeys(relation_types))
        if types == []:
            return
        any_node = self.dialect.any_node
        where = " WHERE type(r) IN $types" if types else ""
        rows = self._query(
            f"MATCH (s{any_node})-[r]->(t{any_node}){where} RETURN s.id, t.id, type(r), r.weight",
            {"types": types} if types else {},
            action="read relations",
        )
        for source, target, rel_type, weight in rows:
            yield source, target, rel_type, 1.0 if weight is None else float(weight)

    def claim(self, kb_id: str, fresh: bool) -> None:
        """Record ``kb_id`` as the graph's owner (see :func:`.ownership.check_owner`).

        Raises:
            KnowledgeBaseError: Another knowledge base owns or uses the graph.
        """
        rows = self._query(
            f"MATCH (m:{META_LABEL} {{key: 'owner'}}) RETURN m.value", action="read the owner"
        )
        owner = rows[0][0] if rows else None
        namespace = str(getattr(self, "graph_name", None) or self.dialect.name)
        check_owner("graph", namespace, owner, kb_id, self.count_nodes(), fresh)
        if owner != kb_id:
            self._query(
                f"MERGE (m:{META_LABEL} {{key: 'owner'}}) SET m.value = $owner",
                {"owner": kb_id},
                write=True,
                action="record the owner",
            )

    def count_nodes(self, label: str | None = None) -> int:
        """Number of nodes (of llama-kb ``label``), the revision counter excluded."""
        if label is None:
            pattern, conds = f"(n{self.dialect.any_node})", [f"NOT n:{META_LABEL}"]
        else:
            pattern, conds = self._label_match(label)
        where = f" WHERE {' AND '.join(conds)}" if conds else ""
        rows = self._query(f"MATCH {pattern}{where} RETURN count(n)", action="count nodes")
        return int(rows[0][0]) if rows else 0

    def count_relations(self, relation_type: str | None = None) -> int:
        """Number of relations (of ``relation_type``)."""
        any_node = self.dialect.any_node
        where = " WHERE type(r) = $type" if relation_type is not None else ""
        rows = self._query(
            f"MATCH ({any_node})-[r]->({any_node}){where} RETURN count(r)",
            {"type": relation_type} if relation_type is not None else {},
            action="count relations",
        )
        return int(rows[0][0]) if rows else 0

    def traverse(
        self,
        start_ids: Iterable[str],
        max_cost: float = 1.0,
        max_hops: int = 3,
        max_nodes: int = 100,
        relation_types: Iterable[str] | None = None,
        direction: Direction = "both",
        access: Collection[str] | None = None,
    ) -> list[TraversalStep]:
        """Cost-bounded search from ``start_ids`` (see :mod:`llama_kb.stores.traversal`).

        Each frontier costs one query per id label.
        """
        types = None if relation_types is None else list(dict.fromkeys(relation_types))
        pattern = _PATTERNS.get(direction, "-[r]-")  # an unknown direction fails in the search
        where = " WHERE type(r) IN $types" if types else ""
        load_query = (
            f"UNWIND $ids AS node_id MATCH (n:{{label}} {{id: node_id}}){pattern}(m){where} "
            "RETURN n.id, startNode(r).id, endNode(r).id, type(r), r{.*}"
        )

        def fetch(ids: list[str]) -> Iterable[Relation]:
            for batch in _batches(ids):
                params: dict[str, Any] = {"ids": batch}
                if types:
                    params["types"] = types
                rows = self._per_id_label(load_query, params, action="traverse")
                for _node_id, source, target, rel_type, props in rows:
                    if readable(props or {}, access):
                        yield _relation(source, target, rel_type, props)

        def existing(ids: set[str]) -> set[str]:
            rows = self._by_ids(
                "UNWIND $ids AS node_id MATCH (n:{label} {id: node_id}) RETURN n.id",
                ids,
                action="traverse",
            )
            return {r[0] for r in rows}

        return traverse_fetched(
            start_ids, fetch, existing, max_cost, max_hops, max_nodes, types, direction
        )
