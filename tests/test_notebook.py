"""The notebook reproduces the 35/100 case top to bottom on the bundled data."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

from .conftest import REPO

NOTEBOOK = REPO / "notebooks" / "collabllm_35_of_100.ipynb"


def test_committed_notebook_has_no_outputs():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(not c.outputs and c.execution_count is None for c in code)


def test_notebook_runs_top_to_bottom(tmp_path: Path):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    texts = ["".join(o.get("text", "") for o in c.outputs) for c in nb.cells if c.cell_type == "code"]
    assert texts[1].startswith("100 eval records, format verl")
    assert texts[2].startswith("35 of 100 eval records (35.0%) occur in train\n")
    images = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if "image/png" in o.get("data", {})]
    assert len(images) == 1
    assert "'count': 35" in texts[-1] and "## Train/eval overlap" in texts[-1]
