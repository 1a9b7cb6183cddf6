"""Ben's solutions are correct but written his own way: vectorised, other loops, other names."""

BASE = "release"

CELLS = {
    "01_geometry": {
        "augment": '''def augment(X):
    points = np.array(X, dtype=np.float64)
    result = np.ones((len(points), points.shape[1] + 1))
    result[:, 1:] = points
    return result''',
        "predict": '''def predict(w, b, X):
    raw = np.einsum("ij,j->i", np.asarray(X, float), np.asarray(w, float)) + b
    labels = np.ones(len(raw), dtype=int)
    labels[raw < 0] = -1
    return labels''',
        "signed_distance": '''def signed_distance(w, b, X):
    direction = np.asarray(w, float)
    length = np.sqrt(np.dot(direction, direction))
    return np.array([(np.dot(direction, np.asarray(x, float)) + b) / length for x in X])''',
        "set_margin": '''def set_margin(w, b, X, y):
    length = np.linalg.norm(np.asarray(w, float))
    smallest = np.inf
    for point, label in zip(np.asarray(X, float), y):
        smallest = min(smallest, label * (point @ np.asarray(w, float) + b) / length)
    return smallest''',
    },
    "02_algorithm": {
        "perceptron_step": '''def perceptron_step(w, b, x, y):
    weights, point = np.array(w, dtype=float), np.array(x, dtype=float)
    wrong = not (y * (np.dot(weights, point) + b) > 0)
    if wrong:
        weights += y * point
        b = b + y
    return weights, b, wrong''',
        "train_perceptron": '''def train_perceptron(X, y, max_epochs):
    X = np.asarray(X, float)
    weights, bias, total = np.zeros(X.shape[1]), 0.0, 0
    epoch = 0
    while epoch < max_epochs:
        errors = 0
        i = 0
        while i < len(X):
            if y[i] * (X[i] @ weights + bias) <= 0:
                weights = weights + y[i] * X[i]
                bias += y[i]
                errors += 1
            i += 1
        total += errors
        epoch += 1
        if errors == 0:
            break
    return weights, bias, total, errors == 0''',
        "choose_epoch_cap": '''def choose_epoch_cap(X_train, y_train, X_dev, y_dev, caps):
    def dev_accuracy(cap):
        w, b, _, _ = train_perceptron(X_train, y_train, cap)
        predictions = [1 if np.dot(w, x) + b >= 0 else -1 for x in np.asarray(X_dev, float)]
        return sum(p == t for p, t in zip(predictions, y_dev)) / len(predictions)

    scores = {cap: dev_accuracy(cap) for cap in caps}
    return min(cap for cap in caps if scores[cap] == max(scores.values()))''',
    },
    "03_worked_example": {
        "is_mistake": '''def is_mistake(score, label, rule):
    if rule == "sign":
        return (score >= 0) != (label == 1)
    return not (label * score > 0)''',
        "perceptron_trace": '''def perceptron_trace(X, y, rule, max_epochs):
    points = np.asarray(X, float)
    trace = [np.zeros(points.shape[1])]
    for _ in range(max_epochs):
        changed = False
        for point, label in zip(points, y):
            if is_mistake(float(trace[-1] @ point), label, rule):
                trace.append(trace[-1] + label * point)
                changed = True
        if not changed:
            return trace
    return trace''',
    },
    "04_convergence": {
        "why_augmented": """The bias is learnt like one more weight: the algorithm is the perceptron through the origin
on the points (1, x). The theorem only speaks about that run, so R and gamma must be measured on
(1, x). For the points (10, 0) and (11, 0) the raw radius is 11 but the augmented one is sqrt(122).""",
        "radius": '''def radius(X):
    return max(float(np.sqrt(np.sum(np.square(row)))) for row in np.asarray(X, float))''',
        "proof_terms": '''def proof_terms(history, w_star):
    H = np.asarray(history, float)
    return np.einsum("kd,d->k", H, w_star), np.einsum("kd,kd->k", H, H)''',
        "proof_squeeze": '''def proof_squeeze(X, y, history, w_star):
    points, H = np.asarray(X, float), np.asarray(history, float)
    direction = np.asarray(w_star, float)
    direction = direction / np.sqrt(direction @ direction)
    gamma = min(label * float(point @ direction) for point, label in zip(points, y))
    R_squared = max(float(point @ point) for point in points)
    rows = [[j * gamma, float(w @ direction), float(w @ w), j * R_squared] for j, w in enumerate(H)]
    return np.array(rows, dtype=float).reshape(len(H), 4)''',
        "why_squeeze": """Every update adds y u.x >= gamma to w.u, so after k updates w.u >= k gamma. An update only
happens on a mistake, so ||w + yx||^2 = ||w||^2 + 2y w.x + ||x||^2 <= ||w||^2 + R^2 and ||w||^2 <= k R^2.
Since u has length 1, w.u <= ||w||, so k gamma <= sqrt(k) R and k <= (R / gamma)^2. In the 6-point table the
first inequality is an equality: every point has margin exactly 1 for u = (1, 0).""",
        "mistake_bound": '''def mistake_bound(X, y):
    Z = np.column_stack([np.ones(len(X)), np.asarray(X, float)])
    gamma = max_margin(Z, y)[1]
    R_squared = np.max(np.sum(Z * Z, axis=1))
    return R_squared / gamma**2''',
    },
    "05_multiclass": {
        "ovr_train": '''def ovr_train(X, y, max_epochs):
    X, y = np.asarray(X, float), np.asarray(y)
    labels = np.unique(y)
    rows, offsets = [], []
    for label in labels:
        signs = np.where(y == label, 1.0, -1.0)
        w, b = np.zeros(X.shape[1]), 0.0
        for _ in range(max_epochs):
            clean = True
            for x, s in zip(X, signs):
                if s * (w @ x + b) <= 0:
                    w, b, clean = w + s * x, b + s, False
            if clean:
                break
        rows.append(w)
        offsets.append(b)
    return np.vstack(rows), np.array(offsets)''',
        "ovr_predict": '''def ovr_predict(W, b, classes, X):
    return np.array([classes[int(np.argmax(np.asarray(W, float) @ x + b))] for x in np.asarray(X, float)])''',
        "multiclass_train": '''def multiclass_train(X, y, max_epochs):
    X = np.asarray(X, float)
    labels = list(np.unique(y))
    targets = [labels.index(value) for value in y]
    W, b = np.zeros((len(labels), X.shape[1])), np.zeros(len(labels))
    for _ in range(max_epochs):
        errors = 0
        for x, t in zip(X, targets):
            s = W @ x + b
            best_other = max((k for k in range(len(labels)) if k != t), key=lambda k: (s[k], -k))
            if s[t] <= s[best_other]:
                W[t], b[t] = W[t] + x, b[t] + 1
                W[best_other], b[best_other] = W[best_other] - x, b[best_other] - 1
                errors += 1
        if not errors:
            break
    return W, b''',
        "kesler_points": '''def kesler_points(X, y):
    labels, position = np.unique(y, return_inverse=True)
    K = len(labels)
    blocks = np.eye(K)
    lifted = np.column_stack([np.ones(len(position)), np.asarray(X, float)])
    return np.vstack([np.kron(blocks[t] - blocks[r], point)
                      for point, t in zip(lifted, position) for r in range(K) if r != t])''',
        "why_argmax": """Each perceptron only decides a sign, so (w, b) and (3w, 3b) are the same classifier: the length of w
is whatever training happened to leave. The argmax compares raw scores of different perceptrons as if they were on
one scale, so scaling the dog perceptron moves the point (2, 1) from cat to dog. Dividing each row by its norm, or
training the rows together as the multiclass perceptron does, makes the comparison meaningful.""",
    },
    "06_limitations": {
        "why_xor": """If w1 + w2 + b < 0 and -w1 - w2 + b < 0 (the two negative corners), adding them gives b < 0.
If w1 - w2 + b >= 0 and -w1 + w2 + b >= 0 (the positive corners), adding them gives b >= 0.
Both cannot hold, so no line separates XOR.""",
        "why_kkt": """alpha = 0 for points 0, 1, 4, 5: y f > 1, so alpha (y f - 1 + xi) = 0 leaves only alpha = 0.
alpha = C for 2 and 7: y f < 1 needs xi > 0, and (C - alpha) xi = 0. Points 3, 6, 8 are on the band; solving
w = sum alpha y x with sum alpha y = 0 gives 3/4, 1/8 and 5/8, all inside (0, C). Points 0, 1, 4, 5 can go:
they have no part in w and the KKT conditions still hold without them.""",
        "why_nonseparable": """1. gamma -> 0: D stays at the three wrong-side points' deviations (about 0.3) and 1/gamma^2 blows up; gamma
large: D grows like gamma sqrt(T), so the bound goes to T, the number of visits, which says nothing. It holds for every
gamma, so I quote the smallest, about 67. 2. Ten passes: D^2 ten times larger, D times sqrt(10); the bound grows
linearly with the passes, a budget of mistakes per pass, never that they stop. 3. D = 0 and (R/gamma)^2: the
convergence theorem.""",
        "xor_features": '''def xor_features(X):
    X = np.asarray(X, float)
    return (X[:, 0] * X[:, 1])[:, None]''',
        "kernel_perceptron": '''def kernel_perceptron(K, y, max_epochs):
    K, y = np.asarray(K, float), np.asarray(y, float)
    counts = np.zeros(len(y), dtype=int)
    scores = np.zeros(len(y))
    for _ in range(max_epochs):
        clean = True
        for j in range(len(y)):
            if y[j] * scores[j] <= 0:
                counts[j] += 1
                scores += y[j] * K[j]
                clean = False
        if clean:
            break
    return counts''',
        "hinge_sgd": '''def hinge_sgd(X, y, learning_rate, lam, epochs):
    X = np.asarray(X, float)
    weights, offset, steps = np.zeros(X.shape[1]), 0.0, 0
    for _ in range(epochs):
        for i in range(len(X)):
            margin = y[i] * (np.dot(weights, X[i]) + offset)
            weights = weights - learning_rate * lam * weights
            if not margin > 1:
                weights = weights + learning_rate * y[i] * X[i]
                offset += learning_rate * y[i]
                steps += 1
    return weights, offset, steps''',
        "mlp_forward": '''def mlp_forward(X, W, c, v, d):
    rows = []
    for x in np.asarray(X, float):
        rows.append([np.tanh(np.dot(w_k, x) + c_k) for w_k, c_k in zip(np.asarray(W, float), c)])
    hidden = np.array(rows, dtype=float).reshape(len(rows), len(c))
    scores = np.einsum("ij,j->i", hidden, np.asarray(v, float)) + d
    labels = np.ones(len(scores), dtype=int)
    labels[scores < 0] = -1
    return hidden, scores, labels''',
        "averaged_perceptron": '''def averaged_perceptron(X, y, epochs):
    X = np.asarray(X, float)
    w, b = np.zeros(X.shape[1]), 0.0
    weights_seen, biases_seen = [], []
    for _ in range(epochs):
        for x, label in zip(X, y):
            if label * (x @ w + b) <= 0:
                w, b = w + label * x, b + label
            weights_seen.append(w)
            biases_seen.append(b)
    return np.mean(weights_seen, axis=0), float(np.mean(biases_seen))''',
    },
}
