"""Plain data across the sandbox boundary: strict parsing of what the kernel sends back.

The kernel's harness (``in_sandbox/harness.py``) writes one JSON line per call in a
tagged wire format. Here, on the trusted side, a line becomes a ``Reply`` only if it
is small enough and every value is plain data of an allowed type and size: never an
object with methods, never pickle. Anything else is a ``WireError`` whose message
says what was wrong, which the grader reports as a failed case.

``python_literal`` turns a value into text a student can paste into a cell.
"""

from __future__ import annotations

import json
import math
import secrets
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...in_sandbox.harness import encode
from ..course.safe_text import writable_data

__all__ = ["MAX_REPLY_CHARS", "NOT_CALLED_AGAIN", "Reply", "Unsupported", "WireError", "decode_value", "encode", "harness_request", "new_marker",
           "parse_reply", "python_literal", "read_replies"]

#: Longest reply line accepted for one call (characters of JSON).
MAX_REPLY_CHARS = 2_000_000
#: Most numbers (array items and scalars together) accepted in one reply.
MAX_ITEMS = 250_000
#: Memory the arrays of one reply may take once rebuilt: as many float64 as MAX_ITEMS
#: (an array of 250,000 empty strings of dtype <U1000 would take 1 GB).
MAX_BYTES = 8 * MAX_ITEMS
MAX_DEPTH = 8
MAX_STRING = 10_000
#: Integers accepted: what int64 and uint64 hold together.
INT_RANGE = (-(2**63), 2**64 - 1)
_ARRAY_DTYPES = {np.dtype(name).str for name in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64")}


class WireError(ValueError):
    """A reply that is not plain data of the expected form; the message is for the student."""


@dataclass(frozen=True)
class Unsupported:
    """A returned value the grader does not accept as data (an object, a function, ...)."""

    type_name: str


#: ``Reply.again`` of a reply built without a second call (never from the wire: ``parse_reply`` requires one).
NOT_CALLED_AGAIN = Unsupported("not called again")


@dataclass
class Reply:
    """What one call of the student's function gave.

    Exactly one of ``result`` (with ``returned=True``) and ``error`` is meaningful.
    """

    index: int
    returned: bool
    result: Any = None
    error: tuple[str, str] = ("", "")  #: exception type name and message
    args_after: list = field(default_factory=list)
    #: The answer to the second call on the same objects, multiplied in place (``NOT_CALLED_AGAIN`` when the kernel sent
    #: none), or ``again_error`` when that call raised: a function that changed its arguments answers otherwise.
    again: Any = field(default_factory=lambda: NOT_CALLED_AGAIN)
    again_error: tuple[str, str] | None = None
    #: Positions in ``args_after`` of the arguments a returned array shares memory with (the argument itself or a view).
    shares: tuple[int, ...] = ()


class _Budget:
    def __init__(self) -> None:
        self.items = 0
        self.bytes = 0

    def spend(self, count: int, nbytes: int = 0) -> None:
        """Count ``count`` values taking ``nbytes`` of memory once rebuilt (a short line can stand for many bytes)."""
        self.items += count
        self.bytes += nbytes
        if self.items > MAX_ITEMS or self.bytes > MAX_BYTES:
            raise WireError(f"the returned value is too large (more than {MAX_ITEMS} numbers or {MAX_BYTES / 1e6:g} MB)")


def _array(payload: Any, budget: _Budget) -> np.ndarray:
    if not isinstance(payload, dict) or set(payload) != {"dtype", "shape", "data"}:
        raise WireError("a malformed array")
    dtype, shape, data = payload["dtype"], payload["shape"], payload["data"]
    if not isinstance(dtype, str) or not (dtype in _ARRAY_DTYPES or _is_short_unicode(dtype)):
        raise WireError(f"an array of an unsupported dtype {str(dtype)[:40]!r}")
    if not isinstance(shape, list) or len(shape) > MAX_DEPTH or not all(type(n) is int and n >= 0 for n in shape):
        raise WireError("an array with a malformed shape")
    # An empty array of shape (10**6, 0, 10**6) holds nothing, yet every row of it costs work to show:
    # its shape is capped as if each zero were a one.
    if math.prod(max(n, 1) for n in shape) > MAX_ITEMS:
        raise WireError(f"an array of too large a shape {tuple(shape)} (more than {MAX_ITEMS} entries, counting an empty axis as one)")
    if not isinstance(data, list) or len(data) != math.prod(shape):
        raise WireError("an array whose data does not match its shape")
    budget.spend(max(len(data), 1), len(data) * np.dtype(dtype).itemsize)
    kind = np.dtype(dtype).kind
    allowed = {"b": (bool,), "i": (int,), "u": (int,), "f": (int, float), "U": (str,)}[kind]
    if not all(type(item) in allowed and not (type(item) is bool and kind != "b") for item in data):
        raise WireError("an array holding values of another type than its dtype")
    try:
        return np.array(data, dtype=dtype).reshape(shape)
    except (OverflowError, ValueError) as error:
        raise WireError(f"an array that cannot be rebuilt ({error})") from None


def _is_short_unicode(dtype: str) -> bool:
    return dtype.startswith(("<U", ">U")) and dtype[2:].isdigit() and 0 < int(dtype[2:]) <= 1000


def decode_value(wire: Any, budget: _Budget | None = None, depth: int = 0) -> Any:
    """The value of one wire form, checked strictly; raises ``WireError``."""
    budget = budget or _Budget()
    if depth > MAX_DEPTH:
        raise WireError(f"a value nested more than {MAX_DEPTH} levels deep")
    if not isinstance(wire, list) or len(wire) != 2 or not isinstance(wire[0], str):
        raise WireError("a malformed value")
    tag, payload = wire
    budget.spend(1)
    expected_types = {"none": (type(None),), "bool": (bool,), "np.bool": (bool,), "int": (int,), "np.int": (int,),
                      "float": (float, int), "np.float": (float, int), "str": (str,), "other": (str,)}
    if tag in expected_types:
        if type(payload) not in expected_types[tag] or (type(payload) is bool and tag not in ("bool", "np.bool")):
            raise WireError(f"a malformed {tag} value")
        if type(payload) is str and len(payload) > MAX_STRING:
            raise WireError("a string longer than 10,000 characters")
        if type(payload) is int and not INT_RANGE[0] <= payload <= INT_RANGE[1]:
            raise WireError("an integer too large for int64 or uint64")
        return _scalar(tag, payload)
    if tag == "ndarray":
        return _array(payload, budget)
    if tag in ("list", "tuple"):
        if not isinstance(payload, list):
            raise WireError(f"a malformed {tag}")
        items = [decode_value(item, budget, depth + 1) for item in payload]
        return items if tag == "list" else tuple(items)
    if tag == "dict":
        if not isinstance(payload, list) or not all(isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str)
                                                    for pair in payload):
            raise WireError("a malformed dict")
        return {key: decode_value(item, budget, depth + 1) for key, item in payload}
    raise WireError(f"an unknown kind of value {tag[:40]!r}")


def _scalar(tag: str, payload: Any) -> Any:
    if tag == "np.bool":
        return np.bool_(payload)
    if tag == "np.int":
        return np.int64(payload) if payload < 2**63 else np.uint64(payload)
    if tag == "np.float":
        return np.float64(payload)
    if tag == "float":
        return float(payload)
    if tag == "other":
        return Unsupported(payload[:100])
    return payload


def parse_reply(line: str) -> Reply | dict:
    """One harness line (without its marker) as a ``Reply``, or the ``{"missing": ...}`` notice.

    Raises ``WireError`` for anything that is not a well-formed reply.
    """
    if len(line) > MAX_REPLY_CHARS:
        raise WireError(f"the returned value is too large ({len(line):,} characters of data)")
    try:
        # Every string made writable as it enters (a lone surrogate, from a JSON escape, raises wherever it is written)
        message = writable_data(json.loads(line))
    except (ValueError, RecursionError):
        raise WireError("the grader could not read what your function returned") from None
    if not isinstance(message, dict):
        raise WireError("a malformed reply")
    if message.get("missing") is True:
        return {"missing": True, "found": str(message.get("found", ""))[:100]}
    index = message.get("index")
    if type(index) is not int or index < 0:
        raise WireError("a malformed reply")
    if "error" in message:
        error = message["error"]
        if not (isinstance(error, list) and len(error) == 2 and all(isinstance(part, str) for part in error)):
            raise WireError("a malformed error reply")
        return Reply(index, returned=False, error=(error[0][:100], error[1][:500]))
    budget = _Budget()
    after = message.get("args_after")
    if not isinstance(after, list):
        raise WireError("a malformed reply")
    again_error = message.get("again_error")
    if again_error is not None and not (isinstance(again_error, list) and len(again_error) == 2
                                        and all(isinstance(part, str) for part in again_error)):
        raise WireError("a malformed error reply")
    if again_error is None and "again" not in message:
        raise WireError("a reply without the second call's answer")
    shares = message.get("shares", [])
    if not (isinstance(shares, list) and len(shares) <= len(after)
            and all(type(position) is int and 0 <= position < len(after) for position in shares)):
        raise WireError("a malformed reply")
    try:
        result = decode_value(message.get("result"), budget)
        again = decode_value(message["again"], budget) if again_error is None else None
        return Reply(index, returned=True, result=result, args_after=[decode_value(item, budget) for item in after],
                     again=again, again_error=None if again_error is None else (again_error[0][:100], again_error[1][:500]),
                     shares=tuple(sorted(set(shares))))
    except (OverflowError, TypeError, ValueError, RecursionError, MemoryError) as error:
        if isinstance(error, WireError):
            raise
        raise WireError(f"a value that cannot be rebuilt ({type(error).__name__})") from None


def python_literal(value: Any, *, limit: int = 6000) -> str:
    """``value`` as Python source a student can paste into a cell (``np.array([...])`` for arrays).

    Longer than ``limit`` characters, the text is cut and says so. The work is bounded by
    ``limit`` too: the text is written piece by piece and writing stops at the limit, so a
    huge value (or an empty array of a huge shape) is never turned into text whole.
    """
    writer = _Writer(limit)
    try:
        _write_literal(value, writer)
    except _LimitReached:
        return "".join(writer.parts)[:limit] + " ... [cut: longer than the grader shows]"
    return "".join(writer.parts)


class _LimitReached(Exception):
    """The text being written has passed its limit."""


class _Writer:
    def __init__(self, limit: int) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.limit = limit

    def write(self, text: str) -> None:
        self.parts.append(text)
        self.size += len(text)
        if self.size > self.limit:
            raise _LimitReached


def _write_sequence(items, writer: _Writer, opening: str, closing: str, write_item) -> None:
    writer.write(opening)
    for position, item in enumerate(items):
        if position:
            writer.write(", ")
        write_item(item, writer)
    writer.write(closing)


def _write_array_body(array: np.ndarray, writer: _Writer) -> None:
    """The nested-list body of an array, row by row (never ``tolist`` of the whole array)."""
    if array.ndim == 0:
        _write_literal(array.item(), writer)
    elif array.ndim == 1:
        # Each item takes at least one character: no more than ``limit`` of them can be shown.
        shown = array[: writer.limit + 1].tolist()
        _write_sequence(shown, writer, "[", "]", _write_literal)
    else:
        _write_sequence((array[i] for i in range(array.shape[0])), writer, "[", "]", _write_array_body)


def _write_literal(value: Any, writer: _Writer) -> None:
    if isinstance(value, np.ndarray):
        needs_dtype = value.size == 0 or (value.dtype.kind in "iu" and value.dtype != np.int64) or value.dtype.kind == "f" and value.dtype != np.float64
        writer.write("np.array(")
        _write_array_body(value, writer)
        writer.write(f", dtype=np.{value.dtype.name})" if needs_dtype else ")")
    elif isinstance(value, tuple):
        _write_sequence(value, writer, "(", ",)" if len(value) == 1 else ")", _write_literal)
    elif isinstance(value, list):
        _write_sequence(value, writer, "[", "]", _write_literal)
    elif isinstance(value, dict):
        def write_pair(pair, out):
            out.write(f"{_bounded_repr(pair[0])}: ")
            _write_literal(pair[1], out)

        _write_sequence(value.items(), writer, "{", "}", write_pair)
    else:
        writer.write(_scalar_literal(value))


def _bounded_repr(value: Any) -> str:
    if isinstance(value, str) and len(value) > MAX_STRING:
        value = value[:MAX_STRING]
    return repr(value)


def _scalar_literal(value: Any) -> str:
    if isinstance(value, Unsupported):
        return f"<an object of type {value.type_name}>"
    if isinstance(value, np.bool_):
        return "np.True_" if value else "np.False_"
    if isinstance(value, np.generic):
        return f"np.{type(value).__name__}({_scalar_literal(value.item())})"
    if isinstance(value, float) and not math.isfinite(value):
        return "np.nan" if math.isnan(value) else ("np.inf" if value > 0 else "-np.inf")
    if isinstance(value, (bool, int, float, str, type(None))):
        return _bounded_repr(value)
    return f"<an object of type {type(value).__name__[:100]}>"


def harness_request(target: str, cases: list, marker: str, again: list | None = None) -> dict:
    """The plain-data request for the harness: the student function's name, the marker and every case's arguments.

    ``cases`` are ``checks.cases.Case`` objects (their ``args`` and ``kwargs``); ``again``, the second
    call of each (``checks.second_calls.witnessing_second_call``): an argument the second call takes from the first call's
    object multiplied in place (``Case.scaled``) is sent as ``["scaled", [position, factor]]`` (``[key, factor]``),
    one that is that very object as ``["same", position]`` (``["same", key]``), the others as values. Without it,
    each call is made again as it is.
    """
    def argument(where, value, mine, scaled: dict) -> list:
        if where in scaled:
            return ["scaled", [where, encode(scaled[where])]]
        return ["same", where] if value is mine else ["value", encode(value)]

    def second(case, follow) -> dict:
        scaled = getattr(follow, "scaled", {})
        return {"args": [argument(position, value, mine, scaled)
                         for position, (value, mine) in enumerate(zip(follow.args, case.args))],
                "kwargs": {key: argument(key, value, case.kwargs.get(key), scaled) for key, value in follow.kwargs.items()}}

    calls = [{"args": [encode(value) for value in case.args],
              "kwargs": {key: encode(value) for key, value in case.kwargs.items()}} for case in cases]
    if again is not None:
        for call, case, follow in zip(calls, cases, again):
            call["again"] = second(case, follow)
    return {"function": target, "marker": marker, "calls": calls}


def new_marker() -> str:
    """A fresh marker that starts the harness's lines (student output cannot be mistaken for them by accident)."""
    return f"@@perceptron-course-{secrets.token_hex(8)}@@"


def read_replies(text: str, marker: str, n_cases: int) -> tuple[list[Reply | dict], str]:
    """The replies found in the kernel's stdout, in case order, and why they stop early (or ``""``).

    Only lines that start with ``marker`` count; each must parse strictly. The first
    malformed line ends the replies, with the reason.
    """
    replies: list[Reply | dict] = []
    for line in text.split("\n"):
        if not line.startswith(marker):
            continue
        try:
            reply = parse_reply(line[len(marker):])
        except WireError as error:
            return replies, f"returned something the grader cannot accept as data ({error})"
        if isinstance(reply, dict):
            return [reply], ""
        if reply.index != len(replies):
            return replies, "answered out of order"
        replies.append(reply)
        if len(replies) == n_cases:
            break
    return replies, ""
