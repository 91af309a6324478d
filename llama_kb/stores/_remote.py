"""What server backends share: redacted addresses and translation of driver errors.

Drivers raise their own exceptions (``httpx.ConnectError``, ``redis.ConnectionError``,
``neo4j.ServiceUnavailable``...). Store classes run every call inside
:meth:`ServerEndpoint.errors`, so callers only ever see :class:`BackendUnavailable` (the
server cannot be reached: the message names backend, address and fix) or
:class:`BackendError` (the server answered with an error).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from llama_kb.errors import BackendError, BackendUnavailable, LlamaKBError

COMPOSE_FILE = "docker/compose.yaml"


def redact_url(url: str) -> str:
    """``url`` without its password (``redis://user:***@host:6379``), safe for logs."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<invalid url>"
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


@dataclass(frozen=True)
class ServerEndpoint:
    """A configured server, for error messages.

    Attributes:
        backend: Human name, e.g. ``"FalkorDB"``.
        address: Where it is, without secrets.
        fix: What the user can do when it is unreachable.
        unavailable: Driver exceptions meaning "cannot reach the server".
        special: ``(exception type, fix)`` pairs checked first, e.g. authentication errors,
            also reported as :class:`BackendUnavailable` but with their own fix.
    """

    backend: str
    address: str
    fix: str
    unavailable: tuple[type[BaseException], ...] = ()
    special: tuple[tuple[type[BaseException], str], ...] = ()

    def unreachable(self, cause: BaseException | str) -> BackendUnavailable:
        """A :class:`BackendUnavailable` for this endpoint."""
        return BackendUnavailable(self.backend, self.address, self.fix, str(cause))

    @contextmanager
    def errors(self, action: str) -> Iterator[None]:
        """Translate driver exceptions raised inside the block.

        Args:
            action: What was being done, for the message (``"upsert nodes"``).
        """
        try:
            yield
        except LlamaKBError:
            raise
        except Exception as e:
            raise self.translate(e, action) from e

    def translate(self, error: Exception, action: str) -> LlamaKBError:
        """The llama-kb error standing for driver exception ``error``."""
        for kind, fix in self.special:
            if isinstance(error, kind):
                return BackendUnavailable(self.backend, self.address, fix, str(error))
        if isinstance(error, self.unavailable):
            return self.unreachable(error)
        return BackendError(f"{self.backend} at {self.address}: {action} failed: {error}")
