"""When a batch's once-only stages run: a timeline of the grading process, to see what comes before the first job and after the last.

Grades a synthetic class (released first, as a TA's class is when graded: its cells recorded)
with ``--jobs 2`` and prints, for each stage of ``pipeline.grade`` (recording the source cells,
the gradebook's template, the jobs, the exports and report), when it started and ended, in
seconds from the start, and this process's CPU seconds by then.

Run:  .venv/bin/python benchmarks/timeline_grading.py [--students 24]
(an earlier checkout: its code first on ``PYTHONPATH``, this script's path as it is)
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_grading import grade, synthetic_class  # noqa: E402

from course_grader.trusted import pipeline  # noqa: E402

STAGES = ("record_source_cells", "copy_gradebook", "run_jobs", "write_exports")


def timed(marks: list, start: list, name: str, function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        marks.append((f"{name} starts", time.perf_counter() - start[0], time.process_time()))
        try:
            return function(*args, **kwargs)
        finally:
            marks.append((f"{name} ends", time.perf_counter() - start[0], time.process_time()))
    return wrapper


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, default=24)
    args = parser.parse_args()
    os.environ.setdefault("MPLBACKEND", "Agg")
    with tempfile.TemporaryDirectory() as scratch:
        course = synthetic_class(Path(scratch) / "course", args.students)
        pipeline.record_source_cells(course, course.assignments())  # released
        marks: list = []
        start = [time.perf_counter()]
        for name in STAGES:
            setattr(pipeline, name, timed(marks, start, name, getattr(pipeline, name)))
        cpu = time.process_time()
        outcomes = grade(course, jobs=2, progress=False)
        marks.append(("done", time.perf_counter() - start[0], time.process_time()))
    print(f"{len(outcomes)} notebooks, --jobs 2 (seconds from the start; this process's CPU seconds by then)")
    for label, seconds, used in marks:
        print(f"  {seconds:7.2f} s  cpu {used - cpu:6.2f}  {label}")


if __name__ == "__main__":
    main()
