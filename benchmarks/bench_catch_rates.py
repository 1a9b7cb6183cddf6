"""Catch rates of the course's bug witnesses, and pass rates of its correct witnesses, over many secrets.

For each graded function with witnesses (``source/<assignment>/bug_witnesses.py``) and each of ``--secrets`` draws of
the secret, as ``tests/course/test_bug_witnesses.py`` judges them (which draws 20): every bug is judged on the drawn
cases without the public ones (those every student gets) and must fail; every correct implementation is judged on
every case and must pass. A draw that raises (``CheckRefused``: a second call that breaks a check's precondition)
counts against the check. Prints one line per witness, ``caught k/N`` or ``passed k/N``, and a summary; exits 1
unless every bug is caught and every correct implementation passes on every draw.

    .venv/bin/python benchmarks/bench_catch_rates.py --secrets 50 --jobs 2
"""

from __future__ import annotations

import argparse
import multiprocessing
import pickle
import runpy
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SECRET = b"catch rate secret"


def _key(case) -> bytes:
    return pickle.dumps((case.behaviour, case.args, sorted(case.kwargs.items())))


def witnesses(assignment: str) -> dict:
    path = REPO / "source" / assignment / "bug_witnesses.py"
    return runpy.run_path(str(path))["WITNESSES"] if path.is_file() else {}


def rates(job: tuple[str, str, int]) -> list[tuple[str, str, str, int, int]]:
    """``(function, "bug" or "correct", name, right, draws)`` for each witness of ``function``: ``right`` counts the
    draws a bug failed on, or a correct implementation passed on."""
    from course_grader.trusted.judging.check_registry import course_checks
    from course_grader.trusted.judging.checks import run_in_process
    from course_grader.trusted.judging.checks.draws import case_generator
    from course_grader.trusted.judging.checks.judge import PreparedCases, prepare_cases

    assignment, function, secrets = job
    check = course_checks(REPO).of(assignment)[function]
    bugs, correct = witnesses(assignment)[function]
    first, second = (check.cases(case_generator(SECRET, function, student)) for student in ("public one", "public two"))
    public = {_key(case) for case in first} & {_key(case) for case in second}
    right = {("bug", name): 0 for name in bugs} | {("correct", name): 0 for name in correct}
    for draw in range(secrets):
        try:
            prepared = prepare_cases(check, case_generator(SECRET, function, f"student {draw}"))
        except Exception as error:  # noqa: BLE001 - a refused check counts against every witness of it
            print(f"{function}: draw {draw} refused: {error}", file=sys.stderr)
            continue
        drawn = prepared
        if prepared.expected is not None:
            kept = [k for k, case in enumerate(prepared.cases) if _key(case) not in public]
            pick = (lambda values: None if values is None else [values[k] for k in kept])  # noqa: E731
            drawn = PreparedCases(pick(prepared.cases), pick(prepared.expected), prepared.dropped, pick(prepared.again),
                                  pick(prepared.again_expected))
        bugs, correct = witnesses(assignment)[function]  # fresh, as each hand-in's kernel is: no state of a draw before
        for name, implementation in bugs.items():
            right["bug", name] += not run_in_process(check, implementation, prepared=drawn).passed
        for name, implementation in correct.items():
            right["correct", name] += run_in_process(check, implementation, prepared=prepared).passed
    return [(function, kind, name, count, secrets) for (kind, name), count in right.items()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--secrets", type=int, default=50)
    parser.add_argument("--jobs", type=int, default=2)
    arguments = parser.parse_args()
    assignments = sorted(path.parent.name for path in (REPO / "source").glob("*/bug_witnesses.py"))
    jobs = [(assignment, function, arguments.secrets) for assignment in assignments for function in sorted(witnesses(assignment))]
    start = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(arguments.jobs) as pool:
        results = [line for lines in pool.imap(rates, jobs) for line in lines]
    misses = 0
    for function, kind, name, count, secrets in results:
        verb = "caught" if kind == "bug" else "passed"
        misses += count < secrets
        print(f"{function:22} {kind:8} {verb} {count:3}/{secrets}  {name}{'' if count == secrets else '   <- NOT EVERY DRAW'}")
    n_bugs = sum(kind == "bug" for _, kind, *_ in results)
    print(f"\n{n_bugs} bugs, {len(results) - n_bugs} correct implementations, {len(jobs)} functions, {arguments.secrets} "
          f"secrets each: {len(results) - misses} of {len(results)} right on every draw ({time.perf_counter() - start:.0f} s)")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
