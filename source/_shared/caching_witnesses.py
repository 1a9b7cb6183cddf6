"""Caches for the bug witnesses (``source/<assignment>/bug_witnesses.py``): a graded function that remembers its
answers, keyed well (by the arguments' values: correct) or badly (by an ``id()`` or a shape: a bug that a second call
on the same objects, multiplied in place, shows every time). Course material, never released or bundled.

    _caching = course_module(__file__, "caching_witnesses")
    _caching.cached(augment, _caching.by_id)
"""

from __future__ import annotations

import copy
import pickle
from typing import Callable

import numpy as np


def cached(function: Callable, key: Callable[..., object]) -> Callable:
    """``function`` with a cache of its answers keyed by ``key(*args)`` (each answer returned as a deep copy)."""
    cache: dict = {}

    def remembering(*args):
        found = key(*args)
        if found not in cache:
            cache[found] = function(*args)
        return copy.deepcopy(cache[found])

    return remembering


def by_value(*args) -> bytes:
    """A key that is the arguments' values: their types, dtypes, shapes and bytes."""
    return pickle.dumps([(type(a).__name__, np.asarray(a).dtype.str, np.shape(a), np.asarray(a).tobytes()) for a in args])


def by_id(*args) -> tuple:
    """A key that is the arguments' identities (a bug: the same objects with other values get the old answer)."""
    return tuple(id(a) for a in args)


def by_shape(*args) -> tuple:
    """A key that is the arguments' shapes (a bug: other values of the same shapes get the old answer)."""
    return tuple(np.shape(a) for a in args)
