"""The graph on a FalkorDB server (Redis protocol), through ``llama-index-graph-stores-falkordb``.

:class:`FalkorDBGraphStore` is LlamaIndex's ``FalkorDBPropertyGraphStore`` (usable in a
``PropertyGraphIndex``) plus the :class:`~llama_kb.stores.graph.KBGraphStore` operations of
:mod:`llama_kb.stores.cypher`. One FalkorDB graph holds one knowledge base.
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar

from llama_kb.errors import BackendError, BackendUnavailable, MissingDependencyError
from llama_kb.stores._cypher_search_dialect import FALKORDB_SEARCH
from llama_kb.stores._remote import COMPOSE_FILE, ServerEndpoint, redact_url
from llama_kb.stores.cypher import CHUNK_LABEL, ENTITY_LABEL, CypherDialect, CypherGraphStoreMixin

try:
    import redis
    from llama_index.graph_stores.falkordb import FalkorDBPropertyGraphStore
except ImportError as e:  # pragma: no cover - depends on the installed extras
    raise MissingDependencyError(
        "llama-index-graph-stores-falkordb", "falkordb", "The FalkorDB graph store"
    ) from e

__all__ = ["FALKORDB_DIALECT", "FALKORDB_FIX", "FalkorDBGraphStore", "falkordb_endpoint"]

logger = logging.getLogger(__name__)

FALKORDB_FIX = (
    f"Start it with `docker compose -f {COMPOSE_FILE} --profile falkordb up -d falkordb`, "
    "check FALKORDB_URL, or unset FALKORDB_URL to keep the graph in the knowledge base directory."
)
MODULE_FIX = (
    "The server answers but has no graph module: run the falkordb/falkordb image, or start "
    "redis-server with --loadmodule <path to falkordb.so>."
)

FALKORDB_DIALECT = CypherDialect(
    name="falkordb",
    id_labels=(ENTITY_LABEL, CHUNK_LABEL),
    scope="",
    setup=(
        f"CREATE INDEX FOR (n:{CHUNK_LABEL}) ON (n.doc_id)",
        f"CREATE INDEX FOR (n:{ENTITY_LABEL}) ON (n.doc_id)",
        *FALKORDB_SEARCH.setup,
    ),
)


def falkordb_endpoint(url: str) -> ServerEndpoint:
    """Error translation for the FalkorDB server at ``url`` (its password is masked)."""
    return ServerEndpoint(
        backend="FalkorDB",
        address=redact_url(url),
        fix=FALKORDB_FIX,
        unavailable=(redis.exceptions.ConnectionError, redis.exceptions.TimeoutError),
        special=(
            (
                redis.exceptions.AuthenticationError,
                "Check the user name and password in FALKORDB_URL.",
            ),
        ),
    )


class FalkorDBGraphStore(CypherGraphStoreMixin, FalkorDBPropertyGraphStore):
    """A FalkorDB graph implementing LlamaIndex's ``PropertyGraphStore`` and ``KBGraphStore``.

    ``structured_query``, ``vector_query`` and ``get_rel_map`` are LlamaIndex's own (they
    return ``EntityNode`` objects named by their ids and raise driver exceptions); every other
    method, ``get`` and ``get_triplets`` included, returns llama-kb ids, raises
    :class:`~llama_kb.errors.BackendUnavailable` when the server cannot be reached and
    :class:`~llama_kb.errors.BackendError` when it fails.

    Args:
        url: ``redis://[user:password@]host:port`` (``falkor://`` also works).
        graph: Name of the graph holding this knowledge base.
        timeout_ms: Query timeout in milliseconds (``None``: the server's default).
        connect_timeout: Seconds to wait for a connection.
        **falkordb_kwargs: More arguments for ``FalkorDB.from_url`` (e.g. ``ssl``).

    Raises:
        BackendUnavailable: The server cannot be reached or has no graph module.
    """

    dialect: ClassVar[CypherDialect] = FALKORDB_DIALECT

    def __init__(
        self,
        url: str,
        graph: str = "llama_kb",
        *,
        timeout_ms: int | None = None,
        connect_timeout: float = 5.0,
        **falkordb_kwargs: Any,
    ) -> None:
        self.endpoint = falkordb_endpoint(url)
        self.graph_name = graph
        falkordb_kwargs.setdefault("socket_connect_timeout", connect_timeout)
        with self.endpoint.errors("connect"):
            super().__init__(
                url=url,
                database=graph,
                refresh_schema=False,
                timeout=timeout_ms,
                **falkordb_kwargs,
            )
        try:
            self._setup_schema()
        except BackendError as e:
            self.close()
            if "unknown command" in str(e).lower():
                raise BackendUnavailable(
                    self.endpoint.backend, self.endpoint.address, MODULE_FIX, str(e)
                ) from e
            raise
        logger.info("using FalkorDB graph %r on %s", graph, self.endpoint.address)

    def _run(self, query: str, params: dict[str, Any], *, write: bool) -> list[list[Any]]:
        run = self._graph.query if write else self._graph.ro_query
        return run(query, params, timeout=self._timeout).result_set

    def close(self) -> None:
        """Close the connection (idempotent)."""
        try:
            super().close()
        except Exception:  # closing a dead connection must not fail
            logger.debug("closing the FalkorDB connection failed", exc_info=True)

    def __repr__(self) -> str:
        name = type(self).__name__
        return f"{name}(address={self.endpoint.address!r}, graph={self.graph_name!r})"
