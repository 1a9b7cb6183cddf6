"""The boundary's data format: what the harness sends round-trips; anything else is refused with a reason."""

import io
import json

import numpy as np
import pytest

from course_grader.checks_api import Case, Check, compare_arrays
from course_grader.in_sandbox import harness
from course_grader.trusted.judging.checks import run_in_process
from course_grader.trusted.judging.verdicts import harness_code
from course_grader.trusted.judging.wire import (
    MAX_REPLY_CHARS, Unsupported, WireError, decode_value, encode, new_marker, parse_reply, python_literal, read_replies,
)

PLAIN_VALUES = [
    None, True, 3, -2.5, float("nan"), float("inf"), "cat",
    np.bool_(False), np.int64(7), np.float64(0.25), np.uint64(2**64 - 1), 2**63,
    np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([1, -1, 1]), np.array(["cat", "dog"]), np.zeros((0, 3)),
    np.array([True, False]), np.array(5.0),
    (np.zeros(2), 1.0, 3, True), [np.ones(2), np.ones(2)], {"w": np.ones(2), "b": 0.5},
]


def same(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, float) and np.isnan(a):
        return isinstance(b, float) and np.isnan(b)
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("value", PLAIN_VALUES, ids=lambda v: type(v).__name__)
def test_plain_data_round_trips_through_json(value):
    wire = json.loads(json.dumps(encode(value), allow_nan=True))
    assert same(decode_value(wire), value)


def test_objects_with_methods_become_unsupported_markers():
    class Subclass(np.ndarray):
        pass

    for value in (object(), lambda: 1, np.zeros(2).view(Subclass), np.array([object()]), {1: 2}, 2 + 3j):
        decoded = decode_value(json.loads(json.dumps(encode(value))))
        assert isinstance(decoded, Unsupported), value


def test_numpys_own_array_subclasses_and_long_doubles_cross_as_their_data():
    """np.matrix, a masked array and a long double array are numbers a student may return (attack round 8 found them
    scored 0 with a hint about text): they cross as plain arrays (a long double as float64, as its scalars do)."""
    with pytest.warns(PendingDeprecationWarning):  # NumPy discourages np.matrix; a student may still return one
        matrix = np.asmatrix([[1.0, 2.0]])
    for value, plain in ((matrix, np.array([[1.0, 2.0]])),
                         (np.ma.masked_invalid(np.array([0.5, -1.0])), np.array([0.5, -1.0])),
                         (np.array([1.5, 2.0], dtype=np.longdouble), np.array([1.5, 2.0]))):
        decoded = decode_value(json.loads(json.dumps(encode(value))))
        assert type(decoded) is np.ndarray and same(decoded, plain), (type(value).__name__, decoded)


@pytest.mark.parametrize(("wire", "reason"), [
    (["ndarray", {"dtype": "|O", "shape": [1], "data": [1]}], "unsupported dtype"),
    (["ndarray", {"dtype": "<M8[s]", "shape": [1], "data": [1]}], "unsupported dtype"),
    (["ndarray", {"dtype": "<f8", "shape": [3], "data": [1.0]}], "does not match its shape"),
    (["ndarray", {"dtype": "<f8", "shape": [1], "data": ["1"]}], "another type than its dtype"),
    (["ndarray", {"dtype": "<i8", "shape": [1], "data": [True]}], "another type than its dtype"),
    (["ndarray", {"dtype": "<i8", "shape": [-1], "data": []}], "malformed shape"),
    (["ndarray", {"dtype": "<f8", "shape": [300_000], "data": [0.0] * 300_000}], "too large"),
    (["ndarray", {"dtype": "<U1000", "shape": [1000], "data": [""] * 1000}], "too large"),  # 4 MB from a short line
    (["list", [["ndarray", {"dtype": "<f8", "shape": [200_000], "data": [0.0] * 200_000}]] * 2], "too large"),
    (["int", 2**70], "too large for int64"),
    (["int", 1.5], "malformed int"),
    (["bool", 1], "malformed bool"),
    (["str", "x" * 20_000], "longer than"),
    (["pickle", "gASV"], "unknown kind"),
    ([["list", []]], "malformed value"),
    ("float", "malformed value"),
])
def test_malformed_or_oversized_values_are_refused(wire, reason):
    with pytest.raises(WireError, match=reason):
        decode_value(wire)


def test_arrays_up_to_the_caps_are_accepted():
    labels = decode_value(["ndarray", {"dtype": "<U3", "shape": [40_000], "data": ["cat"] * 40_000}])
    numbers = decode_value(["ndarray", {"dtype": "<f8", "shape": [240_000], "data": [0.5] * 240_000}])
    assert labels.shape == (40_000,) and numbers.shape == (240_000,)


def test_deep_nesting_and_huge_lines_are_refused():
    deep = ["none", None]
    for _ in range(20):
        deep = ["list", [deep]]
    with pytest.raises(WireError, match="nested"):
        decode_value(deep)
    with pytest.raises(WireError, match="too large"):
        parse_reply("[" * 10 + " " * MAX_REPLY_CHARS)
    with pytest.raises(WireError, match="could not read"):
        parse_reply("[" * 100_000)


def test_replies_must_come_in_order_and_well_formed():
    marker = new_marker()
    good = [marker + json.dumps({"index": i, "result": encode(float(i)), "args_after": [], "again": encode(float(i))})
            for i in range(3)]
    replies, problem = read_replies("\n".join(["noise", *good]), marker, 3)
    assert [r.result for r in replies] == [0.0, 1.0, 2.0] and problem == ""
    replies, problem = read_replies("\n".join([good[1], good[0]]), marker, 3)
    assert replies == [] and problem == "answered out of order"
    replies, problem = read_replies("\n".join([good[0], marker + "{not json"]), marker, 3)
    assert len(replies) == 1 and "cannot accept" in problem


def test_the_harness_code_runs_in_a_plain_namespace_and_leaves_nothing_behind(capsys):
    namespace = {"double": lambda x: 2 * x}
    marker = new_marker()
    request = {"function": "double", "marker": marker, "calls": [{"args": [encode(np.arange(3))], "kwargs": {}}]}
    exec(harness_code(request), namespace)
    assert set(namespace) - {"__builtins__"} == {"double"}
    replies, problem = read_replies(capsys.readouterr().out, marker, 1)
    assert problem == "" and np.array_equal(replies[0].result, [0, 2, 4])


def test_a_missing_function_is_reported():
    lines = []
    harness.call_all({}, {"function": "augment", "marker": "M", "calls": []}, emit=lines.append)
    assert json.loads(lines[0][1:]) == {"missing": True, "found": "NoneType"}


@pytest.mark.parametrize("value", PLAIN_VALUES[:-3] + [(np.array([[0.1, 2.0]]), 3, "sign"), [np.array([1, 2])]],
                         ids=lambda v: type(v).__name__)
def test_python_literals_paste_back_to_the_same_value(value):
    pasted = eval(python_literal(value), {"np": np})
    if isinstance(value, np.ndarray) and value.size:
        assert np.array_equal(pasted, value, equal_nan=value.dtype.kind == "f") and pasted.dtype == value.dtype
    elif isinstance(value, (tuple, list)):
        assert len(pasted) == len(value)
    elif isinstance(value, float) and np.isnan(value):
        assert np.isnan(pasted)
    elif not isinstance(value, np.ndarray):
        assert pasted == value


# ----------------------------------------------------------------------------- hostile values, bounded work

from hypothesis import HealthCheck, given, settings  # noqa: E402

from course_grader.trusted.judging.wire import MAX_ITEMS  # noqa: E402
from course_grader.testing.wire_strategies import wire_forms, wire_values  # noqa: E402 - beside the tests that use them


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(form=wire_forms)
def test_any_wire_form_is_a_value_or_a_wire_error(form):
    line = json.dumps({"index": 0, "result": form, "args_after": [form], "again": form}, allow_nan=True)
    try:
        reply = parse_reply(line)
    except WireError:
        return
    assert reply.returned


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(value=wire_values)
def test_a_literal_is_bounded_by_its_limit(value):
    assert len(python_literal(value, limit=300)) <= 300 + len(" ... [cut: longer than the grader shows]")


@pytest.mark.parametrize("shape", [[10**6, 0, 10**6], [0, 10**7], [300_000, 0], [2, 0, 2, 0, 2, 0, 100_000]])
def test_empty_arrays_of_huge_shapes_are_refused_like_full_ones(shape):
    with pytest.raises(WireError, match="too large a shape"):
        decode_value(["ndarray", {"dtype": "<f8", "shape": shape, "data": []}])


def test_an_empty_array_of_a_large_accepted_shape_is_shown_in_bounded_text():
    empty = decode_value(["ndarray", {"dtype": "<f8", "shape": [MAX_ITEMS, 0], "data": []}])
    text = python_literal(empty, limit=1500)
    assert text.startswith("np.array([[], [], ") and text.endswith("[cut: longer than the grader shows]")
    assert len(text) < 1600


@pytest.mark.parametrize(("tag", "value", "kind"), [("np.int", 2**63, np.uint64), ("np.int", 2**64 - 1, np.uint64),
                                                    ("np.int", -(2**63), np.int64), ("int", 2**64 - 1, int)])
def test_integers_of_int64_and_uint64_are_accepted(tag, value, kind):
    decoded = decode_value([tag, value])
    assert type(decoded) is kind and int(decoded) == value


def test_integers_beyond_uint64_are_refused_with_a_reason_not_an_overflow():
    with pytest.raises(WireError, match="too large"):
        parse_reply(json.dumps({"index": 0, "result": ["np.int", 2**64], "args_after": [], "again": ["int", 1]}))


def test_a_reply_carries_the_answer_to_the_same_call_made_again_or_why_not():
    # Attack round 12 (item 2): the verdict on an in-place change rests on that second answer, so a reply without it is refused.
    plain = {"index": 0, "result": ["int", 1], "args_after": []}
    with pytest.raises(WireError, match="second call"):
        parse_reply(json.dumps(plain))
    assert parse_reply(json.dumps({**plain, "again": ["int", 2]})).again == 2
    assert parse_reply(json.dumps({**plain, "again_error": ["ValueError", "no"]})).again_error == ("ValueError", "no")
    with pytest.raises(WireError, match="malformed"):
        parse_reply(json.dumps({**plain, "again_error": ["ValueError", 3]}))



def _shares(function, *args) -> list:
    """What the harness says a call of ``function`` on ``args`` shares with its arguments (``[]``: nothing)."""
    lines: list[str] = []
    request = {"function": "f", "marker": "@@", "calls": [{"args": [encode(value) for value in args], "kwargs": {}}]}
    harness.call_all({"f": function}, request, emit=lines.append)
    reply = json.loads(lines[0].removeprefix("@@"))
    return reply.get("shares", [])


def test_the_harness_names_the_arguments_a_returned_array_shares_memory_with():
    w, x = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    assert _shares(lambda w, x: w, w, x) == [0]  # the argument itself
    assert _shares(lambda w, x: (x[::-1], 1.0, False), w, x) == [1]  # a view of it, inside a tuple
    assert _shares(lambda w, x: [w, x[:1]], w, x) == [0, 1]
    assert _shares(lambda w, x: (w.copy(), np.array(x)), w, x) == []  # copies share nothing
    assert _shares(lambda w, x: w + x, w, x) == []
    assert _shares(lambda w, x: 3.0, w, x) == []


def test_a_reply_says_what_it_shares_with_the_arguments_only_by_their_positions():
    plain = {"index": 0, "result": ["int", 1], "args_after": [["int", 1], ["int", 2]], "again": ["int", 1]}
    assert parse_reply(json.dumps(plain)).shares == ()
    assert parse_reply(json.dumps({**plain, "shares": [1, 0]})).shares == (0, 1)
    for malformed in ([2], [-1], [True], ["0"], [0, 1, 0], {"0": 1}, 0):
        with pytest.raises(WireError, match="malformed"):
            parse_reply(json.dumps({**plain, "shares": malformed}))


def _step_cases(rng):
    return [Case((np.round(rng.normal(size=3), 3), np.round(rng.normal(size=3), 3)), "random weights and point")
            for _ in range(5)]


def _step(w, x):
    return (np.asarray(w, dtype=float) + np.asarray(x, dtype=float)) if float(np.dot(w, x)) <= 0 else np.array(w, dtype=float)


def test_an_argument_returned_as_the_answer_fails_only_where_the_docstring_promises_a_new_array():
    promised = Check("step", ("w", "x"), _step_cases, _step, compare_arrays(exact=False, what="new weights"), new_arrays=True)
    silent = Check("step", ("w", "x"), _step_cases, _step, compare_arrays(exact=False, what="new weights"))

    def aliasing(w, x):  # the caller's own w when nothing changes
        return w + x if float(np.dot(w, x)) <= 0 else w

    verdict = run_in_process(promised, aliasing, secret=b"alias secret")
    assert not verdict.passed
    assert "returned the caller's w itself (or a view of it)" in verdict.message() and "w.copy()" in verdict.message()
    assert run_in_process(silent, aliasing, secret=b"alias secret").passed  # no promise: the values are right
    assert run_in_process(promised, _step, secret=b"alias secret").passed


class _CountingStdout(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.flushes = 0

    def flush(self) -> None:
        self.flushes += 1


def test_the_harness_leaves_its_lines_to_be_sent_a_few_messages_at_a_time(monkeypatch):
    """A flush is a message from the kernel (about 0.3 ms of its CPU, and more of the grader's): a flush per call
    made a hundred messages for a hundred calls; ipykernel sends unflushed text every 0.2 s and when the cell ends."""
    stdout = _CountingStdout()
    monkeypatch.setattr(harness.sys, "stdout", stdout)
    calls = [{"args": [encode(k)], "kwargs": {}} for k in range(50)]
    harness.call_all({"double": lambda x: 2 * x}, {"function": "double", "marker": "M", "calls": calls})
    replies, problem = read_replies(stdout.getvalue(), "M", 50)
    assert problem == "" and [reply.result for reply in replies] == [2 * k for k in range(50)]
    assert stdout.flushes == 0


def test_the_harness_flushes_after_each_megabyte_of_replies(monkeypatch):
    """The grader refuses a message over 64 MiB (it drops the connection): a few large replies in 0.2 s are sent
    in messages of about 1 MiB each."""
    stdout = _CountingStdout()
    monkeypatch.setattr(harness.sys, "stdout", stdout)
    calls = [{"args": [encode(k)], "kwargs": {}} for k in range(8)]
    harness.call_all({"big": lambda k: np.full(60_000, 0.25)}, {"function": "big", "marker": "M", "calls": calls})
    replies, problem = read_replies(stdout.getvalue(), "M", 8)
    assert problem == "" and len(replies) == 8
    sent = len(stdout.getvalue())
    # each reply carries the answer twice (the same call made again on the same objects: attack round 12)
    assert 5_000_000 < sent < 6 * 2**20 and stdout.flushes == 4  # one flush per MiB written (two replies of 0.7 MB), not one per reply
