"""An advisory file lock so that two processes never write one knowledge base at once.

:func:`write_lock` holds an exclusive ``flock`` on ``<kb>/write.lock`` for the duration of a
write (ingest, remove, repair). A second process waits up to ``timeout`` seconds, then gets
:class:`~llama_kb.errors.KnowledgeBaseError` naming the holder's process id. The kernel
releases the lock when its holder dies, even by ``kill -9``, so a crash never leaves the
knowledge base locked. Readers (queries) take no lock.

Within one process the lock is re-entrant per thread (a nested ``with`` does not deadlock).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from llama_kb.errors import KnowledgeBaseError

__all__ = ["LOCK_FILE", "write_lock"]

LOCK_FILE = "write.lock"
_POLL_SECONDS = 0.05
_held = threading.local()


@contextlib.contextmanager
def write_lock(root: Path, timeout: float = 600.0) -> Iterator[None]:
    """Hold the knowledge base's write lock inside the ``with`` block.

    Args:
        root: The knowledge base directory.
        timeout: Seconds to wait for another process to finish.

    Raises:
        KnowledgeBaseError: Another process held the lock for longer than ``timeout``.
    """
    key = str(root.resolve())
    depth: dict[str, int] = _held.__dict__.setdefault("depth", {})
    if depth.get(key):
        depth[key] += 1
        try:
            yield
        finally:
            depth[key] -= 1
        return
    path = root / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        _acquire(fd, path, timeout)
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        depth[key] = 1
        try:
            yield
        finally:
            depth[key] = 0
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _acquire(fd: int, path: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                holder = path.read_text(encoding="ascii", errors="replace").strip() or "?"
                raise KnowledgeBaseError(
                    f"{path.parent} is being written by another process (pid {holder}) for "
                    f"more than {timeout:g}s; wait for it to finish, or stop it"
                ) from None
            time.sleep(_POLL_SECONDS)
