"""Shared file helpers for readers: reading bytes, UTF-8 decoding, ids, deduplication.

Text formats must be UTF-8 (a byte-order mark is accepted and stripped); newlines are
normalised to ``\\n``.
"""

from __future__ import annotations

from pathlib import Path

from llama_kb.errors import DocumentError
from llama_kb.ingest.guards.limits import read_limited

__all__ = [
    "decode_text",
    "dedupe",
    "normalise_newlines",
    "path_id",
    "read_bytes",
    "read_text_file",
]

_UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_SNIFF_BYTES = 8192
# Control bytes other than \t \n \v \f \r and ESC; plain text hardly ever contains them.
_CONTROL_BYTES = bytes(b for b in range(32) if b not in (9, 10, 11, 12, 13, 27))
_MAX_CONTROL_RATIO = 0.1


def read_bytes(path: Path) -> bytes:
    """The file's bytes; OS errors and refused files (special, over ``limits.max_file_bytes``)
    become :class:`~llama_kb.errors.DocumentError`."""
    try:
        return read_limited(path)
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


def normalise_newlines(text: str) -> str:
    """Turn ``\\r\\n`` and lone ``\\r`` into ``\\n``."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def decode_text(path: Path, data: bytes) -> str:
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
    return normalise_newlines(text)


def read_text_file(path: Path) -> str:
    """Read and decode a UTF-8 text file (see :func:`decode_text`)."""
    return decode_text(path, read_bytes(path))


def path_id(path: Path) -> str:
    """The resolved POSIX path, used as a file's ``doc_id`` and ``source_path``."""
    return path.resolve().as_posix()


def dedupe(items: list[str]) -> tuple[str, ...]:
    """Non-empty items in first-seen order, without repeats."""
    return tuple(dict.fromkeys(i for i in items if i))
