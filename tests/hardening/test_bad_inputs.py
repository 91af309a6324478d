"""A corpus of hostile and broken inputs: each gets a named error or a documented skip, and
leaves every store as it was.

Covers every reader (txt, md, html, pdf, docx, jsonl), discovery (special files, links),
limits, record validation, the knowledge loader, the CLI, configuration and queries.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hardening_helpers import (
    docx_bomb,
    docx_from_the_future,
    make_fifo,
    make_pdf,
    make_socket,
    pdf_bomb,
    snapshot,
)
from llama_index.core.base.embeddings.base import BaseEmbedding

from llama_kb import KnowledgeBase
from llama_kb.cli import main
from llama_kb.config import KBConfig, LimitsConfig, SecretsConfig
from llama_kb.errors import ConfigurationError, DocumentError, LlamaKBError, QueryError

TIGHT = LimitsConfig(
    max_file_bytes=50_000,
    max_decompressed_bytes=1_000_000,
    max_text_chars=20_000,
    max_json_depth=16,
    max_records_per_file=3,
)

# -- knowledge bases shared by the module (each case must leave them unchanged) ---------------


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory, embedding: BaseEmbedding) -> Iterator[Any]:
    """Default limits; secrets rejected so that secret cases are refusals too."""
    root = tmp_path_factory.mktemp("bad")
    config = KBConfig(path=root / "kb", secrets=SecretsConfig(documents="reject"))
    with KnowledgeBase.open(config=config, embedding=embedding) as opened:
        (root / "good.md").write_text("# Good\nA sound document about turbines.\n")
        assert opened.ingest(root / "good.md").ok
        yield opened


@pytest.fixture(scope="module")
def tight_kb(tmp_path_factory: pytest.TempPathFactory, embedding: BaseEmbedding) -> Iterator[Any]:
    """Small limits, to exercise each limit with small files."""
    root = tmp_path_factory.mktemp("tight")
    with KnowledgeBase.open(config=KBConfig(path=root, limits=TIGHT), embedding=embedding) as kb:
        yield kb


# -- files: (name, content or builder, expected reason) --------------------------------------

Builder = Callable[[Path], Path]


@dataclass(frozen=True)
class FileCase:
    id: str
    name: str
    content: bytes | str | Builder
    expect: str
    tight: bool = False

    def build(self, directory: Path) -> Path:
        path = directory / self.name
        if callable(self.content):
            return self.content(path)
        data = self.content.encode() if isinstance(self.content, str) else self.content
        path.write_bytes(data)
        return path


def _jsonl(*records: Any) -> str:
    return "\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n"


def _deep(depth: int) -> str:
    return '{"id": "d", "text": "t", "metadata": {"x": ' + "[" * depth + "]" * depth + "}}"


def _symlink_to(target: str) -> Builder:
    def build(path: Path) -> Path:
        path.symlink_to(target)
        return path.parent

    return build


def _in_dir(builder: Builder) -> Builder:
    """Build inside the directory and ingest the directory (exercises discovery)."""

    def build(path: Path) -> Path:
        builder(path)
        return path.parent

    return build


def _write(data: bytes) -> Builder:
    def build(path: Path) -> Path:
        path.write_bytes(data)
        return path

    return build


SECRET = "DB_PASSWORD=Zq8!rT2vLm9xW4"
TEXT_CASES = [
    FileCase("txt-empty", "a.txt", b"", "empty file"),
    FileCase("txt-whitespace", "a.txt", b"  \n\t\n", "only whitespace"),
    FileCase("txt-nul", "a.txt", b"abc\x00def", "binary"),
    FileCase("txt-controls", "a.txt", bytes(range(1, 9)) * 50, "binary"),
    FileCase("txt-latin1", "a.txt", "café".encode("latin-1"), "not valid UTF-8"),
    FileCase("txt-utf16", "a.txt", "hello".encode("utf-16"), "UTF-16"),
    FileCase("txt-secret", "a.txt", f"config\n{SECRET}\n", "line 2: credential_assignment"),
    FileCase("txt-too-big", "a.txt", "word " * 20_000, "limits.max_file_bytes", tight=True),
    FileCase("txt-too-long", "a.txt", "é" * 21_000, "limits.max_text_chars", tight=True),
    FileCase("md-empty", "a.md", b"", "empty file"),
    FileCase("md-binary", "a.md", b"\x00\x01\x02# x", "binary"),
    FileCase("md-bad-utf8", "a.md", b"# T\n\xff\xfe\xfd", "not valid UTF-8"),
    FileCase("md-secret", "a.md", f"# Setup\n\n```\n{SECRET}\n```\n", "credential_assignment"),
    FileCase("md-too-long", "a.md", "# T\n" + "x" * 21_000, "limits.max_text_chars", tight=True),
    FileCase("html-empty", "a.html", b"", "empty file"),
    FileCase("html-binary", "a.html", b"<html>\x00\x00</html>", "binary"),
    FileCase("html-bad-utf8", "a.html", b"<p>\xc3\x28</p>", "not valid UTF-8"),
    FileCase("html-secret", "a.htm", f"<p>{SECRET}</p>", "credential_assignment"),
    FileCase(
        "html-no-text", "a.html", "<html><script>var a = 1;</script></html>", "no visible text"
    ),
    FileCase("md-front-matter", "a.md", "---\ntitle: x\n---\n", "only front matter"),
    FileCase("unsupported", "a.exe", b"MZ", "unsupported file type"),
    FileCase("no-extension", "README", b"text", "unsupported file type"),
]

PDF_CASES = [
    FileCase("pdf-empty", "a.pdf", b"", "empty file"),
    FileCase("pdf-no-header", "a.pdf", b"hello world", "no %PDF header"),
    FileCase("pdf-truncated", "a.pdf", _write(make_pdf(["hello"])[:200]), "not a valid PDF"),
    FileCase("pdf-garbage", "a.pdf", b"%PDF-1.7\n" + os.urandom(2000), "not a valid PDF"),
    FileCase("pdf-no-text", "a.pdf", _write(make_pdf([""])), "no extractable text"),
    FileCase("pdf-password", "a.pdf", _write(make_pdf(["x"], password="pw")), "needs a password"),
    FileCase("pdf-secret", "a.pdf", _write(make_pdf([f"notes {SECRET}"])), "credential_assign"),
    FileCase("pdf-bomb", "a.pdf", _write(pdf_bomb(3_000_000)), "max_decompressed", tight=True),
    FileCase("pdf-too-big", "a.pdf", _write(make_pdf(["x"] * 200)), "max_file_bytes", tight=True),
]

DOCX_CASES = [
    FileCase("docx-empty", "a.docx", b"", "empty file"),
    FileCase("docx-not-zip", "a.docx", b"PK not really a zip", "not a valid .docx"),
    FileCase("docx-random", "a.docx", os.urandom(3000), "not a valid .docx"),
    FileCase("docx-zip-version", "a.docx", docx_from_the_future, "not a valid .docx"),
    FileCase("docx-bomb", "a.docx", lambda p: docx_bomb(p, 3_000_000), "max_decompressed", True),
    # 20 MB of zeros compress about 1000:1: under the default size limit, over the ratio limit
    FileCase("docx-ratio", "a.docx", lambda p: docx_bomb(p, 20_000_000), "compression_ratio"),
]

JSONL_LINE_CASES = [
    FileCase("jsonl-invalid", "a.jsonl", _jsonl("{not json"), "invalid JSON"),
    FileCase("jsonl-array", "a.jsonl", _jsonl([1, 2]), "expected a JSON object, got array"),
    FileCase("jsonl-string", "a.jsonl", _jsonl("just text"), "invalid JSON"),
    FileCase("jsonl-number", "a.jsonl", _jsonl(42), "got number"),
    FileCase("jsonl-null", "a.jsonl", _jsonl("null"), "got null"),
    FileCase("jsonl-no-id", "a.jsonl", _jsonl({"text": "t"}), "missing 'id'"),
    FileCase("jsonl-no-text", "a.jsonl", _jsonl({"id": "x"}), "missing 'text'"),
    FileCase("jsonl-empty-id", "a.jsonl", _jsonl({"id": " ", "text": "t"}), "empty 'id'"),
    FileCase("jsonl-empty-text", "a.jsonl", _jsonl({"id": "x", "text": " "}), "empty 'text'"),
    FileCase("jsonl-bool-id", "a.jsonl", _jsonl({"id": True, "text": "t"}), "'id' must be"),
    FileCase("jsonl-float-id", "a.jsonl", _jsonl({"id": 1.5, "text": "t"}), "'id' must be"),
    FileCase("jsonl-object-id", "a.jsonl", _jsonl({"id": {}, "text": "t"}), "'id' must be"),
    FileCase("jsonl-number-text", "a.jsonl", _jsonl({"id": "x", "text": 3}), "'text' must be"),
    FileCase("jsonl-list-title", "a.jsonl", _jsonl({"id": "x", "text": "t", "title": []}), "title"),
    FileCase(
        "jsonl-meta-list", "a.jsonl", _jsonl({"id": "x", "text": "t", "metadata": []}), "metadata"
    ),
    FileCase(
        "jsonl-meta-str", "a.jsonl", _jsonl({"id": "x", "text": "t", "metadata": "m"}), "metadata"
    ),
    FileCase("jsonl-nan", "a.jsonl", '{"id":"x","text":"t","metadata":{"v":NaN}}\n', "NaN/inf"),
    FileCase("jsonl-inf", "a.jsonl", '{"id":"x","text":"t","metadata":{"v":Infinity}}\n', "NaN"),
    FileCase(
        "jsonl-neg-inf", "a.jsonl", '{"id":"x","text":"t","metadata":{"v":-Infinity}}\n', "NaN"
    ),
    FileCase(
        "jsonl-nested-nan", "a.jsonl", '{"id":"x","text":"t","metadata":{"a":[1,NaN]}}\n', "NaN"
    ),
    FileCase("jsonl-deep-100", "a.jsonl", _deep(100) + "\n", "limits.max_json_depth"),
    FileCase("jsonl-deep-100k", "a.jsonl", _deep(100_000) + "\n", "limits.max_json_depth"),
    FileCase("jsonl-deep-tight", "a.jsonl", _deep(20) + "\n", "max_json_depth", tight=True),
    FileCase(
        "jsonl-control-id", "a.jsonl", _jsonl({"id": "a\u0001b", "text": "t"}), "control char"
    ),
    FileCase("jsonl-long-id", "a.jsonl", _jsonl({"id": "i" * 2000, "text": "t"}), "characters"),
    FileCase(
        "jsonl-reserved-key",
        "a.jsonl",
        _jsonl({"id": "x", "text": "t", "metadata": {"doc_id": "other"}}),
        "reserved",
    ),
    FileCase(
        "jsonl-huge-int",
        "a.jsonl",
        _jsonl({"id": "x", "text": "t", "metadata": {"n": 2**70}}),
        "too large",
    ),
    FileCase("jsonl-surrogate", "a.jsonl", '{"id":"x","text":"bad \\ud800 text"}\n', "surrogates"),
    FileCase("jsonl-surrogate-id", "a.jsonl", '{"id":"\\udfff","text":"fine"}\n', "surrogates"),
    FileCase("jsonl-secret", "a.jsonl", _jsonl({"id": "x", "text": SECRET}), "credential"),
    FileCase(
        "jsonl-secret-title",
        "a.jsonl",
        _jsonl({"id": "x", "text": "t", "title": f"ghp_{'a1B2' * 9}"}),
        "title: github_token",
    ),
    FileCase(
        "jsonl-too-long",
        "a.jsonl",
        _jsonl({"id": "x", "text": "y" * 20_001}),
        "limits.max_text_chars",
        tight=True,
    ),
    FileCase(
        "jsonl-too-many",
        "a.jsonl",
        _jsonl(*[{"id": str(i), "text": "t"} for i in range(4)]),
        "max_records_per_file",
        tight=True,
    ),
    FileCase("jsonl-empty", "a.jsonl", b"", "empty file"),
    FileCase("jsonl-binary", "a.jsonl", b'{"id":1}\x00', "binary"),
]

CODE_CASES = [  # the source code reader (tree-sitter) reads files through the same checks
    FileCase("py-empty", "a.py", b"", "empty file"),
    FileCase("py-whitespace", "a.py", b"\n\n    \n", "only whitespace"),
    FileCase("js-nul", "a.js", b"const a = 1;\x00\x00", "binary"),
    FileCase("go-bad-utf8", "a.go", b"package main\n// \xff\xfe\n", "not valid UTF-8"),
    FileCase("ts-utf16", "a.ts", "let a = 1;".encode("utf-16"), "UTF-16"),
    FileCase("rs-secret", "a.rs", f"// {SECRET}\nfn main() {{}}\n", "credential_assignment"),
    FileCase("java-too-big", "A.java", "int a;\n" * 8_000, "limits.max_file_bytes", tight=True),
    FileCase("cpp-too-long", "a.cpp", "int a;\n" * 3_500, "limits.max_text_chars", tight=True),
]

SPECIAL_CASES = [
    FileCase("fifo-walked", "pipe.txt", _in_dir(make_fifo), "a FIFO, not a regular file"),
    FileCase("fifo-named", "pipe.md", make_fifo, "a FIFO, not a regular file"),
    FileCase("link-outside", "zero.txt", _symlink_to("/dev/zero"), "outside"),
    FileCase("link-outside-file", "passwd.txt", _symlink_to("/etc/hostname"), "outside"),
    FileCase("link-broken", "gone.md", _symlink_to("/nonexistent/x.md"), "broken symbolic link"),
    FileCase("missing", "missing.md", lambda p: p, "no such file or directory"),
]

# the jsonl-too-many case keeps its first 3 records: it is a partial refusal, checked apart
PARTIAL = {"jsonl-too-many"}
FILE_CASES = TEXT_CASES + PDF_CASES + DOCX_CASES + JSONL_LINE_CASES + CODE_CASES + SPECIAL_CASES


@pytest.mark.parametrize("case", FILE_CASES, ids=[c.id for c in FILE_CASES])
def test_bad_file_is_refused_and_stores_are_unchanged(
    case: FileCase, kb: Any, tight_kb: Any, tmp_path: Path
) -> None:
    target_kb = tight_kb if case.tight else kb
    directory = tmp_path / case.id
    directory.mkdir()
    target = case.build(directory)
    before = snapshot(target_kb)
    report = target_kb.ingest(target)
    reasons = [f"{f.source}: {f.reason}" for f in report.failed]
    assert any(case.expect in r and case.name in r for r in reasons), reasons
    assert SECRET not in json.dumps(report.to_dict())  # reports never carry the secret
    if case.id in PARTIAL:
        assert len(report.added) == TIGHT.max_records_per_file
        target_kb.remove(report.added)
        return
    assert not report.added and not report.updated
    assert snapshot(target_kb) == before


def test_special_files_outside_a_walk(kb: Any) -> None:
    """Devices and sockets named explicitly are refused without being opened."""
    before = snapshot(kb)
    short = Path(tempfile.mkdtemp(prefix="kb"))  # a socket path must stay under 108 bytes
    try:
        for target, kind in [("/dev/zero", "character device"), ("/dev/null", "character")]:
            report = kb.ingest(target)
            assert [f.reason for f in report.failed] == [
                f"skipped: a {kind}{' device' if kind == 'character' else ''}, not a regular file"
            ]
        sock = make_socket(short / "s.md")
        report = kb.ingest(sock)
        assert "a socket, not a regular file" in report.failed[0].reason
    finally:
        shutil.rmtree(short)
    assert snapshot(kb) == before


def test_a_directory_named_like_a_file(kb: Any, tmp_path: Path) -> None:
    (tmp_path / "dir.md").mkdir()
    report = kb.ingest(tmp_path / "dir.md")
    assert report.ok and not report.added  # a directory is walked: here, nothing in it


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads anything")
def test_unreadable_file(kb: Any, tmp_path: Path) -> None:
    path = tmp_path / "secret.md"
    path.write_text("# x")
    path.chmod(0)
    report = kb.ingest(path)
    assert "permission denied" in report.failed[0].reason.lower()


def test_good_lines_survive_bad_ones(kb: Any, tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    path.write_text(
        _jsonl({"id": "ok-1", "text": "fine"}, "{oops", {"id": "ok-2", "text": "also fine"})
        + '{"id":"nan","text":"t","metadata":{"v":NaN}}\n'
    )
    report = kb.ingest(path)
    assert sorted(report.added) == ["ok-1", "ok-2"]
    assert len(report.failed) == 2
    kb.remove(report.added)


# -- knowledge loader -----------------------------------------------------------------------

PIECE = {"piece_id": "p1", "content": "Use LES", "knowledge_type": "procedure"}
KNOWLEDGE_FILE_CASES: list[tuple[str, bytes | str, str]] = [
    ("kn-invalid-json", "{oops", "not valid JSON"),
    ("kn-array", "[1, 2]", "top level must be a JSON object"),
    ("kn-no-sections", '{"hello": 1}', "no knowledge found"),
    ("kn-empty", "", "not valid JSON"),
    ("kn-latin1", '{"pieces": ["caf\xe9"]}'.encode("latin-1"), "not UTF-8"),
    ("kn-nan", '{"pieces": [{"piece_id": "p", "content": NaN}]}', "not a JSON number"),
    ("kn-inf", '{"pieces": [], "metadata": {"u": {"properties": {"x": Infinity}}}}', "JSON"),
    ("kn-deep", '{"pieces": ' + "[" * 100 + "]" * 100 + "}", "limits.max_json_depth"),
    ("kn-deep-100k", '{"pieces": ' + "[" * 100_000 + "]" * 100_000 + "}", "max_json_depth"),
]
KNOWLEDGE_ITEM_CASES: list[tuple[str, dict[str, Any], str]] = [
    ("kn-secret-piece", {"pieces": [{**PIECE, "content": SECRET}]}, "credential_assignment"),
    (
        "kn-secret-metadata",
        {"metadata": {"u": {"entity_type": "user", "properties": {"api_key": "v"}}}},
        "credential_property",
    ),
    (
        "kn-secret-node",
        {"graph": {"nodes": [{"node_id": "n", "node_type": "t", "label": "ghp_" + "a1B2" * 9}]}},
        "github_token",
    ),
    ("kn-piece-no-content", {"pieces": [{"piece_id": "p"}]}, "content"),
    ("kn-bad-type", {"pieces": [{**PIECE, "knowledge_type": "bogus"}]}, "knowledge_type"),
    ("kn-pieces-not-list", {"pieces": {"a": 1}}, "must be a list"),
    (
        "kn-edge-unknown",
        {"graph": {"edges": [{"source_id": "a", "target_id": "b", "edge_type": "X"}]}},
        "a",
    ),
    ("kn-long-piece", {"pieces": [{**PIECE, "content": "x" * 200_000}]}, "characters"),
]


@pytest.mark.parametrize(
    ("name", "content", "expect"), KNOWLEDGE_FILE_CASES, ids=[c[0] for c in KNOWLEDGE_FILE_CASES]
)
def test_bad_knowledge_file_raises_a_named_error(
    name: str, content: bytes | str, expect: str, kb: Any, tmp_path: Path
) -> None:
    path = tmp_path / f"{name}.json"
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    before = snapshot(kb)
    with pytest.raises(DocumentError, match=expect.replace(".", r"\.")):
        kb.load_knowledge(path)
    assert snapshot(kb) == before


@pytest.mark.parametrize(
    ("name", "data", "expect"), KNOWLEDGE_ITEM_CASES, ids=[c[0] for c in KNOWLEDGE_ITEM_CASES]
)
def test_bad_knowledge_item_is_skipped(name: str, data: dict, expect: str, kb: Any) -> None:
    before = snapshot(kb)
    report = kb.load_knowledge(data)
    reasons = " | ".join(f"{s.item}: {s.reason}" for s in report.skipped)
    assert expect in reasons, reasons
    assert SECRET not in reasons
    assert snapshot(kb) == before


def test_knowledge_fifo_and_dict_with_nan(kb: Any, tmp_path: Path) -> None:
    before = snapshot(kb)
    with pytest.raises(DocumentError, match="FIFO"):
        kb.load_knowledge(make_fifo(tmp_path / "k.json"))
    with pytest.raises(DocumentError, match="NaN"):
        kb.load_knowledge({"pieces": [{**PIECE, "tags": [float("nan")]}]})
    with pytest.raises(DocumentError, match="non-string key"):
        kb.load_knowledge({"pieces": [{**PIECE, 3: "x"}]})
    assert snapshot(kb) == before


# -- CLI --------------------------------------------------------------------------------------

CLI_CASES: list[tuple[str, list[str], int, str]] = [
    ("cli-query-no-kb", ["query", "x", "--kb", "{tmp}/none"], 2, "no knowledge base"),
    ("cli-stats-not-kb", ["stats", "--kb", "{tmp}/notkb"], 2, "not a llama-kb knowledge base"),
    ("cli-kb-is-file", ["stats", "--kb", "{tmp}/file.txt"], 2, "is a file"),
    ("cli-ingest-missing", ["ingest", "{tmp}/missing", "--kb", "{tmp}/kb"], 1, "no such file"),
    ("cli-ingest-fifo", ["ingest", "{tmp}/pipe.md", "--kb", "{tmp}/kb"], 1, "FIFO"),
    ("cli-load-bad-json", ["load", "{tmp}/bad.json", "--kb", "{tmp}/kb"], 2, "not valid JSON"),
    ("cli-query-empty", ["query", "  ", "--kb", "{tmp}/kb"], 2, "query is empty"),
    ("cli-top-k-zero", ["query", "x", "--top-k", "0", "--kb", "{tmp}/kb"], 2, "top_k"),
    ("cli-corrupt-kb-json", ["stats", "--kb", "{tmp}/broken"], 2, "corrupt"),
]


@pytest.fixture
def cli_dir(tmp_path: Path, embedding: BaseEmbedding, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(
        "llama_kb.knowledge_base.resolve_embedding", lambda _, recorded=None: embedding
    )
    (tmp_path / "notkb").mkdir()
    (tmp_path / "notkb" / "x.txt").write_text("x")
    (tmp_path / "file.txt").write_text("x")
    (tmp_path / "bad.json").write_text("{oops")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "kb.json").write_text("{not json")
    make_fifo(tmp_path / "pipe.md")
    KnowledgeBase.open(tmp_path / "kb", embedding=embedding).close()
    return tmp_path


@pytest.mark.parametrize(
    ("name", "argv", "code", "expect"), CLI_CASES, ids=[c[0] for c in CLI_CASES]
)
def test_cli_reports_bad_input(
    name: str,
    argv: list[str],
    code: int,
    expect: str,
    cli_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([a.format(tmp=cli_dir) for a in argv]) == code
    err = capsys.readouterr().err
    assert expect in err
    assert "Traceback" not in err


def test_cli_unknown_command_and_option(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["explode"], ["query"], ["query", "x", "--top-k", "many"]):
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        assert exit_info.value.code == 2
    assert "usage" in capsys.readouterr().err


# -- configuration --------------------------------------------------------------------------

CONFIG_CASES: list[tuple[str, dict[str, Any], str]] = [
    ("cfg-overlap", {"chunking": {"chunk_size": 10, "chunk_overlap": 10}}, "chunk_overlap"),
    ("cfg-size-zero", {"chunking": {"chunk_size": 0}}, "chunking.chunk_size"),
    ("cfg-unknown", {"colection": "x"}, "colection"),
    ("cfg-collection", {"collection": "a b"}, "collection"),
    ("cfg-limit-negative", {"limits": {"max_file_bytes": -1}}, "limits.max_file_bytes"),
    ("cfg-limit-ratio", {"limits": {"max_compression_ratio": 1}}, "max_compression_ratio"),
    ("cfg-limit-unknown", {"limits": {"max_files": 3}}, "limits.max_files"),
    ("cfg-secrets-mode", {"secrets": {"documents": "shout"}}, "secrets.documents"),
    ("cfg-secrets-type", {"secrets": {"entropy": "maybe"}}, "secrets.entropy"),
    (
        "cfg-two-graphs",
        {"neo4j": {"uri": "bolt://x", "password": "p"}, "falkordb": {"url": "r"}},
        "not both",
    ),
    ("cfg-top-k", {"retrieval": {"top_k": 0}}, "retrieval.top_k"),
    ("cfg-port", {"chroma": {"host": "h", "port": 70000}}, "chroma.port"),
]


@pytest.mark.parametrize(
    ("name", "values", "expect"), CONFIG_CASES, ids=[c[0] for c in CONFIG_CASES]
)
def test_bad_config_raises_configuration_error(name: str, values: dict, expect: str) -> None:
    with pytest.raises(ConfigurationError, match=expect.replace(".", r"\.")):
        KBConfig.build(**values)


def test_bad_config_files(tmp_path: Path) -> None:
    for content, expect in [("{oops", "not valid JSON"), ("[1]", "mapping"), ("", "JSON")]:
        path = tmp_path / "c.json"
        path.write_text(content)
        with pytest.raises(ConfigurationError, match=expect):
            KBConfig.from_file(path)
    with pytest.raises(ConfigurationError, match="NEO4J_PASSWORD"):
        KBConfig.from_env(env={"NEO4J_URI": "bolt://x"})


# -- queries ----------------------------------------------------------------------------------

QUERY_CASES: list[tuple[str, Any, dict[str, Any]]] = [
    ("q-empty", "", {}),
    ("q-blank", " \n\t ", {}),
    ("q-none", None, {}),
    ("q-bytes", b"turbines", {}),
    ("q-number", 42, {}),
    ("q-top-k-zero", "turbines", {"top_k": 0}),
    ("q-top-k-negative", "turbines", {"top_k": -3}),
    ("q-top-k-text", "turbines", {"top_k": "many"}),
    ("q-route", "turbines", {"route": "sideways"}),
    ("q-max-cost", "turbines", {"max_cost": -1}),
    ("q-filters", "turbines", {"filters": "doc_id=x"}),
    ("q-min-score", "turbines", {"min_score": "high"}),
    ("q-unknown", "turbines", {"explode": True}),
]


@pytest.mark.parametrize(("name", "query", "options"), QUERY_CASES, ids=[c[0] for c in QUERY_CASES])
def test_bad_query_raises_query_error(name: str, query: Any, options: dict, kb: Any) -> None:
    before = snapshot(kb)
    with pytest.raises(QueryError):
        kb.retrieve(query, **options)
    assert snapshot(kb) == before


def test_corpus_size() -> None:
    """The issue asks for at least 100 cases across readers, loader, CLI, config, queries."""
    total = (
        len(FILE_CASES)
        + 3  # special files named explicitly
        + len(KNOWLEDGE_FILE_CASES)
        + len(KNOWLEDGE_ITEM_CASES)
        + 3  # FIFO, NaN and non-string keys in knowledge
        + len(CLI_CASES)
        + 3  # unknown command / missing argument / bad option type
        + len(CONFIG_CASES)
        + 4  # config files and environment
        + len(QUERY_CASES)
    )
    assert total >= 100, total
    assert issubclass(QueryError, LlamaKBError)
