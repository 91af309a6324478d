"""Source code as a first-class source: a small multi-language repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from llama_kb import KnowledgeBase

pytest.importorskip("tree_sitter_language_pack")

REPO = {
    "app/main.py": (
        "import os\n"
        "from app.util import helper\n\n\n"
        "class Pipeline:\n"
        '    """Runs the steps."""\n\n'
        "    def run(self, path):\n"
        "        data = self.load(path)\n"
        "        return helper(data)\n\n"
        "    def load(self, path):\n"
        "        return os.path.basename(path)\n"
    ),
    "app/util.py": "def helper(value):\n    return value.upper()\n",
    "web/app.js": (
        "import { render } from './view.js';\n"
        "class Page { show() { return render(this.title); } }\n"
        "function start() { return new Page().show(); }\n"
    ),
    "web/view.ts": (
        "export interface View { title: string }\n"
        "export function render(title: string): string { return escape(title); }\n"
        "function escape(s: string): string { return s; }\n"
    ),
    "svc/server.go": (
        'package svc\n\nimport "fmt"\n\n'
        "type Server struct { port int }\n\n"
        "func (s *Server) Start() { s.listen(); fmt.Println(s.port) }\n\n"
        "func (s *Server) listen() {}\n"
    ),
    "svc/Store.java": (
        "import java.util.List;\n"
        "public class Store { void save() { validate(); } void validate() {} }\n"
    ),
    "core/lib.rs": (
        "use std::fs;\nstruct Cache { size: usize }\n"
        "impl Cache { fn clear(&mut self) { reset(); } }\nfn reset() {}\n"
    ),
    "native/io.c": (
        "#include <stdio.h>\nint write_all(int fd) { return flush(fd); }\n"
        "int flush(int fd) { return fd; }\n"
    ),
    "native/buf.cpp": (
        '#include "buf.h"\nnamespace io { class Buffer { public: void grow() { resize(); } '
        "void resize() {} }; }\n"
    ),
}


@pytest.fixture
def code_kb(kb: KnowledgeBase, tmp_path: Path) -> KnowledgeBase:
    root = tmp_path / "repo"
    for name, text in REPO.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    report = kb.ingest(root, root=root)
    assert report.ok, report.failed
    assert len(report.added) == len(REPO)
    assert report.chunks_over_window == 0
    return kb


def _relations(kb: KnowledgeBase, kind: str) -> set[tuple[str, str]]:
    """Relations of ``kind``, symbol ends shown as ``symbol:<qualified name>`` (ids also
    carry the defining file's path)."""
    symbols = kb.graph.named_nodes(labels=["symbol"])
    names = {i: f"symbol:{n}" for i, n, _ in symbols if i.startswith("symbol:")}
    return {(names.get(s, s), names.get(t, t)) for s, t, _, _ in kb.graph.iter_relations([kind])}


def _defined_in(kb: KnowledgeBase, name: str) -> list[str]:
    """Where ``name`` is defined: the source paths of the chunks that define it."""
    ids = {i for i, n, _ in kb.graph.named_nodes(labels=["symbol"]) if n == name}
    chunks = {s for s, t, _, _ in kb.graph.iter_relations(["DEFINES"]) if t in ids}
    return sorted(meta["source_path"] for _, meta in kb.vectors.get_chunks(sorted(chunks)).values())


def test_definitions_found_in_every_language(code_kb: KnowledgeBase) -> None:
    defines = {t for _, t in _relations(code_kb, "DEFINES")}
    for symbol in [
        "Pipeline", "Pipeline.run", "Pipeline.load", "helper",  # Python
        "Page", "Page.show", "start",  # JavaScript
        "View", "render", "escape",  # TypeScript
        "Server", "Server.Start", "Server.listen",  # Go
        "Store", "Store.save", "Store.validate",  # Java
        "Cache", "Cache.clear", "reset",  # Rust
        "write_all", "flush",  # C
        "io.Buffer", "io.Buffer.grow",  # C++
    ]:  # fmt: skip
        assert f"symbol:{symbol}" in defines, symbol


def test_one_chunk_per_definition_with_its_enclosing_path(code_kb: KnowledgeBase) -> None:
    chunks = {meta["symbol"]: text for _, text, meta in code_kb.vectors.iter_chunks()}
    assert chunks["Pipeline.run"].startswith("def run(self, path):")
    assert "def load" not in chunks["Pipeline.run"]
    assert chunks["Pipeline"].startswith("class Pipeline:")
    assert "def run" not in chunks["Pipeline"]
    assert chunks["Server.Start"].startswith("func (s *Server) Start()")
    member_of = _relations(code_kb, "MEMBER_OF")
    assert ("symbol:Pipeline.run", "symbol:Pipeline") in member_of
    assert ("symbol:io.Buffer.grow", "symbol:io.Buffer") in member_of
    assert ("symbol:Cache.clear", "symbol:Cache") in member_of


def test_calls_resolved_within_and_across_files(code_kb: KnowledgeBase) -> None:
    calls = _relations(code_kb, "CALLS")
    expected = [
        ("Pipeline.run", "Pipeline.load"),  # same class
        ("Pipeline.run", "helper"),  # imported from app/util.py
        ("Page.show", "render"),  # imported from view.ts
        ("render", "escape"),
        ("Server.Start", "Server.listen"),
        ("Store.save", "Store.validate"),
        ("Cache.clear", "reset"),
        ("write_all", "flush"),
        ("io.Buffer.grow", "io.Buffer.resize"),
    ]
    for caller, callee in expected:
        assert (f"symbol:{caller}", f"symbol:{callee}") in calls, (caller, callee)
    # "what calls helper": the graph answers, and the definition is in app/util.py
    callers = {s for s, t in calls if t == "symbol:helper"}
    assert callers == {"symbol:Pipeline.run"}
    assert _defined_in(code_kb, "helper") == ["app/util.py"]


def test_imports_recorded(code_kb: KnowledgeBase) -> None:
    imports = {t for _, t in _relations(code_kb, "IMPORTS")}
    assert {"module:os", "module:app.util", "module:./view.js", "module:fmt"} <= imports
    assert {"module:java.util.List", "module:std::fs", "module:stdio.h", "module:buf.h"} <= imports


def test_removing_a_file_removes_its_facts(code_kb: KnowledgeBase) -> None:
    assert code_kb.delete(["app/main.py"]) == ["app/main.py"]
    calls = _relations(code_kb, "CALLS")
    assert not any(s.startswith("symbol:Pipeline") for s, _ in calls)
    assert ("symbol:render", "symbol:escape") in calls


def test_same_symbol_in_two_files_does_not_collide(kb: KnowledgeBase, tmp_path: Path) -> None:
    root = tmp_path / "repo"
    source = (
        "class Pipeline:\n    def run(self):\n        return self.step()\n\n"
        "    def step(self):\n        return {n}\n"
    )
    for name in ("a/jobs.py", "b/jobs.py"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(source.format(n=len(name)), encoding="utf-8")
    assert kb.ingest(root, root=root).ok
    assert _defined_in(kb, "Pipeline.run") == ["a/jobs.py", "b/jobs.py"]
    ids = {i for i, n, _ in kb.graph.named_nodes(labels=["symbol"]) if n == "Pipeline.run"}
    assert ids == {"symbol:a/jobs.py#Pipeline.run", "symbol:b/jobs.py#Pipeline.run"}
    calls = {(s, t) for s, t, _, _ in kb.graph.iter_relations(["CALLS"])}
    for path in ("a/jobs.py", "b/jobs.py"):  # each file's call stays inside that file
        assert (f"symbol:{path}#Pipeline.run", f"symbol:{path}#Pipeline.step") in calls
    kb.delete(["a/jobs.py"])
    assert _defined_in(kb, "Pipeline.run") == ["b/jobs.py"]
