"""Where the warm grading of one hand-in spends its time: wall and CPU seconds per phase, without a profiler.

Grades a synthetic class serially (``--jobs 1``: every hand-in in this process, on this thread's zygote, as one of
``serve``'s workers grades it) and wraps the phases of a grading job with a clock, so the figures are the job's own
(cProfile slows Python code several-fold and so misplaces the time). For each phase: wall seconds per notebook, the
grading thread's CPU seconds in it (the rest of its wall time is waiting: for the kernel, the disk, other threads),
and how many times it ran. The phases nest as indented; "left over" is the job's time outside the phases listed.

Run:  .venv/bin/python benchmarks/timeline_handin.py [--students 3]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import functools
import importlib
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_grading  # noqa: E402

from course_grader.trusted.running import kernel_pool  # noqa: E402
from course_grader.trusted.running.sandbox import choose_isolation  # noqa: E402

RUNNING = "course_grader.trusted.running."
#: (module, class or "", function, label): the label's indent is the phase's depth.
PHASES = [
    (RUNNING + "batch", "", "_grade_job", "grading job (worker)"),
    (RUNNING + "batch", "", "_prepare_area", "  the job's area: course copied, hand-in taken in"),
    (RUNNING + "batch", "", "import_rules", "  the assignment's import rules read"),
    (RUNNING + "batch", "", "nbgrader_api", "  nbgrader's API made (its configuration)"),
    (RUNNING + "sandbox", "SandboxKernelManager", "start_in_background", "  the kernel started early (forked by the zygote)"),
    (RUNNING + "kernel_pool", "", "remove_runtime_folder", "  the kernel's runtime folder removed (chmod, rm)"),
    (RUNNING + "batch", "", "feedback_under_submitted_names", "  pages copied under the names handed in"),
    (RUNNING + "autograde", "", "review_submission", "  static review (flags)"),
    ("nbgrader.apps.api", "NbGraderAPI", "autograde", "  nbgrader autograde"),
    (RUNNING + "executor", "ResilientExecute", "preprocess", "    the notebook run"),
    (RUNNING + "sandbox", "SandboxKernelManager", "finish_start", "      waiting for the early kernel's sockets"),
    (RUNNING + "sandbox", "VerifiedSocketsClient", "wait_for_ready", "      waiting for kernel_info"),
    (RUNNING + "executor", "ResilientExecute", "preprocess_cell", "      cells"),
    (RUNNING + "graded_cells", "GradedCells", "_judge_in_kernel", "        hidden checks"),
    (RUNNING + "graded_cells", "GradedCells", "_call_in_kernel", "          the calls, in the kernel"),
    ("nbclient.client", "NotebookClient", "_cleanup_kernel", "      kernel shut down"),
    ("nbgrader.apps.api", "NbGraderAPI", "generate_feedback", "  feedback page"),
    (RUNNING + "autograde", "", "merge_stream_outputs", "  outputs merged"),
    (RUNNING + "autograde", "", "read_scores", "  scores read"),
]
WALL: dict[str, list[float]] = collections.defaultdict(list)
CPU: dict[str, list[float]] = collections.defaultdict(list)


def _clocked(original, label: str):
    """``original`` (a function or a coroutine function) that adds its wall and thread CPU seconds under ``label``."""
    def record(started: float, cpu: float) -> None:
        WALL[label].append(time.perf_counter() - started)
        CPU[label].append(time.thread_time() - cpu)

    if asyncio.iscoroutinefunction(original):
        @functools.wraps(original)
        async def timed_async(*args, **kwargs):
            started, cpu = time.perf_counter(), time.thread_time()
            try:
                return await original(*args, **kwargs)
            finally:
                record(started, cpu)
        return timed_async

    @functools.wraps(original)
    def timed(*args, **kwargs):
        started, cpu = time.perf_counter(), time.thread_time()
        try:
            return original(*args, **kwargs)
        finally:
            record(started, cpu)
    return timed


def clock_phases(phases: list[tuple[str, str, str, str]] = PHASES) -> None:
    """Wrap each phase's function in ``_clocked`` (``phases``: (module, class or "", function, label))."""
    for module_name, owner, function, label in phases:
        module = importlib.import_module(module_name)
        holder = getattr(module, owner) if owner else module
        setattr(holder, function, _clocked(getattr(holder, function), label))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, default=3)
    args = parser.parse_args()
    clock_phases()
    with tempfile.TemporaryDirectory() as scratch:
        course = bench_grading.synthetic_class(Path(scratch) / "course", args.students)
        # This thread's zygote started before the clocks run, as a warm worker's is: its start (about a second, once
        # per worker) is not a hand-in's.
        kernel_pool.warm_kernels(choose_isolation(course.term().limits.memory_mib))
        bench_grading.grade(course, jobs=1, progress=False)
    job = PHASES[0][3]
    notebooks = len(WALL[job])
    first_level = [label for *_, label in PHASES if label.startswith("  ") and not label.startswith("   ")]
    left = sum(WALL[job]) - sum(sum(WALL[label]) for label in first_level)
    print(f"{notebooks} hand-ins graded warm, one at a time; seconds per hand-in")
    print(f"{'phase':56} {'wall':>7} {'CPU':>7} {'runs':>6}")
    for *_, label in PHASES:
        print(f"{label:56} {sum(WALL[label]) / notebooks:7.3f} {sum(CPU[label]) / notebooks:7.3f} {len(WALL[label]):6}")
    print(f"{'  left over (the rest: runtime folder, kernel spec, usage, settings)':56} {left / notebooks:7.3f}")


if __name__ == "__main__":
    main()
