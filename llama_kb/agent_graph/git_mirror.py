"""Optional mirror of agent-graph commits into a git repository (seed 003 "history via git").

Each node is one JSON file, ``<scheme>/<workspace>/<path>.json``, holding the node and its
outgoing relations; every agent-graph commit becomes a git commit with the same message and
author, so ``git log -p`` shows the diffed content. Uses the ``git`` binary.
"""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
from pathlib import Path
from typing import Any

from llama_kb.agent_graph import _snapshots as snaps
from llama_kb.agent_graph.commits import Commit
from llama_kb.agent_graph.uris import parse_uri
from llama_kb.errors import ConfigurationError
from llama_kb.stores.graph import KBGraphStore

logger = logging.getLogger(__name__)

_EMAIL = "agent@llama-kb.invalid"


class GitMirror:
    """Write node files and commit them to the git repository at ``directory`` (created).

    Raises:
        ConfigurationError: The ``git`` binary is not installed.
    """

    def __init__(self, directory: str | Path) -> None:
        if shutil.which("git") is None:
            raise ConfigurationError("the git mirror needs the `git` program; install git")
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        if not (self.directory / ".git").exists():
            self._git("init", "-q")

    def record(self, store: KBGraphStore, commit: Commit) -> None:
        """Rewrite the files of the nodes ``commit`` touched and commit them."""
        touched = {c.key for c in commit.changes if c.kind == "node"}
        touched |= {
            (c.before or c.after or {})["source"] for c in commit.changes if c.kind == "relation"
        }
        nodes = snaps.read_nodes(store, touched)
        relations = snaps.read_relations(store, touched)
        for uri in sorted(touched):
            path = self._file(uri)
            node = nodes.get(uri)
            if node is None:
                path.unlink(missing_ok=True)
                continue
            outgoing = sorted(
                (r for r in relations if r["source"] == uri), key=lambda r: (r["type"], r["target"])
            )
            path.parent.mkdir(parents=True, exist_ok=True)
            body: dict[str, Any] = {**node, "relations": outgoing}
            path.write_text(json.dumps(body, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        self._git("add", "-A")
        message = f"{commit.message}\n\nllama-kb commit {commit.id}"
        if commit.reverts is not None:
            message += f", reverts {commit.reverts}"
        self._git(
            "-c",
            f"user.name={commit.author}",
            "-c",
            f"user.email={_EMAIL}",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            message,
        )

    def _file(self, uri: str) -> Path:
        parsed = parse_uri(uri)
        return self.directory / parsed.scheme / parsed.workspace / f"{parsed.path}.json"

    def _git(self, *args: str) -> None:
        result = subprocess.run(
            ["git", *args], cwd=self.directory, capture_output=True, text=True, check=False
        )
        if result.returncode != 0:
            logger.warning("git %s failed: %s", args[0], result.stderr.strip())
