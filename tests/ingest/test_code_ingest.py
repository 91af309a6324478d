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
    return {(s, t) for s, t, _, _ in kb.graph.iter_relations([kind])}


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
    definers = {s for s, t in _relations(code_kb, "DEFINES") if t == "symbol:helper"}
    ((_, meta),) = code_kb.vectors.get_chunks(sorted(definers)).values()
    assert meta["source_path"] == "app/util.py"


def test_imports_recorded(code_kb: KnowledgeBase) -> None:
    imports = {t for _, t in _relations(code_kb, "IMPORTS")}
    assert {"module:os", "module:app.util", "module:./view.js", "module:fmt"} <= imports
    assert {"module:java.util.List", "module:std::fs", "module:stdio.h", "module:buf.h"} <= imports


def test_removing_a_file_removes_its_facts(code_kb: KnowledgeBase) -> None:
    assert code_kb.delete(["app/main.py"]) == ["app/main.py"]
    calls = _relations(code_kb, "CALLS")
    assert not any(s.startswith("symbol:Pipeline") for s, _ in calls)
    assert ("symbol:render", "symbol:escape") in calls
