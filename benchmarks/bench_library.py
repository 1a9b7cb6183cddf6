"""Reference library speed, measured side by side in one run.

1. ``train`` against scikit-learn's Perceptron (same data, same epochs, same result).
2. One-vs-rest in a single pass against K separate ``train`` runs (identical weights).

Run:  .venv/bin/python benchmarks/bench_library.py [--quick]
Prints ratios; records nothing by itself (copy the figures into BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.linear_model import Perceptron

from perceptron_course.multiclass import train_one_vs_rest
from perceptron_course.perceptron import train


def best_time(function, repeats: int) -> tuple[float, object]:
    """Smallest wall time of ``repeats`` calls, and the last result."""
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return min(times), result


def noisy_binary(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian points labelled by a random hyperplane, 5 % of labels flipped (never converges)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X @ rng.normal(size=d) >= 0, 1, -1)
    flip = rng.random(n) < 0.05
    return X, np.where(flip, -y, y)


def bench_train_vs_sklearn(n: int, d: int, epochs: int, repeats: int) -> None:
    X, y = noisy_binary(n, d, seed=0)
    ours_time, run = best_time(lambda: train(X, y, max_epochs=epochs), repeats)
    sklearn_model = Perceptron(shuffle=False, eta0=1, alpha=0, tol=None, max_iter=epochs)
    theirs_time, fitted = best_time(lambda: sklearn_model.fit(X, y), repeats)
    identical = np.array_equal(run.w, fitted.coef_[0]) and run.b == fitted.intercept_[0]
    print(f"train vs sklearn Perceptron, {n} x {d}, {epochs} epochs, {run.n_mistakes} updates")
    print(f"  train:   {ours_time:8.3f} s")
    print(f"  sklearn: {theirs_time:8.3f} s   (Cython)")
    print(f"  ratio train / sklearn: {ours_time / theirs_time:6.1f}x   identical weights: {identical}")


def bench_one_vs_rest(n: int, d: int, n_classes: int, epochs: int, repeats: int) -> None:
    rng = np.random.default_rng(1)
    centres = rng.normal(scale=2.0, size=(n_classes, d))
    y = rng.integers(0, n_classes, size=n)
    X = centres[y] + rng.normal(size=(n, d))
    single_time, model = best_time(lambda: train_one_vs_rest(X, y, max_epochs=epochs), repeats)

    def separate_runs():
        return [train(X, np.where(y == k, 1, -1), max_epochs=epochs) for k in range(n_classes)]

    separate_time, runs = best_time(separate_runs, repeats)
    identical = all(np.array_equal(model.W[k], run.w) and model.b[k] == run.b for k, run in enumerate(runs))
    print(f"one-vs-rest, {n} x {d}, K = {n_classes}, {epochs} epochs")
    print(f"  single pass:     {single_time:8.3f} s")
    print(f"  {n_classes} separate runs: {separate_time:8.3f} s")
    print(f"  speed-up: {separate_time / single_time:6.1f}x   identical weights: {identical}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="10x smaller problems, one repeat")
    args = parser.parse_args()
    scale, repeats = (10, 1) if args.quick else (1, 3)
    bench_train_vs_sklearn(100_000 // scale, 20, 10, repeats)
    bench_one_vs_rest(20_000 // scale, 20, 10, 10, repeats)


if __name__ == "__main__":
    main()
