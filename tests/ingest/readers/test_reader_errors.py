"""Every kind of bad input, across the readers, reported clearly."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from readers_helpers import (
    only_doc,
    write,
)

from llama_kb.errors import DocumentError
from llama_kb.ingest.readers import (
    read_path,
)

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
