"""Plain-text reader, and dispatch by suffix whatever its case."""

from __future__ import annotations

from pathlib import Path

from readers_helpers import (
    only_doc,
    path_id,
    write,
)

from llama_kb.ingest.readers import (
    read_path,
)
from llama_kb.types import Segment


def test_txt_is_one_segment_titled_by_stem(tmp_path: Path) -> None:
    path = write(tmp_path / "Read Me.txt", "\n\nFirst line.\r\nSecond line.\n\n")
    doc = only_doc(read_path(path))
    assert doc.segments == (Segment("First line.\nSecond line."),)
    assert doc.title == "Read Me"
    assert doc.doc_id == doc.source_path == path_id(path)
    assert doc.links == ()


def test_uppercase_suffix_is_dispatched(tmp_path: Path) -> None:
    doc = only_doc(read_path(write(tmp_path / "LOUD.TXT", "hello")))
    assert doc.text == "hello"
