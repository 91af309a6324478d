"""Hashing and (de)serialising :class:`~llama_kb.types.SourceDocument` objects."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any

from llama_kb.access import ACCESS_FIELD, access_key
from llama_kb.errors import ConfigurationError, DocumentError
from llama_kb.types import Segment, SourceDocument

__all__ = [
    "document_access",
    "document_from_json",
    "document_hash",
    "document_json",
    "with_access",
]


def document_hash(doc: SourceDocument) -> str:
    """SHA-256 of what makes a document's chunks and graph: title, text, metadata, links."""
    payload = json.dumps(
        [doc.title, doc.text, doc.metadata, list(doc.links)], sort_keys=True, default=str
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def document_json(doc: SourceDocument) -> str:
    """The document as JSON (kept for documents added in memory, to rebuild them)."""
    return json.dumps(
        {
            "doc_id": doc.doc_id,
            "source_path": doc.source_path,
            "title": doc.title,
            "metadata": doc.metadata,
            "links": list(doc.links),
            "segments": [{"text": s.text, "metadata": s.metadata} for s in doc.segments],
        },
        ensure_ascii=False,
        default=str,
    )


def document_from_json(payload: str) -> SourceDocument:
    """The document :func:`document_json` wrote."""
    data: dict[str, Any] = json.loads(payload)
    return SourceDocument(
        doc_id=data["doc_id"],
        source_path=data["source_path"],
        segments=tuple(Segment(s["text"], s.get("metadata") or {}) for s in data["segments"]),
        title=data.get("title"),
        metadata=data.get("metadata") or {},
        links=tuple(data.get("links") or ()),
    )


_ACCESS_KEYS = ("access", "permission", "permissions")


def document_access(doc: SourceDocument) -> str | None:
    """The document's access key (``access`` metadata), if any."""
    value = doc.metadata.get(ACCESS_FIELD)
    return None if value is None else str(value)


def with_access(doc: SourceDocument, default: str) -> SourceDocument:
    """``doc`` with its canonical access key in ``metadata["access"]``: from its own
    ``access`` / ``permission`` / ``permissions`` metadata (front matter, a JSONL field), else
    ``default``. Segments cannot widen it (their access fields are dropped).

    Raises:
        DocumentError: The document's access is malformed.
    """
    given = next((doc.metadata[k] for k in _ACCESS_KEYS if k in doc.metadata), None)
    try:
        key = default if given is None else access_key(given)
    except ConfigurationError as e:
        raise DocumentError(doc.source_path, f"{doc.doc_id}: {e}") from None
    metadata = {k: v for k, v in doc.metadata.items() if k not in _ACCESS_KEYS}
    segments = tuple(
        Segment(s.text, {k: v for k, v in s.metadata.items() if k not in _ACCESS_KEYS})
        for s in doc.segments
    )
    return dataclasses.replace(doc, metadata={**metadata, ACCESS_FIELD: key}, segments=segments)
