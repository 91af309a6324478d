"""The MCP face: the unified retriever and the agent graph as Model Context Protocol tools.

Built on the official ``mcp`` SDK (``pip install 'llama-kb[mcp]'``), imported only when a
server is built. Tools take typed arguments and return structured results; an invalid call
returns an MCP tool error whose text says what to fix, and leaves the graph unchanged.
Concepts and resources are also readable as MCP resources at ``concept://{workspace}/{path}``
and ``file://{workspace}/{path}``.

Run it with ``llama-kb mcp --kb DIR [--workspace NAME]`` (stdio).
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, Field

from llama_kb.agent_graph import (
    ActiveContextView,
    AgentGraph,
    ConceptView,
    HistoryView,
    TraversalView,
    WriteResult,
    bootstrap,
)
from llama_kb.agent_graph.models import MAX_CONTENT_CHARS, MAX_MESSAGE_CHARS, MAX_NAME_CHARS
from llama_kb.agent_graph.uris import MAX_URI_LENGTH
from llama_kb.errors import LlamaKBError, MissingDependencyError, QueryError

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from llama_kb.knowledge_base import KnowledgeBase

__all__ = ["PassageView", "RetrieveView", "SearchView", "build_server", "require_mcp"]

MAX_QUERY_CHARS = 4_000
MAX_TOP_K = 100

URI = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_URI_LENGTH,
        description="concept://WORKSPACE/PATH, file://WORKSPACE/PATH, or a bare PATH "
        "(a concept in the server's workspace)",
    ),
]
Query = Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS)]
TopK = Annotated[int, Field(ge=1, le=MAX_TOP_K, description="most passages returned")]
Weight = Annotated[
    float, Field(ge=0.0, le=1.0, description="traversal cost: 0 = always load together, 1 = normal")
]
Content = Annotated[str, Field(max_length=MAX_CONTENT_CHARS, description="what the agent knows")]
Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS)]
RelationType = Annotated[
    str, Field(min_length=1, max_length=64, description="e.g. depends_on, implemented_in")
]
Message = Annotated[str, Field(max_length=MAX_MESSAGE_CHARS, description="commit message")]
Metadata = Annotated[
    dict[str, Any], Field(description="LLM-defined properties (JSON, at most 20,000 characters)")
]


class PassageView(BaseModel):
    """A retrieved passage with provenance."""

    chunk_id: str
    doc_id: str
    text: str
    score: float
    ranks: dict[str, int] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)


class SearchView(BaseModel):
    """Dense passage search results, best first."""

    passages: list[PassageView]


class RetrieveView(BaseModel):
    """The unified retriever's fused payload: passages and graph facts kept apart."""

    query: str
    route: str = Field(description="semantic, factual or hybrid")
    unstructured: list[PassageView]
    structured_facts: list[dict[str, Any]]
    entities: list[str]
    knowledge: list[dict[str, Any]] = Field(
        default_factory=list, description="curated knowledge pieces, labelled as such"
    )
    trace: dict[str, Any]


def require_mcp() -> None:
    """Raise :class:`MissingDependencyError` unless the ``mcp`` SDK is installed."""
    try:
        import mcp.server.mcpserver  # noqa: F401
    except ImportError as e:
        raise MissingDependencyError("mcp", "mcp", "The MCP server") from e


@contextmanager
def _tool_errors() -> Iterator[None]:
    """Turn library errors into MCP tool errors carrying the library's message."""
    from mcp.server.mcpserver.exceptions import ToolError

    try:
        yield
    except LlamaKBError as e:
        raise ToolError(str(e)) from e


def build_server(
    kb: KnowledgeBase,
    graph: AgentGraph,
    *,
    defaults: dict[str, Any] | None = None,
    name: str = "llama-kb",
    principal: str | None = None,
) -> MCPServer:
    """An MCP server exposing ``kb``'s retriever and ``graph``.

    Args:
        kb: The knowledge base (its retriever answers ``retrieve`` and ``search``).
        graph: The agent graph the graph tools read and write.
        defaults: Defaults for ``top_k`` and ``min_score`` (e.g. from an agent config).
        name: Server name shown to clients.
        principal: Who the server's client is (``user@org``): ``retrieve`` and ``search``
            read what it may read (default anonymous: public records). It is fixed by
            whoever starts the server; a client cannot change it.

    Raises:
        MissingDependencyError: The ``mcp`` extra is not installed.
    """
    require_mcp()
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ResourceNotFoundError

    opts = {"top_k": 5, "min_score": None, **(defaults or {})}
    server: MCPServer = MCPServer(
        name,
        instructions=(
            "Knowledge base and agent-owned knowledge graph. Use `retrieve` for questions, "
            "`traverse`/`get_concept` to load concepts into your active context, and "
            f"`add_concept`/`add_relation` to record what you learn in workspace "
            f"{graph.workspace!r}. Every write is a commit; `history` and `revert` undo them."
        ),
        log_level="WARNING",
    )

    @server.tool()
    def retrieve(
        query: Query,
        top_k: TopK | None = None,
        min_score: Annotated[float, Field(ge=0.0)] | None = None,
        filters: dict[str, Any] | None = None,
        route: Literal["semantic", "factual", "hybrid"] | None = None,
    ) -> RetrieveView:
        """Unified retrieval: passages and knowledge-graph facts, routed and fused."""
        with _tool_errors():
            context = kb.retrieve(
                query,
                top_k=top_k or opts["top_k"],
                min_score=opts["min_score"] if min_score is None else min_score,
                filters=filters,
                route=route,
                principal=principal,
            )
        return RetrieveView(**context.to_dict())

    @server.tool()
    def remember(
        messages: list[dict[str, Any]], conversation_id: str | None = None
    ) -> dict[str, Any]:
        """Turn a conversation (role/content messages) into knowledge pieces of the server's
        principal, deduplicated within each scope (needs an LLM: ``LLAMA_KB_LLM``)."""
        with _tool_errors():
            if principal is None:
                raise QueryError("remember needs a principal: start the server with --as user@org")
            result = kb.remember(messages, principal=principal, conversation_id=conversation_id)
        return asdict(result)

    @server.tool()
    def search(
        query: Query,
        top_k: TopK | None = None,
        min_score: Annotated[float, Field(ge=-1.0, le=1.0)] | None = None,
        filters: dict[str, Any] | None = None,
    ) -> SearchView:
        """Dense passage search only (no graph), best first."""
        with _tool_errors():
            hits = kb.search(
                query, top_k=top_k or opts["top_k"], filters=filters, principal=principal
            )
        floor = opts["min_score"] if min_score is None else min_score
        return SearchView(
            passages=[PassageView(**h.to_dict()) for h in hits if floor is None or h.score >= floor]
        )

    @server.tool()
    def traverse(
        uri: URI,
        max_cost: Annotated[float, Field(ge=0.0, le=10.0)] = 1.0,
        max_hops: Annotated[int, Field(ge=1, le=50)] = 10,
        max_nodes: Annotated[int, Field(ge=1, le=1000)] = 100,
        direction: Literal["out", "in", "both"] = "out",
    ) -> TraversalView:
        """Load a concept and everything within the cost budget into the active context."""
        with _tool_errors():
            return graph.traverse(uri, max_cost, max_hops, max_nodes, direction)

    @server.tool()
    def get_concept(uri: URI) -> ConceptView:
        """A concept or resource with its relations (and warnings for missing concepts)."""
        with _tool_errors():
            return graph.get_concept(uri)

    @server.tool()
    def add_concept(
        uri: URI,
        content: Content,
        name: Name | None = None,
        metadata: Metadata | None = None,
        message: Message | None = None,
    ) -> WriteResult:
        """Create a concept; fails if it exists (use update_concept)."""
        with _tool_errors():
            return graph.add_concept(uri, content, name, metadata, message)

    @server.tool()
    def update_concept(
        uri: URI,
        content: Content | None = None,
        name: Name | None = None,
        metadata: Metadata | None = None,
        message: Message | None = None,
    ) -> WriteResult:
        """Change a concept's content or name, or merge metadata (a null value drops a key)."""
        with _tool_errors():
            return graph.update_concept(uri, content, name, metadata, message)

    @server.tool()
    def remove_concept(uri: URI, message: Message | None = None) -> WriteResult:
        """Delete a concept or resource and its relations."""
        with _tool_errors():
            return graph.remove_concept(uri, message)

    @server.tool()
    def add_relation(
        source: URI,
        target: URI,
        type: RelationType,
        weight: Weight = 1.0,
        metadata: Metadata | None = None,
        message: Message | None = None,
    ) -> WriteResult:
        """Add or re-weight source -[type]-> target. Missing resources are created; a missing
        concept is kept as a link and reported in warnings."""
        with _tool_errors():
            return graph.add_relation(source, target, type, weight, metadata, message)

    @server.tool()
    def remove_relation(
        source: URI, target: URI, type: RelationType, message: Message | None = None
    ) -> WriteResult:
        """Delete one relation."""
        with _tool_errors():
            return graph.remove_relation(source, target, type, message)

    @server.tool()
    def active_context() -> ActiveContextView:
        """The nodes you are working with (LRU), most recently used first."""
        with _tool_errors():
            return graph.active_context()

    @server.tool()
    def history(
        limit: Annotated[int, Field(ge=1, le=1000)] = 20, all_workspaces: bool = False
    ) -> HistoryView:
        """Recent commits, newest first, with the nodes and relations each touched."""
        with _tool_errors():
            return graph.history(limit, all_workspaces)

    @server.tool()
    def revert(
        commit_id: Annotated[int, Field(ge=1)], message: Message | None = None
    ) -> WriteResult:
        """Undo a commit (recorded as a new commit)."""
        with _tool_errors():
            return graph.revert(commit_id, message)

    @server.tool(name="bootstrap")
    def bootstrap_tool(
        directory: Annotated[str, Field(min_length=1, max_length=4096)],
        max_files: Annotated[int, Field(ge=1, le=100_000)] = 5_000,
    ) -> WriteResult:
        """Create file resources and directory concepts for a project directory."""
        with _tool_errors():
            return bootstrap(graph, directory, max_files)

    def read_node(uri: str) -> str:
        try:
            view = graph.get_concept(uri)
        except LlamaKBError as e:
            raise ResourceNotFoundError(str(e)) from e
        return json.dumps(view.model_dump(exclude={"active_context", "evicted"}), indent=2)

    @server.resource("concept://{workspace}/{+path}", mime_type="application/json")
    def concept_resource(workspace: str, path: str) -> str:
        """A concept with its relations, as JSON."""
        return read_node(f"concept://{workspace}/{path}")

    @server.resource("file://{workspace}/{+path}", mime_type="application/json")
    def file_resource(workspace: str, path: str) -> str:
        """A file resource with its metadata and relations, as JSON."""
        return read_node(f"file://{workspace}/{path}")

    return server


def serve(
    kb_dir: str | None,
    workspace: str = "default",
    linked: list[str] | None = None,
    context_size: int = 100,
    agent_config: str | None = None,
    http_port: int | None = None,
    git: bool = False,
    principal: str | None = None,
) -> None:
    """Open the knowledge base (or an agent's, from its YAML config) and serve it over MCP.

    Args:
        kb_dir: Knowledge base directory (``None``: ``$LLAMA_KB_DIR`` or the default).
        workspace: Workspace of new nodes and bare paths.
        linked: Other workspaces traversal may enter.
        context_size: Most nodes in the active context.
        agent_config: A seed-004 agent YAML; its knowledge is synced first and its
            ``knowledge_options`` become the defaults of ``retrieve`` and ``search``.
        http_port: Serve streamable HTTP on 127.0.0.1 at this port instead of stdio.
        git: Mirror agent-graph commits into the git repository ``<kb>/agent_git``.
        principal: Who the client is (``user@org``); default anonymous (public records).
    """
    require_mcp()
    from llama_kb.config import KBConfig
    from llama_kb.knowledge_base import KnowledgeBase

    agent = None
    if agent_config is not None:
        from llama_kb.agent_config import AgentKnowledge

        agent = AgentKnowledge.open(agent_config, kb_dir)
        agent.sync()
        kb, defaults = agent.kb, agent.defaults()
    else:
        kb, defaults = KnowledgeBase.open(config=KBConfig.from_env(kb_dir)), {}
    graph = AgentGraph.open(
        kb, git=git, workspace=workspace, linked=linked or (), context_size=context_size
    )
    try:
        server = build_server(kb, graph, defaults=defaults, principal=principal)
        # Everything loaded so far lives as long as the server: out of the collector's sight,
        # a full collection takes under a millisecond instead of 60-90 ms (README, Scale).
        gc.freeze()
        if http_port is None:
            server.run()
        else:
            server.run("streamable-http", host="127.0.0.1", port=http_port)
    finally:
        graph.close()
        kb.close()
