"""Hashing and (de)serialising :class:`~llama_kb.types.SourceDocument` objects."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from llama_kb.types import Segment, SourceDocument

__all__ = ["document_access", "document_from_json", "document_hash", "document_json"]


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


def document_access(doc: SourceDocument) -> str | None:
    """The document's access level (``access`` or ``permission`` metadata), if any."""
    value = doc.metadata.get("access", doc.metadata.get("permission"))
    return None if value is None else str(value)
