"""Plain-text reader (``.txt``): one segment per file."""

from __future__ import annotations

from pathlib import Path

from llama_kb.ingest.readers._base import file_document
from llama_kb.ingest.readers._text import read_text_file
from llama_kb.types import Segment, SourceDocument

__all__ = ["read_text"]


def read_text(path: Path) -> SourceDocument:
    """Read a UTF-8 plain-text file as one segment titled by the file stem.

    Args:
        path: The file to read.

    Returns:
        The document.

    Raises:
        DocumentError: The file is unreadable, empty, binary or not UTF-8.
    """
    text = read_text_file(path).strip("\n")
    return file_document(path, (Segment(text=text),), path.stem)
