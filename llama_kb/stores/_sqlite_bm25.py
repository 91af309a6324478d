"""FTS5's BM25, computed over the chunks one principal may read.

FTS5's ``bm25()`` weighs words by statistics of the whole table, so a private chunk would
move the scores a public query gets. Over a restricted view the same formula (constants, IDF
floor, summation order, as ``fts5_aux.c``) is computed here from the index's postings
(``chunk_terms``) and per-access counts (``access_stats``): a principal's scores are exactly
those FTS5 gives on a table holding only what it may read.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Sequence

from llama_kb.stores._sqlite_rows import _marks

K1 = 1.2
B = 0.75
IDF_FLOOR = 1e-6


def visible_totals(conn: sqlite3.Connection, visible: Sequence[str]) -> tuple[int, int]:
    """``(chunks, tokens)`` over the access keys in ``visible``."""
    row = conn.execute(
        f"SELECT coalesce(sum(chunks), 0), coalesce(sum(tokens), 0) FROM access_stats "
        f"WHERE access IN ({_marks(visible)})",
        list(visible),
    ).fetchone()
    return int(row[0]), int(row[1])


def postings(
    conn: sqlite3.Connection, word: str, visible: Sequence[str]
) -> dict[int, tuple[str, int, int]]:
    """Rowid -> ``(chunk id, term frequency, tokens)`` of the visible chunks holding ``word``."""
    rows = conn.execute(
        "SELECT t.doc, count(*), hex(d.sz) FROM chunk_terms t "
        "JOIN chunk_access a ON a.rowid = t.doc JOIN chunk_fts_docsize d ON d.id = t.doc "
        f"WHERE t.term = ? AND a.access IN ({_marks(visible)}) GROUP BY t.doc",
        [word, *visible],
    ).fetchall()
    uris = dict(_uris(conn, [r[0] for r in rows]))
    return {rowid: (uris[rowid], int(tf), _varint(size)) for rowid, tf, size in rows}


def _uris(conn: sqlite3.Connection, rowids: list[int]) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for start in range(0, len(rowids), 500):
        part = rowids[start : start + 500]
        found.extend(
            conn.execute(f"SELECT rowid, uri FROM nodes WHERE rowid IN ({_marks(part)})", part)
        )
    return found


def visible_df(conn: sqlite3.Connection, word: str, visible: Sequence[str]) -> int:
    """How many visible chunks hold ``word``."""
    row = conn.execute(
        "SELECT count(*) FROM chunk_fts f JOIN chunk_access a ON a.rowid = f.rowid "
        f"WHERE chunk_fts MATCH ? AND a.access IN ({_marks(visible)})",
        ['"' + word.replace('"', '""') + '"', *visible],
    ).fetchone()
    return int(row[0])


def scores(
    lists: Sequence[dict[int, tuple[str, int, int]]], chunks: int, tokens: int
) -> dict[str, float]:
    """Chunk id -> BM25 score over the posting ``lists`` (one per query word, in order)."""
    if not chunks:
        return {}
    average = tokens / chunks
    idfs = []
    for found in lists:
        idf = math.log((chunks - len(found) + 0.5) / (len(found) + 0.5))
        idfs.append(idf if idf > 0.0 else IDF_FLOOR)
    rows = {rowid: (uri, size) for found in lists for rowid, (uri, _, size) in found.items()}
    result: dict[str, float] = {}
    for rowid, (uri, size) in rows.items():
        total = 0.0
        for idf, found in zip(idfs, lists, strict=True):
            tf = found[rowid][1] if rowid in found else 0
            total += idf * ((tf * (K1 + 1.0)) / (tf + K1 * (1 - B + B * size / average)))
        result[uri] = total
    return result


def _varint(hex_text: str) -> int:
    value = 0
    for i in range(0, len(hex_text), 2):
        byte = int(hex_text[i : i + 2], 16)
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            break
    return value
