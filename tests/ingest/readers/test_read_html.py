"""HTML reader with lxml and html.parser: visible text, sections, links."""

from __future__ import annotations

from pathlib import Path

import pytest
from readers_helpers import (
    headings,
    only_doc,
    write,
)

from llama_kb.errors import DocumentError
from llama_kb.ingest.readers import (
    read_html,
    read_path,
)

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
