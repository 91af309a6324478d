"""Markdown reader: heading sections, front matter, links, titles."""

from __future__ import annotations

from pathlib import Path

from readers_helpers import (
    headings,
    only_doc,
    path_id,
    write,
)

from llama_kb.ingest.readers import (
    read_path,
)
from llama_kb.types import Segment

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
