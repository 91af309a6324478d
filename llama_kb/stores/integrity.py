"""Detect damaged store files at open, before anything is written to them.

:func:`check_sqlite` runs SQLite's ``quick_check`` read-only on a database file;
:func:`open_checked` turns any failure of a store's opener into
:class:`~llama_kb.errors.CorruptStoreError` naming the store, its path and the recovery.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from llama_kb.errors import CorruptStoreError, LlamaKBError

__all__ = ["check_sqlite", "open_checked"]

T = TypeVar("T")


def check_sqlite(store: str, file: Path) -> None:
    """Raise :class:`CorruptStoreError` when ``file`` exists and is not a sound SQLite DB.

    The database is opened read-write (never created): after a crash SQLite must replay the
    write-ahead log, which a read-only connection cannot do. Replaying it is recovery, as
    the store's own open would do; a damaged file is reported before any write.
    """
    if not file.exists():
        return
    try:
        with sqlite3.connect(f"file:{file}?mode=rw", uri=True) as conn:
            verdict = conn.execute("PRAGMA quick_check").fetchone()[0]
        conn.close()
    except sqlite3.Error as e:
        raise CorruptStoreError(store, str(file), str(e)) from e
    if verdict != "ok":
        raise CorruptStoreError(store, str(file), f"integrity check: {verdict}")


def open_checked(store: str, path: Path, opener: Callable[[], T], files: tuple[Path, ...]) -> T:
    """Check ``files`` (SQLite databases), then call ``opener``.

    Errors of ours pass through (a server that is down is not corruption); any other error
    from a store library opening local files becomes :class:`CorruptStoreError`.
    """
    for file in files:
        check_sqlite(store, file)
    try:
        return opener()
    except LlamaKBError:
        raise
    except Exception as e:  # chromadb and sqlite raise many unrelated types on bad files
        raise CorruptStoreError(store, str(path), f"{type(e).__name__}: {e}") from e
