"""Reading one listed file of a :class:`~.sources.protocol.FilesAdapter` into documents.

Readers work on local paths; a remote file is written to a temporary file with the same
suffix first. Whole-file documents get the source key as ``doc_id``, and every document
the key as ``source_path``, so identity does not depend on where the tree is mounted.
"""

from __future__ import annotations

import dataclasses
import hashlib
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from llama_kb.errors import DocumentError
from llama_kb.ingest.readers import ReadResult, read_path
from llama_kb.ingest.readers._text import path_id
from llama_kb.ingest.sources.protocol import FileInfo, FilesAdapter
from llama_kb.types import IngestFailure

__all__ = ["Fetched", "fetch"]


@dataclass
class Fetched:
    """A file's content hash, and a way to read it into documents."""

    adapter: FilesAdapter
    info: FileInfo
    sha256: str
    data: bytes | None = None

    def parse(self) -> ReadResult:
        """Read the file with the reader for its suffix; ids rewritten to the source key."""
        key = self.info.key
        local = self.adapter.local_path(key)
        if local is not None:
            return _rekey(read_path(local), path_id(local), key)
        suffix = PurePosixPath(key).suffix
        uri = self.adapter.uri(key)
        with tempfile.TemporaryDirectory(prefix="llama-kb-") as tmp:
            path = Path(tmp) / f"source{suffix}"
            path.write_bytes(self.data if self.data is not None else self.adapter.read(key))
            try:
                result = _rekey(read_path(path), path_id(path), key)
            except DocumentError as e:  # name the remote file, not the temporary copy
                raise DocumentError(uri, e.reason) from e
            failures = [
                IngestFailure(f.source.replace(str(path), uri, 1), f.reason)
                for f in result.failures
            ]
            return ReadResult(documents=result.documents, failures=failures)


def fetch(adapter: FilesAdapter, info: FileInfo) -> Fetched:
    """Hash ``info``'s file (reading a remote file once; its bytes are kept for parsing)."""
    local = adapter.local_path(info.key)
    if local is not None:
        digest = hashlib.sha256()
        with local.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        return Fetched(adapter, info, digest.hexdigest())
    data = adapter.read(info.key)
    return Fetched(adapter, info, hashlib.sha256(data).hexdigest(), data)


def _rekey(result: ReadResult, file_id: str, key: str) -> ReadResult:
    if file_id == key:
        return result
    documents = [
        dataclasses.replace(
            doc,
            doc_id=key if doc.doc_id == file_id else doc.doc_id,
            source_path=key,
        )
        for doc in result.documents
    ]
    return ReadResult(documents=documents, failures=result.failures)
