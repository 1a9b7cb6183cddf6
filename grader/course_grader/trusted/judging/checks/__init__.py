"""The engine of the hidden tests, run on the trusted side; the checks themselves live beside their assignment.

What every check shares, a module per concern:

- ``cases.py``: ``Check`` (the student's function, its cases, the reference, the comparison), ``Case``, and a case
  written as a call a student can paste;
- ``draws.py``: the random generator of one student's hand-in, and the random boundaries;
- ``second_calls.py``: the second call of each case, which witnesses an argument changed in place;
- ``compare.py``: the comparisons of a returned value with the reference's answer;
- ``judge.py``: the cases prepared with the reference's answers, and the ``Verdict`` judged from the replies.

Three rules hold for every check. Every behaviour a docstring states has a witness on every draw: a case built so
that its common bugs answer otherwise (a dev set every cap gets wrong, data on which stopping early changes the
answer), not one that catches them on lucky draws. Public cases never decide a behaviour alone: every boundary an
exercise states (a score of exactly 0, a tie, integer input, Python lists for ``array_like``, the epoch cap) is drawn
at random as well, with the helpers of ``draws.py``. And the judgement is total and bounded (``judge.py``).

Each assignment's checks live in ``source/<assignment>/hidden_checks.py`` of the course, written against
``course_grader.checks_api`` and loaded by ``trusted/judging/check_registry.py``. A hidden-test region in ``source/``
only declares its check, e.g. ``check_augment(augment)``: the grader reads that declaration, runs ``augment`` in the
student's sandboxed kernel on the cases, and judges the returned data on the trusted side
(``trusted/judging/verdicts.py``).

Run in an instructor's own kernel (a ``source/`` notebook under nbval, whose working folder is
the notebook's own), ``from course_grader.checks_api import check_augment`` finds
the check in the hidden_checks.py of that folder (or of another assignment of the same course),
judges the function in process through the same wire format, and raises ``AssertionError`` with
the student's message if it fails. ``CHECKS`` here is the registry of the course holding the
working folder, for code that looks checks up by name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from ..wire import harness_request, new_marker, read_replies
from .cases import Check
from .draws import case_generator
from .judge import PreparedCases, Verdict, judge_replies, prepare_cases

#: The secret used when an instructor runs a check in their own kernel (no student, no course secret).
INSTRUCTOR_SECRET = b"instructor's own run"


def run_in_process(check: Check, function: Callable, *, secret: bytes = INSTRUCTOR_SECRET, student: str = "instructor",
                   prepared: PreparedCases | None = None) -> Verdict:
    """Judge ``function`` with ``check`` in this process, through the same request, harness and parser as the kernel.

    ``prepared``: the cases and answers of ``prepare_cases`` for this secret and student, when already drawn
    (to judge many functions on the same draw).
    """
    from ....in_sandbox import harness

    prepared = prepared or prepare_cases(check, case_generator(secret, check.function, student))
    marker = new_marker()
    lines: list[str] = []
    request = harness_request(check.function, prepared.cases, marker, prepared.again)
    harness.call_all({check.function: function}, request, emit=lines.append)
    replies, problem = read_replies("\n".join(lines), marker, len(prepared.cases))
    return judge_replies(check, prepared.cases, replies, problem, prepared.expected, prepared.again, prepared.again_expected)


def instructor_check(check: Check) -> Callable[[Callable], None]:
    """``check_<function>``: raise ``AssertionError`` with the student's message unless a function passes ``check``."""

    def check_function(function: Callable) -> None:
        verdict = run_in_process(check, function)
        if not verdict.passed:
            raise AssertionError(verdict.message())

    check_function.__name__ = f"check_{check.function}"
    check_function.__doc__ = f"Raise ``AssertionError`` unless ``{check.function}`` passes its hidden tests."
    return check_function


def check_here(function: str, folder: Path | None = None) -> Check | None:
    """The check of ``function`` an instructor's notebook in ``folder`` (the working folder) declares.

    From the hidden_checks.py beside the notebook; failing that, from another assignment of its
    course (``None`` if no hidden_checks.py of the course has one).

    Raises
    ------
    LookupError
        If ``folder`` is in no course (no ``nbgrader_config.py`` and ``source/`` above it).
    """
    from ..check_registry import HIDDEN_CHECKS_FILE, course_checks, find_course_root, load_checks_file

    folder = Path.cwd() if folder is None else Path(folder)
    root = find_course_root(folder)
    if root is None:
        raise LookupError(f"{folder.resolve()} is in no course: no folder above it holds nbgrader_config.py and source/")
    beside = folder / HIDDEN_CHECKS_FILE
    own = load_checks_file(beside).checks if beside.is_file() else {}
    return own[function] if function in own else course_checks(root).get(function)


def __getattr__(name: str):
    """``CHECKS`` and ``check_<function>`` of the course holding the working folder (PEP 562)."""
    if name == "CHECKS":
        from ..check_registry import course_checks, find_course_root

        root = find_course_root(Path.cwd())
        if root is None:
            raise AttributeError(f"CHECKS: {Path.cwd()} is in no course (no nbgrader_config.py and source/ above it)")
        return course_checks(root)
    if name.startswith("check_"):
        found = check_here(name.removeprefix("check_"))
        if found is None:
            raise AttributeError(f"no hidden check of {name.removeprefix('check_')} in the hidden_checks.py files of "
                                 f"this course (looked from {Path.cwd()})")
        return instructor_check(found)
    raise AttributeError(name)


__all__ = ["Check", "Verdict", "run_in_process", "instructor_check", "check_here", "INSTRUCTOR_SECRET"]
