"""The neighbourhood reads of the SQLite search index: a chunk's names, a name's chunks (capped,
its own first) and names' stored counts, over the relation indexes and the trigger-kept
``name_stats`` / ``name_access`` tables.

A name's chunks and counts are kept across queries (:class:`~llama_kb.stores.search.NameReads`,
shared by every view of one store) under the graph file's revision, read first in the same
connection: a write moves it, so an entry is never older than the revision it is kept under.
Reads inside a write transaction (the writer's own thread) see rows not committed yet and are
never kept.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import partial
from typing import Any

from llama_kb.stores._sqlite_access import access_condition
from llama_kb.stores._sqlite_db import SQLiteDatabase
from llama_kb.stores._sqlite_rows import _chunks, _marks, _unique, revision_of
from llama_kb.stores.search import LINK_RELATIONS, NameReads, NameStats, cached_reads

_LINKS = _marks(LINK_RELATIONS)
_MENTION_RELATIONS = [r for r in LINK_RELATIONS if r != "PART_OF"]


class SQLiteLinkReads:
    """Link lookups of :class:`~llama_kb.stores.sqlite_search.SQLiteSearchIndex` (which sets
    the attributes below)."""

    _db: SQLiteDatabase
    visible: frozenset[str] | None
    _keys: list[str]
    _names: NameReads

    def _only(self, row: str) -> tuple[str, list[str]]:
        """`` AND`` condition (and its parameters) keeping visible records of alias ``row``."""
        return access_condition(row, self.visible)

    def chunk_links(self, chunk_ids: Sequence[str]) -> dict[str, list[tuple[str, bool]]]:
        """Chunk id -> ``(name id, is its document)`` for its ``PART_OF`` / mention edges."""
        links: dict[str, list[tuple[str, bool]]] = {c: [] for c in chunk_ids}
        with self._db.read() as conn:
            for source, target, own in self._link_rows(conn, _unique(chunk_ids), "source_uri"):
                links[source].append((target, own))
        return links

    def _link_rows(self, conn: Any, ids: list[str], end: str) -> Iterator[tuple[str, str, bool]]:
        """``(id, other end, is PART_OF)`` of the visible link relations whose ``end`` column
        (``source_uri`` or ``target_uri``) is one of ``ids``."""
        other = "target_uri" if end == "source_uri" else "source_uri"
        only, access = self._only("relations")
        for chunk in _chunks(ids):
            rows = conn.execute(
                f"SELECT {end}, {other}, relation_type FROM relations "
                f"WHERE {end} IN ({_marks(chunk)}) AND relation_type IN ({_LINKS}) "
                f"AND {other} <> {end}{only}",
                [*chunk, *LINK_RELATIONS, *access],
            )
            for this, that, rel_type in rows:
                yield this, that, rel_type == "PART_OF"

    def name_links(self, name_ids: Sequence[str], cap: int) -> dict[str, list[tuple[str, bool]]]:
        """Name id -> up to ``cap`` chunks, its own (``PART_OF``) first, then mentions.

        Names with at most ``cap`` chunks (their stored totals say so) are read in one batched
        query; only hubs are read one by one, each stopping at ``cap``. A name read at the
        current revision (in this view, with this cap) is not read again.
        """
        with self._db.read() as conn:
            scope = self._scope(conn)
            read = partial(self._read_name_links, conn, scope=scope, cap=cap)
            kept = None if scope is None else (*scope, cap)
            return cached_reads(self._names.links, kept, _unique(name_ids), read)

    def _scope(self, conn: Any) -> tuple[int, tuple[str, ...] | None] | None:
        """What a kept read holds for (the revision, the view); ``None`` inside a write."""
        if conn.in_transaction:
            return None
        return revision_of(conn), tuple(self._keys) if self.visible is not None else None

    def _read_name_links(
        self, conn: Any, names: list[str], scope: tuple[Any, ...] | None, cap: int
    ) -> dict[str, list[tuple[str, bool]]]:
        stats = self._cached_stats(conn, scope, names)
        small = [n for n in names if n in stats and stats[n].titles + stats[n].mentions <= cap]
        links: dict[str, list[tuple[str, bool]]] = {n: [] for n in names}
        for target, source, own in self._link_rows(conn, small, "target_uri"):
            links[target].append((source, own))
        for name in small:
            links[name].sort(key=lambda link: not link[1])
        fitting = set(small)
        for name in (n for n in names if n in stats and n not in fitting):
            links[name] = self._hub_links(conn, name, cap)
        return links

    def _hub_links(self, conn: Any, name: str, cap: int) -> list[tuple[str, bool]]:
        only, access = self._only("relations")
        own = conn.execute(
            "SELECT source_uri FROM relations WHERE target_uri = ? "
            f"AND relation_type = 'PART_OF'{only} LIMIT ?",
            [name, *access, cap],
        ).fetchall()
        found = [(r[0], True) for r in own]
        if len(found) < cap:
            mentions = conn.execute(
                "SELECT DISTINCT source_uri FROM relations WHERE target_uri = ? "
                f"AND relation_type IN (?, ?){only} LIMIT ?",
                [name, *_MENTION_RELATIONS, *access, cap - len(found)],
            ).fetchall()
            found.extend((r[0], False) for r in mentions)
        return found

    def name_stats(self, name_ids: Sequence[str]) -> dict[str, NameStats]:
        """Name id -> chunks that belong to / mention it (kept by triggers, one row read; kept
        across queries per revision and view)."""
        with self._db.read() as conn:
            return self._cached_stats(conn, self._scope(conn), _unique(name_ids))

    def _cached_stats(
        self, conn: Any, scope: tuple[Any, ...] | None, names: list[str]
    ) -> dict[str, NameStats]:
        found = cached_reads(self._names.counts, scope, names, partial(self._read_name_stats, conn))
        return {n: stats for n, (stats,) in found.items() if stats is not None}

    def _read_name_stats(self, conn: Any, names: list[str]) -> dict[str, tuple[NameStats | None]]:
        if self.visible is None:
            sql = "SELECT uri, titles, mentions FROM name_stats WHERE uri IN ({})"
        else:
            sql = (
                "SELECT uri, sum(titles), sum(mentions) FROM name_access WHERE uri IN ({}) "
                f"AND access IN ({_marks(self._keys)}) GROUP BY uri HAVING sum(edges) > 0"
            )
        stats: dict[str, NameStats] = {}
        for chunk in _chunks(names):
            for uri, titles, mentions in conn.execute(
                sql.format(_marks(chunk)), [*chunk, *self._keys]
            ):
                stats[uri] = NameStats(int(titles), int(mentions))
        return {n: (stats.get(n),) for n in names}
