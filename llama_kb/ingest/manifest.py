"""What has been ingested: source files and the documents they produced.

The manifest makes ingestion incremental and crash-safe. A document is marked
``pending`` (committed) before its old chunks are touched and ``ready`` only after
its new chunks are stored everywhere, so a run killed half-way leaves ``pending``
rows that the next run redoes from scratch.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sources (
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    ingested_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT PRIMARY KEY,
    source_path TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    title TEXT,
    chunk_count INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL CHECK (status IN ('pending', 'ready')),
    updated_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS documents_by_source ON documents(source_path);
CREATE TABLE IF NOT EXISTS flags (
    name TEXT PRIMARY KEY
);
"""


@dataclass(frozen=True)
class SourceRecord:
    """A source file as last ingested."""

    path: str
    size: int
    mtime_ns: int
    sha256: str


@dataclass(frozen=True)
class DocumentRecord:
    """A document as last ingested."""

    doc_id: str
    source_path: str
    content_hash: str
    title: str | None
    chunk_count: int
    status: str


class Manifest:
    """SQLite-backed record of ingested sources and documents."""

    def __init__(self, path: Path) -> None:
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(str(path), check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.executescript(_SCHEMA)

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._conn.close()

    def source(self, path: str) -> SourceRecord | None:
        """The record for ``path``, if it was ingested."""
        with self._lock:
            row = self._conn.execute(
                "SELECT path, size, mtime_ns, sha256 FROM sources WHERE path = ?", (path,)
            ).fetchone()
        return SourceRecord(*row) if row else None

    def sources(self) -> list[SourceRecord]:
        """Every ingested source."""
        with self._lock:
            rows = self._conn.execute("SELECT path, size, mtime_ns, sha256 FROM sources").fetchall()
        return [SourceRecord(*r) for r in rows]

    def put_source(self, record: SourceRecord) -> None:
        """Record that ``record.path`` is fully ingested at this size, time and hash."""
        with self._lock, self._conn:
            self._conn.execute(
                "INSERT INTO sources(path, size, mtime_ns, sha256, ingested_at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET size=excluded.size, "
                "mtime_ns=excluded.mtime_ns, sha256=excluded.sha256, "
                "ingested_at=excluded.ingested_at",
                (record.path, record.size, record.mtime_ns, record.sha256, time.time()),
            )

    def delete_source(self, path: str) -> None:
        """Forget a source (its documents must be deleted separately)."""
        with self._lock, self._conn:
            self._conn.execute("DELETE FROM sources WHERE path = ?", (path,))

    def documents(self, source_path: str | None = None) -> list[DocumentRecord]:
        """Documents of one source, or all documents."""
        sql = "SELECT doc_id, source_path, content_hash, title, chunk_count, status FROM documents"
        args: tuple[str, ...] = ()
        if source_path is not None:
            sql += " WHERE source_path = ?"
            args = (source_path,)
        with self._lock:
            rows = self._conn.execute(sql + " ORDER BY doc_id", args).fetchall()
        return [DocumentRecord(*r) for r in rows]

    def documents_by_id(self, doc_ids: Iterable[str]) -> dict[str, DocumentRecord]:
        """Records of those ``doc_ids`` that exist."""
        ids = list(doc_ids)
        found: dict[str, DocumentRecord] = {}
        with self._lock:
            for start in range(0, len(ids), 500):
                part = ids[start : start + 500]
                marks = ",".join("?" * len(part))
                rows = self._conn.execute(
                    "SELECT doc_id, source_path, content_hash, title, chunk_count, status "
                    f"FROM documents WHERE doc_id IN ({marks})",
                    part,
                ).fetchall()
                found.update((r[0], DocumentRecord(*r)) for r in rows)
        return found

    def pending_sources(self) -> set[str]:
        """Sources with a document left ``pending`` by an interrupted run."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT DISTINCT source_path FROM documents WHERE status = 'pending'"
            ).fetchall()
        return {r[0] for r in rows}

    def mark_pending(self, docs: Sequence[tuple[str, str, str | None]]) -> None:
        """Mark ``(doc_id, source_path, title)`` as being rewritten."""
        now = time.time()
        with self._lock, self._conn:
            self._conn.executemany(
                "INSERT INTO documents(doc_id, source_path, content_hash, title, status, "
                "updated_at) VALUES (?, ?, '', ?, 'pending', ?) ON CONFLICT(doc_id) DO UPDATE "
                "SET source_path=excluded.source_path, status='pending', "
                "updated_at=excluded.updated_at",
                [(d, s, t, now) for d, s, t in docs],
            )

    def mark_ready(self, docs: Sequence[tuple[str, str, int]]) -> None:
        """Mark ``(doc_id, content_hash, chunk_count)`` as fully stored."""
        now = time.time()
        with self._lock, self._conn:
            self._conn.executemany(
                "UPDATE documents SET content_hash=?, chunk_count=?, status='ready', "
                "updated_at=? WHERE doc_id=?",
                [(h, n, now, d) for d, h, n in docs],
            )

    def mark_removing(self, doc_ids: Sequence[str]) -> None:
        """Mark documents ``pending`` before their content is deleted (a killed removal is
        then finished, or redone, by the next run)."""
        with self._lock, self._conn:
            self._conn.executemany(
                "UPDATE documents SET status='pending' WHERE doc_id = ?", [(d,) for d in doc_ids]
            )

    def delete_documents(self, doc_ids: Sequence[str]) -> None:
        """Forget documents."""
        with self._lock, self._conn:
            self._conn.executemany(
                "DELETE FROM documents WHERE doc_id = ?", [(d,) for d in doc_ids]
            )

    def flag(self, name: str) -> bool:
        """Whether the persistent flag ``name`` is set."""
        with self._lock:
            row = self._conn.execute("SELECT 1 FROM flags WHERE name = ?", (name,)).fetchone()
        return row is not None

    def set_flag(self, name: str, value: bool) -> None:
        """Set or clear the persistent flag ``name``."""
        with self._lock, self._conn:
            if value:
                self._conn.execute("INSERT OR IGNORE INTO flags(name) VALUES (?)", (name,))
            else:
                self._conn.execute("DELETE FROM flags WHERE name = ?", (name,))

    def counts(self) -> dict[str, int]:
        """Numbers of sources, documents and chunks."""
        with self._lock:
            sources = self._conn.execute("SELECT COUNT(*) FROM sources").fetchone()[0]
            docs, chunks = self._conn.execute(
                "SELECT COUNT(*), COALESCE(SUM(chunk_count), 0) FROM documents"
            ).fetchone()
        return {"sources": sources, "documents": docs, "chunks": chunks}
