"""PDF reader: pages, titles, encryption and damaged files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from readers_helpers import (
    make_pdf,
    only_doc,
    write,
)

from llama_kb.errors import DocumentError
from llama_kb.ingest.chunking import chunk_document
from llama_kb.ingest.readers import (
    read_path,
)


def test_pdf_one_segment_per_page_with_text(tmp_path: Path) -> None:
    pages = ["Alpha page one.\nMore alpha (one).", "", "Gamma page three."]
    path = write(tmp_path / "report.pdf", make_pdf(pages, title="Quarterly Report"))
    doc = only_doc(read_path(path))

    assert [s.metadata["page"] for s in doc.segments] == [1, 3]
    assert "Alpha page one." in doc.segments[0].text
    assert "More alpha (one)." in doc.segments[0].text
    assert "Gamma page three." in doc.segments[1].text
    assert doc.title == "Quarterly Report"
    chunks = chunk_document(doc, chunk_size=200, chunk_overlap=20)
    assert [(c.metadata["page"], "Gamma" in c.text) for c in chunks] == [(1, False), (3, True)]


def test_pdf_title_falls_back_to_stem(tmp_path: Path) -> None:
    doc = only_doc(read_path(write(tmp_path / "scan-42.pdf", make_pdf(["Some text."]))))
    assert doc.title == "scan-42"


def test_pdf_without_text_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path / "scanned.pdf", make_pdf(["", ""]))
    with pytest.raises(DocumentError, match=r"no extractable text \(scanned PDF\?\)"):
        read_path(path)


def test_pdf_with_permissions_only_encryption_is_read(tmp_path: Path) -> None:
    doc = only_doc(read_path(write(tmp_path / "locked.pdf", make_pdf(["Open text."], password=""))))
    assert "Open text." in doc.text


def test_pdf_needing_a_password_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path / "secret.pdf", make_pdf(["Hidden text."], password="s3cret"))
    with pytest.raises(DocumentError, match="encrypted"):
        read_path(path)


def test_corrupt_pdf_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path / "junk.pdf", os.urandom(4096))
    with pytest.raises(DocumentError, match="not a valid PDF") as info:
        read_path(path)
    assert info.value.source == str(path)


def test_truncated_pdf_is_an_error(tmp_path: Path) -> None:
    data = make_pdf(["First page text.", "Second page text."])
    path = write(tmp_path / "cut.pdf", data[: len(data) // 2])
    with pytest.raises(DocumentError, match="not a valid PDF"):
        read_path(path)
