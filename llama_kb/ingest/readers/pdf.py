"""PDF reader (``.pdf``, via pypdf): one segment per page with text."""

from __future__ import annotations

import io
import logging
from pathlib import Path
from typing import Any

from llama_kb.errors import DocumentError
from llama_kb.ingest.guards.limits import current_limits, pdf_limits
from llama_kb.ingest.readers._base import file_document
from llama_kb.ingest.readers._text import normalise_newlines, read_bytes
from llama_kb.types import Segment, SourceDocument

__all__ = ["read_pdf"]

logger = logging.getLogger(__name__)


def read_pdf(path: Path) -> SourceDocument:
    """Read a PDF with pypdf, one segment per page that has text (metadata ``page``, 1-based).

    Encrypted PDFs are opened when the empty password works (permission-only encryption).
    The title is the PDF metadata title, else the file stem.

    Args:
        path: The file to read.

    Returns:
        The document.

    Raises:
        DocumentError: The file is unreadable, empty, not a valid PDF, needs a password or
            has no extractable text (a scanned PDF needs OCR first).
    """
    from pypdf import PdfReader

    data = read_bytes(path)
    if not data.strip():
        raise DocumentError(str(path), "empty file")
    if b"%PDF-" not in data[:1024]:
        raise DocumentError(str(path), "not a valid PDF: no %PDF header")
    with pdf_limits(path):
        reader, pages = _open_pdf(path, data, PdfReader)
        segments, errors = _extract_pages(path, pages)
    if not segments:
        if errors:
            raise DocumentError(str(path), f"not a valid PDF: {errors[0]}")
        raise DocumentError(str(path), "no extractable text (scanned PDF?)")

    title: str | None = None
    try:
        if reader.metadata is not None and reader.metadata.title:
            title = str(reader.metadata.title).strip() or None
    except Exception:  # broken info dictionary: the stem is a fine title
        logger.debug("%s: unreadable PDF metadata", path)
    return file_document(
        path, tuple(segments), title or path.stem, metadata={"page_count": len(pages)}
    )


def _open_pdf(path: Path, data: bytes, pdf_reader: Any) -> tuple[Any, list[Any]]:
    from pypdf.errors import LimitReachedError

    try:
        reader = pdf_reader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise DocumentError(str(path), "PDF is encrypted and needs a password")
        return reader, list(reader.pages)
    except (DocumentError, LimitReachedError):
        raise
    except Exception as e:  # pypdf raises many types on damaged files
        raise DocumentError(str(path), f"not a valid PDF: {e}") from e


def _extract_pages(path: Path, pages: list[Any]) -> tuple[list[Segment], list[str]]:
    """Text segments of the pages, stopping at ``limits.max_text_chars``; page errors."""
    from pypdf.errors import LimitReachedError

    segments: list[Segment] = []
    errors: list[str] = []
    length, limit = 0, current_limits().max_text_chars
    for number, page in enumerate(pages, start=1):
        try:
            text = page.extract_text() or ""
            if not text.strip():
                page.get_contents()  # pypdf's extraction hides a decompression limit: surface it
        except LimitReachedError:
            raise
        except Exception as e:  # a damaged page should not lose the others
            logger.warning("%s: cannot extract text from page %d: %s", path, number, e)
            errors.append(f"page {number}: {e}")
            continue
        text = normalise_newlines(text.replace("\x00", "")).strip()
        if text:
            length += len(text)
            if length > limit:
                raise DocumentError(
                    str(path), f"text longer than limits.max_text_chars={limit:,} (page {number})"
                )
            segments.append(Segment(text=text, metadata={"page": number}))
    return segments, errors
