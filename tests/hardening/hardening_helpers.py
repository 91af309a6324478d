"""Builders for hostile inputs and a snapshot of everything a knowledge base stores."""

from __future__ import annotations

import io
import os
import socket
import sys
import zipfile
from pathlib import Path
from typing import Any

from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the reader builders
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo: benchmarks/
from ingest.readers.readers_helpers import make_docx, make_pdf

from llama_kb import KnowledgeBase

__all__ = [
    "docx_bomb",
    "make_docx",
    "make_pdf",
    "make_socket",
    "pdf_bomb",
    "snapshot",
]


def snapshot(kb: KnowledgeBase) -> dict[str, Any]:
    """Counts and ids of every store, to compare before and after a bad input.

    Source records are left out on purpose: a JSONL file whose every line failed is still
    recorded as read, so that an unchanged file is not read again.
    """
    counts = kb.manifest.counts()
    return {
        "documents": counts["documents"],
        "chunks": counts["chunks"],
        "pending": sorted(d.doc_id for d in kb.manifest.documents() if d.status != "ready"),
        "vectors": kb.vectors.count(),
        "graph_nodes": kb.graph.count_nodes(),
        "graph_relations": kb.graph.count_relations(),
        "pieces": kb.knowledge.pieces.count(),
        "entities": len(kb.knowledge.metadata.entities()),
    }


def pdf_bomb(decompressed: int) -> bytes:
    """A one-page PDF whose content stream inflates to ``decompressed`` bytes."""
    writer = PdfWriter()
    page = writer.add_blank_page(612, 792)
    stream = DecodedStreamObject()
    stream.set_data(b"BT /F1 12 Tf ET\n" + b" " * decompressed)
    page.replace_contents(stream.flate_encode())
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def docx_bomb(path: Path, decompressed: int) -> Path:
    """A real ``.docx`` with an extra member that inflates to ``decompressed`` bytes."""
    make_docx(path)
    with zipfile.ZipFile(path, "a", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/media/padding.bin", b"\0" * decompressed)
    return path


def docx_from_the_future(path: Path) -> Path:
    """A real ``.docx`` whose first member says it needs zip version 6.4 to extract
    (``zipfile`` raises ``NotImplementedError`` for it; found by fuzzing)."""
    make_docx(path)
    data = bytearray(path.read_bytes())
    entry = data.index(b"PK\x01\x02")  # the first central directory record
    data[entry + 6] = 64  # "version needed to extract"
    path.write_bytes(bytes(data))
    return path


def make_socket(path: Path) -> Path:
    """A Unix socket file at ``path`` (left behind after closing)."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(path))
    finally:
        server.close()
    return path


def make_fifo(path: Path) -> Path:
    """A named pipe: reading it would block forever."""
    os.mkfifo(path)
    return path
