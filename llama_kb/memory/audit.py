"""The memory audit trail and piece provenance, in ``<kb>/memory.sqlite``.

* ``memory_audit``: one row per decision ``remember`` took (added, existing, merged,
  contradiction): which conversation, which piece, the content before and after, why.
* ``memory_provenance``: which conversation and messages each remembered piece comes from;
  a merge adds the new conversation's row beside the old ones, so both sources stay.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path

from llama_kb.errors import BackendError
from llama_kb.knowledge.writes import iso, now

MEMORY_DB = "memory.sqlite"
"""File name of the audit database inside the knowledge base directory."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS memory_audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    action TEXT NOT NULL,
    piece_id TEXT NOT NULL,
    related_piece_id TEXT,
    access TEXT NOT NULL,
    before TEXT,
    after TEXT,
    reason TEXT NOT NULL,
    model TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS memory_provenance (
    piece_id TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    message_ids JSON NOT NULL,
    at TEXT NOT NULL,
    PRIMARY KEY (piece_id, conversation_id)
);
"""


@dataclass(frozen=True)
class AuditRecord:
    """One decision of ``remember``.

    Attributes:
        conversation_id: The conversation it came from.
        action: ``added``, ``existing``, ``merged`` or ``contradiction``.
        piece_id: The piece written or found.
        related_piece_id: The stored piece it contradicts (``contradiction``).
        access: The access key of the piece.
        before: Its content before (``merged``; the contradicted content for ``contradiction``).
        after: Its content after.
        reason: Why (the LLM's reason, or the rule that decided).
        model: The LLM that decided.
        at: When (UTC, ISO 8601).
    """

    conversation_id: str
    action: str
    piece_id: str
    related_piece_id: str | None
    access: str
    before: str | None
    after: str | None
    reason: str
    model: str
    at: str = ""


@dataclass(frozen=True)
class Provenance:
    """Where a piece comes from: one conversation and its messages."""

    conversation_id: str
    message_ids: tuple[str, ...]
    at: str


class MemoryAudit:
    """The audit trail and provenance of remembered pieces; close it (``contextlib.closing``).

    Args:
        root: The knowledge base directory.
    """

    def __init__(self, root: Path) -> None:
        self.path = Path(root).expanduser() / MEMORY_DB
        self._lock = threading.RLock()
        try:
            self._conn = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30.0)
            self._conn.executescript(_SCHEMA)
        except sqlite3.Error as e:
            raise BackendError(f"cannot open the memory audit store {self.path}: {e}") from e

    def record(self, record: AuditRecord) -> AuditRecord:
        """Append ``record`` (stamped now) and return it stamped."""
        stamped = AuditRecord(**{**record.__dict__, "at": iso(now())})
        with self._lock, self._conn:
            self._conn.execute(
                "INSERT INTO memory_audit (at, conversation_id, action, piece_id, "
                "related_piece_id, access, before, after, reason, model) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    stamped.at,
                    stamped.conversation_id,
                    stamped.action,
                    stamped.piece_id,
                    stamped.related_piece_id,
                    stamped.access,
                    stamped.before,
                    stamped.after,
                    stamped.reason,
                    stamped.model,
                ),
            )
        return stamped

    def records(self, conversation_id: str | None = None) -> list[AuditRecord]:
        """The audit trail in order, optionally of one conversation."""
        sql = (
            "SELECT conversation_id, action, piece_id, related_piece_id, access, before, after, "
            "reason, model, at FROM memory_audit"
        )
        args: tuple[str, ...] = ()
        if conversation_id is not None:
            sql, args = sql + " WHERE conversation_id = ?", (conversation_id,)
        with self._lock:
            rows = self._conn.execute(sql + " ORDER BY seq", args).fetchall()
        return [AuditRecord(*row) for row in rows]

    def add_provenance(
        self, piece_id: str, conversation_id: str, message_ids: tuple[str, ...]
    ) -> None:
        """Record that ``piece_id`` comes (also) from these messages of a conversation."""
        with self._lock, self._conn:
            row = self._conn.execute(
                "SELECT message_ids FROM memory_provenance WHERE piece_id = ? AND "
                "conversation_id = ?",
                (piece_id, conversation_id),
            ).fetchone()
            known = json.loads(row[0]) if row else []
            ids = list(dict.fromkeys([*known, *message_ids]))
            self._conn.execute(
                "INSERT OR REPLACE INTO memory_provenance VALUES (?, ?, ?, ?)",
                (piece_id, conversation_id, json.dumps(ids), iso(now())),
            )

    def provenance(self, piece_id: str) -> list[Provenance]:
        """Every conversation ``piece_id`` comes from, oldest first."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT conversation_id, message_ids, at FROM memory_provenance "
                "WHERE piece_id = ? ORDER BY at, rowid",
                (piece_id,),
            ).fetchall()
        return [Provenance(c, tuple(json.loads(m)), at) for c, m, at in rows]

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._conn.close()
