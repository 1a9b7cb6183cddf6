"""A corpus of student implementations of every graded function: common bugs, and correct ones written otherwise.

Written from the docstrings of ``source/`` (what each stub promises), not from the checks:
each bug breaks one promise a student can break by accident (an off-by-one cap, a strict
``< 0``, sign(0) = -1 or 0, an argument changed in place, ``None`` in an edge, the wrong dtype,
an early stop, a shuffle, the bias forgotten, lists refused, a tie broken the other way...).
``tests/course/test_bug_witnesses.py`` judges each of them over many secrets: every bug must be caught
on every draw, every correct one must pass on every draw.

A function of a part that calls another part (``choose_epoch_cap`` calls ``train_perceptron``)
uses the correct one below, so that only its own bug decides.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from perceptron_course import theory


def _float(X) -> np.ndarray:
    return np.asarray(X, dtype=float)


def _aug(X) -> np.ndarray:
    X = _float(X)
    return np.hstack([np.ones((X.shape[0], 1)), X])


# ----------------------------------------------------------------------------- 01_geometry

AUGMENT_BUGS = {
    "integer input stays integer": lambda X: np.hstack([np.ones((len(X), 1), dtype=np.asarray(X).dtype), np.asarray(X)]),
    "ones in the last column": lambda X: np.hstack([_float(X), np.ones((len(X), 1))]),
    "arrays only (X.shape on a list)": lambda X: np.hstack([np.ones((X.shape[0], 1)), X.astype(float)]),
    "float32": lambda X: _aug(X).astype(np.float32),
    "a Python list of rows without the ones": lambda X: _float(X).tolist(),
}
AUGMENT_CORRECT = {
    "np.insert": lambda X: np.insert(_float(X), 0, 1.0, axis=1),
    "a list of lists": lambda X: [[1.0, *row] for row in _float(X).tolist()],
    "np.c_": lambda X: np.c_[np.ones(len(_float(X))), _float(X)],
}


def _scores(w, b, X) -> np.ndarray:
    return _float(X) @ _float(w) + b


PREDICT_BUGS = {
    "sign(0) = -1 (strict > 0)": lambda w, b, X: np.where(_scores(w, b, X) > 0, 1, -1),
    "np.sign (sign(0) = 0)": lambda w, b, X: np.sign(_scores(w, b, X)).astype(int),
    "bools instead of labels": lambda w, b, X: _scores(w, b, X) >= 0,
    "the bias forgotten": lambda w, b, X: np.where(_float(X) @ _float(w) >= 0, 1, -1),
    "w·x - b": lambda w, b, X: np.where(_float(X) @ _float(w) - b >= 0, 1, -1),
    "arrays only (X @ w on lists)": lambda w, b, X: np.where(X @ w + b >= 0, 1, -1),
}
PREDICT_CORRECT = {
    "2 [s >= 0] - 1": lambda w, b, X: 2 * (_scores(w, b, X) >= 0).astype(int) - 1,
    "a list comprehension": lambda w, b, X: [1 if float(np.dot(w, x)) + b >= 0 else -1 for x in _float(X)],
    "np.sign patched at 0": lambda w, b, X: (lambda s: np.where(s == 0, 1, s))(np.sign(_scores(w, b, X))),
}

SIGNED_DISTANCE_BUGS = {
    "not divided by ||w||": lambda w, b, X: _scores(w, b, X),
    "divided by ||w||^2": lambda w, b, X: _scores(w, b, X) / np.dot(_float(w), _float(w)),
    "unsigned (absolute value)": lambda w, b, X: np.abs(_scores(w, b, X)) / np.linalg.norm(_float(w)),
    "the bias forgotten": lambda w, b, X: (_float(X) @ _float(w)) / np.linalg.norm(_float(w)),
    "divided by ||(w, b)||": lambda w, b, X: _scores(w, b, X) / np.linalg.norm(np.append(_float(w), b)),
    "float32": lambda w, b, X: (_scores(w, b, X) / np.linalg.norm(_float(w))).astype(np.float32),
}
SIGNED_DISTANCE_CORRECT = {
    "sqrt(w·w)": lambda w, b, X: (_scores(w, b, X) / np.sqrt(np.dot(w, w))).tolist(),
    "unit w first": lambda w, b, X: _float(X) @ (_float(w) / np.linalg.norm(_float(w))) + b / np.linalg.norm(_float(w)),
}


def _margins(w, b, X, y) -> np.ndarray:
    return np.asarray(y) * _scores(w, b, X) / np.linalg.norm(_float(w))


SET_MARGIN_BUGS = {
    "the smallest absolute margin": lambda w, b, X, y: float(np.min(np.abs(_margins(w, b, X, y)))),
    "not divided by ||w||": lambda w, b, X, y: float(np.min(np.asarray(y) * _scores(w, b, X))),
    "the labels forgotten": lambda w, b, X, y: float(np.min(_scores(w, b, X) / np.linalg.norm(_float(w)))),
    "the largest instead of the smallest": lambda w, b, X, y: float(np.max(_margins(w, b, X, y))),
    "the mean": lambda w, b, X, y: float(np.mean(_margins(w, b, X, y))),
    "every margin, not the smallest": lambda w, b, X, y: _margins(w, b, X, y),
}
SET_MARGIN_CORRECT = {
    "a NumPy scalar": lambda w, b, X, y: np.min(_margins(w, b, X, y)),
    "a loop": lambda w, b, X, y: min(float(label * (np.dot(w, x) + b)) for x, label in zip(_float(X), y)) / float(np.linalg.norm(w)),
}

# ----------------------------------------------------------------------------- 02_algorithm


def _step(w, b, x, y, *, mistake: Callable[[float], bool] = lambda margin: margin <= 0):
    w, x = _float(w), _float(x)
    if mistake(y * (w @ x + b)):
        return w + y * x, b + y, True
    return w.copy(), b, False


def _step_in_place(w, b, x, y):
    if y * (np.dot(w, x) + b) <= 0:
        w += y * x
        return w, b + y, True
    return w, b, False


PERCEPTRON_STEP_BUGS = {
    "strict < 0": lambda w, b, x, y: _step(w, b, x, y, mistake=lambda margin: margin < 0),
    "w changed in place (w += y x)": _step_in_place,
    "b never updated": lambda w, b, x, y: (lambda new: (new[0], b, new[2]))(_step(w, b, x, y)),
    "the sign rule (sign(0) = +1) instead of y (w·x + b) <= 0":
        lambda w, b, x, y: (lambda s: (_float(w) + y * _float(x), b + y, True) if (1 if s >= 0 else -1) != y
                            else (_float(w), b, False))(float(_float(w) @ _float(x) + b)),
    "mistake as 0/1": lambda w, b, x, y: (lambda new: (new[0], new[1], int(new[2])))(_step(w, b, x, y)),
    "updates with x only (w + x)": lambda w, b, x, y: (lambda new: (_float(w) + _float(x), b + y, True) if new[2] else new)(_step(w, b, x, y)),
}
PERCEPTRON_STEP_CORRECT = {
    "a list": lambda w, b, x, y: list(_step(w, b, x, y)),
    "np.bool_ and a NumPy b": lambda w, b, x, y: (lambda m: (_float(w) + m * y * _float(x), np.float64(b + m * y), np.bool_(m)))(
        bool(y * (np.dot(w, x) + b) <= 0)),
}


def _train(X, y, max_epochs, *, epochs=lambda cap: cap, bias=True, strict=False, count_last_only=False,
           converged_rule="clean epoch", order=None, stop=True):
    """The online perceptron with one knob per bug."""
    X, y = _float(X), np.asarray(y)
    if order is not None:
        X, y = X[order(len(X))], y[order(len(X))]
    w, b, n_mistakes, ran = np.zeros(X.shape[1]), 0.0, 0, 0
    converged = False
    for _ in range(epochs(max_epochs)):
        ran += 1
        mistakes = 0
        for x_i, y_i in zip(X, y):
            margin = y_i * (w @ x_i + (b if bias else 0.0))
            if margin < 0 if strict else margin <= 0:
                w = w + y_i * x_i
                if bias:
                    b += y_i
                mistakes += 1
        n_mistakes = mistakes if count_last_only else n_mistakes + mistakes
        converged = mistakes == 0
        if converged and stop:
            break
    if converged_rule == "stopped before the cap":
        converged = ran < max_epochs
    return w, float(b), n_mistakes, converged


TRAIN_PERCEPTRON_BUGS = {
    "one epoch too few": lambda X, y, max_epochs: _train(X, y, max_epochs, epochs=lambda c: c - 1),
    "one epoch too many": lambda X, y, max_epochs: _train(X, y, max_epochs, epochs=lambda c: c + 1),
    "converged only if it stopped before the cap": lambda X, y, max_epochs: _train(X, y, max_epochs, converged_rule="stopped before the cap"),
    "no bias": lambda X, y, max_epochs: _train(X, y, max_epochs, bias=False),
    "strict < 0": lambda X, y, max_epochs: _train(X, y, max_epochs, strict=True),
    "n_mistakes of the last epoch only": lambda X, y, max_epochs: _train(X, y, max_epochs, count_last_only=True),
    "rows shuffled": lambda X, y, max_epochs: _train(X, y, max_epochs, order=lambda n: np.random.default_rng(0).permutation(n)),
    "rows visited backwards": lambda X, y, max_epochs: _train(X, y, max_epochs, order=lambda n: np.arange(n)[::-1]),
    "arrays only (X.shape on a list)": lambda X, y, max_epochs: _train(X, y, max_epochs) if isinstance(X, np.ndarray) and X.shape else None,
}
TRAIN_PERCEPTRON_CORRECT = {
    "runs every epoch": lambda X, y, max_epochs: _train(X, y, max_epochs, stop=False),
    "augmented weights": lambda X, y, max_epochs: (lambda w: (w[1:], float(w[0]), *_train(_aug(X), y, max_epochs, bias=False)[2:]))(
        _train(_aug(X), y, max_epochs, bias=False)[0]),
}


def correct_train_perceptron(X, y, max_epochs):
    return _train(X, y, max_epochs)


def _dev_accuracy(X_train, y_train, X_dev, y_dev, cap, *, sign=lambda s: np.where(s >= 0, 1, -1), train=correct_train_perceptron):
    w, b, _, _ = train(X_train, y_train, cap)
    return float(np.mean(sign(_float(X_dev) @ w + b) == np.asarray(y_dev)))


def _choose(X_train, y_train, X_dev, y_dev, caps, *, order=sorted, better=lambda new, best: new > best, start=-1.0,
            sign=lambda s: np.where(s >= 0, 1, -1)):
    best_cap, best = None, start
    for cap in order(caps):
        accuracy = _dev_accuracy(X_train, y_train, X_dev, y_dev, cap, sign=sign)
        if better(accuracy, best):
            best_cap, best = cap, accuracy
    return best_cap


CHOOSE_EPOCH_CAP_BUGS = {
    "None when every cap scores 0 (best accuracy starts at 0)": lambda *args: _choose(*args, start=0.0),
    "the first best cap in the order given": lambda *args: _choose(*args, order=list),
    "the largest among ties": lambda *args: _choose(*args, better=lambda new, best: new >= best),
    "np.sign on the dev scores (sign(0) = 0)": lambda *args: _choose(*args, sign=np.sign),
    "sign(0) = -1 on the dev scores": lambda *args: _choose(*args, sign=lambda s: np.where(s > 0, 1, -1)),
    "accuracy on the training set": lambda X_train, y_train, X_dev, y_dev, caps: _choose(X_train, y_train, X_train, y_train, caps),
    "the position of the cap, not the cap": lambda X_train, y_train, X_dev, y_dev, caps: sorted(caps).index(
        _choose(X_train, y_train, X_dev, y_dev, caps)),
}
CHOOSE_EPOCH_CAP_CORRECT = {
    "max with a key": lambda X_train, y_train, X_dev, y_dev, caps: max(
        sorted(caps), key=lambda cap: (_dev_accuracy(X_train, y_train, X_dev, y_dev, cap), -cap)),
    "a NumPy integer": lambda X_train, y_train, X_dev, y_dev, caps: np.int64(sorted(caps)[int(np.argmax(
        [_dev_accuracy(X_train, y_train, X_dev, y_dev, cap) for cap in sorted(caps)]))]),
}

# ----------------------------------------------------------------------------- 03_worked_example


def _is_mistake(score, label, rule, *, margin=lambda m: m <= 0, sign=lambda s: 1 if s >= 0 else -1):
    return bool(margin(label * score)) if rule == "margin" else bool(sign(score) != label)


IS_MISTAKE_BUGS = {
    "strict < 0 under the margin rule": lambda s, y, r: _is_mistake(s, y, r, margin=lambda m: m < 0),
    "np.sign under the sign rule": lambda s, y, r: _is_mistake(s, y, r, sign=np.sign),
    "sign(0) = -1 under the sign rule": lambda s, y, r: _is_mistake(s, y, r, sign=lambda s: 1 if s > 0 else -1),
    "-0.0 taken as negative (signbit)": lambda s, y, r: _is_mistake(s, y, r, sign=lambda s: -1 if np.signbit(s) else 1),
    "the rule ignored (always margin)": lambda s, y, r: _is_mistake(s, y, "margin"),
    "0/1 instead of a bool": lambda s, y, r: int(_is_mistake(s, y, r)),
    "the rules swapped": lambda s, y, r: _is_mistake(s, y, "sign" if r == "margin" else "margin"),
}
IS_MISTAKE_CORRECT = {
    "np.bool_": lambda s, y, r: np.bool_(y * s <= 0) if r == "margin" else np.bool_((1 if s >= 0 else -1) != y),
    "one expression": lambda s, y, r: (y * s <= 0) if r == "margin" else (y == 1) == (s < 0),
}


def _trace(X, y, rule, max_epochs, *, copy=True, zero=True, epochs=lambda cap: cap, strict=False, every_visit=False,
           rule_used=None):
    X = _float(X)
    w = np.zeros(X.shape[1])
    history = [w.copy()] if zero else []
    rule = rule_used or rule
    for _ in range(epochs(max_epochs)):
        updated = False
        for x_i, y_i in zip(X, y):
            score = w @ x_i
            mistake = (y_i * score < 0 if strict else y_i * score <= 0) if rule == "margin" else (1 if score >= 0 else -1) != y_i
            if mistake:
                if copy:
                    w = w + y_i * x_i
                else:
                    w += y_i * x_i
                updated = True
            if mistake or every_visit:
                history.append(w.copy() if copy else w)
        if not updated:
            break
    return history


PERCEPTRON_TRACE_BUGS = {
    "the same array appended each time": lambda *args: _trace(*args, copy=False),
    "no zero vector first": lambda *args: _trace(*args, zero=False),
    "one epoch too few": lambda *args: _trace(*args, epochs=lambda c: c - 1),
    "one epoch too many": lambda *args: _trace(*args, epochs=lambda c: c + 1),
    "strict < 0 under the margin rule": lambda *args: _trace(*args, strict=True),
    "the rule ignored (always margin)": lambda *args: _trace(*args, rule_used="margin"),
    "the weights after every visit": lambda *args: _trace(*args, every_visit=True),
}
PERCEPTRON_TRACE_CORRECT = {
    "a list of lists": lambda *args: [w.tolist() for w in _trace(*args)],
    "a tuple, never stopping early": lambda X, y, rule, cap: tuple(_trace(X, y, rule, cap)),
}

# ----------------------------------------------------------------------------- 04_convergence

RADIUS_BUGS = {
    "about the centre": lambda X: float(np.max(np.linalg.norm(_float(X) - _float(X).mean(axis=0), axis=1))),
    "squared": lambda X: float(np.max(np.sum(_float(X) ** 2, axis=1))),
    "the largest coordinate": lambda X: float(np.max(np.abs(_float(X)))),
    "the mean norm": lambda X: float(np.mean(np.linalg.norm(_float(X), axis=1))),
    "the norm of the whole matrix": lambda X: float(np.linalg.norm(_float(X))),
}
RADIUS_CORRECT = {
    "a NumPy scalar": lambda X: np.max(np.sqrt(np.sum(_float(X) ** 2, axis=1))),
    "a generator": lambda X: max(float(np.hypot.reduce(row)) if len(row) else 0.0 for row in _float(X)),
}

PROOF_TERMS_BUGS = {
    "the norm, not squared": lambda H, u: (_float(H) @ _float(u), np.linalg.norm(_float(H), axis=1)),
    "row 0 skipped": lambda H, u: (_float(H)[1:] @ _float(u), np.sum(_float(H)[1:] ** 2, axis=1)),
    "absolute alignment": lambda H, u: (np.abs(_float(H) @ _float(u)), np.sum(_float(H) ** 2, axis=1)),
    "the two swapped": lambda H, u: (np.sum(_float(H) ** 2, axis=1), _float(H) @ _float(u)),
    "squared norm over the columns": lambda H, u: (_float(H) @ _float(u), np.sum(_float(H) ** 2, axis=0)),
}
PROOF_TERMS_CORRECT = {
    "einsum": lambda H, u: (np.einsum("ij,j->i", _float(H), _float(u)), np.einsum("ij,ij->i", _float(H), _float(H))),
    "lists": lambda H, u: ([float(np.dot(h, u)) for h in _float(H)], [float(np.dot(h, h)) for h in _float(H)]),
}


def _bound(X, y, *, augmented=True, centre=False, square=True):
    data = _aug(X) if augmented else _float(X)
    _, gamma = theory.max_margin(data, y)
    points = data - data.mean(axis=0) if centre else data
    ratio = np.max(np.linalg.norm(points, axis=1)) / gamma
    return float(ratio ** 2 if square else ratio)


MISTAKE_BOUND_BUGS = {
    "not augmented": lambda X, y: _bound(X, y, augmented=False) if theory.is_separable(X, y, bias=False) else 0.0,
    "R about the centre": lambda X, y: _bound(X, y, centre=True),
    "R / gamma, not squared": lambda X, y: _bound(X, y, square=False),
    "R of the raw points": lambda X, y: float((np.max(np.linalg.norm(_float(X), axis=1)) / theory.max_margin(_aug(X), y)[1]) ** 2),
}
MISTAKE_BOUND_CORRECT = {
    "np.column_stack": lambda X, y: float((lambda data: (np.max(np.sum(data ** 2, axis=1)) / theory.max_margin(data, y)[1] ** 2))(
        np.column_stack([np.ones(len(_float(X))), _float(X)]))),
}


def _squeeze(X, y, history, w_star, *, normalise=True, first=0, gamma_of=None, centre=False, absolute=False):
    X, H, w = _float(X), _float(history), _float(w_star)
    u = w / np.linalg.norm(w) if normalise else w
    margins = np.asarray(y) * (X @ u)
    gamma = np.min(np.abs(margins)) if absolute else np.min(margins)
    if gamma_of is not None:
        gamma = gamma_of(X, y)
    points = X - X.mean(axis=0) if centre else X
    j = np.arange(first, first + len(H))
    return np.column_stack([j * gamma, H @ u, np.sum(H ** 2, axis=1), j * np.max(np.sum(points ** 2, axis=1))])


PROOF_SQUEEZE_BUGS = {
    "w_star not divided by its norm": lambda *args: _squeeze(*args, normalise=False),
    "j counted from 1": lambda *args: _squeeze(*args, first=1),
    "gamma of the max-margin separator": lambda *args: _squeeze(*args, gamma_of=lambda X, y: theory.max_margin(X, y)[1]),
    "R about the centre": lambda *args: _squeeze(*args, centre=True),
}
PROOF_SQUEEZE_CORRECT = {
    "a list of rows": lambda *args: _squeeze(*args).tolist(),
}

# ----------------------------------------------------------------------------- 05_multiclass


def _ovr(X, y, max_epochs, *, classes=np.unique, strict=False, bias=True, epochs=lambda cap: cap):
    X, y = _float(X), np.asarray(y)
    labels = classes(y)
    W, b = np.zeros((len(labels), X.shape[1])), np.zeros(len(labels))
    for k, label in enumerate(labels):
        targets = np.where(y == label, 1, -1)
        for _ in range(epochs(max_epochs)):
            mistakes = 0
            for x_i, t in zip(X, targets):
                margin = t * (W[k] @ x_i + b[k])
                if margin < 0 if strict else margin <= 0:
                    W[k] += t * x_i
                    b[k] += t if bias else 0
                    mistakes += 1
            if not mistakes:
                break
    return W, b


def _in_order_of_appearance(y):
    return np.array(list(dict.fromkeys(np.asarray(y).tolist())))


OVR_TRAIN_BUGS = {
    "classes in order of appearance": lambda X, y, max_epochs: _ovr(X, y, max_epochs, classes=_in_order_of_appearance),
    "strict < 0": lambda X, y, max_epochs: _ovr(X, y, max_epochs, strict=True),
    "no bias": lambda X, y, max_epochs: _ovr(X, y, max_epochs, bias=False),
    "one epoch too few": lambda X, y, max_epochs: _ovr(X, y, max_epochs, epochs=lambda c: c - 1),
    "one epoch too many": lambda X, y, max_epochs: _ovr(X, y, max_epochs, epochs=lambda c: c + 1),
    "arrays only (y == label on a list)": lambda X, y, max_epochs: _ovr(X, y, max_epochs) if isinstance(y, np.ndarray) else None,
}


def _ovr_shared_epochs(X, y, max_epochs):
    X, y = _float(X), np.asarray(y)
    classes = np.unique(y)
    T = np.where(y[None, :] == classes[:, None], 1, -1)
    W, b = np.zeros((len(classes), X.shape[1])), np.zeros(len(classes))
    for _ in range(max_epochs):
        clean = True
        for k in range(len(classes)):
            for x_i, t in zip(X, T[k]):
                if t * (W[k] @ x_i + b[k]) <= 0:
                    W[k], b[k], clean = W[k] + t * x_i, b[k] + t, False
        if clean:
            break
    return W, b


OVR_TRAIN_CORRECT = {
    "every class in each epoch": _ovr_shared_epochs,
    "lists": lambda X, y, max_epochs: tuple(part.tolist() for part in _ovr(X, y, max_epochs)),
}


def _scores_k(W, b, X):
    return _float(X) @ _float(W).T + _float(b)


OVR_PREDICT_BUGS = {
    "the first class with a positive score": lambda W, b, classes, X: np.asarray(classes)[np.argmax(_scores_k(W, b, X) >= 0, axis=1)],
    "argmin": lambda W, b, classes, X: np.asarray(classes)[np.argmin(_scores_k(W, b, X), axis=1)],
    "ties to the last class": lambda W, b, classes, X: np.asarray(classes)[
        len(classes) - 1 - np.argmax(_scores_k(W, b, X)[:, ::-1], axis=1)],
    "the bias forgotten": lambda W, b, classes, X: np.asarray(classes)[np.argmax(_float(X) @ _float(W).T, axis=1)],
    "indices, not classes": lambda W, b, classes, X: np.argmax(_scores_k(W, b, X), axis=1),
    "classes sorted first": lambda W, b, classes, X: np.sort(np.asarray(classes))[np.argmax(_scores_k(W, b, X), axis=1)],
}
OVR_PREDICT_CORRECT = {
    "a list": lambda W, b, classes, X: [classes[int(k)] for k in np.argmax(_scores_k(W, b, X), axis=1)],
}


def _multiclass(X, y, max_epochs, *, rule="rival", bias=True, epochs=lambda cap: cap, rival_row=True):
    X = _float(X)
    classes, index = np.unique(y, return_inverse=True)
    W, b = np.zeros((len(classes), X.shape[1])), np.zeros(len(classes))
    for _ in range(epochs(max_epochs)):
        mistakes = 0
        for x_i, t in zip(X, index):
            scores = W @ x_i + b
            if rule == "rival":
                others = scores.copy()
                others[t] = -np.inf
                rival = int(np.argmax(others))
                wrong = scores[t] <= scores[rival]
            else:
                rival = int(np.argmax(scores))
                wrong = rival != t
            if wrong:
                W[t] += x_i
                b[t] += 1 if bias else 0
                if rival_row:
                    W[rival] -= x_i
                    b[rival] -= 1 if bias else 0
                mistakes += 1
        if not mistakes:
            break
    return W, b


MULTICLASS_TRAIN_BUGS = {
    "a mistake only when the argmax is another class (ties are not mistakes)": lambda X, y, max_epochs: _multiclass(X, y, max_epochs, rule="argmax"),
    "no bias": lambda X, y, max_epochs: _multiclass(X, y, max_epochs, bias=False),
    "one epoch too few": lambda X, y, max_epochs: _multiclass(X, y, max_epochs, epochs=lambda c: c - 1),
    "one epoch too many": lambda X, y, max_epochs: _multiclass(X, y, max_epochs, epochs=lambda c: c + 1),
    "the rival row never lowered": lambda X, y, max_epochs: _multiclass(X, y, max_epochs, rival_row=False),
}
MULTICLASS_TRAIN_CORRECT = {
    "never stopping early": lambda X, y, max_epochs: _multiclass(X, y, max_epochs),
}

# ----------------------------------------------------------------------------- 06_limitations

XOR_FEATURES_BUGS = {
    "the points unchanged": lambda X: _float(X),
    "standardised over the sample": lambda X: (lambda P: (P - P.mean(axis=0)) / (P.std(axis=0) + 1e-12))(
        np.column_stack([_float(X), _float(X)[:, 0] * _float(X)[:, 1]])),
    "the squares only": lambda X: _float(X) ** 2,
    "the sum only": lambda X: _float(X).sum(axis=1, keepdims=True),
}
XOR_FEATURES_CORRECT = {
    "the product alone": lambda X: (_float(X)[:, 0] * _float(X)[:, 1])[:, None],
    "degree-2 monomials": lambda X: (lambda P: np.column_stack([P, P ** 2, P[:, :1] * P[:, 1:]]))(_float(X)),
    "the sign of the product": lambda X: np.sign(_float(X)[:, :1] * _float(X)[:, 1:]),
}


def _kernel(K, y, max_epochs, *, strict=False, epochs=lambda cap: cap, signed=False):
    K, y = _float(K), np.asarray(y)
    alpha = np.zeros(len(y), dtype=int)
    for _ in range(epochs(max_epochs)):
        mistakes = 0
        for j in range(len(y)):
            coefficient = alpha if signed else alpha * y
            margin = y[j] * np.sum(coefficient * K[:, j])
            if margin < 0 if strict else margin <= 0:
                alpha[j] += y[j] if signed else 1
                mistakes += 1
        if not mistakes:
            break
    return alpha


KERNEL_PERCEPTRON_BUGS = {
    "strict < 0": lambda K, y, cap: _kernel(K, y, cap, strict=True),
    "one epoch too few": lambda K, y, cap: _kernel(K, y, cap, epochs=lambda c: c - 1),
    "one epoch too many": lambda K, y, cap: _kernel(K, y, cap, epochs=lambda c: c + 1),
    "signed alpha (alpha += y)": lambda K, y, cap: _kernel(K, y, cap, signed=True),
}
KERNEL_PERCEPTRON_CORRECT = {
    "floats, never stopping early": lambda K, y, cap: _kernel(K, y, cap, epochs=lambda c: c).astype(float),
    "K[j] @ (alpha y)": lambda K, y, cap: _kernel(_float(K).T, y, cap),
}


def _averaged(X, y, epochs, *, stop=False, when="after", strict=False, divide="visits"):
    X = _float(X)
    w, b, w_sum, b_sum, visits = np.zeros(X.shape[1]), 0.0, np.zeros(X.shape[1]), 0.0, 0
    for _ in range(epochs):
        mistakes = 0
        for x_i, y_i in zip(X, y):
            if when == "before":
                w_sum, b_sum = w_sum + w, b_sum + b
            margin = y_i * (w @ x_i + b)
            if margin < 0 if strict else margin <= 0:
                w, b, mistakes = w + y_i * x_i, b + y_i, mistakes + 1
                if when == "updates":
                    w_sum, b_sum, visits = w_sum + w, b_sum + b, visits + 1
            if when == "after":
                w_sum, b_sum = w_sum + w, b_sum + b
        if stop and not mistakes:
            break
    count = {"visits": epochs * len(X), "epochs": epochs, "updates": max(visits, 1)}[divide if when != "updates" else "updates"]
    return w_sum / count, float(b_sum / count)


AVERAGED_PERCEPTRON_BUGS = {
    "stops at convergence": lambda X, y, e: _averaged(X, y, e, stop=True),
    "summed before the update": lambda X, y, e: _averaged(X, y, e, when="before"),
    "averaged over the updates only": lambda X, y, e: _averaged(X, y, e, when="updates"),
    "divided by the epochs": lambda X, y, e: _averaged(X, y, e, divide="epochs"),
    "strict < 0": lambda X, y, e: _averaged(X, y, e, strict=True),
}
AVERAGED_PERCEPTRON_CORRECT = {
    "a stacked history": lambda X, y, e: (lambda rows: (rows[:, 1:].mean(axis=0), float(rows[:, 0].mean())))(
        np.array([row for row in _averaged_rows(X, y, e)])),
}


def _averaged_rows(X, y, epochs):
    X = _aug(X)
    w = np.zeros(X.shape[1])
    for _ in range(epochs):
        for x_i, y_i in zip(X, y):
            if y_i * (w @ x_i) <= 0:
                w = w + y_i * x_i
            yield w


def _hinge(X, y, learning_rate, lam, epochs, *, stop="", strict=False, shrink="always", after_shrink=False,
           perceptron_steps=False, regularise_b=False, decay=None):
    X = _float(X)
    w, b, n_steps = np.zeros(X.shape[1]), 0.0, 0
    factor = decay if decay is not None else 1 - learning_rate * lam
    for _ in range(epochs):
        mistakes = steps = 0
        for x_i, y_i in zip(X, y):
            z = y_i * (w @ x_i + b)
            if shrink == "always":
                w = factor * w
                if regularise_b:
                    b = factor * b
            if after_shrink:
                z = y_i * (w @ x_i + b)
            if z < 1 if strict else z <= 1:
                if shrink == "on steps":
                    w = factor * w
                w = w + learning_rate * y_i * x_i
                b = b + learning_rate * y_i
                n_steps += 1 if not perceptron_steps or z <= 0 else 0
                mistakes += z <= 0
                steps += 1
        if (stop == "no mistake" and not mistakes) or (stop == "no step" and not steps):
            break
    return w, float(b), n_steps


HINGE_SGD_BUGS = {
    "stops when an epoch makes no perceptron mistake": lambda *args: _hinge(*args, stop="no mistake"),
    "stops when an epoch takes no hinge step": lambda *args: _hinge(*args, stop="no step"),
    "strict z < 1": lambda *args: _hinge(*args, strict=True),
    "shrinks only on steps": lambda *args: _hinge(*args, shrink="on steps"),
    "z computed after the shrink": lambda *args: _hinge(*args, after_shrink=True),
    "n_steps counts perceptron mistakes (z <= 0)": lambda *args: _hinge(*args, perceptron_steps=True),
    "b regularised too": lambda *args: _hinge(*args, regularise_b=True),
    "shrinks by 1 - lam": lambda X, y, rate, lam, epochs: _hinge(X, y, rate, lam, epochs, decay=1 - lam),
}
HINGE_SGD_CORRECT = {
    "lists": lambda *args: (lambda w, b, n: (w.tolist(), np.float64(b), float(n)))(*_hinge(*args)),
}


def _mlp(X, W, c, v, d, *, activation=np.tanh, bias=True, labels=lambda s: np.where(s >= 0, 1, -1), dtype=float,
         transpose=False):
    hidden = activation(np.asarray(X, dtype=dtype) @ np.asarray(W, dtype=dtype).T + (np.asarray(c, dtype=dtype) if bias else 0))
    scores = hidden @ np.asarray(v, dtype=dtype) + dtype(d)
    return (hidden.T if transpose else hidden), scores, labels(scores)


MLP_FORWARD_BUGS = {
    "strict > 0 labels": lambda *args: _mlp(*args, labels=lambda s: np.where(s > 0, 1, -1)),
    "np.sign labels": lambda *args: _mlp(*args, labels=lambda s: np.sign(s).astype(int)),
    "hidden transposed": lambda *args: _mlp(*args, transpose=True),
    "a sigmoid": lambda *args: _mlp(*args, activation=lambda a: 1 / (1 + np.exp(-a))),
    "c forgotten": lambda *args: _mlp(*args, bias=False),
    "float32": lambda *args: _mlp(*args, dtype=np.float32),
}
MLP_FORWARD_CORRECT = {
    "a loop over points": lambda X, W, c, v, d: (lambda H: (H, H @ _float(v) + d, np.where(H @ _float(v) + d >= 0, 1, -1)))(
        np.array([np.tanh(_float(W) @ x + _float(c)) for x in _float(X)]).reshape(len(_float(X)), len(_float(c)))),
    "lists": lambda *args: tuple(part.tolist() for part in _mlp(*args)),
}

#: Every graded function: (its common bugs, correct implementations written otherwise).
CORPUS: dict[str, tuple[dict[str, Callable], dict[str, Callable]]] = {
    name.removesuffix("_BUGS").lower(): (value, globals()[name.removesuffix("_BUGS") + "_CORRECT"])
    for name, value in dict(globals()).items() if name.endswith("_BUGS")
}
