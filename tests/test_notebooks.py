"""The notebooks are committed executed, with outputs and no errors, and the README shows them.

CI executes them again in a Jupyter kernel (``.ci/run_notebooks.py``, one log line each);
these checks only read the committed files, so the test suite needs no kernel.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


def outputs(notebook: Path) -> list[dict[str, Any]]:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return [out for cell in cells if cell["cell_type"] == "code" for out in cell["outputs"]]


def test_the_four_notebooks_exist() -> None:
    names = {n.stem for n in NOTEBOOKS}
    assert {"quickstart", "langchain", "llamaindex", "exploring_the_graph"} <= names


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[n.name for n in NOTEBOOKS])
def test_committed_executed_in_order_without_errors(notebook: Path) -> None:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    counts = [c["execution_count"] for c in cells if c["cell_type"] == "code"]
    assert counts == list(range(1, len(counts) + 1)), "run top to bottom, then commit"
    assert outputs(notebook) and not [o for o in outputs(notebook) if o["output_type"] == "error"]


def test_graph_picture_score_table_and_side_by_side() -> None:
    graph = outputs(REPO / "notebooks" / "exploring_the_graph.ipynb")
    assert any("image/png" in o.get("data", {}) for o in graph)
    side_by_side = "".join("".join(o.get("data", {}).get("text/markdown", "")) for o in graph)
    assert "| rank | unified (fused score) | plain vector (cosine) |" in side_by_side
    quick = outputs(REPO / "notebooks" / "quickstart.ipynb")
    table = "".join("".join(o.get("data", {}).get("text/markdown", "")) for o in quick)
    assert "| passage |" in table and "| fact |" in table


def test_debugging_notebook_charts_the_score_parts() -> None:
    debugging = outputs(REPO / "notebooks" / "debugging_retrieval.ipynb")
    assert any("image/png" in o.get("data", {}) for o in debugging)
    text = "".join("".join(o.get("text", "")) for o in debugging)
    assert "fact score =" in text and "every score = sum of its parts" in text


def test_readme_shows_the_notebook_images() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    images = re.findall(r"!\[[^\]]*\]\((docs/images/[^)]+)\)", readme)
    assert images and all((REPO / image).is_file() for image in images)
