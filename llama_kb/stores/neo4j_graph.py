"""The graph on Neo4j (5.23 or later, with APOC), through ``llama-index-graph-stores-neo4j``.

:class:`Neo4jGraphStore` is LlamaIndex's ``Neo4jPropertyGraphStore`` (usable in a
``PropertyGraphIndex``) plus the :class:`~llama_kb.stores.graph.KBGraphStore` operations of
:mod:`llama_kb.stores.cypher`. Works with a single server, a cluster or Aura
(``neo4j+s://``); reads are routed to readers, writes to the leader. One Neo4j database
holds one knowledge base.
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar

from llama_index.core.graph_stores.types import Relation
from pydantic import SecretStr

from llama_kb.errors import BackendError, BackendUnavailable, MissingDependencyError
from llama_kb.stores._cypher_search_dialect import NEO4J_SEARCH
from llama_kb.stores._remote import COMPOSE_FILE, ServerEndpoint, redact_url
from llama_kb.stores.cypher import (
    ENTITY_LABEL,
    META_LABEL,
    NODE_LABEL,
    CypherDialect,
    CypherGraphStoreMixin,
)

try:
    import neo4j
    from llama_index.graph_stores.neo4j import Neo4jPropertyGraphStore
except ImportError as e:  # pragma: no cover - depends on the installed extras
    raise MissingDependencyError(
        "llama-index-graph-stores-neo4j", "neo4j", "The Neo4j graph store"
    ) from e

__all__ = ["NEO4J_DIALECT", "NEO4J_FIX", "Neo4jGraphStore", "neo4j_endpoint"]

logger = logging.getLogger(__name__)

NEO4J_FIX = (
    f"Start it with `NEO4J_PASSWORD=... docker compose -f {COMPOSE_FILE} up -d neo4j`, check "
    "NEO4J_URI, or unset NEO4J_URI to keep the graph in the knowledge base directory."
)
AUTH_FIX = "Check NEO4J_USERNAME and NEO4J_PASSWORD."
APOC_FIX = (
    "Install the APOC plugin (with Docker: NEO4J_PLUGINS='[\"apoc\"]', as in "
    f"{COMPOSE_FILE}); Aura includes it."
)

NEO4J_DIALECT = CypherDialect(
    name="neo4j",
    id_labels=(NODE_LABEL,),
    scope=NODE_LABEL,
    setup=(
        f"CREATE INDEX llama_kb_doc_id IF NOT EXISTS FOR (n:{NODE_LABEL}) ON (n.doc_id)",
        f"CREATE CONSTRAINT llama_kb_meta_key IF NOT EXISTS "
        f"FOR (m:{META_LABEL}) REQUIRE m.key IS UNIQUE",
        *NEO4J_SEARCH.setup,
    ),
)

# LlamaIndex's own statement creates missing endpoints as chunks and does not update the
# properties of an existing relation; this one creates entities (as FalkorDB does) and updates.
# The relation type is a parameter of apoc.merge.relationship, never query text.
_UPSERT_RELATIONS = f"""
UNWIND $data AS row
MERGE (source:{NODE_LABEL} {{id: row.source_id}}) ON CREATE SET source:{ENTITY_LABEL}
MERGE (target:{NODE_LABEL} {{id: row.target_id}}) ON CREATE SET target:{ENTITY_LABEL}
WITH source, target, row
CALL apoc.merge.relationship(source, row.label, {{}}, row.properties, target, row.properties)
YIELD rel
RETURN count(*)
"""
_BATCH = 1000


def neo4j_endpoint(uri: str, database: str) -> ServerEndpoint:
    """Error translation for the Neo4j database ``database`` at ``uri``."""
    exceptions = neo4j.exceptions
    return ServerEndpoint(
        backend="Neo4j",
        address=f"{redact_url(uri)} (database {database!r})",
        fix=NEO4J_FIX,
        unavailable=(
            exceptions.ServiceUnavailable,
            exceptions.SessionExpired,
            exceptions.DatabaseUnavailable,
            ConnectionError,
            TimeoutError,
        ),
        special=((exceptions.AuthError, AUTH_FIX),),
    )


class Neo4jGraphStore(CypherGraphStoreMixin, Neo4jPropertyGraphStore):
    """A Neo4j database implementing LlamaIndex's ``PropertyGraphStore`` and ``KBGraphStore``.

    ``structured_query``, ``vector_query`` and ``get_rel_map`` are LlamaIndex's own (they
    return ``EntityNode`` objects named by their ids and raise driver exceptions); every other
    method, ``get`` and ``get_triplets`` included, returns llama-kb ids, raises
    :class:`~llama_kb.errors.BackendUnavailable` when the server cannot be reached and
    :class:`~llama_kb.errors.BackendError` when it fails.

    Args:
        uri: ``neo4j://``, ``neo4j+s://`` or ``bolt://`` address.
        username: User name.
        password: Password (kept out of reprs and logs).
        database: Database holding this knowledge base.
        timeout: Transaction timeout in seconds (``None``: the server's default).
        **neo4j_kwargs: More driver arguments (e.g. ``max_connection_pool_size``).

    Raises:
        BackendUnavailable: The server cannot be reached, refuses the credentials, or lacks
            APOC.
    """

    dialect: ClassVar[CypherDialect] = NEO4J_DIALECT

    def __init__(
        self,
        uri: str,
        username: str,
        password: str | SecretStr,
        database: str = "neo4j",
        *,
        timeout: float | None = None,
        **neo4j_kwargs: Any,
    ) -> None:
        self.endpoint = neo4j_endpoint(uri, database)
        secret = password.get_secret_value() if isinstance(password, SecretStr) else password
        neo4j_kwargs.setdefault("connection_timeout", 10.0)
        # the driver retries failed transactions for 30 s by default: too long to wait
        # before a retrieval degrades, long enough for a cluster to elect a new leader
        neo4j_kwargs.setdefault("max_transaction_retry_time", 10.0)
        with self.endpoint.errors("connect"):
            super().__init__(
                username=username,
                password=secret,
                url=uri,
                database=database,
                refresh_schema=False,
                timeout=timeout,
                user_agent="llama-kb",
                **neo4j_kwargs,
            )
        if self.apoc_version() is None:
            self.close()
            raise BackendUnavailable(
                self.endpoint.backend, self.endpoint.address, APOC_FIX, "APOC is not installed"
            )
        self._setup_schema()
        logger.info("using Neo4j database %r at %s", database, redact_url(uri))

    def verify_version(self) -> None:
        """Fail fast when the server is unreachable, then check its version (LlamaIndex)."""
        self._driver.verify_connectivity()  # no retries, unlike the first query
        super().verify_version()

    def _run(self, query: str, params: dict[str, Any], *, write: bool) -> list[list[Any]]:
        routing = neo4j.RoutingControl.WRITE if write else neo4j.RoutingControl.READ
        records, _, _ = self._driver.execute_query(
            neo4j.Query(query, timeout=self._timeout),
            parameters_=params,
            database_=self._database,
            routing_=routing,
        )
        return [list(record.values()) for record in records]

    def _write_relations(self, relations: list[Relation]) -> None:
        rows = [r.model_dump() for r in relations]
        for i in range(0, len(rows), _BATCH):
            self._run(_UPSERT_RELATIONS, {"data": rows[i : i + _BATCH]}, write=True)

    def apoc_version(self) -> str | None:
        """The installed APOC version, or ``None`` without APOC.

        Raises:
            BackendUnavailable: The server cannot be reached.
        """
        try:
            rows = self._query("RETURN apoc.version()", action="check APOC")
        except BackendUnavailable:
            raise
        except BackendError as e:
            if "apoc" in str(e).lower():
                return None
            raise
        return str(rows[0][0]) if rows else None

    def close(self) -> None:
        """Close the driver (idempotent)."""
        try:
            super().close()
        except Exception:  # closing a dead connection must not fail
            logger.debug("closing the Neo4j driver failed", exc_info=True)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(address={self.endpoint.address!r})"
