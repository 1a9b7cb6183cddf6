"""What the witnessing second call costs per hand-in, side by side with the second call it replaced.

For each assignment of the course, over ``--draws`` draws of the secret: the trusted side's preparation of every check
(``prepare_cases``: the cases, the reference's answers, each second call's factors and answer), the request's size,
and the judging of a correct function in process (request, harness, parser, verdict), with the second call of before
(``SECOND_CALL_TRIES = 0``: the same objects unchanged, the next case's numbers) and the one now (objects multiplied in
place by factors drawn from the secret, tried until the first answer is wrong for the second call), alternated over
``--rounds`` rounds, the least of each kept.

    .venv/bin/python benchmarks/bench_second_call.py --draws 10 --rounds 3
"""

from __future__ import annotations

import argparse
import copy
import json
import time
from pathlib import Path

from course_grader.trusted.judging.check_registry import course_checks
from course_grader.trusted.judging.checks import run_in_process, second_calls
from course_grader.trusted.judging.checks.draws import case_generator
from course_grader.trusted.judging.checks.judge import prepare_cases
from course_grader.trusted.judging.wire import harness_request

REPO = Path(__file__).resolve().parents[1]


def measure(checks: dict, draws: int, tries: int) -> dict[str, float]:
    """Seconds of preparation and of judging, and characters of request, for one hand-in (every check once), averaged."""
    saved, second_calls.SECOND_CALL_TRIES = second_calls.SECOND_CALL_TRIES, tries
    try:
        prepare = judge = request = 0.0
        for draw in range(draws):
            for name, check in checks.items():
                start = time.perf_counter()
                prepared = prepare_cases(check, case_generator(b"bench %d" % draw, name, "student"))
                prepare += time.perf_counter() - start
                request += len(json.dumps(harness_request(name, prepared.cases, "@@m@@", prepared.again)))
                if check.reference is None:
                    continue
                correct = (lambda reference: lambda *a, **k: reference(*copy.deepcopy(a), **copy.deepcopy(k)))(check.reference)
                start = time.perf_counter()
                verdict = run_in_process(check, correct, prepared=prepared)
                judge += time.perf_counter() - start
                assert verdict.passed, (name, verdict.failures[:1])
        return {"prepare": prepare / draws, "judge": judge / draws, "request": request / draws}
    finally:
        second_calls.SECOND_CALL_TRIES = saved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3, help="alternate before and now this many times; keep each's least")
    arguments = parser.parse_args()
    registry = course_checks(REPO)
    print("| assignment | checks | prepare before -> now (s) | judge in process before -> now (s) | request before -> now (kB) |")
    print("|---|---|---|---|---|")
    for assignment in sorted(registry.assignments):
        checks = registry.of(assignment)
        runs: dict[int, list[dict[str, float]]] = {0: [], second_calls.SECOND_CALL_TRIES: []}
        for _ in range(arguments.rounds):  # alternated, so that a busy machine weighs on both alike
            for tries in runs:
                runs[tries].append(measure(checks, arguments.draws, tries))
        before, now = ({key: min(run[key] for run in runs[tries]) for key in runs[tries][0]} for tries in runs)
        print(f"| {assignment} | {len(checks)} | {before['prepare']:.3f} -> {now['prepare']:.3f} "
              f"| {before['judge']:.3f} -> {now['judge']:.3f} | {before['request'] / 1e3:.1f} -> {now['request'] / 1e3:.1f} |")


if __name__ == "__main__":
    main()
