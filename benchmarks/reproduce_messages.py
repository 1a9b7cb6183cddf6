"""Every failure message reproduces: its calls, pasted into a fresh Python process, give the answer it reports.

For a sample of the course's bug witnesses (``source/<assignment>/bug_witnesses.py``; every state-keeping bug, whose
answers depend on earlier calls, and then one bug of each function in turn), each judged by its hidden check on one
secret, the first failure message of the verdict is taken apart as a student would: the calls it gives (the call
under the first line, or the lines under "run these calls in the order the grader made them"), pasted as they are
into a fresh ``python`` process where the function is the witness, loaded afresh. That process sends back the
arguments and the answer of the last call; here the reference answers those arguments, the check compares, and the
message reproduces when the comparison fails with the very "expected" and "received" the message shows (or, for a
message that says the function raised, when the pasted calls raise the same exception).

    .venv/bin/python benchmarks/reproduce_messages.py --sample 20
"""

from __future__ import annotations

import argparse
import base64
import pickle
import runpy
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SECRET = b"reproduction secret"
#: Words that name a bug whose answers depend on earlier calls (they are sampled first).
STATEFUL = ("cache",)

CHILD = r'''
import base64, copy, pickle, runpy, sys
import numpy as np
bugs, _ = runpy.run_path(sys.argv[1])["WITNESSES"][sys.argv[2]]
witness = bugs[sys.argv[3]]
last = {}
def {function}(*args, **kwargs):
    last["args"], last["kwargs"] = copy.deepcopy(args), copy.deepcopy(kwargs)
    try:
        last["result"] = witness(*args, **kwargs)
    except Exception as error:
        last["raised"] = type(error).__name__
        raise
    return last["result"]
lines = sys.stdin.read().splitlines()
for line in lines:
    try:
        exec(line)
    except Exception:
        break
print(base64.b64encode(pickle.dumps(last)).decode())
'''


def calls_of(message: str) -> list[str]:
    """The lines of Python a student pastes from a failure message."""
    lines = message.splitlines()
    if any("in the order the grader made them:" in line for line in lines):
        start = next(k for k, line in enumerate(lines) if "in the order the grader made them:" in line) + 1
        taken = []
        for line in lines[start:]:
            if not line.startswith("    "):
                break
            taken.append(line.strip())
        return taken
    for k, line in enumerate(lines):
        if line.strip() == "the whole call, to paste in a cell:":
            return [lines[k + 1].strip()]
    return [lines[1].strip().split("  # ")[0]]


def shown(message: str, label: str) -> str | None:
    return next((line.split(f"  {label}: ", 1)[1] for line in message.splitlines() if line.startswith(f"  {label}: ")), None)


def sample(count: int) -> list[tuple[str, str, str]]:
    """``(assignment, function, bug)``: the state-keeping bugs first, then one bug of each function in turn."""
    every = []
    for path in sorted((REPO / "source").glob("*/bug_witnesses.py")):
        for function, (bugs, _) in sorted(runpy.run_path(str(path))["WITNESSES"].items()):
            every += [(path.parent.name, function, name) for name in bugs]
    chosen = [item for item in every if any(word in item[2] for word in STATEFUL)]
    rest = [item for item in every if item not in chosen]
    functions = sorted({function for _, function, _ in rest})
    rank = {item: (sum(1 for other in rest[:k] if other[1] == item[1]), functions.index(item[1])) for k, item in enumerate(rest)}
    chosen += sorted(rest, key=rank.__getitem__)
    return chosen[:count]


def reproduces(assignment: str, function: str, bug: str) -> tuple[bool, str]:
    from course_grader.trusted.judging.check_registry import course_checks
    from course_grader.trusted.judging.checks import run_in_process
    from course_grader.trusted.judging.checks.cases import Case, expected_answer
    from course_grader.trusted.judging.checks.draws import case_generator
    from course_grader.trusted.judging.checks.judge import prepare_cases

    check = course_checks(REPO).of(assignment)[function]
    path = REPO / "source" / assignment / "bug_witnesses.py"
    witness = runpy.run_path(str(path))["WITNESSES"][function][0][bug]  # fresh, as a hand-in's kernel
    verdict = run_in_process(check, witness, prepared=prepare_cases(check, case_generator(SECRET, function, "student")))
    if verdict.passed:
        return False, "passed (not a failure)"
    message = verdict.failures[0]
    calls = calls_of(message)
    child = subprocess.run([sys.executable, "-c", CHILD.replace("{function}", function), str(path), function, bug],
                           input="\n".join(calls), capture_output=True, text=True, timeout=120, cwd=REPO)
    if child.returncode != 0:
        return False, f"the pasted calls did not run: {child.stderr[-400:]}"
    last = pickle.loads(base64.b64decode(child.stdout.strip().splitlines()[-1]))
    if " raised " in message.splitlines()[0]:
        kind = message.splitlines()[0].split(" raised ", 1)[1].split(":")[0].split()[0]
        return last.get("raised") == kind, f"raised {last.get('raised')!r}, the message says {kind}"
    if "result" not in last:
        return False, f"the pasted calls gave no answer ({last.get('raised')})"
    if check.compare is None:
        return False, "a check without a comparison"
    expected = expected_answer(check, Case(last["args"], "pasted", last["kwargs"]))
    difference = check.compare(last["result"], expected)
    if difference is None:
        return False, "the pasted calls give the right answer"
    same = (shown(message, "expected") in (None, difference.expected)
            and shown(message, "received") in (None, difference.received))
    return same, "" if same else f"another wrong answer: {difference.received[:200]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=20)
    arguments = parser.parse_args()
    failures = 0
    for assignment, function, bug in sample(arguments.sample):
        ok, why = reproduces(assignment, function, bug)
        failures += not ok
        print(f"{'reproduces' if ok else 'DOES NOT REPRODUCE':18} {function:20} {bug}{'' if ok else '  (' + why + ')'}")
    print(f"\n{arguments.sample - failures} of {arguments.sample} messages reproduce in a fresh process")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
