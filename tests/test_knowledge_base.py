"""KnowledgeBase: opening, persistence, search, incremental ingestion, bad input."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import REPO, CountingEmbedding
from langchain_core.embeddings import Embeddings

from llama_kb import KnowledgeBase, KnowledgeBaseError, QueryError
from llama_kb import graph_model as gm


class HashEmbeddings(Embeddings):
    """A LangChain embeddings test double of another dimension (8), deterministic."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_query(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return [float((hash(text) >> i) & 1) + 0.1 for i in range(8)]


def chunk_ids_in_vectors(kb: KnowledgeBase) -> list[str]:
    return [chunk_id for chunk_id, _, _ in kb.vectors.iter_chunks()]


# -- opening -------------------------------------------------------------------------


def test_open_creates_and_reopens(tmp_path: Path, embedding) -> None:
    path = tmp_path / "kb"
    with KnowledgeBase.open(path, embedding=embedding) as kb:
        assert kb.stats()["documents"] == 0
    meta = json.loads((path / "kb.json").read_text())
    assert meta["embedding"]["dimension"] == 384
    with KnowledgeBase.open(path, embedding=embedding, create=False) as kb:
        assert kb.stats()["vectors"] == 0


def test_directory_that_is_not_a_kb(tmp_path: Path, embedding) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(KnowledgeBaseError, match="not a llama-kb knowledge base"):
        KnowledgeBase.open(tmp_path, embedding=embedding)
    with pytest.raises(KnowledgeBaseError, match="is a file"):
        KnowledgeBase.open(tmp_path / "notes.txt", embedding=embedding)
    with pytest.raises(KnowledgeBaseError, match="no knowledge base"):
        KnowledgeBase.open(tmp_path / "missing", embedding=embedding, create=False)
    assert not (tmp_path / "missing").exists()


def test_corrupt_marker_file(tmp_path: Path, embedding) -> None:
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "kb.json").write_text("{not json")
    with pytest.raises(KnowledgeBaseError, match="corrupt"):
        KnowledgeBase.open(tmp_path / "kb", embedding=embedding)


def test_other_embedding_dimension_is_refused(tmp_path: Path, embedding, docs_dir) -> None:
    with KnowledgeBase.open(tmp_path / "kb", embedding=embedding) as kb:
        kb.ingest(docs_dir)
    with pytest.raises(KnowledgeBaseError, match=r"dimension 384.*dimension 8"):
        KnowledgeBase.open(tmp_path / "kb", embedding=HashEmbeddings())
    with KnowledgeBase.open(tmp_path / "kb", embedding=embedding) as kb:
        assert kb.stats()["documents"] == 5  # nothing was damaged


def test_langchain_embeddings_are_accepted(tmp_path: Path, docs_dir: Path) -> None:
    with KnowledgeBase.open(tmp_path / "kb", embedding=HashEmbeddings()) as kb:
        report = kb.ingest(docs_dir)
        assert len(report.added) == 5
        assert kb.search("graph", top_k=2)


# -- ingestion and search ------------------------------------------------------------


def test_ingest_and_search(example_kb: KnowledgeBase, docs_dir: Path) -> None:
    hits = example_kb.search("Which model embeds the chunks?", top_k=3)
    assert hits[0].doc_id == (docs_dir / "vector-indexer.md").resolve().as_posix()
    meta = hits[0].metadata
    for key in ("doc_id", "source_path", "chunk_index", "content_hash", "title"):
        assert key in meta
    assert meta["title"] == "Vector Indexer"
    assert hits[0].score > hits[-1].score
    assert "_node_content" not in meta


def test_markdown_heading_path_reaches_chunks(example_kb: KnowledgeBase) -> None:
    hits = example_kb.search("What happens when a file cannot be parsed?", top_k=1)
    assert hits[0].metadata["heading_path"] == "Ingestion Pipeline > Failure handling"


def test_graph_without_llm(example_kb: KnowledgeBase, docs_dir: Path) -> None:
    graph = example_kb.graph
    pipeline_doc = gm.doc_node_id((docs_dir / "ingestion-pipeline.md").resolve().as_posix())
    interpreter_doc = gm.doc_node_id((docs_dir / "document-interpreter.md").resolve().as_posix())
    relations = list(graph.iter_relations())
    links = {(s, t) for s, t, kind, _ in relations if kind == gm.LINKS_TO}
    mentions = {(s, t) for s, t, kind, _ in relations if kind == gm.MENTIONS}
    chunks_of = {s: t for s, t, kind, _ in relations if kind == gm.PART_OF}
    # a markdown link between documents
    assert any(chunks_of[s] == pipeline_doc and t == interpreter_doc for s, t in links)
    # a known title mentioned in plain text (team.txt names the Document Interpreter)
    team = gm.doc_node_id((docs_dir / "team.txt").resolve().as_posix())
    assert any(chunks_of[s] == team and t == interpreter_doc for s, t in mentions)
    # headings become section nodes
    assert graph.count_nodes(gm.SECTION) >= 3


def test_unchanged_reingest_embeds_nothing(tmp_path: Path, embedding, docs_dir: Path) -> None:
    spy = CountingEmbedding(inner=embedding, model_name=embedding.model_name)
    with KnowledgeBase.open(tmp_path / "kb", embedding=spy) as kb:
        first = kb.ingest(docs_dir)
        embedded = spy.texts_embedded
        again = kb.ingest(docs_dir)
        assert len(first.added) == 5 and embedded > 0
        assert sorted(again.unchanged) == sorted(first.added)
        assert again.added == again.updated == again.removed == []
        assert spy.texts_embedded == embedded
        # touching a file without changing it re-hashes but still embeds nothing
        (docs_dir / "team.txt").touch()
        assert len(kb.ingest(docs_dir).unchanged) == 5
        assert spy.texts_embedded == embedded


def test_changed_document_replaces_chunks_and_links(
    example_kb: KnowledgeBase, docs_dir: Path
) -> None:
    team = docs_dir / "team.txt"
    team_node = gm.doc_node_id(team.resolve().as_posix())
    before = example_kb.stats()
    team.write_text("Tomás Ortega now also maintains the Vector Indexer.", encoding="utf-8")
    report = example_kb.ingest(docs_dir)
    assert report.updated == [team.resolve().as_posix()]
    hits = example_kb.search("Who maintains the Vector Indexer now?", top_k=5)
    texts = [h.text for h in hits if h.doc_id == team.resolve().as_posix()]
    assert texts == ["Tomás Ortega now also maintains the Vector Indexer."]
    assert example_kb.stats()["vectors"] == before["vectors"]  # one chunk before and after
    relations = list(example_kb.graph.iter_relations())
    team_chunks = {s for s, t, kind, _ in relations if kind == gm.PART_OF and t == team_node}
    mentioned = {t for s, t, kind, _ in relations if kind == gm.MENTIONS and s in team_chunks}
    indexer = gm.doc_node_id((docs_dir / "vector-indexer.md").resolve().as_posix())
    interpreter = gm.doc_node_id((docs_dir / "document-interpreter.md").resolve().as_posix())
    assert indexer in mentioned and interpreter not in mentioned


def test_prune_removes_vectors_graph_and_manifest(example_kb: KnowledgeBase, docs_dir: Path):
    gone = docs_dir / "graph-updater.md"
    gone_id = gone.resolve().as_posix()
    gone.unlink()
    kept = example_kb.ingest(docs_dir)
    assert kept.removed == []  # without prune nothing is deleted
    report = example_kb.ingest(docs_dir, prune=True)
    assert report.removed == [gone_id]
    assert all(h.doc_id != gone_id for h in example_kb.search("Graph Updater", top_k=10))
    assert example_kb.graph.named_nodes(ids=[gm.doc_node_id(gone_id)]) in (
        [],
        [(gm.doc_node_id(gone_id), gone_id, gm.DOCUMENT)],  # kept as a placeholder link target
    )
    assert example_kb.graph.count_nodes(gm.CHUNK) == example_kb.vectors.count()
    assert example_kb.stats()["documents"] == 4


def test_remove_by_id(example_kb: KnowledgeBase, docs_dir: Path) -> None:
    doc_id = (docs_dir / "team.txt").resolve().as_posix()
    assert example_kb.remove([doc_id, "no-such-doc"]) == [doc_id]
    assert example_kb.stats()["documents"] == 4
    assert example_kb.graph.count_nodes(gm.CHUNK) == example_kb.vectors.count()


def test_jsonl_ids_duplicates_and_bad_lines(kb: KnowledgeBase, tmp_path: Path) -> None:
    first = tmp_path / "a.jsonl"
    first.write_text(
        '{"id": "p1", "title": "Douglas Sirk", "text": "Douglas Sirk was a German director."}\n'
        '{"id": "p2", "title": "Sleep, My Love", "text": "Sleep, My Love is by Douglas Sirk."}\n'
        "not json\n"
        '{"id": "p3"}\n'
        '{"id": "p1", "text": "duplicate id in the same file"}\n',
        encoding="utf-8",
    )
    second = tmp_path / "b.jsonl"
    second.write_text('{"id": "p2", "text": "the same id from another file"}\n', encoding="utf-8")
    report = kb.ingest([first, second])
    assert sorted(report.added) == ["p1", "p2"]
    reasons = " | ".join(f"{f.source}: {f.reason}" for f in report.failed)
    assert "a.jsonl:3" in reasons and "a.jsonl:4" in reasons and "a.jsonl:5" in reasons
    assert "duplicate document id 'p2'" in reasons
    hit = kb.search("Which German director made films?", top_k=1)[0]
    assert hit.doc_id == "p1" and hit.metadata["title"] == "Douglas Sirk"


def test_bad_inputs_are_reported_and_the_rest_goes_on(kb: KnowledgeBase, tmp_path: Path):
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "good.md").write_text("# Good\n\nA fine document about retrieval.", "utf-8")
    (folder / "corrupt.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf")
    (folder / "corrupt.docx").write_bytes(b"PK\x03\x04 not a zip")
    (folder / "binary.txt").write_bytes(bytes(range(256)) * 4)
    (folder / "empty.md").write_text("", "utf-8")
    (folder / "latin1.txt").write_bytes("café au lait".encode("latin-1"))
    report = kb.ingest([folder, tmp_path / "does-not-exist"])
    assert [Path(d).name for d in report.added] == ["good.md"]
    failed = {Path(f.source.split(":")[0]).name: f.reason for f in report.failed}
    assert set(failed) == {
        "corrupt.pdf",
        "corrupt.docx",
        "binary.txt",
        "empty.md",
        "latin1.txt",
        "does-not-exist",
    }
    assert "UTF-8" in failed["latin1.txt"] and "empty" in failed["empty.md"]
    assert kb.stats()["documents"] == 1
    # a second run reports the same failures and keeps the good document
    again = kb.ingest(folder)
    assert again.unchanged == report.added and len(again.failed) == 5


@pytest.mark.parametrize("query", ["", "   \n\t"])
def test_empty_query_is_an_error(example_kb: KnowledgeBase, query: str) -> None:
    with pytest.raises(QueryError, match="empty"):
        example_kb.search(query)


def test_search_on_empty_kb_returns_nothing(kb: KnowledgeBase) -> None:
    assert kb.search("anything") == []


# -- processes -----------------------------------------------------------------------


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )


def test_persistence_across_processes(tmp_path: Path, embedding, docs_dir: Path) -> None:
    done = _python(f"""
        from llama_kb import KnowledgeBase
        with KnowledgeBase.open({str(tmp_path / "kb")!r}) as kb:
            print(len(kb.ingest({str(docs_dir)!r}).added))
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "5"
    with KnowledgeBase.open(tmp_path / "kb", embedding=embedding, create=False) as kb:
        assert kb.search("Who leads the Knowledge Team?", top_k=5)
        assert len(kb.ingest(docs_dir).unchanged) == 5


def test_killed_run_then_rerun_has_no_duplicates_or_gaps(
    tmp_path: Path, embedding, docs_dir: Path
) -> None:
    corpus = tmp_path / "corpus.jsonl"
    with corpus.open("w", encoding="utf-8") as f:
        for i in range(40):
            f.write(json.dumps({"id": f"d{i}", "title": f"Doc {i}", "text": f"Passage {i}. " * 30}))
            f.write("\n")
    killed = _python(f"""
        import os
        from llama_kb import KnowledgeBase, default_embedding
        from llama_kb.ingest import pipeline
        pipeline._BATCH_CHUNKS = 8
        real = default_embedding()
        calls = []
        original = type(real)._get_text_embeddings
        def dying(self, texts):
            calls.append(1)
            if len(calls) == 3:
                os._exit(9)  # killed half-way, no cleanup
            return original(self, texts)
        type(real)._get_text_embeddings = dying
        kb = KnowledgeBase.open({str(tmp_path / "kb")!r})
        kb.ingest({str(corpus)!r})
    """)
    assert killed.returncode == 9, killed.stderr
    with KnowledgeBase.open(tmp_path / "kb", embedding=embedding) as kb:
        partial = kb.vectors.count()
        assert 0 < partial < 40
        report = kb.ingest(corpus)
        ids = chunk_ids_in_vectors(kb)
        assert len(ids) == len(set(ids)) == 40
        assert kb.graph.count_nodes(gm.CHUNK) == 40
        assert sorted(report.added + report.updated + report.unchanged) == sorted(
            f"d{i}" for i in range(40)
        )
        assert all(d.status == "ready" for d in kb.manifest.documents())
        assert kb.ingest(corpus).unchanged  # and now it is stable
