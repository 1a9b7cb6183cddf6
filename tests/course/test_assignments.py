"""The assignments: source passes every test, release fails them, release is nbgrader's output, nothing leaks."""

import re
from pathlib import Path

import nbformat
import pytest
from conftest import copy_course_to, course_files
from nbgrader.validator import Validator

from course_grader.trusted.judging.check_registry import hidden_checks_leaks
from course_grader.trusted.course.course import Course
from course_grader.trusted.course.notebook_format import course_notebooks, normalise, normalised_text
from course_grader.trusted.pipeline import release

REPO = Path(__file__).resolve().parents[2]

COURSE = Course.open(REPO)
NOTEBOOKS = [(a, n) for a in COURSE.assignments() for n in COURSE.notebook_names(a)]
DELIMITERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")


def test_every_assignment_is_released_and_has_autograded_parts():
    released = sorted(p.name for p in COURSE.release.iterdir() if p.is_dir() and not p.name.startswith("."))
    for assignment in sorted(set(released) - set(COURSE.assignments())):
        pytest.fail(f"release/{assignment} has no source/{assignment}: delete release/{assignment} (an assignment "
                    f"dropped from source/ goes from release/ too), or restore its source")
    for assignment in COURSE.assignments():
        assert assignment in released, f"source/{assignment} is not released: run `perceptron-course release --assignment {assignment}`"
        assert COURSE.notebook_names(assignment), f"source/{assignment} has no notebook"
        autograded = set(COURSE.graded_cells(assignment)) - set(COURSE.manually_graded_cells(assignment))
        assert autograded, f"source/{assignment} has no autograded test cell (an nbgrader 'Autograder tests' cell with points)"


@pytest.mark.slow
@pytest.mark.parametrize(("assignment", "name"), NOTEBOOKS)
def test_source_passes_every_test_including_hidden(assignment, name):
    results = Validator().validate(str(COURSE.source / assignment / f"{name}.ipynb"))
    assert results == {}, results


@pytest.mark.slow
@pytest.mark.parametrize(("assignment", "name"), NOTEBOOKS)
def test_release_fails_every_test(assignment, name):
    results = Validator(invert=True).validate(str(COURSE.release / assignment / f"{name}.ipynb"))
    assert "passed" not in results, f"tests that pass on the untouched release: {results.get('passed')}"
    assert "changed" not in results and "type_changed" not in results, results


def saved_by_jupyterlab(notebook):
    """The notebook as JupyterLab 4 saves it after Run All: kernel details, counts, outputs, view state."""
    notebook.metadata.language_info = {
        "codemirror_mode": {"name": "ipython", "version": 3}, "file_extension": ".py", "mimetype": "text/x-python",
        "name": "python", "nbconvert_exporter": "python", "pygments_lexer": "ipython3", "version": "3.11.2",
    }
    notebook.metadata.widgets = {"application/vnd.jupyter.widget-state+json": {"state": {}, "version_major": 2, "version_minor": 0}}
    code_cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    for count, cell in enumerate(code_cells, start=1):
        cell.execution_count = count
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="ok\n")]
        cell.metadata.update(scrolled=True, collapsed=False, trusted=True, jupyter={"outputs_hidden": False},
                             execution={"iopub.status.busy": "2026-11-23T10:00:00.000Z"})
    return notebook


@pytest.mark.parametrize(("assignment", "name"), NOTEBOOKS)
def test_a_jupyterlab_save_is_undone_by_the_normaliser(assignment, name):
    path = COURSE.source / assignment / f"{name}.ipynb"
    stored = nbformat.read(path, as_version=4)
    saved = saved_by_jupyterlab(nbformat.read(path, as_version=4))
    assert saved != stored
    assert normalise(saved) == stored
    assert stored.metadata.language_info == {"name": "python"} and stored.metadata.kernelspec.name == "python3"


@pytest.mark.parametrize("path", course_notebooks(REPO), ids=lambda path: str(path.relative_to(REPO)))
def test_committed_notebooks_are_stored_without_run_time_metadata(path):
    assert path.read_text(encoding="utf-8") == normalised_text(path), f"{path.relative_to(REPO)}: run `perceptron-course release`"


@pytest.mark.slow
def test_committed_release_is_exactly_what_nbgrader_generates(tmp_path):
    fresh = Course.open(copy_course_to(tmp_path, REPO, [name for name in course_files(REPO) if name != "release"]))
    for assignment, name in NOTEBOOKS:  # a TA opened, ran and saved every source notebook
        path = fresh.source / assignment / f"{name}.ipynb"
        nbformat.write(saved_by_jupyterlab(nbformat.read(path, as_version=4)), path)
    release(fresh)
    for assignment, name in NOTEBOOKS:
        relative = Path(assignment) / f"{name}.ipynb"
        assert (fresh.source / relative).read_bytes() == (COURSE.source / relative).read_bytes(), f"source/{relative}: a save shows as a change"
        committed = nbformat.read(COURSE.release / relative, as_version=4)
        regenerated = nbformat.read(fresh.release / relative, as_version=4)
        assert committed == regenerated, (f"release/{assignment} is out of date with source/{assignment} (cells or metadata): "
                                          f"run `perceptron-course release --assignment {assignment}`")
        assert (COURSE.release / relative).read_bytes() == (fresh.release / relative).read_bytes()
    assert sorted(p.name for p in COURSE.release.iterdir()) == sorted(COURSE.assignments())  # (the term may order them otherwise)
    # an assignment's hidden checks stay in source/ (CourseDirectory.ignore): neither regenerated nor committed
    # release/ holds the file or any text of it
    assert list((fresh.source).glob("*/hidden_checks.py")), "the course has hidden_checks.py files to keep out"
    assert hidden_checks_leaks(REPO, fresh.release) == [] and hidden_checks_leaks(REPO, COURSE.release) == []


def hidden_lines(source_text: str) -> set[str]:
    """Lines that appear inside solution or hidden-test regions (stripped, non-trivial)."""
    lines, inside = set(), False
    for line in source_text.split("\n"):
        if "### BEGIN" in line:
            inside = True
        elif "### END" in line:
            inside = False
        elif inside and len(line.strip()) > 12:
            lines.add(line.strip())
    return lines


@pytest.mark.parametrize(("assignment", "name"), NOTEBOOKS)
def test_release_holds_no_solution_and_no_hidden_test(assignment, name):
    source = nbformat.read(COURSE.source / assignment / f"{name}.ipynb", as_version=4)
    released = nbformat.read(COURSE.release / assignment / f"{name}.ipynb", as_version=4)
    released_text = "\n".join(cell.source for cell in released.cells)
    for delimiter in DELIMITERS:
        assert delimiter not in released_text
    secret = set().union(*(hidden_lines(cell.source) for cell in source.cells))
    visible = {line.strip() for cell in source.cells for line in re.sub(r"### BEGIN.*?### END[^\n]*", "", cell.source, flags=re.S).split("\n")}
    only_secret = secret - visible
    assert only_secret, "the source has solution or hidden lines to look for"
    leaked = [line for line in released_text.split("\n") if line.strip() in only_secret]
    assert leaked == []
    assert "from course_grader.trusted.judging.checks import" not in released_text
    assert "from course_grader.checks_api import" not in released_text


@pytest.mark.parametrize(("assignment", "name"), NOTEBOOKS)
def test_every_stub_documents_its_return_and_names_itself(assignment, name):
    released = nbformat.read(COURSE.release / assignment / f"{name}.ipynb", as_version=4)
    stubs = [cell for cell in released.cells if cell.metadata.get("nbgrader", {}).get("solution") and cell.cell_type == "code"]
    assert stubs
    for cell in stubs:
        function = re.match(r"def (\w+)\(", cell.source).group(1)
        assert "Returns" in cell.source, cell.source[:80]
        assert f'raise NotImplementedError("write {function}: see its docstring")' in cell.source, cell.source[-120:]


@pytest.mark.parametrize(("assignment", "name"), NOTEBOOKS)
def test_student_notebooks_carry_no_grading_code(assignment, name):
    for folder in (COURSE.release, COURSE.source):
        notebook = nbformat.read(folder / assignment / f"{name}.ipynb", as_version=4)
        for cell in notebook.cells:
            visible = re.sub(r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS", "", cell.source, flags=re.S)
            assert "course_grader" not in visible, (folder.name, cell.source[:120])
            assert "warnings.simplefilter" not in visible  # it would silence the student's own warnings


def test_no_file_besides_notebooks_in_source_but_what_nbgrader_ignores():
    # nbgrader copies every other file of source/<a>/ into release/<a>/ unless CourseDirectory.ignore names it:
    # the hidden checks beside each assignment must be named there, and nothing else secret may sit in source/.
    import fnmatch

    from course_grader.trusted.course.course import load_config

    ignored = list(load_config(COURSE).CourseDirectory.ignore)
    # source/_<folder>/ (helpers the hidden checks share) is no assignment: nothing releases it
    extra = [p for p in COURSE.source.rglob("*") if p.is_file() and p.suffix != ".ipynb"
             and not p.relative_to(COURSE.source).parts[0].startswith("_")
             and not any(fnmatch.fnmatch(part, pattern) for part in p.relative_to(COURSE.source).parts for pattern in ignored)]
    assert extra == []
    assert not [p for p in COURSE.release.iterdir() if p.name.startswith("_")]
    assert all(any(fnmatch.fnmatch(path.name, pattern) for pattern in ignored)
               for path in COURSE.source.glob("*/hidden_checks.py")) and list(COURSE.source.glob("*/hidden_checks.py"))
