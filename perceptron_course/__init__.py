"""Reference library of the perceptron course.

Modules, each importable on its own:

- ``geometry``: ``augment``, scores, signed distance, projection, margins;
- ``perceptron``: ``predict``, ``train`` (the online perceptron), mistake rules;
- ``theory``: ``radius``, ``max_margin``, ``mistake_bound``, the proof's quantities;
- ``datasets``: the lectures' worked examples, separable data, XOR, iris, digits;
- ``variants``: voted, averaged, pocket and kernel perceptrons;
- ``multiclass``: one-vs-rest and the multiclass perceptron;
- ``estimator``: ``PerceptronClassifier`` for scikit-learn;
- ``losses``: the perceptron criterion and the hinge loss, and SGD on them (the perceptron is SGD);
- ``svm``: the linear SVM (primal, soft margin, dual, support vectors, KKT) via scikit-learn;
- ``mlp``: a two-layer perceptron in plain NumPy that solves XOR;
- ``plotting``: figures (imports matplotlib; nothing else here does).
"""

from . import datasets, geometry, multiclass, perceptron, theory, variants
from .geometry import augment
from .perceptron import PerceptronRun, predict, train

__all__ = [
    "PerceptronRun",
    "augment",
    "datasets",
    "geometry",
    "multiclass",
    "perceptron",
    "predict",
    "theory",
    "train",
    "variants",
]
__version__ = "0.1.0"
