"""Any fsspec file system as a source: ``s3://``, ``gs://``, ``az://``, ``memory://``, ...

fsspec is a core dependency; the protocol's own package must be installed
(``pip install 'llama-kb[s3]'`` for ``s3://``, ``gcsfs`` for ``gs://``). Credentials are
given as :class:`~pydantic.SecretStr` (or read from the environment by :meth:`from_env`) and
revealed only when the file system is created; they never appear in ``repr`` or logs.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import SecretStr

from llama_kb.errors import ConfigurationError, MissingDependencyError
from llama_kb.ingest.readers import supported_suffixes
from llama_kb.ingest.sources.local import path_filter
from llama_kb.ingest.sources.protocol import FileInfo

__all__ = ["FsspecFiles"]

_EXTRAS = {
    "s3": ("s3fs", "s3"),
    "s3a": ("s3fs", "s3"),
    "gs": ("gcsfs", "gcs"),
    "gcs": ("gcsfs", "gcs"),
}
_ETAG_KEYS = ("ETag", "etag", "md5Hash", "md5")
_TIME_KEYS = ("LastModified", "last_modified", "mtime", "updated", "created")


class FsspecFiles:
    """Files under an fsspec URL, keyed by their path relative to it.

    Args:
        url: The root, e.g. ``"s3://bucket/docs"`` or ``"memory://kb"``.
        storage_options: Passed to ``fsspec.filesystem`` (``key``, ``secret``,
            ``endpoint_url``, ...); :class:`SecretStr` values are revealed only there.
        include: Glob patterns a file (relative to the root) must match.
        exclude: Glob patterns of files to skip.
        filesystem: An fsspec file system to use instead of creating one.
    """

    def __init__(
        self,
        url: str,
        storage_options: Mapping[str, Any] | None = None,
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        filesystem: Any = None,
    ) -> None:
        if "://" not in url:
            raise ConfigurationError(f"not a URL: {url!r}; expected e.g. 's3://bucket/prefix'")
        self.protocol, rest = url.split("://", 1)
        self.path = rest.rstrip("/")
        self.storage_options = dict(storage_options or {})
        self._keep = path_filter(include, exclude)
        self._suffixes = frozenset(supported_suffixes())
        self._fs = filesystem

    @classmethod
    def from_env(cls, url: str, **kwargs: Any) -> FsspecFiles:
        """Credentials and endpoint for ``s3://`` from ``AWS_ACCESS_KEY_ID``,
        ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN`` and ``AWS_ENDPOINT_URL``."""
        options: dict[str, Any] = dict(kwargs.pop("storage_options", {}) or {})
        env = {
            "key": "AWS_ACCESS_KEY_ID",
            "secret": "AWS_SECRET_ACCESS_KEY",
            "token": "AWS_SESSION_TOKEN",
            "endpoint_url": "AWS_ENDPOINT_URL",
        }
        for option, variable in env.items():
            value = os.environ.get(variable)
            if value and option not in options:
                options[option] = value if option == "endpoint_url" else SecretStr(value)
        return cls(url, storage_options=options, **kwargs)

    def __repr__(self) -> str:
        return f"FsspecFiles({self.root!r}, options={sorted(self.storage_options)})"

    @property
    def root(self) -> str:
        """The root URL."""
        return f"{self.protocol}://{self.path}"

    @property
    def fs(self) -> Any:
        """The fsspec file system (created on first use)."""
        if self._fs is None:
            try:
                import fsspec
            except ImportError as e:  # pragma: no cover - fsspec is a core dependency
                raise MissingDependencyError("fsspec", "s3", "reading remote sources") from e
            options = {
                k: v.get_secret_value() if isinstance(v, SecretStr) else v
                for k, v in self.storage_options.items()
            }
            try:
                self._fs = fsspec.filesystem(self.protocol, **options)
            except ImportError as e:
                package, extra = _EXTRAS.get(self.protocol, (e.name or self.protocol, "s3"))
                raise MissingDependencyError(
                    package, extra, f"reading {self.protocol}:// sources"
                ) from e
        return self._fs

    def _full(self, key: str) -> str:
        return posixpath.join(self.path, key)

    def _info(self, key: str, info: Mapping[str, Any]) -> FileInfo:
        etag = next((str(info[k]).strip('"') for k in _ETAG_KEYS if info.get(k)), None)
        return FileInfo(key, int(info.get("size") or 0), _mtime_ns(info), etag)

    def list(self) -> list[FileInfo]:
        """Files with a readable suffix under the root, filtered by include/exclude."""
        self.fs.invalidate_cache()
        found = self.fs.find(self.path, detail=True)
        infos = []
        for full, info in sorted(found.items()):
            if info.get("type", "file") != "file":
                continue
            key = posixpath.relpath(full.lstrip("/"), self.path.lstrip("/"))
            name = PurePosixPath(key)
            if name.suffix.lower() not in self._suffixes or any(
                part.startswith(".") for part in name.parts
            ):
                continue
            if self._keep(key):
                infos.append(self._info(key, info))
        return infos

    def stat(self, key: str) -> FileInfo:
        """Size, time and ETag of ``key``."""
        return self._info(key, self.fs.info(self._full(key)))

    def read(self, key: str) -> bytes:
        """The bytes of ``key``."""
        data: bytes = self.fs.cat_file(self._full(key))
        return data

    def uri(self, key: str) -> str:
        """The URL of ``key``."""
        return f"{self.protocol}://{self._full(key)}"

    def local_path(self, key: str) -> Path | None:
        """Always ``None``: remote files are read into memory."""
        return None


def _mtime_ns(info: Mapping[str, Any]) -> int:
    for name in _TIME_KEYS:
        value = info.get(name)
        if isinstance(value, datetime):
            return int(value.timestamp() * 1e9)
        if isinstance(value, (int, float)):
            return int(value * 1e9)
    return 0
