"""The lecture notebooks: run clean top to bottom (no error, nothing on stderr), stored with outputs.

nbval (``pytest notebooks``) re-runs them and compares the cells tagged
``nbval-check-output`` in their metadata (out of the reader's sight); this file checks
what nbval does not: warnings, the stored state of the files, and that nbval does honour
the tag under the project's ``--nbval-lax``.
"""

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from conftest import this_course
from nbclient import NotebookClient

REPOSITORY = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((REPOSITORY / "notebooks").glob("*.ipynb"))
SOURCES = sorted((REPOSITORY / "source").glob("*/*.ipynb"))
CHECK_TAG = "nbval-check-output"


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


def test_lectures_and_assignments_point_to_each_other_where_they_exist():
    """A lecture's pointer names an assignment of the term, and an assignment's notebook names lectures that exist
    (``perceptron-course check`` says the same, with what to do)."""
    from course_grader.trusted.course_check import check_lectures

    course = this_course()
    assert NOTEBOOKS, "no lecture notebook in notebooks/"
    assert check_lectures(course, course.term()) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_stored_with_clean_outputs_in_order(path):
    notebook = nbformat.read(path, as_version=4)
    code_cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert [cell.execution_count for cell in code_cells] == list(range(1, len(code_cells) + 1)), "re-run top to bottom and save"
    assert problems(notebook) == []
    assert any(CHECK_TAG in cell.metadata.get("tags", []) for cell in code_cells), "pin the key numbers with nbval"
    assert not any("NBVAL" in cell.source for cell in code_cells), "nbval markers go in the cell tags, not in the code"
    assert notebook.cells[0].cell_type == "markdown" and "After this notebook you can" in " ".join(notebook.cells[0].source.split())


def python_of(source: str) -> str:
    """A cell's source with IPython magics and shell escapes blanked, so that ``ast`` can parse it."""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())


def functions_defined(source: str) -> set[str]:
    """Names a cell binds to a function: ``def`` (at any depth, methods included) or ``name = lambda ...``."""
    names = set()
    for node in ast.walk(ast.parse(python_of(source))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):
            names |= {target.id for target in node.targets if isinstance(target, ast.Name)}
    return names


def solution_cells() -> list[str]:
    """The sources of every nbgrader solution cell of the instructors' assignments."""
    return [cell.source for path in SOURCES for cell in nbformat.read(path, as_version=4).cells
            if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("solution")]


def graded_function_names() -> set[str]:
    """Every function an assignment's solution cells define: what students write and the grader calls."""
    return set().union(*(functions_defined(source) for source in solution_cells()))


def solution_lines(source: str) -> list[str]:
    """The lines between BEGIN and END SOLUTION, stripped, without blanks and comments."""
    body = source.split("### BEGIN SOLUTION", 1)[-1].split("### END SOLUTION", 1)[0]
    return [line.strip() for line in body.splitlines() if line.strip() and not line.strip().startswith("#")]


def test_functions_defined_sees_every_way_to_bind_a_function():
    source = "%matplotlib inline\ndef xor_features(P):\n    def inner():\n        pass\nscore = lambda w: w\nclass A:\n    def fit(self):\n        pass\n"
    assert functions_defined(source) == {"xor_features", "inner", "score", "fit"}


def test_every_assignment_has_graded_functions_to_protect():
    per_assignment = [set().union(*(functions_defined(cell.source) for cell in nbformat.read(path, as_version=4).cells
                                    if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("solution")))
                      for path in SOURCES]
    assert SOURCES and all(per_assignment), "each assignment's solution cells define the functions it grades"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_no_lecture_cell_defines_a_graded_function(path):
    # The lecture shows the idea in another shape (the library, a vectorised form, another feature map):
    # a lecture function with a graded name is an answer to copy.
    graded = graded_function_names()
    cells = [cell for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"]
    clashes = [(index, sorted(functions_defined(cell.source) & graded)) for index, cell in enumerate(cells)]
    assert [clash for clash in clashes if clash[1]] == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_no_lecture_cell_holds_three_lines_of_a_solution_in_a_row(path):
    windows = {tuple(lines[i:i + 3]) for lines in map(solution_lines, solution_cells()) for i in range(len(lines) - 2)}
    found = []
    for index, cell in enumerate(cell for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"):
        lines = [line.strip() for line in cell.source.splitlines() if line.strip() and not line.strip().startswith("#")]
        found += [(index, lines[i:i + 3]) for i in range(len(lines) - 2) if tuple(lines[i:i + 3]) in windows]
    assert found == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_points_students_to_the_assignment_in_their_folder(path):
    # Students get notebooks/, assignments/NN_topic/ and package/; release/ is the instructors' name for it,
    # and how to hand in is the README's job, not a lecture's.
    notebook = nbformat.read(path, as_version=4)
    text = "\n".join(cell.source for cell in notebook.cells)
    if path.stem in this_course().assignments():  # a lecture kept after its assignment was dropped points nowhere
        assert f"assignments/{path.stem}/" in notebook.cells[-1].source, f"end notebooks/{path.name} with a pointer to assignments/{path.stem}/"
    assert "release/" not in text and "nbgrader submit" not in text


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
    repository = Path(__file__).resolve().parents[2]
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
