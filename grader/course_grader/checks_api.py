"""What an instructor writes a hidden check with: the public API of ``source/<assignment>/hidden_checks.py``.

A graded part's hidden check lives beside its notebook, in ``hidden_checks.py``, and defines
``CHECKS``, a tuple of ``Check`` objects. A ``Check`` names the student's function and its
parameters, draws the cases from the generator it is given, and says how to compare an answer
with the reference's::

    from course_grader.checks_api import Case, Check, compare_arrays, random_cases, random_points, solution

    def _double_cases(rng):
        cases = [Case((np.array([[1.0, 2.0]]),), "the visible test's point")]          # named: public
        cases += random_cases(rng, lambda rng: (random_points(rng),), "random points")  # random: secret
        return cases

    CHECKS = (Check("double", ("X",), _double_cases, solution("double", __file__),
                    compare_arrays(exact=False, what="an array of shape (n, d)")),)

The notebook's hidden-test region declares it (``check_double(double)``, imported from this
module). See ``docs/adding-a-part.md`` for the whole walk-through and
``docs/templates/hidden_checks_template.py`` for a file to start from.

The rules every check keeps (the helpers below keep them for you):

- Cases are drawn only from the generator a check is given (derived from the course secret, the
  student and their code): never from ``np.random`` or a fixed seed.
- Named cases are public (feedback shows them): every boundary the exercise states (an exact zero,
  a tie, integer input, Python lists for ``array_like``) is drawn at random too
  (``points_with_zero_score``, ``with_ties``, ``random_integer_points``, ``lists_at_random``).
- A comparison turns any value the wire accepts (numbers, strings, ragged lists, huge shapes,
  objects) into a pass or a ``Difference``; the grader catches what one still raises, but the
  message is better when the comparison says what was wrong.
- The check runs on the trusted side: the kernel gets only the cases' inputs.
- After each call the grader calls the function again on the same arrays and lists, multiplied in place. Where
  arguments are tied to each other (a run and its data, a separator and its data, a unit vector), a check declares
  ``precondition`` (what the docstring promises of the inputs) and ``second_call`` (how they may be multiplied
  together, with ``power_of_two``, ``sign`` and ``signs_like``): the grader refuses a second call that breaks the
  precondition (``CheckRefused``), so a correct function is never asked a question outside its contract::

      def _unit(history, w_star):
          return "" if np.isclose(np.linalg.norm(w_star), 1.0) else "w_star is not of unit length"

      Check("proof_terms", ("history", "w_star"), cases, reference, compare, precondition=_unit,
            second_call=lambda rng, case: {"history": power_of_two(rng), "w_star": sign(rng)})
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .trusted.judging.check_registry import checks_beside, course_module
from .trusted.judging.checks.cases import Case, Check, Compare, Difference, N_RANDOM_CASES, call_text
from .trusted.judging.checks.compare import (as_float_array, compare_arrays, compare_bool, compare_count,
                                             compare_labels, compare_number, compare_tuple, describe, holds_a_bool,
                                             holds_integers, wrong_type)
from .trusted.judging.checks.draws import (as_python_lists, integer_weights_and_boundary_points,
                                           integer_weights_and_tiny_scores, lists_at_random,
                                           points_with_zero_score, random_integer_points, random_labels, random_points)
from .trusted.judging.checks.judge import safe_case_failure
from .trusted.judging.checks.second_calls import CheckRefused, power_of_two, precondition_failure, sign, signs_like
from .trusted.judging.kernel_imports import COMMON_IMPORTS
from .trusted.judging.solution_reference import SolutionFunction, solution, solution_namespace
from .trusted.judging.wire import Reply, python_literal

__all__ = [
    # the objects of a check
    "Case", "Check", "Difference", "Compare", "N_RANDOM_CASES", "CHECKS_FILE", "COMMON_IMPORTS",
    # comparisons: arrays to a tolerance, labels, a number, a count, a bool, a tuple, a run's history
    "compare_arrays", "compare_labels", "compare_number", "compare_count", "compare_bool", "compare_tuple", "wrong_type",
    "compare_history",
    # random cases, and the stated boundaries drawn at random
    "random_cases", "random_points", "random_labels", "random_integer_points", "points_with_zero_score",
    "integer_weights_and_boundary_points", "integer_weights_and_tiny_scores", "with_ties", "lists_at_random", "as_python_lists",
    # the second call: factors for a check's own ``second_call``, and the refusal of one that breaks a precondition
    "power_of_two", "sign", "signs_like", "CheckRefused", "precondition_failure",
    # the reference, another assignment's checks, and the course's helpers shared by several checks
    "solution", "SolutionFunction", "solution_namespace", "checks_beside", "course_module",
    # for a comparison or a judge of one's own: what a value is, and how a failed case reads
    "as_float_array", "describe", "python_literal", "holds_a_bool", "holds_integers", "Reply", "call_text",
    "safe_case_failure",
]

#: The file of an assignment's hidden checks, beside its notebooks (never released, never bundled).
CHECKS_FILE = "hidden_checks.py"


# ----------------------------------------------------------------------------- random cases


def random_cases(rng: np.random.Generator, draw: Callable[[np.random.Generator], tuple], behaviour: str,
                 count: int = N_RANDOM_CASES) -> list[Case]:
    """``count`` cases whose arguments ``draw(rng)`` returns (a tuple, one value per parameter).

    ``behaviour`` says what a wrong answer on them reveals; it starts with "random" (added when
    missing), which is how the grader tells random cases from the public named ones.
    """
    text = behaviour if behaviour.startswith("random") else f"random {behaviour}"
    return [Case(tuple(draw(rng)), text) for _ in range(count)]


def with_ties(rng: np.random.Generator, values: np.ndarray, axis: int = -1) -> np.ndarray:
    """A copy of ``values`` (at least 2 entries along ``axis``) where, in each slice along ``axis``,
    one entry picked at random equals another picked at random: a tie at a random place.

    For an exercise that states what happens on a tie (``argmax`` keeps the first, say).
    """
    tied = np.array(values, copy=True)
    moved = np.moveaxis(tied, axis, -1)  # a view: writing it writes ``tied``
    length = moved.shape[-1]
    if length < 2:
        raise ValueError("with_ties needs at least two entries along the axis")
    for index in np.ndindex(*moved.shape[:-1]):
        source, target = rng.choice(length, size=2, replace=False)
        moved[index + (target,)] = moved[index + (source,)]
    return tied


# ----------------------------------------------------------------------------- a run's history


def compare_history(what: str = "the weights after each update, one row per update", *, exact: bool = False,
                    rtol: float = 1e-9, atol: float = 1e-9) -> Compare:
    """A run's history: one row per step (an array of shape (k, d), or a list of k vectors).

    A history of another length says how many steps were expected and received; otherwise the first
    step that differs is named. Any other value is a failed case, never an exception.
    """
    values = compare_arrays(exact=exact, what=what, rtol=rtol, atol=atol)

    def compare(received: Any, expected: Any) -> Difference | None:
        want = np.asarray(expected, dtype=float)
        got = as_float_array(received)
        if got is not None and got.ndim == want.ndim and got.ndim >= 1 and got.shape[1:] == want.shape[1:] \
                and len(got) != len(want):
            return Difference(f"a history of {len(got)} steps (expected {len(want)}: {what})",
                              python_literal(np.asarray(expected), limit=1500), describe(received),
                              hint="one row per step, the first one included")
        difference = values(received, expected)
        if difference is None or got is None or got.shape != want.shape or got.ndim < 1:
            return difference
        close = got == want if exact else np.isclose(got, want, rtol=rtol, atol=atol)
        step = int(np.flatnonzero(~close.reshape(len(close), -1).all(axis=1))[0])
        return Difference(f"a wrong history (step {step} is the first that differs)", difference.expected,
                          difference.received, detail=difference.detail)

    return compare


def __getattr__(name: str):
    """``check_<function>``, for a source notebook's hidden-test region run in the instructor's own kernel:
    the check of the hidden_checks.py beside the notebook (the working folder), run in process."""
    if name.startswith("check_"):
        from .trusted.judging import checks

        return getattr(checks, name)
    raise AttributeError(name)
