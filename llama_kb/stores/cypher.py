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
  processes notice changes (:attr:`CypherGraphStoreMixin.revision`).

Differences from the embedded store: node properties are merged into the stored ones (as
LlamaIndex does) rather than replaced; results come back sorted by id, not in insertion order.

Safety: values are always query parameters. Labels and property keys cannot be parameters in
Cypher, so the few that are written into query text are first checked against the strict
:data:`IDENTIFIER` pattern (:func:`identifier`); relation types are only ever compared as
parameters (``type(r) IN $types``).
"""

from __future__ import annotations

import logging
import re
from abc import abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from llama_index.core.graph_stores.types import (
    ChunkNode,
    EntityNode,
    LabelledNode,
    Relation,
    Triplet,
)

from llama_kb import graph_model as gm
from llama_kb.errors import BackendError, QueryError
from llama_kb.stores._remote import ServerEndpoint
from llama_kb.stores.sqlite_graph import _validate_weight
from llama_kb.stores.traversal import Direction, TraversalStep, traverse_fetched

logger = logging.getLogger(__name__)

IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
"""Labels and property keys that may be written into Cypher text (never values)."""

ENTITY_LABEL = "__Entity__"
CHUNK_LABEL = "Chunk"
NODE_LABEL = "__Node__"
META_LABEL = "LlamaKBMeta"
_BOOKKEEPING = frozenset({ENTITY_LABEL, CHUNK_LABEL, NODE_LABEL})
_IGNORED_PROPERTIES = frozenset({"id", "name", "text", "embedding"})
_BATCH = 5000  # ids per UNWIND parameter list

_PATTERNS: dict[str, str] = {"out": "-[r]->", "in": "<-[r]-", "both": "-[r]-"}


def identifier(name: str, what: str = "label") -> str:
    """``name`` quoted for Cypher text, after checking it against :data:`IDENTIFIER`.

    Raises:
        QueryError: ``name`` is not a plain identifier (letters, digits, underscores).
    """
    if not isinstance(name, str) or not IDENTIFIER.match(name):
        raise QueryError(
            f"{what} {name!r} cannot be used in a graph query: use letters, digits and "
            "underscores only, starting with a letter or underscore"
        )
    return f"`{name}`"


@dataclass(frozen=True)
class CypherDialect:
    """Where Neo4j and FalkorDB differ for llama-kb's queries.

    Attributes:
        name: ``"neo4j"`` or ``"falkordb"``.
        id_labels: Labels that together cover every store node, each indexed on ``id``; a
            lookup by id runs once per label (FalkorDB indexes are label-scoped).
        scope: Label every store node carries, for whole-graph scans (``""``: the graph
            holds nothing else).
        setup: Index and constraint statements run when a store opens.
    """

    name: str
    id_labels: tuple[str, ...]
    scope: str
    setup: tuple[str, ...]

    def node(self, *labels: str) -> str:
        """``(n:`scope`:`label`...)`` for validated labels."""
        names = ([self.scope] if self.scope else []) + list(labels)
        return "(n" + "".join(":" + identifier(x) for x in names) + ")"

    @property
    def any_node(self) -> str:
        """Label suffix matching every store node (``""`` or ``:`__Node__```)."""
        return ":" + identifier(self.scope) if self.scope else ""


def kb_label(labels: Sequence[str]) -> str:
    """llama-kb's label for a node with graph ``labels``."""
    if ENTITY_LABEL not in labels:
        return gm.CHUNK
    return next((x for x in labels if x not in _BOOKKEEPING), gm.ENTITY)


def to_node(
    node_id: str, name: str | None, text: str | None, labels: Sequence[str], props: dict
) -> LabelledNode:
    """A LlamaIndex node from stored values; the stored ``id`` is the node's id."""
    properties = {
        k: v for k, v in dict(props or {}).items() if k not in _IGNORED_PROPERTIES and v is not None
    }
    label = kb_label(labels)
    if label == gm.CHUNK:
        return ChunkNode(id_=node_id, text=text or "", label=label, properties=properties)
    name = node_id if name is None else name
    node = EntityNode(name=name, label=label, properties=properties)
    if node.id != node_id:
        return gm.NamedNode(id_=node_id, name=name, label=label, properties=properties)
    return node


def weighted(relation: Relation) -> Relation:
    """``relation`` with a validated ``weight`` property (default 1.0).

    Raises:
        DocumentError: The weight is not a number from 0 to 1.
    """
    where = f"relation {relation.source_id!r} -[{relation.label}]-> {relation.target_id!r}"
    weight = _validate_weight(relation.properties.get("weight"), where)
    return relation.model_copy(update={"properties": {**relation.properties, "weight": weight}})


def _batches(values: Iterable[str]) -> Iterator[list[str]]:
    unique = list(dict.fromkeys(values))
    for i in range(0, len(unique), _BATCH):
        yield unique[i : i + _BATCH]


class CypherGraphStoreMixin:
    """The :class:`~llama_kb.stores.graph.KBGraphStore` operations in Cypher.

    Mixed in before a LlamaIndex property graph store class; upserts go through that class
    (so its layout is kept) and are followed by a revision bump. Subclasses provide
    :attr:`dialect`, :attr:`endpoint` and :meth:`_run`.
    """

    dialect: ClassVar[CypherDialect]
    endpoint: ServerEndpoint

    @abstractmethod
    def _run(self, query: str, params: dict[str, Any], *, write: bool) -> list[list[Any]]:
        """Run one query with the driver; rows as lists of values."""

    # -- plumbing ---------------------------------------------------------------------

    def _query(
        self, query: str, params: dict[str, Any] | None = None, *, write: bool = False, action: str
    ) -> list[list[Any]]:
        with self.endpoint.errors(action):
            return self._run(query, params or {}, write=write)

    def _per_id_label(
        self, template: str, params: dict[str, Any], *, write: bool = False, action: str
    ) -> list[list[Any]]:
        """Run ``template`` for each id label (``{label}`` is replaced), rows concatenated.

        Reads become one ``UNION ALL`` query (one round trip); writes run label by label.
        """
        queries = [template.replace("{label}", identifier(x)) for x in self.dialect.id_labels]
        if not write:
            return self._query(" UNION ALL ".join(queries), params, action=action)
        rows: list[list[Any]] = []
        for query in queries:
            rows.extend(self._query(query, params, write=True, action=action))
        return rows

    def _by_ids(
        self, template: str, ids: Iterable[str], *, write: bool = False, action: str
    ) -> list[list[Any]]:
        """Run ``template`` (which unwinds ``$ids``) per id label and batch of ids."""
        rows: list[list[Any]] = []
        for batch in _batches(ids):
            rows.extend(self._per_id_label(template, {"ids": batch}, write=write, action=action))
        return rows

    def _setup_schema(self) -> None:
        for statement in self.dialect.setup:
            try:
                self._query(statement, write=True, action="create indexes")
            except BackendError as e:
                if "already" not in str(e).lower():
                    raise
        self._query(
            f"MERGE (m:{META_LABEL} {{key: 'revision'}}) ON CREATE SET m.value = 0",
            write=True,
            action="create the revision counter",
        )

    def _bump(self) -> None:
        self._query(
            f"MERGE (m:{META_LABEL} {{key: 'revision'}}) ON CREATE SET m.value = 0 "
            "SET m.value = m.value + 1",
            write=True,
            action="update the revision counter",
        )

    # -- KBGraphStore: writes ---------------------------------------------------------

    def upsert_nodes(self, nodes: Sequence[LabelledNode]) -> None:
        """Insert or update nodes (LlamaIndex's upsert; properties are merged)."""
        nodes = list(nodes)
        if not nodes:
            return
        with self.endpoint.errors("upsert nodes"):
            super().upsert_nodes(nodes)  # type: ignore[misc]
        self._bump()

    def upsert_relations(self, relations: list[Relation]) -> None:
        """Insert or update relations; ``weight`` is validated and defaults to 1.0.

        Raises:
            DocumentError: A relation has an invalid weight.
        """
        if not relations:
            return
        checked = [weighted(r) for r in relations]
        with self.endpoint.errors("upsert relations"):
            self._write_relations(checked)
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
        if entity_names:
            self._per_id_label(
                "MATCH (n:{label}) WHERE n.name IN $names OR n.id IN $names DETACH DELETE n",
                {"names": list(entity_names)},
                write=True,
                action=action,
            )
        if ids:
            self._by_ids(
                "UNWIND $ids AS node_id MATCH (n:{label} {id: node_id}) DETACH DELETE n",
                ids,
                write=True,
                action=action,
            )
        any_node = self.dialect.any_node
        if relation_names:
            self._query(
                f"MATCH ({any_node})-[r]->({any_node}) WHERE type(r) IN $types DELETE r",
                {"types": list(relation_names)},
                write=True,
                action=action,
            )
        if properties:
            params = {f"p{i}": v for i, v in enumerate(properties.values())}
            self._per_id_label(
                f"MATCH (n:{{label}}) WHERE {_equal_conditions('n', properties)} DETACH DELETE n",
                params,
                write=True,
                action=action,
            )
            self._query(
                f"MATCH ({any_node})-[r]->({any_node}) "
                f"WHERE {_equal_conditions('r', properties)} DELETE r",
                params,
                write=True,
                action=action,
            )
        self._bump()

    def delete_by_property(self, key: str, value: Any) -> int:
        """Delete the nodes whose property ``key`` equals ``value``, with their relations.

        Returns:
            The number of nodes deleted.
        """
        rows = self._per_id_label(
            f"MATCH (n:{{label}}) WHERE n.{identifier(key, 'property')} = $value "
            "DETACH DELETE n RETURN count(n)",
            {"value": value},
            write=True,
            action=f"delete nodes by {key}",
        )
        count = sum(int(r[0]) for r in rows)
        if count:
            self._bump()
        logger.debug("deleted %d nodes with %s=%r", count, key, value)
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

    # -- KBGraphStore: reads ----------------------------------------------------------

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

    def relations_among(self, ids: Iterable[str]) -> list[Relation]:
        """Relations whose source and target are both in ``ids``, sorted."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return []
        rows = self._per_id_label(
            "UNWIND $ids AS node_id MATCH (n:{label} {id: node_id})-[r]->(m) "
            "WHERE m.id IN $ids RETURN n.id, m.id, type(r), r{.*}",
            {"ids": wanted},
            action="read relations",
        )
        found = {(s, t, kind): _relation(s, t, kind, props) for s, t, kind, props in rows}
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

    # -- helpers ----------------------------------------------------------------------

    def _label_match(self, label: str) -> tuple[str, list[str]]:
        """Node pattern and WHERE conditions selecting the nodes of llama-kb ``label``."""
        if label == gm.CHUNK:
            return self.dialect.node(CHUNK_LABEL), [f"NOT n:{identifier(ENTITY_LABEL)}"]
        return self.dialect.node(ENTITY_LABEL, label), []


def _relation(source: str, target: str, rel_type: str, props: Any) -> Relation:
    properties = {k: v for k, v in dict(props or {}).items() if v is not None}
    properties.setdefault("weight", 1.0)
    return Relation(label=rel_type, source_id=source, target_id=target, properties=properties)


def _equal_conditions(alias: str, properties: dict[str, Any]) -> str:
    """``alias.`key0` = $p0 AND ...`` for validated keys (values stay parameters)."""
    return " AND ".join(
        f"{alias}.{identifier(key, 'property')} = $p{i}" for i, key in enumerate(properties)
    )
