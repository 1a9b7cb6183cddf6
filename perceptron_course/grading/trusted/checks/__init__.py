"""The hidden tests of every assignment, run on the trusted side.

One module per assignment (``geometry`` for ``01_geometry``, ``algorithm`` for
``02_algorithm``, ...) defines a ``Check`` per graded part; ``framework`` holds
what they share (cases, comparisons, the verdict's message). A hidden-test region
in ``source/`` only declares its check, e.g. ``check_augment(augment)``: the
grader reads that declaration, runs ``augment`` in the student's sandboxed kernel
on the cases, and judges the returned data on the trusted side (``trusted/verdicts.py``).

Run in an instructor's own kernel (a ``source/`` notebook under nbval), the same
``check_augment(augment)`` judges the function in process, through the same wire
format, and raises ``AssertionError`` with the student's message if it fails.
"""

from __future__ import annotations

from typing import Callable

from . import algorithm, convergence, geometry, limitations, multiclass, worked_example
from ..wire import harness_request, new_marker, read_replies
from .framework import Check, Verdict, case_generator, judge_replies, prepare_cases

#: Every check, by the name of the student function it tests.
CHECKS: dict[str, Check] = {check.function: check for module in
                            (geometry, algorithm, worked_example, convergence, multiclass, limitations)
                            for check in module.CHECKS}

#: The secret used when an instructor runs a check in their own kernel (no student, no course secret).
INSTRUCTOR_SECRET = b"instructor's own run"


def run_in_process(check: Check, function: Callable, *, secret: bytes = INSTRUCTOR_SECRET, student: str = "instructor") -> Verdict:
    """Judge ``function`` with ``check`` in this process, through the same request, harness and parser as the kernel."""
    from ...in_sandbox import harness

    prepared = prepare_cases(check, case_generator(secret, check.function, student))
    marker = new_marker()
    lines: list[str] = []
    request = harness_request(check.function, prepared.cases, marker, prepared.again)
    harness.call_all({check.function: function}, request, emit=lines.append)
    replies, problem = read_replies("\n".join(lines), marker, len(prepared.cases))
    return judge_replies(check, prepared.cases, replies, problem, prepared.expected, prepared.again, prepared.again_expected)


def _instructor_check(check: Check) -> Callable[[Callable], None]:
    def check_function(function: Callable) -> None:
        verdict = run_in_process(check, function)
        if not verdict.passed:
            raise AssertionError(verdict.message())

    check_function.__name__ = f"check_{check.function}"
    check_function.__doc__ = f"Raise ``AssertionError`` unless ``{check.function}`` passes its hidden tests."
    return check_function


# check_augment, check_predict, ...: what the hidden-test regions of source/ call.
globals().update({f"check_{name}": _instructor_check(check) for name, check in CHECKS.items()})
__all__ = ["CHECKS", "Check", "Verdict", "run_in_process", *(f"check_{name}" for name in CHECKS)]
