"""JSON Lines reader (``.jsonl``): one document per line; bad lines become failures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from llama_kb.ingest.guards.limits import current_limits, json_depth
from llama_kb.ingest.readers._base import ReadResult
from llama_kb.ingest.readers._text import normalise_newlines, path_id, read_text_file
from llama_kb.types import IngestFailure, Segment, SourceDocument

__all__ = ["read_jsonl"]


def _json_type(value: Any) -> str:
    return {
        dict: "object", list: "array", str: "string", bool: "boolean",
        int: "number", float: "number", type(None): "null",
    }.get(type(value), type(value).__name__)  # fmt: skip


class _BadRecord(Exception):
    """A JSONL record that cannot become a document; the message says why."""


def _jsonl_document(record: Any, source_path: str) -> SourceDocument:
    """Build one document from a parsed JSONL record; :class:`_BadRecord` explains a bad one."""
    if not isinstance(record, dict):
        raise _BadRecord(f"expected a JSON object, got {_json_type(record)}")
    raw_id = record.get("id")
    if raw_id is None:
        raise _BadRecord("missing 'id'")
    if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)):
        raise _BadRecord(f"'id' must be a string or integer, got {_json_type(raw_id)}")
    doc_id = str(raw_id)
    if not doc_id.strip():
        raise _BadRecord("empty 'id'")
    text = record.get("text")
    if text is None:
        raise _BadRecord("missing 'text'")
    if not isinstance(text, str):
        raise _BadRecord(f"'text' must be a string, got {_json_type(text)}")
    if not text.strip():
        raise _BadRecord("empty 'text'")
    title = record.get("title")
    if title is not None and not isinstance(title, str):
        raise _BadRecord(f"'title' must be a string, got {_json_type(title)}")
    metadata = record.get("metadata")
    if metadata is None:
        metadata = {}
    elif not isinstance(metadata, dict):
        raise _BadRecord(f"'metadata' must be an object, got {_json_type(metadata)}")
    else:
        metadata = dict(metadata)
    title = title.strip() if title else None
    if title:
        metadata["title"] = title
    for key in ("access", "permissions"):  # who may read it (checked when it is stored)
        if key in record:
            metadata[key] = record[key]
    text = normalise_newlines(text).strip()
    return SourceDocument(
        doc_id=doc_id,
        source_path=source_path,
        segments=(Segment(text=text),),
        title=title or None,
        metadata=metadata,
    )


def read_jsonl(path: Path) -> ReadResult:
    """Read a JSON Lines file: one document per non-blank line.

    Each line is an object with ``id`` (non-empty string, or integer turned into a string;
    it becomes the ``doc_id``), ``text`` (non-empty string), and optionally ``title``
    (string; also kept in metadata), ``metadata`` (object) and ``access`` / ``permissions``
    (who may read it: :mod:`llama_kb.access`). Other keys are ignored. A line
    that is not valid JSON, not an object, misses ``id``/``text``, has a wrong type or repeats
    an earlier ``id`` is reported as a failure with source ``path:line`` and the rest of the
    file is still read. A line nested deeper than ``limits.max_json_depth`` is refused
    before parsing; lines past ``limits.max_records_per_file`` are skipped with one failure.

    Args:
        path: The file to read.

    Returns:
        Documents for the good lines and failures for the bad ones.

    Raises:
        DocumentError: The file as a whole is unreadable, empty, binary or not UTF-8.
    """
    text = read_text_file(path)
    source_path = path_id(path)
    result = ReadResult()
    first_line: dict[str, int] = {}
    limits = current_limits()
    decode = json.JSONDecoder().decode
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        source = f"{path}:{lineno}"
        if len(first_line) >= limits.max_records_per_file:
            reason = (
                f"more than limits.max_records_per_file={limits.max_records_per_file:,} records"
            )
            result.failures.append(IngestFailure(source, reason + "; the rest is skipped"))
            break
        if json_depth(line) > limits.max_json_depth:
            reason = f"JSON nested deeper than limits.max_json_depth={limits.max_json_depth}"
            result.failures.append(IngestFailure(source, reason))
            continue
        try:
            record = decode(line)
        except (json.JSONDecodeError, RecursionError) as e:
            detail = f"{e.msg} (column {e.colno})" if isinstance(e, json.JSONDecodeError) else e
            result.failures.append(IngestFailure(source, f"invalid JSON: {detail}"))
            continue
        try:
            document = _jsonl_document(record, source_path)
        except _BadRecord as e:
            result.failures.append(IngestFailure(source, str(e)))
            continue
        if document.doc_id in first_line:
            reason = (
                f"duplicate id {document.doc_id!r} (first used on line "
                f"{first_line[document.doc_id]})"
            )
            result.failures.append(IngestFailure(source, reason))
            continue
        first_line[document.doc_id] = lineno
        result.documents.append(document)
    return result
