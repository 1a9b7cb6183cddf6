"""What the grader accepts as a submission: checked with ``lstat``, size-capped, read once, never followed.

Every rule here is applied before a submission's code runs; a submission that breaks one gets a
row in ``grades.csv`` with the reason, and the batch goes on.
"""

from __future__ import annotations

from pathlib import Path

from .course import Course
from .files import UnsafeFileError, folder_problems, name_problem, read_capped
from .safe_text import quoted

#: Most cells a submitted notebook may have (the assignments have about 25), and most characters of text
#: (Markdown, raw) per cell and in all (an assignment's own text is about 8,000).
MAX_CELLS = 500
MAX_TEXT_CELL = 10_000
MAX_TEXT_TOTAL = 60_000


def submission_problems(course: Course, student: str, assignment: str) -> str:
    """Why the grader refuses to read a submission folder at all, or ``""``.

    The ids must be plain names; ``submitted/<student>/<assignment>/`` and its parents must
    be real folders; every entry must be a folder or a singly linked regular file (no
    symbolic link, hard link, device, FIFO or socket). All judged with ``lstat``.
    """
    problems = [reason for reason in (name_problem(student, "student"), name_problem(assignment, "assignment")) if reason]
    if problems:
        return "; ".join(problems)
    refused = folder_problems(course.submitted / student / assignment, within=course.root)
    if refused:
        return ("refused, the submission folder holds what a notebook hand-in never does: "
                + "; ".join(quoted(problem, 120) for problem in refused[:5]))
    return ""


def read_submitted_notebook(path: Path):
    """The notebook at ``path`` read without following links and size-capped, then validated.

    Raises
    ------
    UnsafeFileError
        If the file cannot be read safely; ``ValueError`` and friends if it is not a notebook.
    """
    import nbformat

    notebook = nbformat.reads(read_capped(path).decode("utf-8"), as_version=4)
    if len(notebook.cells) > MAX_CELLS:  # every pass of nbgrader goes over every cell: refuse before any
        raise ValueError(f"it has {len(notebook.cells):,} cells; a submission may have at most {MAX_CELLS}")
    text = [cell.source for cell in notebook.cells if cell.cell_type != "code"]
    # nbconvert's Markdown filters take quadratic time on some text: bound what the feedback page renders
    if max(map(len, text), default=0) > MAX_TEXT_CELL or sum(map(len, text)) > MAX_TEXT_TOTAL:
        raise ValueError(f"its text cells are too long (at most {MAX_TEXT_CELL:,} characters each, {MAX_TEXT_TOTAL:,} in all)")
    nbformat.validate(notebook)
    return notebook


def unreadable_notebooks(course: Course, student: str, assignment: str) -> str:
    """Why a submission cannot be handed to nbgrader, or ``""`` if it can.

    The folder must pass ``submission_problems``; every notebook of the assignment's
    source must be there and must be a valid notebook (JSON, nbformat 4) of at most
    ``MAX_NOTEBOOK_BYTES``.
    """
    refused = submission_problems(course, student, assignment)
    if refused:
        return refused
    folder = course.submitted / student / assignment
    problems = []
    for name in course.notebook_names(assignment):
        path = folder / f"{name}.ipynb"
        if not path.is_file():
            found = sorted(quoted(p.name) for p in folder.iterdir()) if folder.is_dir() else []
            problems.append(f"{name}.ipynb is missing (found: {', '.join(found) or 'nothing'})")
            continue
        try:
            notebook = read_submitted_notebook(path)
        except UnsafeFileError as error:
            problems.append(f"{name}.ipynb is refused: {error}")
            continue
        except Exception as error:  # noqa: BLE001 - every way of not being a notebook
            message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            problems.append(f"{name}.ipynb is not a valid notebook: {quoted(message, 120)}")
            continue
        foreign = _foreign_notebook(course, assignment, notebook)
        if foreign:
            problems.append(f"{name}.ipynb {foreign}")
    return "; ".join(problems)


def _foreign_notebook(course: Course, assignment: str, notebook) -> str:
    """A reason if the notebook holds nbgrader cells but none of this assignment's."""
    ids = [cell.metadata["nbgrader"]["grade_id"] for cell in notebook.cells
           if "grade_id" in cell.get("metadata", {}).get("nbgrader", {})]
    expected = set(course.cell_ids(assignment))
    if ids and not expected.intersection(ids):
        owners = [other for other in course.assignments() if set(ids) & set(course.cell_ids(other))]
        hint = f"; it looks like the notebook of {', '.join(owners)}" if owners else ""
        return f"holds none of the cells of {assignment} (its cells: {', '.join(quoted(i) for i in ids[:4])}){hint}"
    return ""
