"""CPU time of a program's start that imports nbformat and nbgrader's API, with and without the grader's package first
(``course_grader/deferred_imports.py`` puts ``rfc3987_syntax`` off until its first use).

Run: ``.venv/bin/python benchmarks/bench_program_start.py [repeats]``. Prints the median user+system seconds of
each, measured alternately in one run, and their ratio.
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys

STARTS = {
    "import nbformat, nbgrader.api": "import nbformat, nbgrader.api",
    "import course_grader, then the same": "import course_grader, nbformat, nbgrader.api",
}


def cpu_seconds(code: str) -> float:
    """User and system CPU seconds of one ``python -c code`` (read from the children's usage around it)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", code], check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(repeats: int) -> None:
    times: dict[str, list[float]] = {name: [] for name in STARTS}
    for _ in range(repeats):  # alternately: a change of the machine's load falls on both
        for name, code in STARTS.items():
            times[name].append(cpu_seconds(code))
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, median in medians.items():
        print(f"{name:40s} {median:6.2f} s CPU (median of {repeats})")
    plain, deferred = medians.values()
    print(f"ratio (with the grader's package / without): {deferred / plain:.2f}x")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
