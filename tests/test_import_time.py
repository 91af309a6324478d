"""``import llama_kb`` is fast: heavy packages load on first use of a public name."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import REPO

import llama_kb

HEAVY = ("llama_index", "chromadb", "onnxruntime", "langchain_core", "numpy")


def test_import_loads_no_heavy_package_and_takes_under_half_a_second() -> None:
    script = (
        "import sys, time\n"
        "t = time.perf_counter()\n"
        "import llama_kb\n"
        "print(time.perf_counter() - t)\n"
        f"print(*[m for m in {HEAVY!r} if m in sys.modules])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=True,
    )
    seconds, loaded = done.stdout.split("\n")[:2]
    assert loaded == "" and float(seconds) < 0.5


def test_every_public_name_resolves_and_is_listed() -> None:
    assert set(llama_kb.__all__) == set(llama_kb._EXPORTS)
    for name in llama_kb.__all__:
        assert getattr(llama_kb, name) is not None and name in dir(llama_kb)
    assert llama_kb.KnowledgeBase.__module__ == "llama_kb.knowledge_base"
