"""The SQLite graph store's file: schema, connection, locking and transactions.

:class:`SQLiteDatabase` owns the ``sqlite3`` connections a
:class:`~llama_kb.stores.sqlite_graph.SQLitePropertyGraphStore` shares between threads. Each
write is one ``BEGIN IMMEDIATE`` transaction on the main connection, under its lock, that bumps
the ``revision`` counter in the ``meta`` table when it changed rows. Reads take a read-only
connection from a small pool: in WAL mode they run beside each other and beside a write
(seeing the last committed state), so a query never waits for an ingest's transaction, and a
query's threads (dense, lexical, facts) read at once. An in-memory database, and a read inside
the calling thread's own write transaction, use the main connection. Each time the rows this
connection changed double (from 1,000), the query planner's statistics are refreshed
(``ANALYZE``, sampled: ``analysis_limit``): a process that ingested a corpus into an empty file
otherwise went on planning its queries for the empty tables and read the graph about 4x
slower than a fresh process. A connection reads those statistics when it first reads the
schema, so the read connections opened before a refresh are closed and replaced: kept, they
planned the walk's reads for the small tables they had seen (5-7x slower graph stages after
an ingest in the same process than in a new one).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from llama_kb.errors import BackendError
from llama_kb.stores._sqlite_access import ACCESS_SCHEMA
from llama_kb.stores._sqlite_index import NAME_VOCAB, SEARCH_SCHEMA, upgrade

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 4
"""Stored in ``PRAGMA user_version``; bumped whenever the table layout changes."""


_SCHEMA = (
    """
    CREATE TABLE nodes (
        uri TEXT PRIMARY KEY,
        node_type TEXT NOT NULL,
        name TEXT,
        name_ci TEXT,
        content TEXT,
        metadata JSON NOT NULL DEFAULT '{}' CHECK (json_valid(metadata)),
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )
    """,
    "CREATE INDEX idx_nodes_node_type ON nodes(node_type)",
    "CREATE INDEX idx_nodes_name ON nodes(name)",
    "CREATE INDEX idx_nodes_name_ci ON nodes(name_ci)",
    # The UNIQUE constraint's index starts with source_uri, so it also serves lookups by source.
    """
    CREATE TABLE relations (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        source_uri TEXT NOT NULL,
        target_uri TEXT NOT NULL,
        relation_type TEXT NOT NULL,
        weight REAL NOT NULL DEFAULT 1.0 CHECK (weight BETWEEN 0 AND 1),
        metadata JSON NOT NULL DEFAULT '{}' CHECK (json_valid(metadata)),
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        FOREIGN KEY (source_uri) REFERENCES nodes(uri) ON DELETE CASCADE,
        FOREIGN KEY (target_uri) REFERENCES nodes(uri) ON DELETE CASCADE,
        UNIQUE (source_uri, target_uri, relation_type)
    )
    """,
    "CREATE INDEX idx_relations_type ON relations(relation_type)",
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID",
    "INSERT INTO meta(key, value) VALUES ('revision', 0)",
    *SEARCH_SCHEMA,
    *ACCESS_SCHEMA,
    NAME_VOCAB,
    f"PRAGMA user_version = {SCHEMA_VERSION}",
)


ANALYSIS_LIMIT = 1000
"""Rows ``ANALYZE`` samples per index: approximate statistics at a bounded cost."""
FIRST_ANALYZE = 1000
"""Rows changed through one connection before its first statistics refresh."""
IDLE_READERS = 4
"""Read connections kept open between reads (more open while more threads read at once)."""


class SQLiteDatabase:
    """One SQLite graph file, opened (and its schema created or checked) on construction.

    Args:
        path: The database file, created (with its parent directories) if missing, or
            ``":memory:"``.
        timeout: Seconds to wait for another process's write lock before failing.

    Raises:
        BackendError: The file is not an SQLite database, belongs to another application, or
            was written by a newer llama-kb.
    """

    def __init__(self, path: str | Path, *, timeout: float = 30.0) -> None:
        self._path = str(path)
        self._timeout = timeout
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._writer: int | None = None
        """The thread inside a write transaction, if any."""
        self._pool_lock = threading.Lock()
        self._idle: list[sqlite3.Connection] = []
        self._statistics = 0
        """Counts statistics refreshes: a reader opened before the last one is not kept."""
        self._next_analyze = FIRST_ANALYZE
        if self._path != ":memory:":
            Path(self._path).parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = sqlite3.connect(
                self._path, timeout=timeout, check_same_thread=False, isolation_level=None
            )
        except sqlite3.Error as e:
            raise BackendError(f"Cannot open the SQLite graph store at {self._path}: {e}") from e
        try:
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute(f"PRAGMA analysis_limit = {ANALYSIS_LIMIT}")
            self._conn = conn
            self._ensure_schema()
        except BaseException as e:
            conn.close()
            self._conn = None
            if isinstance(e, sqlite3.DatabaseError):
                raise BackendError(
                    f"{self._path} is not a usable SQLite database ({e}). "
                    "Point the graph store at a new file or at one llama-kb created."
                ) from e
            raise
        logger.debug("opened SQLite graph store %s", self._path)

    @property
    def path(self) -> str:
        """The database file (or ``":memory:"``)."""
        return self._path

    @property
    def closed(self) -> bool:
        """True once :meth:`close` has been called."""
        return self._conn is None

    def close(self) -> None:
        """Close the database connection; further calls raise :class:`BackendError`."""
        with self._lock:
            if self._conn is not None:
                self._refresh_statistics(self._conn, "PRAGMA optimize")
                with self._pool_lock:
                    for reader in self._idle:
                        reader.close()
                    self._idle.clear()
                    self._conn.close()
                    self._conn = None
                logger.debug("closed SQLite graph store %s", self._path)

    def connection(self) -> sqlite3.Connection:
        """The open connection.

        Raises:
            BackendError: The database was closed.
        """
        if self._conn is None:
            raise BackendError(f"The SQLite graph store {self._path} is closed; open a new one.")
        return self._conn

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A connection to read from (see the module docstring); SQLite errors become
        :class:`BackendError`.

        Raises:
            BackendError: The database was closed, or a read failed.
        """
        own = self._path == ":memory:" or self._writer == threading.get_ident()
        reader, statistics = (None, 0) if own else self._take_reader()
        try:
            if reader is None:
                with self._lock:
                    yield self.connection()
            else:
                yield reader
        except sqlite3.Error as e:
            raise BackendError(f"SQLite graph store {self._path}: {e}") from e
        finally:
            if reader is not None:
                self._return_reader(reader, statistics)

    def _take_reader(self) -> tuple[sqlite3.Connection, int]:
        """An idle read-only connection, or a new one, with the statistics count it was
        taken under."""
        with self._pool_lock:
            self.connection()  # raises once closed
            statistics = self._statistics
            if self._idle:
                return self._idle.pop(), statistics
        try:
            reader = sqlite3.connect(
                self._path, timeout=self._timeout, check_same_thread=False, isolation_level=None
            )
            reader.execute("PRAGMA query_only = ON")
        except sqlite3.Error as e:
            raise BackendError(f"Cannot read the SQLite graph store {self._path}: {e}") from e
        return reader, statistics

    def _return_reader(self, reader: sqlite3.Connection, statistics: int) -> None:
        with self._pool_lock:
            fresh = statistics == self._statistics
            if self._conn is not None and fresh and len(self._idle) < IDLE_READERS:
                self._idle.append(reader)
                return
        reader.close()

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; bumps the revision when rows changed, rolls back on error.
        Reads in the same thread meanwhile use this transaction's connection."""
        with self._lock:
            conn = self.connection()
            before = conn.total_changes
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as e:
                raise BackendError(
                    f"Cannot write to the SQLite graph store {self._path}: {e}. "
                    "Another process may hold the write lock; retry later."
                ) from e
            outer, self._writer = self._writer, threading.get_ident()
            try:
                yield conn
                changed = conn.total_changes != before
                if changed:
                    conn.execute("UPDATE meta SET value = value + 1 WHERE key = 'revision'")
                conn.execute("COMMIT")
            except BaseException as e:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                if isinstance(e, sqlite3.Error):
                    raise BackendError(f"SQLite graph store {self._path}: {e}") from e
                raise
            finally:
                self._writer = outer
            if changed and conn.total_changes >= self._next_analyze:
                self._next_analyze = 2 * conn.total_changes
                self._refresh_statistics(conn, "ANALYZE")
                self._retire_readers()

    def _retire_readers(self) -> None:
        """Close the idle readers, and those in use once they are returned: they would plan
        with the statistics from before the last refresh."""
        with self._pool_lock:
            self._statistics += 1
            idle, self._idle = self._idle, []
        for reader in idle:
            reader.close()

    def _refresh_statistics(self, conn: sqlite3.Connection, statement: str) -> None:
        """Run ``ANALYZE`` or ``PRAGMA optimize`` (best effort: statistics only)."""
        try:
            conn.execute(statement)
        except sqlite3.Error:  # pragma: no cover - statistics only
            logger.debug("%s failed on %s", statement, self._path, exc_info=True)

    def _ensure_schema(self) -> None:
        conn = self.connection()
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == SCHEMA_VERSION:
            return
        if version > SCHEMA_VERSION:
            raise BackendError(
                f"{self._path} was written by a newer llama-kb (graph schema {version}; this "
                f"version reads up to {SCHEMA_VERSION}). Upgrade llama-kb."
            )
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Re-read inside the lock: another process may have created the schema meanwhile.
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:
                tables = conn.execute(
                    "SELECT count(*) FROM sqlite_master WHERE type = 'table' "
                    "AND name NOT LIKE 'sqlite_%'"
                ).fetchone()[0]
                if tables:
                    raise BackendError(
                        f"{self._path} is an SQLite database of another application, not a "
                        "llama-kb graph store. Choose another file."
                    )
                for statement in _SCHEMA:
                    conn.execute(statement)
                logger.info("created SQLite graph store %s (schema %d)", self._path, SCHEMA_VERSION)
            elif version in (1, 2, 3):
                upgrade(conn, version)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                logger.info("upgraded SQLite graph store %s to schema %d", self._path, version)
            elif version != SCHEMA_VERSION:
                raise BackendError(f"{self._path}: unknown graph schema version {version}.")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
