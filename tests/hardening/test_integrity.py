"""Integrity: the write lock, corrupt stores at open, orphans and their repair, the doctor."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.base.embeddings.base import BaseEmbedding

from llama_kb import KnowledgeBase
from llama_kb import graph_model as gm
from llama_kb.cli import main
from llama_kb.config import KBConfig
from llama_kb.doctor import run_checks
from llama_kb.errors import CorruptStoreError, KnowledgeBaseError
from llama_kb.ingest.chunking import chunk_document
from llama_kb.ingest.guards.limits import json_depth
from llama_kb.ingest.lock import LOCK_FILE, write_lock
from llama_kb.types import Segment, SourceDocument


def test_json_depth_ignores_brackets_in_strings() -> None:
    assert json_depth('{"a": "[[[[{{{{", "b": [1, [2]]}') == 3
    assert json_depth('"\\"[["') == 0
    assert json_depth("[" * 500) == 500


# -- the write lock ---------------------------------------------------------------------------


def _hold_lock(root: Path) -> subprocess.Popen[str]:
    """Another process holding the lock the way :func:`write_lock` takes it (``flock``).

    Plain ``fcntl`` keeps the process light (importing llama_kb takes seconds on a busy CI).
    """
    code = textwrap.dedent(
        f"""
        import fcntl, os, time
        fd = os.open({str(root / LOCK_FILE)!r}, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        print("locked", flush=True)
        time.sleep(60)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    return proc


def test_a_second_writer_waits_then_fails_and_a_killed_holder_releases(tmp_path: Path) -> None:
    holder = _hold_lock(tmp_path)
    try:
        started = time.monotonic()
        with (
            pytest.raises(KnowledgeBaseError, match=f"pid {holder.pid}"),
            write_lock(tmp_path, timeout=0.3),
        ):
            pass
        assert time.monotonic() - started >= 0.3
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    with write_lock(tmp_path, timeout=5), write_lock(tmp_path, timeout=0):  # re-entrant
        pass


def test_ingest_waits_for_another_process_to_finish(kb: KnowledgeBase, tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\nwritten once the lock is free")
    reports: list[Any] = []
    holder = _hold_lock(kb.config.path)
    try:
        writer = threading.Thread(target=lambda: reports.append(kb.ingest(tmp_path / "a.md")))
        writer.start()
        writer.join(timeout=1.0)
        assert writer.is_alive() and kb.vectors.count() == 0  # blocked, nothing written
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    writer.join(timeout=60)
    assert reports and reports[0].ok and reports[0].added


# -- corrupt stores ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, embedding: BaseEmbedding) -> Path:
    root = tmp_path_factory.mktemp("built")
    (root / "a.md").write_text("# A\nSome text about compressors.")
    with KnowledgeBase.open(root / "kb", embedding=embedding) as kb:
        assert kb.ingest(root / "a.md").ok
    return root / "kb"


@pytest.mark.parametrize(
    ("target", "store"),
    [
        ("manifest.sqlite", "manifest"),
        ("graph.sqlite", "graph (embedded SQLite)"),
        ("chroma/chroma.sqlite3", "vectors (embedded Chroma)"),
    ],
)
@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_corrupt_store_is_a_named_error_and_is_not_overwritten(
    built: Path, tmp_path: Path, embedding: BaseEmbedding, target: str, store: str, damage: str
) -> None:
    copy = tmp_path / f"{damage}-{target.replace('/', '-')}"
    shutil.copytree(built, copy)
    file = copy / target
    data = file.read_bytes()
    broken = b"garbage!" * 128 + data[1024:] if damage == "garbage" else data[: len(data) // 3]
    file.write_bytes(broken)
    for wal in file.parent.glob(file.name + "-*"):
        wal.unlink()
    with pytest.raises(CorruptStoreError) as error:
        KnowledgeBase.open(copy, embedding=embedding)
    assert error.value.store == store
    assert "re-ingest" in str(error.value)
    assert file.read_bytes() == broken  # nothing overwritten


def test_doctor_reports_a_corrupt_store(
    built: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    copy = tmp_path / "kb"
    shutil.copytree(built, copy)
    (copy / "manifest.sqlite").write_bytes(b"not a database" * 100)
    monkeypatch.delenv("CHROMA_HOST", raising=False)
    assert main(["doctor", "--kb", str(copy)]) == 1
    assert "[FAIL] stores integrity: the manifest at" in capsys.readouterr().out


def test_doctor_reports_a_missing_extra(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "redis", None)  # import redis -> ImportError
    config = KBConfig(path=tmp_path, falkordb={"url": "redis://127.0.0.1:1"})
    check = run_checks(config)[-1]
    assert not check.ok
    assert "cannot import redis" in check.detail
    assert check.fix == "pip install 'llama-kb[falkordb]'"


# -- orphans and repair -----------------------------------------------------------------------


def _plant_orphans(kb: KnowledgeBase) -> None:
    """Vectors and graph nodes of a document the manifest does not know, and a pending row."""
    ghost = SourceDocument("ghost", "/nowhere/ghost.md", (Segment("boo, a ghost chunk"),))
    chunks = chunk_document(ghost)
    kb.vectors.add(chunks, kb.embedding.get_text_embedding_batch([c.text for c in chunks]))
    kb.graph.upsert_nodes([gm.document_node(ghost), *[gm.chunk_node(c) for c in chunks]])
    kb.graph.upsert_relations(
        [gm.relation(c.chunk_id, gm.PART_OF, gm.doc_node_id("ghost"), 0.0) for c in chunks]
    )
    kb.manifest.mark_pending([("half", "/nowhere/half.md", None)])


def test_doctor_finds_and_repairs_orphans(
    example_kb: KnowledgeBase, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    kb = example_kb
    before = (kb.manifest.counts(), kb.vectors.count())
    _plant_orphans(kb)
    assert not kb.repair(dry_run=True).ok
    monkeypatch.delenv("CHROMA_HOST", raising=False)
    path = str(kb.config.path)
    assert main(["doctor", "--kb", path]) == 1
    assert "found: orphan vectors 1, orphan graph 1, unfinished 1" in capsys.readouterr().out
    assert main(["doctor", "--kb", path, "--repair"]) == 0
    assert "repaired: orphan vectors 1" in capsys.readouterr().out
    assert kb.repair(dry_run=True).ok
    assert (kb.manifest.counts(), kb.vectors.count()) == before


def test_a_failed_batch_leaves_no_orphans(
    kb: KnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.md").write_text("# A\nabout pumps")

    def fail(*_: Any, **__: Any) -> None:
        raise ValueError("the graph store refused the batch")

    monkeypatch.setattr(kb.graph, "upsert_relations", fail)
    report = kb.ingest(tmp_path / "a.md")
    assert not report.added and "refused the batch" in report.failed[0].reason
    monkeypatch.undo()
    assert kb.vectors.count() == 0 and kb.manifest.counts()["documents"] == 0
    assert kb.repair(dry_run=True).ok
    assert kb.ingest(tmp_path / "a.md").added  # and the next run ingests it


def test_nan_embeddings_are_refused_before_any_write(
    kb: KnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.md").write_text("# A\nabout fans")
    dim = kb.embedding.dimension  # type: ignore[attr-defined]
    monkeypatch.setattr(
        kb.embedding.__class__,
        "get_text_embedding_batch",
        lambda self, texts, **_: [[float("nan")] * dim for _ in texts],
    )
    report = kb.ingest(tmp_path / "a.md")
    assert "NaN or infinite values" in report.failed[0].reason
    assert kb.vectors.count() == 0 and kb.repair(dry_run=True).ok
