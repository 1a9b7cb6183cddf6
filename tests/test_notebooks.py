"""The lecture notebooks: run clean top to bottom (no error, nothing on stderr), stored with outputs.

nbval (``pytest notebooks``) re-runs them and compares the cells tagged
``nbval-check-output`` in their metadata (out of the reader's sight); this file checks
what nbval does not: warnings, the stored state of the files, and that nbval does honour
the tag under the project's ``--nbval-lax``.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
CHECK_TAG = "nbval-check-output"
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
    assert any(CHECK_TAG in cell.metadata.get("tags", []) for cell in code_cells), "pin the key numbers with nbval"
    assert not any("NBVAL" in cell.source for cell in code_cells), "nbval markers go in the cell tags, not in the code"
    assert notebook.cells[0].cell_type == "markdown" and "After this notebook you can" in " ".join(notebook.cells[0].source.split())
    assert "Assignment" in notebook.cells[-1].source, "end with a pointer to the assignment"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_runs_without_errors_or_warnings(path):
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=60, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    assert problems(notebook) == []


@pytest.mark.slow
def test_nbval_compares_tagged_cells_and_only_those(tmp_path):
    # A stored output changed by hand: nbval must fail on the tagged cell and let an untagged one pass.
    notebook = nbformat.read(NOTEBOOKS[2], as_version=4)  # 03, the shortest
    code_cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    tagged = next(cell for cell in code_cells if CHECK_TAG in cell.metadata.get("tags", []) and cell.outputs)
    untagged = next(cell for cell in code_cells if CHECK_TAG not in cell.metadata.get("tags", []) and cell.outputs)
    repository = Path(__file__).resolve().parents[1]
    shutil.copy(repository / "notebooks" / "sanitize.cfg", tmp_path / "sanitize.cfg")

    def nbval(name: str) -> subprocess.CompletedProcess:
        nbformat.write(notebook, tmp_path / name)
        return subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-o", "addopts=",
             "--nbval-lax", "--nbval-sanitize-with", "sanitize.cfg", name],
            cwd=tmp_path, capture_output=True, text=True, timeout=300,
        )

    for output in untagged.outputs:
        if output.output_type == "stream":
            output.text = "changed by hand\n"
        elif "text/plain" in output.get("data", {}):
            output.data["text/plain"] = "changed by hand"
    untouched = nbval("untagged_changed.ipynb")
    assert untouched.returncode == 0, untouched.stdout[-2000:]
    tagged.outputs[0].text = tagged.outputs[0].text.replace("=", "=?", 1)
    changed = nbval("tagged_changed.ipynb")
    assert changed.returncode == 1 and "1 failed" in changed.stdout, changed.stdout[-2000:]
