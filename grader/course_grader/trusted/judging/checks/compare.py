"""Comparisons of a returned value with the reference's answer: each a ``Compare``, giving a ``Difference`` or ``None``.

Each is total: whatever value the wire accepts (``Unsupported`` included), it returns, and what it shows is cut.
"""

from __future__ import annotations

import warnings
from typing import Any, Sequence

import numpy as np

from ..wire import Unsupported, python_literal
from .cases import Compare, Difference


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

#: The return types a check may declare (``returns=``), as a numpydoc docstring writes them, and the NumPy dtype kinds
#: each accepts (``None``: any dtype).
ARRAY_TYPES: dict[str, str | None] = {"ndarray": None, "ndarray of float": "f", "ndarray of int": "iu"}


#: The scalar return types a check may declare (``returns=`` of ``compare_number`` and ``compare_count``), as
#: ``isinstance`` reads them: ``np.float64`` is a float (a subclass of it), ``np.int64`` is not an int, a bool is no int.
SCALAR_TYPES = ("float", "int")
#: ``compare_number``'s ``returns`` for a docstring's "float or int" (say, "a float for a float b, an int for an int
#: b"): the kind of number the reference returned (``_wrong_kind_of_number``).
FLOAT_OR_INT = "float or int"


def _validate_returns(returns: str | None, allowed: Sequence[str] = tuple(ARRAY_TYPES)) -> None:
    if returns is not None and returns not in allowed:
        raise ValueError(f"returns must be one of {sorted(allowed)} or None; got {returns!r}")


def _scalar_type_in_words(value: Any) -> str:
    """E.g. ``a NumPy int64``, ``a Python int``, ``an ndarray of shape (1,)``."""
    if isinstance(value, np.ndarray):
        return f"an ndarray of shape {value.shape}"
    if isinstance(value, np.generic):
        return f"a NumPy {type(value).__name__}"
    return f"a Python {type(value).__name__}"


def _scalar_type_hint(received: Any, returns: str) -> str:
    if isinstance(received, np.ndarray):
        return (f"return the number itself, not an array holding it (e.g. {returns}(values[0]), or index with [-1] "
                f"rather than slice with [-1:])")
    if returns == "float":
        return ("return a float (e.g. float(b)): integer arithmetic (a start of 0, integer labels or inputs) keeps the "
                "value an int where the docstring promises a float")
    if isinstance(received, np.integer):
        return ("return a Python int (e.g. int(value)): an entry of a NumPy array is a NumPy integer, which is not an "
                "int (isinstance(value, int) is False, and json.dumps refuses it)")
    return "return an int (e.g. int(value), or a counter that starts at 0 and adds 1)"


def _wrong_scalar_type(received: Any, returns: str, expected_text: str) -> Difference | None:
    """``wrong_type`` for a scalar type: ``"float"`` (a NumPy float64 is one) or ``"int"`` (a bool is not one)."""
    if returns == "float" and isinstance(received, float):
        return None
    if returns == "int" and isinstance(received, int) and not isinstance(received, bool):
        return None
    article = "an" if returns == "int" else "a"
    return Difference(f"the right value as {_scalar_type_in_words(received)} where the docstring promises {article} "
                      f"{returns}", expected_text, describe(received), hint=_scalar_type_hint(received, returns))


def wrong_type(received: Any, returns: str | None, expected_text: str) -> Difference | None:
    """A ``Difference`` when ``received`` (right in value) is not of the type a docstring promises, else ``None``.

    Parameters
    ----------
    received : Any
        The returned value, already found equal in value to the reference's answer.
    returns : str or None
        A key of ``ARRAY_TYPES`` or one of ``SCALAR_TYPES`` (``None``: values alone are compared, any container or
        number type passes).
    expected_text : str
        The reference's answer as the message shows it.
    """
    if returns is None:
        return None
    if returns in SCALAR_TYPES:
        return _wrong_scalar_type(received, returns, expected_text)
    kinds, dtype = ARRAY_TYPES[returns], returns.partition(" of ")[2]
    if not isinstance(received, np.ndarray):
        made = f"np.array(..., dtype={dtype})" if dtype else "np.array(...)"
        return Difference(f"the right values as a {type(received).__name__} where the docstring promises an {returns}",
                          expected_text, describe(received),
                          hint=f"return a NumPy array, as the docstring says (e.g. {made}): a "
                               f"{type(received).__name__} has no .shape and no array arithmetic")
    if kinds is not None and received.dtype.kind not in kinds:
        return Difference(f"the right values with dtype {received.dtype} where the docstring promises an {returns}",
                          expected_text, describe(received),
                          hint=f"return {dtype}s (e.g. .astype({dtype}), or start from an array of {dtype}s): code that "
                               f"uses your result relies on its dtype (an int array truncates a float written into it; "
                               f"a float cannot index)")
    return None


def compare_arrays(*, exact: bool, what: str, rtol: float = 1e-9, atol: float = 1e-9,
                   returns: str | None = None) -> Compare:
    """Same shape and same values (exactly, or within ``rtol``/``atol``); ``what`` describes the expected return.

    ``returns`` (a key of ``ARRAY_TYPES``, as the docstring writes the type) also holds right values to that type:
    a list, or an int array where floats are promised, is then a failure with a message of its own.
    """
    _validate_returns(returns)

    def compare(received: Any, expected: Any) -> Difference | None:
        want = np.asarray(expected, dtype=float)
        shown = python_literal(np.asarray(expected), limit=1500)
        got = as_float_array(received)
        if got is None:
            return Difference(f"something that is not {what}", shown, describe(received), hint=kind_hint(received))
        if got.shape != want.shape:
            return Difference(f"an array of the wrong shape {got.shape} (expected {want.shape}, {what})",
                              shown, describe(received))
        close = got == want if exact else np.isclose(got, want, rtol=rtol, atol=atol)
        if np.all(close):
            return wrong_type(received, returns, shown)
        first = tuple(int(i) for i in np.argwhere(~close)[0])
        where = (f"first difference at index {first if len(first) != 1 else first[0]}: "
                 f"expected {_item_text(expected, first)}, received {_item_text(received, first)}") if first else ""
        precision = lower_precision(received, want)
        if precision:
            return Difference(f"{precision} values instead of float64", shown, describe(received),
                              hint=f"compute in float64, NumPy's default float (no {precision} anywhere): the values are "
                                   f"right to {precision} precision, and the grader compares float64 to {rtol:g}",
                              detail=where)
        return Difference("a wrong value", shown, describe(received), detail=where)

    compare.returns = returns  # type: ignore[attr-defined]  # read by the course's test of its docstrings
    return compare

def _is_integer(value: Any) -> bool:
    """A Python or NumPy integer (a bool is none)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _wrong_kind_of_number(received: Any, expected: Any) -> Difference | None:
    """For ``FLOAT_OR_INT``: an integer (Python's or NumPy's) where the reference answered an int, a float (Python's or
    NumPy's) where it answered a float; a ``Difference`` otherwise."""
    wants_int = _is_integer(expected)
    if _is_integer(received) if wants_int else isinstance(received, (float, np.floating)):
        return None
    wanted = "int" if wants_int else "float"
    return Difference(f"the right value as {_scalar_type_in_words(received)} where the docstring promises "
                      f"{'an int' if wants_int else 'a float'} for these arguments",
                      repr(int(expected) if wants_int else float(expected)), describe(received),
                      hint=("keep the kind of number the arguments give: arithmetic on ints stays an int (float(...), "
                            "or a start of 0.0, makes it a float)" if wants_int and not isinstance(received, np.ndarray)
                            else _scalar_type_hint(received, wanted)))


def compare_number(*, rtol: float = 1e-7, atol: float = 1e-9, what: str = "a number",
                   returns: str | None = None) -> Compare:
    """One number (a Python or NumPy scalar, or an array of size 1), within tolerance.

    ``returns`` (``"float"``, as the docstring writes the type) also holds a right value to that type: an int, or an
    array of one entry, is then a failure with a message of its own. ``"float or int"`` (``FLOAT_OR_INT``) holds it
    to the kind of the reference's answer: an integer for an int, a float for a float (NumPy's or Python's).
    """
    _validate_returns(returns, (*SCALAR_TYPES, FLOAT_OR_INT))

    def compare(received: Any, expected: Any) -> Difference | None:
        got = as_float_array(received)
        if got is None or got.size != 1:
            shape = f" of shape {got.shape}" if got is not None else ""
            return Difference(f"something{shape} that is not {what}", repr(float(expected)), describe(received),
                              hint=kind_hint(received))
        value = float(got.ravel()[0])
        if np.isclose(value, float(expected), rtol=rtol, atol=atol):
            if returns == FLOAT_OR_INT:
                return _wrong_kind_of_number(received, expected)
            return wrong_type(received, returns, repr(float(expected)))
        return Difference("a wrong value", repr(float(expected)), describe(received))

    compare.returns = returns  # type: ignore[attr-defined]
    return compare

def compare_count(what: str = "a count", *, noun: str = "count", returns: str | None = None) -> Compare:
    """A whole number (any integer type; a float only if it is whole); ``noun`` names it in messages ("a wrong cap").

    ``returns="int"`` (as the docstring writes the type) holds a right value to a Python int: a NumPy integer, a whole
    float or an array of one entry is then a failure with a message of its own.
    """
    _validate_returns(returns, SCALAR_TYPES)

    def compare(received: Any, expected: Any) -> Difference | None:
        got = as_float_array(received)
        if got is None or got.size != 1 or isinstance(received, (bool, np.bool_)):
            return Difference(f"something that is not {what}", repr(int(expected)), describe(received),
                              hint=kind_hint(received))
        if float(got.ravel()[0]) == int(expected):
            return wrong_type(received, returns, repr(int(expected)))
        return Difference(f"a wrong {noun}", repr(int(expected)), describe(received))

    compare.returns = returns  # type: ignore[attr-defined]
    return compare

def compare_bool(what: str = "True or False") -> Compare:
    """A Python or NumPy bool."""

    def compare(received: Any, expected: Any) -> Difference | None:
        if not isinstance(received, (bool, np.bool_)):
            return Difference("something that is not a bool", repr(bool(expected)), describe(received),
                              hint=f"return {what} (a bool), e.g. wrap the test in bool(...)")
        if bool(received) == bool(expected):
            return None
        return Difference("the wrong truth value", repr(bool(expected)), repr(bool(received)))

    return compare

def _holds_bools(value: Any) -> bool:
    if isinstance(value, np.ndarray):
        return value.dtype.kind == "b"
    return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(item, (bool, np.bool_)) for item in value)

def compare_labels(what: str = "an array of -1/+1 labels", *, returns: str | None = None) -> Compare:
    """Labels -1/+1, exactly; the received value is shown as it came (a bool array as bools). ``returns``: as for
    ``compare_arrays``."""
    values = compare_arrays(exact=True, what=what, returns=returns)

    def compare(received: Any, expected: Any) -> Difference | None:
        got = as_float_array(received, bools=True)
        if got is not None and got.shape == np.shape(expected) and not np.all(np.isin(got, (-1, 1))):
            if _holds_bools(received):
                hint = "return the labels -1 and +1, not True and False (e.g. np.where(scores >= 0, 1, -1))"
            elif np.any(got == 0):
                hint = "a score of exactly 0 predicts +1 (np.sign(0) is 0, not a label)"
            else:
                hint = "return -1 and +1 (e.g. np.where(scores >= 0, 1, -1))"
            return Difference("labels other than -1 and +1", python_literal(np.asarray(expected)), describe(received),
                              hint=hint)
        return values(received, expected)

    compare.returns = returns  # type: ignore[attr-defined]
    return compare

def _tuple_in_words(names: Sequence[str], expected: Any) -> str:
    """E.g. ``a tuple of 2 values: alignment, an array of shape (4,); squared_norm, an array of shape (4,)``."""
    def what(value: Any) -> str:
        if isinstance(value, np.ndarray):
            return f"an array of shape {value.shape}"
        return f"a {type(value).__name__}"

    return f"a tuple of {len(names)} values: " + "; ".join(f"{name}, {what(value)}" for name, value in zip(names, expected))


def compare_tuple(names: Sequence[str], parts: Sequence[Compare], *, a_tuple: bool = False) -> Compare:
    """A tuple (or, unless ``a_tuple``, a list) of ``len(names)`` values, each compared by its own ``Compare``.

    ``a_tuple`` holds a returned list with right values to the tuple its docstring promises.
    """
    ordinals = ["1st", "2nd", "3rd", "4th", "5th", "6th"]

    def compare(received: Any, expected: Any) -> Difference | None:
        if isinstance(received, np.ndarray) and received.ndim >= 1 and len(received) == len(names):
            return Difference(f"one array where a tuple of {len(names)} separate values ({', '.join(names)}) is expected",
                              f"{_tuple_in_words(names, expected)}: {python_literal(tuple(expected), limit=1500)}",
                              f"one array of shape {received.shape}: {describe(received)}",
                              hint=f"return the {len(names)} values separately, as in `return {', '.join(names)}`, "
                                   f"not stacked into one array")
        if not isinstance(received, (tuple, list)) or len(received) != len(names):
            return Difference(f"something that is not a tuple ({', '.join(names)})",
                              f"{_tuple_in_words(names, expected)}: {python_literal(tuple(expected), limit=1500)}",
                              describe(received))
        for position, (name, part, got, want) in enumerate(zip(names, parts, received, expected)):
            difference = part(got, want)
            if difference is not None:
                what = (f"a wrong {name} (the {ordinals[position]} value returned)" if difference.what.startswith(("a wrong", "the wrong"))
                        else f"{difference.what} as {name} (the {ordinals[position]} value returned)")
                return Difference(what, difference.expected, difference.received, difference.hint, difference.detail)
        if a_tuple and not isinstance(received, tuple):
            return Difference(f"the right values as a {type(received).__name__} where the docstring promises a tuple "
                              f"({', '.join(names)})",
                              f"{_tuple_in_words(names, expected)}: {python_literal(tuple(expected), limit=1500)}",
                              describe(received),
                              hint=f"return a tuple, as in `return {', '.join(names)}` (no brackets)")
        return None

    compare.returns = ("tuple" if a_tuple else None, tuple(getattr(part, "returns", None) for part in parts))  # type: ignore[attr-defined]
    return compare
