"""Cy starts from working code but makes thirteen typical mistakes, one to three per assignment.

Each bug costs exactly the test cell of the function it sits in (see tests/grader/test_pipeline.py).
"""

BASE = "solutions"

CELLS = {
    "01_geometry": {
        # np.sign(0) is 0, not +1.
        "predict": '''def predict(w, b, X):
    return np.sign(np.asarray(X, dtype=float) @ np.asarray(w, dtype=float) + b).astype(int)''',
    },
    "02_algorithm": {
        # Updates on every point, correct or not.
        "perceptron_step": '''def perceptron_step(w, b, x, y):
    w, x = np.asarray(w, dtype=float), np.asarray(x, dtype=float)
    return w + y * x, b + y, bool(y * (w @ x + b) <= 0)''',
        # Forgets the bias: b is never learnt.
        "train_perceptron": '''def train_perceptron(X, y, max_epochs):
    X = np.asarray(X, dtype=float)
    w, n_mistakes = np.zeros(X.shape[1]), 0
    for _ in range(max_epochs):
        mistakes = 0
        for x_i, y_i in zip(X, y):
            if y_i * (w @ x_i) <= 0:
                w = w + y_i * x_i
                mistakes += 1
        n_mistakes += mistakes
        if mistakes == 0:
            return w, 0.0, n_mistakes, True
    return w, 0.0, n_mistakes, False''',
    },
    "03_worked_example": {
        # A strict < 0: a score of exactly 0 is never a mistake under the margin rule.
        "is_mistake": '''def is_mistake(score, label, rule):
    if rule == "margin":
        return bool(label * score < 0)
    return (1 if score >= 0 else -1) != label''',
        # Stores the same array again and again (views), then updates it in place.
        "perceptron_trace": '''def perceptron_trace(X, y, rule, max_epochs):
    X = np.asarray(X, dtype=float)
    w = np.zeros(X.shape[1])
    history = [w]
    for _ in range(max_epochs):
        updated = False
        for x_i, y_i in zip(X, y):
            score = w @ x_i
            wrong = y_i * score <= 0 if rule == "margin" else (1 if score >= 0 else -1) != y_i
            if wrong:
                w += y_i * x_i
                history.append(w)
                updated = True
        if not updated:
            break
    return history''',
    },
    "04_convergence": {
        # R and gamma from the raw data instead of the augmented data (1, x).
        "mistake_bound": '''def mistake_bound(X, y):
    X = np.asarray(X, dtype=float)
    centred = X - X.mean(axis=0)
    _, gamma = max_margin(centred, y)
    return (radius(centred) / gamma) ** 2''',
        # Takes w_star as it comes: forgets that the proof's w* has unit length.
        "proof_squeeze": '''def proof_squeeze(X, y, history, w_star):
    X, w_star = np.asarray(X, dtype=float), np.asarray(w_star, dtype=float)
    gamma = np.min(np.asarray(y) * (X @ w_star))
    alignment, squared_norm = proof_terms(np.asarray(history, dtype=float), w_star)
    updates = np.arange(len(alignment))
    return np.column_stack([updates * gamma, alignment, squared_norm, updates * radius(X) ** 2])''',
    },
    "05_multiclass": {
        # Labels as 0/1 instead of -1/+1: the "rest" never pushes the weights away.
        "ovr_train": '''def ovr_train(X, y, max_epochs):
    X = np.asarray(X, dtype=float)
    classes = np.unique(y)
    W, b = np.zeros((len(classes), X.shape[1])), np.zeros(len(classes))
    for k, label in enumerate(classes):
        targets = (np.asarray(y) == label).astype(int)
        for _ in range(max_epochs):
            mistakes = 0
            for x_i, t_i in zip(X, targets):
                if t_i * (W[k] @ x_i + b[k]) <= 0:
                    W[k] += t_i * x_i
                    b[k] += t_i
                    mistakes += 1
            if mistakes == 0:
                break
    return W, b''',
        # Thresholds each score at 0 instead of taking the argmax of the raw scores.
        "ovr_predict": '''def ovr_predict(W, b, classes, X):
    scores = np.asarray(X, dtype=float) @ np.asarray(W, dtype=float).T + b
    return np.asarray(classes)[np.argmax(scores > 0, axis=1)]''',
        # Blocks in the order the labels first appear, not in the order of np.unique(y).
        "kesler_points": '''def kesler_points(X, y):
    X = np.asarray(X, dtype=float)
    classes = list(dict.fromkeys(np.asarray(y).tolist()))
    augmented = np.hstack([np.ones((X.shape[0], 1)), X])
    width, rows = augmented.shape[1], []
    for x_i, label in zip(augmented, np.asarray(y).tolist()):
        t = classes.index(label)
        for r in range(len(classes)):
            if r != t:
                z = np.zeros(len(classes) * width)
                z[t * width:(t + 1) * width] = x_i
                z[r * width:(r + 1) * width] = -x_i
                rows.append(z)
    return np.array(rows)''',
    },
    "06_limitations": {
        # Adds to alpha on every visit, not only on mistakes.
        "kernel_perceptron": '''def kernel_perceptron(K, y, max_epochs):
    K, y = np.asarray(K, dtype=float), np.asarray(y)
    alpha = np.zeros(len(y), dtype=int)
    for _ in range(max_epochs):
        mistakes = 0
        for j in range(len(y)):
            wrong = y[j] * np.sum(alpha * y * K[:, j]) <= 0
            alpha[j] += 1
            mistakes += wrong
        if mistakes == 0:
            break
    return alpha''',
        # A strict < 1: no step at the kink z = 1.
        "hinge_sgd": '''def hinge_sgd(X, y, learning_rate, lam, epochs):
    X = np.asarray(X, dtype=float)
    w, b, n_steps = np.zeros(X.shape[1]), 0.0, 0
    for _ in range(epochs):
        for x_i, y_i in zip(X, y):
            z = y_i * (w @ x_i + b)
            w = (1 - learning_rate * lam) * w
            if z < 1:
                w = w + learning_rate * y_i * x_i
                b = b + learning_rate * y_i
                n_steps += 1
    return w, float(b), n_steps''',
        # np.sign(0) is 0, not +1.
        "mlp_forward": '''def mlp_forward(X, W, c, v, d):
    hidden = np.tanh(np.asarray(X, dtype=float) @ np.asarray(W, dtype=float).T + c)
    scores = hidden @ np.asarray(v, dtype=float) + d
    return hidden, scores, np.sign(scores).astype(int)''',
    },
}

# What Cy should get: every autograded cell's points except these (tests/conftest.py, expected_example_grades).
LOSES = {
    "01_geometry": ["test_predict"],  # np.sign(0) == 0
    # updates correct points; no bias (so its choose_epoch_cap, the source's, trains without a bias too)
    "02_algorithm": ["test_perceptron_step", "test_train_perceptron", "test_choose_epoch_cap"],
    "03_worked_example": ["test_is_mistake", "test_perceptron_trace"],  # strict < 0; history of views
    "04_convergence": ["test_mistake_bound", "test_proof_squeeze"],  # bound from raw, centred data; w_star not made unit
    "05_multiclass": ["test_ovr_train", "test_ovr_predict", "test_kesler_points"],  # 0/1 labels; thresholding; blocks unsorted
    # alpha grows on correct points; no hinge step at z = 1 exactly; np.sign(0) == 0 in the forward pass
    "06_limitations": ["test_kernel_perceptron", "test_hinge_sgd", "test_mlp_forward"],
}
