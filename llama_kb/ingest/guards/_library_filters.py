"""detect-secrets' ``is_indirect_reference`` line filter, with a quick answer first.

The filter (``secret = get_secret_key()`` holds no secret) runs a pattern that backtracks over
every start of a line that has no assignment: about a third of the whole secret scan of a
prose document. A line without a ``:``, ``=`` or ``!`` followed by an opening ``[`` or ``(``
and then a closing one cannot match that pattern and is answered at once; every other line
gets the library's own filter.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from detect_secrets import settings as library_settings
from detect_secrets.filters import heuristic

__all__ = ["default_settings", "is_indirect_reference"]

_LIBRARY_PATH = "detect_secrets.filters.heuristic.is_indirect_reference"
_QUICK_PATH = f"{__name__}.is_indirect_reference"


def _first(line: str, characters: str, start: int) -> int:
    """Where the first of ``characters`` is in ``line`` from ``start`` on (-1: none)."""
    found = [i for i in (line.find(c, start) for c in characters) if i >= 0]
    return min(found, default=-1)


def is_indirect_reference(line: str) -> bool:
    """The library's :func:`~detect_secrets.filters.heuristic.is_indirect_reference`, after
    checking that ``line`` has the characters its pattern needs, in order."""
    operator = _first(line, ":=!", 0)
    opening = _first(line, "[(", operator + 1) if operator >= 0 else -1
    if opening < 0 or _first(line, "])", opening + 1) < 0:
        return False
    return heuristic.is_indirect_reference(line)


@contextmanager
def default_settings() -> Iterator[Any]:
    """detect-secrets' ``default_settings()``, with :func:`is_indirect_reference` in place
    of the library's filter of that name."""
    with library_settings.default_settings() as settings:
        if _LIBRARY_PATH in settings.filters:
            settings.disable_filters(_LIBRARY_PATH)
            settings.filters[_QUICK_PATH] = {}
            library_settings.get_filters.cache_clear()
        yield settings
