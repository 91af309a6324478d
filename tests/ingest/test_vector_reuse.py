"""Stored vectors are reused: a rename or move inside a root, or an edit, embeds no old text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from llama_index.core.base.embeddings.base import BaseEmbedding

from llama_kb import KnowledgeBase
from tests.conftest import CountingEmbedding


@pytest.fixture
def counting(embedding: BaseEmbedding) -> CountingEmbedding:
    return CountingEmbedding(inner=embedding)


def test_renamed_file_is_rekeyed_without_embedding(
    tmp_path: Path, counting: CountingEmbedding, docs_dir: Path
) -> None:
    with KnowledgeBase.open(tmp_path / "kb", embedding=counting) as kb:
        kb.ingest(docs_dir, root=docs_dir)
        original = sorted(docs_dir.glob("*.md"))[0]
        chunks = {d.doc_id: d.chunks for d in kb.documents()}[original.name]
        stored = kb.vectors.count()
        (docs_dir / "moved").mkdir()
        original.rename(docs_dir / "moved" / "renamed.md")
        embedded = counting.texts_embedded

        report = kb.ingest(docs_dir, root=docs_dir)  # no prune: a move is not a copy

        assert report.ok, report.failed
        assert counting.texts_embedded == embedded
        assert report.added == ["moved/renamed.md"] and report.removed == [original.name]
        documents = {d.doc_id: d for d in kb.documents()}
        assert original.name not in documents and documents["moved/renamed.md"].chunks == chunks
        assert kb.vectors.count() == stored
        assert {d.source for d in kb.documents()} == {r.path for r in kb.manifest.sources()}


def test_moved_file_keeping_its_document_ids(tmp_path: Path, counting: CountingEmbedding) -> None:
    root = tmp_path / "data"
    root.mkdir()
    rows = [
        {"id": f"r{i}", "title": f"Row {i}", "text": f"Row {i} is about topic {i}."}
        for i in range(3)
    ]
    (root / "a.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    with KnowledgeBase.open(tmp_path / "kb", embedding=counting) as kb:
        kb.ingest(root, root=root)
        embedded = counting.texts_embedded
        (root / "a.jsonl").rename(root / "b.jsonl")

        report = kb.ingest(root, root=root, prune=True)

        assert report.ok, report.failed
        assert counting.texts_embedded == embedded
        assert sorted(report.updated) == ["r0", "r1", "r2"] and not report.removed
        assert {d.source for d in kb.documents()} == {"b.jsonl"}
        assert [r.path for r in kb.manifest.sources()] == ["b.jsonl"]
        assert kb.search("topic 1", top_k=1)[0].doc_id == "r1"


def test_an_edit_embeds_only_the_changed_chunks(
    tmp_path: Path, counting: CountingEmbedding
) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    sections = [
        f"## Part {i}\n\n" + f"Part {i} explains step {i} of the process. " * 12 for i in range(4)
    ]
    page = root / "guide.md"
    page.write_text("# Guide\n\n" + "\n\n".join(sections))
    with KnowledgeBase.open(tmp_path / "kb", embedding=counting) as kb:
        kb.ingest(root, root=root)
        chunks = kb.documents()[0].chunks
        assert chunks >= 4
        embedded = counting.texts_embedded
        page.write_text(page.read_text().replace("step 2 of", "stage 2 of"))

        report = kb.ingest(root, root=root)

        assert report.updated == ["guide.md"]
        assert counting.texts_embedded - embedded == 1
        assert kb.documents()[0].chunks == chunks
