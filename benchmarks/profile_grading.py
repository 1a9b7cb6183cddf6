"""Where a serial grading run spends its time, per notebook: a cProfile breakdown of one checkout.

Grades a small synthetic class serially (``--jobs 1``: every submission in this process, so
cProfile sees it all) and prints, per notebook, the wall seconds of each stage. Run it with
each checkout's own environment to compare before and after:

    .venv/bin/python benchmarks/profile_grading.py [--students 2]
    ../baseline/.venv/bin/python benchmarks/profile_grading.py --checkout ../baseline

The stages nest: "autograde" holds "running the notebook", which holds "waiting for the
kernel to start" and "cells and checks"; what is left of "autograde" is nbgrader's own
bookkeeping (sanitising, gradebook, files).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import tempfile
import time
from pathlib import Path

#: Stage name -> (file suffix, function name) whose cumulative time it is.
STAGES = {
    "grade, whole run": ("trusted/pipeline.py", "grade"),
    "  one submission in its work area (grade_job)": ("trusted/running/batch.py", "grade_job"),
    "    nbgrader autograde": ("nbgrader/apps/api.py", "autograde"),
    "      running the notebook (ResilientExecute)": ("trusted/running/executor.py", "preprocess"),
    "        waiting for the kernel to start": ("nbclient/client.py", "setup_kernel"),
    "        cells and checks": ("trusted/running/executor.py", "preprocess_cell"),
    "    feedback page (generate_feedback)": ("nbgrader/apps/api.py", "generate_feedback"),
    "    static review (flags)": ("trusted/judging/flags.py", "review_submission"),
    "  merge into the course (main process)": ("trusted/running/batch.py", "merge_result"),
    "  intake (take_in, every call)": ("trusted/course/intake.py", "take_in"),
    "  sources recorded in the gradebook (once)": ("trusted/pipeline.py", "record_source_cells"),
    "  exports and report (once)": ("trusted/outputs/report.py", "write_exports"),
}
#: Builtins whose own time is a cost of its own.
BUILTINS = {"SQLite commits (fsync)": "commit' of 'sqlite3.Connection", "schema checks (jsonschema check_schema)": "check_schema"}


def cumulative(stats: pstats.Stats, suffix: str, name: str) -> float:
    """The largest cumulative time of a function ``name`` defined in a file ending with ``suffix`` (0 if absent)."""
    found = [value[3] for (path, _, function), value in stats.stats.items()  # type: ignore[attr-defined]
             if function == name and path.endswith(suffix)]
    return max(found, default=0.0)


def total_time_of(stats: pstats.Stats, fragment: str) -> float:
    return sum(value[2] for (path, _, function), value in stats.stats.items()  # type: ignore[attr-defined]
               if fragment in f"{path}{function}" or fragment in function)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkout", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--students", type=int, default=2)
    args = parser.parse_args()
    sys.path.insert(0, str(args.checkout.resolve() / "benchmarks"))
    import bench_grading

    with tempfile.TemporaryDirectory() as scratch:
        course = bench_grading.synthetic_class(Path(scratch) / "course", args.students)
        profile = cProfile.Profile()
        start = time.perf_counter()
        profile.enable()
        outcomes = bench_grading.grade(course, jobs=1, progress=False)
        profile.disable()
        elapsed = time.perf_counter() - start
    stats = pstats.Stats(profile)
    n = len(outcomes)
    print(f"{args.checkout.resolve().name}: {n} notebooks graded serially in {elapsed:.1f} s ({elapsed / n:.2f} s each)")
    print(f"{'stage':58} {'s per notebook':>15}")
    for stage, (suffix, name) in STAGES.items():
        print(f"{stage:58} {cumulative(stats, suffix, name) / n:15.3f}")
    for stage, fragment in BUILTINS.items():
        print(f"{stage:58} {total_time_of(stats, fragment) / n:15.3f}")


if __name__ == "__main__":
    main()
