"""The second call keeps the contract: what it sends satisfies every precondition the docstring states.

After each call the harness calls the student's function again on the same arrays and lists, multiplied in place by
factors drawn from the secret (``course_grader.trusted.judging.checks.second_calls``). A check whose inputs are tied
to each other declares how they may change together (``Check.second_call``) and what the docstring promises of them
(``Check.precondition``). Here, for every check of the course, over many secrets: every case and every second call
keep the precondition; the arguments the harness itself builds for the second call (decoded from the request, then
multiplied in place by the harness's own code) keep it too; and the reference's answer on those arguments is the
answer the check judges the second call by.
"""

import copy

import numpy as np
import pytest
from conftest import REPO

from course_grader.in_sandbox import harness
from course_grader.trusted.judging.check_registry import course_checks
from course_grader.trusted.judging.checks.cases import expected_answer
from course_grader.trusted.judging.checks.draws import case_generator
from course_grader.trusted.judging.checks.judge import prepare_cases
from course_grader.trusted.judging.checks.second_calls import precondition_failure
from course_grader.trusted.judging.wire import harness_request, new_marker

CHECKS = course_checks(REPO)
#: Secrets per check (each draws 20 to 40 cases, each with its second call; benchmarks/bench_catch_rates.py draws 50).
N_SECRETS = 3
SECRET = b"second call contract secret"
#: The checks whose arguments are tied to each other (a unit vector, a run with its data, a separable data set): each
#: must declare both how its arguments change together and what its docstring promises of them.
#: (Those this course still has: an instructor may drop the assignment that holds them.)
TIED = tuple(name for name in ("proof_terms", "proof_squeeze", "mistake_bound") if name in CHECKS)
JUDGED = sorted(name for name, check in CHECKS.items() if check.reference is not None and check.judge is None)


def test_the_checks_of_tied_arguments_declare_their_precondition_and_their_second_call():
    for name in TIED:
        assert CHECKS[name].precondition is not None and CHECKS[name].second_call is not None, name


@pytest.mark.parametrize("function", JUDGED)
def test_every_case_and_every_second_call_keep_the_precondition_and_the_reference_answers_as_judged(function):
    check = CHECKS[function]
    for draw in range(N_SECRETS):
        prepared = prepare_cases(check, case_generator(SECRET, function, f"student {draw}"))
        assert prepared.again is not None and prepared.again_expected is not None
        request = harness_request(function, prepared.cases, new_marker(), prepared.again)
        for case, follow, answer, call in zip(prepared.cases, prepared.again, prepared.again_expected, request["calls"]):
            assert precondition_failure(check, case) == "", (draw, case.behaviour)
            assert precondition_failure(check, follow) == "", (draw, follow.behaviour)
            # the harness's own second call: the first call's objects, decoded, multiplied in place by its own code
            args = [harness.decode(item) for item in call["args"]]
            kwargs = {key: harness.decode(item) for key, item in call["kwargs"].items()}
            args, kwargs = harness._second_arguments(call["again"], args, kwargs)
            sent = type(follow)(tuple(args), follow.behaviour, kwargs)
            assert precondition_failure(check, sent) == "", (draw, follow.behaviour)
            with np.errstate(all="ignore"):
                on_sent = expected_answer(check, sent)
            assert check.compare(copy.deepcopy(on_sent), answer) is None, (draw, follow.behaviour)
