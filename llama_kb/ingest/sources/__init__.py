"""Sources: where the files to ingest come from.

A source is anything with the :class:`FilesAdapter` members (list, stat, read): local
directories (:class:`LocalFiles`, walking paths with gitignore-style ``include``/``exclude``
patterns, see :mod:`~llama_kb.ingest.sources.local`) and any fsspec URL (:class:`FsspecFiles`:
``s3://``, ``gs://``, ``memory://``, ...). A source may import the ground floor and
:mod:`llama_kb.ingest.readers` (to know which suffixes can be read), nothing above.
"""

from llama_kb.ingest.sources.fsspec import FsspecFiles
from llama_kb.ingest.sources.local import DiscoveryResult, discover_files, path_filter
from llama_kb.ingest.sources.local_adapter import LocalFiles
from llama_kb.ingest.sources.protocol import FileInfo, FilesAdapter

__all__ = [
    "DiscoveryResult",
    "FileInfo",
    "FilesAdapter",
    "FsspecFiles",
    "LocalFiles",
    "discover_files",
    "path_filter",
]
