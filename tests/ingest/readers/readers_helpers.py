"""Fixture builders shared by the reader tests: real PDF and DOCX files, small asserts."""

from __future__ import annotations

import io
from pathlib import Path

import docx
from docx.opc.constants import RELATIONSHIP_TYPE
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

from llama_kb.ingest.readers import (
    ReadResult,
)
from llama_kb.types import SourceDocument


def make_pdf(pages: list[str], *, title: str | None = None, password: str | None = None) -> bytes:
    """A real PDF with one Helvetica text page per entry ("" makes a page without text)."""
    writer = PdfWriter()
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }
    )
    for text in pages:
        page = writer.add_blank_page(612, 792)
        ops = []
        if text:
            ops.append("BT /F1 12 Tf 72 720 Td 14 TL")
            for line in text.split("\n"):
                escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
                ops.append(f"({escaped}) '")
            ops.append("ET")
        stream = DecodedStreamObject()
        stream.set_data("\n".join(ops).encode("latin-1"))
        page.replace_contents(stream)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}
        )
    if title is not None:
        writer.add_metadata({"/Title": title})
    if password is not None:
        writer.encrypt(user_password=password, owner_password="owner", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def add_hyperlink(paragraph: object, url: str, text: str) -> None:
    """python-docx has no API for hyperlinks; build the XML the way Word does."""
    r_id = paragraph.part.relate_to(url, RELATIONSHIP_TYPE.HYPERLINK, is_external=True)  # type: ignore[attr-defined]
    link = OxmlElement("w:hyperlink")
    link.set(qn("r:id"), r_id)
    run = OxmlElement("w:r")
    node = OxmlElement("w:t")
    node.text = text
    run.append(node)
    link.append(run)
    paragraph._p.append(link)  # type: ignore[attr-defined]


def make_docx(path: Path, *, core_title: str | None = None) -> Path:
    document = docx.Document()
    if core_title is not None:
        document.core_properties.title = core_title
    document.add_heading("Operations Handbook", 0)
    document.add_paragraph("Read this first.")
    document.add_heading("Setup", 1)
    paragraph = document.add_paragraph("Install the tool. See ")
    add_hyperlink(paragraph, "https://example.org/install", "the site")
    table = document.add_table(rows=2, cols=2)
    for row, values in zip(table.rows, [("Name", "Value"), ("port", "8080")], strict=True):
        for cell, value in zip(row.cells, values, strict=True):
            cell.text = value
    document.add_heading("Details", 2)
    document.add_paragraph("Deep details live here.")
    document.add_heading("Usage", 1)
    document.add_paragraph("Run it.")
    document.save(str(path))
    return path


def write(path: Path, content: str | bytes) -> Path:
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8", newline="")
    else:
        path.write_bytes(content)
    return path


def only_doc(result: ReadResult) -> SourceDocument:
    assert result.failures == []
    assert len(result.documents) == 1
    return result.documents[0]


def headings(doc: SourceDocument) -> list[list[str]]:
    return [s.metadata["heading_path"] for s in doc.segments]


def path_id(path: Path) -> str:
    return path.resolve().as_posix()
