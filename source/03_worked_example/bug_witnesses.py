"""Bug witnesses of 03_worked_example: for each graded function, common bugs and correct implementations written otherwise.

Written from the docstrings of this assignment's source notebook (what each stub promises), not from its checks: each
bug breaks one promise a student can break by accident. The course's tests (``tests/course/test_bug_witnesses.py``)
judge each with the function's hidden check over many secrets: every bug must fail on every draw, every correct one
must pass on every draw. This file is optional, like any part's witnesses (docs/adding-a-part.md); it stays here with
the check, never released (``nbgrader_config.py``'s ``CourseDirectory.ignore``) and never bundled.
"""

from __future__ import annotations

from typing import Callable

import numpy as np


def _float(X) -> np.ndarray:
    return np.asarray(X, dtype=float)


def _aug(X) -> np.ndarray:
    X = _float(X)
    return np.hstack([np.ones((X.shape[0], 1)), X])


def _is_mistake(score, label, rule, *, margin=lambda m: m <= 0, sign=lambda s: 1 if s >= 0 else -1):
    return bool(margin(label * score)) if rule == "margin" else bool(sign(score) != label)


#: A string constant of the code, as a notebook's literal ``"margin"`` is (CPython interns both): ``rule is _MARGIN``
#: is the identity comparison a student writes as ``rule is "margin"``.
_MARGIN = "margin"


IS_MISTAKE_BUGS = {
    "strict < 0 under the margin rule": lambda s, lab, r: _is_mistake(s, lab, r, margin=lambda m: m < 0),
    "np.sign under the sign rule": lambda s, lab, r: _is_mistake(s, lab, r, sign=np.sign),
    "sign(0) = -1 under the sign rule": lambda s, lab, r: _is_mistake(s, lab, r, sign=lambda s: 1 if s > 0 else -1),
    "-0.0 taken as negative (signbit)": lambda s, lab, r: _is_mistake(s, lab, r, sign=lambda s: -1 if np.signbit(s) else 1),
    "the rule ignored (always margin)": lambda s, lab, r: _is_mistake(s, lab, "margin"),
    "0/1 instead of a bool": lambda s, lab, r: int(_is_mistake(s, lab, r)),
    "the rules swapped": lambda s, lab, r: _is_mistake(s, lab, "sign" if r == "margin" else "margin"),
    # `is` where == is meant: it holds for a notebook's literal "margin" (interned, as the first call's string is),
    # not for a string made at run time (the second call's)
    "the rule compared with `is`": lambda s, lab, r: _is_mistake(s, lab, "margin" if r is _MARGIN else "sign"),
}
IS_MISTAKE_CORRECT = {
    "np.bool_": lambda s, lab, r: np.bool_(lab * s <= 0) if r == "margin" else np.bool_((1 if s >= 0 else -1) != lab),
    "one expression": lambda s, lab, r: (lab * s <= 0) if r == "margin" else (lab == 1) == (s < 0),
}


def _trace(X, y, rule, max_epochs, *, copy=True, zero=True, epochs=lambda cap: cap, strict=False, every_visit=False,
           rule_used=None):
    X = _float(X)
    w = np.zeros(X.shape[1])
    history = [w.copy()] if zero else []
    rule = rule_used or rule
    for _ in range(epochs(max_epochs)):
        updated = False
        for x_i, y_i in zip(X, y):
            score = w @ x_i
            mistake = (y_i * score < 0 if strict else y_i * score <= 0) if rule == "margin" else (1 if score >= 0 else -1) != y_i
            if mistake:
                if copy:
                    w = w + y_i * x_i
                else:
                    w += y_i * x_i
                updated = True
            if mistake or every_visit:
                history.append(w.copy() if copy else w)
        if not updated:
            break
    return history


PERCEPTRON_TRACE_BUGS = {
    "the same array appended each time": lambda *args: _trace(*args, copy=False),
    "no zero vector first": lambda *args: _trace(*args, zero=False),
    "one epoch too few": lambda *args: _trace(*args, epochs=lambda c: c - 1),
    "one epoch too many": lambda *args: _trace(*args, epochs=lambda c: c + 1),
    "strict < 0 under the margin rule": lambda *args: _trace(*args, strict=True),
    "the rule ignored (always margin)": lambda *args: _trace(*args, rule_used="margin"),
    "the rule compared with `is`": lambda X, y, rule, cap: _trace(X, y, rule, cap, rule_used="margin" if rule is _MARGIN else "sign"),
    "the weights after every visit": lambda *args: _trace(*args, every_visit=True),
    "a list of lists (w.tolist()), not of ndarrays": lambda *args: [w.tolist() for w in _trace(*args)],
}
PERCEPTRON_TRACE_CORRECT = {
    "ndarray views of one (k + 1, d) array": lambda *args: list(np.array(_trace(*args))),
    "a tuple, never stopping early": lambda X, y, rule, cap: tuple(_trace(X, y, rule, cap)),
}


#: Each graded function of this assignment that has witnesses: (its common bugs, correct implementations written otherwise).
WITNESSES: dict[str, tuple[dict[str, Callable], dict[str, Callable]]] = {
    name.removesuffix("_BUGS").lower(): (value, globals()[name.removesuffix("_BUGS") + "_CORRECT"])
    for name, value in dict(globals()).items() if name.endswith("_BUGS")
}
