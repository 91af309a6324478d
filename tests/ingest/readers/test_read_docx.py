"""DOCX reader: sections, tables, links, titles and damaged files."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import docx
import pytest
from readers_helpers import (
    headings,
    make_docx,
    only_doc,
)

from llama_kb.errors import DocumentError
from llama_kb.ingest.readers import (
    read_path,
)


def test_docx_sections_tables_and_links(tmp_path: Path) -> None:
    doc = only_doc(read_path(make_docx(tmp_path / "handbook.docx")))

    assert headings(doc) == [[], ["Setup"], ["Setup", "Details"], ["Usage"]]
    assert doc.segments[0].text == "Operations Handbook\n\nRead this first."
    setup = doc.segments[1].text
    assert setup.startswith("Setup\n\nInstall the tool. See the site")
    assert "Name | Value\nport | 8080" in setup
    assert doc.segments[2].text == "Details\n\nDeep details live here."
    assert doc.links == ("https://example.org/install",)
    assert doc.title == "Operations Handbook"


def test_docx_core_title_wins(tmp_path: Path) -> None:
    doc = only_doc(read_path(make_docx(tmp_path / "h.docx", core_title="Core Title")))
    assert doc.title == "Core Title"


def test_docx_title_falls_back_to_first_heading_then_stem(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_paragraph("Preamble.")
    document.add_heading("First Heading", 2)
    document.add_paragraph("Body.")
    document.save(str(tmp_path / "a.docx"))
    assert only_doc(read_path(tmp_path / "a.docx")).title == "First Heading"

    document = docx.Document()
    document.add_paragraph("Only a paragraph.")
    document.save(str(tmp_path / "plain.docx"))
    assert only_doc(read_path(tmp_path / "plain.docx")).title == "plain"


def test_docx_without_text_is_an_error(tmp_path: Path) -> None:
    docx.Document().save(str(tmp_path / "blank.docx"))
    with pytest.raises(DocumentError, match="no text"):
        read_path(tmp_path / "blank.docx")


@pytest.mark.parametrize("kind", ["random bytes", "zip without a document"])
def test_corrupt_docx_is_an_error(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "broken.docx"
    if kind == "random bytes":
        path.write_bytes(os.urandom(2048))
    else:
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("garbage.bin", os.urandom(512))
    with pytest.raises(DocumentError, match=r"not a valid \.docx"):
        read_path(path)
