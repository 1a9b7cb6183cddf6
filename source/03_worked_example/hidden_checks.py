"""Checks of assignment 03_worked_example: is_mistake and perceptron_trace."""

from __future__ import annotations

from typing import Any

import numpy as np

from perceptron_course import perceptron
from perceptron_course.datasets import linearly_separable, six_point_example, two_point_example, xor
from course_grader.checks_api import (
    N_RANDOM_CASES, as_float_array, Case, Check, compare_arrays, compare_bool, course_module, Difference,
    lists_at_random, python_literal, random_integer_points, random_labels,
)

_contracts = course_module(__file__, "contracts")
_augmented_inputs = course_module(__file__, "augmented_inputs")
_training = course_module(__file__, "training_data")
boundary_cases = _training.boundary_cases
training_cases = _training.training_cases



def _is_mistake_cases(rng: np.random.Generator) -> list[Case]:
    visible = [Case((0.0, 1, "margin"), "the visible test: rule 'margin', score 0, label +1"),
               Case((0.0, 1, "sign"), "the visible test: rule 'sign', score 0, label +1"),
               Case((0.0, -1, "sign"), "the visible test: rule 'sign', score 0, label -1"),
               Case((-2.0, -1, "margin"), "the visible test: rule 'margin', score -2, label -1")]
    grid = [
        Case((score, label, rule), f"rule {rule!r}, score {score}, label {label:+d}"
             + (" (a score of exactly 0 is the case that separates the rules)" if score == 0 else ""))
        for rule in ("margin", "sign")
        for label in (-1, 1)
        for score in (-2.5, -1e-12, 0.0, -0.0, 1e-12, 3.0)
    ]
    label = int(rng.choice([-1, 1]))
    negative_zero = Case((-0.0, label, "sign"), f"random label ({label:+d}) with a score of -0.0 under the rule 'sign': "
                         "-0.0 is 0, so sign(-0.0) = +1")
    zero = [0.0, -0.0, 0, np.float64(0.0)][int(rng.integers(4))]
    separating = Case((zero, 1, "sign"), f"random form of a score of exactly 0 ({zero!r}), label +1, rule 'sign': "
                      "sign(0) = +1 is the label, no mistake (under 'margin' it would be one)")
    # A random float score, then the score 0.0 with label +1 under 'margin': the random case's second call is made on
    # the next case's numbers and rule (a string made at run time), so a rule compared with `is` takes 'margin' for
    # 'sign' there, on every draw.
    before_margin = Case((float(rng.choice([-1.0, 1.0]) * 10.0 ** rng.uniform(-12, 3)), int(rng.choice([-1, 1])),
                          str(rng.choice(["margin", "sign"]))), "random rule, label and score")
    separating_margin = Case((0.0, 1, "margin"), "a score of exactly 0, label +1, rule 'margin': a mistake (under "
                             "'sign' it would not be one)")
    return visible + grid + [_random_is_mistake_case(rng) for _ in range(2 * N_RANDOM_CASES)] + [
        negative_zero, separating, before_margin, separating_margin]


def _random_is_mistake_case(rng: np.random.Generator) -> Case:
    """A random score (a third of them exactly 0, as a float, -0.0, an int or a NumPy float), label and rule."""
    rule, label = str(rng.choice(["margin", "sign"])), int(rng.choice([-1, 1]))
    if rng.random() < 1 / 3:
        score = [0.0, -0.0, 0, np.float64(0.0)][int(rng.integers(4))]
        return Case((score, label, rule), f"random rule and label with a score of exactly 0 (rule {rule!r}, label {label:+d})")
    score = float(rng.choice([-1.0, 1.0]) * 10.0 ** rng.uniform(-12, 3))
    if rng.random() < 0.3:
        score = int(rng.integers(-20, 21)) or 1
    return Case((score, label, rule), "random score, label and rule")


def _rule(rule) -> str:
    return "" if rule in ("margin", "sign") else f"rule = {rule!r} is not 'margin' or 'sign'"


IS_MISTAKE = Check("is_mistake", ("score", "label", "rule"), _is_mistake_cases, perceptron.is_mistake, compare_bool(),
                   precondition=lambda score, label, rule: _contracts.broken(_contracts.label(label, "label"), _rule(rule)))


def _reference_trace(X, y, rule, max_epochs):
    return list(perceptron.train(X, y, bias=False, rule=rule, max_epochs=max_epochs).weight_history)


def _compare_trace(received: Any, expected: Any) -> Difference | None:
    shown = python_literal([np.asarray(w) for w in expected], limit=1500)
    if not isinstance(received, (list, tuple)):
        return Difference("something that is not a list of weight vectors", shown, python_literal(received, limit=300))
    steps = [as_float_array(step) for step in received]
    if any(step is None for step in steps):
        return Difference("a list holding something that is not a weight vector", shown, python_literal(received, limit=300))
    if len(steps) != len(expected):
        return Difference(f"{len(steps)} weight vectors instead of {len(expected)} (the zero start plus one per update)",
                          shown, python_literal(steps, limit=1500))
    shapes = {step.shape for step in steps}
    if len(shapes) > 1:
        return Difference("weight vectors of different shapes", shown, python_literal(steps, limit=1500))
    difference = compare_arrays(exact=False, what="weight vectors")(np.array(steps), np.array(expected))
    if difference is None:
        return _wrong_snapshot_type(received, shown)
    same_array_again = len(steps) > 2 and all(np.array_equal(step, steps[-1]) for step in steps[1:])
    hint = "every vector equals the last one: append a copy of w (w.copy()) after each update" if same_array_again else ""
    return Difference(difference.what, difference.expected, difference.received, hint,
                      difference.detail.replace("at index (", "at (weight vector, coordinate) ("))


_compare_trace.returns = "list of ndarray"  # type: ignore[attr-defined]  # read by the course's test of its docstrings


def _wrong_snapshot_type(received: list | tuple, shown: str) -> Difference | None:
    """A ``Difference`` for the first weight vector (right in value) that is not an ndarray, as the docstring promises."""
    for index, step in enumerate(received):
        if not isinstance(step, np.ndarray):
            return Difference(f"weight vector {index} as a {type(step).__name__} where the docstring promises a list of "
                              "ndarray", shown, python_literal(received, limit=1500),
                              hint="append w.copy() (an ndarray) after each update, not w.tolist()")
    return None


def _trace_cases(rng: np.random.Generator) -> list[Case]:
    two_X, two_y = two_point_example()
    boundary_X, boundary_y = linearly_separable(10, 2, margin=0.05, bias=False, seed=11)
    cases = [
        Case((two_X, two_y, "sign", 10), "the lecture's 2-point example with the sign rule"),
        Case((two_X, two_y, "margin", 10), "the 2-point example with the margin rule (a score of 0 at the start is a mistake)"),
        Case((*six_point_example(), "sign", 10), "the lecture's 6-point example"),
        Case((*xor(), "margin", 3), "non-separable data (XOR): stop after max_epochs"),
    ]
    cases += [Case((boundary_X, boundary_y, "margin", cap), what)
              for cap, what in boundary_cases(boundary_X, boundary_y, "separable data", bias=False)]
    for case in training_cases(rng, visible=[]):
        if case.is_random:
            X, y = case.args
            augmented = _augmented_inputs.with_column_of_ones(X)
            rule = str(rng.choice(["margin", "sign"]))
            epochs = perceptron.train(augmented, y, bias=False, rule=rule, max_epochs=10_000).epochs
            cap = int(rng.choice([100, epochs, max(epochs - 1, 1)]))
            what = case.behaviour.split(" (max_epochs")[0]
            cases.append(Case((augmented, y, rule, cap), f"{what}, rule {rule!r} (max_epochs = {cap}; it converges in {epochs} epochs)"))
    cases.append(_cut_short_trace_case(rng))
    return lists_at_random(rng, cases, ("X", "y", "rule", "max_epochs"), ("X", "y"))


def _cut_short_trace_case(rng: np.random.Generator) -> Case:
    """Random integer data and a cap after which the run would still update: one epoch more (or less) shows."""
    while True:
        X = random_integer_points(rng, int(rng.integers(2, 10)), int(rng.integers(1, 4)), -3, 4)
        y = random_labels(rng, len(X))
        rule = str(rng.choice(["margin", "sign"]))
        cap = int(rng.integers(1, 5))
        if len(_reference_trace(X, y, rule, cap + 1)) > len(_reference_trace(X, y, rule, cap)):
            return Case((X, y, rule, cap), f"random integer data, rule {rule!r}, that still updates after "
                        f"max_epochs = {cap}: the trace stops there")


PERCEPTRON_TRACE = Check("perceptron_trace", ("X", "y", "rule", "max_epochs"), _trace_cases, _reference_trace, _compare_trace,
                         precondition=lambda X, y, rule, max_epochs: _contracts.broken(
                             _contracts.rows_of(X, y), _contracts.labels(y), _rule(rule),
                             _contracts.count_at_least_one(max_epochs, "max_epochs")))

CHECKS = (IS_MISTAKE, PERCEPTRON_TRACE)
