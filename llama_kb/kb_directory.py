"""Opening a knowledge base directory: its ``kb.json`` marker, its stores, the embedding check."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding
from pydantic import ValidationError

from llama_kb.config import ChunkingConfig, KBConfig
from llama_kb.embeddings import embedding_fingerprint, is_bundled
from llama_kb.errors import KnowledgeBaseError
from llama_kb.ingest.manifest import Manifest
from llama_kb.kb_identity import settle_identity
from llama_kb.stores.chroma_vector import ChromaChunkStore
from llama_kb.stores.factory import open_graph_store, open_vector_store
from llama_kb.stores.graph import KBGraphStore
from llama_kb.stores.integrity import open_checked

logger = logging.getLogger(__name__)

KB_FILE = "kb.json"
KB_FORMAT = 1


def open_stores(
    config: KBConfig, root: Path, kb_id: str, fresh: bool
) -> tuple[ChromaChunkStore, KBGraphStore, Manifest]:
    """Open the three stores; a damaged local file raises :class:`CorruptStoreError`, a
    server namespace owned by another knowledge base :class:`KnowledgeBaseError`."""
    chroma = root / "chroma"
    local_graph = config.neo4j is None and config.falkordb is None
    manifest = open_checked(
        "manifest", root / "manifest.sqlite", lambda: Manifest(root / "manifest.sqlite"),
        (root / "manifest.sqlite",),
    )  # fmt: skip
    try:
        vectors, graph, manifest = _open_others(config, root, chroma, local_graph, manifest)
    except BaseException:
        manifest.close()
        raise
    try:
        vectors.claim(kb_id, fresh)
        claim = getattr(graph, "claim", None)
        if callable(claim):
            claim(kb_id, fresh)
    except BaseException:
        manifest.close()
        graph.close()
        raise
    return vectors, graph, manifest


def _open_others(
    config: KBConfig, root: Path, chroma: Path, local_graph: bool, manifest: Manifest
) -> tuple[ChromaChunkStore, KBGraphStore, Manifest]:
    vectors = open_checked(
        "vectors (embedded Chroma)" if config.chroma is None else "vectors (Chroma server)",
        chroma, lambda: open_vector_store(config, root),
        (chroma / "chroma.sqlite3",) if config.chroma is None else (),
    )  # fmt: skip
    graph = open_checked(
        "graph (embedded SQLite)" if local_graph else "graph (server)",
        root / "graph.sqlite", lambda: open_graph_store(config, root),
        (root / "graph.sqlite",) if local_graph else (),
    )  # fmt: skip
    return vectors, graph, manifest


def settle_directory(
    config: KBConfig, root: Path, embedding: BaseEmbedding, create: bool
) -> tuple[KBConfig, dict[str, Any], bool]:
    """Check or create ``root``'s ``kb.json`` (the embedding's dimension, the collection it
    owns) and return the settled configuration, the marker's contents and whether the
    knowledge base is new.

    Raises:
        KnowledgeBaseError: See :func:`check_directory`, :func:`check_embedding` and
            :func:`~llama_kb.kb_identity.settle_identity`.
    """
    meta = check_directory(root, create)
    dimension = dimension_of(embedding)
    fresh = meta is None
    if meta is None:
        root.mkdir(parents=True, exist_ok=True)
        meta = {
            "format": KB_FORMAT,
            "created_at": time.time(),
            "embedding": {**embedding_fingerprint(embedding), "dimension": dimension},
            "chunking": config.chunking.model_dump(),
        }
    else:
        check_embedding(root, meta, embedding, dimension)
    before = dict(meta)
    config = settle_identity(config, root, meta, fresh)
    config = settle_chunking(config, meta)
    if meta != before:
        (root / KB_FILE).write_text(json.dumps(meta, indent=2), encoding="utf-8")
    return config, meta, fresh


def settle_chunking(config: KBConfig, meta: dict[str, Any]) -> KBConfig:
    """The chunking a knowledge base uses: the stored one (``meta["chunking"]``) unless
    ``config`` sets one explicitly, which then becomes the stored one (documents chunked
    otherwise are chunked again when their sources are next ingested, or by ``rebuild``).
    A knowledge base from before token chunking takes ``config``'s (by default tokens)."""
    stored = meta.get("chunking")
    before_units = not isinstance(stored, dict) or "unit" not in stored  # characters only
    if "chunking" in config.model_fields_set or before_units:
        meta["chunking"] = config.chunking.model_dump()
        return config
    try:
        chunking = ChunkingConfig.model_validate(stored)
    except ValidationError:
        logger.warning("%s: unreadable chunking %r, using %s", KB_FILE, stored, config.chunking)
        meta["chunking"] = config.chunking.model_dump()
        return config
    return config.model_copy(update={"chunking": chunking})


def check_directory(root: Path, create: bool) -> dict[str, Any] | None:
    """The stored ``kb.json`` of ``root``, or ``None`` for a new knowledge base.

    Raises:
        KnowledgeBaseError: ``root`` is a file, another application's directory, or missing
            while ``create`` is false.
    """
    marker = root / KB_FILE
    if root.exists() and not root.is_dir():
        raise KnowledgeBaseError(f"{root} is a file, not a knowledge base directory")
    if marker.is_file():
        try:
            meta = json.loads(marker.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as e:
            raise KnowledgeBaseError(f"{marker} is unreadable or corrupt: {e}") from e
        if not isinstance(meta, dict) or meta.get("format") != KB_FORMAT:
            raise KnowledgeBaseError(f"{marker} is not a llama-kb format {KB_FORMAT} file")
        return meta
    if root.is_dir() and any(root.iterdir()):
        raise KnowledgeBaseError(
            f"{root} is not a llama-kb knowledge base (no {KB_FILE}); "
            "choose an empty or new directory"
        )
    if not create:
        raise KnowledgeBaseError(
            f"no knowledge base at {root}; create one with `llama-kb ingest PATH --kb {root}`"
        )
    return None


def recorded_model(root: Path) -> str | None:
    """The embedding model name in ``root``'s ``kb.json``, or ``None`` when there is none to
    read (a new or damaged directory is reported later, by :func:`check_directory`)."""
    try:
        meta = json.loads((root / KB_FILE).read_text(encoding="utf-8"))
        name = meta["embedding"]["model_name"]
    except (OSError, ValueError, TypeError, KeyError):
        return None
    return name if isinstance(name, str) else None


def dimension_of(embedding: BaseEmbedding) -> int:
    """The embedding's vector size (probed once when it does not say)."""
    dimension = getattr(embedding, "dimension", None)
    if isinstance(dimension, int):
        return dimension
    return len(embedding.get_text_embedding("dimension probe"))


def check_embedding(
    root: Path, meta: dict[str, Any], embedding: BaseEmbedding, dimension: int
) -> None:
    """Refuse an embedding whose dimension differs from the stored one, or another bundled
    model than the stored one; warn on any other new name.

    Raises:
        KnowledgeBaseError: The dimensions differ, or both are bundled models and differ
            (their vectors have the same length but cannot be compared).
    """
    stored = meta.get("embedding", {})
    recorded = stored.get("model_name")
    if (
        is_bundled(recorded)
        and is_bundled(embedding.model_name)
        and recorded != embedding.model_name
    ):
        raise KnowledgeBaseError(
            f"{root} was built with the bundled embedding {recorded!r}, not "
            f"{embedding.model_name!r}; open it without an embedding (it then uses its own) "
            "or ingest into a new directory"
        )
    if stored.get("dimension") != dimension:
        raise KnowledgeBaseError(
            f"{root} was built with embedding {stored.get('model_name')!r} of dimension "
            f"{stored.get('dimension')}, but the embedding given ({embedding.model_name!r}) has "
            f"dimension {dimension}; open it with the same embedding or use a new directory"
        )
    if stored.get("model_name") != embedding.model_name:
        logger.warning(
            "%s was built with embedding %r; now using %r (same dimension)",
            root,
            stored.get("model_name"),
            embedding.model_name,
        )
