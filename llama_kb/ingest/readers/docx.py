"""Word reader (``.docx``, via python-docx): heading sections, tables and hyperlinks."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from llama_kb.errors import DocumentError
from llama_kb.ingest.guards.limits import check_zip
from llama_kb.ingest.readers._base import file_document
from llama_kb.ingest.readers._sections import Sections
from llama_kb.ingest.readers._text import dedupe, normalise_newlines, read_bytes
from llama_kb.types import Segment, SourceDocument

__all__ = ["read_docx"]

_DOCX_HEADING_STYLE = re.compile(r"^heading\s*([1-9])$", re.IGNORECASE)


def _docx_heading_level(paragraph: Any) -> int | None:
    """Heading level from the style or the style it is based on; 0 for ``Title``."""
    style = paragraph.style
    for _ in range(5):
        if style is None:
            return None
        name = (style.name or "").strip()
        match = _DOCX_HEADING_STYLE.match(name)
        if match:
            return int(match.group(1))
        if name.lower() == "title":
            return 0
        style = style.base_style
    return None


def _docx_table_lines(table: Any) -> Iterator[str]:
    for row in table.rows:
        cells: list[str] = []
        seen: set[int] = set()
        for cell in row.cells:
            if id(cell._tc) in seen:  # a merged cell is repeated for each grid column
                continue
            seen.add(id(cell._tc))
            parts: list[str] = []
            for item in cell.iter_inner_content():
                if hasattr(item, "rows"):
                    parts.extend(_docx_table_lines(item))
                elif item.text.strip():
                    parts.append(item.text.strip())
            if parts:
                cells.append(" ".join(parts))
        if cells:
            yield " | ".join(cells)


def read_docx(path: Path) -> SourceDocument:
    """Read a Word ``.docx`` file with python-docx, one segment per heading section.

    Paragraphs and tables are read in document order; a table row becomes one line with
    cells separated by ``" | "``. Paragraphs styled ``Heading N`` (or based on such a style)
    open sections with metadata ``heading_path``. Hyperlink addresses are collected in
    ``links``. The title is the core-properties title, else the first ``Title``-styled
    paragraph, else the first heading, else the file stem.

    Args:
        path: The file to read.

    Returns:
        The document.

    Raises:
        DocumentError: The file is unreadable, empty, not a valid ``.docx`` or has no text.
    """
    import docx

    data = read_bytes(path)
    if not data.strip():
        raise DocumentError(str(path), "empty file")
    check_zip(path, data)
    try:
        document = docx.Document(io.BytesIO(data))
    except Exception as e:  # BadZipFile, KeyError for missing parts, XML errors, ...
        raise DocumentError(str(path), f"not a valid .docx: {e}") from e

    sections = Sections()
    links: list[str] = []
    title_style: str | None = None
    first_heading: str | None = None
    try:
        for block in document.iter_inner_content():
            if hasattr(block, "rows"):
                lines = list(_docx_table_lines(block))
                if lines:
                    sections.line("\n".join(lines))
                    sections.blank()
                continue
            text = normalise_newlines(block.text).strip()
            links.extend(h.url for h in block.hyperlinks if h.url)
            if not text:
                continue
            level = _docx_heading_level(block)
            if level == 0:
                title_style = title_style or text
                sections.line(text)
            elif level is not None:
                first_heading = first_heading or text
                sections.heading(level, text)
            else:
                sections.line(text)
            sections.blank()
        core_title = (document.core_properties.title or "").strip()
    except Exception as e:
        raise DocumentError(str(path), f"cannot read .docx content: {e}") from e

    segments = tuple(Segment(s.text.strip(), s.metadata) for s in sections.segments())
    if not segments:
        raise DocumentError(str(path), "document has no text")
    return file_document(
        path, segments, core_title or title_style or first_heading or path.stem, links=dedupe(links)
    )
