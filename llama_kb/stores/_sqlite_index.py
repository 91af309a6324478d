"""The search indexes inside the SQLite graph file, kept in step by every write.

* ``chunk_fts``: FTS5 full-text index over chunk nodes (title + text), maintained by triggers;
* ``name_fts``: FTS5 trigram index over names (fuzzy linking), maintained by triggers;
* ``name_stats``: chunks per name by relation kind, maintained by triggers on ``relations``;
* ``chunk_fields``: the metadata fields chunks have (filter validation), by trigger;
* ``name_keys`` / ``fact_keys``: folded spellings of names and of fact ends, written with the
  nodes in the same transaction (folding needs Python), deleted with them by cascade;
* expression indexes on ``doc_id`` and ``chunk_id`` for deletes and fact lookups by source.

:func:`chunk_df` and :func:`name_gram_df` read the full-text indexes' own counts (``fts5vocab``).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence

from llama_kb.names import fold, matchable_forms, name_key
from llama_kb.stores._sqlite_access import count_new_chunk, fill_access, uncount_old_chunk

CHUNK_LABEL = "text_chunk"
FACT_LABEL = "fact"
INDEXED_KEYS = ("doc_id", "chunk_id")
"""Metadata keys with an expression index: lookups and deletes by them use it."""

_CHUNK_BODY = (
    "coalesce(json_extract({row}.metadata, '$.title') || ' ', '') || coalesce({row}.content, '')"
)
_IS_NAME = "{row}.node_type NOT IN ('text_chunk', 'fact') AND {row}.name IS NOT NULL"

_INDEX_NEW_ROW = f"""
        INSERT INTO chunk_fts(rowid, body) SELECT NEW.rowid, {_CHUNK_BODY.format(row="NEW")}
            WHERE NEW.node_type = 'text_chunk';
        INSERT OR IGNORE INTO chunk_fields(field) SELECT key FROM json_each(NEW.metadata)
            WHERE NEW.node_type = 'text_chunk';
        INSERT INTO name_fts(rowid, name) SELECT NEW.rowid, NEW.name
            WHERE {_IS_NAME.format(row="NEW")};
        UPDATE meta SET value = value + 1 WHERE key = 'chunks' AND NEW.node_type = 'text_chunk';
        {count_new_chunk()}
"""
_UNINDEX_OLD_ROW = f"""
        {uncount_old_chunk()}
        DELETE FROM chunk_fts WHERE rowid = OLD.rowid;
        DELETE FROM name_fts WHERE rowid = OLD.rowid;
        UPDATE meta SET value = value - 1 WHERE key = 'chunks' AND OLD.node_type = 'text_chunk';
"""

NODE_TRIGGERS = (
    f"CREATE TRIGGER nodes_index_insert AFTER INSERT ON nodes BEGIN {_INDEX_NEW_ROW} END",
    f"CREATE TRIGGER nodes_index_delete AFTER DELETE ON nodes BEGIN {_UNINDEX_OLD_ROW} END",
    f"""
    CREATE TRIGGER nodes_index_update AFTER UPDATE OF node_type, name, content, metadata ON nodes
    BEGIN {_UNINDEX_OLD_ROW} {_INDEX_NEW_ROW} END
    """,
)

SEARCH_SCHEMA = (
    "INSERT OR IGNORE INTO meta(key, value) VALUES ('chunks', 0)",
    "CREATE VIRTUAL TABLE chunk_fts USING fts5(body, tokenize = 'unicode61 remove_diacritics 2')",
    "CREATE VIRTUAL TABLE name_fts USING fts5(name, tokenize = 'trigram')",
    "CREATE VIRTUAL TABLE chunk_vocab USING fts5vocab(chunk_fts, 'row')",
    *NODE_TRIGGERS,
    "CREATE TABLE chunk_fields (field TEXT PRIMARY KEY) WITHOUT ROWID",
    """
    CREATE TABLE name_stats (
        uri TEXT PRIMARY KEY,
        titles INTEGER NOT NULL DEFAULT 0,
        mentions INTEGER NOT NULL DEFAULT 0
    ) WITHOUT ROWID
    """,
    """
    CREATE TRIGGER relations_stats_insert AFTER INSERT ON relations
    WHEN NEW.relation_type IN ('PART_OF', 'MENTIONS', 'LINKS_TO') BEGIN
        INSERT INTO name_stats(uri, titles, mentions)
            VALUES (NEW.target_uri, NEW.relation_type = 'PART_OF', NEW.relation_type <> 'PART_OF')
            ON CONFLICT (uri) DO UPDATE SET titles = titles + excluded.titles,
                                            mentions = mentions + excluded.mentions;
    END
    """,
    """
    CREATE TRIGGER relations_stats_delete AFTER DELETE ON relations
    WHEN OLD.relation_type IN ('PART_OF', 'MENTIONS', 'LINKS_TO') BEGIN
        UPDATE name_stats SET titles = titles - (OLD.relation_type = 'PART_OF'),
                              mentions = mentions - (OLD.relation_type <> 'PART_OF')
            WHERE uri = OLD.target_uri;
    END
    """,
    """
    CREATE TABLE name_keys (
        key TEXT NOT NULL,
        uri TEXT NOT NULL REFERENCES nodes(uri) ON DELETE CASCADE,
        exact TEXT,
        label TEXT NOT NULL,
        PRIMARY KEY (key, uri)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX idx_name_keys_uri ON name_keys(uri)",
    """
    CREATE TABLE fact_keys (
        key TEXT NOT NULL,
        uri TEXT NOT NULL REFERENCES nodes(uri) ON DELETE CASCADE,
        ends TEXT NOT NULL,
        PRIMARY KEY (key, uri)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX idx_fact_keys_uri ON fact_keys(uri)",
    "CREATE INDEX idx_nodes_doc_id ON nodes(json_extract(metadata, '$.doc_id'))",
    "CREATE INDEX idx_nodes_chunk_id ON nodes(json_extract(metadata, '$.chunk_id'))",
    "CREATE INDEX idx_relations_target_type ON relations(target_uri, relation_type)",
    "CREATE INDEX idx_relations_source_weight ON relations(source_uri, weight)",
    "CREATE INDEX idx_relations_target_weight ON relations(target_uri, weight)",
)
"""Schema version 2 additions (version 1 files are upgraded by :func:`upgrade`)."""


NAME_VOCAB = "CREATE VIRTUAL TABLE name_vocab USING fts5vocab(name_fts, 'row')"
"""Schema version 4: how many names hold each trigram (fuzzy linking keeps the rarest)."""


def chunk_df(conn: sqlite3.Connection, word: str) -> int:
    """Chunks holding ``word`` in the whole full-text index."""
    row = conn.execute("SELECT doc FROM chunk_vocab WHERE term = ?", [word]).fetchone()
    return int(row[0]) if row else 0


def name_gram_df(conn: sqlite3.Connection, gram: str) -> int:
    """Names holding the trigram ``gram`` (FTS5's trigram tokens are lower case)."""
    row = conn.execute("SELECT doc FROM name_vocab WHERE term = ?", [gram.lower()]).fetchone()
    return int(row[0]) if row else 0


def upgrade(conn: sqlite3.Connection, version: int) -> None:
    """Bring a version-1, -2 or -3 graph file to the current schema, filling the new
    indexes from its rows."""
    if version < 3:
        _upgrade_to_3(conn, version)
    conn.execute(NAME_VOCAB)


def _upgrade_to_3(conn: sqlite3.Connection, version: int) -> None:
    if version >= 2:
        conn.execute(
            "INSERT OR REPLACE INTO meta(key, value) SELECT 'chunks', count(*) FROM nodes "
            "WHERE node_type = 'text_chunk'"
        )
        for name in ("insert", "delete", "update"):
            conn.execute(f"DROP TRIGGER nodes_index_{name}")
        for statement in NODE_TRIGGERS:
            conn.execute(statement)
        fill_access(conn)
        return
    conn.execute("DROP INDEX IF EXISTS idx_relations_target")
    for statement in SEARCH_SCHEMA:
        conn.execute(statement)
    conn.execute(
        f"INSERT INTO chunk_fts(rowid, body) SELECT rowid, {_CHUNK_BODY.format(row='nodes')} "
        "FROM nodes WHERE node_type = 'text_chunk'"
    )
    conn.execute(
        "UPDATE meta SET value = (SELECT count(*) FROM nodes WHERE node_type = 'text_chunk') "
        "WHERE key = 'chunks'"
    )
    conn.execute(
        "INSERT OR IGNORE INTO chunk_fields(field) SELECT DISTINCT j.key FROM nodes, "
        "json_each(nodes.metadata) j WHERE nodes.node_type = 'text_chunk'"
    )
    conn.execute(
        f"INSERT INTO name_fts(rowid, name) SELECT rowid, name FROM nodes "
        f"WHERE {_IS_NAME.format(row='nodes')}"
    )
    conn.execute(
        "INSERT INTO name_stats(uri, titles, mentions) SELECT target_uri, "
        "sum(relation_type = 'PART_OF'), sum(relation_type <> 'PART_OF') FROM relations "
        "WHERE relation_type IN ('PART_OF', 'MENTIONS', 'LINKS_TO') GROUP BY target_uri"
    )
    rows = conn.execute("SELECT uri, node_type, name, metadata FROM nodes").fetchall()
    write_keys(conn, [(uri, label, name, _json(meta)) for uri, label, name, meta in rows])
    fill_access(conn)


def write_keys(
    conn: sqlite3.Connection,
    nodes: Sequence[tuple[str, str, str | None, dict]],
) -> None:
    """Bring the name and fact keys of ``(uri, label, name, properties)`` nodes up to date.

    Rows that are already right are left alone, so rewriting an unchanged node changes
    nothing (and does not move the revision).
    """
    name_rows = {n[0]: list(_name_rows(*n)) for n in nodes}
    fact_rows = {n[0]: list(_fact_rows(*n)) for n in nodes}
    conn.executemany(
        "DELETE FROM name_keys WHERE uri = ? AND key NOT IN (SELECT value FROM json_each(?))",
        [(uri, json.dumps([r[0] for r in rows])) for uri, rows in name_rows.items()],
    )
    conn.executemany(
        "DELETE FROM fact_keys WHERE uri = ? AND key NOT IN (SELECT value FROM json_each(?))",
        [(uri, json.dumps([r[0] for r in rows])) for uri, rows in fact_rows.items()],
    )
    conn.executemany(
        "INSERT INTO name_keys(key, uri, exact, label) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (key, uri) DO UPDATE SET exact = excluded.exact, label = excluded.label "
        "WHERE exact IS NOT excluded.exact OR label IS NOT excluded.label",
        [row for rows in name_rows.values() for row in rows],
    )
    conn.executemany(
        "INSERT INTO fact_keys(key, uri, ends) VALUES (?, ?, ?) "
        "ON CONFLICT (key, uri) DO UPDATE SET ends = excluded.ends WHERE ends <> excluded.ends",
        [row for rows in fact_rows.values() for row in rows],
    )


def _name_rows(
    uri: str, label: str, name: str | None, properties: dict
) -> Iterable[tuple[str, str, str | None, str]]:
    """Rows as :class:`~llama_kb.names.NameMatcher` registers a name."""
    if label in (CHUNK_LABEL, FACT_LABEL) or not name:
        return
    for words in matchable_forms(name):
        key = "-".join(fold(w) for w in words)
        yield key, uri, words[0] if len(words) == 1 else None, label


def _fact_rows(
    uri: str, label: str, name: str | None, properties: dict
) -> Iterable[tuple[str, str, str]]:
    """``(key, uri, ends)``: the name key of each end, ``ends`` saying which (``subject``,
    ``object`` or ``both``)."""
    if label != FACT_LABEL:
        return
    keys: dict[str, list[str]] = {}
    for end in ("subject", "object"):
        value = properties.get(end)
        if isinstance(value, str) and (key := name_key(value)):
            keys.setdefault(key, []).append(end)
    for key, ends in keys.items():
        yield key, uri, ends[0] if len(ends) == 1 else "both"


def _json(text: str) -> dict:
    value = json.loads(text or "{}")
    return value if isinstance(value, dict) else {}
