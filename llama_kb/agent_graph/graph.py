"""The agent graph (seed 003): concepts and resources an LLM agent writes and traverses.

Nodes live in the knowledge base's graph store (ids are ``concept://ws/path`` and
``file://ws/path`` URIs, labels ``concept`` / ``resource``), so the unified retriever sees what
agents wrote. Every write is validated first, then applied and recorded as a commit in
``agent_commits.sqlite`` next to the graph; a commit can be reverted.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llama_kb.agent_graph import _snapshots as snaps
from llama_kb.agent_graph.active_context import DEFAULT_ACTIVE_CONTEXT_SIZE, ActiveContext
from llama_kb.agent_graph.commits import Change, CommitLog
from llama_kb.agent_graph.git_mirror import GitMirror
from llama_kb.agent_graph.models import (
    MAX_CONTENT_CHARS,
    MAX_MESSAGE_CHARS,
    MAX_NAME_CHARS,
    ActiveContextView,
    CommitView,
    ConceptView,
    HistoryView,
    TraversalView,
    WriteResult,
    check_metadata,
    check_relation_type,
    check_text,
    check_weight,
    node_view,
    relation_view,
)
from llama_kb.agent_graph.uris import NodeURI, check_workspace, parse_uri
from llama_kb.agent_graph.walk import closes_zero_cycle, walk
from llama_kb.errors import QueryError
from llama_kb.stores.graph import KBGraphStore
from llama_kb.stores.traversal import Direction

if TYPE_CHECKING:
    from llama_kb.knowledge_base import KnowledgeBase

logger = logging.getLogger(__name__)

COMMITS_FILE = "agent_commits.sqlite"
GIT_DIR = "agent_git"
DEFAULT_WORKSPACE = "default"


class AgentGraph:
    """Concepts, resources and weighted relations with history and an active context.

    Args:
        store: The graph store (usually ``kb.graph``).
        log: Where commits are recorded.
        workspace: The workspace bare paths and new nodes belong to.
        linked: Other workspaces traversal and relations may reach.
        context_size: Most nodes in the active context (LRU).
        author: Default author of commits.
        mirror: Also commit every change to this git repository.
    """

    def __init__(
        self,
        store: KBGraphStore,
        log: CommitLog,
        workspace: str = DEFAULT_WORKSPACE,
        linked: Iterable[str] = (),
        context_size: int = DEFAULT_ACTIVE_CONTEXT_SIZE,
        author: str = "agent",
        mirror: GitMirror | None = None,
    ) -> None:
        self.store = store
        self.log = log
        self.workspace = check_workspace(workspace)
        self.workspaces = [self.workspace, *(check_workspace(w) for w in linked)]
        self.context = ActiveContext(context_size)
        self.author = author
        self.mirror = mirror
        self._write_lock = threading.Lock()

    @classmethod
    def open(cls, kb: KnowledgeBase, git: bool = False, **kwargs: Any) -> AgentGraph:
        """The agent graph of ``kb`` (commits in ``<kb>/agent_commits.sqlite``; with ``git``
        also mirrored into the git repository ``<kb>/agent_git``)."""
        root = Path(kb.config.path).expanduser()
        mirror = GitMirror(root / GIT_DIR) if git else None
        return cls(kb.graph, CommitLog(root / COMMITS_FILE), mirror=mirror, **kwargs)

    def close(self) -> None:
        """Close the commit log (the graph store belongs to the knowledge base)."""
        self.log.close()

    # -- URIs -------------------------------------------------------------------------

    def uri(self, value: str) -> NodeURI:
        """Parse ``value`` (a bare path means a concept in this workspace) and check its
        workspace is registered."""
        parsed = parse_uri(value, self.workspace)
        if parsed.workspace not in self.workspaces:
            raise QueryError(
                f"workspace {parsed.workspace!r} of {value!r} is not registered with this "
                f"server (registered: {', '.join(self.workspaces)})"
            )
        return parsed

    # -- reads ------------------------------------------------------------------------

    def get_concept(self, uri: str) -> ConceptView:
        """A concept or resource with its relations; puts it into the active context.

        Raises:
            QueryError: No such node (a missing concept says which relations name it).
        """
        key = str(self.uri(uri))
        node = snaps.read_nodes(self.store, [key]).get(key)
        relations = snaps.read_relations(self.store, [key])
        if node is None or node["label"] == snaps.MISSING:
            named_by = sorted(r["source"] for r in relations if r["target"] == key)
            hint = f"; it is named by relations from {named_by}" if named_by else ""
            raise QueryError(f"unknown URI {key}: no such concept or resource{hint}")
        others = {r["source"] for r in relations} | {r["target"] for r in relations}
        missing = self._missing(others)
        evicted = self.context.touch([key])
        return ConceptView(
            node=node_view(node),
            outgoing=[relation_view(r) for r in relations if r["source"] == key],
            incoming=[relation_view(r) for r in relations if r["target"] == key],
            warnings=[_missing_warning(m) for m in sorted(missing)],
            active_context=self.context.uris(),
            evicted=evicted,
        )

    def traverse(
        self,
        uri: str,
        max_cost: float = 1.0,
        max_hops: int = 10,
        max_nodes: int = 100,
        direction: Direction = "out",
    ) -> TraversalView:
        """Seed-003 BFS: nodes whose cheapest path from ``uri`` costs at most ``max_cost``.

        Reached nodes (and the start) enter the active context; missing concepts reached are
        reported as broken links instead.
        """
        start = str(self.uri(uri))
        first = snaps.read_nodes(self.store, [start]).get(start)
        if first is None or first["label"] == snaps.MISSING:
            raise QueryError(f"unknown URI {start}: no such concept or resource to start from")
        result = walk(self.store, start, self.workspaces, max_cost, max_hops, max_nodes, direction)
        cost = {s.target: s.path_cost for s in result.steps}
        found = snaps.read_nodes(self.store, cost)
        nodes = [node_view(first, 0.0)]
        broken: list[str] = []
        for step in result.steps:
            snap = found.get(step.target)
            if snap is None or snap["label"] == snaps.MISSING:
                broken.append(step.target)
            else:
                nodes.append(node_view(snap, step.path_cost))
        evicted = self.context.touch([n.uri for n in reversed(nodes)])
        return TraversalView(
            start=start,
            max_cost=max_cost,
            nodes=nodes,
            relations=[relation_view(r) for r in result.relations()],
            broken_links=broken,
            warnings=[_missing_warning(b) for b in broken],
            active_context=self.context.uris(),
            evicted=evicted,
        )

    def active_context(self) -> ActiveContextView:
        """The nodes in the active context, most recently used first."""
        uris = self.context.uris()
        found = snaps.read_nodes(self.store, uris)
        self.context.discard([u for u in uris if u not in found])
        return ActiveContextView(
            limit=self.context.limit, nodes=[node_view(found[u]) for u in uris if u in found]
        )

    def history(self, limit: int = 20, all_workspaces: bool = False) -> HistoryView:
        """Recent commits, newest first."""
        if not 1 <= limit <= 1000:
            raise QueryError(f"limit must be between 1 and 1000, not {limit}")
        workspace = None if all_workspaces else self.workspace
        return HistoryView(commits=[CommitView.of(c) for c in self.log.history(workspace, limit)])

    # -- writes -----------------------------------------------------------------------

    def add_concept(
        self,
        uri: str,
        content: str,
        name: str | None = None,
        metadata: dict[str, Any] | None = None,
        message: str | None = None,
        author: str | None = None,
    ) -> WriteResult:
        """Create a concept (or fill in a missing one that relations already name)."""
        key = self.uri(uri)
        if key.kind != "concept":
            raise QueryError(f"{key} is a resource; add_concept takes concept:// URIs")
        before = snaps.read_nodes(self.store, [str(key)]).get(str(key))
        if before is not None and before["label"] != snaps.MISSING:
            raise QueryError(f"{key} already exists; use update_concept to change it")
        after = _concept_snapshot(key, content, name, metadata)
        change = Change("node", str(key), before, after)
        return self.commit([change], message or f"add {key}", author)

    def update_concept(
        self,
        uri: str,
        content: str | None = None,
        name: str | None = None,
        metadata: dict[str, Any] | None = None,
        message: str | None = None,
        author: str | None = None,
    ) -> WriteResult:
        """Change a node's content, name or metadata (metadata keys are merged; null drops)."""
        key = self.uri(uri)
        before = snaps.read_nodes(self.store, [str(key)]).get(str(key))
        if before is None or before["label"] == snaps.MISSING:
            raise QueryError(f"unknown URI {key}: create it with add_concept first")
        props = dict(before["properties"])
        merged = {k: v for k, v in props.items() if k not in ("workspace", "path", "content")}
        merged.update(check_metadata(metadata))
        merged = {k: v for k, v in merged.items() if v is not None}
        if before["label"] == snaps.CONCEPT:
            new_content = props.get("content", "") if content is None else content
            after = _concept_snapshot(key, new_content, name or before["name"], merged)
        else:
            if content is not None:
                raise QueryError(f"{key} is a resource; it has metadata but no content")
            after = _resource_snapshot(key, merged)
        return self.commit(
            [Change("node", str(key), before, after)], message or f"update {key}", author
        )

    def remove_concept(
        self, uri: str, message: str | None = None, author: str | None = None
    ) -> WriteResult:
        """Delete a concept or resource and its relations."""
        key = str(self.uri(uri))
        before = snaps.read_nodes(self.store, [key]).get(key)
        if before is None:
            raise QueryError(f"unknown URI {key}: nothing to remove")
        changes = [
            Change("relation", snaps.relation_key(r["source"], r["type"], r["target"]), r, None)
            for r in snaps.read_relations(self.store, [key])
        ]
        changes.append(Change("node", key, before, None))
        return self.commit(changes, message or f"remove {key}", author)

    def add_relation(
        self,
        source: str,
        target: str,
        rel_type: str,
        weight: float = 1.0,
        metadata: dict[str, Any] | None = None,
        message: str | None = None,
        author: str | None = None,
    ) -> WriteResult:
        """Add (or re-weight) ``source -[rel_type]-> target``.

        A missing resource endpoint is created; a missing concept endpoint is kept as a
        reference and reported in ``warnings``.

        Raises:
            QueryError: Bad URI or workspace, weight outside 0..1, a cycle of weight-0
                relations, a relation from a node to itself.
        """
        src, dst = self.uri(source), self.uri(target)
        rel_type = check_relation_type(rel_type)
        weight = check_weight(weight)
        props = check_metadata(metadata)
        if src == dst:
            raise QueryError(f"a relation needs two different nodes, got {src} twice")
        if weight == 0 and closes_zero_cycle(self.store, str(src), str(dst), self.workspaces):
            raise QueryError(
                f"{src} -[{rel_type}]-> {dst} with weight 0 would close a cycle of weight-0 "
                "relations (nodes that always load each other); give it a weight above 0"
            )
        changes: list[Change] = []
        warnings: list[str] = []
        existing = snaps.read_nodes(self.store, [str(src), str(dst)])
        for end in (src, dst):
            if str(end) in existing:
                if existing[str(end)]["label"] == snaps.MISSING:
                    warnings.append(_missing_warning(str(end)))
                continue
            if end.kind == "resource":
                changes.append(Change("node", str(end), None, _resource_snapshot(end, {})))
            else:
                changes.append(Change("node", str(end), None, _missing_snapshot(end)))
                warnings.append(_missing_warning(str(end)))
        key = snaps.relation_key(str(src), rel_type, str(dst))
        before = snaps.read_relation(self.store, str(src), rel_type, str(dst))
        after = {
            "source": str(src),
            "target": str(dst),
            "type": rel_type,
            "weight": weight,
            "properties": props,
        }
        changes.append(Change("relation", key, before, after))
        result = self.commit(changes, message or f"relate {key}", author)
        result.warnings.extend(warnings)
        return result

    def remove_relation(
        self,
        source: str,
        target: str,
        rel_type: str,
        message: str | None = None,
        author: str | None = None,
    ) -> WriteResult:
        """Delete one relation."""
        src, dst = str(self.uri(source)), str(self.uri(target))
        before = snaps.read_relation(self.store, src, check_relation_type(rel_type), dst)
        key = snaps.relation_key(src, rel_type, dst)
        if before is None:
            raise QueryError(f"there is no relation {key}")
        return self.commit(
            [Change("relation", key, before, None)], message or f"unrelate {key}", author
        )

    def revert(
        self, commit_id: int, message: str | None = None, author: str | None = None
    ) -> WriteResult:
        """Undo a commit by writing back what it replaced; recorded as a new commit.

        Raises:
            QueryError: Unknown commit, already reverted, or a later commit changed the same
                nodes or relations (revert that one first).
        """
        commit = self.log.get(commit_id)
        if commit.reverted_by is not None:
            raise QueryError(f"commit {commit_id} was already reverted by {commit.reverted_by}")
        later = self.log.later_changes(commit_id, {c.key for c in commit.changes})
        if later:
            key, by = sorted(later.items())[0]
            raise QueryError(
                f"cannot revert commit {commit_id}: {key} was changed again by commit {by}; "
                f"revert commit {max(later.values())} first"
            )
        inverse = [Change(c.kind, c.key, c.after, c.before) for c in reversed(commit.changes)]
        return self.commit(
            inverse, message or f"revert {commit_id}: {commit.message}", author, reverts=commit_id
        )

    def commit(
        self,
        changes: list[Change],
        message: str,
        author: str | None = None,
        reverts: int | None = None,
    ) -> WriteResult:
        """Apply validated ``changes`` to the store and record them as one commit.

        Changes whose before and after states are equal are dropped; with nothing left no
        commit is made.
        """
        check_text(message, "commit message", MAX_MESSAGE_CHARS)
        check_text(author, "author", MAX_NAME_CHARS)
        real = [c for c in changes if c.before != c.after]
        if not real:
            return WriteResult(commit=None, warnings=["nothing changed; no commit recorded"])
        with self._write_lock:
            self._check_unchanged(real)
            snaps.apply_changes(self.store, real)
            commit = self.log.record(
                self.workspace, author or self.author, message, real, reverts=reverts
            )
            if self.mirror is not None:
                try:
                    self.mirror.record(self.store, commit)
                except OSError as e:  # the graph and the commit log are the source of truth
                    logger.warning("git mirror of commit %s failed: %s", commit.id, e)
        self.context.discard([c.key for c in real if c.kind == "node" and c.after is None])
        return WriteResult(commit=CommitView.of(commit))

    # -- helpers ----------------------------------------------------------------------

    def _check_unchanged(self, changes: list[Change]) -> None:
        """Refuse ``changes`` if what they replace was changed meanwhile (another call or
        process wrote between reading and writing)."""
        nodes = snaps.read_nodes(self.store, [c.key for c in changes if c.kind == "node"])
        sources = [_source(c) for c in changes if c.kind == "relation"]
        relations = {
            snaps.relation_key(r["source"], r["type"], r["target"]): r
            for r in snaps.read_relations(self.store, sources)
        }
        for change in changes:
            current = (nodes if change.kind == "node" else relations).get(change.key)
            if current != change.before:
                raise QueryError(f"{change.key} was changed meanwhile; read it again and retry")

    def _missing(self, uris: Iterable[str]) -> set[str]:
        found = snaps.read_nodes(self.store, uris)
        return {u for u, s in found.items() if s["label"] == snaps.MISSING}


def _concept_snapshot(
    key: NodeURI, content: str, name: str | None, metadata: dict[str, Any] | None
) -> dict[str, Any]:
    check_text(content, "content", MAX_CONTENT_CHARS)
    check_text(name, "name", MAX_NAME_CHARS)
    props = {**check_metadata(metadata), "workspace": key.workspace, "path": key.path}
    props["content"] = content
    return {
        "uri": str(key),
        "label": snaps.CONCEPT,
        "name": name or key.path.rsplit("/", 1)[-1],
        "properties": props,
    }


def _resource_snapshot(key: NodeURI, metadata: dict[str, Any]) -> dict[str, Any]:
    props = {**check_metadata(metadata), "workspace": key.workspace, "path": key.path}
    return {"uri": str(key), "label": snaps.RESOURCE, "name": key.path, "properties": props}


def _missing_snapshot(key: NodeURI) -> dict[str, Any]:
    props = {"workspace": key.workspace, "path": key.path}
    return {"uri": str(key), "label": snaps.MISSING, "name": key.path, "properties": props}


def _source(change: Change) -> str:
    state = change.before or change.after or {}
    return str(state["source"])


def _missing_warning(uri: str) -> str:
    return f"concept {uri} does not exist yet; the link is kept. Create it with add_concept."
