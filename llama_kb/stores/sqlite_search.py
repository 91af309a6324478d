"""The :class:`~llama_kb.stores.search.SearchIndex` of the embedded SQLite graph store.

Every lookup is an indexed query on the graph file (see :mod:`._sqlite_index` for the tables
and how writes keep them current): FTS5 BM25 for lexical search, the ``name_keys`` table for
names, the relation indexes (``LIMIT`` per name, a name's own chunks first) for the
neighbourhoods a graph walk visits, and ``fact_keys`` plus expression indexes for facts.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from typing import Any

from llama_kb.lru import LRU
from llama_kb.stores import _sqlite_bm25 as bm25
from llama_kb.stores._sqlite_db import SQLiteDatabase
from llama_kb.stores._sqlite_facts import read_facts
from llama_kb.stores._sqlite_index import chunk_df, name_gram_df
from llama_kb.stores._sqlite_links import SQLiteLinkReads
from llama_kb.stores._sqlite_rows import (
    _chunks,
    _json_path,
    _marks,
    _nodes_at,
    _unique,
    revision_of,
)
from llama_kb.stores.search import (
    Filters,
    LexicalPruning,
    NameForm,
    NameReads,
    cached_reads,
    contenders,
    ranked_by_shared,
    shared_grams,
)

VIEW_COUNTS = 50_000
"""Counts one store's indexes keep, per revision and view (least recently used first out):
how many (visible) names hold a trigram, how many visible chunks a common word."""


class SQLiteSearchIndex(SQLiteLinkReads, LexicalPruning):
    """Bounded query-time lookups over one SQLite graph file.

    Args:
        db: The graph store's database.
        visible: Only records with these access keys (and names reached through them);
            ``None``: everything.
        view_counts: Counts of earlier queries, shared by the views of one store.
        names: Names' chunk lists and stored counts of earlier queries, shared likewise.
    """

    def __init__(
        self,
        db: SQLiteDatabase,
        visible: frozenset[str] | None = None,
        view_counts: LRU[int] | None = None,
        names: NameReads | None = None,
    ) -> None:
        self._db = db
        self.visible = visible
        self._keys = sorted(visible) if visible is not None else []
        self._view_counts = view_counts if view_counts is not None else LRU(VIEW_COUNTS)
        self._names = names if names is not None else NameReads()

    def access_keys(self) -> frozenset[str]:
        """Access keys of the stored chunks and relations."""
        with self._db.read() as conn:
            rows = conn.execute("SELECT access FROM access_stats WHERE chunks > 0 OR relations > 0")
            return frozenset(r[0] for r in rows)

    def scoped(self, visible: frozenset[str] | None) -> SQLiteSearchIndex:
        """This index restricted to records with access keys in ``visible``."""
        return SQLiteSearchIndex(self._db, visible, self._view_counts, self._names)

    def _named(self, uri: str) -> tuple[str, list[str]]:
        """`` AND`` condition keeping names (column ``uri``) a visible relation touches."""
        if self.visible is None:
            return "", []
        return (
            f" AND EXISTS (SELECT 1 FROM name_access a WHERE a.uri = {uri} AND a.edges > 0 "
            f"AND a.access IN ({_marks(self._keys)}))",
            self._keys,
        )

    @property
    def revision(self) -> int:
        """The graph file's write counter."""
        with self._db.read() as conn:
            return revision_of(conn)

    def chunk_count(self) -> int:
        """Number of stored (visible) chunks."""
        with self._db.read() as conn:  # kept by triggers: no count over the index
            if self.visible is not None:
                return bm25.visible_totals(conn, self._keys)[0]
            return int(conn.execute("SELECT value FROM meta WHERE key = 'chunks'").fetchone()[0])

    def has_relations_besides(self, types: Collection[str]) -> bool:
        """Whether a stored relation has a type outside ``types`` (whatever the view): a seek
        per distinct type on the type index, stopping at the first one outside."""
        with self._db.read() as conn:
            last = ""
            while True:
                row = conn.execute(
                    "SELECT relation_type FROM relations WHERE relation_type > ? "
                    "ORDER BY relation_type LIMIT 1",
                    [last],
                ).fetchone()
                if row is None:
                    return False
                if row[0] not in types:
                    return True
                last = row[0]

    def metadata_fields(self) -> frozenset[str]:
        """Metadata fields (visible) chunks have had."""
        with self._db.read() as conn:
            if self.visible is not None:
                rows = conn.execute(
                    f"SELECT DISTINCT field FROM field_access WHERE access IN "
                    f"({_marks(self._keys)})",
                    self._keys,
                )
            else:
                rows = conn.execute("SELECT field FROM chunk_fields")
            return frozenset(r[0] for r in rows)

    def lexical(
        self, terms: Sequence[str], k: int, filters: Filters | None = None
    ) -> list[tuple[str, float]]:
        """BM25 (FTS5) top ``k`` chunks for ``terms``, filters applied inside the query."""
        # FTS5's tokenizer splits at "_": so do the words, to look each up as one token
        words = _unique(p for t in terms for p in t.split("_") if p)
        if not words or k <= 0:
            return []
        where, params = _filter_sql(filters)
        if self.visible is not None:
            return self._scoped_lexical(words, k, where, params)
        words = self._informative(words)
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        if where:  # the filters read the node row of every match
            sql = (
                "SELECT n.uri, -bm25(chunk_fts) FROM chunk_fts "
                "JOIN nodes n ON n.rowid = chunk_fts.rowid "
                f"WHERE chunk_fts MATCH ?{where} ORDER BY bm25(chunk_fts), n.uri LIMIT ?"
            )
            args = [match, *params, k]
        else:  # only the best 2k are joined to their node rows (ties at the cut by uri
            # as above unless more than k chunks tie there)
            sql = (
                "SELECT n.uri, s.score FROM (SELECT rowid, -bm25(chunk_fts) AS score "
                "FROM chunk_fts WHERE chunk_fts MATCH ? ORDER BY bm25(chunk_fts), rowid "
                "LIMIT ?) s JOIN nodes n ON n.rowid = s.rowid ORDER BY s.score DESC, n.uri "
                "LIMIT ?"
            )
            args = [match, 2 * k, k]
        with self._db.read() as conn:
            rows = conn.execute(sql, args).fetchall()
        return [(uri, float(score)) for uri, score in rows]

    def _scoped_lexical(
        self, words: list[str], k: int, where: str, params: list[Any]
    ) -> list[tuple[str, float]]:
        """:meth:`lexical` over the visible chunks: FTS5's BM25 on their statistics only.

        A word found in few chunks overall is surely informative here too, so only words
        common in the whole index have their visible document frequency counted; postings
        are read for the words kept. Filters narrow the result, not the statistics (as
        FTS5 does).
        """
        with self._db.read() as conn:
            chunks, tokens = bm25.visible_totals(conn, self._keys)
            ceiling = self.ceiling(chunks)
            lists: dict[str, bm25.Postings[int]] = {}
            df: dict[str, int] = {}
            common: list[str] = []
            for word in words:
                if self.common_share >= 1.0 or chunk_df(conn, word) <= ceiling:
                    lists[word] = bm25.postings(conn, word, self._keys)
                    df[word] = len(lists[word])
                else:
                    common.append(word)
            if common:  # counted once per revision and view
                df |= cached_reads(
                    self._view_counts,
                    (revision_of(conn), tuple(self._keys), "words"),
                    common,
                    lambda words: {w: bm25.visible_df(conn, w, self._keys) for w in words},
                )
            kept = self.informative(words, df, chunks)
            for word in kept:
                if word not in lists:
                    lists[word] = bm25.postings(conn, word, self._keys)
            by_rowid = bm25.scores([lists[w] for w in kept], chunks, tokens)
            if where:
                ids = bm25.chunk_ids(conn, list(by_rowid))
                allowed = _matching(conn, list(ids.values()), where, params)
                scored = {ids[r]: s for r, s in by_rowid.items() if ids[r] in allowed}
            else:
                scored = bm25.best_chunks(conn, by_rowid, k)
        return sorted(scored.items(), key=lambda item: (-item[1], item[0]))[:k]

    def _informative(self, words: list[str]) -> list[str]:
        """``words`` without the common ones (:class:`LexicalPruning`)."""
        if self.common_share >= 1.0:
            return words
        with self._db.read() as conn:
            total = int(conn.execute("SELECT value FROM meta WHERE key = 'chunks'").fetchone()[0])
            df = {w: chunk_df(conn, w) for w in words}
        return self.informative(words, df, total)

    def phrase_chunks(self, phrases: Sequence[str], batch: int = 200) -> set[str]:
        """Chunks whose text (or title) contains one of ``phrases`` (FTS5 phrase queries)."""
        quoted = ['"' + p.replace('"', '""') + '"' for p in _unique(phrases) if p.strip()]
        found: set[str] = set()
        with self._db.read() as conn:
            for start in range(0, len(quoted), batch):
                match = " OR ".join(quoted[start : start + batch])
                only, keys = self._only("n")
                found.update(
                    r[0]
                    for r in conn.execute(
                        "SELECT n.uri FROM chunk_fts JOIN nodes n ON n.rowid = chunk_fts.rowid "
                        f"WHERE chunk_fts MATCH ?{only}",
                        [match, *keys],
                    )
                )
        return found

    def name_forms(
        self, keys: Sequence[str], labels: Sequence[str] | None = None
    ) -> list[NameForm]:
        """Stored names spelled as one of ``keys`` (of ``labels``, if given)."""
        forms: list[NameForm] = []
        label_sql = f" AND label IN ({_marks(labels)})" if labels else ""
        named, access = self._named("name_keys.uri")
        with self._db.read() as conn:
            for chunk in _chunks(_unique(keys)):
                forms.extend(
                    NameForm(*row)
                    for row in conn.execute(
                        "SELECT key, uri, exact, label FROM name_keys "
                        f"WHERE key IN ({_marks(chunk)}){label_sql}{named}",
                        [*chunk, *(labels or []), *access],
                    )
                )
        return forms

    def similar_names(self, texts: Sequence[str], k: int) -> dict[str, dict[str, str]]:
        """Names sharing the most character trigrams with each text (FTS5 trigram index),
        among the names holding its ``rare_grams`` rarest trigrams within
        ``gram_postings_budget`` (a common one, "the", would match most names), ranked by
        :func:`~llama_kb.stores.search.ranked_by_shared` (only the contenders' names are read).
        A restricted view counts and lists its visible names only (counts kept until a write)."""
        with self._db.read() as conn:
            revision = revision_of(conn)  # counts are kept per revision (and view)
            return {text: self._similar(conn, revision, text, k) for text in texts}

    def _similar(self, conn: Any, revision: int, text: str, k: int) -> dict[str, str]:
        """:meth:`similar_names` of one text, read on ``conn``."""
        padded = " ".join(text.split())
        grams = _unique(padded[i : i + 3] for i in range(len(padded) - 2))
        grams = [g for g in grams if g.strip() and '"' not in g]
        if not grams or k <= 0:
            return {}
        named, access = self._named("n.uri")
        cap = self.gram_postings_budget + 1
        joined = " JOIN nodes n ON n.rowid = name_fts.rowid" if named else ""
        sql = f"SELECT name_fts.rowid FROM name_fts{joined} WHERE name_fts MATCH ?{named} LIMIT ?"
        df = cached_reads(
            self._view_counts,
            (revision, None, cap, "trigrams"),
            grams,
            lambda missing: {g: min(name_gram_df(conn, g), cap) for g in missing},
        )
        if self.visible is not None:  # a gram no name holds is skipped uncounted
            counted = f"SELECT count(*) FROM ({sql})"
            df = cached_reads(
                self._view_counts,
                (revision, tuple(self._keys), cap, "trigrams"),
                [g for g in grams if df[g]],
                lambda missing: {
                    g: int(conn.execute(counted, [f'"{g}"', *access, cap]).fetchone()[0])
                    for g in missing
                },
            )
        shared = shared_grams(
            {
                g: [r for (r,) in conn.execute(sql, [f'"{g}"', *access, cap])]
                for g in self.kept_grams(df)
            }
        )
        nodes = _nodes_at(conn, contenders(shared, k))
        names = {uri: name for uri, (_, name) in nodes.items() if name is not None}
        return ranked_by_shared(
            {uri: shared[row] for uri, (row, _) in nodes.items()}, names, text, k
        )

    def display_names(self, node_ids: Sequence[str]) -> dict[str, str]:
        """Node id -> name for the named nodes among ``node_ids``."""
        names: dict[str, str] = {}
        named, access = self._named("nodes.uri")
        with self._db.read() as conn:
            for chunk in _chunks(_unique(node_ids)):
                names.update(
                    conn.execute(
                        f"SELECT uri, name FROM nodes WHERE uri IN ({_marks(chunk)}) "
                        f"AND name IS NOT NULL{named}",
                        [*chunk, *access],
                    )
                )
        return names

    def chunk_records(self, chunk_ids: Sequence[str]) -> dict[str, tuple[str, dict[str, Any]]]:
        """Chunk id -> ``(text, metadata)``."""
        records: dict[str, tuple[str, dict[str, Any]]] = {}
        only, access = self._only("nodes")
        with self._db.read() as conn:
            for chunk in _chunks(_unique(chunk_ids)):
                for uri, content, metadata in conn.execute(
                    f"SELECT uri, content, metadata FROM nodes WHERE uri IN ({_marks(chunk)}) "
                    f"AND node_type = 'text_chunk'{only}",
                    [*chunk, *access],
                ):
                    records[uri] = (content or "", json.loads(metadata or "{}"))
        return records

    def facts(
        self,
        keys: Sequence[str],
        doc_ids: Sequence[str],
        chunk_ids: Sequence[str],
        limit: int,
        per_key: int = 200,
    ) -> list[dict[str, Any]]:
        """Typed fact nodes about ``keys`` (at most ``per_key`` each, so a hub name does not
        flood the query) or read from ``doc_ids`` / ``chunk_ids``; at most ``limit``. Each
        carries ``subject_key`` / ``object_key`` (their name keys) too."""
        with self._db.read() as conn:
            return read_facts(conn, self.visible, keys, doc_ids, chunk_ids, limit, per_key)


def _matching(conn: Any, uris: list[str], where: str, params: list[Any]) -> set[str]:
    """Those of ``uris`` whose node passes the ``where`` conditions (on alias ``n``)."""
    found: set[str] = set()
    for chunk in _chunks(uris):
        rows = conn.execute(
            f"SELECT n.uri FROM nodes n WHERE n.uri IN ({_marks(chunk)}){where}",
            [*chunk, *params],
        )
        found.update(r[0] for r in rows)
    return found


def _filter_sql(filters: Filters | None) -> tuple[str, list[Any]]:
    """`` AND ...`` conditions on the joined node's metadata, values as parameters."""
    if not filters:
        return "", []
    conds: list[str] = []
    params: list[Any] = []
    for key, wanted in filters.items():
        path = _json_path(key)
        values = list(wanted) if isinstance(wanted, list | tuple | set) else [wanted]
        if path is None or not values:
            conds.append("0")
            continue
        conds.append(f"json_extract(n.metadata, ?) IN ({_marks(values)})")
        params.extend([path, *values])
    return "".join(f" AND {c}" for c in conds), params
