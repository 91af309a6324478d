"""FTS5's BM25, computed over the chunks one principal may read.

FTS5's ``bm25()`` weighs words by statistics of the whole table, so a private chunk would
move the scores a public query gets. Over a restricted view the same formula (constants, IDF
floor, summation order, as ``fts5_aux.c``) is computed here from the index's postings
(``chunk_terms``) and per-access counts (``access_stats``): a principal's scores are exactly
those FTS5 gives on a table holding only what it may read.
"""

from __future__ import annotations

import heapq
import math
import sqlite3
from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

from llama_kb.stores._sqlite_rows import _marks

K1 = 1.2
B = 0.75
IDF_FLOOR = 1e-6

K = TypeVar("K", bound=Hashable)
Postings = Mapping[Hashable, tuple[K, int, int]]
"""A word's postings: key -> ``(chunk, term frequency, chunk length in tokens)``."""


def visible_totals(conn: sqlite3.Connection, visible: Sequence[str]) -> tuple[int, int]:
    """``(chunks, tokens)`` over the access keys in ``visible``."""
    row = conn.execute(
        f"SELECT coalesce(sum(chunks), 0), coalesce(sum(tokens), 0) FROM access_stats "
        f"WHERE access IN ({_marks(visible)})",
        list(visible),
    ).fetchone()
    return int(row[0]), int(row[1])


def postings(conn: sqlite3.Connection, word: str, visible: Sequence[str]) -> Postings[int]:
    """Rowid -> ``(rowid, term frequency, tokens)`` of the visible chunks holding ``word``
    (chunk ids are read only for the chunks kept: :func:`best_chunks`)."""
    rows = conn.execute(
        "SELECT t.doc, count(*), hex(d.sz) FROM chunk_terms t "
        "JOIN chunk_access a ON a.rowid = t.doc JOIN chunk_fts_docsize d ON d.id = t.doc "
        f"WHERE t.term = ? AND a.access IN ({_marks(visible)}) GROUP BY t.doc",
        [word, *visible],
    ).fetchall()
    return {rowid: (rowid, int(tf), _varint(size)) for rowid, tf, size in rows}


def chunk_ids(conn: sqlite3.Connection, rowids: Sequence[int]) -> dict[int, str]:
    """Rowid -> chunk id (``nodes.uri``) of ``rowids``."""
    found: dict[int, str] = {}
    for start in range(0, len(rowids), 500):
        part = list(rowids[start : start + 500])
        found.update(
            conn.execute(f"SELECT rowid, uri FROM nodes WHERE rowid IN ({_marks(part)})", part)
        )
    return found


def best_chunks(conn: sqlite3.Connection, scored: dict[int, float], k: int) -> dict[str, float]:
    """Chunk id -> score of the ``k`` best of ``scored`` (rowid -> score) and of any chunk
    tied with the ``k``-th, so that ordering by score, then chunk id, cuts as over all."""
    if len(scored) > k > 0:
        threshold = heapq.nlargest(k, scored.values())[-1]
        scored = {rowid: score for rowid, score in scored.items() if score >= threshold}
    ids = chunk_ids(conn, list(scored))
    return {ids[rowid]: score for rowid, score in scored.items()}


def visible_df(conn: sqlite3.Connection, word: str, visible: Sequence[str]) -> int:
    """How many visible chunks hold ``word``."""
    row = conn.execute(
        "SELECT count(*) FROM chunk_fts f JOIN chunk_access a ON a.rowid = f.rowid "
        f"WHERE chunk_fts MATCH ? AND a.access IN ({_marks(visible)})",
        ['"' + word.replace('"', '""') + '"', *visible],
    ).fetchone()
    return int(row[0])


def idf(found: int, chunks: int) -> float:
    """FTS5's inverse document frequency of a word ``found`` in that many of ``chunks``."""
    value = math.log((chunks - found + 0.5) / (found + 0.5))
    return value if value > 0.0 else IDF_FLOOR


def scores(lists: Sequence[Postings[K]], chunks: int, tokens: int) -> dict[K, float]:
    """Chunk -> BM25 score over the posting ``lists`` (one per query word, in order)."""
    if not chunks:
        return {}
    average = tokens / chunks
    idfs = [idf(len(found), chunks) for found in lists]
    rows = {key: (chunk, size) for found in lists for key, (chunk, _, size) in found.items()}
    result: dict[K, float] = {}
    for key, (chunk, size) in rows.items():
        total = 0.0
        for weight, found in zip(idfs, lists, strict=True):
            tf = found[key][1] if key in found else 0
            total += weight * ((tf * (K1 + 1.0)) / (tf + K1 * (1 - B + B * size / average)))
        result[chunk] = total
    return result


def _varint(hex_text: str) -> int:
    value = 0
    for i in range(0, len(hex_text), 2):
        byte = int(hex_text[i : i + 2], 16)
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            break
    return value
