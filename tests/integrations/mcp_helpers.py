"""A blocking wrapper around the MCP SDK's stdio client, so one server serves a whole module.

The SDK's ``stdio_client`` and ``ClientSession`` are async context managers whose task groups
must be entered and left in the same task; a background thread runs that task on its own
event loop and the tests submit calls to it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

REPO = Path(__file__).resolve().parents[2]
T = TypeVar("T")


def server_params(*args: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    """``python -m llama_kb mcp ARGS`` with this worktree first on the import path (and
    ``env`` on top of this process's environment)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return StdioServerParameters(
        command=sys.executable, args=["-m", "llama_kb", "mcp", *args], env=env, cwd=str(REPO)
    )


class BlockingSession:
    """Start the server, initialise a session, and run client calls synchronously."""

    def __init__(self, params: StdioServerParameters, errlog: Path, timeout: float = 90) -> None:
        self.timeout = timeout
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._ready: concurrent.futures.Future[ClientSession] = concurrent.futures.Future()
        self._stop: asyncio.Event | None = None
        self._log = errlog.open("w")
        self._main = asyncio.run_coroutine_threadsafe(self._serve(params), self._loop)
        try:
            self.session = self._ready.result(timeout)
        except BaseException:
            self.close()
            raise

    async def _serve(self, params: StdioServerParameters) -> None:
        self._stop = asyncio.Event()
        try:
            async with (
                stdio_client(params, errlog=self._log) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                self._ready.set_result(session)
                await self._stop.wait()
        except BaseException as e:
            if not self._ready.done():
                self._ready.set_exception(e)
            raise

    def run(self, call: Callable[[ClientSession], Awaitable[T]]) -> T:
        """Run ``call(session)`` on the client loop and return its result."""

        async def wrapped() -> T:
            return await call(self.session)

        return asyncio.run_coroutine_threadsafe(wrapped(), self._loop).result(self.timeout)

    def tool(self, name: str, **arguments: Any) -> Any:
        """``call_tool`` (returns the ``CallToolResult``)."""
        return self.run(lambda s: s.call_tool(name, arguments))

    def close(self) -> None:
        """Stop the session and the server process."""
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        with contextlib.suppress(BaseException):  # the server's exit status is not under test
            self._main.result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._log.close()
