"""Per-record validation: a document is checked whole before anything is written.

:func:`document_problem` says why a :class:`~llama_kb.types.SourceDocument` cannot be
stored (a bad id, NaN or infinite numbers, metadata a store cannot hold, a reserved key,
too much text), or returns ``None``. The pipeline drops such a document before its first
write, so a bad record never leaves vectors, graph nodes or manifest rows behind.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from llama_kb.config import LimitsConfig
from llama_kb.types import SourceDocument

__all__ = ["RESERVED_METADATA_KEYS", "document_problem", "value_problem", "vector_problem"]

MAX_ID_CHARS = 1024
RESERVED_METADATA_KEYS = frozenset({"doc_id", "source_path", "chunk_index", "start_char"})
"""Chunk metadata the pipeline sets itself; a document may not override them."""


def _id_problem(what: str, value: str) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return f"{what} must be a non-empty string"
    if len(value) > MAX_ID_CHARS:
        return f"{what} is {len(value):,} characters long (at most {MAX_ID_CHARS})"
    if any(ord(c) < 32 or c in "\x7f\ufffe\uffff" for c in value):
        return f"{what} contains control characters"
    if any(0xD800 <= ord(c) <= 0xDFFF for c in value):
        return f"{what} contains unpaired surrogates (not valid Unicode)"
    return None


def value_problem(value: Any, where: str, depth: int = 0, max_depth: int = 64) -> str | None:
    """Why a metadata value cannot be stored, or ``None``.

    Accepted: strings, integers, finite floats, booleans, ``None`` and lists/mappings of
    these (stored as JSON), nested at most ``max_depth`` deep, with string keys.
    """
    if depth > max_depth:
        return f"{where} is nested deeper than limits.max_json_depth={max_depth}"
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        if any(0xD800 <= ord(c) <= 0xDFFF for c in value):
            return f"{where} contains unpaired surrogates (not valid Unicode)"
        return None
    if isinstance(value, int):
        return None if abs(value) < 2**63 else f"{where} is an integer too large to store"
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{where} is {value} (NaN/inf cannot be stored)"
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{where} has a non-string key {key!r}"
            problem = value_problem(item, f"{where}.{key}", depth + 1, max_depth)
            if problem:
                return problem
        return None
    if isinstance(value, list | tuple):
        for i, item in enumerate(value):
            problem = value_problem(item, f"{where}[{i}]", depth + 1, max_depth)
            if problem:
                return problem
        return None
    return f"{where} has unsupported type {type(value).__name__}"


def document_problem(doc: SourceDocument, limits: LimitsConfig) -> str | None:
    """Why ``doc`` cannot be stored, or ``None`` when it can."""
    problem = _id_problem("document id", doc.doc_id) or _id_problem("source path", doc.source_path)
    if problem:
        return problem
    if doc.title is not None and not isinstance(doc.title, str):
        return "title must be a string"
    if not doc.segments or not any(s.text.strip() for s in doc.segments):
        return "document has no text"
    length = sum(len(s.text) for s in doc.segments)
    if length > limits.max_text_chars:
        return (
            f"text length {length:,} is over the limit "
            f"limits.max_text_chars={limits.max_text_chars:,}"
        )
    if not isinstance(doc.metadata, Mapping):
        return "metadata must be a mapping"
    clash = sorted(RESERVED_METADATA_KEYS & set(doc.metadata))
    if clash:
        return f"metadata key {clash[0]!r} is reserved (set by llama-kb)"
    problem = value_problem(dict(doc.metadata), "metadata", max_depth=limits.max_json_depth)
    for i, segment in enumerate(doc.segments):
        problem = problem or value_problem(
            dict(segment.metadata), f"segment {i} metadata", max_depth=limits.max_json_depth
        )
        if not problem and any(0xD800 <= ord(c) <= 0xDFFF for c in segment.text):
            problem = f"segment {i} text contains unpaired surrogates (not valid Unicode)"
    return problem


def vector_problem(vectors: Any, expected: int) -> str | None:
    """Why embeddings cannot be stored (wrong count, ragged, NaN/inf), or ``None``."""
    rows = list(vectors)
    if len(rows) != expected:
        return f"{len(rows)} vectors for {expected} texts"
    widths = {len(row) for row in rows}
    if len(widths) > 1:
        return f"vectors of different lengths {sorted(widths)}"
    if rows and not np.isfinite(np.asarray(rows, dtype=float)).all():
        return "NaN or infinite values"
    return None
