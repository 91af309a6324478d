"""JSONL reader: good lines become documents, bad lines failures."""

from __future__ import annotations

import json
from pathlib import Path

from readers_helpers import (
    path_id,
    write,
)

from llama_kb.ingest.readers import (
    read_path,
)
from llama_kb.types import Segment


def test_jsonl_good_and_bad_lines(tmp_path: Path) -> None:
    lines = [
        json.dumps({"id": "a", "text": "Alpha text.", "title": "Alpha", "metadata": {"k": 1}}),
        "",
        "{not json",
        json.dumps({"text": "no id"}),
        json.dumps({"id": "b"}),
        json.dumps({"id": "c", "text": "   "}),
        json.dumps({"id": "a", "text": "again"}),
        json.dumps(["an", "array"]),
        json.dumps({"id": "d", "text": "Delta.", "metadata": ["not", "an", "object"]}),
        json.dumps({"id": 7, "text": "Seven.\r\nLines."}),
        json.dumps({"id": True, "text": "bool id"}),
        json.dumps({"id": "", "text": "empty id"}),
        json.dumps({"id": "e", "text": 5}),
        json.dumps({"id": "f", "text": "Foxtrot.", "title": 3}),
        json.dumps({"id": "g", "text": "Golf.", "extra": "ignored"}),
        "   ",
    ]
    path = write(tmp_path / "corpus.jsonl", "\n".join(lines) + "\n")
    result = read_path(path)

    assert [d.doc_id for d in result.documents] == ["a", "7", "g"]
    alpha, seven, golf = result.documents
    assert alpha.title == "Alpha"
    assert alpha.metadata == {"k": 1, "title": "Alpha"}
    assert alpha.segments == (Segment("Alpha text."),)
    assert alpha.source_path == path_id(path)
    assert seven.text == "Seven.\nLines."
    assert seven.title is None
    assert golf.metadata == {}

    failures = {f.source: f.reason for f in result.failures}
    assert list(failures) == [f"{path}:{n}" for n in (3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14)]
    assert failures[f"{path}:3"].startswith("invalid JSON: ")
    assert failures[f"{path}:4"] == "missing 'id'"
    assert failures[f"{path}:5"] == "missing 'text'"
    assert failures[f"{path}:6"] == "empty 'text'"
    assert failures[f"{path}:7"] == "duplicate id 'a' (first used on line 1)"
    assert failures[f"{path}:8"] == "expected a JSON object, got array"
    assert failures[f"{path}:9"] == "'metadata' must be an object, got array"
    assert failures[f"{path}:11"] == "'id' must be a string or integer, got boolean"
    assert failures[f"{path}:12"] == "empty 'id'"
    assert failures[f"{path}:13"] == "'text' must be a string, got number"
    assert failures[f"{path}:14"] == "'title' must be a string, got number"


def test_jsonl_reads_a_whole_corpus(tmp_path: Path) -> None:
    lines = (
        json.dumps({"id": f"doc-{i:05d}", "title": f"Title {i}", "text": "Some passage. " * 8})
        for i in range(3301)
    )
    path = write(tmp_path / "corpus.jsonl", "\n".join(lines))
    result = read_path(path)
    assert len(result.documents) == 3301
    assert result.failures == []


def test_jsonl_with_only_bad_lines_returns_failures(tmp_path: Path) -> None:
    result = read_path(write(tmp_path / "bad.jsonl", "[1]\n{}\n"))
    assert result.documents == []
    assert [f.reason for f in result.failures] == [
        "expected a JSON object, got array",
        "missing 'id'",
    ]
