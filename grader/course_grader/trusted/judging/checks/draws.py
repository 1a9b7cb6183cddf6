"""Random draws of a check's cases: the generator of one student's hand-in, and random boundaries.

Named cases are public: every student sees a failed one whole in feedback, and a function
can answer them from a table. So every boundary an exercise states (a score of exactly 0,
a tie, integer input, Python lists for ``array_like``, the epoch cap) is also drawn at
random, from the generator of the student and submission, by the helpers below. Their
cases are random cases (``Case.is_random``): a behaviour text starting with "random".
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any, Sequence

import numpy as np

from .cases import Case


def case_generator(secret: bytes, function: str, student: str, submission: str = "") -> np.random.Generator:
    """The random generator of one student's cases for one function.

    Derived from the course secret, so nobody without it can know the cases; from the
    student, so one student's cases tell nothing about another's; and from the hand-in
    (``submission``: ``hand_in_digest``, every byte handed in), so the answers a failed case
    shows in feedback are useless to any other hand-in: a change of any cell, output, tag or
    metadata draws new cases. The same secret, student and hand-in always give the same cases:
    a regrade is identical. The parts are length-prefixed under an HMAC keyed by the secret, so
    no two different lists of parts give the same generator.
    """
    mac = hmac.new(secret, b"perceptron-course cases v2", hashlib.sha256)
    for part in (function.encode("utf-8"), student.encode("utf-8", "surrogateescape"), submission.encode("utf-8")):
        mac.update(len(part).to_bytes(8, "big") + part)
    return np.random.default_rng(np.random.SeedSequence(int.from_bytes(mac.digest()[:16], "little")))

def random_points(rng: np.random.Generator) -> np.ndarray:
    """Random float points, rounded to 3 decimals so that a failed call reads short.

    One point (n = 1) or one feature (d = 1) come often: shapes a public case shows once.
    """
    n = 1 if rng.random() < 0.15 else int(rng.integers(1, 30))
    d = 1 if rng.random() < 0.2 else int(rng.integers(1, 6))
    return np.round(rng.normal(size=(n, d)), 3)

def random_labels(rng: np.random.Generator, n: int) -> np.ndarray:
    return np.where(rng.random(n) < 0.5, -1, 1)

def random_integer_points(rng: np.random.Generator, n: int | None = None, d: int | None = None,
                          low: int = -4, high: int = 5) -> np.ndarray:
    """Random points of int64 dtype (``n`` and ``d`` drawn when not given)."""
    n = int(rng.integers(1, 12)) if n is None else n
    d = int(rng.integers(1, 5)) if d is None else d
    return rng.integers(low, high, size=(n, d))

def points_with_zero_score(rng: np.random.Generator, w: np.ndarray, b: float, n: int,
                           low: int = -4, high: int = 5, tries: int = 400) -> np.ndarray:
    """Up to ``n`` integer points ``x`` with ``w·x + b == 0`` exactly (``w`` and ``b`` whole numbers).

    Exact in floating point whatever the order of summation, since every term is a small
    whole number. Fewer than ``n`` (possibly none) when the hyperplane holds few integer points.
    """
    w = np.asarray(w, dtype=float)
    found: list[np.ndarray] = []
    nonzero = np.flatnonzero(w)
    if not len(nonzero):
        return random_integer_points(rng, n, len(w), low, high).astype(float) if b == 0 else np.zeros((0, len(w)))
    for _ in range(tries):
        if len(found) == n:
            break
        x = rng.integers(low, high, size=len(w)).astype(float)
        j = int(rng.choice(nonzero))
        x[j] = 0.0
        rest = -(float(x @ w) + float(b))
        if rest % w[j] == 0:
            x[j] = rest / w[j]
            if float(np.dot(x, w)) + float(b) == 0.0:
                found.append(x)
    return np.array(found, dtype=float).reshape(len(found), len(w))

def integer_weights_and_boundary_points(rng: np.random.Generator, n: int, d: int) -> tuple[np.ndarray, int, np.ndarray]:
    """``(w, b, X)``: random integer weights and bias, and ``n`` integer points, at least one with score exactly 0.

    Sometimes ``w = 0`` and ``b = 0``, where every score is 0. The rows on the boundary are
    mixed among the others at random positions.
    """
    if rng.random() < 0.15:
        return np.zeros(d, dtype=np.int64), 0, random_integer_points(rng, n, d)
    w, b, X, _, _ = _weights_and_boundary_rows(rng, n, d)
    return w, b, X

def _weights_and_boundary_rows(rng: np.random.Generator, n: int, d: int,
                               at_least: int = 1) -> tuple[np.ndarray, int, np.ndarray, np.ndarray, int]:
    """``(w, b, X, rows, j)``: nonzero integer ``w`` with ``w[j]`` in {-2, -1, 1, 2}, and ``n`` integer points of which
    ``rows`` (at least ``at_least``, at random positions) have score exactly 0."""
    w = rng.integers(-3, 4, size=d)
    value = int(rng.choice([-2, -1, 1, 2]))  # drawn before j, as the draws of earlier terms were
    j = int(rng.integers(d))
    w[j] = value
    anchor = rng.integers(-4, 5, size=d)
    b = -int(anchor @ w)
    X = random_integer_points(rng, n, d)
    on_boundary = rng.random(n) < 0.5
    on_boundary[int(rng.integers(n))] = True
    while np.count_nonzero(on_boundary) < min(at_least, n):
        on_boundary[int(rng.integers(n))] = True
    for row in np.flatnonzero(on_boundary):
        # anchor + t (w_j e_i - w_i e_j) stays on the hyperplane for any whole t
        i, k = rng.choice(d, size=2, replace=d < 2)
        step = np.zeros(d, dtype=np.int64)
        step[i] += w[k]
        step[k] -= w[i]
        X[row] = anchor + int(rng.integers(-2, 3)) * step
    return w, b, X, np.flatnonzero(on_boundary), j

def integer_weights_and_tiny_scores(rng: np.random.Generator, n: int, d: int) -> tuple[np.ndarray, int, np.ndarray]:
    """``(w, b, X)``: random integer weights and bias, and ``n >= 2`` float points, some with a score of exactly
    ``+2**-k`` or ``-2**-k`` (``k`` from 30 to 42; each sign present, once with ``k = 42``), the others whole.

    For a rule at 0 (``>= 0``, ``<= 0``): a function that rounds scores, or treats a score within a tolerance of 0
    as 0 (``np.isclose``, ``abs(s) < 1e-9``), gets these wrong. Exact in floating point: every term but one is a
    small whole number, and the one nudged coordinate is a whole number plus ``±2**-k / w_j`` with ``w_j`` in
    {-2, -1, 1, 2}, so that no sum needs more than 53 bits.
    """
    w, b, X, rows, j = _weights_and_boundary_rows(rng, n, d, at_least=2)
    signs = np.resize([-1.0, 1.0], len(rows))
    rng.shuffle(signs)
    exponents = rng.integers(30, 43, size=len(rows))
    exponents[[int(np.flatnonzero(signs == side)[0]) for side in (-1.0, 1.0)]] = 42  # the tiniest of each sign
    nudged = X.astype(float)
    nudged[rows, j] += signs * 2.0 ** -exponents / w[j]
    return w, b, nudged

def as_python_lists(value: Any) -> Any:
    """An array as nested Python lists (other values unchanged): what ``array_like`` allows a caller to pass."""
    return value.tolist() if isinstance(value, np.ndarray) else value

def lists_at_random(rng: np.random.Generator, cases: list[Case], parameters: Sequence[str], array_like: Sequence[str],
                    count: int = 3) -> list[Case]:
    """``cases`` with ``count`` random cases (picked at random) passing their ``array_like`` arguments as Python lists.

    For a parameter a docstring documents as ``array_like``: a function that only works on
    arrays (``X.shape`` on a list) fails these cases, which no table can answer.
    """
    random_positions = [i for i, case in enumerate(cases) if case.is_random]
    if not random_positions or not array_like:
        return cases
    picked = set(rng.choice(random_positions, size=min(count, len(random_positions)), replace=False).tolist())
    result = []
    for i, case in enumerate(cases):
        if i in picked:
            args = tuple(as_python_lists(value) if name in array_like else value for name, value in zip(parameters, case.args))
            kwargs = {key: as_python_lists(value) if key in array_like else value for key, value in case.kwargs.items()}
            named = ", ".join(name for name in parameters if name in array_like)
            case = Case(args, f"{case.behaviour}, with {named} passed as Python lists (array_like)", kwargs, case.context)
        result.append(case)
    return result
