"""Resource limits on ingested files: size, decompressed size, text length, JSON depth.

The active :class:`~llama_kb.config.LimitsConfig` is a context variable: the pipeline sets it
with :func:`use_limits` around reading, and readers (whose signature is just ``path``) ask
:func:`current_limits`. Outside a pipeline the defaults apply.

Every refusal raises :class:`~llama_kb.errors.DocumentError` whose reason names the limit
(``limits.max_file_bytes`` ...) so a user knows which setting to raise.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import stat
import zipfile
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path

from llama_kb.config import LimitsConfig
from llama_kb.errors import DocumentError

__all__ = [
    "check_file",
    "check_text_length",
    "check_zip",
    "current_limits",
    "json_depth",
    "pdf_limits",
    "read_limited",
    "special_file_kind",
    "use_limits",
    "walk_refusal",
]

_DEFAULT = LimitsConfig()
_ACTIVE: ContextVar[LimitsConfig | None] = ContextVar("llama_kb_limits", default=None)
_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def current_limits() -> LimitsConfig:
    """The limits in force (set by :func:`use_limits`; defaults otherwise)."""
    return _ACTIVE.get() or _DEFAULT


@contextlib.contextmanager
def use_limits(limits: LimitsConfig) -> Iterator[LimitsConfig]:
    """Make ``limits`` the active limits inside the ``with`` block."""
    token = _ACTIVE.set(limits)
    try:
        yield limits
    finally:
        _ACTIVE.reset(token)


def _over(what: str, value: int | float, name: str, limit: int | float) -> str:
    return f"{what} {value:,} is over the limit limits.{name}={limit:,}; raise it or skip the file"


def special_file_kind(mode: int) -> str | None:
    """``"FIFO"``, ``"character device"``, ``"block device"`` or ``"socket"``; else ``None``."""
    for test, kind in (
        (stat.S_ISFIFO, "FIFO"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
        (stat.S_ISSOCK, "socket"),
    ):
        if test(mode):
            return kind
    return None


def check_file(path: Path, limits: LimitsConfig | None = None) -> os.stat_result:
    """Refuse special files and files over ``max_file_bytes``, without opening them.

    Args:
        path: The file (symbolic links are followed).
        limits: Limits to apply; default :func:`current_limits`.

    Returns:
        The file's ``stat`` result.

    Raises:
        DocumentError: The path is missing, a special file (FIFO, device, socket) or too big.
    """
    limits = limits or current_limits()
    try:
        info = path.stat()
    except FileNotFoundError as e:
        raise DocumentError(str(path), "no such file or directory") from e
    except OSError as e:
        raise DocumentError(str(path), f"cannot read file: {e.strerror or e}") from e
    kind = special_file_kind(info.st_mode)
    if kind is not None:
        raise DocumentError(str(path), f"skipped: a {kind}, not a regular file")
    if info.st_size > limits.max_file_bytes:
        raise DocumentError(
            str(path), _over("file size", info.st_size, "max_file_bytes", limits.max_file_bytes)
        )
    return info


def walk_refusal(path: Path, root: Path, limits: LimitsConfig | None = None) -> str | None:
    """Why a file found while walking ``root`` is not ingested, or ``None`` to keep it.

    Refused: broken symbolic links, links that lead outside ``root`` (unless
    ``limits.follow_symlinks_outside``) and special files (FIFO, device, socket), which
    would block or never end when read.
    """
    limits = limits or current_limits()
    try:
        if path.is_symlink():
            target = path.resolve()
            if not target.exists():
                return "broken symbolic link"
            if not limits.follow_symlinks_outside and not target.is_relative_to(root.resolve()):
                return (
                    f"symbolic link to {target}, outside {root}; refused "
                    "(set limits.follow_symlinks_outside to allow)"
                )
        kind = special_file_kind(path.stat().st_mode)
    except OSError as e:
        return f"cannot read file: {e.strerror or e}"
    return f"skipped: a {kind}, not a regular file" if kind else None


def read_limited(path: Path) -> bytes:
    """Read at most ``max_file_bytes`` (+1 to detect more): a file may grow while being read."""
    limit = current_limits().max_file_bytes
    check_file(path)
    with path.open("rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise DocumentError(str(path), _over("file size", len(data), "max_file_bytes", limit))
    return data


def check_text_length(source: str, text: str, limits: LimitsConfig | None = None) -> None:
    """Refuse a document text longer than ``max_text_chars``."""
    limit = (limits or current_limits()).max_text_chars
    if len(text) > limit:
        raise DocumentError(source, _over("text length", len(text), "max_text_chars", limit))


def check_zip(path: Path, data: bytes) -> None:
    """Refuse a zip container (``.docx``) that would expand past the limits (a zip bomb).

    Uses the sizes declared in the archive directory; ``zipfile`` never returns more than the
    declared size of a member, so a lying header cannot expand further.
    """
    limits = current_limits()
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, NotImplementedError, ValueError, OSError, EOFError):
        return  # not a zip (or a version zipfile cannot read): the reader says it in its words
    total = sum(m.file_size for m in members)
    if total > limits.max_decompressed_bytes:
        raise DocumentError(
            str(path),
            _over(
                "decompressed size", total, "max_decompressed_bytes", limits.max_decompressed_bytes
            ),
        )
    packed = max(1, sum(m.compress_size for m in members))
    if total > 1 << 20 and total / packed > limits.max_compression_ratio:
        raise DocumentError(
            str(path),
            _over(
                "compression ratio", round(total / packed), "max_compression_ratio",
                limits.max_compression_ratio,
            ),
        )  # fmt: skip


@contextlib.contextmanager
def pdf_limits(path: Path) -> Iterator[None]:
    """Cap pypdf's decompression at ``max_decompressed_bytes`` per stream (pypdf >= 6).

    Raises:
        DocumentError: A stream would decompress past the limit.
    """
    limit = current_limits().max_decompressed_bytes
    try:
        from pypdf import apply_configuration, get_configuration
        from pypdf.errors import LimitReachedError
    except ImportError:  # older pypdf: its own fixed caps apply
        yield
        return
    fields = ("zlib_maximum_output_length", "lzw_maximum_output_length",
              "run_length_maximum_output_length", "array_based_stream_maximum_output_length",
              "maximum_declared_stream_length", "stream_decoding_work_maximum_length")  # fmt: skip
    current = get_configuration()
    caps = {name: min(limit, getattr(current, name)) for name in fields}
    try:
        with apply_configuration(**caps):
            yield
    except LimitReachedError as e:
        raise DocumentError(
            str(path), f"a stream decompresses past limits.max_decompressed_bytes={limit:,}: {e}"
        ) from e


def json_depth(text: str) -> int:
    """Deepest nesting of arrays/objects in a JSON text, counted without parsing it.

    Brackets inside strings do not count. Lets a reader refuse a record before
    ``json.loads`` recurses into it (which can raise ``RecursionError``).
    """
    depth = deepest = 0
    for match in _JSON_TOKENS.finditer(text):
        token = match.group(0)
        if token in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif token in "]}":
            depth -= 1
    return deepest
