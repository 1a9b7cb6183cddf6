"""Geometry: augmentation, signed distance, projection, margins."""

import numpy as np
import pytest

from perceptron_course.geometry import augment, point_margins, project, scores, set_margin, signed_distance


def test_augment_prepends_ones_and_copies():
    X = np.array([[2, 3], [4, 5]])
    result = augment(X)
    assert result.tolist() == [[1, 2, 3], [1, 4, 5]]
    assert result.dtype == float
    result[0, 1] = 99
    assert X[0, 0] == 2


def test_signed_distance_by_projection_onto_the_normal():
    w, b = np.array([3.0, 4.0]), -5.0
    x = np.array([[3.0, 4.0], [0.0, 0.0]])
    # (w·x + b)/||w||: (9 + 16 - 5)/5 = 4 and -5/5 = -1
    assert signed_distance(w, b, x).tolist() == [4.0, -1.0]
    # Same via projection: a point on the plane is p0 = -b w/||w||^2; distance = ||proj_w(x - p0)|| with sign.
    p0 = -b * w / (w @ w)
    along = project(x[0] - p0, w)
    assert np.linalg.norm(along) == pytest.approx(4.0)


def test_margins_of_points_and_of_a_set():
    w, b = np.array([1.0, 0.0]), 0.0
    X = np.array([[2.0, 0.0], [-1.0, 5.0], [0.5, 1.0]])
    y = np.array([1, -1, -1])
    assert point_margins(w, b, X, y).tolist() == [2.0, 1.0, -0.5]
    assert set_margin(w, b, X, y) == -0.5
    assert scores(w, b, X).tolist() == [2.0, -1.0, 0.5]


def test_zero_normal_is_rejected():
    with pytest.raises(ValueError, match="zero vector"):
        signed_distance(np.zeros(2), 1.0, np.ones((1, 2)))
