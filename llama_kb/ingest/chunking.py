"""Chunking of :class:`~llama_kb.types.SourceDocument` objects; the character chunker.

The token-aware splitter lives in :mod:`~llama_kb.ingest.token_chunking`; both produce
chunks through :func:`chunk_document` (ids, hashes, metadata).

Each segment is cut on its own (text never crosses a segment, so a chunk has one page or
one heading path). A chunk holds at most ``chunk_size`` characters and starts about
``chunk_overlap`` characters before the previous one ended. Cuts prefer, within the last
20 % of the window, a paragraph break, then a sentence end, then any whitespace; only a
window without any of them is cut mid-word.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from typing import Any

from llama_kb.errors import ConfigurationError
from llama_kb.types import Segment, SourceDocument, TextChunk

__all__ = ["Splitter", "chunk_document", "chunk_id", "chunk_text", "unrepeated_start"]

_BREAK_WINDOW = 0.2
_NON_SPACE = re.compile(r"\S")
_SPACE = re.compile(r"\s")
_SENTENCE_END = re.compile(r"[.!?][\"')\]»”’]*\s")
_PARAGRAPH = "\n\n"
_SENTENCE_BREAK = re.compile(r"[.!?][\"')\]»”’]*\s+|\n[ \t]*\n\s*")
_HEADING_SEPARATOR = " > "


def _validate(chunk_size: int, chunk_overlap: int) -> None:
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size <= 0:
        raise ConfigurationError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    if (
        isinstance(chunk_overlap, bool)
        or not isinstance(chunk_overlap, int)
        or not 0 <= chunk_overlap < chunk_size
    ):
        raise ConfigurationError(
            f"chunk_overlap must be an integer from 0 to chunk_size - 1 ({chunk_size - 1}), "
            f"got {chunk_overlap!r}"
        )


def _cut(text: str, start: int, limit: int) -> int:
    """Where a chunk starting at ``start`` ends when it may run to ``limit`` (exclusive)."""
    if limit >= len(text):
        return len(text)
    low = max(start + 1, limit - max(1, int((limit - start) * _BREAK_WINDOW)))
    paragraph = text.rfind(_PARAGRAPH, low, limit)
    if paragraph != -1:
        return paragraph
    sentence_end = -1
    for match in _SENTENCE_END.finditer(text, low, limit + 1):
        sentence_end = match.end() - 1  # keep the punctuation, drop the whitespace
    if sentence_end != -1:
        return sentence_end
    for position in range(limit, low - 1, -1):
        if text[position].isspace():
            return position
    return limit


def chunk_text(
    text: str, chunk_size: int = 1000, chunk_overlap: int = 200
) -> list[tuple[int, str]]:
    """Cut one piece of text into overlapping chunks.

    Args:
        text: The text to cut.
        chunk_size: Maximum characters per chunk.
        chunk_overlap: About how many characters consecutive chunks share.

    Returns:
        ``(start, chunk)`` pairs, ``start`` being the offset of ``chunk`` in ``text``. Chunks
        are stripped of surrounding whitespace; whitespace-only pieces are left out.

    Raises:
        ConfigurationError: ``chunk_size`` is not positive or ``chunk_overlap`` is not in
            ``[0, chunk_size)``.
    """
    _validate(chunk_size, chunk_overlap)
    pieces: list[tuple[int, str]] = []
    length = len(text)
    first = _NON_SPACE.search(text)
    start = first.start() if first else length
    while start < length:
        end = _cut(text, start, start + chunk_size)
        piece = text[start:end].rstrip()
        if piece:
            pieces.append((start, piece))
        if end >= length:
            break
        following = max(end - chunk_overlap, start + 1)
        if following < end and not text[following - 1].isspace():
            # Begin the overlap on a word boundary rather than mid-word.
            space = _SPACE.search(text, following, end)
            if space is not None:
                following = space.end()
        nxt = _NON_SPACE.search(text, following)
        start = nxt.start() if nxt else length
    return pieces


def unrepeated_start(chunk: TextChunk) -> int:
    """Where the first sentence of ``chunk`` that the previous chunk did not hold whole begins.

    Consecutive chunks of one segment overlap (:attr:`~llama_kb.types.TextChunk.overlap`);
    an extractor reading every chunk from here on reads no sentence twice. 0 when the chunk
    repeats nothing, or when its first sentence began before the overlap.
    """
    unrepeated = 0
    if chunk.overlap:
        for match in _SENTENCE_BREAK.finditer(chunk.text):
            if match.start() >= chunk.overlap:
                break
            unrepeated = match.end()
    return unrepeated


def chunk_id(doc_id: str, chunk_index: int) -> str:
    """The stable id of chunk ``chunk_index`` of document ``doc_id``.

    Args:
        doc_id: The document id.
        chunk_index: The chunk's position in the document, from 0.

    Returns:
        ``"chunk:"`` followed by 20 hex digits, the same for the same arguments.
    """
    digest = hashlib.sha1(f"{doc_id}\x00{chunk_index}".encode(), usedforsecurity=False)
    return "chunk:" + digest.hexdigest()[:20]


def _scalar_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """Metadata a vector store accepts: str/int/float/bool values, no ``None``."""
    out: dict[str, Any] = {}
    for key, value in metadata.items():
        name = str(key)
        if value is None or name.startswith("_"):
            continue
        if isinstance(value, (str, int, float, bool)):
            out[name] = value
        elif isinstance(value, (list, tuple)) and name == "heading_path":
            if value:
                out[name] = _HEADING_SEPARATOR.join(str(v) for v in value)
        elif isinstance(value, (list, tuple, dict)):
            out[name] = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
        else:
            out[name] = str(value)
    return out


Splitter = Callable[[Segment, "str | None"], list[tuple[int, str]]]
"""Cuts one segment (of a document with the given title) into ``(start, text)`` pieces."""


def chunk_document(
    doc: SourceDocument,
    chunk_size: int = 1000,
    chunk_overlap: int = 200,
    *,
    splitter: Splitter | None = None,
) -> list[TextChunk]:
    """Cut a document into chunks ready to embed, segment by segment.

    Args:
        doc: The document.
        chunk_size: Maximum characters per chunk (ignored with ``splitter``).
        chunk_overlap: About how many characters consecutive chunks of one segment share
            (ignored with ``splitter``).
        splitter: Cuts each segment instead of the character chunker (e.g. the token-aware
            :class:`~llama_kb.ingest.token_chunking.TokenSplitter`).

    Returns:
        The chunks in document order. ``chunk_index`` counts from 0 across the document;
        ``chunk_id`` depends only on ``doc_id`` and ``chunk_index``; ``content_hash`` is the
        SHA-256 of the chunk text. ``metadata`` merges the document's and the segment's
        metadata with ``doc_id``, ``source_path``, ``chunk_index``, ``start_char`` (offset in
        the segment), ``content_hash`` and ``title`` (when the document has one); values are
        str, int, float or bool (``heading_path`` becomes ``"Top > Sub"``, other lists and
        dicts JSON text, ``None`` values and keys starting with ``_`` are dropped).
        ``overlap`` counts the characters a chunk repeats of the previous one.

    Raises:
        ConfigurationError: ``chunk_size`` is not positive or ``chunk_overlap`` is not in
            ``[0, chunk_size)``.
    """
    if splitter is None:
        _validate(chunk_size, chunk_overlap)

        def splitter(segment: Segment, title: str | None) -> list[tuple[int, str]]:
            return chunk_text(segment.text, chunk_size, chunk_overlap)

    base = _scalar_metadata(doc.metadata)
    chunks: list[TextChunk] = []
    for segment in doc.segments:
        segment_metadata = {**base, **_scalar_metadata(segment.metadata)}
        previous_end = 0
        for start, text in splitter(segment, doc.title):
            index = len(chunks)
            content_hash = hashlib.sha256(text.encode()).hexdigest()
            metadata = dict(segment_metadata)
            metadata.update(
                doc_id=doc.doc_id,
                source_path=doc.source_path,
                chunk_index=index,
                start_char=start,
                content_hash=content_hash,
            )
            if doc.title is not None:
                metadata["title"] = doc.title
            chunks.append(
                TextChunk(
                    chunk_id=chunk_id(doc.doc_id, index),
                    doc_id=doc.doc_id,
                    text=text,
                    chunk_index=index,
                    content_hash=content_hash,
                    metadata=metadata,
                    overlap=max(0, previous_end - start),
                )
            )
            previous_end = start + len(text)
    return chunks
