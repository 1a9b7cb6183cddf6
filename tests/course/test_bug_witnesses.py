"""Every draw catches every bug: each part's bug witnesses, judged by its hidden check over many secrets.

A part's witnesses live beside its check, in ``source/<assignment>/bug_witnesses.py`` (optional: a part without
witnesses is fine; docs/adding-a-part.md says how to write them). ``WITNESSES`` maps a graded function to
``(bugs, correct)``: common bugs written from the docstring, and correct implementations written otherwise.
Each bug must fail on every draw, and each correct one must pass on every draw: a behaviour a docstring states has
a witness among the cases of every student and every submission, not only on lucky draws. And the witness is drawn:
a bug must fail on the cases of its draw without the public ones (those every student gets, which feedback shows and
a table could answer). The cases and the reference's answers are drawn once per secret and shared by the
implementations judged on them (``run_in_process(..., prepared=...)``).
"""

import pickle
import runpy

import pytest
from conftest import REPO, this_course

from course_grader.trusted.judging.check_registry import course_checks
from course_grader.trusted.judging.checks import run_in_process
from course_grader.trusted.judging.checks.draws import case_generator
from course_grader.trusted.judging.checks.judge import PreparedCases, prepare_cases

#: The file of a part's bug witnesses, beside its source notebook and its hidden_checks.py.
WITNESSES_FILE = "bug_witnesses.py"
#: Draws per function: a bug caught on 77 draws in 100 escapes all of them with probability 0.77 ** 20 < 0.5%.
N_DRAWS = 20
SECRET = b"bug witness secret"
COURSE = this_course()
CHECKS = course_checks(REPO)


def witnesses_of(assignment: str) -> dict:
    """``WITNESSES`` of ``source/<assignment>/bug_witnesses.py`` (``{}`` when the assignment has none)."""
    path = COURSE.source / assignment / WITNESSES_FILE
    return runpy.run_path(str(path))["WITNESSES"] if path.is_file() else {}


WITNESSED = [(assignment, function) for assignment in COURSE.assignments() for function in sorted(witnesses_of(assignment))]


def test_witnesses_are_of_checks_of_their_own_assignment_and_hold_a_bug_and_a_correct_style():
    stale = [f"source/{assignment}/{WITNESSES_FILE}: {function} is not a check of source/{assignment}/hidden_checks.py "
             f"(renamed or dropped?): rename or delete its entries"
             for assignment, function in WITNESSED if function not in CHECKS.of(assignment)]
    assert stale == []
    for assignment, function in WITNESSED:
        bugs, correct = witnesses_of(assignment)[function]
        assert bugs and correct, f"source/{assignment}/{WITNESSES_FILE}: {function} needs a bug and a correct implementation"


def test_witnesses_files_are_not_released():
    # nbgrader copies every other file of source/<assignment>/ into release/: the configuration must name it
    from course_grader.trusted.course.course import load_config

    assert WITNESSES_FILE in load_config(COURSE).CourseDirectory.ignore
    assert not list(COURSE.release.rglob(WITNESSES_FILE))


def _key(case) -> bytes:
    return pickle.dumps((case.behaviour, case.args, sorted(case.kwargs.items())))


def _without_public_cases(prepared: PreparedCases, public: set[bytes]) -> PreparedCases:
    kept = [index for index, case in enumerate(prepared.cases) if _key(case) not in public]

    def chosen(values):
        return None if values is None else [values[index] for index in kept]

    # each case keeps its own second call (the same objects called again) and that call's answer
    return PreparedCases(chosen(prepared.cases), chosen(prepared.expected), prepared.dropped, chosen(prepared.again),
                         chosen(prepared.again_expected))


@pytest.mark.xdist_group("each test")  # each case its own unit of work (course_grader.testing.xdist_units)
@pytest.mark.parametrize(("assignment", "function"), WITNESSED, ids=[f"{a}-{f}" for a, f in WITNESSED])
def test_every_bug_fails_on_drawn_cases_and_every_correct_style_passes_on_every_draw(assignment, function):
    if function not in CHECKS.of(assignment):
        pytest.fail(f"source/{assignment}/{WITNESSES_FILE} has witnesses of {function}, which has no check there")
    bugs, correct = witnesses_of(assignment)[function]
    check = CHECKS.of(assignment)[function]
    # public: the cases two other students both get (named edge cases and the visible tests' cases)
    first, second = (check.cases(case_generator(SECRET, function, student)) for student in ("public one", "public two"))
    public = {_key(case) for case in first} & {_key(case) for case in second}
    escaped: dict[str, int] = {}
    refused: dict[str, str] = {}
    for draw in range(N_DRAWS):
        prepared = prepare_cases(check, case_generator(SECRET, function, f"student {draw}"))
        assert not prepared.dropped, prepared.dropped  # the reference answers every case it draws
        # a judge (xor_features) relates cases to each other: it judges them all
        drawn = prepared if prepared.expected is None else _without_public_cases(prepared, public)
        for name, implementation in bugs.items():
            if run_in_process(check, implementation, prepared=drawn).passed:
                escaped[name] = escaped.get(name, 0) + 1
        for name, implementation in correct.items():
            verdict = run_in_process(check, implementation, prepared=prepared)
            if not verdict.passed:
                refused.setdefault(name, verdict.message()[:600])
    assert not escaped, f"bugs that pass the drawn cases of some of {N_DRAWS} draws (name: draws passed): {escaped}"
    assert not refused, f"correct implementations that fail: {refused}"

