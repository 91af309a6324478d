"""Heading-delimited segments shared by the markdown, DOCX and HTML readers."""

from __future__ import annotations

from llama_kb.types import Segment

__all__ = ["Sections"]


class Sections:
    """Builds heading-delimited segments with a ``heading_path`` from the document root."""

    def __init__(self) -> None:
        self._stack: list[tuple[int, str]] = []
        self._lines: list[str] = []
        self._path: list[str] = []
        self._has_body = False
        self._done: list[tuple[Segment, bool]] = []

    def heading(self, level: int, text: str, line: str | None = None) -> None:
        """Start a section at ``level``; ``line`` is its source line (default ``text``)."""
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
        """Add a line of body text to the current section."""
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
