"""The second call keeps a check's contract, names the real cause when it fails, and its message reproduces.

A check may declare what its docstring promises of the inputs (``Check.precondition``) and how its arguments may be
multiplied together (``Check.second_call``): the grader refuses a second call that breaks the promise
(``CheckRefused``). These tests build their own small check (a run's history and a unit vector, as a course might
write one) through the public API; the reference computes every expectation.
"""

import copy
import subprocess
import sys

import numpy as np
import pytest

from course_grader.checks_api import (
    Case, Check, CheckRefused, compare_arrays, compare_tuple, power_of_two, precondition_failure, random_cases, sign,
)
from course_grader.in_sandbox import harness
from course_grader.trusted.judging.checks import run_in_process
from course_grader.trusted.judging.checks.draws import case_generator
from course_grader.trusted.judging.checks.judge import prepare_cases

N_SECRETS = 10
#: A string constant of the code, as a notebook's literal is.
_MARGIN = "margin"


def _reference(history, w):
    history, w = np.asarray(history, dtype=float), np.asarray(w, dtype=float)
    return history @ w, np.sum(history ** 2, axis=1)


def _unit(history, w) -> str:
    return "" if np.isclose(np.linalg.norm(np.asarray(w, dtype=float)), 1.0) else "w is not of unit length"


def _draw(rng):
    d = int(rng.integers(1, 4))
    w = rng.normal(size=d)
    return np.round(rng.normal(size=(int(rng.integers(2, 6)), d)), 3), w / np.linalg.norm(w)


def _cases(rng):
    return random_cases(rng, _draw, "random history and unit w", count=6)


_COMPARE = compare_tuple(("alignment", "squared_norm"), (compare_arrays(exact=False, what="an array of shape (k,)"),
                                                         compare_arrays(exact=False, what="an array of shape (k,)")))
#: Without a declared second call: each argument gets a factor of its own, w's breaks its unit length.
UNDECLARED = Check("terms", ("history", "w"), _cases, _reference, _COMPARE, precondition=_unit)
DECLARED = Check("terms", ("history", "w"), _cases, _reference, _COMPARE, precondition=_unit,
                 second_call=lambda rng, case: {"history": power_of_two(rng), "w": sign(rng)})


def _unit_checked(history, w):
    if not np.isclose(np.linalg.norm(w), 1.0):
        raise ValueError("w must be of unit length")
    return _reference(history, w)


def _cached_by_id():
    cache = {}

    def terms(history, w):
        key = (id(history), id(w))
        if key not in cache:
            cache[key] = _reference(history, w)
        return copy.deepcopy(cache[key])

    return terms


def _prepared(check, draw):
    return prepare_cases(check, case_generator(b"contract secret", check.function, f"student {draw}"))


def test_a_second_call_that_breaks_the_precondition_is_refused():
    refused = 0
    for draw in range(N_SECRETS):
        try:
            _prepared(UNDECLARED, draw)
        except CheckRefused as error:
            assert "precondition" in str(error) and "w is not of unit length" in str(error)
            refused += 1
    assert refused > 0


def test_while_grading_a_refused_second_call_drops_its_case_named_and_the_others_judge_a_correct_function():
    dropped_any = False
    for draw in range(N_SECRETS):
        prepared = prepare_cases(UNDECLARED, case_generator(b"contract secret", "terms", f"student {draw}"),
                                 refuse_broken_second_calls=False)
        assert len(prepared.cases) == len(prepared.expected) == len(prepared.again) == len(prepared.again_expected)
        assert all(precondition_failure(UNDECLARED, follow) == "" for follow in prepared.again)
        assert all("breaks the docstring's precondition" in note for note in prepared.dropped)
        dropped_any = dropped_any or bool(prepared.dropped)
        if prepared.cases:
            assert run_in_process(UNDECLARED, _unit_checked, prepared=prepared).passed, draw
    assert dropped_any  # the same draws that test_a_second_call_that_breaks_the_precondition_is_refused refuses


def test_a_declared_second_call_keeps_the_precondition_and_a_correct_function_that_relies_on_it_passes():
    for draw in range(N_SECRETS):
        prepared = _prepared(DECLARED, draw)
        assert prepared.again is not None and len(prepared.again) == len(prepared.cases)
        for case, follow in zip(prepared.cases, prepared.again):
            assert precondition_failure(DECLARED, follow) == ""
            assert follow.args[0] is not case.args[0] and set(follow.scaled) == {0, 1}  # both multiplied
        assert run_in_process(DECLARED, _unit_checked, prepared=prepared).passed, draw


def test_a_second_call_that_multiplies_a_number_or_by_zero_is_refused():
    numbers = Check("scale", ("X", "c"), lambda rng: [Case((np.ones((2, 2)), 3), "random"), Case((np.ones((1, 2)), 2), "random")],
                    lambda X, c: np.asarray(X) * c, compare_arrays(exact=False, what="X times c"),
                    second_call=lambda rng, case: {"c": 2})
    with pytest.raises(CheckRefused, match="not an array or a list"):
        prepare_cases(numbers, np.random.default_rng(0))
    zero = Check("scale", ("X", "c"), numbers.cases, numbers.reference, numbers.compare,
                 second_call=lambda rng, case: {"X": 0})
    with pytest.raises(CheckRefused, match="by 0"):
        prepare_cases(zero, np.random.default_rng(0))


def test_a_function_that_keeps_state_is_told_so_with_the_calls_that_reproduce_it_in_a_fresh_process():
    prepared = _prepared(DECLARED, 0)
    verdict = run_in_process(DECLARED, _cached_by_id(), prepared=prepared)
    assert not verdict.passed
    message = verdict.failures[0]
    assert "in the order the grader made them" in message
    assert "cache" in message.split("hint:")[1] and "work on copies" not in message
    # the calls as the message gives them, pasted into a fresh process with the same function, answer as it says
    lines = message.splitlines()
    start = next(k for k, line in enumerate(lines) if "in the order the grader made them" in line) + 1
    calls = [line.strip() for line in lines[start:] if line.startswith("    ")]
    assert any("*=" in line for line in calls)
    program = "\n".join(["import copy", "import numpy as np", "_cache = {}",
                         "def terms(history, w):",
                         "    key = (id(history), id(w))",
                         "    if key not in _cache:",
                         "        _cache[key] = (np.asarray(history, float) @ np.asarray(w, float), np.sum(np.asarray(history, float) ** 2, axis=1))",
                         "    return copy.deepcopy(_cache[key])",
                         *calls[:-1], f"print(repr([list(part) for part in {calls[-1].split('  #')[0]}]))"])
    pasted = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=True)
    received = eval(pasted.stdout.strip())  # noqa: S307 - our own process's repr of two lists of floats
    right = _reference(*prepared.again[0].args)  # the message leads with the earliest call that failed: case 0's second
    assert not np.allclose(received[0], right[0])  # the fresh process gets the same wrong answer ...
    first = _reference(*prepared.cases[0].args)
    assert np.allclose(received[0], first[0])  # ... the first call's, kept by id


def test_a_function_that_ignores_its_inputs_is_told_it_returned_the_first_answer_again():
    answers = {}

    def replays(history, w):
        return answers.setdefault("first", _reference(history, w))

    verdict = run_in_process(DECLARED, replays, prepared=_prepared(DECLARED, 1))
    assert not verdict.passed and "returned the first call's answer again" in verdict.failures[0]


def test_strings_the_harness_sends_are_interned_as_a_notebook_literal_is():
    sent = harness.decode(["str", "".join(["mar", "gin"])])  # built at run time, as json.loads builds it
    assert sent == _MARGIN and sent is _MARGIN
    assert harness.decode(["dict", [["".join(["ru", "le"]), ["int", 1]]]]) == {"rule": 1}


def test_one_array_of_two_rows_for_two_values_is_said_in_words():
    expected = (np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0]))
    difference = _COMPARE(np.vstack(expected), expected)
    assert difference is not None
    assert difference.what.startswith("one array where a tuple of 2 separate values (alignment, squared_norm)")
    assert "one array of shape (2, 3)" in difference.received
    assert "alignment, an array of shape (3,); squared_norm, an array of shape (3,)" in difference.expected


def test_check_names_a_hidden_check_whose_second_call_is_refused_before_any_grading(monkeypatch, tmp_path):
    from types import SimpleNamespace

    from course_grader.trusted import course_check
    from course_grader.trusted.judging import check_registry

    zero = Check("scale", ("X",), lambda rng: [Case((np.ones((2, 2)),), "ones")], lambda X: np.asarray(X) * 2,
                 compare_arrays(exact=False, what="twice X"), second_call=lambda rng, case: {"X": 0})
    checks = {"01_part": {"terms": DECLARED}, "02_part": {"scale": zero, "terms": UNDECLARED}}
    monkeypatch.setattr(check_registry, "course_checks", lambda root: SimpleNamespace(of=lambda a: checks[a]))
    problems = course_check.check_case_draws(SimpleNamespace(root=tmp_path), ["01_part", "02_part"])
    assert len(problems) == 2 and all(problem.startswith("source/02_part/hidden_checks.py: ") for problem in problems)
    assert "scale: second_call multiplies 'X' by 0" in problems[0]
    assert "breaks the docstring's" in problems[1] or "precondition" in problems[1], problems[1]


_DOUBLE = "double"  # a string constant of the code, interned as a notebook's literal "double" is


def test_a_string_compared_with_is_fails_the_second_call_whose_strings_are_made_at_run_time():
    """The first call's strings are interned (``rule is "double"`` holds there, as in a notebook), the second call's
    are equal new objects (``fresh_string``): a function that compares by identity answers it wrong, its hint says to
    compare with ==, and the calls its message gives, pasted, give the same wrong answer."""
    from course_grader.trusted.judging.checks.compare import compare_number
    from course_grader.trusted.judging.checks.judge import REPLAYED_CAUSE

    check = Check("pick", ("x", "rule"), lambda rng: [Case((1.0, "double"), "one, doubled"), Case((2.0, "double"), "two, doubled"),
                                                     Case((3.0, "half"), "three, halved")],
                  lambda x, rule: x * 2 if rule == "double" else x / 2, compare_number())

    def pick(x, rule):
        return x * 2 if rule is _DOUBLE else x / 2

    sent = harness.fresh_string(harness.decode(["str", "double"]))
    assert sent == _DOUBLE and sent is not _DOUBLE
    verdict = run_in_process(check, pick, prepared=_prepared(check, 0))
    assert not verdict.passed and "compare strings with ==, never with `is`" in verdict.failures[0], verdict.failures
    assert REPLAYED_CAUSE not in verdict.failures[0]
    calls = [line.strip().split("  #")[0] for line in verdict.failures[0].split("the order the grader made them:\n")[1].splitlines()
             if line.startswith("    ")]
    assert "''.join([" in calls[-1], calls
    namespace = {"np": np, "pick": pick}
    for line in calls[:-1]:
        exec(line, namespace)
    received = verdict.failures[0].split("received: ")[1].splitlines()[0]
    assert eval(calls[-1], namespace) == float(received)
    assert run_in_process(check, lambda x, rule: x * 2 if rule == "double" else x / 2, prepared=_prepared(check, 0)).passed
