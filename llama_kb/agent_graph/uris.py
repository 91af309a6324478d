"""Seed-003 URIs: ``concept://{workspace}/{path}`` and ``file://{workspace}/{path}``.

A URI names its workspace, so one database holds the nodes of many workspaces. Concepts are
ideas the agent writes down; resources (``file://``) point at artifacts it can open.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from llama_kb.errors import QueryError

NodeKind = Literal["concept", "resource"]

SCHEMES: dict[str, NodeKind] = {"concept": "concept", "file": "resource"}
MAX_URI_LENGTH = 1024
_WORKSPACE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_BAD_CHARS = re.compile(r"[\x00-\x1f\x7f\\]")


@dataclass(frozen=True)
class NodeURI:
    """A parsed, validated node URI.

    Attributes:
        scheme: ``concept`` or ``file``.
        workspace: The workspace the node belongs to.
        path: Slash-separated path inside the workspace (no empty or ``..`` segments).
    """

    scheme: str
    workspace: str
    path: str

    @property
    def kind(self) -> NodeKind:
        """``concept`` or ``resource``."""
        return SCHEMES[self.scheme]

    def __str__(self) -> str:
        return f"{self.scheme}://{self.workspace}/{self.path}"


def check_workspace(name: str) -> str:
    """Return ``name`` if it is a valid workspace name, else raise :class:`QueryError`."""
    if not _WORKSPACE.fullmatch(name):
        raise QueryError(
            f"invalid workspace name {name!r}: use 1-64 letters, digits, '_', '.' or '-', "
            "starting with a letter or digit"
        )
    return name


def parse_uri(value: str, default_workspace: str | None = None) -> NodeURI:
    """Parse ``concept://ws/path`` or ``file://ws/path``.

    A bare path (no ``://``) is read as a concept in ``default_workspace``.

    Raises:
        QueryError: The URI is malformed, too long, or has an unknown scheme.
    """
    if not isinstance(value, str) or not value.strip():
        raise QueryError("a node URI must be a non-empty string such as concept://ws/topic")
    if len(value) > MAX_URI_LENGTH:
        raise QueryError(f"node URI is {len(value)} characters long; the limit is {MAX_URI_LENGTH}")
    if "://" not in value:
        if default_workspace is None:
            raise QueryError(f"{value!r} is not a URI; write concept://WORKSPACE/{value}")
        scheme, workspace, path = "concept", default_workspace, value
    else:
        scheme, rest = value.split("://", 1)
        if scheme not in SCHEMES:
            raise QueryError(
                f"unknown URI scheme {scheme!r} in {value!r}; use concept://WORKSPACE/PATH "
                "or file://WORKSPACE/PATH"
            )
        workspace, _, path = rest.partition("/")
    check_workspace(workspace)
    path = path.strip("/")
    if not path:
        raise QueryError(f"{value!r} has no path after the workspace")
    if _BAD_CHARS.search(path):
        raise QueryError(f"{value!r} contains control characters or backslashes")
    segments = path.split("/")
    if any(s in ("", ".", "..") for s in segments):
        raise QueryError(f"{value!r} has an empty, '.' or '..' path segment")
    return NodeURI(scheme, workspace, path)


def concept_uri(workspace: str, path: str) -> str:
    """``concept://{workspace}/{path}`` (validated)."""
    return str(parse_uri(f"concept://{workspace}/{path}"))


def file_uri(workspace: str, path: str) -> str:
    """``file://{workspace}/{path}`` (validated)."""
    return str(parse_uri(f"file://{workspace}/{path}"))
