"""Trusted-side work on hostile replies: parse one reply line and judge it, timing each and sizing the message.

Each reply is a line a student's kernel can send (short or long); the grader parses it
(``wire.parse_reply``) and judges it against a real case of a real check
(``checks.judge.judge_replies``). Printed per reply: the line's length, the time of parsing
plus judging (median of ``--rounds``), the verdict message's length, or the exception that
escaped (a crash of the trusted side).

Run it against another checkout's package to compare (``PYTHONPATH=<old checkout> python ...``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from course_grader.trusted.judging.checks import CHECKS
from course_grader.trusted.judging.checks.draws import case_generator
from course_grader.trusted.judging.checks.judge import judge_replies
from course_grader.trusted.judging.wire import WireError, parse_reply


def _array(dtype: str, shape: list, data: list) -> list:
    return ["ndarray", {"dtype": dtype, "shape": shape, "data": data}]


def _line(result: list, args_after: list | None = None) -> str:
    return json.dumps({"index": 0, "result": result, "args_after": args_after or []})


HOSTILE = {
    # name: (check, reply line)
    "empty array of shape (10**6, 0, 10**6)": ("augment", _line(_array("<f8", [10**6, 0, 10**6], []))),
    "empty array of shape (250000, 0)": ("augment", _line(_array("<f8", [250_000, 0], []))),
    "250,000 floats (the cap)": ("augment", _line(_array("<f8", [249_000], [0.5] * 249_000))),
    "50,000 strings of 5 characters": ("ovr_predict", _line(["list", [["str", "abcde"]] * 50_000])),
    "ragged list from ovr_predict": ("ovr_predict", _line(["list", [["list", [["int", 0]] * (i % 2 + 1)] for i in range(20)]])),
    "np.uint64(2**63) as a cap": ("choose_epoch_cap", _line(["np.int", 2**63])),
    "2**64 - 1 as a radius": ("radius", _line(["int", 2**64 - 1])),
    "strings in the arguments after the call": ("predict", _line(_array("<i8", [3], [1, -1, 1]), [
        _array("<U3", [2], ["1.0", "x"]), ["float", 0.0], _array("<U3", [3, 2], ["a"] * 6)])),
    "nested lists 8 deep": ("augment", _line(json.loads("[\"list\", [" * 8 + "[\"float\", 1.0]" + "]]" * 8))),
}


def measure(check_name: str, line: str, rounds: int) -> tuple[float, str]:
    check = CHECKS[check_name]
    cases = check.cases(case_generator(b"bench", check_name, "bench"))[:1]
    times, outcome = [], ""
    for _ in range(rounds):
        start = time.perf_counter()
        try:
            reply = parse_reply(line)
            verdict = judge_replies(check, cases, [reply])
            outcome = f"{len(verdict.message()):,} characters of message"
        except WireError as error:
            outcome = f"refused by the wire: {str(error)[:70]}"
        except Exception as error:  # noqa: BLE001 - what this measures: a crash of the trusted side
            outcome = f"CRASH {type(error).__name__}: {str(error)[:60]}"
        times.append(time.perf_counter() - start)
    return statistics.median(times), outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    rounds = parser.parse_args().rounds
    print("| reply | line (chars) | parse + judge (ms) | outcome |")
    print("|---|---|---|---|")
    for name, (check_name, line) in HOSTILE.items():
        seconds, outcome = measure(check_name, line, rounds)
        print(f"| {name} ({check_name}) | {len(line):,} | {seconds * 1000:.1f} | {outcome} |")


if __name__ == "__main__":
    main()
