"""Inputs that look augmented already: a first column of ones.

For the hidden checks of functions that augment their input themselves (``mistake_bound``, ``kesler_points``): a
function that skips the augmentation when the first column is already all ones answers right on every random case
and wrong here. A check loads it with ``course_module(__file__, "augmented_inputs")``.
"""

from __future__ import annotations

import numpy as np


def with_column_of_ones(X: np.ndarray) -> np.ndarray:
    """``X`` with a column of ones put in front: data separable before stay separable.

    Parameters
    ----------
    X : ndarray, shape (n, d)

    Returns
    -------
    ndarray of X's kind (float stays float, integers stay integers), shape (n, d + 1)
        Column 0 is all ones, columns 1..d are X.
    """
    points = np.asarray(X)
    return np.hstack([np.ones((points.shape[0], 1), dtype=points.dtype), points])
