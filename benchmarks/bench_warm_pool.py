"""Grading with warm kernels against the fresh-kernel floor, measured side by side in one run.

1. The floor: nbclient runs each submitted notebook of one student (the six assignments,
   as handed in) once in a fresh ``python3`` kernel, no sandbox, no grading: what any
   grader that starts a fresh kernel per notebook pays at least. Also a fresh kernel alone
   (start, ready, shut down).
2. ``perceptron-course grade --jobs 2`` on a synthetic class (copies of the example class's
   correct, alternative, buggy and untouched students; released, as a TA's class is when it is
   graded: the gradebook knows its cells): seconds per notebook, its ratio to
   the floor (goal: at most 0.35); then on a class ``--large`` times as big (against the floor
   measured again just before it: a shared machine's speed drifts within minutes), which gives the
   cost of one more notebook (the difference of the two batches: what a batch pays once, the
   zygotes, the report and the exports, drops out) and the projection to 300 students x 6
   assignments (the larger batch, plus the notebooks still missing at the cost of one more).
3. The same class graded serially: the scores must be identical; and with ``--baseline
   CHECKOUT`` (an earlier commit with its own ``.venv``) the baseline's serial grading of
   the same class too, scores compared.
4. The pool: start-up of one zygote, its memory (RSS) and a kernel's peak memory.

Run:  .venv/bin/python benchmarks/bench_warm_pool.py [--students 8] [--large 3] [--baseline ../baseline]
Prints ratios; copy the figures into BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from jupyter_client.manager import start_new_kernel
from nbclient import NotebookClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_grading import scores, synthetic_class, timed_grade  # noqa: E402

from course_grader.trusted.running import kernel_pool  # noqa: E402
from course_grader.trusted.course.course import Course  # noqa: E402
from course_grader.trusted.pipeline import record_source_cells  # noqa: E402

CLASS_SIZE, ASSIGNMENTS = 300, 6

#: Grades the class at argv[2] serially in the checkout argv[1]; prints the scores as JSON.
BASELINE_RUN = """
import json, sys
from pathlib import Path
sys.path.insert(0, str(Path(sys.argv[1]) / "benchmarks"))
import bench_grading
from course_grader.trusted.course.course import Course
outcomes = bench_grading.grade(Course.open(Path(sys.argv[2])), jobs=1, progress=False)
print(json.dumps(bench_grading.scores(outcomes)))
"""


def fresh_kernel_floor(course: Course, repeats: int) -> tuple[float, float]:
    """Mean over one student's six submitted notebooks of the best nbclient run in a fresh kernel; and a kernel alone."""
    best = []
    for path in sorted((course.submitted / "student000").glob("*/*.ipynb")):
        times = []
        for _ in range(repeats):
            notebook = nbformat.read(path, as_version=4)
            start = time.perf_counter()
            NotebookClient(notebook, timeout=120, kernel_name="python3", allow_errors=True,
                           resources={"metadata": {"path": str(path.parent)}}).execute()
            times.append(time.perf_counter() - start)
        best.append(min(times))
    alone = []
    for _ in range(repeats):
        start = time.perf_counter()
        manager, client = start_new_kernel(kernel_name="python3")
        client.stop_channels()
        manager.shutdown_kernel(now=True)
        alone.append(time.perf_counter() - start)
    return sum(best) / len(best), min(alone)


def released(course: Course) -> Course:
    """The class as a TA grades it: released (``perceptron-course release``), so the gradebook knows its cells."""
    record_source_cells(course, course.assignments())
    return course


def zygote_figures() -> tuple[float, int, int]:
    """Seconds to start a zygote, its resident memory (KiB), and the peak memory of one kernel it forks (KiB)."""
    kernel_pool.close_zygotes()
    start = time.perf_counter()
    zygote = kernel_pool.zygote_for_this_thread()
    started = time.perf_counter() - start
    rss = 0
    for pid in _descendants(zygote.process.pid):
        status = Path(f"/proc/{pid}/status").read_text()
        if "python" in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"):
            rss = max(rss, int(status.split("VmRSS:")[1].split()[0]))
    folder = zygote.kernel_folder()
    (folder / "sockets").mkdir()
    (folder / "kernel.json").write_text("{}")
    kernel = zygote.spawn(folder, folder / "kernel.json", "01_geometry", 3072,
                          probe_code="import numpy as np\nnp.ones((100, 100)).sum()\n")
    kernel.wait(120)
    kernel_pool.close_zygotes()
    return started, rss, kernel.max_rss_kb or 0


def _descendants(pid: int) -> list[int]:
    found, queue = [], [pid]
    while queue:
        current = queue.pop()
        found.append(current)
        try:
            for task in Path(f"/proc/{current}/task").iterdir():
                queue += [int(child) for child in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, default=8)
    parser.add_argument("--large", type=int, default=3, help="the second --jobs 2 class is this many times as big")
    parser.add_argument("--floor-repeats", type=int, default=3)
    parser.add_argument("--baseline", type=Path, help="an earlier checkout with its own .venv: its serial scores")
    args = parser.parse_args()
    os.environ.setdefault("MPLBACKEND", "Agg")
    with tempfile.TemporaryDirectory() as scratch:
        parallel_course = released(synthetic_class(Path(scratch) / "parallel", args.students))
        serial_course = Course.open(shutil.copytree(parallel_course.root, Path(scratch) / "serial"))
        baseline_course = shutil.copytree(parallel_course.root, Path(scratch) / "baseline")
        floor, kernel_alone = fresh_kernel_floor(parallel_course, args.floor_repeats)
        kernel_pool.close_zygotes()
        parallel_time, parallel = timed_grade(parallel_course, jobs=2)
        serial_time, serial = timed_grade(serial_course, jobs=1)
        kernel_pool.close_zygotes()
        large_class = released(synthetic_class(Path(scratch) / "large", args.students * args.large))
        # Measured again next to the larger batch: a shared machine's speed drifts by a tenth or more within minutes.
        floor_again, _ = fresh_kernel_floor(parallel_course, args.floor_repeats)
        kernel_pool.close_zygotes()
        large_time, large = timed_grade(large_class, jobs=2)
        started, zygote_rss, kernel_rss = zygote_figures()
        baseline_same = None
        if args.baseline is not None:
            python = args.baseline.resolve() / ".venv" / "bin" / "python"
            printed = subprocess.run([str(python), "-c", BASELINE_RUN, str(args.baseline.resolve()), str(baseline_course)],
                                     capture_output=True, text=True, check=True, cwd=args.baseline).stdout
            baseline_same = json.loads(printed.splitlines()[-1]) == json.loads(json.dumps(scores(serial)))
    n = len(parallel)
    per_notebook = parallel_time / n
    print(f"{args.students} students x 6 assignments = {n} notebooks, on {os.cpu_count()} cores")
    print(f"  floor: a submitted notebook run by nbclient in a fresh kernel: {floor:.2f} s "
          f"(mean of six, best of {args.floor_repeats}); a fresh kernel alone: {kernel_alone:.2f} s")
    print(f"  grade --jobs 2: {parallel_time:.1f} s = {per_notebook:.2f} s per notebook = "
          f"{per_notebook / floor:.2f}x the floor (goal <= 0.35)")
    print(f"  grade --jobs 1: {serial_time:.1f} s = {serial_time / n:.2f} s per notebook = {serial_time / n / floor:.2f}x the floor")
    print(f"  identical scores, serial and --jobs 2: {scores(serial) == scores(parallel)}"
          + ("" if baseline_same is None else f"; and the baseline's serial path: {baseline_same}"))
    per_large = large_time / len(large)
    one_more = (large_time - parallel_time) / (len(large) - n)
    both_floors = (floor + floor_again) / 2
    print(f"  floor measured again before the larger batch: {floor_again:.2f} s")
    print(f"  grade --jobs 2, {len(large)} notebooks: {large_time:.1f} s = {per_large:.2f} s per notebook = "
          f"{per_large / floor_again:.2f}x the floor measured next to it")
    print(f"  one more notebook (the difference of the two --jobs 2 batches): {one_more:.2f} s = "
          f"{one_more / both_floors:.2f}x the mean of the two floors")
    projected = (large_time + (CLASS_SIZE * ASSIGNMENTS - len(large)) * one_more) / 60
    per_class_notebook = projected * 60 / (CLASS_SIZE * ASSIGNMENTS)
    print(f"  projection, {CLASS_SIZE} x {ASSIGNMENTS} with --jobs 2: {projected:.1f} min (goal < 15) = "
          f"{per_class_notebook:.2f} s per notebook = {per_class_notebook / both_floors:.2f}x the mean floor (goal <= 0.35); "
          f"at the {n}-notebook batch's cost per notebook: {CLASS_SIZE * ASSIGNMENTS * per_notebook / 60:.1f} min")
    print(f"  identical scores in the larger class's copies of the same students: "
          f"{scores(large)[:len(parallel)] == scores(parallel)}")
    print(f"  pool: a zygote starts in {started:.2f} s, holds {zygote_rss / 1024:.0f} MiB resident; "
          f"a kernel it forks peaks at {kernel_rss / 1024:.0f} MiB (pages shared with the zygote included)")


if __name__ == "__main__":
    main()
