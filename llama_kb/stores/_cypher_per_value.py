"""Many bounded lookups in one round trip: a ``UNION ALL`` branch per value.

FalkorDB 4.16 does not reset a ``LIMIT`` inside ``CALL {}`` between the rows that call it, so
a lookup bounded per value (a word's chunks counted up to a cap, a hub's first chunks) cannot
run under one ``UNWIND``. Each value gets a branch of its own instead, with its own ``LIMIT``.
Values travel as parameters; only branch positions are written into the query text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

BRANCHES = 32
"""Most branches in one query (longer queries cost the server more to plan than they save)."""

Run = Callable[[str, dict[str, Any], str], list[list[Any]]]


def rows_per_value(
    run: Run,
    branch: str,
    values: Sequence[str],
    action: str,
    params: dict[str, Any],
    derived: Mapping[str, Callable[[str], Any]] | None = None,
) -> dict[str, list[list[Any]]]:
    """Value -> the rows ``branch`` returns for it, in as few round trips as ``BRANCHES`` allow.

    Args:
        run: Runs a query with parameters, naming the action for error messages.
        branch: One lookup, ``$value`` being its value; its ``RETURN`` starts with
            ``{at} AS kb_at`` and names every column (``UNION`` branches share names).
        values: The values looked up (duplicates are looked up once).
        action: What the lookup does, for error messages.
        params: Parameters every branch shares.
        derived: More parameters of a branch, each computed from its value (a parameter,
            never query text: FalkorDB's client writes parameters ahead of the query).
    """
    found: dict[str, list[list[Any]]] = {value: [] for value in dict.fromkeys(values)}
    for part, query, own in unions(branch, values, derived):
        for row in run(query, {**params, **own}, action):
            found[part[int(row[0])]].append(list(row[1:]))
    return found


def unions(
    branch: str, values: Sequence[str], derived: Mapping[str, Callable[[str], Any]] | None = None
) -> Iterator[tuple[list[str], str, dict[str, Any]]]:
    """``(values, query, their parameters)`` for each group of at most ``BRANCHES`` distinct
    ``values``: the ``UNION ALL`` of ``branch`` for each (see :func:`rows_per_value`)."""
    per_branch: dict[str, Callable[[str], Any]] = {"value": str, **(derived or {})}
    names = re.compile(r"\$(" + "|".join(map(re.escape, per_branch)) + r")\b")
    unique = list(dict.fromkeys(values))
    for start in range(0, len(unique), BRANCHES):
        part = unique[start : start + BRANCHES]
        query = " UNION ALL ".join(
            names.sub(rf"$\g<1>{i}", branch).replace("{at}", str(i)) for i in range(len(part))
        )
        own = {
            f"{name}{i}": make(v) for i, v in enumerate(part) for name, make in per_branch.items()
        }
        yield part, query, own
