"""Execute every notebook in ``notebooks/`` top to bottom in a Jupyter kernel and report.

    python .ci/run_notebooks.py            # CI: execute, print one line per notebook, fail on error
    python .ci/run_notebooks.py --write    # also save the outputs into the notebooks and export
                                           # their images to docs/images/ (for the README)

Needs the ``notebooks`` extra (ipykernel, nbclient, nbformat, networkx, matplotlib).
"""

from __future__ import annotations

import argparse
import base64
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"
IMAGES = REPO / "docs" / "images"


def execute(path: Path, write: bool) -> bool:
    """Run one notebook; print a summary line; save it (and its images) with ``write``."""
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        record_timing=False,
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    started = time.perf_counter()
    try:
        client.execute()
    except CellExecutionError as e:
        print(f"notebook {path.name}: FAILED after {time.perf_counter() - started:.1f} s\n{e}")
        return False
    cells = [c for c in notebook.cells if c.cell_type == "code"]
    images = [
        output["data"]["image/png"]
        for cell in cells
        for output in cell.get("outputs", [])
        if "image/png" in output.get("data", {})
    ]
    print(
        f"notebook {path.name}: executed {len(cells)} code cells in "
        f"{time.perf_counter() - started:.1f} s, {len(images)} image(s), 0 errors"
    )
    if write:
        nbformat.write(notebook, path)
        for number, image in enumerate(images, 1):
            IMAGES.mkdir(parents=True, exist_ok=True)
            target = IMAGES / f"{path.stem}-{number}.png"
            target.write_bytes(base64.b64decode(image))
            print(f"  wrote {target.relative_to(REPO)}")
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="save outputs and images")
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: notebooks/*.ipynb")
    args = parser.parse_args()
    paths = args.notebooks or sorted(NOTEBOOKS.glob("*.ipynb"))
    results = [execute(path, args.write) for path in paths]
    print(f"notebooks: {sum(results)} of {len(results)} executed without errors")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
