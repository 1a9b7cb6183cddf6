"""Every draw catches every bug: the corpus of ``tests/bug_witnesses.py`` judged over many secrets.

For every graded function, each common bug (written from the docstrings) must fail on every
draw, and each correct implementation written otherwise must pass on every draw: a behaviour
a docstring states has a witness among the cases of every student and every submission, not
only on lucky draws. And the witness is drawn (DESIGN section 10): a bug must fail on the cases
of its draw without the public ones (those every student gets, which feedback shows and a
table could answer). The cases and the reference's answers are drawn once per secret and
shared by the implementations judged on them (``run_in_process(..., prepared=...)``).
"""

import pickle

import pytest

from bug_witnesses import CORPUS
from course_grader.trusted.judging.checks import CHECKS, run_in_process
from course_grader.trusted.judging.checks.framework import PreparedCases, case_generator, prepare_cases

#: Draws per function: a bug caught on 77 draws in 100 escapes all of them with probability 0.77 ** 20 < 0.5%.
N_DRAWS = 20
SECRET = b"bug witness secret"


def test_the_corpus_covers_every_check():
    assert set(CORPUS) == set(CHECKS)
    assert all(len(bugs) >= 3 and correct for bugs, correct in CORPUS.values())


def _key(case) -> bytes:
    return pickle.dumps((case.behaviour, case.args, sorted(case.kwargs.items())))


def _without_public_cases(prepared: PreparedCases, public: set[bytes]) -> PreparedCases:
    kept = [index for index, case in enumerate(prepared.cases) if _key(case) not in public]

    def chosen(values):
        return None if values is None else [values[index] for index in kept]

    # each case keeps its own second call (the same objects called again) and that call's answer
    return PreparedCases(chosen(prepared.cases), chosen(prepared.expected), prepared.dropped, chosen(prepared.again),
                         chosen(prepared.again_expected))


@pytest.mark.xdist_group("each test")  # each case its own unit of work (tests/xdist_units.py)
@pytest.mark.parametrize("function", sorted(CHECKS))
def test_every_bug_fails_on_drawn_cases_and_every_correct_style_passes_on_every_draw(function):
    bugs, correct = CORPUS[function]
    check = CHECKS[function]
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
