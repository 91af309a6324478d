"""Lifecycle: list, remove then re-ingest, rebuild, relative identity, copies and moves."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from llama_index.core.schema import Document

from llama_kb import KBConfig, KnowledgeBase
from tests.conftest import CountingEmbedding


def test_documents_lists_what_is_stored(example_kb: KnowledgeBase, docs_dir: Path) -> None:
    stored = example_kb.documents()
    assert stored and all(d.status == "ready" and d.chunks > 0 for d in stored)
    first = stored[0]
    assert Path(first.location).is_file() and first.source == first.location
    assert len(first.content_hash) == 64 and first.ingested_at > 0
    assert sum(d.chunks for d in stored) == example_kb.vectors.count()


def test_remove_then_reingest_works(example_kb: KnowledgeBase, docs_dir: Path) -> None:
    doc_id = example_kb.documents()[0].doc_id
    assert example_kb.remove([doc_id]) == [doc_id]
    assert doc_id not in {d.doc_id for d in example_kb.documents()}
    report = example_kb.ingest(docs_dir)
    assert report.added == [doc_id]  # the file is still there: it comes back
    assert len(report.unchanged) == len(example_kb.documents()) - 1


def test_rebuild_rederives_everything(kb: KnowledgeBase, docs_dir: Path) -> None:
    kb.ingest(docs_dir)
    kb.add_documents([Document(text="The Vector Indexer embeds chunks.", id_="mem-1")])
    before = {d.doc_id: d.chunks for d in kb.documents()}
    relations = kb.graph.count_relations()
    report = kb.rebuild()
    assert report.ok, report.failed
    assert sorted(report.added) == sorted(before)
    assert {d.doc_id: d.chunks for d in kb.documents()} == before
    assert kb.vectors.count() == sum(before.values())
    assert kb.graph.count_relations() == relations
    assert kb.search("What embeds chunks?", top_k=1)[0].doc_id == "mem-1"


def test_rebuild_after_a_chunking_change(tmp_path: Path, embedding, docs_dir: Path) -> None:
    with KnowledgeBase.open(tmp_path / "kb", embedding=embedding) as kb:
        kb.ingest(docs_dir)
        default_chunks = kb.vectors.count()
    config = KBConfig.build(path=tmp_path / "kb", chunking={"chunk_size": 64, "chunk_overlap": 8})
    with KnowledgeBase.open(config=config, embedding=embedding) as kb:
        report = kb.rebuild()
        assert report.ok and report.chunks_over_window == 0
        assert kb.vectors.count() > default_chunks


MEMORY_DOCUMENT = Document(text="The Vector Indexer embeds chunks. " * 60, id_="mem-1")


def _characters_kb(path: Path, embedding, docs_dir: Path) -> dict[str, int]:
    """Ingest ``docs_dir`` and one in-memory document with the character chunker; returns
    each document's chunk count."""
    characters = KBConfig.build(path=path, chunking={"unit": "characters"})
    with KnowledgeBase.open(config=characters, embedding=embedding) as kb:
        kb.ingest(docs_dir)
        kb.add_documents([MEMORY_DOCUMENT])
        return {d.doc_id: d.chunks for d in kb.documents()}


def test_a_knowledge_base_keeps_its_chunking_when_opened_without_one(
    tmp_path: Path, embedding, docs_dir: Path
) -> None:
    chunks = _characters_kb(tmp_path / "kb", embedding, docs_dir)
    with KnowledgeBase.open(tmp_path / "kb", embedding=embedding) as kb:
        assert kb.config.chunking.unit == "characters"
        # 1,080 characters: two chunks by characters (1000/200), one by tokens
        (docs_dir / "late.txt").write_text("The indexer writes vectors quickly. " * 30)
        report = kb.ingest(docs_dir)
        assert sorted(report.unchanged) == sorted(set(chunks) - {"mem-1"})
        assert len(report.added) == 1
        late = next(d for d in kb.documents() if d.doc_id.endswith("late.txt"))
        assert late.chunks == 2


def test_an_explicit_chunking_change_rechunks_on_the_next_ingest(
    tmp_path: Path, embedding, docs_dir: Path
) -> None:
    before = _characters_kb(tmp_path / "kb", embedding, docs_dir)
    small = KBConfig.build(path=tmp_path / "kb", chunking={"chunk_size": 48, "chunk_overlap": 8})
    with KnowledgeBase.open(config=small, embedding=embedding) as kb:
        report = kb.ingest(docs_dir)
        assert report.ok and not report.unchanged
        assert sorted(report.updated) == sorted(d for d in before if d != "mem-1")
        kb.add_documents([MEMORY_DOCUMENT])
        after = {d.doc_id: d.chunks for d in kb.documents()}
        assert after.keys() == before.keys()
        assert all(after[d] > before[d] for d in before), (before, after)
        assert kb.vectors.count() == sum(after.values())
        assert kb.ingest(docs_dir).unchanged  # read with this chunking now: nothing to do
    stored = json.loads((tmp_path / "kb" / "kb.json").read_text(encoding="utf-8"))
    assert stored["chunking"]["unit"] == "tokens" and stored["chunking"]["chunk_size"] == 48


def test_rechunked_documents_keep_the_vectors_of_unchanged_chunk_texts(
    tmp_path: Path, embedding, docs_dir: Path
) -> None:
    counting = CountingEmbedding(inner=embedding)  # not bundled: a 512-token window
    with KnowledgeBase.open(tmp_path / "kb", embedding=counting) as kb:
        kb.ingest(docs_dir)
        chunks = kb.vectors.count()
    embedded = counting.texts_embedded
    same_cuts = KBConfig.build(path=tmp_path / "kb", chunking={"unit": "tokens", "window": 512})
    with KnowledgeBase.open(config=same_cuts, embedding=counting) as kb:
        report = kb.ingest(docs_dir)  # another pipeline setting, the same chunk texts
        assert report.ok and report.updated and not report.unchanged
        assert kb.vectors.count() == chunks and counting.texts_embedded == embedded


def test_moved_folder_keeps_ids_and_is_not_embedded_again(
    tmp_path: Path, embedding, docs_dir: Path
) -> None:
    counting = CountingEmbedding(inner=embedding)
    with KnowledgeBase.open(tmp_path / "kb", embedding=counting) as kb:
        first = kb.ingest(docs_dir, root=docs_dir)
        ids = sorted(first.added)
        assert all(not Path(i).is_absolute() for i in ids)  # relative to the root
        moved = tmp_path / "elsewhere" / "docs"
        shutil.copytree(docs_dir, moved)  # same mtimes: a stat suffices
        (moved / ids[0]).touch()  # a new mtime: the hash says it is unchanged
        shutil.rmtree(docs_dir)
        embedded = counting.texts_embedded
        report = kb.ingest(moved, root=moved, prune=True)
        assert report.ok, report.failed
        assert sorted(report.unchanged) == ids and not report.added and not report.removed
        assert counting.texts_embedded == embedded
        assert {d.location for d in kb.documents()} <= {(moved / i).as_posix() for i in ids}


def test_copy_inside_the_root_is_recognised_by_hash(kb: KnowledgeBase, docs_dir: Path) -> None:
    kb.ingest(docs_dir, root=docs_dir)
    original = sorted(docs_dir.glob("*.md"))[0]
    shutil.copy(original, docs_dir / "copy-of-it.md")
    report = kb.ingest(docs_dir, root=docs_dir)
    assert not report.added and len(report.duplicates) == 1
    assert original.name in report.duplicates[0]
    assert "copy-of-it.md" not in {d.doc_id for d in kb.documents()}


def test_renamed_file_is_a_move_not_a_copy(kb: KnowledgeBase, docs_dir: Path) -> None:
    kb.ingest(docs_dir, root=docs_dir)
    original = sorted(docs_dir.glob("*.md"))[0]
    original.rename(docs_dir / "renamed.md")
    report = kb.ingest(docs_dir, root=docs_dir, prune=True)
    assert report.added == ["renamed.md"] and report.removed == [original.name]
    assert not report.duplicates


def test_cli_ingest_with_a_root(tmp_path: Path, docs_dir: Path) -> None:
    from llama_kb.cli import main

    kb_dir = tmp_path / "cli-kb"
    code = main(["ingest", str(docs_dir), "--root", str(docs_dir), "--kb", str(kb_dir), "--quiet"])
    assert code == 0
    with KnowledgeBase.open(kb_dir) as kb:
        assert "team.txt" in {d.doc_id for d in kb.documents()}


def test_links_resolve_between_root_relative_documents(kb: KnowledgeBase, docs_dir: Path) -> None:
    kb.ingest(docs_dir, root=docs_dir)
    links = {t for _, t, _, _ in kb.graph.iter_relations(["LINKS_TO"])}
    assert "doc:graph-updater.md" in links
    assert {t.removeprefix("doc:") for t in links} <= {d.doc_id for d in kb.documents()}
