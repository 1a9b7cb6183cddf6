"""Every draw catches every bug: the corpus of ``tests/bug_witnesses.py`` judged over many secrets.

For every graded function, each common bug (written from the docstrings) must fail on every
draw, and each correct implementation written otherwise must pass on every draw: a behaviour
a docstring states has a witness among the cases of every student and every submission, not
only on lucky draws. The cases and the reference's answers are drawn once per secret and
shared by the implementations judged on them (``run_in_process(..., prepared=...)``).
"""

import pytest

from bug_witnesses import CORPUS
from perceptron_course.grading.trusted.checks import CHECKS, run_in_process
from perceptron_course.grading.trusted.checks.framework import case_generator, prepare_cases

#: Draws per function: a bug caught on 77 draws in 100 escapes all of them with probability 0.77 ** 24 < 0.2%.
N_DRAWS = 24
SECRET = b"bug witness secret"


def test_the_corpus_covers_every_check():
    assert set(CORPUS) == set(CHECKS)
    assert all(len(bugs) >= 3 and correct for bugs, correct in CORPUS.values())


@pytest.mark.parametrize("function", sorted(CHECKS))
def test_every_bug_fails_and_every_correct_style_passes_on_every_draw(function):
    bugs, correct = CORPUS[function]
    check = CHECKS[function]
    escaped: dict[str, int] = {}
    refused: dict[str, str] = {}
    for draw in range(N_DRAWS):
        student = f"student {draw}"
        prepared = prepare_cases(check, case_generator(SECRET, function, student))
        assert not prepared.dropped, prepared.dropped  # the reference answers every case it draws
        for name, implementation in bugs.items():
            if run_in_process(check, implementation, prepared=prepared).passed:
                escaped[name] = escaped.get(name, 0) + 1
        for name, implementation in correct.items():
            verdict = run_in_process(check, implementation, prepared=prepared)
            if not verdict.passed:
                refused.setdefault(name, verdict.message()[:600])
    assert not escaped, f"bugs that pass on some of {N_DRAWS} draws (name: draws passed): {escaped}"
    assert not refused, f"correct implementations that fail: {refused}"

