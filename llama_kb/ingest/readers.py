"""Readers that turn files into :class:`~llama_kb.types.SourceDocument` objects.

:func:`read_path` picks a reader by file suffix (case-insensitive) from a registry that
:func:`register_reader` extends. Built-in formats:

========================  ====================================================================
suffix                    segments
========================  ====================================================================
``.md``, ``.markdown``    one per heading section, metadata ``heading_path``
``.txt``                  one
``.pdf``                  one per page with text, metadata ``page`` (1-based)
``.docx``                 one per heading section (tables included), metadata ``heading_path``
``.html``, ``.htm``       one per heading section, metadata ``heading_path``
``.jsonl``                one document per line (``id``, ``text``, optional ``title``, ``metadata``)
========================  ====================================================================

A file that cannot be used at all raises :class:`~llama_kb.errors.DocumentError`. A ``.jsonl``
file is read line by line instead: good lines become documents and bad lines are returned
as :class:`~llama_kb.types.IngestFailure` objects whose source is ``path:line``.

Text formats must be UTF-8 (a byte-order mark is accepted and stripped); newlines are
normalised to ``\\n``. HTML is parsed with BeautifulSoup, using lxml when it is installed
(faster, more forgiving) and the standard library's ``html.parser`` otherwise.
"""

from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llama_kb.errors import DocumentError
from llama_kb.types import IngestFailure, Segment, SourceDocument

if TYPE_CHECKING:
    from bs4 import BeautifulSoup, Tag

logger = logging.getLogger(__name__)

__all__ = [
    "ReadResult",
    "Reader",
    "read_docx",
    "read_html",
    "read_jsonl",
    "read_markdown",
    "read_path",
    "read_pdf",
    "read_text",
    "register_reader",
    "supported_suffixes",
]


@dataclass
class ReadResult:
    """What reading one file produced.

    Attributes:
        documents: Documents read from the file (one for most formats, one per line for JSONL).
        failures: Parts of the file that could not be used (JSONL lines), with reasons.
    """

    documents: list[SourceDocument] = field(default_factory=list)
    failures: list[IngestFailure] = field(default_factory=list)


Reader = Callable[[Path], SourceDocument | ReadResult]
"""A reader takes a path and returns one document or a :class:`ReadResult`.

It raises :class:`~llama_kb.errors.DocumentError` when the file cannot be used.
"""


# --------------------------------------------------------------------------- text decoding

_UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_SNIFF_BYTES = 8192
# Control bytes other than \t \n \v \f \r and ESC; plain text hardly ever contains them.
_CONTROL_BYTES = bytes(b for b in range(32) if b not in (9, 10, 11, 12, 13, 27))
_MAX_CONTROL_RATIO = 0.1


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except IsADirectoryError as e:
        raise DocumentError(str(path), "is a directory, not a file") from e
    except FileNotFoundError as e:
        raise DocumentError(str(path), "no such file or directory") from e
    except PermissionError as e:
        raise DocumentError(str(path), "cannot read file: permission denied") from e
    except OSError as e:
        raise DocumentError(str(path), f"cannot read file: {e.strerror or e}") from e


def _looks_binary(data: bytes) -> bool:
    if b"\x00" in data:
        return True
    head = data[:_SNIFF_BYTES]
    controls = len(head) - len(head.translate(None, _CONTROL_BYTES))
    return controls > _MAX_CONTROL_RATIO * len(head)


def _normalise_newlines(text: str) -> str:
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _decode_text(path: Path, data: bytes) -> str:
    """Decode a text file's bytes as UTF-8, with newlines normalised; reject unusable input."""
    if not data:
        raise DocumentError(str(path), "empty file")
    offset = 0
    if data.startswith(_UTF8_BOM):
        data = data[len(_UTF8_BOM) :]
        offset = len(_UTF8_BOM)
    elif data.startswith(_UTF16_BOMS):
        raise DocumentError(str(path), "file is encoded as UTF-16; re-save it as UTF-8")
    if _looks_binary(data):
        raise DocumentError(str(path), "looks like a binary file, not text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DocumentError(
            str(path), f"not valid UTF-8 at byte {e.start + offset}; re-save as UTF-8"
        ) from e
    if not text.strip():
        raise DocumentError(str(path), "empty file (only whitespace)")
    return _normalise_newlines(text)


def _read_text_file(path: Path) -> str:
    return _decode_text(path, _read_bytes(path))


def _file_ids(path: Path) -> str:
    return path.resolve().as_posix()


# --------------------------------------------------------------------------- heading sections


class _Sections:
    """Builds heading-delimited segments with a ``heading_path`` from the document root."""

    def __init__(self) -> None:
        self._stack: list[tuple[int, str]] = []
        self._lines: list[str] = []
        self._path: list[str] = []
        self._has_body = False
        self._done: list[tuple[Segment, bool]] = []

    def heading(self, level: int, text: str, line: str | None = None) -> None:
        if not text:  # an empty heading opens no section
            if line is not None:
                self.line(line)
            return
        self._flush()
        while self._stack and self._stack[-1][0] >= level:
            self._stack.pop()
        self._stack.append((level, text))
        self._path = [t for _, t in self._stack]
        self._lines = [text if line is None else line]

    def line(self, line: str) -> None:
        self._lines.append(line)
        if line.strip():
            self._has_body = True

    def blank(self) -> None:
        """End a paragraph: one blank line, however many breaks are requested."""
        if self._lines and self._lines[-1].strip():
            self._lines.append("")

    def _flush(self) -> None:
        text = "\n".join(self._lines).strip("\n")
        if text.strip():
            segment = Segment(text=text, metadata={"heading_path": list(self._path)})
            self._done.append((segment, self._has_body))
        self._lines = []
        self._has_body = False

    def segments(self) -> tuple[Segment, ...]:
        """The segments; sections holding only their heading are dropped if others have text."""
        self._flush()
        with_body = tuple(s for s, body in self._done if body)
        return with_body or tuple(s for s, _ in self._done)


def _dedupe(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(i for i in items if i))


# --------------------------------------------------------------------------- plain text


def read_text(path: Path) -> SourceDocument:
    """Read a UTF-8 plain-text file as one segment titled by the file stem.

    Args:
        path: The file to read.

    Returns:
        The document.

    Raises:
        DocumentError: The file is unreadable, empty, binary or not UTF-8.
    """
    text = _read_text_file(path).strip("\n")
    file_id = _file_ids(path)
    return SourceDocument(
        doc_id=file_id, source_path=file_id, segments=(Segment(text=text),), title=path.stem
    )


# --------------------------------------------------------------------------- markdown

_MD_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_MD_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_MD_FENCE_CLOSE = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*$")
_MD_INLINE_CODE = re.compile(r"`[^`\n]*`")
# [text](target "title") with one level of nested brackets in the text, not ![image](...).
_MD_LINK = re.compile(
    r"(?<![!\\])\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(?:<([^>\n]*)>|([^\s()]+(?:\([^\s()]*\))?))"
)
_MD_WIKI_LINK = re.compile(r"(?<!!)\[\[([^\[\]|\n]+)(?:\|[^\[\]\n]*)?\]\]")
_MD_REF_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?")
_MD_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto):[^\s<>]+)>")
_FRONT_MATTER_KEY = re.compile(r"^([A-Za-z_][\w.-]*)[ \t]*:(?:[ \t]+(.*))?$")
_INT = re.compile(r"^-?(?:0|[1-9]\d*)$")


def _front_matter_value(raw: str) -> str | int | bool | None:
    value = raw.strip()
    if " #" in value and not value.startswith(("'", '"')):
        value = value.split(" #", 1)[0].rstrip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    if not value:
        return None
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    if _INT.match(value):
        return int(value)
    return value


def _split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """Strip a leading ``---`` block; keep its top-level ``key: value`` pairs."""
    if not text.startswith("---\n"):
        return {}, text
    lines = text.split("\n")
    for end in range(1, len(lines)):
        if lines[end].rstrip() in ("---", "..."):
            break
    else:
        return {}, text
    metadata: dict[str, Any] = {}
    for line in lines[1:end]:
        match = _FRONT_MATTER_KEY.match(line)
        if match and match.group(2) is not None:
            value = _front_matter_value(match.group(2))
            if value is not None:
                metadata[match.group(1)] = value
    return metadata, "\n".join(lines[end + 1 :])


def _markdown_links(line: str) -> Iterator[str]:
    line = _MD_INLINE_CODE.sub("", line)
    ref = _MD_REF_DEF.match(line)
    if ref:
        yield ref.group(1)
    for match in _MD_LINK.finditer(line):
        yield (match.group(1) if match.group(1) is not None else match.group(2)).strip()
    for match in _MD_WIKI_LINK.finditer(line):
        yield match.group(1).strip()
    for match in _MD_AUTOLINK.finditer(line):
        yield match.group(1)


def read_markdown(path: Path) -> SourceDocument:
    """Read a markdown file, one segment per ATX heading section.

    Each segment keeps its heading line and has metadata ``heading_path`` (heading texts from
    the root, e.g. ``["Guide", "Install"]``). ``#`` lines inside fenced code blocks are not
    headings. A leading ``---`` front-matter block is removed and its simple top-level
    ``key: value`` pairs become document metadata (``true``/``false`` and integers are
    converted; nested values are ignored). Targets of ``[text](target)``, ``[[Wiki Link]]``,
    reference definitions and ``<https://...>`` autolinks (not images, not code) are collected
    in ``links``. The title is the front-matter ``title``, else the first ``# `` heading, else
    the file stem.

    Args:
        path: The file to read.

    Returns:
        The document.

    Raises:
        DocumentError: The file is unreadable, empty, binary or not UTF-8.
    """
    metadata, text = _split_front_matter(_read_text_file(path))
    sections = _Sections()
    links: list[str] = []
    first_h1: str | None = None
    fence: tuple[str, int] | None = None
    for line in text.split("\n"):
        if fence is not None:
            close = _MD_FENCE_CLOSE.match(line)
            if close and close.group(1)[0] == fence[0] and len(close.group(1)) >= fence[1]:
                fence = None
            sections.line(line)
            continue
        opening = _MD_FENCE_OPEN.match(line)
        if opening and not (opening.group(1)[0] == "`" and "`" in opening.group(2)):
            fence = (opening.group(1)[0], len(opening.group(1)))
            sections.line(line)
            continue
        heading = _MD_HEADING.match(line)
        if heading:
            level, title = len(heading.group(1)), (heading.group(2) or "").strip()
            if level == 1 and first_h1 is None and title:
                first_h1 = title
            sections.heading(level, title, line)
        else:
            sections.line(line)
        links.extend(_markdown_links(line))
    segments = sections.segments()
    if not segments:
        raise DocumentError(str(path), "empty file (only front matter)")
    front_title = metadata.get("title")
    title = front_title if isinstance(front_title, str) and front_title.strip() else None
    file_id = _file_ids(path)
    return SourceDocument(
        doc_id=file_id,
        source_path=file_id,
        segments=segments,
        title=title or first_h1 or path.stem,
        metadata=metadata,
        links=_dedupe(links),
    )


# --------------------------------------------------------------------------- PDF


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

    data = _read_bytes(path)
    if not data.strip():
        raise DocumentError(str(path), "empty file")
    if b"%PDF-" not in data[:1024]:
        raise DocumentError(str(path), "not a valid PDF: no %PDF header")
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise DocumentError(str(path), "PDF is encrypted and needs a password")
        pages = list(reader.pages)
    except DocumentError:
        raise
    except Exception as e:  # pypdf raises many types on damaged files
        raise DocumentError(str(path), f"not a valid PDF: {e}") from e

    segments: list[Segment] = []
    errors: list[str] = []
    for number, page in enumerate(pages, start=1):
        try:
            text = page.extract_text() or ""
        except Exception as e:  # a damaged page should not lose the others
            logger.warning("%s: cannot extract text from page %d: %s", path, number, e)
            errors.append(f"page {number}: {e}")
            continue
        text = _normalise_newlines(text.replace("\x00", "")).strip()
        if text:
            segments.append(Segment(text=text, metadata={"page": number}))
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
    file_id = _file_ids(path)
    return SourceDocument(
        doc_id=file_id,
        source_path=file_id,
        segments=tuple(segments),
        title=title or path.stem,
        metadata={"page_count": len(pages)},
    )


# --------------------------------------------------------------------------- DOCX

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

    data = _read_bytes(path)
    if not data.strip():
        raise DocumentError(str(path), "empty file")
    try:
        document = docx.Document(io.BytesIO(data))
    except Exception as e:  # BadZipFile, KeyError for missing parts, XML errors, ...
        raise DocumentError(str(path), f"not a valid .docx: {e}") from e

    sections = _Sections()
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
            text = _normalise_newlines(block.text).strip()
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
    file_id = _file_ids(path)
    return SourceDocument(
        doc_id=file_id,
        source_path=file_id,
        segments=segments,
        title=core_title or title_style or first_heading or path.stem,
        links=_dedupe(links),
    )


# --------------------------------------------------------------------------- HTML

_HTML_DROP = (
    "script", "style", "noscript", "template", "svg", "head", "title",
    "iframe", "object", "canvas",
)  # fmt: skip
_HTML_PARAGRAPH = frozenset((
    "p", "blockquote", "table", "ul", "ol", "dl", "figure", "hr", "section", "article",
    "header", "footer", "main", "aside", "nav", "form", "fieldset", "address", "details",
))  # fmt: skip
_HTML_LINE = frozenset((
    "div", "li", "tr", "dt", "dd", "caption", "figcaption", "summary", "option", "legend",
    "body", "html", "center", "menu", "thead", "tbody", "tfoot",
))  # fmt: skip
_HTML_CELL = frozenset(("td", "th"))
_HTML_HEADING = {f"h{n}": n for n in range(1, 7)}
_WHITESPACE = re.compile(r"\s+")
_LINE, _PARAGRAPH = "\n", "\n\n"


def _html_parser() -> str:
    try:
        import lxml  # noqa: F401
    except ImportError:
        return "html.parser"
    return "lxml"


def _collapse(text: str) -> str:
    return _WHITESPACE.sub(" ", text).strip()


class _HtmlText:
    """Collects visible text as lines, with block breaks and heading sections."""

    def __init__(self) -> None:
        self.sections = _Sections()
        self._inline: list[str] = []

    def text(self, text: str) -> None:
        self._inline.append(text)

    def space(self) -> None:
        self._inline.append(" ")

    def brk(self, kind: str) -> None:
        line = _collapse("".join(self._inline))
        self._inline = []
        if line:
            self.sections.line(line)
        if kind == _PARAGRAPH:
            self.sections.blank()

    def heading(self, level: int, text: str) -> None:
        self.brk(_PARAGRAPH)
        self.sections.heading(level, text)
        self.sections.blank()

    def raw(self, text: str) -> None:
        self.brk(_PARAGRAPH)
        for line in _normalise_newlines(text).strip("\n").split("\n"):
            self.sections.line(line.rstrip())
        self.sections.blank()


def _walk_html(root: Tag, out: _HtmlText) -> None:
    from bs4 import CData, NavigableString, Tag

    # Iterative so deeply nested markup cannot exhaust the recursion limit.
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, leaving = stack.pop()
        if isinstance(node, Tag):
            name = node.name
            if leaving:
                if name in _HTML_PARAGRAPH:
                    out.brk(_PARAGRAPH)
                elif name in _HTML_LINE:
                    out.brk(_LINE)
                elif name in _HTML_CELL:
                    out.space()
                continue
            if name in _HTML_HEADING:
                out.heading(_HTML_HEADING[name], _collapse(node.get_text()))
                continue
            if name == "br":
                out.brk(_LINE)
                continue
            if name == "pre":
                out.raw(node.get_text())
                continue
            if name in _HTML_PARAGRAPH:
                out.brk(_PARAGRAPH)
            elif name in _HTML_LINE:
                out.brk(_LINE)
            elif name in _HTML_CELL:
                out.space()
            stack.append((node, True))
            stack.extend((child, False) for child in reversed(node.contents))
        elif type(node) is NavigableString or isinstance(node, CData):
            out.text(str(node))
    out.brk(_PARAGRAPH)


def _html_title(soup: BeautifulSoup) -> str | None:
    if soup.title is not None:
        title = _collapse(soup.title.get_text())
        if title:
            return title
    h1 = soup.find("h1")
    if h1 is not None:
        return _collapse(h1.get_text()) or None
    return None


def read_html(path: Path) -> SourceDocument:
    """Read the visible text of an HTML file, one segment per heading section.

    ``script``, ``style``, ``noscript``, ``template``, ``svg``, ``head`` (and ``iframe``,
    ``object``, ``canvas`` fallback content) and elements with the ``hidden`` attribute are
    dropped; block elements become line breaks and runs of whitespace collapse to one space
    (``pre`` keeps its lines). ``h1``-``h6`` open sections with metadata ``heading_path``.
    ``<a href>`` targets are collected in ``links`` (same-page ``#fragment`` and
    ``javascript:`` links are skipped). The title is ``<title>``, else the first ``h1``, else
    the file stem.

    Args:
        path: The file to read.

    Returns:
        The document.

    Raises:
        DocumentError: The file is unreadable, empty, binary, not UTF-8 or has no visible text.
    """
    from bs4 import BeautifulSoup

    text = _read_text_file(path)
    soup = BeautifulSoup(text, _html_parser())
    title = _html_title(soup)
    for tag in soup.find_all([*_HTML_DROP]):
        tag.decompose()
    for tag in soup.find_all(hidden=True):
        tag.decompose()
    links = [
        str(a["href"]).strip()
        for a in soup.find_all("a", href=True)
        if not str(a["href"]).strip().startswith(("#", "javascript:"))
    ]
    out = _HtmlText()
    _walk_html(soup, out)
    segments = out.sections.segments()
    if not segments:
        raise DocumentError(str(path), "no visible text in HTML")
    file_id = _file_ids(path)
    return SourceDocument(
        doc_id=file_id,
        source_path=file_id,
        segments=segments,
        title=title or path.stem,
        links=_dedupe(links),
    )


# --------------------------------------------------------------------------- JSONL


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
    text = _normalise_newlines(text).strip()
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
    (string; also kept in metadata) and ``metadata`` (object). Other keys are ignored. A line
    that is not valid JSON, not an object, misses ``id``/``text``, has a wrong type or repeats
    an earlier ``id`` is reported as a failure with source ``path:line`` and the rest of the
    file is still read.

    Args:
        path: The file to read.

    Returns:
        Documents for the good lines and failures for the bad ones.

    Raises:
        DocumentError: The file as a whole is unreadable, empty, binary or not UTF-8.
    """
    text = _read_text_file(path)
    source_path = _file_ids(path)
    result = ReadResult()
    first_line: dict[str, int] = {}
    decode = json.JSONDecoder().decode
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        source = f"{path}:{lineno}"
        try:
            record = decode(line)
        except json.JSONDecodeError as e:
            reason = f"invalid JSON: {e.msg} (column {e.colno})"
            result.failures.append(IngestFailure(source, reason))
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


# --------------------------------------------------------------------------- registry

_READERS: dict[str, Reader] = {
    ".md": read_markdown,
    ".markdown": read_markdown,
    ".txt": read_text,
    ".pdf": read_pdf,
    ".docx": read_docx,
    ".html": read_html,
    ".htm": read_html,
    ".jsonl": read_jsonl,
}


def _normalise_suffix(suffix: str) -> str:
    suffix = suffix.strip().lower()
    if not suffix.startswith("."):
        suffix = "." + suffix
    if len(suffix) < 2 or "/" in suffix or "\\" in suffix:
        raise ValueError(f"invalid file suffix {suffix!r}; expected something like '.rst'")
    return suffix


def register_reader(suffix: str, reader: Reader) -> None:
    """Use ``reader`` for files ending in ``suffix``, replacing any reader already registered.

    Args:
        suffix: A file suffix such as ``".rst"`` (case-insensitive; the dot is optional).
        reader: Called with the file's path; returns a :class:`~llama_kb.types.SourceDocument`
            or a :class:`ReadResult` and raises :class:`~llama_kb.errors.DocumentError` for a
            file it cannot use.

    Raises:
        ValueError: ``suffix`` is not a file suffix.
    """
    _READERS[_normalise_suffix(suffix)] = reader


def supported_suffixes() -> tuple[str, ...]:
    """The file suffixes a reader is registered for, sorted (e.g. ``(".docx", ".htm", ...)``)."""
    return tuple(sorted(_READERS))


def read_path(path: str | Path) -> ReadResult:
    """Read one file with the reader registered for its suffix.

    Args:
        path: The file to read.

    Returns:
        The documents read and, for line-oriented formats, the parts that failed.

    Raises:
        DocumentError: The path does not exist, is not a regular file, has an unsupported
            suffix, or the file cannot be used at all. ``source`` is ``str(path)``.
    """
    path = Path(path)
    source = str(path)
    if path.is_dir():
        raise DocumentError(source, "is a directory, not a file")
    if not path.exists():
        raise DocumentError(source, "no such file or directory")
    if not path.is_file():
        raise DocumentError(source, "not a regular file")
    suffix = path.suffix.lower()
    reader = _READERS.get(suffix)
    if reader is None:
        kind = f"'{suffix}'" if suffix else "(no extension)"
        raise DocumentError(
            source, f"unsupported file type {kind}; supported: {', '.join(supported_suffixes())}"
        )
    logger.debug("reading %s", path)
    try:
        result = reader(path)
    except OSError as e:
        raise DocumentError(source, f"cannot read file: {e.strerror or e}") from e
    if isinstance(result, SourceDocument):
        return ReadResult(documents=[result])
    return result
