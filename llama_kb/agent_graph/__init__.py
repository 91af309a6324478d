"""An agent-owned knowledge graph (seed 003) over the knowledge base's graph store.

Concepts and resources with ``concept://ws/path`` / ``file://ws/path`` URIs, weighted relations
(0 = always load together, 1 = standard cost), cost-bounded traversal, an LRU active context,
missing-concept warnings, commits with history and revert, and a project bootstrap.

Example:
    >>> from llama_kb import KnowledgeBase  # doctest: +SKIP
    >>> from llama_kb.agent_graph import AgentGraph
    >>> with KnowledgeBase.open("./kb") as kb:
    ...     graph = AgentGraph.open(kb, workspace="app")
    ...     graph.add_concept("ingest", "The ingestion pipeline reads files and chunks them.")
    ...     graph.add_relation("ingest", "file://app/src/ingest.py", "implemented_in", 0.5)
    ...     print(graph.traverse("ingest").nodes)
"""

from llama_kb.agent_graph.active_context import DEFAULT_ACTIVE_CONTEXT_SIZE, ActiveContext
from llama_kb.agent_graph.bootstrap import bootstrap
from llama_kb.agent_graph.commits import Change, Commit, CommitLog
from llama_kb.agent_graph.git_mirror import GitMirror
from llama_kb.agent_graph.graph import COMMITS_FILE, DEFAULT_WORKSPACE, AgentGraph
from llama_kb.agent_graph.models import (
    ActiveContextView,
    CommitView,
    ConceptView,
    HistoryView,
    NodeView,
    RelationView,
    TraversalView,
    WriteResult,
)
from llama_kb.agent_graph.uris import NodeURI, concept_uri, file_uri, parse_uri

__all__ = [
    "COMMITS_FILE",
    "DEFAULT_ACTIVE_CONTEXT_SIZE",
    "DEFAULT_WORKSPACE",
    "ActiveContext",
    "ActiveContextView",
    "AgentGraph",
    "Change",
    "Commit",
    "CommitLog",
    "CommitView",
    "ConceptView",
    "GitMirror",
    "HistoryView",
    "NodeURI",
    "NodeView",
    "RelationView",
    "TraversalView",
    "WriteResult",
    "bootstrap",
    "concept_uri",
    "file_uri",
    "parse_uri",
]
