"""Source code reader (Python, JavaScript/TypeScript, Go, Java, Rust, C/C++): one segment per
definition.

Each function, method, class (header up to its first member), struct, trait, ... becomes a
segment with metadata ``symbol`` (the enclosing path, ``Class.method``), ``kind``,
``language``, ``start_line`` and ``end_line``; code outside any definition (imports,
constants) becomes one ``module`` segment. The calls each definition makes and the file's
imports ride along in ``_``-prefixed metadata (not copied to chunks) for
:class:`~llama_kb.ingest.extractors.code.CodeStructureExtractor`. The title is the file name.
"""

from __future__ import annotations

from pathlib import Path

from llama_kb.ingest.readers._base import file_document
from llama_kb.ingest.readers._code_parse import LANGUAGES, CodeStructure, Definition, parse_code
from llama_kb.ingest.readers._text import read_text_file
from llama_kb.types import Segment, SourceDocument

__all__ = ["CODE_SUFFIXES", "read_code"]

CODE_SUFFIXES = tuple(sorted(LANGUAGES))


def _own_ranges(definition: Definition) -> list[tuple[int, int]]:
    """Byte ranges of a definition's own text: without nested definitions."""
    if not definition.children:
        return [(definition.start, definition.end)]
    return [(definition.start, definition.children[0].start)]


def _segment(
    data: bytes, ranges: list[tuple[int, int]], metadata: dict[str, object]
) -> Segment | None:
    text = "\n".join(data[a:b].decode("utf-8", "replace").rstrip() for a, b in ranges).strip("\n")
    return Segment(text=text, metadata=metadata) if text.strip() else None


def _module_ranges(structure: CodeStructure, size: int) -> list[tuple[int, int]]:
    """Byte ranges outside every top-level definition."""
    ranges = []
    position = 0
    for definition in structure.definitions:
        if definition.parent is None or definition.start >= position:
            if definition.start > position:
                ranges.append((position, definition.start))
            position = max(position, definition.end)
    if position < size:
        ranges.append((position, size))
    return ranges


def read_code(path: Path) -> SourceDocument:
    """Read a source file into definition segments (see the module docs).

    Raises:
        DocumentError: The file is unreadable, empty, binary or not UTF-8.
        MissingDependencyError: tree-sitter is not installed (``llama-kb[code]``).
    """
    text = read_text_file(path)
    data = text.encode("utf-8")
    language = LANGUAGES[path.suffix.lower()]
    structure = parse_code(data, language)
    base = {"language": language}
    segments: list[Segment] = []
    module = _segment(
        data,
        _module_ranges(structure, len(data)),
        {
            **base,
            "symbol": "",
            "kind": "module",
            "_imports": structure.imports,
            "_imported_names": structure.imported_names,
            "_calls": structure.module_calls,
        },
    )
    if module is not None:
        segments.append(module)
    for definition in structure.definitions:
        segment = _segment(
            data,
            _own_ranges(definition),
            {
                **base,
                "symbol": definition.qualified,
                "kind": definition.kind,
                "start_line": definition.start_line,
                "end_line": definition.end_line,
                "_parent": definition.parent,
                "_calls": sorted(set(definition.calls)),
            },
        )
        if segment is not None:
            segments.append(segment)
    if not segments:
        segments.append(Segment(text=text.strip(), metadata={**base, "kind": "module"}))
    return file_document(path, tuple(segments), path.name, metadata={"language": language})
