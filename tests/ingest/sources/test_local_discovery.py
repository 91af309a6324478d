"""File discovery: recursion, hidden entries, include/exclude globs, missing paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from llama_kb.ingest.sources import discover_files

TREE = [
    "a.md",
    "b.txt",
    "UPPER.MD",
    "notes.xyz",
    "sub/c.pdf",
    "sub/deep/h.html",
    "sub/deep/data.jsonl",
    "drafts/f.md",
    "drafts/old/g.md",
    "archive/drafts/i.md",
    ".hidden/d.md",
    ".e.md",
    "sub/.cache/j.md",
]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    base = tmp_path / "kb"
    for name in TREE:
        path = base / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x", encoding="utf-8")
    return base


def relative(files: list[Path], root: Path) -> list[str]:
    return [f.relative_to(root.resolve()).as_posix() for f in files]


def test_walks_supported_non_hidden_files_sorted(root: Path) -> None:
    result = discover_files([root])
    assert result.failures == []
    assert all(f.is_absolute() for f in result.files)
    assert relative(result.files, root) == sorted(
        [
            "UPPER.MD",
            "a.md",
            "archive/drafts/i.md",
            "b.txt",
            "drafts/f.md",
            "drafts/old/g.md",
            "sub/c.pdf",
            "sub/deep/data.jsonl",
            "sub/deep/h.html",
        ]
    )
    assert result.files == sorted(result.files)


def test_include_hidden(root: Path) -> None:
    found = relative(discover_files([root], include_hidden=True).files, root)
    assert {".e.md", ".hidden/d.md", "sub/.cache/j.md"} <= set(found)


@pytest.mark.parametrize("pattern", ["**/*.md", "*.md"])
def test_include_matches_at_any_depth(root: Path, pattern: str) -> None:
    found = relative(discover_files([root], include=[pattern]).files, root)
    assert found == ["a.md", "archive/drafts/i.md", "drafts/f.md", "drafts/old/g.md"]


def test_anchored_include(root: Path) -> None:
    found = relative(discover_files([root], include=["sub/**/*.html", "sub/*.pdf"]).files, root)
    assert found == ["sub/c.pdf", "sub/deep/h.html"]


def test_exclude_directory_contents_recursively(root: Path) -> None:
    found = relative(discover_files([root], exclude=["drafts/*"]).files, root)
    assert "drafts/f.md" not in found
    assert "drafts/old/g.md" not in found
    assert "archive/drafts/i.md" in found  # anchored: only the top-level drafts


def test_unanchored_exclude_matches_directories_anywhere(root: Path) -> None:
    found = relative(discover_files([root], exclude=["drafts"]).files, root)
    assert not any("drafts" in f for f in found)


def test_exclude_wins_over_include(root: Path) -> None:
    found = relative(discover_files([root], include=["**/*.md"], exclude=["**/old/**"]).files, root)
    assert found == ["a.md", "archive/drafts/i.md", "drafts/f.md"]


def test_character_classes_and_question_mark(root: Path) -> None:
    found = relative(discover_files([root], include=["[ab].*", "sub/?.pdf"]).files, root)
    assert found == ["a.md", "b.txt", "sub/c.pdf"]


def test_explicit_files_are_kept_whatever_their_type(root: Path) -> None:
    result = discover_files([root / "notes.xyz", root / ".e.md"], exclude=["*.xyz"])
    assert relative(result.files, root) == [".e.md", "notes.xyz"]


def test_results_are_deduplicated(root: Path) -> None:
    result = discover_files([root / "a.md", root, str(root / "sub" / ".." / "a.md")])
    assert relative(result.files, root).count("a.md") == 1


def test_missing_paths_are_reported(root: Path) -> None:
    missing = root / "nope"
    result = discover_files([root / "a.md", missing])
    assert relative(result.files, root) == ["a.md"]
    assert [(f.source, f.reason) for f in result.failures] == [
        (str(missing), "no such file or directory")
    ]


def test_a_single_path_string_is_accepted(root: Path) -> None:
    assert relative(discover_files(str(root / "a.md")).files, root) == ["a.md"]  # type: ignore[arg-type]


def test_symlinked_directories_are_not_followed(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "z.md").write_text("z", encoding="utf-8")
    (root / "link").symlink_to(outside, target_is_directory=True)
    found = relative(discover_files([root]).files, root)
    assert not any(f.endswith("z.md") for f in found)
