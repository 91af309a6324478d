"""Commits and history for the agent graph, kept in their own SQLite file.

Every write to the agent graph is one commit: who made it, why, and for each node or relation
it touched the state before and after (``None`` for "did not exist"). That is enough to list
history and to revert a commit by writing the ``before`` states back.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from llama_kb.errors import QueryError

ChangeKind = Literal["node", "relation"]

_SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS commits (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        workspace TEXT NOT NULL,
        author TEXT NOT NULL,
        message TEXT NOT NULL,
        created_at REAL NOT NULL,
        reverts INTEGER REFERENCES commits(id),
        reverted_by INTEGER REFERENCES commits(id)
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS changes (
        commit_id INTEGER NOT NULL REFERENCES commits(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('node', 'relation')),
        key TEXT NOT NULL,
        before JSON,
        after JSON,
        PRIMARY KEY (commit_id, seq)
    )
    """,
    "CREATE INDEX IF NOT EXISTS idx_commits_workspace ON commits(workspace, id)",
)


@dataclass(frozen=True)
class Change:
    """One node or relation a commit touched; ``before``/``after`` are ``None`` when absent."""

    kind: ChangeKind
    key: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None

    @property
    def action(self) -> str:
        """``added``, ``changed`` or ``removed``."""
        if self.before is None:
            return "added"
        return "removed" if self.after is None else "changed"


@dataclass(frozen=True)
class Commit:
    """A recorded write to the agent graph."""

    id: int
    workspace: str
    author: str
    message: str
    created_at: float
    reverts: int | None = None
    reverted_by: int | None = None
    changes: list[Change] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """JSON-ready view: metadata plus the keys added / changed / removed, by kind."""
        out: dict[str, Any] = {
            "id": self.id,
            "workspace": self.workspace,
            "author": self.author,
            "message": self.message,
            "created_at": self.created_at,
            "reverts": self.reverts,
            "reverted_by": self.reverted_by,
        }
        for kind in ("node", "relation"):
            for action in ("added", "changed", "removed"):
                out[f"{kind}s_{action}"] = [
                    c.key for c in self.changes if c.kind == kind and c.action == action
                ]
        return out


class CommitLog:
    """History of agent-graph writes in an SQLite file (created on first use).

    Args:
        path: The SQLite file, e.g. ``<kb>/agent_commits.sqlite``.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA foreign_keys = ON")
        self._conn.execute("PRAGMA journal_mode = WAL")
        with self._tx() as conn:
            for statement in _SCHEMA:
                conn.execute(statement)

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._conn.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def record(
        self,
        workspace: str,
        author: str,
        message: str,
        changes: list[Change],
        reverts: int | None = None,
    ) -> Commit:
        """Store a commit (and mark the commit it reverts); returns it with its id."""
        now = time.time()
        with self._tx() as conn:
            cur = conn.execute(
                "INSERT INTO commits (workspace, author, message, created_at, reverts) "
                "VALUES (?, ?, ?, ?, ?)",
                [workspace, author, message, now, reverts],
            )
            commit_id = int(cur.lastrowid or 0)
            conn.executemany(
                "INSERT INTO changes (commit_id, seq, kind, key, before, after) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (commit_id, seq, c.kind, c.key, _dump(c.before), _dump(c.after))
                    for seq, c in enumerate(changes)
                ],
            )
            if reverts is not None:
                conn.execute(
                    "UPDATE commits SET reverted_by = ? WHERE id = ?", [commit_id, reverts]
                )
        return Commit(commit_id, workspace, author, message, now, reverts, None, list(changes))

    def get(self, commit_id: int) -> Commit:
        """The commit with its changes.

        Raises:
            QueryError: No such commit.
        """
        with self._lock:
            row = self._conn.execute(
                "SELECT id, workspace, author, message, created_at, reverts, reverted_by "
                "FROM commits WHERE id = ?",
                [commit_id],
            ).fetchone()
            if row is None:
                raise QueryError(f"there is no commit {commit_id}; list commits with `history`")
            changes = self._changes(self._conn, [commit_id])[commit_id]
        return _commit(row, changes)

    def history(self, workspace: str | None = None, limit: int = 20) -> list[Commit]:
        """The most recent commits first (of ``workspace`` when given)."""
        sql = "SELECT id, workspace, author, message, created_at, reverts, reverted_by FROM commits"
        params: list[Any] = []
        if workspace is not None:
            sql += " WHERE workspace = ?"
            params.append(workspace)
        sql += " ORDER BY id DESC LIMIT ?"
        params.append(limit)
        with self._lock:
            rows = self._conn.execute(sql, params).fetchall()
            changes = self._changes(self._conn, [r[0] for r in rows])
        return [_commit(row, changes[row[0]]) for row in rows]

    def later_changes(self, commit_id: int, keys: set[str]) -> dict[str, int]:
        """For each of ``keys`` changed by a commit after ``commit_id``: the latest such commit."""
        found: dict[str, int] = {}
        with self._lock:
            for key, later in self._conn.execute(
                "SELECT key, max(commit_id) FROM changes WHERE commit_id > ? GROUP BY key",
                [commit_id],
            ):
                if key in keys:
                    found[key] = int(later)
        return found

    @staticmethod
    def _changes(conn: sqlite3.Connection, ids: list[int]) -> dict[int, list[Change]]:
        out: dict[int, list[Change]] = {i: [] for i in ids}
        for i in ids:
            for kind, key, before, after in conn.execute(
                "SELECT kind, key, before, after FROM changes WHERE commit_id = ? ORDER BY seq",
                [i],
            ):
                out[i].append(Change(kind, key, _load(before), _load(after)))
        return out


def _commit(row: tuple[Any, ...], changes: list[Change]) -> Commit:
    commit_id, workspace, author, message, created_at, reverts, reverted_by = row
    return Commit(commit_id, workspace, author, message, created_at, reverts, reverted_by, changes)


def _dump(state: dict[str, Any] | None) -> str | None:
    return None if state is None else json.dumps(state, sort_keys=True, ensure_ascii=False)


def _load(text: str | None) -> dict[str, Any] | None:
    return None if text is None else json.loads(text)
