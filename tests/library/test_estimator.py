"""The scikit-learn estimator."""

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_estimator

from perceptron_course.datasets import iris, iris_binary
from perceptron_course.estimator import PerceptronClassifier
from perceptron_course.perceptron import train


# Checks that need what the course does not install (pandas, the array API) skip themselves.
NOT_APPLICABLE = {"check_array_api_input", "check_classifier_data_not_an_array"}


def test_passes_every_applicable_sklearn_estimator_check():
    results = check_estimator(PerceptronClassifier(max_epochs=20), on_skip=None, on_fail="raise")
    not_passed = {result["check_name"] for result in results if result["status"] != "passed"}
    assert not_passed <= NOT_APPLICABLE
    assert len(results) > 40


def test_binary_fit_equals_train_with_any_two_labels():
    X, y = iris_binary("setosa", "versicolor")
    names = np.where(y == 1, "setosa", "versicolor")  # classes_ sorted: "setosa" is classes_[0] -> -1
    model = PerceptronClassifier().fit(X, names)
    run = train(X, np.where(names == "versicolor", 1, -1))
    assert np.array_equal(model.coef_[0], run.w) and model.intercept_[0] == run.b
    assert model.score(X, names) == 1.0


def test_zero_score_predicts_the_positive_class():
    model = PerceptronClassifier().fit(np.array([[0.0], [1.0]]), np.array([0, 1]))
    model.coef_[:] = 0.0
    model.intercept_[:] = 0.0
    assert model.predict(np.array([[5.0]])).tolist() == [1]


def test_works_in_a_pipeline_cross_validation_and_grid_search():
    X, y = iris()
    pipeline = make_pipeline(StandardScaler(), PerceptronClassifier(max_epochs=30, shuffle=True, seed=0))
    scores = cross_val_score(pipeline, X, y, cv=5)
    assert scores.mean() > 0.8
    search = GridSearchCV(PerceptronClassifier(), {"max_epochs": [1, 5, 20]}, cv=3).fit(X, y)
    assert search.best_params_["max_epochs"] in (1, 5, 20)
    assert search.get_params()["estimator__rule"] == "margin"


def test_bad_rule_reaches_the_user():
    X, y = iris_binary()
    with pytest.raises(ValueError, match="rule must be one of"):
        PerceptronClassifier(rule="strict").fit(X, y)
