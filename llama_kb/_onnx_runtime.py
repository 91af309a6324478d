"""ONNX Runtime plumbing of the bundled models: file checks, CPU sessions and the lazily
loaded runtime one embedding instance shares with its copies."""

from __future__ import annotations

import hashlib
import os
import threading
import weakref
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

if TYPE_CHECKING:
    import onnxruntime
    import tokenizers

T = TypeVar("T")

_RUNTIMES: weakref.WeakSet[Runtime] = weakref.WeakSet()


def _fresh_locks_after_fork() -> None:
    """A child forked while another thread loaded a model (say, in the background while a
    knowledge base opened) would inherit a held lock and wait for it forever."""
    for runtime in list(_RUNTIMES):
        runtime.lock = threading.Lock()


os.register_at_fork(after_in_child=_fresh_locks_after_fork)


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def cpu_session(path: Path, num_threads: int | None = None) -> Any:
    """An ONNX Runtime CPU session for a small transformer model at ``path``
    (``num_threads``: default, the CPUs this process may use)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = num_threads or cpu_count()
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # Idle worker threads sleep instead of spinning: as fast here, and leaves the CPU to the
    # rest of the application between calls.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))  # respects CPU pinning / container limits
    except AttributeError:  # not available on macOS and Windows
        return os.cpu_count() or 1


class Runtime:
    """The lazily loaded ONNX session, tokenizer and run threads of one embedding instance.

    Copies share the loaded runtime (``InferenceSession.run`` is thread-safe); pickles carry
    nothing and load again on first use, so the embedding survives ``copy.deepcopy`` and
    multiprocessing.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        _RUNTIMES.add(self)
        self.session: onnxruntime.InferenceSession | None = None
        self.tokenizer: tokenizers.Tokenizer | None = None
        self.input_names: frozenset[str] = frozenset()
        self.workers = 1
        self._pool: ThreadPoolExecutor | None = None
        self._pool_pid = 0

    def map(self, run: Callable[[T], np.ndarray], items: list[T]) -> Iterator[np.ndarray]:
        """``run`` over ``items`` in order: on ``workers`` threads when there are several
        items, else in the calling thread. A forked child makes its own threads."""
        if self.workers <= 1 or len(items) <= 1:
            return map(run, items)
        with self.lock:
            if self._pool is None or self._pool_pid != os.getpid():
                self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="llama-kb-embed")
                self._pool_pid = os.getpid()
            pool = self._pool
        return pool.map(run, items)

    def __deepcopy__(self, memo: dict[int, Any]) -> Runtime:
        return self

    def __getstate__(self) -> dict[str, Any]:
        return {"loaded": False}  # must be truthy, or pickle skips __setstate__

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__()  # type: ignore[misc]
