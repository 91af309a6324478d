"""Errors raised by llama-kb.

Every error derives from :class:`LlamaKBError`, so ``except LlamaKBError`` catches
anything the library raises on purpose::

    LlamaKBError
    ├── ConfigurationError      invalid settings, a missing optional extra
    │   └── MissingDependencyError
    ├── KnowledgeBaseError      a directory that is not a knowledge base, a mismatched embedding
    │   └── CorruptStoreError   a store file (manifest, Chroma, graph DB) is damaged
    ├── DocumentError           one input (file, JSONL line, knowledge item) that cannot be used
    ├── EmbeddingError          the embedding model cannot be loaded or fails
    ├── BackendError            a vector or graph store misbehaves
    │   └── BackendUnavailable  a configured server cannot be reached
    ├── QueryError              an invalid query or query option
    └── NotSupportedError       an operation a backend does not offer
"""

from __future__ import annotations


class LlamaKBError(Exception):
    """Root of every error llama-kb raises on purpose."""


class ConfigurationError(LlamaKBError, ValueError):
    """Settings are invalid or incomplete."""


class MissingDependencyError(ConfigurationError, ImportError):
    """An optional dependency is not installed.

    The message names the ``pip install`` command that fixes it.
    """

    def __init__(self, package: str, extra: str, purpose: str) -> None:
        self.package = package
        self.extra = extra
        super().__init__(
            f"{purpose} needs the optional package {package!r}. "
            f"Install it with: pip install 'llama-kb[{extra}]'"
        )


class KnowledgeBaseError(LlamaKBError):
    """A knowledge base directory is unusable (not a KB, incompatible settings)."""


class CorruptStoreError(KnowledgeBaseError):
    """A store file is damaged; nothing was written to it.

    ``store`` names the store (``"manifest"``, ``"vectors (embedded Chroma)"``, ...) and
    ``path`` its file or directory; the message says how to recover.
    """

    def __init__(self, store: str, path: str, cause: str) -> None:
        self.store = store
        self.path = path
        super().__init__(
            f"the {store} at {path} is corrupt ({cause}). Nothing was changed. Restore it from "
            f"a backup, or move the knowledge base directory aside and re-ingest your sources"
        )


class DocumentError(LlamaKBError):
    """One input cannot be used; ``source`` names it (a path, ``path:line`` or an item id)."""

    def __init__(self, source: str, reason: str) -> None:
        self.source = source
        self.reason = reason
        super().__init__(f"{source}: {reason}")


class EmbeddingError(LlamaKBError):
    """The embedding model cannot be loaded or failed on an input."""


class BackendError(LlamaKBError):
    """A vector or graph store failed."""


class BackendUnavailable(BackendError, ConnectionError):
    """A configured server cannot be reached; the message names backend, address and fix."""

    def __init__(self, backend: str, address: str, fix: str, cause: str = "") -> None:
        self.backend = backend
        self.address = address
        detail = f" ({cause})" if cause else ""
        super().__init__(f"{backend} at {address} is unreachable{detail}. {fix}")


class QueryError(LlamaKBError, ValueError):
    """A query or one of its options is invalid."""


class NotSupportedError(LlamaKBError, NotImplementedError):
    """The backend does not offer this operation."""
