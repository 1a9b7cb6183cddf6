"""What a check is: its cases (``Case``), the reference and the comparison (``Check``), and a case written as a call.

A ``Check`` names the student's function, draws its cases (the named edge cases, the visible tests' cases, then random
ones from a generator seeded by the course secret, ``draws.py``), and compares each returned value with the
reference's answer (``compare.py``). The calls themselves happen elsewhere (in the sandboxed kernel through the
harness, or in this process for an instructor's own notebook): a check only sees the ``Reply`` of each call, plain
data, and decides on the trusted side (``judge.py``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..wire import Reply, python_literal


#: Random cases per check, besides the named ones.
N_RANDOM_CASES = 20

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
    precondition : ``(*args, **kwargs) -> str``: what the arguments break of the docstring's promises
        (``""`` when they keep them all). The grader refuses a second call whose inputs break it
        (``second_calls.CheckRefused``): a correct function never answers outside its contract.
    second_call : ``(rng, case) -> {parameter: factor}``: how the second call may multiply the arguments in
        place together (a number, or one per entry; powers of two and -1 keep every product exact), for
        arguments tied to each other (a run and its data, a unit vector); a parameter it leaves out is sent
        again as it is, and so is every argument that is not an array or a list. Without it, each array
        and list gets a factor of its own and numbers come from the next case.
    new_arrays : whether the docstring promises that every array returned is new: one that is an argument itself, or
        a view of one (the caller's array and the answer then change together), fails the case.
    """

    function: str
    parameters: tuple[str, ...]
    cases: Callable[[np.random.Generator], list[Case]]
    reference: Callable[..., Any] | None = None
    compare: Compare | None = None
    judge: Callable[[list[Case], list[Reply]], list["tuple[Case, str] | str"]] | None = None
    precondition: Callable[..., str] | None = None
    second_call: Callable[[np.random.Generator, Case], dict[str, Any]] | None = None
    new_arrays: bool = False

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
    full = whole_call(check, case)
    if len(full) <= SHORT_CALL_CHARS:
        return full
    return f"{_short_call(check, case)}\n  the whole call, to paste in a cell:\n    {full}"

def whole_call(check: Check, case: Case) -> str:
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
