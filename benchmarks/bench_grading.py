"""Autograde throughput, measured side by side in one run.

1. A synthetic class (``--students`` copies of the example class's correct and buggy
   students, all six assignments, each answer cell ending in a comment of its own) graded serially and with ``--jobs 2``: wall time,
   speed-up, and whether every score is identical.
2. The serial cost per notebook against the floor of executing the same notebooks
   (as autograde runs them: hidden tests restored) once each with nbclient in a fresh kernel.

Run:  .venv/bin/python benchmarks/bench_grading.py [--students 20] [--floor-repeats 5]
Prints ratios; copy the figures into BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import runpy
import shutil
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from course_grader.trusted.course.course import Course
from course_grader.trusted.course.example_class import build_submission, copy_course
from course_grader.trusted.pipeline import grade
from course_grader.trusted.course.secret import SECRET_FILE

REPO = Path(__file__).resolve().parents[1]
TEMPLATES = ("ada_reference", "ben_alternative", "cy_buggy", "dee_untouched")


#: Every synthetic class has this course secret, so that any two draw the same hidden cases for the same student
#: and code: scores are compared across classes (a class's own secret, drawn at its first grading, would make a
#: buggy student's score depend on which random cases happen to catch the bug).
BENCHMARK_SECRET = "b3" * 32


def synthetic_class(root: Path, n_students: int) -> Course:
    """``n_students`` students, each a copy of one of the example class's whole-class templates."""
    course = copy_course(REPO, root)
    secret = course.root / SECRET_FILE
    secret.write_text(BENCHMARK_SECRET + "\n", encoding="ascii")
    secret.chmod(0o600)
    recipes = {name: runpy.run_path(str(REPO / "example_class" / f"{name}.py")) for name in TEMPLATES}
    for k in range(n_students):
        recipe = recipes[TEMPLATES[k % len(TEMPLATES)]]
        for assignment in course.assignments():
            folder = course.submitted / f"student{k:03d}" / assignment
            build_submission(course, recipe, assignment, folder)
            sign_answers(folder, f"student{k:03d}")
    return course


def sign_answers(folder: Path, student: str) -> None:
    """End each answer cell with a comment of its own, as no two students' answers read the same.

    Otherwise every copy of a template would hand in the same text, and whatever the grader
    keeps by source (highlighted code, for one) would look cheaper than it is in a real class.
    """
    for path in folder.glob("*.ipynb"):
        notebook = nbformat.read(path, as_version=4)
        for cell in notebook.cells:
            if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("solution"):
                cell.source = f"{cell.source.rstrip()}\n# {student}'s own version"
        nbformat.write(notebook, path)


def timed_grade(course: Course, jobs: int) -> tuple[float, list]:
    start = time.perf_counter()
    outcomes = grade(course, jobs=jobs, progress=False)
    return time.perf_counter() - start, outcomes


def scores(outcomes) -> list:
    return sorted((o.student, o.assignment, o.score, tuple(sorted(o.cell_scores.items()))) for o in outcomes)


def bench_throughput(n_students: int, repeats: int) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        serial_course = synthetic_class(Path(scratch) / "serial", n_students)
        parallel_course = Course.open(shutil.copytree(serial_course.root, Path(scratch) / "parallel"))
        serial_time, serial = timed_grade(serial_course, jobs=1)
        parallel_time, parallel = timed_grade(parallel_course, jobs=2)
        floor = nbclient_floor(serial_course, repeats)
    n = len(serial)
    print(f"autograde, {n_students} students x 6 assignments = {n} notebooks, on {os.cpu_count()} cores")
    print(f"  serial (--jobs 1):  {serial_time:7.1f} s  ({serial_time / n:.2f} s per notebook)")
    print(f"  --jobs 2:           {parallel_time:7.1f} s  ({parallel_time / n:.2f} s per notebook)")
    print(f"  speed-up: {serial_time / parallel_time:.2f}x   identical scores: {scores(serial) == scores(parallel)}")
    print(f"  floor: nbclient runs an autograded notebook once in a fresh kernel in {floor:.2f} s (best of {repeats})")
    print(f"  serial cost per notebook / floor: {serial_time / n / floor:.2f}x "
          "(sandbox, nbgrader sanitising, gradebook, feedback, report included)")


def nbclient_floor(course: Course, repeats: int) -> float:
    """Mean over the six assignments of the best time to run, with nbclient in a fresh kernel, the
    notebook autograde ran (the submission with its hidden tests restored, outputs cleared)."""
    best = []
    for notebook_path in sorted((course.root / "autograded").glob("student000/*/*.ipynb")):
        times = []
        for _ in range(repeats):
            notebook = nbformat.read(notebook_path, as_version=4)
            for cell in notebook.cells:
                if cell.cell_type == "code":
                    cell.outputs, cell.execution_count = [], None
            start = time.perf_counter()
            NotebookClient(notebook, timeout=60, kernel_name="python3",
                           resources={"metadata": {"path": str(notebook_path.parent)}}).execute()
            times.append(time.perf_counter() - start)
        best.append(min(times))
    return sum(best) / len(best)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, default=20)
    parser.add_argument("--floor-repeats", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("MPLBACKEND", "Agg")
    bench_throughput(args.students, args.floor_repeats)


if __name__ == "__main__":
    main()
