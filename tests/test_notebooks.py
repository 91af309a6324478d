"""The notebooks run top to bottom (code cells executed in order, no Jupyter needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[n.name for n in NOTEBOOKS])
def test_notebook_runs(notebook: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    namespace: dict[str, object] = {}
    for cell in cells:
        if cell["cell_type"] == "code":
            exec(compile("".join(cell["source"]), f"{notebook.name}", "exec"), namespace)
