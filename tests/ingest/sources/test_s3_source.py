"""An S3 source against a real S3 API (moto's server on 127.0.0.1): add, change, delete."""

from __future__ import annotations

import shutil
import sys
import tempfile
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from llama_kb import KnowledgeBase
from llama_kb.ingest.sources import FsspecFiles
from tests.conftest import CountingEmbedding
from tests.servers import ManagedServer

pytest.importorskip("s3fs")
pytestmark = pytest.mark.integration

KEY, SECRET = "testing-key", "testing-secret-value"


class MotoServer(ManagedServer):
    """``moto_server`` from the virtualenv of the running interpreter."""

    def command(self) -> list[str]:
        exe = Path(sys.executable).parent / "moto_server"
        return [str(exe), "-H", "127.0.0.1", "-p", str(self.port)]

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.endpoint}/moto-api/", timeout=1) as response:
                return response.status == 200
        except OSError:
            return False

    @property
    def endpoint(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"


@pytest.fixture(scope="module")
def s3_server() -> Iterator[MotoServer]:
    if not (Path(sys.executable).parent / "moto_server").exists():
        pytest.skip("moto[server] is not installed")
    data_dir = Path(tempfile.mkdtemp(prefix="llama-kb-moto-"))
    server = MotoServer("moto", data_dir)
    server.start()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture
def bucket(s3_server: MotoServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    # s3fs: region from the environment, never in client_kwargs (bucket creation fails)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    name = f"kb-{uuid.uuid4().hex[:10]}"
    fs = _source(s3_server, f"s3://{name}").fs
    fs.mkdir(name)
    yield name


def _source(server: MotoServer, url: str) -> FsspecFiles:
    return FsspecFiles(
        url,
        storage_options={
            "key": SecretStr(KEY),
            "secret": SecretStr(SECRET),
            "endpoint_url": server.endpoint,
        },
    )


def test_s3_add_change_delete(
    s3_server: MotoServer, bucket: str, tmp_path: Path, embedding, caplog
) -> None:
    source = _source(s3_server, f"s3://{bucket}/docs")
    fs = source.fs
    fs.pipe(f"{bucket}/docs/updater.md", b"# Graph Updater\n\nWrites relations into the graph.\n")
    fs.pipe(f"{bucket}/docs/notes/team.txt", b"The Vector Indexer team owns embeddings.\n")
    fs.pipe(f"{bucket}/docs/image.png", b"\x89PNG not a document")
    counting = CountingEmbedding(inner=embedding)
    with KnowledgeBase.open(tmp_path / "kb", embedding=counting) as kb:
        report = kb.ingest(source)
        assert report.ok, report.failed
        assert sorted(report.added) == ["notes/team.txt", "updater.md"]  # relative to the root
        stored = {d.doc_id: d for d in kb.documents()}
        assert stored["updater.md"].location == f"s3://{bucket}/docs/updater.md"
        assert kb.search("Who writes relations?", top_k=1)[0].doc_id == "updater.md"

        embedded = counting.texts_embedded
        again = kb.ingest(source)  # same ETags: nothing read, nothing embedded
        assert sorted(again.unchanged) == ["notes/team.txt", "updater.md"]
        assert counting.texts_embedded == embedded

        fs.pipe(f"{bucket}/docs/updater.md", b"# Graph Updater\n\nNow also deletes relations.\n")
        changed = kb.ingest(source)
        assert changed.updated == ["updater.md"] and changed.unchanged == ["notes/team.txt"]
        assert "deletes" in kb.search("Who deletes relations?", top_k=1)[0].text

        fs.rm(f"{bucket}/docs/notes/team.txt")
        removed = kb.ingest(source, prune=True)
        assert removed.removed == ["notes/team.txt"]
        assert [d.doc_id for d in kb.documents()] == ["updater.md"]

        assert kb.rebuild(sources=[source]).added == ["updater.md"]
    assert SECRET not in repr(source) and SECRET not in caplog.text


def test_same_tree_locally_and_in_s3_has_the_same_ids(
    s3_server: MotoServer, bucket: str, tmp_path: Path, kb: KnowledgeBase
) -> None:
    local = tmp_path / "tree"
    (local / "sub").mkdir(parents=True)
    (local / "sub" / "a.md").write_text("# Alpha\n\nThe alpha component.\n")
    kb.ingest(local, root=local)
    source = _source(s3_server, f"s3://{bucket}/mirror")
    source.fs.put(str(local) + "/", f"{bucket}/mirror/", recursive=True)
    report = kb.ingest(source)
    assert report.unchanged == ["sub/a.md"] and not report.added


def test_rebuild_refuses_without_the_remote_source(
    s3_server: MotoServer, bucket: str, kb: KnowledgeBase
) -> None:
    from llama_kb.errors import ConfigurationError

    source = _source(s3_server, f"s3://{bucket}/r")
    source.fs.pipe(f"{bucket}/r/x.txt", b"Some text about the Graph Updater.\n")
    kb.ingest(source)
    with pytest.raises(ConfigurationError, match="pass its source"):
        kb.rebuild()
    assert [d.doc_id for d in kb.documents()] == ["x.txt"]  # nothing was deleted


def test_credentials_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    source = FsspecFiles.from_env("s3://bucket/prefix")
    assert isinstance(source.storage_options["secret"], SecretStr)
    assert SECRET not in repr(source) and source.root == "s3://bucket/prefix"


def test_remote_failures_name_the_remote_file(
    s3_server: MotoServer, bucket: str, kb: KnowledgeBase
) -> None:
    source = _source(s3_server, f"s3://{bucket}/bad")
    source.fs.pipe(f"{bucket}/bad/records.jsonl", b'{"id": "r1", "text": "fine"}\nnot json\n')
    source.fs.pipe(f"{bucket}/bad/empty.md", b"")
    report = kb.ingest(source)
    assert report.added == ["r1"]
    sources = sorted(f.source for f in report.failed)
    assert sources == [f"s3://{bucket}/bad/empty.md", f"s3://{bucket}/bad/records.jsonl:2"]
