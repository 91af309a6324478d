"""Chunks on a Chroma HTTP server instead of the embedded ``PersistentClient``.

The same :class:`~llama_kb.stores.chroma_vector.ChromaChunkStore` logic runs against
``chromadb.HttpClient``; this subclass only turns transport and server errors into
:class:`~llama_kb.errors.BackendUnavailable` / :class:`~llama_kb.errors.BackendError`, so a
server that dies during ingestion fails the batch instead of the whole process.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Collection, Iterator, Sequence
from typing import Any

import numpy as np

from llama_kb.config import ChromaServerConfig
from llama_kb.errors import BackendError, LlamaKBError
from llama_kb.stores._remote import COMPOSE_FILE, ServerEndpoint
from llama_kb.stores.chroma_vector import (
    ChromaChunkStore,
    chroma_settings,
    open_collection,
)
from llama_kb.types import SearchHit, TextChunk

logger = logging.getLogger(__name__)

CHROMA_FIX = (
    f"Start it with `docker compose -f {COMPOSE_FILE} up -d chroma`, check CHROMA_HOST / "
    "CHROMA_PORT, or unset CHROMA_HOST to keep vectors in the knowledge base directory."
)
_END = object()


def chroma_endpoint(config: ChromaServerConfig) -> ServerEndpoint:
    """Error translation for the server described by ``config``."""
    import httpx

    return ServerEndpoint(
        backend="Chroma server",
        address=config.address,
        fix=CHROMA_FIX,
        unavailable=(httpx.TransportError, ConnectionError, TimeoutError),
    )


def server_client(config: ChromaServerConfig) -> Any:
    """A ``chromadb.HttpClient`` for ``config`` (telemetry off; headers may carry tokens).

    Raises:
        BackendUnavailable: The server does not answer.
    """
    import chromadb

    endpoint = chroma_endpoint(config)
    try:
        return chromadb.HttpClient(
            host=config.host,
            port=config.port,
            ssl=config.ssl,
            headers={k: v.get_secret_value() for k, v in config.headers.items()},
            tenant=config.tenant,
            database=config.database,
            settings=chroma_settings(),
        )
    except Exception as e:
        # chromadb reports an unreachable server as ValueError("Could not connect ...")
        raise endpoint.unreachable(e) from e


class TranslatingProxy:
    """A Chroma client or collection whose method calls raise llama-kb errors.

    Collections returned by a proxied call are proxied as well.

    Args:
        target: A ``chromadb`` client or collection.
        endpoint: The server, for error messages.
    """

    def __init__(self, target: Any, endpoint: ServerEndpoint) -> None:
        self._target = target
        self._endpoint = endpoint

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if not callable(value):
            return value

        @functools.wraps(value)
        def call(*args: Any, **kwargs: Any) -> Any:
            with self._endpoint.errors(name.replace("_", " ")):
                result = value(*args, **kwargs)
            if isinstance(result, _collection_type()):
                return TranslatingProxy(result, self._endpoint)
            return result

        return call

    def __repr__(self) -> str:
        return f"TranslatingProxy({self._target!r})"


def _collection_type() -> type:
    from chromadb.api.models.Collection import Collection

    return Collection


class ChromaServerChunkStore(ChromaChunkStore):
    """A :class:`ChromaChunkStore` whose failures are llama-kb errors.

    Args:
        collection: A collection of a ``chromadb.HttpClient``.
        endpoint: The server, for error messages.
        client: The ``HttpClient`` holding ``collection``; exposed as :attr:`client` behind a
            :class:`TranslatingProxy`, so sibling collections opened from it (e.g. for node
            names) raise llama-kb errors too.
    """

    def __init__(self, collection: Any, endpoint: ServerEndpoint, client: Any = None) -> None:
        from llama_index.vector_stores.chroma import ChromaVectorStore

        proxy = None if client is None else TranslatingProxy(client, endpoint)
        super().__init__(ChromaVectorStore(chroma_collection=collection), proxy)
        self.endpoint = endpoint

    @classmethod
    def connect(cls, config: ChromaServerConfig, collection: str) -> ChromaServerChunkStore:
        """Connect to the server and get or create ``collection``.

        Raises:
            BackendUnavailable: The server cannot be reached.
            BackendError: The server refused (e.g. an unknown tenant or database).
        """
        endpoint = chroma_endpoint(config)
        client = server_client(config)
        with endpoint.errors(f"open collection {collection!r}"):
            opened = open_collection(client, collection)
        logger.info("using Chroma collection %r on %s", collection, endpoint.address)
        return cls(opened, endpoint, client)

    def add(self, chunks: Sequence[TextChunk], embeddings: Sequence[Sequence[float]]) -> None:
        """Add chunks with their vectors (ids are the chunk ids)."""
        with self.endpoint.errors("add chunks"):
            super().add(chunks, embeddings)

    def delete_documents(self, doc_ids: Sequence[str], batch: int = 500) -> None:
        """Delete every chunk of each document id."""
        with self.endpoint.errors("delete chunks"):
            super().delete_documents(doc_ids, batch)

    def count(self) -> int:
        """Number of stored chunks."""
        with self.endpoint.errors("count chunks"):
            return super().count()

    def query(
        self,
        embedding: Sequence[float],
        top_k: int,
        filters: dict[str, Any] | None = None,
        access: Collection[str] | None = None,
    ) -> list[SearchHit]:
        """Nearest chunks to ``embedding``, best first, scored by cosine similarity (only
        those with an access key in ``access``, when given)."""
        try:
            with self.endpoint.errors("query"):
                return super().query(embedding, top_k, filters, access)
        except BackendError as e:
            cause = e.__cause__  # the base class wraps every driver error in BackendError
            if isinstance(cause, Exception) and not isinstance(cause, LlamaKBError):
                raise self.endpoint.translate(cause, "query") from cause
            raise

    def iter_chunks(self, page_size: int = 1000) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """Every stored chunk as ``(chunk_id, text, metadata)``, in pages."""
        pages = super().iter_chunks(page_size)
        while True:
            with self.endpoint.errors("read chunks"):
                item = next(pages, _END)
            if item is _END:
                return
            yield item  # type: ignore[misc]

    def get_chunks(self, chunk_ids: Sequence[str]) -> dict[str, tuple[str, dict[str, Any]]]:
        """Text and metadata of the given chunk ids that exist."""
        with self.endpoint.errors("read chunks"):
            return super().get_chunks(chunk_ids)

    def get_vectors(self, chunk_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors of the given chunk ids that exist."""
        with self.endpoint.errors("read vectors"):
            return super().get_vectors(chunk_ids)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(address={self.endpoint.address!r})"
