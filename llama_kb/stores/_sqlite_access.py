"""Per-access statistics inside the SQLite graph file (schema 3), kept by triggers.

A principal's view of the graph must not depend on records it cannot read, so the numbers
retrieval scores with are kept per access key (:mod:`llama_kb.access`):

* ``access_stats``: chunks, FTS5 tokens (BM25's ``N`` and average length) and relations per
  access key (which keys are stored at all);
* ``name_access``: per name and access key, the chunks that belong to / mention it and the
  relations touching it (a name exists for a principal only through a relation it reads);
* ``field_access``: metadata fields chunks of each access key have had;
* ``chunk_access``: each chunk row's access key by rowid (joined by BM25 without JSON);
* ``chunk_terms``: the full-text index's postings (``fts5vocab`` instances), to score BM25
  over the visible chunks only.

A record without an ``access`` property is public (what every store held before schema 3).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection

ACCESS_SQL = "coalesce(json_extract({row}.metadata, '$.access'), 'public')"
"""SQL for a node's or relation's access key (``{row}``: the table alias)."""

_HEX = "'0123456789ABCDEF'"


def access_condition(row: str, access: Collection[str] | None) -> tuple[str, list[str]]:
    """`` AND`` condition (and parameters) keeping records of alias ``row`` whose access key
    is in ``access`` (none for ``None``)."""
    if access is None:
        return "", []
    keys = sorted(access)
    return f" AND {ACCESS_SQL.format(row=row)} IN ({', '.join('?' * len(keys))})", keys


def _byte(i: int) -> str:
    hi = f"(instr({_HEX}, substr(h, {2 * i + 1}, 1)) - 1)"
    lo = f"(instr({_HEX}, substr(h, {2 * i + 2}, 1)) - 1)"
    return f"({hi} * 16 + {lo})"


def tokens_sql(rowid: str) -> str:
    """SQL for the FTS5 token count of row ``rowid`` (its ``docsize`` varint, up to 2**21)."""
    b0, b1, b2 = _byte(0), _byte(1), _byte(2)
    value = (
        f"CASE WHEN {b0} < 128 THEN {b0} WHEN {b1} < 128 THEN ({b0} - 128) * 128 + {b1} "
        f"ELSE (({b0} - 128) * 128 + {b1} - 128) * 128 + {b2} END"
    )
    return (
        f"coalesce((SELECT {value} FROM (SELECT hex(sz) AS h FROM chunk_fts_docsize "
        f"WHERE id = {rowid})), 0)"
    )


def count_new_chunk(row: str = "NEW") -> str:
    """Statements counting a just-indexed chunk row (after its ``chunk_fts`` insert)."""
    access = ACCESS_SQL.format(row=row)
    return f"""
        INSERT INTO access_stats(access, chunks, tokens)
            SELECT {access}, 1, {tokens_sql(f"{row}.rowid")} WHERE {row}.node_type = 'text_chunk'
            ON CONFLICT (access) DO UPDATE SET chunks = chunks + 1,
                                               tokens = tokens + excluded.tokens;
        INSERT OR IGNORE INTO field_access(field, access) SELECT key, {access}
            FROM json_each({row}.metadata) WHERE {row}.node_type = 'text_chunk';
        INSERT INTO chunk_access(rowid, access) SELECT {row}.rowid, {access}
            WHERE {row}.node_type = 'text_chunk';
    """


def uncount_old_chunk() -> str:
    """Statements un-counting a chunk row (before its ``chunk_fts`` row is deleted)."""
    return f"""
        UPDATE access_stats SET chunks = chunks - 1, tokens = tokens - {tokens_sql("OLD.rowid")}
            WHERE access = {ACCESS_SQL.format(row="OLD")} AND OLD.node_type = 'text_chunk';
        DELETE FROM chunk_access WHERE rowid = OLD.rowid;
    """


def _count_relation(row: str, sign: str) -> str:
    access = ACCESS_SQL.format(row=row)
    is_link = f"{row}.relation_type IN ('PART_OF', 'MENTIONS', 'LINKS_TO')"
    title = f"({is_link} AND {row}.relation_type = 'PART_OF')"
    mention = f"({is_link} AND {row}.relation_type <> 'PART_OF')"
    return f"""
        INSERT INTO access_stats(access, relations) VALUES ({access}, {sign}1)
            ON CONFLICT (access) DO UPDATE SET relations = relations + excluded.relations;
        INSERT INTO name_access(uri, access, titles, mentions, edges)
            VALUES ({row}.target_uri, {access}, {sign}{title}, {sign}{mention}, {sign}1)
            ON CONFLICT (uri, access) DO UPDATE SET titles = titles + excluded.titles,
                mentions = mentions + excluded.mentions, edges = edges + excluded.edges;
        INSERT INTO name_access(uri, access, titles, mentions, edges)
            VALUES ({row}.source_uri, {access}, 0, 0, {sign}1)
            ON CONFLICT (uri, access) DO UPDATE SET edges = edges + excluded.edges;
    """


ACCESS_SCHEMA = (
    """
    CREATE TABLE access_stats (
        access TEXT PRIMARY KEY,
        chunks INTEGER NOT NULL DEFAULT 0,
        tokens INTEGER NOT NULL DEFAULT 0,
        relations INTEGER NOT NULL DEFAULT 0
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE name_access (
        uri TEXT NOT NULL,
        access TEXT NOT NULL,
        titles INTEGER NOT NULL DEFAULT 0,
        mentions INTEGER NOT NULL DEFAULT 0,
        edges INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (uri, access)
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE field_access (
        access TEXT NOT NULL,
        field TEXT NOT NULL,
        PRIMARY KEY (access, field)
    ) WITHOUT ROWID
    """,
    "CREATE TABLE chunk_access (rowid INTEGER PRIMARY KEY, access TEXT NOT NULL)",
    "CREATE VIRTUAL TABLE chunk_terms USING fts5vocab(chunk_fts, 'instance')",
    f"""
    CREATE TRIGGER relations_access_insert AFTER INSERT ON relations BEGIN
        {_count_relation("NEW", "")}
    END
    """,
    f"""
    CREATE TRIGGER relations_access_delete AFTER DELETE ON relations BEGIN
        {_count_relation("OLD", "-")}
    END
    """,
    f"""
    CREATE TRIGGER relations_access_update AFTER UPDATE OF metadata, relation_type ON relations
    BEGIN
        {_count_relation("OLD", "-")}
        {_count_relation("NEW", "")}
    END
    """,
)
"""Schema version 3 additions (the node triggers' counting lives in :mod:`._sqlite_index`)."""


def fill_access(conn: sqlite3.Connection) -> None:
    """Create the access tables of an older graph file and fill them from its rows."""
    for statement in ACCESS_SCHEMA:
        conn.execute(statement)
    access = ACCESS_SQL.format(row="n")
    conn.execute(
        f"INSERT INTO access_stats(access, chunks, tokens) SELECT {access}, count(*), "
        f"sum({tokens_sql('n.rowid')}) FROM nodes n WHERE n.node_type = 'text_chunk' "
        f"GROUP BY {access}"
    )
    conn.execute(
        f"INSERT INTO chunk_access(rowid, access) SELECT n.rowid, {access} FROM nodes n "
        "WHERE n.node_type = 'text_chunk'"
    )
    conn.execute(
        f"INSERT OR IGNORE INTO field_access(field, access) SELECT DISTINCT j.key, {access} "
        "FROM nodes n, json_each(n.metadata) j WHERE n.node_type = 'text_chunk'"
    )
    rel = ACCESS_SQL.format(row="r")
    conn.execute(
        f"INSERT INTO access_stats(access, relations) SELECT {rel}, count(*) FROM relations r "
        f"WHERE true GROUP BY {rel} ON CONFLICT (access) DO UPDATE SET "
        "relations = excluded.relations"
    )
    is_link = "r.relation_type IN ('PART_OF', 'MENTIONS', 'LINKS_TO')"
    conn.execute(
        "INSERT INTO name_access(uri, access, titles, mentions, edges) "
        f"SELECT uri, access, sum(t), sum(m), sum(e) FROM ("
        f"SELECT r.target_uri AS uri, {rel} AS access, ({is_link} AND "
        f"r.relation_type = 'PART_OF') AS t, ({is_link} AND r.relation_type <> 'PART_OF') AS m, "
        f"1 AS e FROM relations r UNION ALL SELECT r.source_uri, {rel}, 0, 0, 1 FROM relations r"
        ") GROUP BY uri, access"
    )
