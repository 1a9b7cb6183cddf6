"""The call harness: runs a student's function on the grader's cases, inside the student's kernel.

The trusted side sends this file's source to the sandboxed kernel together with the
cases (plain data), right after a graded test cell. ``call_all`` looks the student's
function up, calls it once per case, and writes one line per call on stdout: a
marker, then JSON in the grader's wire format (numbers, strings, booleans, arrays of
numbers or strings, and lists/tuples/dicts of these). The lines are not flushed one by
one: ipykernel sends what was written every 0.2 s and when the cell ends, a few messages
for a hundred calls where a flush each would cost a message each (a flush after each
``FLUSH_CHARS`` keeps every message far under the grader's cap on one). It decides nothing: the
comparison with the reference happens outside the kernel, on whatever comes back.
Code that tampers with this harness can only change the data it returns, which
is then judged like any other answer.

What this harness relies on in the kernel, and what that means. It is loaded with ``exec(compile(...))`` and its
request read with ``json.loads``; it uses ``json.dumps``, ``numpy`` (to rebuild arrays, to multiply the second call's
arguments), ``sys.stdout``, ``warnings``, builtins (``type``, ``isinstance``, ``enumerate``, ...) and an exception's
``__str__``. Student code that ran before it can replace any of these, or the harness itself, and nothing run in the
same interpreter can prevent that (rounds 12 to 14 replaced ``json.dumps``). So this harness's honesty is assumed
nowhere. What holds:

- A score is raised only by values judged on the trusted side against the reference computed there: each case's
  answer (``result``), and the answer to a second call on the very objects of the first (``again``), whose arrays
  and lists this harness multiplies in place by factors the grader drew from the course secret
  (``scale_in_place``). Its right answer is the reference's on the values *as sent*, multiplied; the factors are
  drawn so that the first answer is wrong for it. A forged reply must hold these values: a hook that sends the
  first answer again, or computes the second on the objects as the first call left them, fails.
- Everything else the kernel sends can only lower a score: an exception (``error``, ``again_error``), a missing
  function, fewer or out-of-order replies, a value the wire refuses, and ``args_after`` (what the arguments hold
  after the call), which is evidence that can only incriminate: forged to "unchanged", it gains nothing.
- What does not hold: a hook can still hide an in-place change. It has to keep a copy of the arguments from
  before the first call changed them and compute the function's right answer on that copy multiplied by the
  factors, that is, do the work a correct function does; its answers are then those of a function that works on
  copies, and only the caller's array (inside the kernel, where no one outside can look) is changed. A change no
  answer depends on (the same number added to every entry of ``ovr_predict``'s ``W``), and any change for a check
  judged without a single right answer (a ``judge``, such as ``xor_features``, which has no judged second call),
  rests on ``args_after`` alone. The static review (``flags.py``) flags such hooks for a TA (the interpreter's
  names, ``.modules``, ``.dumps``, read from any value, and assignments to objects the notebook did not create).

It depends on nothing but the standard library and NumPy, keeps its names out of
the student's namespace, and never imports the grader.

Wire format: every value is a two-item list ``[tag, payload]``:
``["none", null]``, ``["bool", true]``, ``["int", 3]``, ``["float", 1.5]``,
``["str", "a"]``, ``["np.bool", true]``, ``["np.int", 3]``, ``["np.float", 1.5]``,
``["ndarray", {"dtype": "float64", "shape": [2], "data": [1.0, 2.0]}]``,
``["list", [...]]``, ``["tuple", [...]]``, ``["dict", [["key", value], ...]]``,
and ``["other", "TypeName"]`` for anything else. Floats may be NaN or infinite.
"""

import json
import sys
import warnings

import numpy

#: Array dtypes that cross the boundary (kind letters of numpy dtypes).
ARRAY_KINDS = "biufU"
MAX_DEPTH = 6
#: Characters of reply lines sent in one message at most (besides the last line): the grader refuses a message
#: over 64 MiB, and a line is at most a few MB (``wire.MAX_REPLY_CHARS``).
FLUSH_CHARS = 1 << 20


def encode(value, depth=0):
    """The wire form of ``value`` (see the module docstring); never calls a method of a student's object."""
    kind = type(value)
    if depth > MAX_DEPTH:
        return ["other", "a value nested more than %d levels deep" % MAX_DEPTH]
    if value is None:
        return ["none", None]
    if kind is bool:
        return ["bool", value]
    if kind is int:
        return ["int", value]
    if kind is float:
        return ["float", value]
    if kind is str:
        return ["str", value]
    if kind is numpy.bool_:
        return ["np.bool", bool(value)]
    if isinstance(value, numpy.generic) and kind.__module__ == "numpy":
        if value.dtype.kind in "iu":
            return ["np.int", int(value)]
        if value.dtype.kind == "f":
            return ["np.float", float(value)]
        if value.dtype.kind == "U":
            return ["str", str(value)]
    if isinstance(value, numpy.ndarray) and kind is not numpy.ndarray and kind.__module__.startswith("numpy"):
        # NumPy's own subclasses (np.matrix, masked arrays, memmap): their data, through the base class's methods
        # only (a view as a plain ndarray calls nothing of the subclass)
        value, kind = numpy.ndarray.view(value, numpy.ndarray), numpy.ndarray
    if kind is numpy.ndarray and value.dtype.kind == "f" and value.dtype.itemsize > 8:
        value = value.astype(numpy.float64)  # long double: a float, sent as float64 (as its scalars are)
    if kind is numpy.ndarray and value.dtype.kind in ARRAY_KINDS:
        flat = value.ravel().tolist()
        return ["ndarray", {"dtype": value.dtype.str, "shape": list(value.shape), "data": flat}]
    if kind is list or kind is tuple:
        return ["list" if kind is list else "tuple", [encode(item, depth + 1) for item in value]]
    if kind is dict and all(type(key) is str for key in value):
        return ["dict", [[key, encode(item, depth + 1)] for key, item in value.items()]]
    if kind is numpy.ndarray:
        return ["other", "an array of dtype %s" % value.dtype]
    return ["other", kind.__name__]


def decode(wire):
    """The value a wire form stands for (arguments sent by the grader); a string is interned (``sys.intern``)."""
    tag, payload = wire
    if tag == "str":  # interned, as a notebook's literal "margin" is: `rule is "margin"` holds here as there
        return sys.intern(payload)
    if tag in ("none", "bool", "int", "float"):
        return payload
    if tag == "ndarray":
        data = numpy.array(payload["data"], dtype=numpy.dtype(payload["dtype"]))
        return data.reshape(payload["shape"])
    if tag in ("list", "tuple"):
        items = [decode(item) for item in payload]
        return items if tag == "list" else tuple(items)
    if tag == "dict":
        return {sys.intern(key): decode(item) for key, item in payload}
    if tag == "np.bool":
        return numpy.bool_(payload)
    if tag == "np.int":
        return numpy.int64(payload)
    if tag == "np.float":
        return numpy.float64(payload)
    raise ValueError("unknown wire tag %r" % tag)


def _error_text(error):
    try:
        message = str(error)
    except BaseException:  # noqa: BLE001 - a student's exception whose __str__ fails
        message = ""
    return type(error).__name__, message[:500]


def _stdout_writer():
    unflushed = [0]

    def write(line):
        sys.stdout.write("\n" + line + "\n")
        unflushed[0] += len(line) + 2
        if unflushed[0] >= FLUSH_CHARS:
            sys.stdout.flush()
            unflushed[0] = 0
    return write


def scale_in_place(value, factor):
    """Multiply every number ``value`` holds (an array of numbers, or a list, nested) by ``factor``, in place.

    ``factor`` is a number, or holds one per entry (an array of ``value``'s shape, or a list of its length).
    Other entries (bools, strings) stay as they are. The grader does the same to a copy of what it sent, so it
    knows what the second call receives when the first call left its arguments as they were (``_call_again``).
    """
    if type(value) is numpy.ndarray:
        if value.dtype.kind in "iuf":
            value *= factor
    elif type(value) is list:
        for position, item in enumerate(value):
            each = factor[position] if type(factor) is list else factor
            if type(item) is int or type(item) is float:
                value[position] = item * each
            elif type(item) is list or type(item) is numpy.ndarray:
                scale_in_place(item, each)


def fresh_string(value):
    """``value``, or for a string of two characters or more an equal string that is a new object: the second call's
    strings are made at run time, so ``rule is "margin"`` (which holds for the first call's interned strings, as for
    a notebook's literals) fails there, as it does for any string a program builds."""
    if type(value) is str and len(value) > 1:
        return "".join([value[:1], value[1:]])
    return value


def _second_arguments(plan, args, kwargs):
    """The arguments of the second call: the first call's objects (``same``), the same objects multiplied in place
    by a factor the grader drew (``scaled``), or values of their own (``value``)."""
    def argument(tag, value, first):
        if tag == "same":
            return first[value]
        if tag == "scaled":
            where, factor = value
            scale_in_place(first[where], decode(factor))
            return first[where]
        return fresh_string(decode(value))

    return ([argument(tag, value, args) for tag, value in plan["args"]],
            {key: argument(tag, value, kwargs) for key, (tag, value) in plan["kwargs"].items()})


def _shared_arguments(result, sent):
    """Positions (in ``args_after``'s order) of the array arguments whose memory a returned array shares.

    A returned array that is an argument itself, or a view of one, is one array for the caller and the function: a
    function whose docstring promises a new array broke that promise. Like ``args_after``, this can only incriminate.
    """
    returned = [result] if isinstance(result, numpy.ndarray) else \
        [item for item in result if isinstance(item, numpy.ndarray)] if isinstance(result, (tuple, list)) else []
    shared = []
    for position, argument in enumerate(sent):
        if not isinstance(argument, numpy.ndarray):
            continue
        for array in returned:
            try:
                if numpy.shares_memory(array, argument, max_work=10_000):
                    shared.append(position)
                    break
            except Exception:  # noqa: BLE001 - too hard to tell (numpy's TooHardError): not said
                continue
    return shared


def _call_again(function, args, kwargs, plan=None):
    """A second call on the very objects of the first (changed in place or not): ``{"again": wire}``.

    ``plan`` (the request's ``"again"``) says, for each argument, whether it is the first call's object as the
    first call left it, that object multiplied in place by a factor (every number it holds), or a value of its
    own (the next case's numbers). The grader knows the right answer for the objects as they were *sent*; one
    the first call changed in place keeps that change through the multiplication, so the answer from it is
    another. A reply is judged against that answer on the trusted side, never on this harness's word.
    """
    try:
        if plan is not None:
            args, kwargs = _second_arguments(plan, args, kwargs)
        with warnings.catch_warnings(), numpy.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return {"again": encode(function(*args, **kwargs))}
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: BLE001 - as for the first call
        return {"again_error": _error_text(error)}


def call_all(namespace, request, emit=None):
    """Call ``namespace[request["function"]]`` on every case of ``request``; emit one JSON line per call.

    ``request``: ``{"function": name, "marker": str, "calls": [{"args": [...], "kwargs": {...}}]}``
    with arguments in wire form. Each line is the marker followed by
    ``{"index": i, "result": wire}`` and ``"args_after"`` (the arguments after the
    call, to see whether they were changed in place), then ``"again"`` (the answer to a second call on the same
    objects, ``_call_again``) or ``"again_error"``; or ``{"index": i, "error": [type, message]}``.
    A missing function gives one line ``{"missing": true}``.
    """
    write = emit or _stdout_writer()
    marker = request["marker"]
    function = namespace.get(request["function"])
    if not callable(function):
        write(marker + json.dumps({"missing": True, "found": type(function).__name__}))
        return
    for index, call in enumerate(request["calls"]):
        args = [decode(item) for item in call["args"]]
        kwargs = {key: decode(item) for key, item in call["kwargs"].items()}
        try:
            with warnings.catch_warnings(), numpy.errstate(all="ignore"):
                warnings.simplefilter("ignore")  # a warning is not an answer; the visible tests show them
                result = function(*args, **kwargs)
        except KeyboardInterrupt:  # the grader's timeout: stop here, the grader knows which call hung
            raise
        except BaseException as error:  # noqa: BLE001 - SystemExit and friends are answers too
            reply = {"index": index, "error": _error_text(error)}
        else:
            sent = list(args) + [kwargs[key] for key in sorted(kwargs)]
            reply = {"index": index, "result": encode(result), "args_after": [encode(item) for item in sent]}
            shared = _shared_arguments(result, sent)
            if shared:
                reply["shares"] = shared
            reply.update(_call_again(function, args, kwargs, call.get("again")))
        try:
            line = json.dumps(reply, allow_nan=True)
        except (TypeError, ValueError, RecursionError, OverflowError) as error:
            line = json.dumps({"index": index, "error": ["UnencodableResult", _error_text(error)[1]]})
        write(marker + line)
