"""Data sets of the course: the lectures' worked examples, synthetic data, real data.

Real data come from scikit-learn, which ships them: nothing is downloaded.
"""

from __future__ import annotations

import numpy as np

from ._validation import check_positive_int

IRIS_CLASSES = ("setosa", "versicolor", "virginica")


def two_point_example() -> tuple[np.ndarray, np.ndarray]:
    """The lecture's 2-point example, already augmented, in the lecture's order.

    Returns
    -------
    X : ndarray, shape (2, 3)
        ``x_o = (1, 1, 2)`` then ``x_x = (1, 2, 1)``.
    y : ndarray of int, shape (2,)
        ``(+1, -1)``.
    """
    return np.array([[1.0, 1.0, 2.0], [1.0, 2.0, 1.0]]), np.array([1, -1])


def six_point_example() -> tuple[np.ndarray, np.ndarray]:
    """The lecture's 6-point example (used without bias), in the lecture's order.

    Returns
    -------
    X : ndarray, shape (6, 2)
    y : ndarray of int, shape (6,)
    """
    X = np.array([[-1, 2], [1, 0], [1, 1], [-1, 0], [-1, -2], [1, -1]], dtype=float)
    return X, np.array([-1, 1, 1, -1, -1, 1])


def linearly_separable(
    n_points: int = 50,
    n_features: int = 2,
    *,
    margin: float = 0.1,
    bias: bool = True,
    seed: int | np.random.Generator | None = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Points in ``[-1, 1]^d`` labelled by a random hyperplane, none closer than ``margin``.

    A unit normal ``u`` and (with ``bias``) an offset ``c`` in ``[-0.3, 0.3]`` are
    drawn; points with ``|u·x + c| < margin`` are rejected and redrawn.

    Parameters
    ----------
    n_points : int >= 1
    n_features : int >= 1
    margin : float >= 0
        Every point's distance to the true separator is at least this.
    bias : bool
        Whether the true separator may miss the origin.
    seed : int, numpy.random.Generator or None

    Returns
    -------
    X : ndarray, shape (n_points, n_features)
    y : ndarray of int, shape (n_points,), -1/+1
    """
    check_positive_int(n_points, "n_points")
    check_positive_int(n_features, "n_features")
    if not 0 <= margin < 0.5:
        raise ValueError(f"margin must be in [0, 0.5); got {margin}")
    rng = np.random.default_rng(seed)
    normal = rng.normal(size=n_features)
    normal /= np.linalg.norm(normal)
    offset = rng.uniform(-0.3, 0.3) if bias else 0.0
    kept: list[np.ndarray] = []
    while sum(len(batch) for batch in kept) < n_points:
        candidates = rng.uniform(-1, 1, size=(2 * n_points, n_features))
        distance = candidates @ normal + offset
        kept.append(candidates[np.abs(distance) >= max(margin, 1e-9)])
    X = np.vstack(kept)[:n_points]
    y = np.where(X @ normal + offset >= 0, 1, -1)
    return X, y


def xor(n_per_corner: int = 1, *, noise: float = 0.0, seed: int | None = 0) -> tuple[np.ndarray, np.ndarray]:
    """The XOR problem: corners ``(±1, ±1)`` labelled ``x1 * x2 < 0 -> +1``.

    Parameters
    ----------
    n_per_corner : int >= 1
        Copies of each corner; with ``noise > 0`` they scatter around it.
    noise : float >= 0
        Standard deviation of Gaussian jitter.
    seed : int or None

    Returns
    -------
    X : ndarray, shape (4 * n_per_corner, 2)
    y : ndarray of int, shape (4 * n_per_corner,)
        ``+1`` where the corner's coordinates have opposite signs.
    """
    check_positive_int(n_per_corner, "n_per_corner")
    corners = np.array([[1.0, 1.0], [-1.0, -1.0], [1.0, -1.0], [-1.0, 1.0]])
    labels = np.array([-1, -1, 1, 1])
    X = np.repeat(corners, n_per_corner, axis=0)
    if noise > 0:
        X = X + np.random.default_rng(seed).normal(scale=noise, size=X.shape)
    return X, np.repeat(labels, n_per_corner)


def iris_binary(
    positive: str = "setosa",
    negative: str = "versicolor",
    *,
    features: tuple[int, ...] = (0, 1, 2, 3),
) -> tuple[np.ndarray, np.ndarray]:
    """Two iris species as a binary problem, ``positive -> +1``, ``negative -> -1``.

    setosa vs versicolor is linearly separable; versicolor vs virginica is not.

    Returns
    -------
    X : ndarray, shape (100, len(features))
    y : ndarray of int, shape (100,)
    """
    for name in (positive, negative):
        if name not in IRIS_CLASSES:
            raise ValueError(f"unknown iris class {name!r}; choose from {IRIS_CLASSES}")
    if positive == negative:
        raise ValueError("positive and negative must be two different iris classes")
    data, target = iris()
    pos, neg = IRIS_CLASSES.index(positive), IRIS_CLASSES.index(negative)
    keep = (target == pos) | (target == neg)
    X = data[keep][:, list(features)]
    return X, np.where(target[keep] == pos, 1, -1)


def iris() -> tuple[np.ndarray, np.ndarray]:
    """All of iris: ``X`` of shape (150, 4) and class indices 0, 1, 2 (see ``IRIS_CLASSES``)."""
    records = np.array([record.split(",") for record in _IRIS_RECORDS.split()], dtype=float)
    return records[:, :4], records[:, 4].astype(np.int64)


def digits() -> tuple[np.ndarray, np.ndarray]:
    """The 8x8 handwritten digits: ``X`` of shape (1797, 64), pixel values 0..16, labels 0..9."""
    from sklearn.datasets import load_digits

    data = load_digits()
    return data.data.astype(float), np.asarray(data.target)


#: R. A. Fisher's iris measurements (1936; as the UCI repository and scikit-learn's ``load_iris`` give them): each
#: record is sepal length, sepal width, petal length, petal width (cm) and the class index. Written here so that
#: loading them imports nothing: scikit-learn's datasets module alone takes most of a second to import.
_IRIS_RECORDS = """
5.1,3.5,1.4,0.2,0 4.9,3,1.4,0.2,0 4.7,3.2,1.3,0.2,0 4.6,3.1,1.5,0.2,0 5,3.6,1.4,0.2,0 5.4,3.9,1.7,0.4,0
4.6,3.4,1.4,0.3,0 5,3.4,1.5,0.2,0 4.4,2.9,1.4,0.2,0 4.9,3.1,1.5,0.1,0 5.4,3.7,1.5,0.2,0 4.8,3.4,1.6,0.2,0
4.8,3,1.4,0.1,0 4.3,3,1.1,0.1,0 5.8,4,1.2,0.2,0 5.7,4.4,1.5,0.4,0 5.4,3.9,1.3,0.4,0 5.1,3.5,1.4,0.3,0
5.7,3.8,1.7,0.3,0 5.1,3.8,1.5,0.3,0 5.4,3.4,1.7,0.2,0 5.1,3.7,1.5,0.4,0 4.6,3.6,1,0.2,0 5.1,3.3,1.7,0.5,0
4.8,3.4,1.9,0.2,0 5,3,1.6,0.2,0 5,3.4,1.6,0.4,0 5.2,3.5,1.5,0.2,0 5.2,3.4,1.4,0.2,0 4.7,3.2,1.6,0.2,0
4.8,3.1,1.6,0.2,0 5.4,3.4,1.5,0.4,0 5.2,4.1,1.5,0.1,0 5.5,4.2,1.4,0.2,0 4.9,3.1,1.5,0.2,0 5,3.2,1.2,0.2,0
5.5,3.5,1.3,0.2,0 4.9,3.6,1.4,0.1,0 4.4,3,1.3,0.2,0 5.1,3.4,1.5,0.2,0 5,3.5,1.3,0.3,0 4.5,2.3,1.3,0.3,0
4.4,3.2,1.3,0.2,0 5,3.5,1.6,0.6,0 5.1,3.8,1.9,0.4,0 4.8,3,1.4,0.3,0 5.1,3.8,1.6,0.2,0 4.6,3.2,1.4,0.2,0
5.3,3.7,1.5,0.2,0 5,3.3,1.4,0.2,0 7,3.2,4.7,1.4,1 6.4,3.2,4.5,1.5,1 6.9,3.1,4.9,1.5,1 5.5,2.3,4,1.3,1
6.5,2.8,4.6,1.5,1 5.7,2.8,4.5,1.3,1 6.3,3.3,4.7,1.6,1 4.9,2.4,3.3,1,1 6.6,2.9,4.6,1.3,1 5.2,2.7,3.9,1.4,1
5,2,3.5,1,1 5.9,3,4.2,1.5,1 6,2.2,4,1,1 6.1,2.9,4.7,1.4,1 5.6,2.9,3.6,1.3,1 6.7,3.1,4.4,1.4,1
5.6,3,4.5,1.5,1 5.8,2.7,4.1,1,1 6.2,2.2,4.5,1.5,1 5.6,2.5,3.9,1.1,1 5.9,3.2,4.8,1.8,1 6.1,2.8,4,1.3,1
6.3,2.5,4.9,1.5,1 6.1,2.8,4.7,1.2,1 6.4,2.9,4.3,1.3,1 6.6,3,4.4,1.4,1 6.8,2.8,4.8,1.4,1 6.7,3,5,1.7,1
6,2.9,4.5,1.5,1 5.7,2.6,3.5,1,1 5.5,2.4,3.8,1.1,1 5.5,2.4,3.7,1,1 5.8,2.7,3.9,1.2,1 6,2.7,5.1,1.6,1
5.4,3,4.5,1.5,1 6,3.4,4.5,1.6,1 6.7,3.1,4.7,1.5,1 6.3,2.3,4.4,1.3,1 5.6,3,4.1,1.3,1 5.5,2.5,4,1.3,1
5.5,2.6,4.4,1.2,1 6.1,3,4.6,1.4,1 5.8,2.6,4,1.2,1 5,2.3,3.3,1,1 5.6,2.7,4.2,1.3,1 5.7,3,4.2,1.2,1
5.7,2.9,4.2,1.3,1 6.2,2.9,4.3,1.3,1 5.1,2.5,3,1.1,1 5.7,2.8,4.1,1.3,1 6.3,3.3,6,2.5,2 5.8,2.7,5.1,1.9,2
7.1,3,5.9,2.1,2 6.3,2.9,5.6,1.8,2 6.5,3,5.8,2.2,2 7.6,3,6.6,2.1,2 4.9,2.5,4.5,1.7,2 7.3,2.9,6.3,1.8,2
6.7,2.5,5.8,1.8,2 7.2,3.6,6.1,2.5,2 6.5,3.2,5.1,2,2 6.4,2.7,5.3,1.9,2 6.8,3,5.5,2.1,2 5.7,2.5,5,2,2
5.8,2.8,5.1,2.4,2 6.4,3.2,5.3,2.3,2 6.5,3,5.5,1.8,2 7.7,3.8,6.7,2.2,2 7.7,2.6,6.9,2.3,2 6,2.2,5,1.5,2
6.9,3.2,5.7,2.3,2 5.6,2.8,4.9,2,2 7.7,2.8,6.7,2,2 6.3,2.7,4.9,1.8,2 6.7,3.3,5.7,2.1,2 7.2,3.2,6,1.8,2
6.2,2.8,4.8,1.8,2 6.1,3,4.9,1.8,2 6.4,2.8,5.6,2.1,2 7.2,3,5.8,1.6,2 7.4,2.8,6.1,1.9,2 7.9,3.8,6.4,2,2
6.4,2.8,5.6,2.2,2 6.3,2.8,5.1,1.5,2 6.1,2.6,5.6,1.4,2 7.7,3,6.1,2.3,2 6.3,3.4,5.6,2.4,2 6.4,3.1,5.5,1.8,2
6,3,4.8,1.8,2 6.9,3.1,5.4,2.1,2 6.7,3.1,5.6,2.4,2 6.9,3.1,5.1,2.3,2 5.8,2.7,5.1,1.9,2 6.8,3.2,5.9,2.3,2
6.7,3.3,5.7,2.5,2 6.7,3,5.2,2.3,2 6.3,2.5,5,1.9,2 6.5,3,5.2,2,2 6.2,3.4,5.4,2.3,2 5.9,3,5.1,1.8,2
"""
