"""Bootstrap (seed 003): file resources and directory concepts for a project tree.

Each file becomes ``file://{workspace}/{relative path}`` with ``file_type``, ``extension``,
``size_bytes``, ``line_count`` (text files), ``mime_type`` and ``last_modified``; each directory
becomes ``concept://{workspace}/{relative dir}`` (the root is ``concept://{workspace}/root``)
with ``node_type: directory``, ``file_count``, ``total_size`` and ``depth``, linked to what it
``contains`` (weight 1). Running it again records only what changed.
"""

from __future__ import annotations

import mimetypes
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from llama_kb.agent_graph import _snapshots as snaps
from llama_kb.agent_graph.commits import Change
from llama_kb.agent_graph.graph import AgentGraph
from llama_kb.agent_graph.models import WriteResult
from llama_kb.agent_graph.uris import parse_uri
from llama_kb.errors import QueryError

DEFAULT_MAX_FILES = 5_000
SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv", "venv", ".mypy_cache",
     ".pytest_cache", ".ruff_cache", ".tox", "dist", "build"}
)  # fmt: skip
ROOT_CONCEPT = "root"
CONTAINS = "contains"
_LANGUAGES = {
    ".py": "python", ".js": "javascript", ".ts": "typescript", ".tsx": "typescript",
    ".go": "go", ".rs": "rust", ".java": "java", ".c": "c", ".h": "c", ".cpp": "cpp",
    ".md": "markdown", ".rst": "restructuredtext", ".txt": "text", ".json": "json",
    ".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".html": "html", ".css": "css",
    ".sh": "shell", ".sql": "sql", ".ipynb": "jupyter", ".pdf": "pdf", ".docx": "docx",
}  # fmt: skip
_TEXT_LIMIT = 5_000_000  # count lines only in text files up to this size


def bootstrap(
    graph: AgentGraph,
    directory: str | Path,
    max_files: int = DEFAULT_MAX_FILES,
    message: str | None = None,
    author: str | None = None,
) -> WriteResult:
    """Describe ``directory`` in ``graph``'s workspace as one commit.

    Raises:
        QueryError: ``directory`` is not a directory, or holds more than ``max_files`` files.
    """
    root = Path(directory).expanduser().resolve()
    if not root.is_dir():
        raise QueryError(f"{directory} is not a directory")
    files, dirs = _scan(root, max_files)
    ws = graph.workspace
    nodes: dict[str, dict[str, Any]] = {}
    relations: list[dict[str, Any]] = []
    stats: dict[str, list[int]] = {rel: [0, 0] for rel in dirs}  # rel dir -> [count, size]
    for rel_path, file_path in files:
        meta = _file_metadata(file_path)
        uri = str(parse_uri(f"file://{ws}/{rel_path}"))
        nodes[uri] = _node(uri, snaps.RESOURCE, rel_path, ws, rel_path, meta)
        parent = _parent(rel_path)
        relations.append(_rel(_dir_uri(ws, parent), uri))
        while True:
            stats[parent][0] += 1
            stats[parent][1] += meta["size_bytes"]
            if parent == "":
                break
            parent = _parent(parent)
    for rel_dir in dirs:
        uri = _dir_uri(ws, rel_dir)
        count, size = stats[rel_dir]
        depth = 0 if rel_dir == "" else rel_dir.count("/") + 1
        meta = {"node_type": "directory", "file_count": count, "total_size": size, "depth": depth}
        name = rel_dir.rsplit("/", 1)[-1] if rel_dir else root.name
        content = f"Directory {rel_dir or '.'} of {root.name}: {count} files, {size} bytes."
        props = {**meta, "content": content}
        nodes[uri] = _node(uri, snaps.CONCEPT, name, ws, parse_uri(uri).path, props)
        if rel_dir:
            relations.append(_rel(_dir_uri(ws, _parent(rel_dir)), uri))
    before_nodes = snaps.read_nodes(graph.store, nodes)
    before_rels = {
        snaps.relation_key(r["source"], r["type"], r["target"]): r
        for r in snaps.read_relations(graph.store, [_dir_uri(ws, d) for d in dirs])
    }
    changes = [Change("node", uri, before_nodes.get(uri), snap) for uri, snap in nodes.items()]
    for rel in relations:
        key = snaps.relation_key(rel["source"], rel["type"], rel["target"])
        changes.append(Change("relation", key, before_rels.get(key), rel))
    summary = f"bootstrap {root.name}: {len(files)} files, {len(dirs)} directories"
    return graph.commit(changes, message or summary, author)


def _scan(root: Path, max_files: int) -> tuple[list[tuple[str, Path]], list[str]]:
    files: list[tuple[str, Path]] = []
    dirs: list[str] = []
    for current, subdirs, names in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d not in SKIP_DIRS and not d.startswith("."))
        rel_dir = Path(current).relative_to(root).as_posix()
        dirs.append("" if rel_dir == "." else rel_dir)
        for name in sorted(names):
            path = Path(current) / name
            if name.startswith(".") or not path.is_file() or path.is_symlink():
                continue
            files.append((path.relative_to(root).as_posix(), path))
            if len(files) > max_files:
                raise QueryError(
                    f"{root} holds more than {max_files} files; bootstrap a subdirectory "
                    "or raise max_files"
                )
    return files, dirs


def _file_metadata(path: Path) -> dict[str, Any]:
    stat = path.stat()
    ext = path.suffix.lower()
    mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    meta: dict[str, Any] = {
        "file_type": _LANGUAGES.get(ext, ext.lstrip(".") or "unknown"),
        "extension": ext,
        "size_bytes": stat.st_size,
        "mime_type": mime,
        "last_modified": datetime.fromtimestamp(stat.st_mtime, UTC).isoformat(),
    }
    if stat.st_size <= _TEXT_LIMIT:
        data = path.read_bytes()
        if b"\x00" not in data[:8192]:
            meta["line_count"] = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    return meta


def _parent(rel_path: str) -> str:
    return rel_path.rsplit("/", 1)[0] if "/" in rel_path else ""


def _dir_uri(ws: str, rel_dir: str) -> str:
    return str(parse_uri(f"concept://{ws}/{rel_dir or ROOT_CONCEPT}"))


def _node(
    uri: str, label: str, name: str, ws: str, path: str, props: dict[str, Any]
) -> dict[str, Any]:
    return {
        "uri": uri,
        "label": label,
        "name": name,
        "properties": {**props, "workspace": ws, "path": path},
    }


def _rel(source: str, target: str) -> dict[str, Any]:
    return {"source": source, "target": target, "type": CONTAINS, "weight": 1.0, "properties": {}}
