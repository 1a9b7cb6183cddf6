"""Where a graded notebook's CPU time goes, by process role: the TA's process, the grading kernels, the workers.

Grades a synthetic class (``bench_grading.synthetic_class``, released first, as a TA's class is) with
``--jobs 2`` and prints, per notebook: the wall time, this process's CPU time, and its children's,
split into the grading kernels' (measured exactly by the zygotes), the grading workers' jobs
(``grader_cpu_seconds`` of each job's record) and the rest (workers starting, zygotes, bubblewrap).
CPU time moves less than wall time with the machine's load, so two checkouts compare side by side.

Run:  .venv/bin/python benchmarks/cpu_by_role.py [--students 6]
(an earlier checkout: its code first on ``PYTHONPATH``, this script's path as it is)
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_grading import grade, synthetic_class  # noqa: E402

from course_grader.trusted.pipeline import record_source_cells  # noqa: E402


def cpu_seconds(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, default=6)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        course = synthetic_class(Path(scratch) / "class", args.students)
        record_source_cells(course, course.assignments())
        own, children, start = cpu_seconds(resource.RUSAGE_SELF), cpu_seconds(resource.RUSAGE_CHILDREN), time.perf_counter()
        outcomes = grade(course, jobs=2, progress=False)
        wall = time.perf_counter() - start
        own, children = cpu_seconds(resource.RUSAGE_SELF) - own, cpu_seconds(resource.RUSAGE_CHILDREN) - children
    n = len(outcomes)
    kernels = sum(o.resources.get("kernel_cpu_seconds", 0.0) for o in outcomes) / n
    jobs = sum(o.resources.get("grader_cpu_seconds", 0.0) for o in outcomes) / n
    print(f"{n} notebooks, --jobs 2, per notebook: wall {wall / n:.3f} s | TA's process {own / n:.3f} s CPU | children "
          f"{children / n:.3f} s = kernels {kernels:.3f} + workers' jobs {jobs:.3f} + the rest {children / n - kernels - jobs:.3f} "
          f"| total {(own + children) / n:.3f} s CPU")


if __name__ == "__main__":
    main()
