"""Typed facts from source code: what a file defines, imports and calls.

For documents read by :func:`~llama_kb.ingest.readers.code.read_code`:

* chunk ``DEFINES`` ``symbol:<path>#<Class.method>`` (weight 0: a definition and its code
  go together), ``<path>`` being the file's key (its path relative to the root), so the same
  name defined in two files gives two nodes; the node's name is the qualified name and it
  carries ``kind``, ``language``, ``path``, ``line``, ``doc_id``;
* symbol ``MEMBER_OF`` its enclosing symbol (weight 0);
* symbol ``CALLS`` symbol, where resolvable: a name defined in the same file (a method of
  the same class first), or a name the file imports (``symbol:<name>``, a node without a
  path: which file defines it is not known at extraction);
* the file's module chunk ``IMPORTS`` ``module:<name>``.

So "what calls X" is the ``CALLS`` relations into the symbol nodes named ``X`` and "where
is Y defined" the ``DEFINES`` relations into the nodes named ``Y`` (one per defining file;
the chunk has ``source_path`` and lines).
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


def symbol_id(qualified: str, path: str | None = None) -> str:
    """Graph id of a code symbol (``Class.method``, or a top-level ``name``).

    Args:
        qualified: The symbol's qualified name.
        path: The key of the file defining it; ``None`` for a name whose file is not known
            (an imported name, or the enclosing type of a method defined elsewhere).
    """
    return f"symbol:{qualified}" if path is None else f"symbol:{path}#{qualified}"


def _symbol(qualified: str, file: str | None, **properties: Any) -> gm.NamedNode:
    return gm.NamedNode(
        id_=symbol_id(qualified, file), name=qualified, label=gm.SYMBOL, properties=properties
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
        path = doc.source_path

        def local_id(name: str) -> str:
            return symbol_id(name, path if name in defined else None)

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
                qualified, path, kind=meta.get("kind"), language=language, doc_id=doc.doc_id,
                path=path, line=meta.get("start_line"),
            )  # fmt: skip
            fragment.nodes.append(node)
            fragment.relations.append(gm.relation(first_chunk[qualified], DEFINES, node.id, 0.0))
            parent = meta.get("_parent")
            if parent:
                if parent not in defined:
                    fragment.nodes.append(_symbol(parent, None, placeholder=True))
                fragment.relations.append(gm.relation(node.id, MEMBER_OF, local_id(parent), 0.0))
            for callee in meta.get("_calls") or ():
                target = _resolve(callee, parent, defined, imported)
                if target is not None and target != qualified:
                    if target not in defined:
                        fragment.nodes.append(_symbol(target, None, placeholder=True))
                    fragment.relations.append(
                        gm.relation(node.id, CALLS, local_id(target), gm.MENTION_COST)
                    )
        return fragment


def _resolve(callee: str, parent: str | None, defined: set[str], imported: set[str]) -> str | None:
    """The qualified name a call to ``callee`` means, when it can be told."""
    if parent and f"{parent}.{callee}" in defined:
        return f"{parent}.{callee}"
    if callee in defined or callee in imported:
        return callee
    return None
