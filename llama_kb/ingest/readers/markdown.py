"""Markdown reader (``.md``, ``.markdown``): heading sections, front matter and links."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from llama_kb.errors import DocumentError
from llama_kb.ingest.readers._base import file_document
from llama_kb.ingest.readers._sections import Sections
from llama_kb.ingest.readers._text import dedupe, read_text_file
from llama_kb.types import SourceDocument

__all__ = ["read_markdown"]

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
    metadata, text = _split_front_matter(read_text_file(path))
    sections = Sections()
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
    return file_document(
        path, segments, title or first_h1 or path.stem, metadata=metadata, links=dedupe(links)
    )
