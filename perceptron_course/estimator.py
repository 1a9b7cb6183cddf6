"""A scikit-learn compatible estimator around the reference ``train``.

Two classes train one perceptron (``classes_[1]`` is ``+1``, as in scikit-learn);
more classes train one-vs-rest. The estimator works inside ``cross_val_score``,
``GridSearchCV`` and pipelines.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .multiclass import train_one_vs_rest
from .perceptron import train


class PerceptronClassifier(ClassifierMixin, BaseEstimator):
    """The course's perceptron with scikit-learn's ``fit`` / ``predict`` / ``score``.

    Parameters
    ----------
    bias : bool, default True
    rule : {"margin", "sign"}, default "margin"
    max_epochs : int, default 1000
    shuffle : bool, default False
    seed : int or None, default None
        All as in ``perceptron_course.perceptron.train``.

    Attributes
    ----------
    classes_ : ndarray, shape (K,)
    coef_ : ndarray, shape (1, d) for two classes, (K, d) otherwise
    intercept_ : ndarray, shape (1,) or (K,)
    n_iter_ : int
        Passes made (the largest over classes for one-vs-rest).
    converged_ : bool
    """

    def __init__(self, bias=True, rule="margin", max_epochs=1000, shuffle=False, seed=None):
        self.bias = bias
        self.rule = rule
        self.max_epochs = max_epochs
        self.shuffle = shuffle
        self.seed = seed

    def fit(self, X, y):
        """Train on ``X`` of shape (n, d) and labels ``y`` of shape (n,); returns ``self``."""
        X, y = validate_data(self, X, y)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        options = dict(bias=self.bias, rule=self.rule, max_epochs=self.max_epochs, shuffle=self.shuffle, seed=self.seed)
        if len(self.classes_) == 2:
            run = train(X, np.where(y == self.classes_[1], 1, -1), **options)
            self.coef_ = run.w.reshape(1, -1).copy()
            self.intercept_ = np.array([run.b])
            self.n_iter_, self.converged_ = run.epochs, run.converged
        elif len(self.classes_) > 2:
            model = train_one_vs_rest(X, y, **options)
            self.coef_, self.intercept_ = model.W.copy(), model.b.copy()
            self.n_iter_, self.converged_ = int(model.epochs.max()), bool(model.converged.all())
        else:
            raise ValueError(f"y must hold at least two classes; found one class: {self.classes_.tolist()}")
        return self

    def decision_function(self, X) -> np.ndarray:
        """Scores, shape (n,) for two classes (positive means ``classes_[1]``), else (n, K)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        scores = X @ self.coef_.T + self.intercept_
        return scores.ravel() if len(self.classes_) == 2 else scores

    def predict(self, X) -> np.ndarray:
        """Predicted labels, shape (n,); a score of exactly 0 predicts ``classes_[1]``."""
        scores = self.decision_function(X)
        if len(self.classes_) == 2:
            return self.classes_[(scores >= 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]
