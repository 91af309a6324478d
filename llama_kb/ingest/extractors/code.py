"""Typed facts from source code: what a file defines, imports and calls.

For documents read by :func:`~llama_kb.ingest.readers.code.read_code`:

* chunk ``DEFINES`` ``symbol:<Class.method>`` (weight 0: a definition and its code go
  together); the symbol node carries ``kind``, ``language``, ``path``, ``line``, ``doc_id``;
* symbol ``MEMBER_OF`` its enclosing symbol (weight 0);
* symbol ``CALLS`` symbol, where resolvable: a name defined in the same file (a method of
  the same class first), or a name the file imports (``symbol:<name>``, the id a top-level
  definition of that name in another file has);
* the file's module chunk ``IMPORTS`` ``module:<name>``.

So "what calls X" is the ``CALLS`` relations into ``symbol:X`` and "where is Y defined" the
``DEFINES`` relation into ``symbol:Y`` (its chunk has ``source_path`` and lines).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_kb import graph_model as gm
from llama_kb.ingest.extractors.base import GraphFragment
from llama_kb.types import SourceDocument, TextChunk

__all__ = ["CALLS", "DEFINES", "IMPORTS", "MEMBER_OF", "CodeStructureExtractor", "symbol_id"]

DEFINES = "DEFINES"
MEMBER_OF = "MEMBER_OF"
CALLS = "CALLS"
IMPORTS = "IMPORTS"


def symbol_id(qualified: str) -> str:
    """Graph id of a code symbol (``Class.method``, or a top-level ``name``)."""
    return f"symbol:{qualified}"


def _symbol(qualified: str, **properties: Any) -> gm.NamedNode:
    return gm.NamedNode(
        id_=symbol_id(qualified), name=qualified, label=gm.SYMBOL, properties=properties
    )


class CodeStructureExtractor:
    """Definitions, members, calls and imports of code documents as graph facts.

    Documents without code segments (no ``symbol`` metadata) give nothing.
    """

    def extract(self, doc: SourceDocument, chunks: Sequence[TextChunk]) -> GraphFragment:
        """See the module docs."""
        fragment = GraphFragment()
        language = doc.metadata.get("language")
        if not language or not chunks:
            return fragment
        first_chunk: dict[str, str] = {}
        for chunk in chunks:
            first_chunk.setdefault(str(chunk.metadata.get("symbol", "")), chunk.chunk_id)
        defined = {str(s.metadata["symbol"]) for s in doc.segments if s.metadata.get("symbol")}
        imported: set[str] = set()
        for segment in doc.segments:
            meta = segment.metadata
            if meta.get("kind") == "module":
                imported.update(meta.get("_imported_names") or ())
                module_chunk = first_chunk.get("", chunks[0].chunk_id)
                for module in meta.get("_imports") or ():
                    node = gm.NamedNode(
                        id_=f"module:{module}", name=module, label=gm.SYMBOL,
                        properties={"kind": "module"},
                    )  # fmt: skip
                    fragment.nodes.append(node)
                    fragment.relations.append(
                        gm.relation(module_chunk, IMPORTS, node.id, gm.MENTION_COST)
                    )
        for segment in doc.segments:
            meta = segment.metadata
            qualified = meta.get("symbol")
            if not qualified or qualified not in first_chunk:
                continue
            node = _symbol(
                qualified, kind=meta.get("kind"), language=language, doc_id=doc.doc_id,
                path=doc.source_path, line=meta.get("start_line"),
            )  # fmt: skip
            fragment.nodes.append(node)
            fragment.relations.append(gm.relation(first_chunk[qualified], DEFINES, node.id, 0.0))
            parent = meta.get("_parent")
            if parent:
                if parent not in defined:
                    fragment.nodes.append(_symbol(parent, placeholder=True))
                fragment.relations.append(gm.relation(node.id, MEMBER_OF, symbol_id(parent), 0.0))
            for callee in meta.get("_calls") or ():
                target = _resolve(callee, parent, defined, imported)
                if target is not None and target != qualified:
                    if target not in defined:
                        fragment.nodes.append(_symbol(target, placeholder=True))
                    fragment.relations.append(
                        gm.relation(node.id, CALLS, symbol_id(target), gm.MENTION_COST)
                    )
        return fragment


def _resolve(callee: str, parent: str | None, defined: set[str], imported: set[str]) -> str | None:
    """The qualified name a call to ``callee`` means, when it can be told."""
    if parent and f"{parent}.{callee}" in defined:
        return f"{parent}.{callee}"
    if callee in defined or callee in imported:
        return callee
    return None
