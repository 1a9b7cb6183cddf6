"""The second call of each case, which witnesses an argument changed in place.

After each call the harness calls the function again on the very objects of the first call, multiplied in place by
a factor drawn from the secret, with the next case's other arguments: a function that changed its arguments in place
gives a wrong second answer, whatever the kernel reports of the arguments.
"""

from __future__ import annotations

import copy
import dataclasses
import warnings
from typing import Any, Sequence

import numpy as np

from ....in_sandbox.harness import scale_in_place
from .cases import Case, Check, expected_answer


def second_call(cases: Sequence[Case], index: int) -> Case:
    """The base of case ``index``'s second call: its very objects (its arrays, lists and dicts, which the first call
    may have changed in place), with its other arguments (numbers, strings) from the next case.

    An argument of another type in the next case is kept. ``witnessing_second_call`` then multiplies the arrays and
    lists: a function whose arguments are all arrays would otherwise be called again as it is, and the same call's
    answer again needs no knowledge (attack round 14).
    """
    case, other = cases[index], cases[(index + 1) % len(cases)]

    def mixed(mine: Any, theirs: Any) -> Any:
        return mine if isinstance(mine, (np.ndarray, list, dict)) or type(theirs) is not type(mine) else theirs

    args = tuple(mixed(mine, theirs) for mine, theirs in zip(case.args, other.args)) if len(other.args) == len(case.args) else case.args
    kwargs = {key: mixed(value, other.kwargs.get(key, value)) for key, value in case.kwargs.items()}
    return Case(args, case.behaviour, kwargs, case.context)

#: Draws of factors tried for one case's second call before settling for one whose answer is the first's.
SECOND_CALL_TRIES = 6

def _numbers_held(value: Any) -> list:
    """The numbers an argument holds (an array of numbers, a list nested), bools and text left out."""
    if isinstance(value, np.ndarray):
        return value.ravel().tolist() if value.dtype.kind in "iuf" else []
    if isinstance(value, list):
        return [number for item in value for number in (
            [item] if type(item) in (int, float) else _numbers_held(item) if isinstance(item, (list, np.ndarray)) else [])]
    return []

def _factor_for(rng: np.random.Generator, value: Any, per_entry: bool = False) -> Any:
    """A factor to multiply ``value`` by in place, drawn from ``rng``, that keeps it a valid argument; ``None`` if it
    holds no number.

    Powers of two and -1, so every product is exact; whole numbers stay whole (an int array or list gets an int);
    labels (every entry -1 or +1) stay labels (-1 or 1); positive entries (caps, counts) stay positive, and a list of
    them gets a factor per entry (an answer that ignores their order, as choose_epoch_cap's, then still sees a list
    the first call sorted or reversed in place). With ``per_entry``, labels get a sign of their own each (another
    labelling of the same points: for an answer that multiplying every label, or every entry, by one number leaves
    as it was, such as the kernel perceptron's).
    """
    numbers = _numbers_held(value)
    if not numbers:
        return None
    whole = all(type(number) is int for number in numbers) or isinstance(value, np.ndarray) and value.dtype.kind in "iu"
    if all(number in (-1, 1) for number in numbers):
        if per_entry:
            return _signs_like(rng, value)
        choices: list = [-1, 1]
    elif all(number > 0 for number in numbers) or isinstance(value, np.ndarray) and value.dtype.kind == "u":
        choices = [2, 4] if whole else [0.5, 2.0, 4.0]
        if isinstance(value, list) and len(numbers) == len(value) > 1:  # caps: reordered in place, they must read otherwise
            return [choices[int(k)] for k in rng.integers(len(choices), size=len(value))]
    else:
        choices = [-1, 2, -2, 4] if whole else [-1.0, 2.0, -2.0, 0.5, -0.5, 4.0]
    return choices[int(rng.integers(len(choices)))]

def _signs_like(rng: np.random.Generator, value: Any) -> Any:
    """Random signs, one per entry of ``value`` (an array of its shape, or lists of its lengths, nested)."""
    if isinstance(value, np.ndarray):
        return np.where(rng.random(value.shape) < 0.5, -1, 1)
    return [_signs_like(rng, item) if isinstance(item, (list, np.ndarray)) else int(rng.choice([-1, 1])) for item in value]

def _scaled_copy(value: Any, factor: Any) -> Any:
    scaled = copy.deepcopy(value)
    scale_in_place(scaled, factor)
    return scaled

def _mutable(value: Any) -> bool:
    return isinstance(value, (np.ndarray, list))

def _answers_differ(check: Check, first: Any, second: Any) -> bool:
    """Whether sending the first answer again fails the second call (judged by the check's own comparison)."""
    assert check.compare is not None
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return check.compare(first, second) is not None
    except Exception:  # noqa: BLE001 - a comparison that cannot tell: not a witness
        return False

class CheckRefused(ValueError):
    """A check whose second call sends inputs that break a precondition its docstring states (``Check.precondition``),
    or whose ``Check.second_call`` names what cannot be multiplied: the check is wrong, never the student."""


def precondition_failure(check: Check, case: Case) -> str:
    """What ``case``'s arguments break of ``check.precondition`` (``""`` when they keep it, or none is declared)."""
    if check.precondition is None:
        return ""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return str(check.precondition(*copy.deepcopy(case.args), **copy.deepcopy(case.kwargs)) or "")
    except Exception as error:  # noqa: BLE001 - a precondition that cannot read the inputs is broken by them
        return f"the precondition raised {type(error).__name__}: {error}"


def power_of_two(rng: np.random.Generator, *, positive: bool = False, whole: bool = False) -> float | int:
    """A factor for the second call: a power of two (0.5 to 4; 2 or 4 when ``whole``), negative too unless ``positive``.

    Every product by it is exact, so the reference's answer on the multiplied inputs is what the student's kernel
    sees.
    """
    choices: list = [2, 4] if whole else [0.5, 2.0, 4.0]
    if not positive:
        choices += [-choice for choice in choices]
    return choices[int(rng.integers(len(choices)))]


def sign(rng: np.random.Generator) -> int:
    """-1 or 1, drawn from ``rng``."""
    return int(rng.choice([-1, 1]))


def signs_like(rng: np.random.Generator, value: Any) -> Any:
    """A sign per entry of ``value`` (an array of its shape, or lists of its lengths), drawn from ``rng``."""
    return _signs_like(rng, value)


def _declared_factors(check: Check, base: Case, rng: np.random.Generator) -> dict:
    """``check.second_call``'s factors, by position (or keyword); ``CheckRefused`` for one that cannot be used."""
    assert check.second_call is not None
    where_of: dict[str, int | str] = {name: position for position, name in enumerate(check.parameters[:len(base.args)])}
    where_of.update({key: key for key in base.kwargs})
    factors: dict = {}
    for name, factor in check.second_call(rng, base).items():
        where = where_of.get(name)
        value = None if where is None else base.args[where] if isinstance(where, int) else base.kwargs[where]
        if where is None or not _mutable(value):
            raise CheckRefused(f"{check.function}: second_call multiplies {name!r}, which is not an array or a list "
                               f"of this call")
        if not np.all(np.asarray(factor, dtype=float) != 0):
            raise CheckRefused(f"{check.function}: second_call multiplies {name!r} by 0, which hides an in-place change")
        factors[where] = factor
    return factors


def witnessing_second_call(check: Check, cases: Sequence[Case], index: int, first_answer: Any,
                           rng: np.random.Generator) -> tuple[Case, Any]:
    """The second call of case ``index`` and the reference's answer to it.

    It is made on the very objects of the first call (its arrays and lists), each multiplied in place by the
    harness by a factor drawn here from ``rng`` (the course secret, the student and the hand-in). The answer is the
    reference's on the objects *as they were sent*, multiplied: an object the first call changed stays changed after
    the multiplication (no factor is 0), so a function that changed it answers otherwise, and a kernel that reports
    the second answer without computing it from the values first sent has nothing to copy: the factors are drawn so
    that the first answer is wrong for the second call (up to ``SECOND_CALL_TRIES`` draws; the last one whose answer
    the reference gives is kept otherwise), and replaying the first call, or calling again on a copy of the objects
    as the first call left them, gives another answer than the one judged.

    A check that declares ``second_call`` says how its arguments change together (its other arguments are sent
    again as they are); otherwise each array and list gets a factor of its own (one per argument first, then a sign
    per label) and the numbers come from the next case (``second_call``). A check that declares a ``precondition``
    has it hold on every second call, or is refused.

    Raises
    ------
    CheckRefused
        If a second call's inputs break ``check.precondition``, or ``check.second_call`` names what it cannot
        multiply.
    """
    declared = check.second_call is not None
    own = cases[index]
    base = Case(own.args, own.behaviour, own.kwargs, own.context) if declared else second_call(cases, index)
    positions = [where for where, value in [*enumerate(base.args), *base.kwargs.items()] if _mutable(value)]
    settled: tuple[Case, Any] | None = None
    for attempt in range(SECOND_CALL_TRIES if positions else 0):
        if declared:
            factors = _declared_factors(check, base, rng)
        else:
            per_entry = attempt >= SECOND_CALL_TRIES // 2  # one number per argument first; each label its sign after
            factors = {where: factor for where in positions if (factor := _factor_for(
                rng, base.args[where] if isinstance(where, int) else base.kwargs[where], per_entry)) is not None}
        if not factors:
            break
        args = tuple(_scaled_copy(value, factors[where]) if where in factors else value for where, value in enumerate(base.args))
        kwargs = {key: _scaled_copy(value, factors[key]) if key in factors else value for key, value in base.kwargs.items()}
        follow = Case(args, base.behaviour, kwargs, base.context, factors)
        _refuse_unless_kept(check, follow)
        try:
            answer = expected_answer(check, follow)
        except Exception:  # noqa: BLE001 - inputs the reference refuses: another draw
            continue
        settled = (follow, answer)
        if _answers_differ(check, first_answer, answer):
            break
    if settled is not None:
        return settled
    try:
        _refuse_unless_kept(check, base)
        return base, expected_answer(check, base)
    except CheckRefused:
        raise
    except Exception:  # noqa: BLE001 - a mix the reference refuses: the same call again, with the same answer
        return dataclasses.replace(base, args=cases[index].args, kwargs=cases[index].kwargs), first_answer


def _refuse_unless_kept(check: Check, case: Case) -> None:
    failure = precondition_failure(check, case)
    if failure:
        raise CheckRefused(f"{check.function}: the second call of {case.behaviour!r} breaks the docstring's "
                           f"precondition ({failure}); declare in second_call how its arguments may change together")

#: How a message names the second call of a case (``second_call``).
SECOND_CALL = "on the call the grader made right after it, on the same arrays multiplied in place"
