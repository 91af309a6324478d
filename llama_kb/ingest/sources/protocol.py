"""The ``FilesAdapter`` protocol: where files come from (seed 001's pluggable sources).

An adapter lists the files under its root, tells their size, modification time and (for
object stores) ETag, and reads their bytes. Keys are ``/``-separated paths relative to the
root; they are the documents' identity, so the same tree copied or moved elsewhere (another
directory, a bucket) keeps its document ids. Any object with these members works.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

__all__ = ["FileInfo", "FilesAdapter"]


@dataclass(frozen=True)
class FileInfo:
    """What a source knows about one file without reading it.

    Attributes:
        key: Path relative to the source's root, ``/``-separated.
        size: Size in bytes.
        mtime_ns: Modification time in nanoseconds (0 when unknown).
        etag: The object store's entity tag, when there is one (preferred over ``mtime_ns``).
    """

    key: str
    size: int
    mtime_ns: int = 0
    etag: str | None = None


@runtime_checkable
class FilesAdapter(Protocol):
    """A source of files: list, stat and read (see the module docs)."""

    @property
    def root(self) -> str:
        """URI of the root the keys are relative to (``file:///...``, ``s3://bucket/prefix``)."""
        ...

    def list(self) -> Sequence[FileInfo]:
        """Every file to ingest under the root, with its size, time and ETag."""
        ...

    def stat(self, key: str) -> FileInfo:
        """Size, time and ETag of one file; raises ``FileNotFoundError`` when it is gone."""
        ...

    def read(self, key: str) -> bytes:
        """The file's bytes; raises ``OSError`` when it cannot be read."""
        ...

    def uri(self, key: str) -> str:
        """Where the file is, for messages and re-reading (an absolute path or URL)."""
        ...

    def local_path(self, key: str) -> Path | None:
        """The file on the local disk, when it is there (saves a copy when reading)."""
        ...
