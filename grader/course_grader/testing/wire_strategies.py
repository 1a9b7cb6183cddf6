"""Hypothesis strategies for the wire's grammar: every value ``wire.decode_value`` accepts, hostile ones included.

Values are drawn as wire forms (what a kernel can send) and decoded by the real parser, so
what a test receives is exactly what the trusted side can meet: ragged nested lists,
integers up to 2**64 - 1, NaN and infinities, strings, dicts, bools, ``Unsupported``
markers, arrays of every accepted dtype, and empty arrays of large shapes.
"""

import numpy as np
from hypothesis import strategies as st

from course_grader.trusted.judging.wire import INT_RANGE, WireError, decode_value

#: Integers on the edges of int64 and uint64, besides any in the accepted range.
EDGE_INTS = [0, 1, -1, 2**31, 2**53 + 1, 2**63 - 1, 2**63, -(2**63), 2**64 - 1]
FLOATS = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([0.0, -0.0, 1e308, -1e-308, float("nan")])
INTS = st.integers(*INT_RANGE) | st.sampled_from(EDGE_INTS)
TEXT = st.text(max_size=30) | st.sampled_from(["", "nan", "1.0", "-1", "cat", "\x1b[2J", "<script>"])

_DTYPES = ["|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "<f2", "<f4", "<f8", "<U5"]
#: Shapes with a zero: nothing to hold, yet rows to show (the wire caps them as if each zero were a one).
EMPTY_LARGE_SHAPES = [[200_000, 0], [0, 200_000], [500, 0, 400], [1, 0, 1, 0, 100_000]]


def _items(dtype: str):
    kind = np.dtype(dtype).kind
    if kind == "b":
        return st.booleans()
    if kind in "iu":
        info = np.iinfo(np.dtype(dtype))
        return st.integers(int(info.min), int(info.max)) | st.sampled_from([int(info.min), int(info.max)])
    if kind == "f":
        return FLOATS if dtype == "<f8" else st.floats(width=32 if dtype == "<f4" else 16, allow_nan=True)
    return st.text(max_size=5)


@st.composite
def array_forms(draw):
    dtype = draw(st.sampled_from(_DTYPES))
    if draw(st.integers(0, 9)) == 0:
        shape = draw(st.sampled_from(EMPTY_LARGE_SHAPES))
    else:
        shape = draw(st.lists(st.integers(0, 4), max_size=3))
    size = int(np.prod(shape)) if shape else 1
    data = draw(st.lists(_items(dtype), min_size=size, max_size=size))
    return ["ndarray", {"dtype": dtype, "shape": shape, "data": data}]


scalar_forms = st.one_of(
    st.just(["none", None]),
    st.tuples(st.sampled_from(["bool", "np.bool"]), st.booleans()).map(list),
    st.tuples(st.sampled_from(["int", "np.int"]), INTS).map(list),
    st.tuples(st.sampled_from(["float", "np.float"]), FLOATS).map(list),
    st.tuples(st.sampled_from(["str", "other"]), TEXT).map(list),
)

wire_forms = st.recursive(
    scalar_forms | array_forms(),
    lambda inner: st.one_of(
        st.tuples(st.sampled_from(["list", "tuple"]), st.lists(inner, max_size=5)).map(list),
        st.lists(st.tuples(TEXT, inner).map(list), max_size=3).map(lambda pairs: ["dict", pairs]),
    ),
    max_leaves=12,
)


def _decoded(form):
    try:
        return [decode_value(form)]
    except WireError:
        return []


#: Values the trusted side may receive from a kernel (forms the parser refuses are dropped).
wire_values = wire_forms.map(_decoded).filter(bool).map(lambda found: found[0])

#: Values a test names because a round of attacks found them crashing the comparison.
KNOWN_HOSTILE = [
    [[1, 2], [3]],                          # ragged
    [np.array([1.0, 2.0]), np.array([3.0])],  # ragged arrays
    2**63, 2**64 - 1, -(2**63), [2**63, -1], [2**64 - 1, 0.5],
    np.uint64(2**64 - 1), np.array([2**64 - 1], dtype=np.uint64),
    "1.0", ["a", "b"], {"w": 1}, float("nan"), [float("inf")],
    np.zeros((200_000, 0)), np.zeros((0, 200_000)),
    np.array(["cat", "dog"]), (np.ones(2), "x"), [[], []], (), [], None, True, np.bool_(True),
]
