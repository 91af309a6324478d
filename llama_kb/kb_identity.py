"""Which server namespaces a knowledge base owns, so two bases never share one by accident.

A knowledge base gets an id (``kb.json`` ``"id"``) and a collection name when it is created:
the configured ``collection`` when one is given, else ``llama_kb`` for embedded stores and
``llama_kb_<directory name>_<hash of its path>`` when a server is configured (the FalkorDB
graph takes the same name). Both are stored in ``kb.json``; the Chroma collection and the
graph server record the id as their owner. Reopening with another collection name, or
opening a collection or graph that another knowledge base owns, is a
:class:`~llama_kb.errors.KnowledgeBaseError`. Knowledge bases written before ids existed get
one on their next open.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from pathlib import Path
from typing import Any

from llama_kb.config import KBConfig
from llama_kb.errors import KnowledgeBaseError

EMBEDDED_COLLECTION = "llama_kb"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def settle_identity(config: KBConfig, root: Path, meta: dict[str, Any], fresh: bool) -> KBConfig:
    """Fill ``meta["id"]`` / ``meta["collection"]`` (``meta`` is what ``kb.json`` will hold)
    and return ``config`` with the collection the knowledge base owns.

    Raises:
        KnowledgeBaseError: The configuration names another collection than the stored one.
    """
    explicit = "collection" in config.model_fields_set
    stored = meta.get("collection")
    if stored is not None and explicit and stored != config.collection:
        raise KnowledgeBaseError(
            f"{root} was created with collection {stored!r}, but the configuration asks for "
            f"{config.collection!r}; open it without a collection setting, or use a new "
            "directory for the other collection"
        )
    if stored is None:  # new (derived unless given), or from before ids (what it always used)
        fresh_name = fresh and not explicit
        stored = derived_collection(config, root) if fresh_name else config.collection
        meta["collection"] = stored
    meta.setdefault("id", uuid.uuid4().hex)
    return config.model_copy(update={"collection": stored})


def derived_collection(config: KBConfig, root: Path) -> str:
    """The collection of a new knowledge base at ``root`` that does not name one."""
    if config.chroma is None and config.falkordb is None and config.neo4j is None:
        return EMBEDDED_COLLECTION
    where = root.resolve()
    slug = _UNSAFE.sub("_", where.name).strip("._-")[:40] or "kb"
    digest = hashlib.sha256(str(where).encode()).hexdigest()[:8]
    return f"{EMBEDDED_COLLECTION}_{slug}_{digest}"
