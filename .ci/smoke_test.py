"""Smoke-test an installed llama-kb wheel from outside the source tree (run by ``.ci/run``).

Checks that the installed package (not the checkout) imports fast, that its console script
answers, and that a user's first steps work offline: ingest, unified retrieval, the LangChain
and LlamaIndex faces, ``llama-kb doctor --json``. Prints one ``smoke:`` line per step.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

DOCS = {
    "pipeline.md": "# Ingestion Pipeline\n\nThe Ingestion Pipeline runs the "
    "[Graph Updater](updater.md) after parsing.\n",
    "updater.md": "# Graph Updater\n\nThe Graph Updater writes entities and relations "
    "to the graph store. It is owned by the Knowledge Team.\n",
}


def step(message: str) -> None:
    print(f"smoke: {message}", flush=True)


def main() -> int:
    bin_dir = Path(sys.executable).parent
    timing = subprocess.run(
        [
            sys.executable,
            "-c",
            "import time; t = time.perf_counter(); import llama_kb; "
            "print(f'{time.perf_counter() - t:.3f}', llama_kb.__file__)",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    step(f"import llama_kb in {timing[0]} s from {timing[1]}")
    assert "site-packages" in timing[1], "the checkout, not the wheel, was imported"

    cli = shutil.which("llama-kb", path=str(bin_dir)) or "llama-kb"
    version = subprocess.run([cli, "--version"], capture_output=True, text=True, check=True)
    step(f"console script: {version.stdout.strip()}")

    from langchain_kb import UnifiedKBRetriever
    from llama_kb import KnowledgeBase

    with tempfile.TemporaryDirectory() as tmp:
        docs = Path(tmp) / "docs"
        docs.mkdir()
        for name, text in DOCS.items():
            (docs / name).write_text(text, encoding="utf-8")
        with KnowledgeBase.open(Path(tmp) / "kb") as kb:
            report = kb.ingest(docs, show_progress=False)
            step(f"ingest: {report.summary()}")
            assert report.ok and kb.stats()["chunks"] >= 2
            context = kb.retrieve("Who owns the Graph Updater?", top_k=2)
            step(
                f"retrieve: route {context.route.value}, {len(context.unstructured)} passages, "
                f"{len(context.structured_facts)} facts"
            )
            assert "Knowledge Team" in context.render()
            documents = UnifiedKBRetriever(kb=kb, k=2).invoke("Graph Updater")
            step(f"langchain: {[d.metadata['kind'] for d in documents]}")
            nodes = kb.as_retriever(similarity_top_k=1).retrieve("Graph Updater")
            step(f"llamaindex: {[n.node.metadata['kind'] for n in nodes]}")
            assert documents and nodes
        doctor = subprocess.run(
            [cli, "doctor", "--kb", str(Path(tmp) / "kb"), "--json"],
            capture_output=True,
            text=True,
        )
        checks = json.loads(doctor.stdout)["checks"]
        step(
            f"doctor: exit {doctor.returncode}, "
            + ", ".join(f"{c['name']}={'ok' if c['ok'] else 'FAIL'}" for c in checks)
        )
    step("passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
