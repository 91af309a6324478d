"""Local files: finding the files to ingest under the paths a user gives.

Directories are walked recursively, keeping files whose suffix has a reader (see
:func:`~llama_kb.ingest.readers.supported_suffixes`); hidden files and directories (names
starting with ``.``) are skipped, and symbolic links to directories are not followed.
Special files (FIFO, device, socket) and symbolic links leading outside the walked directory
are refused with a reason (see :func:`~llama_kb.ingest.guards.limits.walk_refusal`). A path
named explicitly is always kept, whatever its type, so that reading it reports a clear error.

``include`` and ``exclude`` patterns are matched against a file's path relative to the
directory being walked, with ``/`` separators, case-sensitively, gitignore-style:

* ``*`` and ``?`` match within one path component, ``[abc]`` a character class, and ``**``
  any number of components (``**/*.md`` matches ``a.md`` and ``x/y/a.md``);
* a pattern without ``/`` matches at any depth (``*.md`` is ``**/*.md``, ``drafts`` is any
  directory named ``drafts``); a pattern with ``/`` is anchored at the root;
* a pattern matching a directory matches everything below it (``drafts/*`` also covers
  ``drafts/old/a.md``).

A file is kept when it matches some ``include`` pattern (or none are given) and no
``exclude`` pattern; exclude wins.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from llama_kb.ingest.guards.limits import walk_refusal
from llama_kb.ingest.readers import supported_suffixes
from llama_kb.types import IngestFailure

__all__ = ["DiscoveryResult", "discover_files"]

logger = logging.getLogger(__name__)


@dataclass
class DiscoveryResult:
    """Files found by :func:`discover_files`.

    Attributes:
        files: Resolved paths, sorted, without duplicates.
        failures: Paths that could not be used (missing, unreadable directories).
    """

    files: list[Path] = field(default_factory=list)
    failures: list[IngestFailure] = field(default_factory=list)


def _glob_to_regex(pattern: str) -> re.Pattern[str]:
    pattern = pattern.strip().replace("\\", "/")
    anchored = "/" in pattern.rstrip("/")
    pattern = pattern.strip("/")
    if not anchored:
        pattern = "**/" + pattern
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if char == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            component_start = i == 0 or pattern[i - 1] == "/"
            if j - i >= 2 and component_start and j < n and pattern[j] == "/":
                out.append("(?:.*/)?")  # "**/": zero or more directories
                j += 1
            elif j - i >= 2 and component_start and j == n:
                out.append(".*")  # trailing "**": everything below
            else:
                out.append("[^/]*")
            i = j
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[":
            close = pattern.find("]", i + 2)
            if close == -1:
                out.append(re.escape(char))
                i += 1
                continue
            body = pattern[i + 1 : close]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = close + 1
        else:
            out.append(re.escape(char))
            i += 1
    return re.compile("".join(out))


class _Patterns:
    def __init__(self, patterns: Sequence[str]) -> None:
        if isinstance(patterns, str):
            patterns = [patterns]
        self.regexes = [_glob_to_regex(p) for p in patterns if p.strip()]

    def __bool__(self) -> bool:
        return bool(self.regexes)

    def match(self, relative: str) -> bool:
        """True when the path or one of its parent directories matches a pattern."""
        parts = relative.split("/")
        for depth in range(1, len(parts) + 1):
            prefix = "/".join(parts[:depth])
            if any(r.fullmatch(prefix) for r in self.regexes):
                return True
        return False


def _walk(
    root: Path,
    include: _Patterns,
    exclude: _Patterns,
    include_hidden: bool,
    suffixes: frozenset[str],
    result: DiscoveryResult,
    found: set[Path],
) -> None:
    def on_error(error: OSError) -> None:
        where = error.filename or str(root)
        reason = f"cannot list directory: {error.strerror or error}"
        result.failures.append(IngestFailure(str(where), reason))

    for dirpath, dirnames, filenames in os.walk(root, onerror=on_error):
        directory = Path(dirpath)
        relative_dir = directory.relative_to(root).as_posix()
        prefix = "" if relative_dir == "." else relative_dir + "/"
        dirnames[:] = sorted(
            d
            for d in dirnames
            if (include_hidden or not d.startswith(".")) and not exclude.match(prefix + d)
        )
        for name in filenames:
            if not include_hidden and name.startswith("."):
                continue
            if Path(name).suffix.lower() not in suffixes:
                continue
            relative = prefix + name
            if exclude.match(relative) or (include and not include.match(relative)):
                continue
            path = directory / name
            refusal = walk_refusal(path, root)
            if refusal:
                result.failures.append(IngestFailure(str(path), refusal))
                continue
            found.add(path.resolve())


def discover_files(
    paths: Sequence[str | Path],
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    *,
    include_hidden: bool = False,
) -> DiscoveryResult:
    """List the files to ingest under ``paths``.

    Args:
        paths: Files and directories. Directories are walked recursively for files with a
            supported suffix; files are kept whatever their suffix (and are not filtered by
            ``include``/``exclude``).
        include: Glob patterns (see the module docs); when given, only matching files found
            in directories are kept.
        exclude: Glob patterns of files and directories to skip; exclude wins over include.
        include_hidden: Also walk hidden files and directories (names starting with ``.``).

    Returns:
        The resolved files, sorted and deduplicated, and a failure for each path that does
        not exist or directory that cannot be listed.
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    include_patterns, exclude_patterns = _Patterns(include), _Patterns(exclude)
    suffixes = frozenset(supported_suffixes())
    result = DiscoveryResult()
    found: set[Path] = set()
    for given in paths:
        path = Path(given).expanduser()
        if path.is_dir():
            _walk(
                path,
                include_patterns,
                exclude_patterns,
                include_hidden,
                suffixes,
                result,
                found,
            )
        elif path.exists():
            found.add(path.resolve())
        else:
            result.failures.append(IngestFailure(str(given), "no such file or directory"))
    result.files = sorted(found)
    logger.debug("discovered %d files (%d failures)", len(result.files), len(result.failures))
    return result
