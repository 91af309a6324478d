"""Framework documents in: LlamaIndex ``Document`` / ``TextNode``, LangChain ``Document``.

Each framework's conventions are kept:

* LlamaIndex ``Document``: its ``doc_id`` (``id_``) is the document id and its own ref doc,
  so ``delete_ref_doc(doc.doc_id)`` removes it.
* LlamaIndex ``TextNode`` (or any ``BaseNode``): the node id is the document id; nodes with
  the same ``ref_doc_id`` form one group, removed together by ``delete_ref_doc(ref_doc_id)``.
* LangChain ``Document``: the id is ``ids[i]`` when given, else ``doc.id``, else a stable
  hash of its content and metadata (so adding the same document twice stores it once).
* A plain ``str`` is a document whose id is the hash of its text;
  :class:`~llama_kb.types.SourceDocument` passes through.

Metadata is kept; ``title`` comes from metadata ``title``, else ``file_name``, else
``source``. Documents are grouped under source keys ``inline:<ref id>``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from llama_index.core.schema import BaseNode, Document

from llama_kb.errors import DocumentError
from llama_kb.types import Segment, SourceDocument

__all__ = ["INLINE_PREFIX", "to_source_documents"]

INLINE_PREFIX = "inline:"
_TITLE_KEYS = ("title", "file_name", "source")


def _stable_id(text: str, metadata: dict[str, Any]) -> str:
    payload = json.dumps([text, metadata], sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()[:32]


def _title(metadata: dict[str, Any]) -> str | None:
    for key in _TITLE_KEYS:
        value = metadata.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _document(doc_id: str, ref_id: str, text: str, metadata: dict[str, Any]) -> SourceDocument:
    if not doc_id.strip():
        raise DocumentError(repr(doc_id), "empty document id")
    if not text.strip():
        raise DocumentError(doc_id, "empty text")
    return SourceDocument(
        doc_id=doc_id,
        source_path=INLINE_PREFIX + ref_id,
        segments=(Segment(text=text.strip()),),
        title=_title(metadata),
        metadata=dict(metadata),
    )


def _convert(item: Any, given_id: str | None) -> SourceDocument:
    if isinstance(item, SourceDocument):
        return item
    if isinstance(item, str):
        doc_id = given_id or _stable_id(item, {})
        return _document(doc_id, doc_id, item, {})
    if isinstance(item, Document):
        doc_id = given_id or item.doc_id
        return _document(doc_id, doc_id, item.text, dict(item.metadata))
    if isinstance(item, BaseNode):
        doc_id = given_id or item.node_id
        text = item.get_content()
        return _document(doc_id, item.ref_doc_id or doc_id, text, dict(item.metadata))
    if hasattr(item, "page_content"):  # LangChain Document (duck-typed: no import needed)
        metadata = dict(getattr(item, "metadata", None) or {})
        doc_id = given_id or getattr(item, "id", None) or _stable_id(item.page_content, metadata)
        return _document(str(doc_id), str(doc_id), item.page_content, metadata)
    raise DocumentError(
        type(item).__name__,
        "unsupported document type; pass LlamaIndex Document/TextNode, LangChain Document, "
        "SourceDocument or str",
    )


def to_source_documents(
    items: Sequence[Any], ids: Sequence[str] | None = None
) -> list[SourceDocument]:
    """Convert framework documents (see the module docs) for the ingestion pipeline.

    Args:
        items: The documents.
        ids: Optional ids, one per document (LangChain's ``add_documents(ids=...)``).

    Raises:
        DocumentError: A document has no text, an empty id or an unsupported type.
        ValueError: ``ids`` and ``items`` differ in length.
    """
    if ids is not None and len(ids) != len(items):
        raise ValueError(f"got {len(ids)} ids for {len(items)} documents")
    return [_convert(item, ids[i] if ids else None) for i, item in enumerate(items)]
