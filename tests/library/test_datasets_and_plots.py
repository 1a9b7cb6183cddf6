"""Data sets, plotting helpers, and a light import."""

import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from perceptron_course import datasets, plotting  # noqa: E402
from perceptron_course.perceptron import train  # noqa: E402
from perceptron_course.theory import is_separable  # noqa: E402


def test_import_does_not_load_matplotlib_sklearn_or_scipy_optimize():
    # every grading kernel imports the library: it must stay light
    code = ("import sys, course_grader.trusted.judging.checks; "
            "print('matplotlib' in sys.modules, 'sklearn' in sys.modules, 'scipy.optimize' in sys.modules)")
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.split() == ["False", "False", "False"]


@pytest.mark.parametrize("seed", range(5))
def test_generated_data_have_the_requested_margin(seed):
    X, y = datasets.linearly_separable(200, 3, margin=0.15, bias=False, seed=seed)
    assert X.shape == (200, 3) and set(np.unique(y)) <= {-1, 1}
    from perceptron_course.theory import max_margin

    assert max_margin(X, y)[1] >= 0.15 - 1e-9
    again = datasets.linearly_separable(200, 3, margin=0.15, bias=False, seed=seed)
    assert np.array_equal(X, again[0])


def test_xor_and_iris_separability():
    assert not is_separable(*datasets.xor())
    assert is_separable(*datasets.iris_binary("setosa", "versicolor"))
    assert not is_separable(*datasets.iris_binary("versicolor", "virginica"))
    X, y = datasets.xor(3, noise=0.1, seed=1)
    assert X.shape == (12, 2) and np.array_equal(np.sign(X[:, 0] * X[:, 1]), -y)


def test_iris_is_scikit_learns_to_the_bit_and_loads_without_importing_it():
    from sklearn.datasets import load_iris

    X, y = datasets.iris()
    reference = load_iris()
    assert X.dtype == np.float64 and np.array_equal(X, reference.data)
    assert y.dtype == np.int64 and np.array_equal(y, reference.target)
    code = "import sys; from perceptron_course import datasets; datasets.iris_binary(); print('sklearn' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split() == ["False"]


def test_iris_binary_rejects_unknown_classes():
    with pytest.raises(ValueError, match="unknown iris class"):
        datasets.iris_binary("rose")


def test_plot_helpers_take_and_return_axes_with_opaque_figures(caplog):
    X, y = datasets.linearly_separable(30, 2, margin=0.1, seed=0)
    run = train(X, y)
    fig, axes = plt.subplots(1, 3)
    assert plotting.plot_decision_boundary(run.w, run.b, X, y, ax=axes[0]) is axes[0]
    assert plotting.plot_update(run, X, y, 1, ax=axes[1]) is axes[1]
    assert plotting.plot_decision_regions(lambda P: P[:, 0] * P[:, 1], X, y, ax=axes[2]) is axes[2]
    new_ax = plotting.plot_mistakes_vs_bound([3, 10], [5, 40])
    assert new_ax.figure.get_facecolor()[3] == 1.0
    grid = plotting.plot_update_grid(run, X, y, max_panels=4)
    assert sum(ax.get_visible() for ax in grid.axes) == min(4, run.n_mistakes + 1)
    plt.close("all")
    # matplotlib reports conflicts (e.g. fixed limits vs aspect) through logging, i.e. on stderr
    assert [r.getMessage() for r in caplog.records if r.levelname in ("WARNING", "ERROR")] == []


def test_animation_renders_to_html():
    X, y = datasets.six_point_example()
    run = train(X, y, bias=False, rule="sign")
    animation = plotting.animate_updates(run, X, y)
    html = animation.to_jshtml()
    assert "<img" in html or "frames" in html
    assert html.count("data:image/png;base64") == run.n_mistakes + 1
