"""Route retrieved knowledge into prompt sections by ``info_type`` (seed 000).

Routing rules:

========================================  =====================================================
Source                                    Section
========================================  =====================================================
Entity (and global) metadata              ``metadata_info_type`` (default ``user_profile``)
Knowledge pieces                          the piece's own ``info_type``
Relations that link a piece               the linked piece's ``info_type``
Relations from the active entity          ``entity_edge_info_type`` (default ``user_profile``)
Other relations                           ``default_edge_info_type`` (default ``context``)
========================================  =====================================================

Each section is rendered by a formatter: the default :class:`KnowledgeFormatter` blocks
(metadata lines, pieces, relations), or per ``info_type`` a callable taking a
:class:`KnowledgeSection`, a Jinja2 template, or a ``str.format`` string. Templates see
``text`` (the default rendering), ``info_type``, ``metadata``, ``global_metadata``, ``pieces``
and ``relationships`` (lists of dicts, in output order).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from llama_kb.access import Principal
from llama_kb.errors import ConfigurationError, QueryError
from llama_kb.knowledge.formatter import KnowledgeFormatter, ScoredPiece
from llama_kb.knowledge.retrieval import GraphContextItem, RetrievalResult, retrieve_knowledge
from llama_kb.knowledge.store import HasKnowledge, KnowledgeStore

USER_PROFILE = "user_profile"
CONTEXT = "context"


@dataclass
class KnowledgeSection:
    """Everything routed to one prompt section.

    Attributes:
        info_type: The section name.
        metadata: The active entity's metadata (only in the metadata section).
        global_metadata: The global metadata (only in the metadata section).
        pieces: ``(piece, score)`` sorted by ``(-score, piece_id)``.
        relationships: Relations sorted by ``(relation_type, target_id, source_id)``.
    """

    info_type: str
    metadata: dict[str, Any] = field(default_factory=dict)
    global_metadata: dict[str, Any] = field(default_factory=dict)
    pieces: list[ScoredPiece] = field(default_factory=list)
    relationships: list[GraphContextItem] = field(default_factory=list)

    def template_vars(self, formatter: KnowledgeFormatter) -> dict[str, Any]:
        """The variables templates see (all plain data, in output order)."""
        return {
            "text": default_section_text(self, formatter),
            "info_type": self.info_type,
            "metadata": dict(sorted(self.metadata.items())),
            "global_metadata": dict(sorted(self.global_metadata.items())),
            "pieces": [
                {
                    **piece.model_dump(mode="json", exclude={"created_at", "updated_at"}),
                    "score": score,
                    "text": formatter.format_piece(piece, score),
                }
                for piece, score in self.pieces
            ],
            "relationships": [
                {**item.to_dict(), "text": formatter.format_relationship(item)}
                for item in self.relationships
            ],
        }


SectionFormatter = Callable[[KnowledgeSection], str]


def default_section_text(section: KnowledgeSection, formatter: KnowledgeFormatter) -> str:
    """Metadata lines, global metadata lines, pieces and relations, blank-line separated."""
    return formatter.format_blocks(
        [
            formatter.format_metadata(section.metadata),
            formatter.format_metadata(section.global_metadata),
            formatter.format_pieces(section.pieces),
            formatter.format_relationships(section.relationships),
        ]
    )


class FormatStringFormatter:
    """A section formatter from a ``str.format`` template, e.g. ``"Profile:\\n{text}"``."""

    def __init__(self, template: str, formatter: KnowledgeFormatter | None = None) -> None:
        self.template = template
        self.formatter = formatter or KnowledgeFormatter()

    def __call__(self, section: KnowledgeSection) -> str:
        try:
            return self.template.format(**section.template_vars(self.formatter))
        except (KeyError, IndexError, AttributeError) as e:
            raise ConfigurationError(
                f"format template for section {section.info_type!r} uses an unknown field "
                f"{e}; available: text, info_type, metadata, global_metadata, pieces, "
                "relationships"
            ) from e


class Jinja2Formatter:
    """A section formatter from a Jinja2 template (source text or a ``jinja2.Template``).

    Undefined variables raise an error instead of rendering as empty text; output is not
    HTML-escaped (it is a prompt, not a web page).
    """

    def __init__(self, template: Any, formatter: KnowledgeFormatter | None = None) -> None:
        if isinstance(template, str):
            try:
                import jinja2
            except ImportError as e:  # pragma: no cover - jinja2 comes with llama-index-core
                raise ConfigurationError(
                    "Jinja2 section templates need the package 'jinja2': pip install jinja2"
                ) from e
            env = jinja2.Environment(
                undefined=jinja2.StrictUndefined,
                autoescape=False,
                trim_blocks=True,
                lstrip_blocks=True,
            )
            template = env.from_string(template)
        self.template = template
        self.formatter = formatter or KnowledgeFormatter()

    def __call__(self, section: KnowledgeSection) -> str:
        return str(self.template.render(**section.template_vars(self.formatter)))


def as_section_formatter(spec: Any, formatter: KnowledgeFormatter) -> SectionFormatter:
    """A callable section formatter from a callable, a Jinja2 template or a format string.

    A string containing ``{{`` or ``{%`` is a Jinja2 template; any other string is a
    ``str.format`` template. Wrap a string in :class:`FormatStringFormatter` or
    :class:`Jinja2Formatter` to choose explicitly.

    Raises:
        ConfigurationError: ``spec`` is none of these.
    """
    if isinstance(spec, str):
        if "{{" in spec or "{%" in spec:
            return Jinja2Formatter(spec, formatter)
        return FormatStringFormatter(spec, formatter)
    if hasattr(spec, "render") and not callable(spec):
        return Jinja2Formatter(spec, formatter)
    if callable(spec):
        return spec  # type: ignore[no-any-return]
    raise ConfigurationError(
        f"a section formatter must be a callable, a Jinja2 template or a format string, "
        f"not {type(spec).__name__}"
    )


KNOWLEDGE, PASSAGES, FACTS = "knowledge", "passages", "facts"
SOURCES = frozenset({KNOWLEDGE, PASSAGES, FACTS})
"""What a :class:`KnowledgeProvider` can draw on."""


class KnowledgeProvider:
    """A callable ``query -> {info_type: text}`` for prompts (seed 000's ``knowledge_provider``).

    Args:
        kb: An open knowledge base (or its :class:`KnowledgeStore`).
        entity_id: The active entity (``user:alice``).
        formatters: Per ``info_type``: a callable taking a :class:`KnowledgeSection`, a
            Jinja2 template or a ``str.format`` string.
        formatter: Renders sections without a formatter of their own.
        top_k: Most pieces from the search (default: the knowledge base's ``top_k``).
        graph_traversal_depth: Hops of the graph search from the entity.
        knowledge_types: Only pieces of these knowledge types.
        tags: Only pieces with one of these tags.
        metadata_info_type: Section of the entity's and global metadata.
        entity_edge_info_type: Section of relations from the entity without a linked piece.
        default_edge_info_type: Section of other relations without a linked piece.
        principal: Who asks (:mod:`llama_kb.access`); default anonymous (public knowledge).
        sources: What to draw on: ``knowledge`` (the three layers, default), ``passages``
            and ``facts`` (document passages and typed facts of ``kb.retrieve``, as the
            ``passages`` / ``facts`` sections; ``kb`` must be a knowledge base).

    Example:
        >>> provider = KnowledgeProvider(kb, entity_id="user:alice")  # doctest: +SKIP
        >>> provider("Set up an LES simulation for jet noise")["user_profile"]  # doctest: +SKIP
        'specialization: turbomachinery\\nteam: aero'
    """

    def __init__(
        self,
        kb: KnowledgeStore | HasKnowledge,
        entity_id: str | None = None,
        *,
        formatters: Mapping[str, Any] | None = None,
        formatter: KnowledgeFormatter | None = None,
        top_k: int | None = None,
        graph_traversal_depth: int = 2,
        knowledge_types: Iterable[str] | None = None,
        tags: Iterable[str] | None = None,
        metadata_info_type: str = USER_PROFILE,
        entity_edge_info_type: str = USER_PROFILE,
        default_edge_info_type: str = CONTEXT,
        principal: Principal | Mapping[str, Any] | str | None = None,
        sources: Iterable[str] = ("knowledge",),
    ) -> None:
        self.kb = kb
        self.principal = principal
        self.sources = frozenset(sources)
        unknown = self.sources - SOURCES
        if unknown or not self.sources:
            raise ConfigurationError(
                f"unknown provider sources {sorted(unknown)}; use some of {sorted(SOURCES)}"
            )
        if self.sources & {PASSAGES, FACTS} and not callable(getattr(kb, "retrieve", None)):
            raise ConfigurationError("passages and facts need a KnowledgeBase as kb")
        self.entity_id = entity_id
        self.formatter = formatter or KnowledgeFormatter()
        self.formatters = {
            key: as_section_formatter(spec, self.formatter)
            for key, spec in (formatters or {}).items()
        }
        self.top_k = top_k
        self.graph_traversal_depth = graph_traversal_depth
        self.knowledge_types = None if knowledge_types is None else list(knowledge_types)
        self.tags = None if tags is None else list(tags)
        self.metadata_info_type = metadata_info_type
        self.entity_edge_info_type = entity_edge_info_type
        self.default_edge_info_type = default_edge_info_type

    def retrieve(self, query: str) -> RetrievalResult:
        """The raw retrieval for ``query`` as seen by the active entity."""
        if not isinstance(query, str):
            raise QueryError(f"the query must be a string, not {type(query).__name__}")
        return retrieve_knowledge(
            self.kb,
            query,
            entity_id=self.entity_id,
            top_k=self.top_k,
            graph_traversal_depth=self.graph_traversal_depth,
            knowledge_types=self.knowledge_types,
            tags=self.tags,
            principal=self.principal,
        )

    def route(self, result: RetrievalResult) -> dict[str, KnowledgeSection]:
        """Group a retrieval result into sections, sorted by ``info_type``."""
        sections: dict[str, KnowledgeSection] = {}

        def section(info_type: str) -> KnowledgeSection:
            return sections.setdefault(info_type, KnowledgeSection(info_type))

        if result.metadata is not None and result.metadata.properties:
            section(self.metadata_info_type).metadata = dict(result.metadata.properties)
        if result.global_metadata is not None and result.global_metadata.properties:
            target = section(self.metadata_info_type)
            target.global_metadata = dict(result.global_metadata.properties)
        for piece, score in sorted(result.pieces, key=lambda ps: (-ps[1], ps[0].piece_id)):
            section(piece.info_type).pieces.append((piece, score))
        for item in sorted(
            result.graph_context, key=lambda i: (i.relation_type, i.target_id, i.source_id)
        ):
            if item.linked_piece is not None:
                info_type = item.linked_piece.info_type
            elif item.from_entity:
                info_type = self.entity_edge_info_type
            else:
                info_type = self.default_edge_info_type
            section(info_type).relationships.append(item)
        return dict(sorted(sections.items()))

    def sections(self, query: str) -> dict[str, KnowledgeSection]:
        """The routed, unformatted sections for ``query``."""
        return self.route(self.retrieve(query))

    def format(self, sections: Mapping[str, KnowledgeSection]) -> dict[str, str]:
        """Render routed sections with their formatters."""
        rendered = {}
        for info_type, section in sections.items():
            custom = self.formatters.get(info_type)
            text = custom(section) if custom else default_section_text(section, self.formatter)
            rendered[info_type] = text
        return rendered

    def __call__(self, query: str) -> dict[str, str]:
        """``{info_type: text}`` for ``query``, keys sorted; empty sections are left out."""
        rendered = self.format(self.sections(query)) if KNOWLEDGE in self.sources else {}
        if self.sources & {PASSAGES, FACTS}:
            rendered.update(self._documents(query))
        return dict(sorted(rendered.items()))

    def _documents(self, query: str) -> dict[str, str]:
        """The ``passages`` / ``facts`` sections from ``kb.retrieve`` as the principal."""
        options: dict[str, Any] = {"principal": self.principal}
        if self.top_k is not None:
            options["top_k"] = self.top_k
        context = self.kb.retrieve(query, **options)  # type: ignore[union-attr]
        found = {}
        if PASSAGES in self.sources and context.unstructured:
            found[PASSAGES] = "\n\n".join(
                f"[{h.metadata.get('title') or h.doc_id}] {h.text}" for h in context.unstructured
            )
        if FACTS in self.sources and context.structured_facts:
            found[FACTS] = "\n".join(f.render() for f in context.structured_facts)
        return found

    async def acall(self, query: str) -> dict[str, str]:
        """Async :meth:`__call__` (store calls run in a worker thread)."""
        return await asyncio.to_thread(self, query)

    def __repr__(self) -> str:
        return f"KnowledgeProvider(kb={self.kb!r}, entity_id={self.entity_id!r})"
