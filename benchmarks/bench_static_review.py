"""The static review's cost on hostile notebooks within the intake's caps, in CPU seconds of the TA's process.

Each notebook is what a student may hand in (at most 500 cells and 5 MiB): honest solutions, and the
shapes that made the review slow (help and autocall lines, which IPython's transformer rewrites one by
one, re-reading the whole cell each time; long attribute chains; plain code up to the size cap). The
review counts its work in units (``flags.review_work``) and stops at ``flags.MAX_REVIEW_WORK`` a notebook,
so the worst case is bounded whatever the notebook holds.

Run:  .venv/bin/python benchmarks/bench_static_review.py
Prints one line per notebook; records nothing by itself (copy the figures into BENCHMARKS.md).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from nbformat.v4 import new_code_cell, new_notebook

from course_grader.trusted.course.course import Course
from course_grader.trusted.course.example_class import solved_notebook
from course_grader.trusted.judging.flags import (
    MAX_ESCAPE_LINES,
    restored_cell_ids,
    review_notebook,
)
from course_grader.intake_rules import MAX_CELLS, MAX_NOTEBOOK_BYTES

REPO = Path(__file__).resolve().parents[1]

def notebook_of(sources: list[str]):
    notebook = new_notebook(cells=[new_code_cell("import numpy as np"), *map(new_code_cell, sources)])
    size = len(json.dumps(notebook).encode())
    assert len(notebook.cells) <= MAX_CELLS and size <= MAX_NOTEBOOK_BYTES, (len(notebook.cells), size)
    return notebook

PLAIN = "\n".join(f"v{k} = np.asarray([{k}, {k}]).sum() * 2 + {k}" for k in range(200))

def hostile_notebooks() -> dict[str, object]:
    per_cell = MAX_ESCAPE_LINES  # the most a cell may hold and still be transformed
    cells = MAX_CELLS - 1
    longest_line = (MAX_NOTEBOOK_BYTES - 400_000) // (cells * per_cell)
    return {
        f"{cells} cells x {per_cell} help lines `?x`": notebook_of(["\n".join(["?x"] * per_cell)] * cells),
        f"{cells} cells x {per_cell} autocall lines `/f x`": notebook_of(["\n".join(["/f x"] * per_cell)] * cells),
        f"{cells} cells x {per_cell} help lines of {longest_line} characters": notebook_of(
            ["\n".join(["?" + "x" * (longest_line - 1)] * per_cell)] * cells),
        f"1 cell of {50 * per_cell} autocall lines": notebook_of(["\n".join(["/f x"] * 50 * per_cell)]),
        f"{cells} cells x 1 attribute chain of depth 900": notebook_of(["np" + ".a" * 900] * cells),
        f"{cells} cells of plain code ({len(PLAIN):,} characters each)": notebook_of([PLAIN] * cells),
        f"{cells} cells x 200 aliases through lists": notebook_of(
            ["\n".join(f"a{k} = [np, a{k - 1} if {k} else np][0]" for k in range(1, 200)) + "\na199.testing._private"] * cells),
    }

def cpu_seconds(notebook, assignment: str, restored: frozenset[str]) -> tuple[float, int]:
    start = time.process_time()
    review = review_notebook(notebook, assignment, restored)
    return time.process_time() - start, len(review.flags)

def main() -> None:
    course = Course.open(REPO)
    honest = max(((cpu_seconds(solved_notebook(course, a, name), a, restored_cell_ids(course, a))[0], a)
                  for a in course.assignments() for name in course.notebook_names(a)))
    print(f"{'honest solutions (slowest assignment, ' + honest[1] + ')':70s} {honest[0]:7.3f} s CPU")
    for name, notebook in hostile_notebooks().items():
        seconds, n_flags = cpu_seconds(notebook, "01_geometry", frozenset())
        print(f"{name:70s} {seconds:7.3f} s CPU  {n_flags} flags")

if __name__ == "__main__":
    main()
