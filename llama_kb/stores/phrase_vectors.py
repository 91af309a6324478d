"""Embeddings of short phrases (the relation phrases of facts), kept beside the knowledge base.

Fact ranking compares a query with the relation phrase of every candidate fact. Embedding the
phrases a query meets for the first time made a query in a fresh process several times slower
than a warm one (MuSiQue holds ~19k distinct relation phrases). The ingest pipeline now embeds
each new phrase once, when its fact is written, and queries read the vectors by key.

The file (``phrases.sqlite`` in the knowledge base directory) caches a pure function of
(embedding model, phrase): rows are keyed by the model's fingerprint, never change, and losing
the file costs time, not data. A write that fails (a locked or read-only file) is skipped; the
vectors are still returned.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np

logger = logging.getLogger(__name__)

PHRASES_FILE = "phrases.sqlite"
_BATCH = 500
_SCHEMA = """CREATE TABLE IF NOT EXISTS phrase_vectors (
    model TEXT NOT NULL, phrase TEXT NOT NULL, vector BLOB NOT NULL, UNIQUE (model, phrase))"""

Embed = Callable[[list[str]], Sequence[Sequence[float]]]
"""Embeds a batch of texts (``BaseEmbedding.get_text_embedding_batch``)."""


def open_phrase_vectors(directory: Path, model: str) -> PhraseVectors | None:
    """The phrase vectors of the knowledge base in ``directory``; ``None`` (and a warning)
    when the file cannot be opened, e.g. on a read-only directory: queries then embed."""
    try:
        return PhraseVectors(directory / PHRASES_FILE, model)
    except (sqlite3.Error, OSError) as exc:
        logger.warning("phrase vectors unavailable in %s: %s", directory, exc)
        return None


def unit(vector: Sequence[float] | np.ndarray) -> np.ndarray:
    """``vector`` as float32 scaled to length 1 (a zero vector stays zero)."""
    array = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(array))
    return array / norm if norm > 0 else array


class PhraseVectors:
    """Unit vectors of phrases under one embedding model, read and written by key.

    Args:
        path: The SQLite file (created when missing).
        model: What identifies the embedding's vector space (its fingerprint).
    """

    def __init__(self, path: Path, model: str) -> None:
        self.path = path
        self.model = model
        self._db = sqlite3.connect(path, check_same_thread=False, timeout=5.0)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(_SCHEMA)
        self._db.commit()
        self._lock = threading.Lock()

    def read(self, phrases: Iterable[str]) -> dict[str, np.ndarray]:
        """The stored vectors of ``phrases`` (those not stored are left out)."""
        wanted = list(dict.fromkeys(phrases))
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for start in range(0, len(wanted), _BATCH):
                part = wanted[start : start + _BATCH]
                marks = ",".join("?" * len(part))
                rows = self._db.execute(
                    f"SELECT phrase, vector FROM phrase_vectors "  # only '?' marks are spliced
                    f"WHERE model = ? AND phrase IN ({marks})",
                    [self.model, *part],
                )
                found.update((p, np.frombuffer(v, dtype=np.float32)) for p, v in rows)
        return found

    def ensure(self, phrases: Iterable[str], embed: Embed) -> dict[str, np.ndarray]:
        """The vectors of ``phrases``: stored ones read, the others embedded in one batch and
        stored for the next reader."""
        wanted = list(dict.fromkeys(phrases))
        found = self.read(wanted)
        missing = [p for p in wanted if p not in found]
        if missing:
            new = {p: unit(v) for p, v in zip(missing, embed(missing), strict=True)}
            self._write(new)
            found.update(new)
        return found

    def _write(self, vectors: dict[str, np.ndarray]) -> None:
        rows = [(self.model, p, v.astype(np.float32).tobytes()) for p, v in vectors.items()]
        try:
            with self._lock, self._db:
                self._db.executemany(
                    "INSERT OR IGNORE INTO phrase_vectors (model, phrase, vector) VALUES (?, ?, ?)",
                    rows,
                )
        except sqlite3.Error as exc:  # a cache: the vectors are returned all the same
            logger.warning("phrase vectors not stored in %s: %s", self.path, exc)

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._db.close()
