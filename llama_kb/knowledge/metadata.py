"""Layer 1: entity metadata (profiles) in SQLite, one namespace per ``entity_type``."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

from llama_kb.errors import BackendError
from llama_kb.knowledge.model import EntityMetadata, stable_hash
from llama_kb.knowledge.writes import WriteStatus, iso, now

KNOWLEDGE_DB = "knowledge.sqlite"
"""File name of the metadata database inside the knowledge base directory."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entity_metadata (
    entity_id TEXT PRIMARY KEY,
    entity_type TEXT NOT NULL,
    properties JSON NOT NULL,
    content_hash TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS entity_metadata_by_type ON entity_metadata(entity_type);
"""


class MetadataStore:
    """Entity profiles in SQLite, namespaced by ``entity_type``.

    Args:
        path: The SQLite file (created if missing).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.RLock()
        try:
            self._conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30.0)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.executescript(_SCHEMA)
            columns = {r[1] for r in self._conn.execute("PRAGMA table_info(entity_metadata)")}
            if "access" not in columns:  # stores from before access scopes: public
                self._conn.execute("ALTER TABLE entity_metadata ADD COLUMN access TEXT")
        except sqlite3.Error as e:
            raise BackendError(f"cannot open the knowledge metadata store {path}: {e}") from e

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._conn.close()

    def put(self, metadata: EntityMetadata) -> WriteStatus:
        """Insert or update one entity's metadata in a single transaction."""
        digest = stable_hash(metadata.model_dump(mode="json"))
        stamp = iso(now())
        with self._lock, self._conn:
            row = self._conn.execute(
                "SELECT content_hash FROM entity_metadata WHERE entity_id = ?",
                (metadata.entity_id,),
            ).fetchone()
            if row is not None and row[0] == digest:
                return WriteStatus.UNCHANGED
            self._conn.execute(
                "INSERT INTO entity_metadata(entity_id, entity_type, properties, access, "
                "content_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(entity_id) DO UPDATE SET entity_type=excluded.entity_type, "
                "properties=excluded.properties, access=excluded.access, "
                "content_hash=excluded.content_hash, updated_at=excluded.updated_at",
                (
                    metadata.entity_id,
                    metadata.entity_type,
                    json.dumps(metadata.properties, sort_keys=True, ensure_ascii=False),
                    metadata.permissions,
                    digest,
                    stamp,
                    stamp,
                ),
            )
        return WriteStatus.ADDED if row is None else WriteStatus.UPDATED

    def get(self, entity_id: str) -> EntityMetadata | None:
        """The metadata of ``entity_id``, if stored."""
        with self._lock:
            row = self._conn.execute(
                "SELECT entity_id, entity_type, properties, access FROM entity_metadata "
                "WHERE entity_id = ?",
                (entity_id,),
            ).fetchone()
        return _metadata(row) if row else None

    def entities(self, entity_type: str | None = None) -> list[EntityMetadata]:
        """Every stored entity (of ``entity_type``), sorted by id."""
        sql = "SELECT entity_id, entity_type, properties, access FROM entity_metadata"
        args: tuple[str, ...] = ()
        if entity_type is not None:
            sql += " WHERE entity_type = ?"
            args = (entity_type,)
        with self._lock:
            rows = self._conn.execute(sql + " ORDER BY entity_id", args).fetchall()
        return [_metadata(r) for r in rows]


def _metadata(row: tuple[str, str, str, str | None]) -> EntityMetadata:
    return EntityMetadata(
        entity_id=row[0], entity_type=row[1], properties=json.loads(row[2]), permissions=row[3]
    )
