"""Sources: where the files to ingest come from.

Today one source, :mod:`~llama_kb.ingest.sources.local` (walking local paths with
gitignore-style ``include``/``exclude`` patterns). A source may import the ground floor
(:mod:`llama_kb.types`, :mod:`llama_kb.errors`, :mod:`llama_kb.config`) and
:mod:`llama_kb.ingest.readers` (to know which suffixes can be read), nothing above.
"""

from llama_kb.ingest.sources.local import DiscoveryResult, discover_files

__all__ = ["DiscoveryResult", "discover_files"]
