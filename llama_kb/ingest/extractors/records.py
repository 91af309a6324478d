"""Typed facts from structure: tables, ``Key: value`` lines, definition lists, front matter
and JSON records. No NLP and no LLM: the layout says what relates to what.

* a markdown table row: (first cell, column header, cell);
* a ``Key: value`` line (also ``- **Key**: value``): (document title, key, value);
* a definition list (``Term`` then ``: definition``): (term, ``is``, definition);
* front matter / JSONL metadata fields: (document title, field, value);
* a chunk that is a JSON object or array of objects: (record name, field, value).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from llama_kb import graph_model as gm
from llama_kb.ingest.extractors.base import GraphFragment
from llama_kb.types import SourceDocument, TextChunk

__all__ = ["RecordExtractor"]

_KEY_VALUE = re.compile(
    r"^\s*(?:[-*+]\s+)?(?:\*\*|__)?([A-Za-z][\w .()/-]{0,40}?)(?:\*\*|__)?\s*:\s+(\S.*)$"
)
_TABLE_ROW = re.compile(r"^\s*\|(.+)\|\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
_DEFINITION = re.compile(r"^\s*:\s+(\S.*)$")
_NAME_FIELDS = ("name", "title", "id", "key")
_MAX_VALUE_CHARS = 160
_MAX_VALUE_WORDS = 20
_SKIPPED_METADATA = frozenset(
    {"title", "doc_id", "source", "source_path", "heading_path", "chunk_index", "page", "format"}
)


class RecordExtractor:
    """Facts from tables, key-value lines, definition lists, front matter and JSON records
    (extractor name ``structure``)."""

    name = "structure"

    def extract(self, doc: SourceDocument, chunks: Sequence[TextChunk]) -> GraphFragment:
        """Fact nodes for every record field found in ``doc`` and its ``chunks``."""
        fragment = GraphFragment()
        if not chunks:
            return fragment
        title = doc.title or doc.doc_id
        seen: set[str] = set()
        found: list[tuple[TextChunk, tuple[str, str, str, str]]] = [
            (chunks[0], fact) for fact in _mapping_facts(title, doc.metadata, _SKIPPED_METADATA)
        ]
        for chunk in chunks:
            found.extend((chunk, fact) for fact in _chunk_facts(title, chunk.text))
        for chunk, (subject, predicate, obj, evidence) in found:
            node = gm.fact_node(subject, predicate, obj, chunk, evidence, self.name)
            if node.id not in seen:
                seen.add(node.id)
                fragment.nodes.append(node)
        return fragment


def _chunk_facts(title: str, text: str) -> Iterator[tuple[str, str, str, str]]:
    stripped = text.strip()
    if stripped[:1] in "{[":
        records = _json_records(stripped)
        if records is not None:
            for record in records:
                name = next((str(record[f]) for f in _NAME_FIELDS if _scalar(record.get(f))), title)
                yield from _mapping_facts(name, record, frozenset())
            return
    lines = text.splitlines()
    header: list[str] | None = None
    previous = ""
    for i, line in enumerate(lines):
        row = _TABLE_ROW.match(line)
        if row and not _TABLE_RULE.match(line):
            cells = [c.strip() for c in row.group(1).split("|")]
            following = lines[i + 1] if i + 1 < len(lines) else ""
            if header is None and _TABLE_RULE.match(following):
                header = cells
            elif header is not None:
                yield from _row_facts(header, cells, line.strip())
            continue
        if not _TABLE_RULE.match(line):
            header = None
        definition = _DEFINITION.match(line)
        if definition and previous.strip() and not previous.strip().endswith(":"):
            value = definition.group(1).strip()
            if _short(value):
                yield previous.strip(), "is", value, f"{previous.strip()}: {value}"
        else:
            pair = _KEY_VALUE.match(line)
            if pair and _short(pair.group(2)) and "://" not in pair.group(1):
                key, value = pair.group(1).strip(), pair.group(2).strip()
                yield title, _predicate(key), value.strip("*_ "), line.strip()
        previous = line


def _row_facts(
    header: Sequence[str], cells: Sequence[str], evidence: str
) -> Iterator[tuple[str, str, str, str]]:
    if len(cells) < 2 or not cells[0]:
        return
    subject = _plain(cells[0])
    for column, cell in zip(header[1:], cells[1:], strict=False):
        value = _plain(cell)
        if column and value and value not in {"-", "—", "n/a"}:
            yield subject, _predicate(_plain(column)), value, f"{evidence} ({column}: {value})"


def _mapping_facts(
    subject: str, record: Mapping[str, Any], skip: frozenset[str]
) -> Iterator[tuple[str, str, str, str]]:
    for key, value in record.items():
        if key in skip or key.startswith("_"):
            continue
        values = value if isinstance(value, list) else [value]
        for item in values:
            if _scalar(item) and str(item).strip() and _short(str(item)):
                text = str(item).strip()
                yield subject, _predicate(key), text, f"{key}: {text}"


def _json_records(text: str) -> list[dict[str, Any]] | None:
    try:
        data = json.loads(text)
    except ValueError:
        return None
    items = data if isinstance(data, list) else [data]
    records = [item for item in items if isinstance(item, dict)]
    return records or None


def _scalar(value: Any) -> bool:
    return isinstance(value, str | int | float | bool)


def _short(value: str) -> bool:
    return len(value) <= _MAX_VALUE_CHARS and len(value.split()) <= _MAX_VALUE_WORDS


def _plain(cell: str) -> str:
    """A cell without markdown emphasis, code marks or link syntax."""
    cell = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", cell)
    return cell.strip().strip("*_`").strip()


def _predicate(key: str) -> str:
    """``dependsOn`` / ``depends_on`` / ``Depends on`` -> ``depends on``."""
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", key.replace("_", " ").replace("-", " "))
    return " ".join(spaced.lower().split())
