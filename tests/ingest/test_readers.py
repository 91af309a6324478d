"""Readers: every supported format from real files, and every kind of bad input."""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path

import docx
import pytest
from docx.opc.constants import RELATIONSHIP_TYPE
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

from llama_kb.errors import DocumentError
from llama_kb.ingest.chunking import chunk_document
from llama_kb.ingest.readers import (
    ReadResult,
    read_html,
    read_path,
    register_reader,
    supported_suffixes,
)
from llama_kb.types import Segment, SourceDocument

# --------------------------------------------------------------------------- fixture builders


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


# --------------------------------------------------------------------------- markdown

MARKDOWN = """\
---
title: Front Title
author: "Ada Lovelace"
draft: true
year: 2021
tags:
  - a
  - b
---
Intro before any heading, see [the guide](guide.md#install "Guide").

# Guide

Guide text with ![a picture](pic.png) and [[Wiki Page|an alias]] and ![[embedded.png]].

## Install

```bash
# not a heading
echo "[in code](code.md)"
```

Use `[inline code](inline.md)` carefully; then [[Other Note]].

### Deep #

Deep text, <https://example.org/auto> and [ref link][r].

[r]: reference-target.md

# Reference

Final words [again](guide.md#install).
"""


def test_markdown_sections_follow_headings_outside_code(tmp_path: Path) -> None:
    path = write(tmp_path / "notes.md", MARKDOWN)
    doc = only_doc(read_path(path))

    assert headings(doc) == [
        [],
        ["Guide"],
        ["Guide", "Install"],
        ["Guide", "Install", "Deep"],
        ["Reference"],
    ]
    install = doc.segments[2].text
    assert install.startswith("## Install")
    assert "# not a heading" in install
    assert doc.segments[3].text.startswith("### Deep #")
    assert doc.segments[0].text.startswith("Intro before any heading")
    assert "title: Front Title" not in doc.text


def test_markdown_front_matter_becomes_metadata_and_title(tmp_path: Path) -> None:
    doc = only_doc(read_path(write(tmp_path / "notes.md", MARKDOWN)))
    assert doc.metadata == {
        "title": "Front Title",
        "author": "Ada Lovelace",
        "draft": True,
        "year": 2021,
    }
    assert doc.title == "Front Title"
    assert doc.doc_id == path_id(tmp_path / "notes.md")
    assert doc.source_path == doc.doc_id


def path_id(path: Path) -> str:
    return path.resolve().as_posix()


def test_markdown_links_exclude_images_and_code(tmp_path: Path) -> None:
    doc = only_doc(read_path(write(tmp_path / "notes.md", MARKDOWN)))
    assert doc.links == (
        "guide.md#install",
        "Wiki Page",
        "Other Note",
        "https://example.org/auto",
        "reference-target.md",
    )


def test_markdown_title_falls_back_to_first_h1_then_stem(tmp_path: Path) -> None:
    with_h1 = write(tmp_path / "a.md", "Text\n\n## Sub first\n\n# Real Title\n\nbody\n")
    assert only_doc(read_path(with_h1)).title == "Real Title"
    without = write(tmp_path / "plain-notes.md", "Just text, no heading.\n")
    doc = only_doc(read_path(without))
    assert doc.title == "plain-notes"
    assert doc.segments == (Segment("Just text, no heading.", {"heading_path": []}),)


def test_markdown_heading_only_sections_are_folded_into_children(tmp_path: Path) -> None:
    path = write(tmp_path / "a.md", "# Top\n\n## Sub\n\nBody.\n")
    doc = only_doc(read_path(path))
    assert [(s.text, s.metadata) for s in doc.segments] == [
        ("## Sub\n\nBody.", {"heading_path": ["Top", "Sub"]})
    ]


def test_markdown_crlf_is_normalised(tmp_path: Path) -> None:
    path = write(tmp_path / "a.md", "# T\r\n\r\nline one\r\nline two\r\n")
    doc = only_doc(read_path(path))
    assert "\r" not in doc.text
    assert doc.segments[0].text == "# T\n\nline one\nline two"


# --------------------------------------------------------------------------- text


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


# --------------------------------------------------------------------------- PDF


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


# --------------------------------------------------------------------------- DOCX


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


# --------------------------------------------------------------------------- HTML

HTML = """<!DOCTYPE html>
<html>
<head>
  <title>  The   Page Title </title>
  <style>body { color: red; } .LEAK_STYLE {}</style>
  <script>var LEAK_HEAD_SCRIPT = 1;</script>
</head>
<body>
  <nav><a href="#top">Skip</a> <a href="javascript:void(0)">Menu</a></nav>
  <p>Intro   paragraph
     spanning lines with <b>bo</b>ld and <a href="other.html">a link</a>.</p>
  <script>document.write("LEAK_BODY_SCRIPT")</script>
  <noscript>LEAK_NOSCRIPT</noscript>
  <template><p>LEAK_TEMPLATE</p></template>
  <svg><text>LEAK_SVG</text></svg>
  <div hidden>LEAK_HIDDEN</div>
  <h1>Main <em>Topic</em></h1>
  <div>First block</div><div>Second block</div>
  <ul><li>item one</li><li>item two</li></ul>
  <h2>Sub Part</h2>
  <table><tr><td>cell A</td><td>cell B</td></tr></table>
  <pre>line 1
    indented line 2</pre>
  <p>See <a href="https://example.org/x?a=1&amp;b=2">this</a> and line<br>break.</p>
  <!-- LEAK_COMMENT -->
  <h1>Second Top</h1>
  <p>Closing words.</p>
</body>
</html>
"""


@pytest.fixture(params=["lxml", "html.parser"])
def html_parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    from llama_kb.ingest.readers import html

    monkeypatch.setattr(html, "_html_parser", lambda: request.param)
    return str(request.param)


def test_html_text_sections_and_links(tmp_path: Path, html_parser: str) -> None:
    doc = only_doc(read_path(write(tmp_path / "page.html", HTML)))

    assert "LEAK" not in doc.text
    assert doc.title == "The Page Title"
    assert headings(doc) == [[], ["Main Topic"], ["Main Topic", "Sub Part"], ["Second Top"]]
    intro, main, sub, last = (s.text for s in doc.segments)
    assert "Intro paragraph spanning lines with bold and a link." in intro
    assert main.split("\n") == [
        "Main Topic",
        "",
        "First block",
        "Second block",
        "",
        "item one",
        "item two",
    ]
    assert "cell A cell B" in sub
    assert "line 1\n    indented line 2" in sub
    assert "See this and line\nbreak." in sub
    assert last == "Second Top\n\nClosing words."
    assert doc.links == ("other.html", "https://example.org/x?a=1&b=2")


def test_html_title_falls_back_to_h1_then_stem(tmp_path: Path) -> None:
    with_h1 = write(tmp_path / "a.htm", "<body><p>x</p><h1>Heading One</h1><p>y</p></body>")
    assert only_doc(read_path(with_h1)).title == "Heading One"
    plain = write(tmp_path / "bare-page.html", "<p>Just a paragraph.</p>")
    assert only_doc(read_path(plain)).title == "bare-page"


def test_xhtml_with_xml_declaration(tmp_path: Path) -> None:
    page = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<html xmlns="http://www.w3.org/1999/xhtml"><head><title>X</title></head>'
        "<body><p>Caf\u00e9 text.</p></body></html>"
    )
    doc = only_doc(read_path(write(tmp_path / "x.html", page)))
    assert doc.text == "Caf\u00e9 text."


def test_html_without_visible_text_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path / "s.html", "<html><head><title>T</title></head><script>x()</script>")
    with pytest.raises(DocumentError, match="no visible text"):
        read_html(path)


# --------------------------------------------------------------------------- JSONL


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


# --------------------------------------------------------------------------- bad inputs

TEXT_SUFFIXES = [".md", ".txt", ".html", ".jsonl"]


@pytest.mark.parametrize("suffix", [*TEXT_SUFFIXES, ".pdf", ".docx"])
def test_empty_file(tmp_path: Path, suffix: str) -> None:
    path = write(tmp_path / f"empty{suffix}", b"")
    with pytest.raises(DocumentError, match="empty file"):
        read_path(path)


@pytest.mark.parametrize("suffix", TEXT_SUFFIXES)
def test_whitespace_only_file(tmp_path: Path, suffix: str) -> None:
    path = write(tmp_path / f"blank{suffix}", " \n\t\r\n  \n")
    with pytest.raises(DocumentError, match="empty file"):
        read_path(path)


@pytest.mark.parametrize("suffix", TEXT_SUFFIXES)
def test_invalid_utf8_names_the_byte(tmp_path: Path, suffix: str) -> None:
    path = write(tmp_path / f"latin1{suffix}", "caf\u00e9 au lait".encode("latin-1"))
    with pytest.raises(DocumentError) as info:
        read_path(path)
    assert info.value.reason == "not valid UTF-8 at byte 3; re-save as UTF-8"
    assert info.value.source == str(path)


def test_invalid_utf8_offset_counts_the_bom(tmp_path: Path) -> None:
    path = write(tmp_path / "bom.txt", b"\xef\xbb\xbfab\xff")
    with pytest.raises(DocumentError, match="at byte 5;"):
        read_path(path)


@pytest.mark.parametrize("suffix", TEXT_SUFFIXES)
def test_utf8_bom_is_stripped(tmp_path: Path, suffix: str) -> None:
    body = '{"id": "x", "text": "Hello."}' if suffix == ".jsonl" else "Hello."
    path = write(tmp_path / f"bom{suffix}", b"\xef\xbb\xbf" + body.encode())
    doc = only_doc(read_path(path))
    assert doc.text == "Hello."


@pytest.mark.parametrize("suffix", TEXT_SUFFIXES)
def test_binary_content_under_text_suffix(tmp_path: Path, suffix: str) -> None:
    path = write(tmp_path / f"image{suffix}", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(200))
    with pytest.raises(DocumentError, match="looks like a binary file, not text"):
        read_path(path)


def test_control_bytes_without_nul_are_binary(tmp_path: Path) -> None:
    path = write(tmp_path / "data.txt", bytes(range(1, 9)) * 50)
    with pytest.raises(DocumentError, match="looks like a binary file"):
        read_path(path)


def test_utf16_file_is_explained(tmp_path: Path) -> None:
    path = write(tmp_path / "wide.txt", "hello".encode("utf-16"))
    with pytest.raises(DocumentError, match="UTF-16; re-save it as UTF-8"):
        read_path(path)


def test_directory_passed_as_file(tmp_path: Path) -> None:
    folder = tmp_path / "folder.md"
    folder.mkdir()
    with pytest.raises(DocumentError, match="is a directory, not a file"):
        read_path(folder)


def test_missing_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope.md"
    with pytest.raises(DocumentError, match="no such file or directory") as info:
        read_path(missing)
    assert info.value.source == str(missing)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads anything")
def test_unreadable_file(tmp_path: Path) -> None:
    path = write(tmp_path / "private.txt", "secret")
    path.chmod(0)
    try:
        with pytest.raises(DocumentError, match="permission denied"):
            read_path(path)
    finally:
        path.chmod(0o600)


def test_unsupported_suffix_lists_supported_ones(tmp_path: Path) -> None:
    path = write(tmp_path / "data.xyz", "text")
    with pytest.raises(DocumentError) as info:
        read_path(path)
    assert info.value.reason.startswith("unsupported file type '.xyz'; supported: ")
    for suffix in (".md", ".txt", ".pdf", ".docx", ".html", ".htm", ".jsonl"):
        assert suffix in info.value.reason


def test_file_without_suffix_is_unsupported(tmp_path: Path) -> None:
    with pytest.raises(DocumentError, match=r"unsupported file type \(no extension\)"):
        read_path(write(tmp_path / "Makefile", "all:"))


def test_errors_never_contain_document_text(tmp_path: Path) -> None:
    path = write(tmp_path / "x.txt", b"TOP-SECRET\x00" * 10)
    with pytest.raises(DocumentError) as info:
        read_path(path)
    assert "TOP-SECRET" not in str(info.value)


# --------------------------------------------------------------------------- registry


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
