"""HTML reader (``.html``, ``.htm``): visible text in heading sections, and links.

Parsed with BeautifulSoup, using lxml when it is installed (faster, more forgiving) and the
standard library's ``html.parser`` otherwise.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llama_kb.errors import DocumentError
from llama_kb.ingest.readers._base import file_document
from llama_kb.ingest.readers._sections import Sections
from llama_kb.ingest.readers._text import dedupe, normalise_newlines, read_text_file
from llama_kb.types import SourceDocument

if TYPE_CHECKING:
    from bs4 import BeautifulSoup, Tag

__all__ = ["read_html"]

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
        self.sections = Sections()
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
        for line in normalise_newlines(text).strip("\n").split("\n"):
            self.sections.line(line.rstrip())
        self.sections.blank()


def _block_break(name: str, out: _HtmlText) -> None:
    """The break an element makes where it opens and again where it closes."""
    if name in _HTML_PARAGRAPH:
        out.brk(_PARAGRAPH)
    elif name in _HTML_LINE:
        out.brk(_LINE)
    elif name in _HTML_CELL:
        out.space()


def _walk_html(root: Tag, out: _HtmlText) -> None:
    from bs4 import CData, NavigableString, Tag

    # Iterative so deeply nested markup cannot exhaust the recursion limit.
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, leaving = stack.pop()
        if isinstance(node, Tag):
            name = node.name
            if leaving:
                _block_break(name, out)
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
            _block_break(name, out)
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

    text = read_text_file(path)
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
    return file_document(path, segments, title or path.stem, links=dedupe(links))
