"""The extractor protocol and the :class:`GraphFragment` extractors return."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from llama_index.core.graph_stores.types import LabelledNode, Relation

from llama_kb.types import SourceDocument, TextChunk

__all__ = ["GraphExtractor", "GraphFragment"]


@dataclass
class GraphFragment:
    """Nodes and relations to upsert for one document."""

    nodes: list[LabelledNode] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)


@runtime_checkable
class GraphExtractor(Protocol):
    """Anything that derives graph structure from a document's chunks."""

    def extract(self, doc: SourceDocument, chunks: Sequence[TextChunk]) -> GraphFragment:
        """Nodes and relations for ``doc``; relations should start at chunk ids."""
        ...
