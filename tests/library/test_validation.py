"""Every public entry point rejects bad input with a clear ValueError."""

import numpy as np
import pytest

from perceptron_course.datasets import linearly_separable, xor
from perceptron_course.geometry import augment
from perceptron_course.multiclass import train_multiclass, train_one_vs_rest
from perceptron_course.perceptron import predict, train
from perceptron_course.theory import max_margin, mistake_bound, radius
from perceptron_course.variants import train_kernel, train_pocket, train_voted

X_OK, Y_OK = xor()

BINARY_TRAINERS = [train, train_kernel, train_pocket, train_voted]


@pytest.mark.parametrize(
    ("X", "message"),
    [
        (np.ones(4), "2-D array"),
        (np.ones((0, 2)), "empty"),
        (np.ones((4, 0)), "no features"),
        (np.array([[1.0, np.nan]] * 4), "NaN or inf"),
        (np.array([[1.0, np.inf]] * 4), "NaN or inf"),
        ([["a", "b"]] * 4, "numeric"),
    ],
)
@pytest.mark.parametrize("function", BINARY_TRAINERS + [lambda X, y: max_margin(X, y)])
def test_bad_points(function, X, message):
    with pytest.raises(ValueError, match=message):
        function(X, Y_OK)


@pytest.mark.parametrize(
    ("y", "message"),
    [
        (np.array([0, 1, 0, 1]), r"labels must be -1 or \+1; found \[0, 1\]"),
        (np.array([1, 2, 1, 2]), r"found \[1, 2\]"),
        (np.array([1, -1, 1]), "4 points but y has 3 labels"),
        (np.ones((4, 1)), "1-D"),
    ],
)
@pytest.mark.parametrize("function", BINARY_TRAINERS + [max_margin, mistake_bound])
def test_bad_binary_labels(function, y, message):
    with pytest.raises(ValueError, match=message):
        function(X_OK, y)


@pytest.mark.parametrize("max_epochs", [0, -3, 2.5, True, "10"])
def test_bad_epoch_cap(max_epochs):
    with pytest.raises(ValueError, match="max_epochs"):
        train(X_OK, Y_OK, max_epochs=max_epochs)


def test_bad_rule_names_the_choices():
    with pytest.raises(ValueError, match=r"rule must be one of \('margin', 'sign'\); got 'strict'"):
        train(X_OK, Y_OK, rule="strict")


def test_bad_multiclass_labels():
    for trainer in (train_one_vs_rest, train_multiclass):
        with pytest.raises(ValueError, match="at least two classes"):
            trainer(X_OK, np.zeros(4))


def test_predict_checks_the_weight_length():
    with pytest.raises(ValueError, match="length 2"):
        predict(np.ones(3), 0.0, X_OK)


def test_other_entry_points():
    with pytest.raises(ValueError, match="2-D"):
        augment([1, 2, 3])
    with pytest.raises(ValueError, match="empty"):
        radius(np.ones((0, 3)))
    with pytest.raises(ValueError, match="margin"):
        linearly_separable(10, margin=0.7)
    with pytest.raises(ValueError, match="n_points"):
        linearly_separable(0)
