"""Cypher text and query plumbing shared by the Neo4j and FalkorDB graph stores.

Holds the pieces of :mod:`llama_kb.stores.cypher` that do not depend on which operation runs:
checked identifiers, the graph labels, the :class:`CypherDialect`, conversion of stored values
to LlamaIndex nodes and relations, and :class:`CypherRunner` (running a query per id label and
per batch of ids, the revision counter). Safety rules are described in
:mod:`llama_kb.stores.cypher`.
"""

from __future__ import annotations

import re
from abc import abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from llama_index.core.graph_stores.types import ChunkNode, EntityNode, LabelledNode, Relation

from llama_kb import graph_model as gm
from llama_kb.errors import BackendError, QueryError
from llama_kb.stores._cypher_search_props import SEARCH_PROPERTIES
from llama_kb.stores._remote import ServerEndpoint
from llama_kb.stores.traversal import validate_weight

IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
"""Labels and property keys that may be written into Cypher text (never values)."""

ENTITY_LABEL = "__Entity__"
CHUNK_LABEL = "Chunk"
NODE_LABEL = "__Node__"
META_LABEL = "LlamaKBMeta"
_BOOKKEEPING = frozenset({ENTITY_LABEL, CHUNK_LABEL, NODE_LABEL})
_IGNORED_PROPERTIES = frozenset({"id", "name", "text", "embedding"}) | SEARCH_PROPERTIES
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
    weight = validate_weight(relation.properties.get("weight"), where)
    return relation.model_copy(update={"properties": {**relation.properties, "weight": weight}})


def _batches(values: Iterable[str]) -> Iterator[list[str]]:
    unique = list(dict.fromkeys(values))
    for i in range(0, len(unique), _BATCH):
        yield unique[i : i + _BATCH]


class CypherRunner:
    """Runs llama-kb's Cypher through a driver, with errors translated by :attr:`endpoint`.

    Subclasses provide :attr:`dialect`, :attr:`endpoint` and :meth:`_run`.
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
