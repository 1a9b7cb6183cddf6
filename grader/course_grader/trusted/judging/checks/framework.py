"""How a graded part is checked: cases, the reference, comparisons, and the verdict's message.

A ``Check`` names the student's function, draws its cases (the named edge cases,
the visible tests' cases, then random ones from a generator seeded by the course
secret), and compares each returned value with the reference's answer. The calls
themselves happen elsewhere (in the sandboxed kernel through the harness, or in
this process for an instructor's own notebook): a check only sees the ``Reply``
of each call, plain data, and decides here, on the trusted side.

A failed case says what differed, expected against received, and on which call,
written as Python a student can paste into a cell.

Three rules hold for every check. Every behaviour a docstring states has a witness on every
draw: a case built so that its common bugs answer otherwise (a dev set every cap gets wrong,
data on which stopping early changes the answer), not one that catches them on lucky draws
(``tests/course/test_bug_witnesses.py`` judges a corpus of bugs over many draws). Public cases
never decide a behaviour alone: every boundary an exercise states (a score of exactly 0, a tie, integer input, Python lists for
``array_like``, the epoch cap) is drawn at random as well, with the helpers of the section
"random boundaries" (``points_with_zero_score``, ``integer_weights_and_boundary_points``,
``random_integer_points``, ``lists_at_random``). And the judgement is total and bounded:
``judge_replies`` judges each case through ``safe_case_failure`` (and a ``judge`` through
one boundary too), so any value the wire accepts gives a pass or a failed case, and every
value shown in a message is cut before it is written in full. A case the reference cannot
answer (a solver that gives up) is dropped by ``prepare_cases`` and named for the TA, never failed.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import hmac
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ....in_sandbox.harness import scale_in_place
from ..wire import NOT_CALLED_AGAIN, Reply, Unsupported, encode, python_literal

#: Random cases per check, besides the named ones.
N_RANDOM_CASES = 20
#: Failed cases shown in full in one verdict.
MAX_SHOWN = 2


@dataclass(frozen=True)
class Case:
    """One call: its arguments, and the behaviour a wrong answer on it reveals."""

    args: tuple
    behaviour: str
    kwargs: dict = field(default_factory=dict)
    context: Any = None  #: what a ``judge`` needs besides the arguments (never sent to the kernel)
    #: Only for a second call (``witnessing_second_call``): each argument, by position (or keyword), that the harness
    #: takes from the first call's object multiplied in place by this factor; ``args`` holds the value it then has
    #: if the first call left that object as it was sent.
    scaled: dict = field(default_factory=dict)

    @property
    def is_random(self) -> bool:
        return self.behaviour.startswith("random")

    def size(self) -> int:
        """How big the input is (numbers in it), to show the smallest failing call first."""
        return sum(np.size(value) for value in (*self.args, *self.kwargs.values()))


@dataclass(frozen=True)
class Difference:
    """What a returned value got wrong."""

    what: str  #: e.g. "a wrong value", "n_mistakes (the 3rd value returned) is wrong"
    expected: str = ""
    received: str = ""
    hint: str = ""  #: what to do about it, when it is not obvious
    detail: str = ""  #: where exactly, e.g. the first differing entry


Compare = Callable[[Any, Any], "Difference | None"]  # (received, expected)


@dataclass(frozen=True)
class Check:
    """The hidden tests of one graded part.

    Parameters
    ----------
    function : the student's function, by name
    parameters : its parameter names, in order (for messages)
    cases : ``rng -> list[Case]``: named edge cases first, then random ones drawn from ``rng``
    reference : computes the expected answer from a case's arguments
    compare : ``(received, expected) -> Difference | None``
    judge : replaces the case-by-case comparison for a check without a single right answer
        (``(cases, replies) -> list of (failed case, message)``; a bare message, naming no case,
        leaves the verdict's ``behaviours`` unknown)
    """

    function: str
    parameters: tuple[str, ...]
    cases: Callable[[np.random.Generator], list[Case]]
    reference: Callable[..., Any] | None = None
    compare: Compare | None = None
    judge: Callable[[list[Case], list[Reply]], list["tuple[Case, str] | str"]] | None = None


@dataclass
class Verdict:
    """The outcome of one check on one student function."""

    function: str
    n_cases: int
    failures: list[str]
    #: Each failure by its behaviour alone (no call, expected or received value), in the order of
    #: ``failures``: what the feedback shows before a due date (``trusted/gradebook/reveal.py``).
    summaries: list[str] = field(default_factory=list)
    #: Each behaviour its cases test (``Case.behaviour``, in order) with the first line of its first failed
    #: case's message, ``""`` when every case of it passed; empty when no case was judged on its own
    #: (not tested, or a ``judge`` failure that names no case). For the item analysis of the class.
    behaviours: dict[str, str] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return not self.failures

    def message(self) -> str:
        """For the student: why the part failed, or that it passed."""
        if self.passed:
            return f"{self.function}: the hidden tests pass ({self.n_cases} cases)."
        shown = self.failures[:MAX_SHOWN]
        more = len(self.failures) - len(shown)
        tail = f"\n\n(and {more} more failed case{'s' * (more > 1)} of {self.n_cases})" if more > 0 else ""
        return "\n\n".join(shown) + tail

    def behaviour_message(self) -> str:
        """``message`` with each shown failure reduced to its behaviour: no call, expected or received value.

        The same cases as ``message``, in the same order. A failure without a summary (a list of
        ``summaries`` that does not match ``failures``) is named only as a failed hidden case.
        """
        if self.passed:
            return self.message()
        summaries = self.summaries if len(self.summaries) == len(self.failures) else []
        shown = [summaries[k] if summaries else f"{self.function} failed a hidden case."
                 for k in range(min(MAX_SHOWN, len(self.failures)))]
        more = len(self.failures) - len(shown)
        tail = f"\n\n(and {more} more failed case{'s' * (more > 1)} of {self.n_cases})" if more > 0 else ""
        return "\n\n".join(dict.fromkeys(shown)) + tail


# ----------------------------------------------------------------------------- cases


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


# ----------------------------------------------------------------------------- random boundaries
#
# Named cases are public: every student sees a failed one whole in feedback, and a function
# can answer them from a table. So every boundary an exercise states (a score of exactly 0,
# a tie, integer input, Python lists for ``array_like``, the epoch cap) is also drawn at
# random, from the generator of the student and submission, by the helpers below. Their
# cases are random cases (``Case.is_random``): a behaviour text starting with "random".


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
    w = rng.integers(-3, 4, size=d)
    w[int(rng.integers(d))] = int(rng.choice([-2, -1, 1, 2]))
    anchor = rng.integers(-4, 5, size=d)
    b = -int(anchor @ w)
    X = random_integer_points(rng, n, d)
    on_boundary = rng.random(n) < 0.5
    on_boundary[int(rng.integers(n))] = True
    for row in np.flatnonzero(on_boundary):
        # anchor + t (w_j e_i - w_i e_j) stays on the hyperplane for any whole t
        i, j = rng.choice(d, size=2, replace=d < 2)
        step = np.zeros(d, dtype=np.int64)
        step[i] += w[j]
        step[j] -= w[i]
        X[row] = anchor + int(rng.integers(-2, 3)) * step
    return w, b, X


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


#: Characters of one whole call shown in a message (a call longer than this is cut, and says so); a call
#: longer than ``SHORT_CALL_CHARS`` is shown short first.
MAX_CALL_CHARS = 2000
#: A call up to this long is shown as it is; a longer one is shown short first (long arguments by their
#: name and shape), then whole, to paste.
SHORT_CALL_CHARS = 240
#: An argument written longer than this is named, not written, in the short call.
SHORT_ARGUMENT_CHARS = 40


def call_text(check: Check, case: Case) -> str:
    """The call of ``case`` as Python a student can paste (cut past ``MAX_CALL_CHARS``).

    A call longer than ``SHORT_CALL_CHARS`` reads short first, e.g. ``hinge_sgd(X, y, 0.5, 0.1, 3)``
    with the shapes of ``X`` and ``y``, and then whole on a line of its own, to paste in a cell.
    """
    full = _whole_call(check, case)
    if len(full) <= SHORT_CALL_CHARS:
        return full
    return f"{_short_call(check, case)}\n  the whole call, to paste in a cell:\n    {full}"


def _whole_call(check: Check, case: Case) -> str:
    arguments = [python_literal(value, limit=MAX_CALL_CHARS) for value in case.args]
    arguments += [f"{key}={python_literal(value, limit=MAX_CALL_CHARS)}" for key, value in case.kwargs.items()]
    text = f"{check.function}({', '.join(arguments)})"
    return text if len(text) <= MAX_CALL_CHARS else text[:MAX_CALL_CHARS] + " ... [cut: longer than the grader shows]"


def _short_call(check: Check, case: Case) -> str:
    """The call with each long argument replaced by its parameter's name, and what that argument is after it."""
    names = list(check.parameters) + [f"argument {k + 1}" for k in range(len(check.parameters), len(case.args))]
    written, named = [], []
    for name, value in [*zip(names, case.args), *case.kwargs.items()]:
        text = python_literal(value, limit=SHORT_ARGUMENT_CHARS + 1)
        keyword = f"{name}=" if name in case.kwargs else ""
        if len(text) <= SHORT_ARGUMENT_CHARS:
            written.append(keyword + text)
        else:
            written.append(keyword + name if keyword else name)
            named.append(f"{name}: {_what_it_is(value)}")
    return f"{check.function}({', '.join(written)})  # " + "; ".join(named)


def _what_it_is(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} ({value.dtype.name})"
    if isinstance(value, (list, tuple)):
        return f"a Python {type(value).__name__} of {len(value)} items"
    return f"a {type(value).__name__}"


def expected_answer(check: Check, case: Case) -> Any:
    """The reference's answer on (copies of) the case's arguments.

    NumPy's floating-point warnings are off (``np.errstate`` is local to the thread, so
    this may run beside the kernel's messages, see ``prepare_cases``); the reference
    itself warns about nothing on the cases the checks draw.
    """
    assert check.reference is not None
    with np.errstate(all="ignore"):
        return check.reference(*copy.deepcopy(case.args), **copy.deepcopy(case.kwargs))


@dataclass(frozen=True)
class PreparedCases:
    """A check's cases for one submission, with the reference's answer to each where it has one."""

    cases: list[Case]
    expected: list | None  #: ``None`` for a check judged without a single right answer (``judge``)
    #: Each case drawn but dropped because the reference could not answer it: its behaviour and the error's type.
    #: Never sent, never judged: a case without a right answer cannot fail a submission (the TA's record says so).
    dropped: tuple[str, ...] = ()
    #: The second call of each case (``witnessing_second_call``) and the reference's answer to it; ``None``: the same
    #: call again, its answer not judged (a check with a ``judge``).
    again: list[Case] | None = None
    again_expected: list | None = None


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


def witnessing_second_call(check: Check, cases: Sequence[Case], index: int, first_answer: Any,
                           rng: np.random.Generator) -> tuple[Case, Any]:
    """The second call of case ``index`` and the reference's answer to it.

    It is made on the very objects of the first call (its arrays and lists), each multiplied in place by the
    harness by a factor drawn here from ``rng`` (the course secret, the student and the hand-in), with the other
    arguments (numbers) from the next case (``second_call``). The answer is the reference's on the objects *as they
    were sent*, multiplied: an object the first call changed stays changed after the multiplication (no factor is
    0), so a function that changed it answers otherwise, and a kernel that reports the second answer without
    computing it from the values first sent has nothing to copy: the factors are drawn so that the first answer is
    wrong for the second call (up to ``SECOND_CALL_TRIES`` draws, one factor per argument first, then a sign per
    label; the last one whose answer the reference gives is kept otherwise), and replaying the first call, or calling
    again on a copy of the objects as the first call left them, gives another answer than the one judged. A case
    without arrays or lists keeps ``second_call``'s numbers.
    """
    base = second_call(cases, index)
    positions = [where for where, value in [*enumerate(base.args), *base.kwargs.items()] if _mutable(value)]
    settled: tuple[Case, Any] | None = None
    for attempt in range(SECOND_CALL_TRIES if positions else 0):
        per_entry = attempt >= SECOND_CALL_TRIES // 2  # one number per argument first; each label its sign after
        factors = {where: factor for where in positions if (factor := _factor_for(
            rng, base.args[where] if isinstance(where, int) else base.kwargs[where], per_entry)) is not None}
        if not factors:
            break
        args = tuple(_scaled_copy(value, factors[where]) if where in factors else value for where, value in enumerate(base.args))
        kwargs = {key: _scaled_copy(value, factors[key]) if key in factors else value for key, value in base.kwargs.items()}
        follow = Case(args, base.behaviour, kwargs, base.context, factors)
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
        return base, expected_answer(check, base)
    except Exception:  # noqa: BLE001 - a mix the reference refuses: the same call again, with the same answer
        return dataclasses.replace(base, args=cases[index].args, kwargs=cases[index].kwargs), first_answer


def prepare_cases(check: Check, rng: np.random.Generator) -> PreparedCases:
    """Draw the cases and compute every expected answer (of each second call too): work that needs nothing from the student.

    The grader runs it in a thread while the kernel starts and the student's cells run. A case
    the reference raises on (a solver that gives up on a rare draw) is dropped, and named in
    ``dropped``: the same secret, student and code drop the same cases, so a regrade is identical.
    The second calls' factors are drawn from ``rng`` after the cases (``witnessing_second_call``).
    """
    cases = check.cases(rng)
    if check.reference is None or check.judge is not None:
        return PreparedCases(cases, None)
    kept, expected, dropped = [], [], []
    for case in cases:
        try:
            answer = expected_answer(check, case)
        except Exception as error:  # noqa: BLE001 - the reference's failure is the grader's, never the student's
            dropped.append(f"{case.behaviour} (the reference raised {type(error).__name__})")
            continue
        kept.append(case)
        expected.append(answer)
    again, again_expected = [], []
    for index in range(len(kept)):
        follow, answer = witnessing_second_call(check, kept, index, expected[index], rng)
        again.append(follow)
        again_expected.append(answer)
    return PreparedCases(kept, expected, tuple(dropped), again, again_expected)


# ----------------------------------------------------------------------------- judging


def not_implemented_message(function: str) -> str:
    return f"{function} is not implemented yet (it raises NotImplementedError): write it, then run its tests again."


def judge_replies(check: Check, cases: Sequence[Case], replies: Sequence[Reply | dict], stopped: str = "",
                  expected: Sequence | None = None, again: Sequence[Case] | None = None,
                  again_expected: Sequence | None = None) -> Verdict:
    """The verdict on a student's function from its replies, in the order of ``cases``.

    ``replies`` may be shorter than ``cases`` when the calls stopped early
    (``stopped`` says why, e.g. a timeout on the next call), or be a single
    ``{"missing": True}`` notice when the function does not exist. ``expected``, the
    reference's answer to each case, is computed here when not given.
    """
    cases = list(cases)
    if replies and isinstance(replies[0], dict):
        found = replies[0].get("found", "")
        what = "is not defined" if found in ("", "NoneType") else f"is not a function (it is a {found})"
        message = f"{check.function} {what}: run the cell that defines it."
        return Verdict(check.function, len(cases), [message], [message], _every_behaviour(cases, message))
    for reply in replies:
        if not reply.returned and reply.error[0] == "NotImplementedError":
            message = not_implemented_message(check.function)
            return Verdict(check.function, len(cases), [message], [message], _every_behaviour(cases, message))
    if check.judge is not None:
        failed = _judge_safely(check, cases, list(replies))
        summaries = [f"{check.function} failed a hidden case."] * len(failed)  # a judge's messages follow no pattern
    else:
        compared = _compare_each(check, cases, replies, expected, again, again_expected)
        failed = [(case, message) for case, message, _ in compared]
        summaries = [summary for _, _, summary in compared]
    if len(replies) < len(cases):  # every case must be answered: silence is never a pass
        why = stopped or "gave no answer (its output was lost or rewritten)"
        unanswered = f"{check.function} {why} on this call:\n    {call_text(check, cases[len(replies)])}"
        failed.insert(0, (cases[len(replies)], unanswered))
        # (what follows " (" may quote an error's message, which may quote the call)
        summaries.insert(0, f"{check.function} {why.split(' (')[0].split(':')[0]} on {cases[len(replies)].behaviour}.")
        # the later unanswered cases are said once, in that message, and their behaviours fail with it
        return Verdict(check.function, len(cases), [message for _, message in failed], summaries,
                       _behaviour_results(cases, failed + [(case, unanswered) for case in cases[len(replies) + 1:]]))
    return Verdict(check.function, len(cases), [message for _, message in failed], summaries,
                   _behaviour_results(cases, failed))


def first_line(message: str) -> str:
    """The first non-empty line of a failure message: what went wrong (and usually on which behaviour)."""
    return next((line.strip() for line in message.splitlines() if line.strip()), "")


def _every_behaviour(cases: Sequence[Case], message: str) -> dict[str, str]:
    """Every behaviour of ``cases`` failed with ``message`` (the function is missing or not implemented)."""
    return dict.fromkeys((case.behaviour for case in cases), first_line(message))


def _behaviour_results(cases: Sequence[Case], failed: Sequence["tuple[Case | None, str]"]) -> dict[str, str]:
    """Each behaviour of ``cases`` with the first line of its first failed case (``""`` when all passed).

    Empty when a failure names no case: which behaviours passed is then unknown.
    """
    if any(case is None for case, _ in failed):
        return {}
    results = dict.fromkeys((case.behaviour for case in cases), "")
    for case, message in failed:
        assert case is not None
        if not results.get(case.behaviour):
            results[case.behaviour] = first_line(message) or "failed"
    return results


def _judge_safely(check: Check, cases: list[Case], replies: list[Reply]) -> "list[tuple[Case | None, str]]":
    """``check.judge`` with one boundary around it: whatever the replies hold, a list of ``(case, failure)``
    (``case`` is ``None`` for a failure that names none)."""
    assert check.judge is not None
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = list(check.judge(cases, replies))
            return [(item[0], str(item[1])) if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], Case)
                    else (None, str(item)) for item in found]
    except Exception as error:  # noqa: BLE001 - any value the wire accepts must give a verdict, never a crash
        return [(None, f"{check.function} returned values the grader could not judge ({type(error).__name__}): "
                       "return data of the form its docstring says.")]


def _compare_each(check: Check, cases: list[Case], replies: Sequence[Reply], expected: Sequence | None,
                  again: Sequence[Case] | None = None, again_expected: Sequence | None = None) -> list[tuple[Case, str, str]]:
    """Each failed case with its failure message and its behaviour summary (``case_summary``), in the order to show."""
    failed: list[tuple[Case, str, str, bool]] = []
    for index, (case, reply) in enumerate(zip(cases, replies)):
        first_expected = expected[index] if expected is not None else _NOT_COMPUTED
        message, second = safe_case_failure(check, case, reply, first_expected), False
        if not message and reply.returned:
            follow = (again[index], again_expected[index]) if again is not None and again_expected is not None \
                else (case, first_expected)
            message = second = _safe_second_call_failure(check, *follow, reply)
        if message:
            failed.append((case, message, case_summary(check, case, reply), bool(second)))
    # A first call's failure before a second call's; named edge cases say most about a bug; among random cases the
    # smallest input reads best.
    failed.sort(key=lambda item: (item[3], item[0].is_random, item[0].size() if item[0].is_random else 0))
    return [item[:3] for item in failed]


def case_summary(check: Check, case: Case, reply: Reply | None = None) -> str:
    """A failed case by its behaviour alone: what kind of failure, on which behaviour; no call, no values.

    Only the name of an exception the function raised is kept, never its message (it may quote the arguments).
    """
    if reply is not None and not reply.returned:
        kind = str(reply.error[0])[:80]
        return f"{check.function} raised {kind} on {case.behaviour}."
    try:
        changed = changed_arguments(check, case, reply.args_after) if reply is not None else ""
    except Exception:  # noqa: BLE001 - the trusted side is total; the failure message itself says more
        changed = ""
    if changed:
        return f"{check.function} changed its argument {changed} in place on {case.behaviour}."
    return f"{check.function} gave a wrong answer on {case.behaviour}."


_NOT_COMPUTED = object()


def safe_case_failure(check: Check, case: Case, reply: Reply, expected: Any = _NOT_COMPUTED) -> str:
    """``case_failure`` that never raises: a comparison that breaks on a reply is a failed case naming the case.

    Every judgement of one case goes through here, so that any value the wire accepts
    (ragged lists, strings, integers beyond int64, empty arrays of huge shapes, ...)
    gives a pass or a readable failure. A check's own ``judge`` should use it too.
    """
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return case_failure(check, case, reply, expected)
    except Exception as error:  # noqa: BLE001 - the trusted side is total
        return (f"{check.function} returned a value the grader could not compare ({type(error).__name__}) "
                f"on {case.behaviour}:\n    {call_text(check, case)}\n  received: {_describe(reply.result)}")


def case_failure(check: Check, case: Case, reply: Reply, expected: Any = _NOT_COMPUTED) -> str:
    """Why the reply to one case is wrong, or ``""`` (``expected``: the reference's answer, if already known).

    The call is written out only for a failed case (most cases pass, and writing arrays out is not free).
    """
    if not reply.returned:
        kind, message = reply.error
        detail = f"{kind}: {message}" if message else kind
        return f"{check.function} raised {detail}\n  on {case.behaviour}:\n    {call_text(check, case)}"
    changed = changed_arguments(check, case, reply.args_after)
    if changed:
        return (f"{check.function} changed its argument {changed} in place on {case.behaviour} (the caller's "
                f"{changed} is different after the call, whichever function changed it):\n    {call_text(check, case)}\n"
                f"  hint: work on copies; an in-place operation (+=, *=, a slice assignment, list.sort(), append) on "
                f"{changed} or on a row of it changes the caller's {_kind_of(case, check, changed)}")
    assert check.compare is not None
    if expected is _NOT_COMPUTED:
        expected = expected_answer(check, case)
    difference = check.compare(reply.result, expected)
    if difference is None:
        return ""
    lines = [f"{check.function} returned {difference.what} on {case.behaviour}:", f"    {call_text(check, case)}"]
    lines += [f"  {label}: {text}" for label, text in (("expected", difference.expected), ("received", difference.received))
              if text]  # a part with nothing to say is left out, never printed empty
    if difference.detail:
        lines.append(f"  {difference.detail}")
    if difference.hint:
        lines.append(f"  hint: {difference.hint}")
    return "\n".join(lines)


def _safe_second_call_failure(check: Check, case: Case, expected: Any, reply: Reply) -> str:
    """``_second_call_failure`` that never raises (the trusted side is total)."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if expected is _NOT_COMPUTED:
                expected = expected_answer(check, case)
            return _second_call_failure(check, case, expected, reply)
    except Exception as error:  # noqa: BLE001
        return (f"{check.function} returned a value the grader could not compare ({type(error).__name__}) {SECOND_CALL}:"
                f"\n    {call_text(check, case)}")


#: How a message names the second call of a case (``second_call``).
SECOND_CALL = ("on the call made right after it on the same arrays, which the grader multiplied in place "
               "(any other argument from the next case)")


def _second_call_failure(check: Check, case: Case, expected: Any, reply: Reply) -> str:
    """Why the second call (``second_call``, on the same array objects), ``case``, failed where the first passed; or ``""``.

    It is a call of its own, with its own right answer: a function wrong on it fails it, and so does
    one whose first call changed the arrays in place. This verdict rests on that answer, judged here,
    never on the kernel's own report of the arguments (which student code that ran before the
    harness can rewrite).
    """
    assert check.compare is not None
    hint = ("hint: if your function gives the right answer to this call on its own, the call before it changed the "
            "arrays in place: work on copies (an in-place operation, +=, *= or a slice assignment, on an argument "
            "changes the caller's array)")
    if reply.again_error is not None:
        kind, message = reply.again_error
        return (f"{check.function} raised {kind}{': ' + message if message else ''} {SECOND_CALL}:\n    "
                f"{call_text(check, case)}\n  {hint}")
    if reply.again is NOT_CALLED_AGAIN:
        return ""
    difference = check.compare(reply.again, expected)
    if difference is None:
        return ""
    return (f"{check.function} returned {difference.what} {SECOND_CALL}:\n    {call_text(check, case)}\n"
            f"  expected: {difference.expected}\n  received: {difference.received}\n  {hint}")


def changed_arguments(check: Check, case: Case, args_after: list) -> str:
    """The name of the first argument the call changed in place, or ``""``.

    Every mutable argument counts: an array, a list (``caps.sort()`` reorders the caller's list:
    attack round 13, finding 4), and arrays or lists inside a list, tuple or dict; judged by value
    against what the grader sent.
    """
    sent = list(case.args) + [case.kwargs[key] for key in sorted(case.kwargs)]
    names = list(check.parameters[: len(case.args)]) + sorted(case.kwargs)
    for name, before, after in zip(names, sent, args_after):
        if isinstance(before, (np.ndarray, list, tuple, dict)) and not _unchanged(before, after):
            return name
    return ""


def _kind_of(case: Case, check: Check, name: str) -> str:
    """``list`` when the argument ``name`` of ``case`` was sent as a Python list, else ``array``."""
    sent = dict(zip(check.parameters, case.args), **case.kwargs).get(name)
    return "list" if isinstance(sent, list) else "array"


def _unchanged(before: Any, after: Any) -> bool:
    """Whether ``after`` (anything the wire accepts) is still ``before`` (what the grader sent): same types and values.

    An entry of a list is compared by its wire form (``np.int32`` and ``np.int64`` cross as the same
    thing), a float NaN equal to itself.
    """
    if isinstance(before, np.ndarray):
        return _same_array(before, after)
    if isinstance(before, (list, tuple)):
        return (type(after) is type(before) and len(after) == len(before)
                and all(_unchanged(item, item_after) for item, item_after in zip(before, after)))
    if isinstance(before, dict):
        return (isinstance(after, dict) and set(after) == set(before)
                and all(_unchanged(item, after[key]) for key, item in before.items()))
    if isinstance(after, (np.ndarray, list, tuple, dict, Unsupported)):
        return False
    tag, value = encode(before)
    tag_after, value_after = encode(after)
    return tag == tag_after and (value == value_after or value != value and value_after != value_after)


def _same_array(before: np.ndarray, after: Any) -> bool:
    """Whether ``after`` (anything the wire accepts) is still the array ``before``: same dtype, shape and values."""
    if not isinstance(after, np.ndarray) or after.dtype != before.dtype or after.shape != before.shape:
        return False
    return bool(np.array_equal(after, before, equal_nan=before.dtype.kind == "f"))


# ----------------------------------------------------------------------------- comparisons


#: NumPy kinds of numbers (signed, unsigned, float): text, bytes and objects are not numbers even when they read as one.
NUMBER_KINDS = "iuf"


#: Most entries ``holds_a_bool`` looks at (the wire caps a reply far below this).
_MAX_WALKED = 300_000


def holds_a_bool(value: Any) -> bool:
    """Whether ``value`` is a bool or holds one anywhere: in a (nested) list or tuple, as a NumPy bool, in an array.

    Judged on the value as it came (the wire keeps ``True`` in a list as a bool): ``np.asarray``
    would turn ``[True, -1]`` into the integers ``[1, -1]`` and hide it (attack round 13, finding 3).
    """
    pending, seen = [value], 0
    while pending and seen < _MAX_WALKED:
        item, seen = pending.pop(), seen + 1
        if isinstance(item, (bool, np.bool_)):
            return True
        if isinstance(item, (list, tuple)):
            pending.extend(item)
        elif isinstance(item, np.ndarray):
            if item.dtype.kind == "b":
                return True
            if item.dtype.kind == "O":
                pending.extend(item.ravel()[: _MAX_WALKED - seen].tolist())
    return False


def as_float_array(value: Any, *, bools: bool = False) -> np.ndarray | None:
    """``value`` as a float array, or ``None`` if it is not made of numbers.

    Judged on what was returned, before any cast: text (``['1.25']``, an array of dtype ``<U``), a
    string anywhere in a list, ragged lists and objects are not numbers (attack round 12: numbers
    returned as text got full marks, since ``np.asarray(['1.25'], dtype=float)`` reads them); nor are
    bools, even one among numbers (``[True, -1]``), unless ``bools`` (where a bool is a mistake with a
    hint of its own, as for labels).
    """
    if isinstance(value, (Unsupported, str, bytes, dict)) or value is None:
        return None
    if not bools and holds_a_bool(value):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            returned = np.asarray(value)
            if returned.dtype.kind not in NUMBER_KINDS + ("b" if bools else ""):
                return None
            array = returned.astype(float)
    except (TypeError, ValueError, OverflowError):
        return None
    return array


def kind_hint(received: Any) -> str:
    """A hint when ``received`` holds text or bools where numbers are promised, else ``""``."""
    try:
        kind = np.asarray(received).dtype.kind if not isinstance(received, (Unsupported, dict)) else ""
    except (TypeError, ValueError, OverflowError):
        return ""
    if kind == "b" or holds_a_bool(received):
        return "return numbers, not True/False"
    if kind in "USO" or isinstance(received, str):
        return "return numbers (float or int), not text: '1.25' is a string, 1.25 is a number"
    return ""


def describe(value: Any) -> str:
    """A received value for a message: pasteable Python, cut at 1,500 characters."""
    if isinstance(value, Unsupported):
        return f"an object of type {value.type_name}"
    return python_literal(value, limit=1500)


_describe = describe


def holds_integers(value: Any) -> bool:
    """Whether ``value`` is an array of integer or bool dtype, or a (nested) list or tuple holding an int or a bool."""
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "iub"
    if isinstance(value, (list, tuple)):
        pending, seen = list(value), 0
        while pending and seen < 300_000:  # bounded: the wire caps a reply far below this
            item, seen = pending.pop(), seen + 1
            if isinstance(item, (list, tuple)):
                pending.extend(item)
            elif isinstance(item, (bool, int, np.integer, np.bool_)) or isinstance(item, np.ndarray) and item.dtype.kind in "iub":
                return True
        return False
    return isinstance(value, (bool, int, np.integer, np.bool_))


def _item_text(value: Any, index: tuple) -> str:
    """The entry of ``value`` at ``index`` written in its own type (an int as ``2``, never ``2.0``)."""
    try:
        item = np.asarray(value)[index]
    except (TypeError, ValueError, IndexError, OverflowError):
        return "?"
    return python_literal(item.item() if isinstance(item, np.generic) else item, limit=100)


def lower_precision(received: Any, expected: np.ndarray) -> str:
    """The name of ``received``'s float dtype when it is narrower than float64 and explains the difference, else ``""``.

    Explains it: the received values equal ``expected`` rounded to that precision (within a few of its units).
    """
    if not (isinstance(received, np.ndarray) and received.dtype.kind == "f" and received.dtype.itemsize < 8):
        return ""
    unit = float(np.finfo(received.dtype).eps)
    with np.errstate(all="ignore"):
        near = np.isclose(received.astype(float), expected, rtol=16 * unit, atol=16 * unit)
    return received.dtype.name if bool(np.all(near)) else ""


def compare_arrays(*, exact: bool, what: str, rtol: float = 1e-9, atol: float = 1e-9) -> Compare:
    """Same shape and same values (exactly, or within ``rtol``/``atol``); ``what`` describes the expected return."""

    def compare(received: Any, expected: Any) -> Difference | None:
        want = np.asarray(expected, dtype=float)
        shown = python_literal(np.asarray(expected), limit=1500)
        got = as_float_array(received)
        if got is None:
            return Difference(f"something that is not {what}", shown, _describe(received), hint=kind_hint(received))
        if got.shape != want.shape:
            return Difference(f"an array of the wrong shape {got.shape} (expected {want.shape}, {what})",
                              shown, _describe(received))
        close = got == want if exact else np.isclose(got, want, rtol=rtol, atol=atol)
        if np.all(close):
            return None
        first = tuple(int(i) for i in np.argwhere(~close)[0])
        where = (f"first difference at index {first if len(first) != 1 else first[0]}: "
                 f"expected {_item_text(expected, first)}, received {_item_text(received, first)}") if first else ""
        precision = lower_precision(received, want)
        if precision:
            return Difference(f"{precision} values instead of float64", shown, _describe(received),
                              hint=f"compute in float64, NumPy's default float (no {precision} anywhere): the values are "
                                   f"right to {precision} precision, and the grader compares float64 to {rtol:g}",
                              detail=where)
        return Difference("a wrong value", shown, _describe(received), detail=where)

    return compare


def compare_number(*, rtol: float = 1e-7, atol: float = 1e-9, what: str = "a number") -> Compare:
    """One number (a Python or NumPy scalar, or an array of size 1), within tolerance."""

    def compare(received: Any, expected: Any) -> Difference | None:
        got = as_float_array(received)
        if got is None or got.size != 1:
            shape = f" of shape {got.shape}" if got is not None else ""
            return Difference(f"something{shape} that is not {what}", repr(float(expected)), _describe(received),
                              hint=kind_hint(received))
        value = float(got.ravel()[0])
        if np.isclose(value, float(expected), rtol=rtol, atol=atol):
            return None
        return Difference("a wrong value", repr(float(expected)), _describe(received))

    return compare


def compare_count(what: str = "a count", *, noun: str = "count") -> Compare:
    """A whole number (any integer type; a float only if it is whole); ``noun`` names it in messages ("a wrong cap")."""

    def compare(received: Any, expected: Any) -> Difference | None:
        got = as_float_array(received)
        if got is None or got.size != 1 or isinstance(received, (bool, np.bool_)):
            return Difference(f"something that is not {what}", repr(int(expected)), _describe(received),
                              hint=kind_hint(received))
        if float(got.ravel()[0]) == int(expected):
            return None
        return Difference(f"a wrong {noun}", repr(int(expected)), _describe(received))

    return compare


def compare_bool(what: str = "True or False") -> Compare:
    """A Python or NumPy bool."""

    def compare(received: Any, expected: Any) -> Difference | None:
        if not isinstance(received, (bool, np.bool_)):
            return Difference("something that is not a bool", repr(bool(expected)), _describe(received),
                              hint=f"return {what} (a bool), e.g. wrap the test in bool(...)")
        if bool(received) == bool(expected):
            return None
        return Difference("the wrong truth value", repr(bool(expected)), repr(bool(received)))

    return compare


def _holds_bools(value: Any) -> bool:
    if isinstance(value, np.ndarray):
        return value.dtype.kind == "b"
    return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(item, (bool, np.bool_)) for item in value)


def compare_labels(what: str = "an array of -1/+1 labels") -> Compare:
    """Labels -1/+1, exactly; the received value is shown as it came (a bool array as bools)."""
    values = compare_arrays(exact=True, what=what)

    def compare(received: Any, expected: Any) -> Difference | None:
        got = as_float_array(received, bools=True)
        if got is not None and got.shape == np.shape(expected) and not np.all(np.isin(got, (-1, 1))):
            if _holds_bools(received):
                hint = "return the labels -1 and +1, not True and False (e.g. np.where(scores >= 0, 1, -1))"
            elif np.any(got == 0):
                hint = "a score of exactly 0 predicts +1 (np.sign(0) is 0, not a label)"
            else:
                hint = "return -1 and +1 (e.g. np.where(scores >= 0, 1, -1))"
            return Difference("labels other than -1 and +1", python_literal(np.asarray(expected)), _describe(received),
                              hint=hint)
        return values(received, expected)

    return compare


def compare_tuple(names: Sequence[str], parts: Sequence[Compare]) -> Compare:
    """A tuple (or list) of ``len(names)`` values, each compared by its own ``Compare``."""
    ordinals = ["1st", "2nd", "3rd", "4th", "5th", "6th"]

    def compare(received: Any, expected: Any) -> Difference | None:
        if not isinstance(received, (tuple, list)) or len(received) != len(names):
            return Difference(f"something that is not a tuple ({', '.join(names)})", python_literal(tuple(expected), limit=1500),
                              _describe(received))
        for position, (name, part, got, want) in enumerate(zip(names, parts, received, expected)):
            difference = part(got, want)
            if difference is not None:
                what = (f"a wrong {name} (the {ordinals[position]} value returned)" if difference.what.startswith(("a wrong", "the wrong"))
                        else f"{difference.what} as {name} (the {ordinals[position]} value returned)")
                return Difference(what, difference.expected, difference.received, difference.hint, difference.detail)
        return None

    return compare
