"""Local directories as a :class:`~llama_kb.ingest.sources.protocol.FilesAdapter`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from llama_kb.ingest.sources.local import discover_files
from llama_kb.ingest.sources.protocol import FileInfo
from llama_kb.types import IngestFailure

__all__ = ["LocalFiles"]


class LocalFiles:
    """Files under a local root directory, keyed by their path relative to it.

    Args:
        root: The declared root; document ids are paths relative to it. ``None``: no root,
            keys (and document ids) are absolute paths, as before roots existed.
        paths: Files and directories under ``root`` to list (default: ``root`` itself).
        include: Glob patterns a file must match (see :mod:`~llama_kb.ingest.sources.local`).
        exclude: Glob patterns of files to skip.
    """

    def __init__(
        self,
        root: str | Path | None,
        paths: Sequence[str | Path] = (),
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
    ) -> None:
        self.base = Path(root).expanduser().resolve() if root is not None else None
        self.paths = [Path(p) for p in paths] or ([self.base] if self.base else [])
        self.include = include
        self.exclude = exclude
        self.failures: list[IngestFailure] = []

    @property
    def root(self) -> str:
        """The root as a ``file://`` URI (``""`` without a root)."""
        return self.base.as_uri() if self.base else ""

    def list(self) -> list[FileInfo]:
        """Files under the given paths; those outside the root become :attr:`failures`."""
        found = discover_files(self.paths, include=self.include, exclude=self.exclude)
        self.failures = list(found.failures)
        infos = []
        for path in found.files:
            try:
                key = path.relative_to(self.base).as_posix() if self.base else path.as_posix()
            except ValueError:
                self.failures.append(
                    IngestFailure(str(path), f"outside the declared root {self.base}; skipped")
                )
                continue
            try:
                infos.append(self.stat(key))
            except OSError as e:
                self.failures.append(IngestFailure(str(path), e.strerror or str(e)))
        return infos

    def stat(self, key: str) -> FileInfo:
        """Size and modification time of ``key``."""
        stat = self.local_path(key).stat()
        return FileInfo(key, stat.st_size, stat.st_mtime_ns)

    def read(self, key: str) -> bytes:
        """The bytes of ``key``."""
        return self.local_path(key).read_bytes()

    def uri(self, key: str) -> str:
        """The absolute POSIX path of ``key``."""
        return self.local_path(key).as_posix()

    def local_path(self, key: str) -> Path:
        """The file itself."""
        return self.base / key if self.base else Path(key)
