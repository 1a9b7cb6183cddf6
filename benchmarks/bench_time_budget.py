"""What a hostile hand-in costs a batch, against its notebook's time budget.

    .venv/bin/python benchmarks/bench_time_budget.py [RECIPES] [--budget SECONDS] [--out FOLDER]

Grades the recipes (default: ``grader/tests/fixtures/attacks_hostile_strings/time``: an honest student, an exception
flood, a hang that ignores signals) serially in a fresh copy of the course, as root in the sandbox, with the term's
budget or ``--budget``; prints, per submission, its wall time (``resources.wall_seconds`` of its replay record)
and what the grader recorded of the budget (when the notebook ended, whether the kernel was killed at the deadline).
To measure a commit before, run it on that commit's package: ``git archive <commit> | tar -x -C /tmp/old``, then
``PYTHONPATH=/tmp/old .venv/bin/python benchmarks/bench_time_budget.py --repo /tmp/old``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

from course_grader.trusted.course.example_class import build_example_class, copy_course
from course_grader.trusted.pipeline import grade
from course_grader.trusted.course.secret import load_or_create_secret

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("recipes", nargs="?", default=str(REPO / "grader" / "tests" / "fixtures" / "attacks_hostile_strings" / "time"))
    parser.add_argument("--budget", type=int, default=None, help="the notebook's time budget (default: the course's)")
    parser.add_argument("--repo", default=str(REPO), help="the checkout whose course (config, source, release) is copied")
    parser.add_argument("--out", default="/tmp/bench-time-budget")
    args = parser.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    course = copy_course(Path(args.repo), Path(args.out))
    if args.budget is not None:
        with (course.root / "nbgrader_config.py").open("a", encoding="utf-8") as config:
            config.write(f"\nc.ResilientExecute.time_budget = {args.budget}\n")
    build_example_class(course, Path(args.recipes))
    load_or_create_secret(course.root)
    started = time.monotonic()
    outcomes = grade(course, progress=False, jobs=1)
    print(f"batch: {time.monotonic() - started:.1f} s")
    for outcome in sorted(outcomes, key=lambda o: o.student):
        notebook = course.root / "autograded" / outcome.student / outcome.assignment
        recorded = {}
        for path in sorted(notebook.glob("*.ipynb")):
            recorded = json.loads(path.read_text(encoding="utf-8"))["metadata"].get("course_grader_grading", {})
        budget = recorded.get("time_budget", {})
        ended = [seconds for seconds, event in budget.get("timeline", []) if event == "the notebook ended"]
        print(f"{outcome.student}: {outcome.status} {outcome.score:g}/{outcome.max_score:g}, "
              f"job {outcome.resources.get('wall_seconds', float('nan')):.1f} s; budget {budget.get('seconds', '?')} s, "
              f"notebook ended at {ended[-1] if ended else '?'} s, stopped: {budget.get('stopped') or 'no'}")


if __name__ == "__main__":
    main()
