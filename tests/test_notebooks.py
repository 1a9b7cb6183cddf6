"""The lecture notebooks: run clean top to bottom (no error, nothing on stderr), stored with outputs.

nbval (``pytest notebooks``) re-runs them and compares the cells marked
``NBVAL_CHECK_OUTPUT``; this file checks what nbval does not: warnings, and the
stored state of the files.
"""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
NAMES = ["01_geometry", "02_algorithm", "03_worked_example", "04_convergence", "05_multiclass", "06_limitations"]


def problems(notebook) -> list[str]:
    """Error outputs and anything written to stderr (warnings included)."""
    found = []
    for index, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []):
            if output.output_type == "error":
                found.append(f"cell {index}: {output.ename}: {output.evalue}")
            elif output.output_type == "stream" and output.name == "stderr":
                found.append(f"cell {index} wrote to stderr: {output.text[:200]}")
    return found


def test_the_six_lectures_are_there():
    assert [path.stem for path in NOTEBOOKS] == NAMES


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_stored_with_clean_outputs_in_order(path):
    notebook = nbformat.read(path, as_version=4)
    code_cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert [cell.execution_count for cell in code_cells] == list(range(1, len(code_cells) + 1)), "re-run top to bottom and save"
    assert problems(notebook) == []
    assert any("NBVAL_CHECK_OUTPUT" in cell.source for cell in code_cells), "pin the key numbers with nbval"
    assert notebook.cells[0].cell_type == "markdown" and "After this notebook you can" in " ".join(notebook.cells[0].source.split())
    assert "Assignment" in notebook.cells[-1].source, "end with a pointer to the assignment"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_runs_without_errors_or_warnings(path):
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=60, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    assert problems(notebook) == []
