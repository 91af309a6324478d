"""The suffix registry: adding formats and rejecting bad suffixes."""

from __future__ import annotations

from pathlib import Path

import pytest
from readers_helpers import (
    only_doc,
    write,
)

from llama_kb.ingest.readers import (
    ReadResult,
    read_path,
    register_reader,
    supported_suffixes,
)
from llama_kb.types import Segment, SourceDocument


def test_register_reader_adds_a_format(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from llama_kb.ingest import readers

    monkeypatch.setattr(readers, "_READERS", dict(readers._READERS))

    def read_rst(path: Path) -> SourceDocument:
        text = path.read_text(encoding="utf-8")
        return SourceDocument(str(path), str(path), (Segment(text),), title="rst")

    register_reader("RST", read_rst)
    assert ".rst" in supported_suffixes()
    doc = only_doc(read_path(write(tmp_path / "a.rst", "Title\n=====")))
    assert doc.title == "rst"


def test_register_reader_rejects_a_bad_suffix() -> None:
    with pytest.raises(ValueError, match="invalid file suffix"):
        register_reader("a/b", lambda path: ReadResult())
