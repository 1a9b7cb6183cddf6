"""An in-place change is judged from a value: the second call's answer, which a forged report cannot give for free.

After each case the harness calls the function again on the very arrays and lists of the first call, each
multiplied in place by a factor drawn from the secret (``checks.second_calls.witnessing_second_call``). The trusted side
judges that answer against the reference's on the values *as sent*, multiplied. Here the kernel's side is played in
process, through the real request, harness and parser, by four reporters: the honest harness; a forger that
rewrites the report of the arguments to the values first sent and the second answer to the one the same call gives
again; one that rewrites the report and answers the second call from a copy of the arguments taken after the first
call; and one that rewrites the report alone, the second call being the harness's own on the objects the first call
left (attack round 13, finding 1, and its stronger forms). Expectations come from the reference (the fixture
course's checks), never from literals.
"""

import copy
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import fixture_course

from course_grader.in_sandbox import harness
from course_grader.trusted.judging.check_registry import course_checks
from course_grader.trusted.judging.checks.cases import Case
from course_grader.trusted.judging.checks.draws import case_generator
from course_grader.trusted.judging.checks.judge import PreparedCases, judge_replies, prepare_cases
from course_grader.trusted.judging.checks.second_calls import SECOND_CALL, witnessing_second_call
from course_grader.trusted.judging.wire import encode, harness_request, new_marker, read_replies

CHECKS = course_checks(Path(fixture_course()))
#: Draws of the secret for perceptron_step, the part of round 13's forgery.
N_SECRETS = 200
#: Draws for every other check whose function takes an array or a list.
N_SECRETS_EACH = 8
HONEST, SAME_CALL_AGAIN, COPY_AFTER_FIRST_CALL = "honest", "same call again", "copy after the first call"
#: A forger that rewrites only the report of the arguments: the second call is the harness's own, on the objects the
#: first call left, multiplied.
REPORT_ONLY = "report rewritten"
FORGERS = (SAME_CALL_AGAIN, COPY_AFTER_FIRST_CALL, REPORT_ONLY)


def _changes_an_argument(value) -> bool:
    """Change ``value`` (an argument) in place, as a careless function does; whether it could."""
    if isinstance(value, np.ndarray) and value.dtype.kind in "iuf" and value.size:
        value.flat[0] += 1  # one entry: adding 1 everywhere can leave an answer as it was (ovr_predict's argmax over W)
        return True
    if isinstance(value, list) and value:
        value.reverse() if len(value) > 1 and value[0] != value[-1] else value.append(value[0])
        return True
    return False


def _from_the_reference(check, *, in_place: bool):
    """The reference on copies of the arguments (right answers); with ``in_place``, it then changes its first array or
    list argument in place (the answer stays right: only the caller's argument is wrong)."""

    def function(*args, **kwargs):
        answer = check.reference(*copy.deepcopy(args), **copy.deepcopy(kwargs))
        if in_place:
            next((True for value in [*args, *kwargs.values()] if _changes_an_argument(value)), False)
        return answer

    return function


def _step_writing_w(check):
    """perceptron_step with the classic slip: the new weights are written into the caller's w."""

    def perceptron_step(w, b, x, y):
        w_new, b_new, mistake = check.reference(np.array(w, copy=True), b, np.array(x, copy=True), y)
        w[...] = w_new
        return w, b_new, mistake

    return perceptron_step


def _sent(case: Case) -> list:
    return [encode(value) for value in case.args] + [encode(case.kwargs[key]) for key in sorted(case.kwargs)]


def judged(check, function, prepared: PreparedCases, reporter: str):
    """The verdict when the kernel's side is ``reporter``: the honest harness, or a forger that rewrites the report of
    the arguments to the values first sent and answers the second call its own way."""
    calls: list = []  # (args, kwargs, copies of both taken after the call) of each first call
    pending = [True]  # whether the next call the harness makes is a first call

    def in_the_kernel(*args, **kwargs):
        first, pending[0] = pending[0], not pending[0]
        if first or reporter in (HONEST, REPORT_ONLY):
            answer = function(*args, **kwargs)
            if first:
                calls.append((copy.deepcopy(args), copy.deepcopy(kwargs)))
            return answer
        sent_args, sent_kwargs = calls[-1]
        if reporter == SAME_CALL_AGAIN:  # the value the same call gives again, from the values first sent
            case = prepared.cases[len(calls) - 1]
            return function(*copy.deepcopy(case.args), **copy.deepcopy(case.kwargs))
        # the second call's own numbers, its arrays and lists from a copy taken after the first call
        args = [copy.deepcopy(after) if isinstance(now, (np.ndarray, list)) else now for now, after in zip(args, sent_args)]
        kwargs = {key: copy.deepcopy(sent_kwargs[key]) if isinstance(now, (np.ndarray, list)) else now
                  for key, now in kwargs.items()}
        return function(*args, **kwargs)

    marker = new_marker()
    lines: list[str] = []

    def emit(line: str) -> None:
        reply = json.loads(line[len(marker):])
        if reporter != HONEST and "args_after" in reply:
            reply["args_after"] = _sent(prepared.cases[reply["index"]])  # "unchanged", says the forged report
        lines.append(marker + json.dumps(reply))

    request = harness_request(check.function, prepared.cases, marker, prepared.again)
    harness.call_all({check.function: in_the_kernel}, request, emit=emit)
    replies, stopped = read_replies("\n".join(lines), marker, len(prepared.cases))
    return judge_replies(check, prepared.cases, replies, stopped, prepared.expected, prepared.again, prepared.again_expected)


def test_perceptron_step_writing_into_w_fails_on_every_draw_whatever_the_kernel_reports_and_copying_passes():
    check = CHECKS["perceptron_step"]
    careless, careful = _step_writing_w(check), _from_the_reference(check, in_place=False)
    for draw in range(N_SECRETS):
        prepared = prepare_cases(check, case_generator(b"second call %d" % draw, check.function, "student"))
        assert judged(check, careful, prepared, HONEST).passed, draw
        for reporter in (HONEST, *FORGERS):
            verdict = judged(check, careless, prepared, reporter)
            assert not verdict.passed, (draw, reporter)
            if reporter != HONEST:  # the report of w lied; the second answer did not
                assert not any("changed its argument" in failure for failure in verdict.failures), (draw, reporter)
                assert any(SECOND_CALL in failure for failure in verdict.failures), (draw, reporter)


def test_caps_sorted_in_place_fail_on_every_draw_whatever_the_kernel_reports():
    # choose_epoch_cap's answer ignores the order of caps: only a factor per cap makes a sorted list read otherwise
    check = CHECKS["choose_epoch_cap"]
    careful = _from_the_reference(check, in_place=False)

    def sorting(X_train, y_train, X_dev, y_dev, caps):
        answer = careful(X_train, y_train, X_dev, y_dev, caps)
        caps.sort()  # attack round 13, finding 4
        return answer

    for draw in range(N_SECRETS_EACH):
        prepared = prepare_cases(check, case_generator(b"second call %d" % draw, check.function, "student"))
        assert judged(check, careful, prepared, HONEST).passed, draw
        for reporter in (HONEST, *FORGERS):
            assert not judged(check, sorting, prepared, reporter).passed, (draw, reporter)


MUTABLE_CHECKS = sorted(name for name, check in CHECKS.items() if check.judge is None and any(
    isinstance(value, (np.ndarray, list)) for case in check.cases(case_generator(b"kinds", name, "student"))
    for value in [*case.args, *case.kwargs.values()]))


def test_every_check_with_an_array_or_list_argument_is_covered():
    judged_by_value = {name for name, check in CHECKS.items() if check.judge is None}
    assert set(MUTABLE_CHECKS) <= judged_by_value and len(MUTABLE_CHECKS) >= len(judged_by_value) - 1  # is_mistake takes numbers


@pytest.mark.parametrize("name", MUTABLE_CHECKS)
def test_an_in_place_change_fails_every_check_on_every_draw_whatever_the_kernel_reports(name):
    check = CHECKS[name]
    careless, careful = _from_the_reference(check, in_place=True), _from_the_reference(check, in_place=False)
    for draw in range(N_SECRETS_EACH):
        prepared = prepare_cases(check, case_generator(b"second call %d" % draw, name, "student"))
        assert judged(check, careful, prepared, HONEST).passed, (name, draw)
        for reporter in (HONEST, *FORGERS):
            assert not judged(check, careless, prepared, reporter).passed, (name, draw, reporter)


@pytest.mark.parametrize("name", MUTABLE_CHECKS)
def test_the_second_call_takes_the_first_call_s_objects_multiplied_and_its_right_answer_is_another(name):
    check = CHECKS[name]
    prepared = prepare_cases(check, case_generator(b"second call", name, "student"))
    multiplied = 0
    for case, follow in zip(prepared.cases, prepared.again):
        for where, factor in follow.scaled.items():
            sent = case.args[where] if isinstance(where, int) else case.kwargs[where]
            received = follow.args[where] if isinstance(where, int) else follow.kwargs[where]
            expected = copy.deepcopy(sent)
            harness.scale_in_place(expected, factor)
            assert type(received) is type(sent) and np.array_equal(np.asarray(received), np.asarray(expected))
            assert np.all(np.asarray(factor) != 0)  # a change the first call made survives the multiplication
            multiplied += 1
    assert multiplied >= len(prepared.cases)  # every case's arrays and lists are multiplied
    # a kernel that sends the first answer again fails the second call on (nearly) every case
    replayed = [check.compare(first, second) is None for first, second in zip(prepared.expected, prepared.again_expected)]
    assert sum(replayed) <= len(replayed) // 10, (name, sum(replayed))


@pytest.mark.parametrize("value, factor", [
    (np.array([1, -1, 1]), -1), (np.array([[1.5, -2.0], [0.25, 4.0]]), 0.5), ([[1, 2], [3, 4]], 2),
    ([1.0, True, "a", [2.0, 3]], -2), (np.array([1, -1, -1]), np.array([-1, 1, -1])), ([1, -1, [1, 1]], [-1, 1, [1, -1]]),
])
def test_scale_in_place_multiplies_every_number_exactly_and_leaves_the_rest(value, factor):
    expected = copy.deepcopy(value)
    flat_factor = np.broadcast_to(np.asarray(factor, dtype=object), np.shape(value)) if isinstance(value, np.ndarray) else None
    harness.scale_in_place(value, factor)
    if isinstance(expected, np.ndarray):
        assert value.dtype == expected.dtype
        assert all(a == b * f for a, b, f in zip(value.ravel().tolist(), expected.ravel().tolist(), flat_factor.ravel().tolist()))
        return

    def walk(after, before, each):
        for position, (a, b) in enumerate(zip(after, before)):
            f = each[position] if isinstance(each, list) else each
            if isinstance(b, list):
                walk(a, b, f)
            elif type(b) in (int, float):
                assert a == b * f and type(a) is type(b * f)
            else:
                assert a is b  # a bool or a string stays as it was

    walk(value, expected, factor)


def test_a_case_without_arrays_or_lists_keeps_the_next_case_s_numbers():
    check = CHECKS["is_mistake"]
    prepared = prepare_cases(check, case_generator(b"second call", "is_mistake", "student"))
    assert all(not follow.scaled for follow in prepared.again)
    follow, answer = witnessing_second_call(check, prepared.cases, 0, prepared.expected[0], np.random.default_rng(0))
    first, following = prepared.cases[0].args, prepared.cases[1].args
    assert all(value == (theirs if type(theirs) is type(mine) else mine) for value, mine, theirs in zip(follow.args, first, following))
    assert answer == check.reference(*follow.args)


def test_the_request_names_each_multiplied_object_and_the_harness_multiplies_the_object_the_first_call_left():
    check = CHECKS["perceptron_step"]
    prepared = prepare_cases(check, case_generator(b"second call", check.function, "student"))
    case, follow = prepared.cases[0], prepared.again[0]
    request = harness_request(check.function, [case], "@@m@@", [follow])
    plan = request["calls"][0]["again"]["args"]
    for position, (tag, value) in enumerate(plan):
        if position in follow.scaled:
            assert tag == "scaled" and value[0] == position
            assert np.array_equal(np.asarray(value[1][1]), np.asarray(follow.scaled[position]))  # the factor, as drawn
        elif tag == "same":  # a number the next case has none of the same type for: the first call's own
            assert follow.args[position] is case.args[position] and not isinstance(case.args[position], (np.ndarray, list))
        else:
            assert tag == "value" and value == encode(follow.args[position])  # a number of its own, from the next case
    received: list = []

    def careless(w, b, x, y):
        received.append(copy.deepcopy((w, b, x, y)))
        w += 1.0  # the first call's change, which the second call must still see
        return w, b, False

    harness.call_all({check.function: careless}, request, emit=lambda line: None)
    first, second = received
    for position in follow.scaled:
        changed = copy.deepcopy(first[position]) + 1.0
        harness.scale_in_place(changed, follow.scaled[position])
        if position == 0:  # w: changed by the first call, then multiplied
            assert np.array_equal(second[position], changed)
        else:
            assert np.array_equal(second[position], follow.args[position])
