"""What a hostile hand-in costs a batch against its notebook's time budget, and how long Ctrl+C takes, idle and loaded.

    .venv/bin/python benchmarks/hostile_budget.py [--notebook-seconds 30] [--cell-seconds 5] [--real]
        [--burners 0,2,4] [--only NAME ...] [--jobs 1] [--no-budget] [--no-interrupt]

1. **Budget.** Each hostile recipe of ``tests/fixtures/budget_class/`` is graded by the real ``grade`` in a batch
   of its own beside the honest student, in a fresh copy of the grader's fixture course whose ``term.toml`` sets
   ``[limits] notebook_seconds`` and ``cell_seconds`` (30 s and 5 s, so a run is short; ``--real``: the fixture
   course's own, 180 s and 15 s). Serially by default, in this process: its zygote, started by a warm-up batch,
   serves every batch, as a worker's serves its jobs (in batches of two jobs on two fresh workers, each job would
   pay a worker's start, ten seconds and more under load, which no batch of a class pays per submission). Printed
   for each: the hostile job's wall time (``resources.wall_seconds``: its preparation, execution and feedback), the
   whole batch's, what it cost the batch (the batch less the honest student's batch alone), the budget and the
   ratios, when the grader's record says the notebook ended and whether the kernel was killed at the deadline,
   whether the honest student kept full marks, and the grading kernels left afterwards (must be none).
2. **Ctrl+C.** ``perceptron-course grade --force --jobs 2`` on a class of every hostile recipe and the honest one,
   started as a subprocess in its own process group; once the first hand-in is kept (the ledger written) and the
   hostile ones are running, SIGINT goes to the group, as a terminal sends it. Printed: the seconds from SIGINT to
   the command's exit, its exit status and the processes of its group left running.

Both run once per count of ``--burners``: that many CPU-bound processes (``while True: pass``) started by this
script, stopped at the end. Nothing here is a test; copy the figures into ``BENCHMARKS.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from conftest import fixture_course, sandboxes_left  # noqa: E402

from course_grader.trusted.course.course import Course  # noqa: E402
from course_grader.trusted.course.example_class import build_submission, copy_course, load_recipes  # noqa: E402
from course_grader.trusted.course.secret import load_or_create_secret  # noqa: E402
from course_grader.trusted.pipeline import grade  # noqa: E402

RECIPES = REPO / "tests" / "fixtures" / "budget_class"
HONEST = "honest"
ASSIGNMENT = "02_algorithm"
#: A cap on waiting for a Ctrl+C'd command (or its first kept hand-in), not a measurement.
WAIT_LIMIT_SECONDS = 900


@contextmanager
def burners(count: int) -> Iterator[list[subprocess.Popen]]:
    """``count`` CPU-bound processes for the block, each stopped (by its own pid) on leaving it."""
    started = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield started
    finally:
        for process in started:
            process.kill()
            process.wait()


def set_limits(course: Course, notebook_seconds: int | None, cell_seconds: int | None) -> tuple[int, int]:
    """Write the limits into the course's ``term.toml`` (``None``: as it is); return them as the term now has them."""
    term_file = course.root / "term.toml"
    text = term_file.read_text(encoding="utf-8")
    for key, value in (("notebook_seconds", notebook_seconds), ("cell_seconds", cell_seconds)):
        if value is not None:
            text = re.sub(rf"(?m)^{key} = \d+", f"{key} = {value}", text)
    term_file.write_text(text, encoding="utf-8")
    limits = course.term().limits
    return limits.notebook_seconds, limits.cell_seconds


def course_with(students: list[str], folder: Path, limits: tuple[int | None, int | None]) -> tuple[Course, tuple[int, int]]:
    """A fresh copy of the fixture course, its limits set, with ``students`` (recipes of ``budget_class``) handed in."""
    shutil.rmtree(folder, ignore_errors=True)
    course = copy_course(fixture_course(), folder)
    applied = set_limits(course, *limits)
    recipes = load_recipes(RECIPES)
    for student in students:
        build_submission(course, recipes[student], ASSIGNMENT, course.submitted / student / ASSIGNMENT)
    load_or_create_secret(course.root)
    return course, applied


def recorded_budget(course: Course, student: str) -> dict:
    """What the grader recorded of the time budget in the student's autograded notebook (``{}`` if none)."""
    for path in sorted((course.root / "autograded" / student / ASSIGNMENT).glob("*.ipynb")):
        metadata = json.loads(path.read_text(encoding="utf-8"))["metadata"]
        return metadata.get("course_grader_grading", {}).get("time_budget", {})
    return {}


def measure_budget(name: str, work: Path, limits, jobs: int) -> dict:
    """Grade ``name`` beside the honest student in a batch of their own (``name`` honest: the honest one alone); what it cost."""
    course, (budget, cell) = course_with(sorted({name, HONEST}), work / name, limits)
    started = time.monotonic()
    outcomes = {outcome.student: outcome for outcome in grade(course, progress=False, jobs=jobs)}
    batch = time.monotonic() - started
    hostile, honest = outcomes[name], outcomes[HONEST]
    record = recorded_budget(course, name)
    ended = [seconds for seconds, event in record.get("timeline", []) if event == "the notebook ended"]
    row = {"hand-in": name, "budget": budget, "cell": cell, "job": hostile.resources.get("wall_seconds", float("nan")),
           "batch": batch, "ended": ended[-1] if ended else float("nan"), "stopped": bool(record.get("stopped")),
           "status": hostile.status, "score": f"{hostile.score:g}/{hostile.max_score:g}",
           "honest kept": honest.status == "graded" and honest.score == honest.max_score, "left": len(sandboxes_left())}
    shutil.rmtree(work / name, ignore_errors=True)
    return row


def print_budget_header(load: int) -> None:
    print(f"\n## budget, {load} burner(s): hostile job and whole batch against the notebook's budget")
    print("(the first row: the honest student alone, what any batch costs; a warm-up batch before it is not shown)")
    print("| hand-in | budget | job | job / budget | batch | its cost to the batch (batch - honest alone) | cost / budget "
          "| notebook ended | killed at deadline | score | honest kept its score | kernels left |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|", flush=True)


def print_budget_row(row: dict, honest_alone: float) -> None:
    cost = row["batch"] - honest_alone
    print(f"| `{row['hand-in']}` | {row['budget']} s (cell {row['cell']} s) | {row['job']:.1f} s | "
          f"{row['job'] / row['budget']:.2f} | {row['batch']:.1f} s | {cost:.1f} s | {cost / row['budget']:.2f} | "
          f"{row['ended']:.1f} s | {'yes' if row['stopped'] else 'no'} | {row['status']} {row['score']} | "
          f"{'yes' if row['honest kept'] else 'NO'} | {row['left']} |", flush=True)


def running_in_group(group: int) -> list[str]:
    """Command lines of the live (not zombie) processes of process group ``group``."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            command = (stat.parent / "cmdline").read_bytes()
            if int(fields[2]) == group and fields[0] != "Z" and command:
                found.append(command.replace(b"\0", b" ").decode(errors="replace")[:120])
        except (OSError, IndexError, ValueError):
            continue
    return found


def measure_interrupt(names: list[str], work: Path, limits, jobs: int, after_kept: float) -> dict:
    """Ctrl+C to ``grade --force`` while hostile hand-ins run: seconds to exit, its status, what is left running."""
    course, _ = course_with([*names, HONEST], work / "interrupt", limits)
    ledger = course.reports / "grading.json"
    command = [str(Path(sys.executable).parent / "perceptron-course"), "grade", "--quiet", "--force", "--jobs", str(jobs)]
    grading = subprocess.Popen(command, cwd=course.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    limit = time.monotonic() + WAIT_LIMIT_SECONDS
    while not ledger.exists() and grading.poll() is None and time.monotonic() < limit:
        time.sleep(0.05)
    time.sleep(after_kept)  # the next hand-ins (hostile) are running by now
    if grading.poll() is not None:
        return {"exit": float("nan"), "status": grading.returncode, "left": [], "line": "ended before the interrupt"}
    sent = time.monotonic()
    os.killpg(grading.pid, signal.SIGINT)
    _, err = grading.communicate(timeout=WAIT_LIMIT_SECONDS)
    took = time.monotonic() - sent
    left = running_in_group(grading.pid)
    shutil.rmtree(work / "interrupt", ignore_errors=True)
    return {"exit": took, "status": grading.returncode, "left": left, "line": err.strip().splitlines()[-1:] or [""]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notebook-seconds", type=int, default=30)
    parser.add_argument("--cell-seconds", type=int, default=5)
    parser.add_argument("--real", action="store_true", help="the fixture course's own limits (its term.toml)")
    parser.add_argument("--burners", default="0,2,4", help="counts of CPU-bound processes, one run each")
    parser.add_argument("--only", nargs="*", default=None, help="these recipes of budget_class only")
    parser.add_argument("--jobs", type=int, default=1, help="workers for the budget's batches (1: in this process, "
                        "whose warm zygote every batch after the first finds started); Ctrl+C always uses 2")
    parser.add_argument("--after-kept", type=float, default=3.0, help="seconds after the first kept hand-in to Ctrl+C")
    parser.add_argument("--no-budget", action="store_true")
    parser.add_argument("--no-interrupt", action="store_true")
    args = parser.parse_args()
    # A command started in the background by a script (`... &`) has SIGINT ignored, and so would the grader started
    # from here, which then keeps Ctrl+C ignored: its own handler must be what it inherits (the default).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    limits = (None, None) if args.real else (args.notebook_seconds, args.cell_seconds)
    names = args.only or sorted(name for name in load_recipes(RECIPES) if name != HONEST)
    work = Path(tempfile.mkdtemp(prefix="hostile-budget-"))
    print(f"# hostile_budget: {len(names)} hand-ins, --jobs {args.jobs}, {os.cpu_count()} cores, "
          f"load average at start {os.getloadavg()[0]:.1f}")
    try:
        for load in (int(count) for count in args.burners.split(",")):
            with burners(load):
                if not args.no_budget:
                    measure_budget(HONEST, work, limits, args.jobs)  # warm-up: this process's zygote starts
                    print_budget_header(load)
                    alone = measure_budget(HONEST, work, limits, args.jobs)
                    print_budget_row(alone, alone["batch"])
                    for name in names:
                        print_budget_row(measure_budget(name, work, limits, args.jobs), alone["batch"])
                if not args.no_interrupt:
                    result = measure_interrupt(names, work, limits, 2, args.after_kept)
                    print(f"\n## Ctrl+C, {load} burner(s): `grade --force --jobs 2` exited "
                          f"{result['exit']:.2f} s after SIGINT, status {result['status']}, "
                          f"{len(result['left'])} process(es) of its group left {result['left']}; it said {result['line']}",
                          flush=True)
            print(f"(load average after: {os.getloadavg()[0]:.1f})", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
