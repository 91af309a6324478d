"""Readers that turn files into :class:`~llama_kb.types.SourceDocument` objects.

One module per format (``markdown``, ``text``, ``pdf``, ``docx``, ``html``, ``jsonl``), shared
helpers in ``_``-prefixed modules, and the registry that dispatches by suffix here.

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

This package may import only the ground floor (:mod:`llama_kb.types`, :mod:`llama_kb.errors`,
:mod:`llama_kb.config`, :mod:`llama_kb.names`) and its own modules; format libraries (pypdf,
python-docx, BeautifulSoup) are imported lazily inside their reader.
"""

from __future__ import annotations

import logging
from pathlib import Path

from llama_kb.errors import DocumentError
from llama_kb.ingest.readers._base import Reader, ReadResult
from llama_kb.ingest.readers.docx import read_docx
from llama_kb.ingest.readers.html import read_html
from llama_kb.ingest.readers.jsonl import read_jsonl
from llama_kb.ingest.readers.markdown import read_markdown
from llama_kb.ingest.readers.pdf import read_pdf
from llama_kb.ingest.readers.text import read_text
from llama_kb.types import SourceDocument

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
    except RecursionError as e:
        raise DocumentError(source, "structure nested too deeply to read") from e
    if isinstance(result, SourceDocument):
        return ReadResult(documents=[result])
    return result
