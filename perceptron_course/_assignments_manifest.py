"""The assignments' cells as released: written by ``perceptron-course release`` from release/; do not edit."""

ASSIGNMENTS = [{'assignment': '01_geometry',
  'cells': [{'cell_type': 'markdown',
             'grade_id': 'intro',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'markdown',
                                       'checksum': 'a88e3b1520e1e3fc3dc9e783e64b79c5',
                                       'grade': False,
                                       'grade_id': 'intro',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': '# Assignment 1: the geometry of a linear separator\n'
                       '\n'
                       'Lecture: `notebooks/01_geometry.ipynb`. You will write four small functions: the augmentation\n'
                       "trick, the perceptron's prediction, the signed distance to a hyperplane, and the margin of a\n"
                       'data set with respect to a separator `(w, b)`.\n'
                       '\n'
                       '**Rules of the game**\n'
                       '\n'
                       '- Labels are `-1` / `+1`; points are the rows of an `(n, d)` array; `sign(0) = +1`.\n'
                       '- Write your code between the lines of each function (replace the line `raise '
                       'NotImplementedError(...)`); keep the function names and signatures.\n'
                       '- Use NumPy. While grading, the reference library `perceptron_course` (except its data sets '
                       "and plots) and scikit-learn's linear models are not available: a part that imports them fails "
                       'and scores 0. Helpers that a part explicitly allows are fine.\n'
                       '- Run the test cell under each part: it gives quick hints. More tests, hidden from you, decide '
                       'the grade: they check your function on many random cases and on the edge cases (a score of '
                       'exactly 0, one point, one feature, integer input, data that never converge).\n'
                       '- Before submitting: *Kernel → Restart Kernel and Run All Cells*, and check that nothing '
                       'fails.\n'},
            {'cell_type': 'code',
             'grade_id': 'setup',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': '349b3297aacb5fd09d22117940a10469',
                                       'grade': False,
                                       'grade_id': 'setup',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': 'import numpy as np'},
            {'cell_type': 'markdown',
             'grade_id': 'augment_text',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'markdown',
                                       'checksum': 'fb9ccb304a509d66f6ed94cef798995f',
                                       'grade': False,
                                       'grade_id': 'augment_text',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': '## 1. The augmentation trick (2 points)\n'
                       '\n'
                       'Adding a constant feature 1 in front of every point turns `w·x + b` into `(b, w)·(1, x)`: the\n'
                       'bias becomes one more weight, and the hyperplane passes through the origin of a space with '
                       'one\n'
                       'more dimension.'},
            {'cell_type': 'code',
             'grade_id': 'augment',
             'metadata': {'deletable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': '0c907954ed7c4ed09614ed5b36be17f3',
                                       'grade': False,
                                       'grade_id': 'augment',
                                       'locked': False,
                                       'schema_version': 3,
                                       'solution': True,
                                       'task': False}},
             'role': 'solution',
             'source': 'def augment(X):\n'
                       '    """Prepend a column of ones to X.\n'
                       '\n'
                       '    Parameters\n'
                       '    ----------\n'
                       '    X : array_like, shape (n, d)\n'
                       '        Integers or floats.\n'
                       '\n'
                       '    Returns\n'
                       '    -------\n'
                       '    ndarray of float, shape (n, d + 1)\n'
                       '        A new array: column 0 is all ones, columns 1..d are X. X itself is unchanged.\n'
                       '    """\n'
                       '    # YOUR CODE HERE\n'
                       '    raise NotImplementedError("write augment: see its docstring")'},
            {'cell_type': 'code',
             'grade_id': 'test_augment',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': '08944ba9ffab9da388facee9c971dff3',
                                       'grade': True,
                                       'grade_id': 'test_augment',
                                       'locked': True,
                                       'points': 2,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'tests',
             'source': '# Visible tests: quick hints. Hidden tests compare with the reference on many cases.\n'
                       'X = np.array([[2.0, 3.0], [4.0, 5.0]])\n'
                       'assert augment(X).shape == (2, 3), "augment(X) must have one more column than X"\n'
                       'assert augment(X).tolist() == [[1.0, 2.0, 3.0], [1.0, 4.0, 5.0]], "the ones go in front: [[2, '
                       '3]] -> [[1, 2, 3]]"\n'
                       'assert augment(np.array([[7]])).dtype == float, "return floats, even for integer input"\n'
                       'print("augment: the visible tests pass. The hidden tests check many more cases.")\n'},
            {'cell_type': 'markdown',
             'grade_id': 'predict_text',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'markdown',
                                       'checksum': 'b2ed7b3077a923c8bea7bd07dabfb176',
                                       'grade': False,
                                       'grade_id': 'predict_text',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': '## 2. Prediction (2 points)\n'
                       '\n'
                       "The perceptron predicts `sign(w·x + b)`, with the course's convention **`sign(0) = +1`**: a "
                       'point\n'
                       'exactly on the hyperplane is predicted positive. (Careful: `np.sign(0)` is `0`.)'},
            {'cell_type': 'code',
             'grade_id': 'predict',
             'metadata': {'deletable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': '94a6fc6e93b0dea26fceeda645f2581d',
                                       'grade': False,
                                       'grade_id': 'predict',
                                       'locked': False,
                                       'schema_version': 3,
                                       'solution': True,
                                       'task': False}},
             'role': 'solution',
             'source': 'def predict(w, b, X):\n'
                       '    """Predicted labels sign(w·x + b) of every row of X, with sign(0) = +1.\n'
                       '\n'
                       '    Parameters\n'
                       '    ----------\n'
                       '    w : array_like, shape (d,)\n'
                       '    b : float\n'
                       '    X : array_like, shape (n, d)\n'
                       '\n'
                       '    Returns\n'
                       '    -------\n'
                       '    ndarray of int, shape (n,)\n'
                       '        Each entry -1 or +1; a score of exactly 0 gives +1.\n'
                       '    """\n'
                       '    # YOUR CODE HERE\n'
                       '    raise NotImplementedError("write predict: see its docstring")'},
            {'cell_type': 'code',
             'grade_id': 'test_predict',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': '171545caa3145cfbb81f6f759a5ec3ae',
                                       'grade': True,
                                       'grade_id': 'test_predict',
                                       'locked': True,
                                       'points': 2,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'tests',
             'source': '# Visible tests: quick hints. Hidden tests compare with the reference on many cases.\n'
                       'w, b = np.array([1.0, -1.0]), 0.0\n'
                       'X = np.array([[2.0, 1.0], [1.0, 2.0], [1.0, 1.0]])\n'
                       'assert list(predict(w, b, X)) == [1, -1, 1], "expected [1, -1, 1]; the last point has score '
                       'exactly 0, so +1"\n'
                       'assert set(predict(np.zeros(2), 0.0, X)) == {1}, "with w = 0 and b = 0 every score is 0, so '
                       'every prediction is +1"\n'
                       'print("predict: the visible tests pass. The hidden tests check many more cases.")\n'},
            {'cell_type': 'markdown',
             'grade_id': 'distance_text',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'markdown',
                                       'checksum': 'af344f9f3f4cdd5936bf091eb656ba81',
                                       'grade': False,
                                       'grade_id': 'distance_text',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': '## 3. Signed distance (2 points)\n'
                       '\n'
                       'The signed distance of `x` to the hyperplane `w·x + b = 0` is `(w·x + b) / ||w||`: positive on '
                       'the\n'
                       'side `w` points to, and unchanged when `w` and `b` are both scaled by the same positive '
                       'number.'},
            {'cell_type': 'code',
             'grade_id': 'signed_distance',
             'metadata': {'deletable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': '2e59bf32a2c527b5d2c2e6cb87c3fec2',
                                       'grade': False,
                                       'grade_id': 'signed_distance',
                                       'locked': False,
                                       'schema_version': 3,
                                       'solution': True,
                                       'task': False}},
             'role': 'solution',
             'source': 'def signed_distance(w, b, X):\n'
                       '    """Signed Euclidean distance of every row of X to the hyperplane w·x + b = 0.\n'
                       '\n'
                       '    Parameters\n'
                       '    ----------\n'
                       '    w : array_like, shape (d,), not the zero vector\n'
                       '    b : float\n'
                       '    X : array_like, shape (n, d)\n'
                       '\n'
                       '    Returns\n'
                       '    -------\n'
                       '    ndarray of float, shape (n,)\n'
                       '        (w·x_i + b) / ||w||, positive on the side w points to.\n'
                       '    """\n'
                       '    # YOUR CODE HERE\n'
                       '    raise NotImplementedError("write signed_distance: see its docstring")'},
            {'cell_type': 'code',
             'grade_id': 'test_signed_distance',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': '9272fc9baedac3f32ff15091e37f0f99',
                                       'grade': True,
                                       'grade_id': 'test_signed_distance',
                                       'locked': True,
                                       'points': 2,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'tests',
             'source': '# Visible tests: quick hints. Hidden tests compare with the reference on many cases.\n'
                       'w, b = np.array([3.0, 4.0]), -5.0\n'
                       'distances = signed_distance(w, b, np.array([[3.0, 4.0], [0.0, 0.0]]))\n'
                       'assert np.allclose(distances, [4.0, -1.0]), "expected [4, -1]: (9 + 16 - 5) / 5 and -5 / 5"\n'
                       'assert np.allclose(signed_distance(10 * w, 10 * b, np.array([[3.0, 4.0]])), [4.0]), "scaling w '
                       'and b must not change the distance"\n'
                       'print("signed_distance: the visible tests pass. The hidden tests check many more cases.")\n'},
            {'cell_type': 'markdown',
             'grade_id': 'margin_text',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'markdown',
                                       'checksum': 'e75abeb76ad52122d2f028e75c436dcd',
                                       'grade': False,
                                       'grade_id': 'margin_text',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': '## 4. Margin of a data set with respect to a separator (2 points)\n'
                       '\n'
                       'The margin of point `i` is `y_i (w·x_i + b) / ||w||`: its distance to the hyperplane when it '
                       'is on\n'
                       'its correct side, and minus that distance when it is on the wrong side. The margin of the data '
                       'set with respect to\n'
                       '`(w, b)` is the **smallest** point margin (negative if some point is misclassified).'},
            {'cell_type': 'code',
             'grade_id': 'set_margin',
             'metadata': {'deletable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': 'e64b53c7952979cf202f063f4cda58a1',
                                       'grade': False,
                                       'grade_id': 'set_margin',
                                       'locked': False,
                                       'schema_version': 3,
                                       'solution': True,
                                       'task': False}},
             'role': 'solution',
             'source': 'def set_margin(w, b, X, y):\n'
                       '    """Margin of the data set (X, y) with respect to the separator (w, b).\n'
                       '\n'
                       '    Parameters\n'
                       '    ----------\n'
                       '    w : array_like, shape (d,), not the zero vector\n'
                       '    b : float\n'
                       '    X : array_like, shape (n, d)\n'
                       '    y : array_like of -1/+1, shape (n,)\n'
                       '\n'
                       '    Returns\n'
                       '    -------\n'
                       '    float\n'
                       '        min_i y_i (w·x_i + b) / ||w||; negative when some point is on its wrong side.\n'
                       '    """\n'
                       '    # YOUR CODE HERE\n'
                       '    raise NotImplementedError("write set_margin: see its docstring")'},
            {'cell_type': 'code',
             'grade_id': 'test_set_margin',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': 'b121a7ed37f512ea5dd8b62c0b8ade32',
                                       'grade': True,
                                       'grade_id': 'test_set_margin',
                                       'locked': True,
                                       'points': 2,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'tests',
             'source': '# Visible tests: quick hints. Hidden tests compare with the reference on many cases.\n'
                       'X = np.array([[2.0, 0.0], [-1.0, 5.0], [-3.0, 1.0]])\n'
                       'y = np.array([1, -1, -1])\n'
                       'assert np.isclose(set_margin(np.array([1.0, 0.0]), 0.0, X, y), 1.0), "expected 1.0: the point '
                       '(-1, 5) is closest"\n'
                       'assert np.isclose(set_margin(np.array([1.0, 0.0]), 0.0, X, -y), -3.0), "with every label '
                       'flipped, the margin is -3.0 (the worst point)"\n'
                       'print("set_margin: the visible tests pass. The hidden tests check many more cases.")\n'}],
  'notebook': 'geometry'},
 {'assignment': '02_algorithm',
  'cells': [{'cell_type': 'markdown',
             'grade_id': 'intro',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'markdown',
                                       'checksum': 'e5c3a63327e23b7b850fac65cb56597d',
                                       'grade': False,
                                       'grade_id': 'intro',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': '# Assignment 2: the perceptron algorithm\n'
                       '\n'
                       'Lecture: `notebooks/02_algorithm.ipynb`. You will write one update step and then the whole\n'
                       'training loop, with an epoch cap so that data that cannot be separated never hang.\n'
                       '\n'
                       'The mistake rule is the one of the convergence proof: a point is a mistake when\n'
                       '**`y (w·x + b) <= 0`**. A score of exactly 0 is a mistake (with a strict `< 0`, training from\n'
                       '`w = 0` would never start).\n'
                       '\n'
                       '**Rules of the game**\n'
                       '\n'
                       '- Labels are `-1` / `+1`; points are the rows of an `(n, d)` array; `sign(0) = +1`.\n'
                       '- Write your code between the lines of each function (replace the line `raise '
                       'NotImplementedError(...)`); keep the function names and signatures.\n'
                       '- Use NumPy. While grading, the reference library `perceptron_course` (except its data sets '
                       "and plots) and scikit-learn's linear models are not available: a part that imports them fails "
                       'and scores 0. Helpers that a part explicitly allows are fine.\n'
                       '- Run the test cell under each part: it gives quick hints. More tests, hidden from you, decide '
                       'the grade: they check your function on many random cases and on the edge cases (a score of '
                       'exactly 0, one point, one feature, integer input, data that never converge).\n'
                       '- Before submitting: *Kernel → Restart Kernel and Run All Cells*, and check that nothing '
                       'fails.\n'},
            {'cell_type': 'code',
             'grade_id': 'setup',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': '349b3297aacb5fd09d22117940a10469',
                                       'grade': False,
                                       'grade_id': 'setup',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': 'import numpy as np'},
            {'cell_type': 'markdown',
             'grade_id': 'step_text',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'markdown',
                                       'checksum': '6ffc44fc212e51661e774e9708234c11',
                                       'grade': False,
                                       'grade_id': 'step_text',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': '## 1. One step (3 points)\n'
                       '\n'
                       'Given the current `(w, b)` and one labelled point `(x, y)`: if the point is a mistake, return\n'
                       '`w + y x` and `b + y`; otherwise return the weights unchanged. Do not modify `w` in place.'},
            {'cell_type': 'code',
             'grade_id': 'perceptron_step',
             'metadata': {'deletable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': '00d4c3ecb3bde9bd71d2f4d4a0ef2f06',
                                       'grade': False,
                                       'grade_id': 'perceptron_step',
                                       'locked': False,
                                       'schema_version': 3,
                                       'solution': True,
                                       'task': False}},
             'role': 'solution',
             'source': 'def perceptron_step(w, b, x, y):\n'
                       '    """One step of the perceptron on the point (x, y).\n'
                       '\n'
                       '    Parameters\n'
                       '    ----------\n'
                       '    w : ndarray, shape (d,)\n'
                       '    b : float\n'
                       '    x : ndarray, shape (d,)\n'
                       '    y : int, -1 or +1\n'
                       '\n'
                       '    Returns\n'
                       '    -------\n'
                       '    w_new : ndarray of float, shape (d,)\n'
                       '        w + y x after a mistake, else w. A new array: w itself is not modified.\n'
                       '    b_new : float\n'
                       '        b + y after a mistake, else b.\n'
                       '    mistake : bool\n'
                       '        True iff y (w·x + b) <= 0 (a score of exactly 0 is a mistake).\n'
                       '    """\n'
                       '    # YOUR CODE HERE\n'
                       '    raise NotImplementedError("write perceptron_step: see its docstring")'},
            {'cell_type': 'code',
             'grade_id': 'test_perceptron_step',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': '23ed58283c769a05e2f25cbeba882d31',
                                       'grade': True,
                                       'grade_id': 'test_perceptron_step',
                                       'locked': True,
                                       'points': 3,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'tests',
             'source': '# Visible tests: quick hints. Hidden tests compare with the reference on many cases.\n'
                       'w, b, mistake = perceptron_step(np.zeros(2), 0.0, np.array([1.0, 2.0]), 1)\n'
                       'assert mistake, "at w = 0 the score is 0, and y * 0 <= 0 is a mistake"\n'
                       'assert np.allclose(w, [1.0, 2.0]) and b == 1.0, "after a mistake: w + y x = (1, 2) and b + y = '
                       '1"\n'
                       'w2, b2, mistake2 = perceptron_step(w, b, np.array([1.0, 2.0]), 1)\n'
                       'assert not mistake2 and np.allclose(w2, w) and b2 == b, "a correctly classified point changes '
                       'nothing"\n'
                       'print("perceptron_step: the visible tests pass. The hidden tests check many more cases.")\n'},
            {'cell_type': 'markdown',
             'grade_id': 'train_text',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'markdown',
                                       'checksum': '39f98bf1a8418d7a93218887a61c32f1',
                                       'grade': False,
                                       'grade_id': 'train_text',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': '## 2. Training with an epoch cap (5 points)\n'
                       '\n'
                       'Start from `w = 0`, `b = 0`. An *epoch* visits the rows of `X` once, in order, applying the '
                       'step.\n'
                       'Stop after the first epoch without a mistake (`converged = True`) or after `max_epochs` '
                       'epochs\n'
                       '(`converged = False`).'},
            {'cell_type': 'code',
             'grade_id': 'train_perceptron',
             'metadata': {'deletable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': 'cc108eaadcff314fdd5873821bb1ab2f',
                                       'grade': False,
                                       'grade_id': 'train_perceptron',
                                       'locked': False,
                                       'schema_version': 3,
                                       'solution': True,
                                       'task': False}},
             'role': 'solution',
             'source': 'def train_perceptron(X, y, max_epochs):\n'
                       '    """The online perceptron with a bias, rows visited in order, at most max_epochs passes.\n'
                       '\n'
                       '    Parameters\n'
                       '    ----------\n'
                       '    X : array_like, shape (n, d)\n'
                       '    y : array_like of -1/+1, shape (n,)\n'
                       '    max_epochs : int >= 1\n'
                       '\n'
                       '    Returns\n'
                       '    -------\n'
                       '    w : ndarray of float, shape (d,)\n'
                       '    b : float\n'
                       '    n_mistakes : int\n'
                       '        Total number of updates over all epochs.\n'
                       '    converged : bool\n'
                       '        True iff the last epoch made no mistake.\n'
                       '    """\n'
                       '    # YOUR CODE HERE\n'
                       '    raise NotImplementedError("write train_perceptron: see its docstring")'},
            {'cell_type': 'code',
             'grade_id': 'test_train_perceptron',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': 'e935f032438fd9997de9ffa612514d61',
                                       'grade': True,
                                       'grade_id': 'test_train_perceptron',
                                       'locked': True,
                                       'points': 5,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'tests',
             'source': '# Visible tests: quick hints. Hidden tests compare with the reference on many cases.\n'
                       'X = np.array([[2.0, 1.0], [-1.0, -2.0], [1.0, 3.0], [-2.0, -1.0]])\n'
                       'y = np.array([1, -1, 1, -1])\n'
                       'w, b, n_mistakes, converged = train_perceptron(X, y, max_epochs=100)\n'
                       'assert converged, "these four points are separable: training must converge"\n'
                       'assert np.all(y * (X @ w + b) > 0), "after convergence every point is strictly on its correct '
                       'side"\n'
                       'xor_X, xor_y = np.array([[1.0, 1.0], [-1.0, -1.0], [1.0, -1.0], [-1.0, 1.0]]), np.array([-1, '
                       '-1, 1, 1])\n'
                       'assert not train_perceptron(xor_X, xor_y, max_epochs=5)[3], "XOR is not separable: converged '
                       'must be False after the cap"\n'
                       'print("train_perceptron: the visible tests pass. The hidden tests check many more cases.")\n'},
            {'cell_type': 'markdown',
             'grade_id': 'cap_text',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'markdown',
                                       'checksum': '444614d36f6327b4578ad143ab958f92',
                                       'grade': False,
                                       'grade_id': 'cap_text',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': '## 3. Choosing the epoch cap on dev data (2 points)\n'
                       '\n'
                       'On data that are not separable the perceptron never converges, and the epoch cap decides where '
                       'it\n'
                       "stops: it is the algorithm's one hyperparameter. Choose it the honest way: train on the "
                       'training\n'
                       'data with each candidate cap, measure the accuracy of each trained perceptron on separate\n'
                       '**dev** data, and keep the cap with the highest dev accuracy; among ties, the **smallest** '
                       'cap\n'
                       '(the cheapest run). The test data are never used for this choice; they measure the final '
                       'model\n'
                       'once, at the very end (lecture 02). Use your `train_perceptron`.'},
            {'cell_type': 'code',
             'grade_id': 'choose_epoch_cap',
             'metadata': {'deletable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': '153b24a77dbf498337723af531709002',
                                       'grade': False,
                                       'grade_id': 'choose_epoch_cap',
                                       'locked': False,
                                       'schema_version': 3,
                                       'solution': True,
                                       'task': False}},
             'role': 'solution',
             'source': 'def choose_epoch_cap(X_train, y_train, X_dev, y_dev, caps):\n'
                       '    """The epoch cap whose perceptron, trained on (X_train, y_train), is most accurate on '
                       '(X_dev, y_dev).\n'
                       '\n'
                       '    Parameters\n'
                       '    ----------\n'
                       '    X_train : array_like, shape (n, d)\n'
                       '    y_train : array_like of -1/+1, shape (n,)\n'
                       '    X_dev : array_like, shape (m, d)\n'
                       '    y_dev : array_like of -1/+1, shape (m,)\n'
                       '    caps : list of int >= 1, in any order\n'
                       '\n'
                       '    Returns\n'
                       '    -------\n'
                       '    int\n'
                       '        The cap (one of caps) with the highest dev accuracy, predicting sign(w·x + b) with\n'
                       '        sign(0) = +1; among ties, the smallest cap.\n'
                       '    """\n'
                       '    # YOUR CODE HERE\n'
                       '    raise NotImplementedError("write choose_epoch_cap: see its docstring")'},
            {'cell_type': 'code',
             'grade_id': 'test_choose_epoch_cap',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': '4325bb89cd6f69e39f169bdebbd8d30c',
                                       'grade': True,
                                       'grade_id': 'test_choose_epoch_cap',
                                       'locked': True,
                                       'points': 2,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'tests',
             'source': '# Visible tests: quick hints. Hidden tests compare with the reference on many cases.\n'
                       'X_train = np.array([[2.0, 1.0], [-1.0, -2.0], [1.0, 3.0], [-2.0, -1.0]])\n'
                       'y_train = np.array([1, -1, 1, -1])\n'
                       'X_dev, y_dev = np.array([[3.0, 3.0], [-3.0, -2.0]]), np.array([1, -1])\n'
                       'cap = choose_epoch_cap(X_train, y_train, X_dev, y_dev, [10, 1, 50])\n'
                       'assert cap in (10, 1, 50), "return one of the caps you were given"\n'
                       'assert cap == 1, "one epoch already separates these points, so every cap ties: the smallest '
                       'cap, 1, wins"\n'
                       'print("choose_epoch_cap: the visible tests pass. The hidden tests check many more cases.")\n'}],
  'notebook': 'algorithm'},
 {'assignment': '03_worked_example',
  'cells': [{'cell_type': 'markdown',
             'grade_id': 'intro',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'markdown',
                                       'checksum': '3c4ed80d5c8aa860215caf964f8df68b',
                                       'grade': False,
                                       'grade_id': 'intro',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': '# Assignment 3: the worked examples, step by step\n'
                       '\n'
                       'Lecture: `notebooks/03_worked_example.ipynb`. You will write the two mistake rules and a trace '
                       'of\n'
                       "the perceptron's weights, then reproduce the lecture's two worked examples with it.\n"
                       '\n'
                       '- `"margin"`: a mistake iff `label * score <= 0` (the proof\'s rule);\n'
                       '- `"sign"`: a mistake iff `sign(score) != label`, with `sign(0) = +1` (the lecture\'s rule).\n'
                       '\n'
                       '**Rules of the game**\n'
                       '\n'
                       '- Labels are `-1` / `+1`; points are the rows of an `(n, d)` array; `sign(0) = +1`.\n'
                       '- Write your code between the lines of each function (replace the line `raise '
                       'NotImplementedError(...)`); keep the function names and signatures.\n'
                       '- Use NumPy. While grading, the reference library `perceptron_course` (except its data sets '
                       "and plots) and scikit-learn's linear models are not available: a part that imports them fails "
                       'and scores 0. Helpers that a part explicitly allows are fine.\n'
                       '- Run the test cell under each part: it gives quick hints. More tests, hidden from you, decide '
                       'the grade: they check your function on many random cases and on the edge cases (a score of '
                       'exactly 0, one point, one feature, integer input, data that never converge).\n'
                       '- Before submitting: *Kernel → Restart Kernel and Run All Cells*, and check that nothing '
                       'fails.\n'},
            {'cell_type': 'code',
             'grade_id': 'setup',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': '349b3297aacb5fd09d22117940a10469',
                                       'grade': False,
                                       'grade_id': 'setup',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': 'import numpy as np'},
            {'cell_type': 'markdown',
             'grade_id': 'rule_text',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'markdown',
                                       'checksum': 'e3ef1718ce29dcf30afd00858000848c',
                                       'grade': False,
                                       'grade_id': 'rule_text',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': '## 1. The two mistake rules (2 points)'},
            {'cell_type': 'code',
             'grade_id': 'is_mistake',
             'metadata': {'deletable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': 'b5a553ecb4c2f93b636d671badb29018',
                                       'grade': False,
                                       'grade_id': 'is_mistake',
                                       'locked': False,
                                       'schema_version': 3,
                                       'solution': True,
                                       'task': False}},
             'role': 'solution',
             'source': 'def is_mistake(score, label, rule):\n'
                       '    """Whether a point with this score w·x and this label triggers an update.\n'
                       '\n'
                       '    Parameters\n'
                       '    ----------\n'
                       '    score : float\n'
                       '    label : int, -1 or +1\n'
                       '    rule : str, "margin" or "sign"\n'
                       '        "margin": label * score <= 0.  "sign": sign(score) != label with sign(0) = +1.\n'
                       '\n'
                       '    Returns\n'
                       '    -------\n'
                       '    bool\n'
                       '    """\n'
                       '    # YOUR CODE HERE\n'
                       '    raise NotImplementedError("write is_mistake: see its docstring")'},
            {'cell_type': 'code',
             'grade_id': 'test_is_mistake',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': '99b47fb1bc007cfc6d7522eafdfaf619',
                                       'grade': True,
                                       'grade_id': 'test_is_mistake',
                                       'locked': True,
                                       'points': 2,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'tests',
             'source': '# Visible tests: quick hints. Hidden tests compare with the reference on many cases.\n'
                       'assert isinstance(is_mistake(0.0, 1, "margin"), (bool, np.bool_)), "return a bool: True or '
                       'False"\n'
                       'assert bool(is_mistake(0.0, 1, "margin")) is True, "margin rule: 1 * 0 <= 0 is a mistake"\n'
                       'assert bool(is_mistake(0.0, 1, "sign")) is False, "sign rule: sign(0) = +1 equals the label '
                       '+1, so no mistake"\n'
                       'assert bool(is_mistake(0.0, -1, "sign")) is True, "sign rule: sign(0) = +1 differs from -1"\n'
                       'assert bool(is_mistake(-2.0, -1, "margin")) is False, "a negative score for a negative point '
                       'is correct"\n'
                       'print("is_mistake: the visible tests pass. The hidden tests check many more cases.")\n'},
            {'cell_type': 'markdown',
             'grade_id': 'trace_text',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'markdown',
                                       'checksum': '6ef5d04101b4d5407b34e04899371044',
                                       'grade': False,
                                       'grade_id': 'trace_text',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': '## 2. The trace of the weights (4 points)\n'
                       '\n'
                       'No bias here: the points are already augmented when a bias is wanted. Start from `w = 0`, '
                       'visit\n'
                       'the rows in order, epoch after epoch, and record the weights **after every update**, starting\n'
                       'with the zero vector. Stop after an epoch without mistakes or after `max_epochs` epochs.'},
            {'cell_type': 'code',
             'grade_id': 'perceptron_trace',
             'metadata': {'deletable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': 'cc9dd36cb97d0297925df4112b15ea60',
                                       'grade': False,
                                       'grade_id': 'perceptron_trace',
                                       'locked': False,
                                       'schema_version': 3,
                                       'solution': True,
                                       'task': False}},
             'role': 'solution',
             'source': 'def perceptron_trace(X, y, rule, max_epochs):\n'
                       '    """The sequence of weight vectors of the perceptron without bias.\n'
                       '\n'
                       '    Parameters\n'
                       '    ----------\n'
                       '    X : array_like, shape (n, d)\n'
                       '    y : array_like of -1/+1, shape (n,)\n'
                       '    rule : str, "margin" or "sign" (see is_mistake)\n'
                       '    max_epochs : int >= 1\n'
                       '\n'
                       '    Returns\n'
                       '    -------\n'
                       '    list of ndarray, each of shape (d,)\n'
                       '        The zero vector, then the weights after each update, in order (independent copies).\n'
                       '    """\n'
                       '    # YOUR CODE HERE\n'
                       '    raise NotImplementedError("write perceptron_trace: see its docstring")'},
            {'cell_type': 'code',
             'grade_id': 'test_perceptron_trace',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': '64be8b9e347e699d707ea65bc16bb191',
                                       'grade': True,
                                       'grade_id': 'test_perceptron_trace',
                                       'locked': True,
                                       'points': 4,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'tests',
             'source': '# Visible tests: quick hints. Hidden tests compare with the reference on many cases.\n'
                       'X_two, y_two = np.array([[1.0, 1.0, 2.0], [1.0, 2.0, 1.0]]), np.array([1, -1])\n'
                       'steps = perceptron_trace(X_two, y_two, "sign", 10)\n'
                       'assert len(steps) == 3, "the 2-point example under the sign rule makes two updates: 3 weight '
                       'vectors in all"\n'
                       'assert np.allclose(steps[1], [-1, -2, -1]) and np.allclose(steps[2], [0, -1, 1]), "expected '
                       'w(2) = (-1, -2, -1), w(3) = (0, -1, 1)"\n'
                       'assert np.allclose(perceptron_trace(X_two, y_two, "margin", 10)[1], [1, 1, 2]), "under the '
                       'margin rule the first point (score 0) is a mistake: w(2) = (1, 1, 2)"\n'
                       'print("perceptron_trace: the visible tests pass. The hidden tests check many more cases.")\n'},
            {'cell_type': 'markdown',
             'grade_id': 'examples_text',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'markdown',
                                       'checksum': 'ee091f1011f0cc73d0644661de167e6d',
                                       'grade': False,
                                       'grade_id': 'examples_text',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': "## 3. The lectures' examples, with your code\n"
                       '\n'
                       "The cell below runs your `perceptron_trace` on the lecture's two examples under both rules: "
                       'the\n'
                       '2-point example is already augmented with a leading 1 (its first weight is the bias), the '
                       '6-point\n'
                       'example is 2-D and run without a bias (its separator passes through the origin, so its '
                       'weights\n'
                       'have two entries and start at $w^{(1)} = (0, 0)$). Compare with lecture 03: under the '
                       '**sign**\n'
                       'rule the 2-point run gives $w^{(2)} = (-1, -2, -1)$ and $w^{(3)} = (0, -1, 1)$; under the '
                       '**margin**\n'
                       'rule its first point, with a score of exactly 0 and the label $+1$, is already a mistake, and '
                       'the\n'
                       "run differs from its first step. The 6-point example's first point is labelled $-1$, so its "
                       'score\n'
                       'of 0 is a mistake under both rules, and both runs are the same:\n'
                       '$w^{(2)} = (1, -2)$, $w^{(3)} = (2, -1)$, $w^{(4)} = (3, 1)$. (Not graded: your trace is '
                       'graded above.)'}],
  'notebook': 'worked_example'},
 {'assignment': '04_convergence',
  'cells': [{'cell_type': 'markdown',
             'grade_id': 'intro',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'markdown',
                                       'checksum': '552897a050464199806453885a436d37',
                                       'grade': False,
                                       'grade_id': 'intro',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': '# Assignment 4: the convergence theorem in numbers\n'
                       '\n'
                       'Lecture: `notebooks/04_convergence.ipynb`. If `||x_i|| <= R` for all points and a unit `w*` '
                       'has\n'
                       '`y_i w*·x_i >= gamma > 0`, the perceptron (through the origin, rule `y w·x <= 0`) makes at '
                       'most\n'
                       '`(R / gamma)^2` updates. You will compute `R`, the two quantities the proof tracks, both '
                       'inequalities of the proof along a\n'
                       'run, and the bound for the perceptron *with a bias*; then explain how the two inequalities '
                       'squeeze\n'
                       'the number of updates.\n'
                       '\n'
                       '**Rules of the game**\n'
                       '\n'
                       '- Labels are `-1` / `+1`; points are the rows of an `(n, d)` array; `sign(0) = +1`.\n'
                       '- Write your code between the lines of each function (replace the line `raise '
                       'NotImplementedError(...)`); keep the function names and signatures.\n'
                       '- Use NumPy. While grading, the reference library `perceptron_course` (except its data sets '
                       "and plots) and scikit-learn's linear models are not available: a part that imports them fails "
                       'and scores 0. Helpers that a part explicitly allows are fine.\n'
                       '- Run the test cell under each part: it gives quick hints. More tests, hidden from you, decide '
                       'the grade: they check your function on many random cases and on the edge cases (a score of '
                       'exactly 0, one point, one feature, integer input, data that never converge).\n'
                       '- Before submitting: *Kernel → Restart Kernel and Run All Cells*, and check that nothing '
                       'fails.\n'
                       '\n'
                       '**Allowed helper** in this assignment: `max_margin(X, y)` from `perceptron_course.theory`, '
                       'imported\n'
                       'below, which returns the unit max-margin separator through the origin and its margin '
                       '`gamma`.\n'},
            {'cell_type': 'code',
             'grade_id': 'setup',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': '9f5c0966af902b603e97f4808bbac9d2',
                                       'grade': False,
                                       'grade_id': 'setup',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': 'import numpy as np\n'
                       'from perceptron_course.theory import max_margin  # allowed helper: (w_star, gamma)'},
            {'cell_type': 'markdown',
             'grade_id': 'radius_text',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'markdown',
                                       'checksum': '3b930f0c28d0fe28ebf38397f6b5d7c0',
                                       'grade': False,
                                       'grade_id': 'radius_text',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': '## 1. The radius (1 point)\n'
                       '\n'
                       "`R` is measured from the origin (the algorithm's origin), not from the data's centre."},
            {'cell_type': 'code',
             'grade_id': 'radius',
             'metadata': {'deletable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': 'f2ddd873e60ba57f8ff40e28d018a9e1',
                                       'grade': False,
                                       'grade_id': 'radius',
                                       'locked': False,
                                       'schema_version': 3,
                                       'solution': True,
                                       'task': False}},
             'role': 'solution',
             'source': 'def radius(X):\n'
                       '    """R = max_i ||x_i||.\n'
                       '\n'
                       '    Parameters\n'
                       '    ----------\n'
                       '    X : array_like, shape (n, d)\n'
                       '\n'
                       '    Returns\n'
                       '    -------\n'
                       '    float\n'
                       '    """\n'
                       '    # YOUR CODE HERE\n'
                       '    raise NotImplementedError("write radius: see its docstring")'},
            {'cell_type': 'code',
             'grade_id': 'test_radius',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': 'f63632ec74c47da033cf2d215646d212',
                                       'grade': True,
                                       'grade_id': 'test_radius',
                                       'locked': True,
                                       'points': 1,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'tests',
             'source': '# Visible tests: quick hints. Hidden tests compare with the reference on many cases.\n'
                       'assert np.isclose(radius(np.array([[3.0, 4.0], [1.0, 0.0]])), 5.0), "the longest row (3, 4) '
                       'has norm 5"\n'
                       'assert np.isclose(radius(np.array([[10.0, 0.0], [12.0, 0.0]])), 12.0), "measured from the '
                       'origin: 12, not 1"\n'
                       'print("radius: the visible tests pass. The hidden tests check many more cases.")\n'},
            {'cell_type': 'markdown',
             'grade_id': 'proof_text',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'markdown',
                                       'checksum': '53998118d0c0a0c2bc152844ee4b525e',
                                       'grade': False,
                                       'grade_id': 'proof_text',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': '## 2. The two halves of the proof (3 points)\n'
                       '\n'
                       'Given the weights after 0, 1, ..., k updates (rows of `history`) and a unit separator '
                       '`w_star`,\n'
                       'return $\\mathrm{history}[j] \\cdot w^*$ and $\\|\\mathrm{history}[j]\\|^2$ for every row $j$. '
                       'In the\n'
                       "lecture's notation the weights start at $w^{(1)} = 0$, so row $j$ is $w^{(j+1)}$, the weights "
                       'after\n'
                       '$j$ updates. The proof shows that after $j$ updates the first is at least $j\\gamma$ and the '
                       'second\n'
                       'at most $j R^2$.'},
            {'cell_type': 'code',
             'grade_id': 'proof_terms',
             'metadata': {'deletable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': '1c8e8c1aee3d3582e063c693aa482680',
                                       'grade': False,
                                       'grade_id': 'proof_terms',
                                       'locked': False,
                                       'schema_version': 3,
                                       'solution': True,
                                       'task': False}},
             'role': 'solution',
             'source': 'def proof_terms(history, w_star):\n'
                       '    """The alignment with w* and the squared norm of every weight vector of a run.\n'
                       '\n'
                       '    Parameters\n'
                       '    ----------\n'
                       '    history : ndarray, shape (k + 1, d)\n'
                       '        Row j: the weights after j updates, w(j+1) in the lecture (row 0 is w(1) = 0).\n'
                       '    w_star : ndarray, shape (d,), unit norm\n'
                       '\n'
                       '    Returns\n'
                       '    -------\n'
                       '    alignment : ndarray of float, shape (k + 1,)\n'
                       '        history[j] · w_star.\n'
                       '    squared_norm : ndarray of float, shape (k + 1,)\n'
                       '        ||history[j]||^2.\n'
                       '    """\n'
                       '    # YOUR CODE HERE\n'
                       '    raise NotImplementedError("write proof_terms: see its docstring")'},
            {'cell_type': 'code',
             'grade_id': 'test_proof_terms',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': '45fc95dd4af6c9996e8831db252f1028',
                                       'grade': True,
                                       'grade_id': 'test_proof_terms',
                                       'locked': True,
                                       'points': 3,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'tests',
             'source': '# Visible tests: quick hints. Hidden tests compare with the reference on many cases.\n'
                       'history = np.array([[0.0, 0.0], [1.0, 2.0], [0.0, 3.0]])\n'
                       'alignment, squared_norm = proof_terms(history, np.array([0.6, 0.8]))\n'
                       'assert np.allclose(alignment, [0.0, 2.2, 2.4]), "alignment is history @ w_star"\n'
                       'assert np.allclose(squared_norm, [0.0, 5.0, 9.0]), "squared_norm is the sum of squares of each '
                       'row"\n'
                       'print("proof_terms: the visible tests pass. The hidden tests check many more cases.")\n'},
            {'cell_type': 'markdown',
             'grade_id': 'squeeze_text',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'markdown',
                                       'checksum': 'ef1605b6265e100d7efdcbd59027246e',
                                       'grade': False,
                                       'grade_id': 'squeeze_text',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': '## 3. Both inequalities of the proof, along a run (3 points)\n'
                       '\n'
                       'Let $u = w^* / \\|w^*\\|$ be the separator made unit, $\\gamma = \\min_i y_i\\, u \\cdot x_i$ '
                       'its margin on\n'
                       'the data and $R = \\max_i \\|x_i\\|$. The proof shows that after $j$ updates\n'
                       '\n'
                       '$$j\\,\\gamma \\;\\le\\; w^{(j+1)} \\cdot u \\qquad \\text{and} \\qquad \\|w^{(j+1)}\\|^2 '
                       '\\;\\le\\; j\\,R^2 .$$\n'
                       '\n'
                       'Given the points a run visited, its weight history and a separator `w_star` through the '
                       'origin\n'
                       '(of **any** positive length), return both sides of both inequalities for every row of the '
                       'history,\n'
                       'as a table with one row per update count $j = 0, 1, \\dots, k$. Your `proof_terms` may help. '
                       'The\n'
                       "visible test uses the lecture's 6-point example (2-D, no bias), whose run makes three "
                       'updates.'},
            {'cell_type': 'code',
             'grade_id': 'proof_squeeze',
             'metadata': {'deletable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': '42c06c06d2086ccaab799a34e1cfdb40',
                                       'grade': False,
                                       'grade_id': 'proof_squeeze',
                                       'locked': False,
                                       'schema_version': 3,
                                       'solution': True,
                                       'task': False}},
             'role': 'solution',
             'source': 'def proof_squeeze(X, y, history, w_star):\n'
                       '    """Both inequalities of the convergence proof, row by row along a run.\n'
                       '\n'
                       '    Parameters\n'
                       '    ----------\n'
                       '    X : array_like, shape (n, d)\n'
                       '        The points the run visited (already augmented if the run used a bias).\n'
                       '    y : array_like of -1/+1, shape (n,)\n'
                       '    history : array_like, shape (k + 1, d)\n'
                       '        Row j: the weights after j updates (row 0 is the zero vector); k may be 0.\n'
                       '    w_star : array_like, shape (d,)\n'
                       '        A separator through the origin of (X, y), of any positive length.\n'
                       '\n'
                       '    Returns\n'
                       '    -------\n'
                       '    ndarray of float, shape (k + 1, 4)\n'
                       '        Row j: [j * gamma, history[j] · u, ||history[j]||^2, j * R^2], where u = w_star / '
                       '||w_star||,\n'
                       '        gamma = min_i y_i u · x_i and R = max_i ||x_i||. The proof says that in every row\n'
                       '        column 0 <= column 1 and column 2 <= column 3.\n'
                       '    """\n'
                       '    # YOUR CODE HERE\n'
                       '    raise NotImplementedError("write proof_squeeze: see its docstring")'},
            {'cell_type': 'code',
             'grade_id': 'test_proof_squeeze',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': '2e3c7a56b915ab786b8334da902f7bb1',
                                       'grade': True,
                                       'grade_id': 'test_proof_squeeze',
                                       'locked': True,
                                       'points': 3,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'tests',
             'source': '# Visible tests: quick hints. Hidden tests compare with the reference on many cases.\n'
                       'X_six = np.array([[-1.0, 2.0], [1.0, 0.0], [1.0, 1.0], [-1.0, 0.0], [-1.0, -2.0], [1.0, '
                       '-1.0]])\n'
                       'y_six = np.array([-1, 1, 1, -1, -1, 1])\n'
                       "history_six = np.array([[0.0, 0.0], [1.0, -2.0], [2.0, -1.0], [3.0, 1.0]])  # the perceptron's "
                       'run, rule <= 0, no bias\n'
                       'table = proof_squeeze(X_six, y_six, history_six, np.array([2.0, 0.0]))\n'
                       'assert np.shape(table) == (4, 4), "one row per update count j = 0, 1, 2, 3 and four columns"\n'
                       'assert np.allclose(table[:, 0], [0, 1, 2, 3]), "u = (1, 0) and every point has y u·x = 1, so '
                       'gamma = 1: column 0 is j * 1"\n'
                       'assert np.allclose(table[:, 3], [0, 5, 10, 15]), "R^2 = 5 (the point (-1, 2)): column 3 is j * '
                       '5"\n'
                       'assert np.allclose(table[:, 1:3], [[0, 0], [1, 5], [2, 5], [3, 10]]), "columns 1 and 2: '
                       'history[j]·u and ||history[j]||^2"\n'
                       'assert np.allclose(proof_squeeze(X_six, y_six, history_six, np.array([0.5, 0.0])), table), '
                       '"the length of w_star must not matter"\n'
                       'assert np.shape(proof_squeeze(X_six, y_six, history_six[:1], np.array([2.0, 0.0]))) == (1, 4), '
                       '"no update yet: one row"\n'
                       'print("proof_squeeze: the visible tests pass. The hidden tests check many more cases.")\n'},
            {'cell_type': 'markdown',
             'grade_id': 'why_squeeze_text',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'markdown',
                                       'checksum': 'd6803d747cfdb4d29b6f9819a1b6bea5',
                                       'grade': False,
                                       'grade_id': 'why_squeeze_text',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': '## 4. In your own words: the squeeze (2 points, graded by hand)\n'
                       '\n'
                       'Explain in three to six sentences how the two inequalities of part 3 bound the number of '
                       'updates\n'
                       '$k$: which fact about the run gives each inequality, how the two are joined, and why the '
                       'result\n'
                       'is $k \\le (R/\\gamma)^2$. Then look at the 6-point table of the visible test: which '
                       'inequality holds\n'
                       'with equality there, and why?'},
            {'cell_type': 'markdown',
             'grade_id': 'why_squeeze',
             'metadata': {'deletable': False,
                          'nbgrader': {'cell_type': 'markdown',
                                       'checksum': 'dc18ea4841933561c67f93508dd90f03',
                                       'grade': True,
                                       'grade_id': 'why_squeeze',
                                       'locked': False,
                                       'points': 2,
                                       'schema_version': 3,
                                       'solution': True,
                                       'task': False}},
             'role': 'answer',
             'source': 'YOUR ANSWER HERE'},
            {'cell_type': 'markdown',
             'grade_id': 'bound_text',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'markdown',
                                       'checksum': '236cf5ca8614cfbf6c0ba00242442b62',
                                       'grade': False,
                                       'grade_id': 'bound_text',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': '## 5. The bound for the perceptron with a bias (3 points)\n'
                       '\n'
                       'With a bias, the perceptron runs through the origin on the augmented points `(1, x)`. So `R` '
                       'and\n'
                       '`gamma` in the bound are those of the **augmented** data. Use `max_margin` for `gamma`.'},
            {'cell_type': 'code',
             'grade_id': 'mistake_bound',
             'metadata': {'deletable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': 'c5e6f0aecf3a7eac13248ee965b8bfb3',
                                       'grade': False,
                                       'grade_id': 'mistake_bound',
                                       'locked': False,
                                       'schema_version': 3,
                                       'solution': True,
                                       'task': False}},
             'role': 'solution',
             'source': 'def mistake_bound(X, y):\n'
                       '    """The mistake bound (R / gamma)^2 of the perceptron with a bias on (X, y).\n'
                       '\n'
                       '    Parameters\n'
                       '    ----------\n'
                       '    X : array_like, shape (n, d)\n'
                       '    y : array_like of -1/+1, shape (n,), linearly separable with an offset\n'
                       '\n'
                       '    Returns\n'
                       '    -------\n'
                       '    float\n'
                       '        (R / gamma)^2 computed on the augmented points (1, x_i).\n'
                       '    """\n'
                       '    # YOUR CODE HERE\n'
                       '    raise NotImplementedError("write mistake_bound: see its docstring")'},
            {'cell_type': 'code',
             'grade_id': 'test_mistake_bound',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': '11c3bf1bb361bddb79438b95344a70f6',
                                       'grade': True,
                                       'grade_id': 'test_mistake_bound',
                                       'locked': True,
                                       'points': 3,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'tests',
             'source': '# Visible tests: quick hints. Hidden tests compare with the reference on many cases.\n'
                       'X, y = np.array([[2.0, 0.0], [-2.0, 0.0]]), np.array([1, -1])\n'
                       'assert np.isclose(mistake_bound(X, y), 1.25), "augmented points (1, 2, 0) and (1, -2, 0): R^2 '
                       '= 5, gamma = 2, so (R / gamma)^2 = 5 / 4"\n'
                       'print("mistake_bound: the visible tests pass. The hidden tests check many more cases.")\n'},
            {'cell_type': 'markdown',
             'grade_id': 'why_augmented_text',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'markdown',
                                       'checksum': '857e49a95ed4da7415d2b574ec8ddd34',
                                       'grade': False,
                                       'grade_id': 'why_augmented_text',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': '## 6. In your own words: the bias (2 points, graded by hand)\n'
                       '\n'
                       'Why must the bound of the perceptron **with a bias** use $R$ and $\\gamma$ of the augmented '
                       'points\n'
                       '$(1, x_i)$, and not of the points $x_i$ themselves? Answer in two to four sentences in the '
                       'cell\n'
                       'below; a small numerical example is welcome.'},
            {'cell_type': 'markdown',
             'grade_id': 'why_augmented',
             'metadata': {'deletable': False,
                          'nbgrader': {'cell_type': 'markdown',
                                       'checksum': 'c622c7841acd6a2ba4bc95ce630fec1f',
                                       'grade': True,
                                       'grade_id': 'why_augmented',
                                       'locked': False,
                                       'points': 2,
                                       'schema_version': 3,
                                       'solution': True,
                                       'task': False}},
             'role': 'answer',
             'source': 'YOUR ANSWER HERE'}],
  'notebook': 'convergence'},
 {'assignment': '05_multiclass',
  'cells': [{'cell_type': 'markdown',
             'grade_id': 'intro',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'markdown',
                                       'checksum': 'ff723c0f894936318fa2cec58ea5823f',
                                       'grade': False,
                                       'grade_id': 'intro',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': '# Assignment 5: more than two classes\n'
                       '\n'
                       'Lecture: `notebooks/05_multiclass.ipynb`. Classes are the sorted values `classes = '
                       'np.unique(y)`;\n'
                       'row `k` of a weight matrix `W` (shape `(K, d)`) and entry `k` of `b` (shape `(K,)`) belong to\n'
                       '`classes[k]`. Everything uses a bias, the rule `<= 0`, and rows visited in order.\n'
                       '\n'
                       '**Rules of the game**\n'
                       '\n'
                       '- Labels are classes: any sortable values (numbers or strings), at least two of them; points '
                       'are the rows of an `(n, d)` array.\n'
                       '- Write your code between the lines of each function (replace the line `raise '
                       'NotImplementedError(...)`); keep the function names and signatures.\n'
                       '- Use NumPy. While grading, the reference library `perceptron_course` (except its data sets '
                       "and plots) and scikit-learn's linear models are not available: a part that imports them fails "
                       'and scores 0. Helpers that a part explicitly allows are fine.\n'
                       '- Run the test cell under each part: it gives quick hints. More tests, hidden from you, decide '
                       'the grade: they check your function on many random cases and on the edge cases (a score of '
                       'exactly 0, one point, one feature, integer input, data that never converge).\n'
                       '- Before submitting: *Kernel → Restart Kernel and Run All Cells*, and check that nothing '
                       'fails.\n'},
            {'cell_type': 'code',
             'grade_id': 'setup',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': '349b3297aacb5fd09d22117940a10469',
                                       'grade': False,
                                       'grade_id': 'setup',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': 'import numpy as np'},
            {'cell_type': 'markdown',
             'grade_id': 'ovr_text',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'markdown',
                                       'checksum': '052b0745cc2a1e6f23be4cf0af120806',
                                       'grade': False,
                                       'grade_id': 'ovr_text',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': '## 1. One-vs-rest training (4 points)\n'
                       '\n'
                       'For each class `classes[k]`, train an ordinary binary perceptron (bias on, rule `y (w·x + b) '
                       '<= 0`,\n'
                       'start at zero, rows in order, stop after a clean epoch or `max_epochs`) with labels `+1` for '
                       'that\n'
                       'class and `-1` for every other class.'},
            {'cell_type': 'code',
             'grade_id': 'ovr_train',
             'metadata': {'deletable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': '8445be6683b57f483f3e99218449d6cc',
                                       'grade': False,
                                       'grade_id': 'ovr_train',
                                       'locked': False,
                                       'schema_version': 3,
                                       'solution': True,
                                       'task': False}},
             'role': 'solution',
             'source': 'def ovr_train(X, y, max_epochs):\n'
                       '    """One-vs-rest: one binary perceptron per class.\n'
                       '\n'
                       '    Parameters\n'
                       '    ----------\n'
                       '    X : array_like, shape (n, d)\n'
                       '    y : array_like, shape (n,), any sortable labels, at least two classes\n'
                       '    max_epochs : int >= 1, the cap of each binary perceptron\n'
                       '\n'
                       '    Returns\n'
                       '    -------\n'
                       '    W : ndarray of float, shape (K, d)\n'
                       '        Row k: the weights of classes[k] against the rest, classes = np.unique(y).\n'
                       '    b : ndarray of float, shape (K,)\n'
                       '    """\n'
                       '    # YOUR CODE HERE\n'
                       '    raise NotImplementedError("write ovr_train: see its docstring")'},
            {'cell_type': 'code',
             'grade_id': 'test_ovr_train',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': 'ccbcc74808ad6d66c9261b602ba9a6f7',
                                       'grade': True,
                                       'grade_id': 'test_ovr_train',
                                       'locked': True,
                                       'points': 4,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'tests',
             'source': '# Visible tests: quick hints. Hidden tests compare with the reference on many cases.\n'
                       'X = np.array([[0.0, 3.0], [3.0, 0.0], [-3.0, -3.0], [0.0, 4.0], [4.0, 0.0], [-4.0, -4.0]])\n'
                       'y = np.array([0, 1, 2, 0, 1, 2])\n'
                       'W, b = ovr_train(X, y, max_epochs=50)\n'
                       'assert W.shape == (3, 2) and b.shape == (3,), "W has one row per class, b one entry per '
                       'class"\n'
                       'for k in range(3):\n'
                       '    targets = np.where(y == k, 1, -1)\n'
                       '    assert np.all(targets * (X @ W[k] + b[k]) > 0), f"the perceptron of class {k} must '
                       'separate it from the rest here"\n'
                       'print("ovr_train: the visible tests pass. The hidden tests check many more cases.")\n'},
            {'cell_type': 'markdown',
             'grade_id': 'predict_text',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'markdown',
                                       'checksum': 'e84594449358506fedc76b9754f17409',
                                       'grade': False,
                                       'grade_id': 'predict_text',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': '## 2. One-vs-rest prediction (2 points)\n'
                       '\n'
                       'Predict the class whose perceptron gives the **largest raw score** `w_k·x + b_k`, even when '
                       'every\n'
                       'score is negative. Ties go to the first class (as `np.argmax` does).'},
            {'cell_type': 'code',
             'grade_id': 'ovr_predict',
             'metadata': {'deletable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': 'a3abb1855c6492658e557dbb412c3d54',
                                       'grade': False,
                                       'grade_id': 'ovr_predict',
                                       'locked': False,
                                       'schema_version': 3,
                                       'solution': True,
                                       'task': False}},
             'role': 'solution',
             'source': 'def ovr_predict(W, b, classes, X):\n'
                       '    """Labels classes[argmax_k (W[k]·x + b[k])] of every row of X.\n'
                       '\n'
                       '    Parameters\n'
                       '    ----------\n'
                       '    W : ndarray, shape (K, d)\n'
                       '    b : ndarray, shape (K,)\n'
                       '    classes : ndarray, shape (K,)\n'
                       '    X : array_like, shape (n, d)\n'
                       '\n'
                       '    Returns\n'
                       '    -------\n'
                       '    ndarray, shape (n,)\n'
                       '        Entries taken from classes.\n'
                       '    """\n'
                       '    # YOUR CODE HERE\n'
                       '    raise NotImplementedError("write ovr_predict: see its docstring")'},
            {'cell_type': 'code',
             'grade_id': 'test_ovr_predict',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': '258694a11d61d7a428351fb414a789ca',
                                       'grade': True,
                                       'grade_id': 'test_ovr_predict',
                                       'locked': True,
                                       'points': 2,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'tests',
             'source': '# Visible tests: quick hints. Hidden tests compare with the reference on many cases.\n'
                       'W, b = np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([-5.0, -5.0])\n'
                       'assert list(ovr_predict(W, b, np.array(["cat", "dog"]), np.array([[2.0, 1.0], [0.0, 3.0]]))) '
                       '== ["cat", "dog"], \\\n'
                       '    "all scores are negative here: still pick the largest"\n'
                       'print("ovr_predict: the visible tests pass. The hidden tests check many more cases.")\n'},
            {'cell_type': 'markdown',
             'grade_id': 'multiclass_text',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'markdown',
                                       'checksum': '7a97da23dc77d4b3b01bb8fa287fa2e1',
                                       'grade': False,
                                       'grade_id': 'multiclass_text',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': '## 3. The multiclass perceptron (4 points)\n'
                       '\n'
                       'One matrix `W` (and `b`), start at zero. For a row `x` of class index `t` with scores\n'
                       '`s = W x + b`, the *rival* is the highest-scoring class other than `t` (first among ties). It '
                       'is a\n'
                       'mistake iff `s[t] <= s[rival]`; then `W[t] += x`, `b[t] += 1`, `W[rival] -= x`, `b[rival] -= '
                       '1`.\n'
                       'Stop after a clean epoch or `max_epochs`.'},
            {'cell_type': 'code',
             'grade_id': 'multiclass_train',
             'metadata': {'deletable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': 'c96f1ceb263f30a53f4fca42645a8423',
                                       'grade': False,
                                       'grade_id': 'multiclass_train',
                                       'locked': False,
                                       'schema_version': 3,
                                       'solution': True,
                                       'task': False}},
             'role': 'solution',
             'source': 'def multiclass_train(X, y, max_epochs):\n'
                       '    """The single-matrix multiclass perceptron with biases.\n'
                       '\n'
                       '    Parameters\n'
                       '    ----------\n'
                       '    X : array_like, shape (n, d)\n'
                       '    y : array_like, shape (n,), at least two classes\n'
                       '    max_epochs : int >= 1\n'
                       '\n'
                       '    Returns\n'
                       '    -------\n'
                       '    W : ndarray of float, shape (K, d)\n'
                       '    b : ndarray of float, shape (K,)\n'
                       '        Row k belongs to classes[k], classes = np.unique(y).\n'
                       '    """\n'
                       '    # YOUR CODE HERE\n'
                       '    raise NotImplementedError("write multiclass_train: see its docstring")'},
            {'cell_type': 'code',
             'grade_id': 'test_multiclass_train',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': '190fb7f9a45254054f162ab0af99775c',
                                       'grade': True,
                                       'grade_id': 'test_multiclass_train',
                                       'locked': True,
                                       'points': 4,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'tests',
             'source': '# Visible tests: quick hints. Hidden tests compare with the reference on many cases.\n'
                       'X = np.array([[0.0, 3.0], [3.0, 0.0], [-3.0, -3.0]])\n'
                       'y = np.array([0, 1, 2])\n'
                       'W, b = multiclass_train(X, y, max_epochs=50)\n'
                       'assert W.shape == (3, 2), "W has one row per class"\n'
                       'assert list(np.argmax(X @ W.T + b, axis=1)) == [0, 1, 2], "after training, each point scores '
                       'highest for its own class"\n'
                       'assert np.allclose(W.sum(axis=0), 0) and np.isclose(b.sum(), 0), "each update adds x to one '
                       'row and subtracts it from another"\n'
                       'print("multiclass_train: the visible tests pass. The hidden tests check many more cases.")\n'}],
  'notebook': 'multiclass'},
 {'assignment': '06_limitations',
  'cells': [{'cell_type': 'markdown',
             'grade_id': 'intro',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'markdown',
                                       'checksum': 'd4bd20a1d8e51f9b93a83d7d07f14cd7',
                                       'grade': False,
                                       'grade_id': 'intro',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': '# Assignment 6: beyond linear separability\n'
                       '\n'
                       'Lectures: `notebooks/06_beyond_linear.ipynb` and `notebooks/07_margins.ipynb`. XOR defeats the '
                       'perceptron; a feature map or a kernel\n'
                       'rescues it; on data that are not separable, averaging steadies the weights that the\n'
                       'perceptron keeps changing (lecture 06 measures when that helps on held-out data, and when '
                       'not).\n'
                       "Then two steps beyond the perceptron: stochastic gradient descent on the SVM's hinge loss, "
                       'and\n'
                       'the forward pass of a small neural network that computes XOR.\n'
                       '\n'
                       '**Rules of the game**\n'
                       '\n'
                       '- Labels are `-1` / `+1`; points are the rows of an `(n, d)` array; `sign(0) = +1`.\n'
                       '- Write your code between the lines of each function (replace the line `raise '
                       'NotImplementedError(...)`); keep the function names and signatures.\n'
                       '- Use NumPy. While grading, the reference library `perceptron_course` (except its data sets '
                       "and plots) and scikit-learn's linear models are not available: a part that imports them fails "
                       'and scores 0. Helpers that a part explicitly allows are fine.\n'
                       '- Run the test cell under each part: it gives quick hints. More tests, hidden from you, decide '
                       'the grade: they check your function on many random cases and on the edge cases (a score of '
                       'exactly 0, one point, one feature, integer input, data that never converge).\n'
                       '- Before submitting: *Kernel → Restart Kernel and Run All Cells*, and check that nothing '
                       'fails.\n'},
            {'cell_type': 'code',
             'grade_id': 'setup',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': '349b3297aacb5fd09d22117940a10469',
                                       'grade': False,
                                       'grade_id': 'setup',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': 'import numpy as np'},
            {'cell_type': 'markdown',
             'grade_id': 'features_text',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'markdown',
                                       'checksum': 'e30af7898ca14bfc4dcc6b8c51ae3e13',
                                       'grade': False,
                                       'grade_id': 'features_text',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': '## 1. A feature map for XOR (2 points)\n'
                       '\n'
                       'The XOR points `(±1, ±1)` are labelled `+1` when the two coordinates have opposite signs. Map\n'
                       'each point `(x1, x2)` to a few features so that the mapped points are linearly separable (with '
                       'a\n'
                       'bias). Each row must depend only on its own point. The grade uses **noisy** XOR clusters\n'
                       'around the corners, not only the four exact corners: the visible test checks one such sample.'},
            {'cell_type': 'code',
             'grade_id': 'xor_features',
             'metadata': {'deletable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': '2f58de93dfa5395a4b0027c974fd9bfd',
                                       'grade': False,
                                       'grade_id': 'xor_features',
                                       'locked': False,
                                       'schema_version': 3,
                                       'solution': True,
                                       'task': False}},
             'role': 'solution',
             'source': 'def xor_features(X):\n'
                       '    """A point-wise feature map under which XOR becomes linearly separable.\n'
                       '\n'
                       '    Parameters\n'
                       '    ----------\n'
                       '    X : array_like, shape (n, 2)\n'
                       '\n'
                       '    Returns\n'
                       '    -------\n'
                       '    ndarray of float, shape (n, k)\n'
                       '        One row of features per point.\n'
                       '    """\n'
                       '    # YOUR CODE HERE\n'
                       '    raise NotImplementedError("write xor_features: see its docstring")'},
            {'cell_type': 'code',
             'grade_id': 'test_xor_features',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': '0b493b8bf3e3929fd5019e968f116f9e',
                                       'grade': True,
                                       'grade_id': 'test_xor_features',
                                       'locked': True,
                                       'points': 2,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'tests',
             'source': '# Visible tests: quick hints. Hidden tests compare with the reference on many cases.\n'
                       'X = np.array([[1.0, 1.0], [-1.0, -1.0], [1.0, -1.0], [-1.0, 1.0]])\n'
                       'features = xor_features(X)\n'
                       'assert features.ndim == 2 and features.shape[0] == 4, "one row of features per point"\n'
                       '# The grade uses noisy clusters around the corners: a map that works only on the exact corners '
                       'fails.\n'
                       'from scipy.optimize import linprog\n'
                       'from perceptron_course.datasets import xor\n'
                       'X_noisy, y_noisy = xor(3, noise=0.15, seed=0)\n'
                       'mapped = np.asarray(xor_features(X_noisy), dtype=float)\n'
                       'rows = -y_noisy[:, None] * np.hstack([mapped, np.ones((len(mapped), 1))])  # y (w·phi + b) >= '
                       '1 for all points\n'
                       'separable = linprog(np.zeros(rows.shape[1]), A_ub=rows, b_ub=-np.ones(len(rows)), '
                       'bounds=(None, None)).status == 0\n'
                       'assert separable, "on noisy XOR clusters the mapped points must be linearly separable, not '
                       'only on the exact corners"\n'
                       'assert np.allclose(xor_features(X_noisy[:1]), mapped[:1]), "each point must be mapped on its '
                       'own"\n'
                       'print("xor_features: the visible tests pass. The hidden tests check many more cases.")\n'},
            {'cell_type': 'markdown',
             'grade_id': 'why_xor_text',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'markdown',
                                       'checksum': 'fff3dc4a598d17a83784f0d99446d27f',
                                       'grade': False,
                                       'grade_id': 'why_xor_text',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': '## 2. In your own words (2 points, graded by hand)\n'
                       '\n'
                       'Why does no line $w \\cdot x + b = 0$ separate the four XOR points? Give a short argument '
                       '(three to\n'
                       'six sentences), for example by adding up inequalities.'},
            {'cell_type': 'markdown',
             'grade_id': 'why_xor',
             'metadata': {'deletable': False,
                          'nbgrader': {'cell_type': 'markdown',
                                       'checksum': 'd5b1df0cbc28bd5d6acd5c803ff1b1fc',
                                       'grade': True,
                                       'grade_id': 'why_xor',
                                       'locked': False,
                                       'points': 2,
                                       'schema_version': 3,
                                       'solution': True,
                                       'task': False}},
             'role': 'answer',
             'source': 'YOUR ANSWER HERE'},
            {'cell_type': 'markdown',
             'grade_id': 'kernel_text',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'markdown',
                                       'checksum': '7b5982ccf8383b9e854117e6f264ac7a',
                                       'grade': False,
                                       'grade_id': 'kernel_text',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': '## 3. The kernel perceptron (4 points)\n'
                       '\n'
                       'Without a bias, `w = sum_i alpha_i y_i phi(x_i)`, so the score of point `j` is\n'
                       '`sum_i alpha_i y_i K[i, j]` where `K` is the Gram matrix. Start from `alpha = 0`, visit the '
                       'points\n'
                       'in order; a mistake (`y_j * score <= 0`) on point `j` adds 1 to `alpha_j`. Stop after a clean '
                       'epoch\n'
                       'or `max_epochs`.'},
            {'cell_type': 'code',
             'grade_id': 'kernel_perceptron',
             'metadata': {'deletable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': 'a0ccd126607b3be4941174b9b0527f6e',
                                       'grade': False,
                                       'grade_id': 'kernel_perceptron',
                                       'locked': False,
                                       'schema_version': 3,
                                       'solution': True,
                                       'task': False}},
             'role': 'solution',
             'source': 'def kernel_perceptron(K, y, max_epochs):\n'
                       '    """The dual perceptron on a precomputed Gram matrix, no bias.\n'
                       '\n'
                       '    Parameters\n'
                       '    ----------\n'
                       '    K : array_like, shape (n, n)\n'
                       '        K[i, j] = kernel(x_i, x_j).\n'
                       '    y : array_like of -1/+1, shape (n,)\n'
                       '    max_epochs : int >= 1\n'
                       '\n'
                       '    Returns\n'
                       '    -------\n'
                       '    alpha : ndarray of int, shape (n,)\n'
                       '        alpha[j] = number of mistakes made on point j.\n'
                       '    """\n'
                       '    # YOUR CODE HERE\n'
                       '    raise NotImplementedError("write kernel_perceptron: see its docstring")'},
            {'cell_type': 'code',
             'grade_id': 'test_kernel_perceptron',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': '5f02c6242f5f44b1ee95bbe952d5c302',
                                       'grade': True,
                                       'grade_id': 'test_kernel_perceptron',
                                       'locked': True,
                                       'points': 4,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'tests',
             'source': '# Visible tests: quick hints. Hidden tests compare with the reference on many cases.\n'
                       'X = np.array([[1.0, 1.0], [-1.0, -1.0], [1.0, -1.0], [-1.0, 1.0]])\n'
                       'y = np.array([-1, -1, 1, 1])\n'
                       'K = (X @ X.T + 1.0) ** 2\n'
                       'alpha = kernel_perceptron(K, y, max_epochs=20)\n'
                       'assert alpha.shape == (4,) and np.all(alpha >= 0), "alpha counts mistakes: one non-negative '
                       'integer per point"\n'
                       'scores = K @ (alpha * y)\n'
                       'assert np.all(y * scores > 0), "with the polynomial kernel (x·z + 1)^2 the perceptron '
                       'separates XOR"\n'
                       'print("kernel_perceptron: the visible tests pass. The hidden tests check many more cases.")\n'},
            {'cell_type': 'markdown',
             'grade_id': 'averaged_text',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'markdown',
                                       'checksum': '4cad24fe0e6ac01a605613879b92e91a',
                                       'grade': False,
                                       'grade_id': 'averaged_text',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': '## 4. The averaged perceptron (3 points)\n'
                       '\n'
                       'Run the perceptron with a bias (rule `<= 0`, rows in order) for exactly `epochs` passes, '
                       '**without\n'
                       'stopping early**, and return the average of `(w, b)` taken after every visit of every point\n'
                       '(`epochs * n` visits in all).'},
            {'cell_type': 'code',
             'grade_id': 'averaged_perceptron',
             'metadata': {'deletable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': 'ce3f881a2663b938dee5a2dcbfaa2cac',
                                       'grade': False,
                                       'grade_id': 'averaged_perceptron',
                                       'locked': False,
                                       'schema_version': 3,
                                       'solution': True,
                                       'task': False}},
             'role': 'solution',
             'source': 'def averaged_perceptron(X, y, epochs):\n'
                       '    """The averaged perceptron (Freund & Schapire 1999).\n'
                       '\n'
                       '    Parameters\n'
                       '    ----------\n'
                       '    X : array_like, shape (n, d)\n'
                       '    y : array_like of -1/+1, shape (n,)\n'
                       '    epochs : int >= 1, the exact number of passes\n'
                       '\n'
                       '    Returns\n'
                       '    -------\n'
                       '    w_avg : ndarray of float, shape (d,)\n'
                       '    b_avg : float\n'
                       "        The means of w and b over the epochs * n visits, each taken after the visit's update.\n"
                       '    """\n'
                       '    # YOUR CODE HERE\n'
                       '    raise NotImplementedError("write averaged_perceptron: see its docstring")'},
            {'cell_type': 'code',
             'grade_id': 'test_averaged_perceptron',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': '8b098b29478d44a9b2eaf941ad9c4453',
                                       'grade': True,
                                       'grade_id': 'test_averaged_perceptron',
                                       'locked': True,
                                       'points': 3,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'tests',
             'source': '# Visible tests: quick hints. Hidden tests compare with the reference on many cases.\n'
                       'w_avg, b_avg = averaged_perceptron(np.array([[1.0, 0.0]]), np.array([1]), epochs=2)\n'
                       'assert np.allclose(w_avg, [1.0, 0.0]) and np.isclose(b_avg, 1.0), "one update on the first '
                       'visit, then (1, 0), 1 for both visits"\n'
                       'w_avg, b_avg = averaged_perceptron(np.array([[1.0], [-1.0]]), np.array([1, 1]), epochs=1)\n'
                       'assert np.allclose(w_avg, [0.5]) and np.isclose(b_avg, 1.5), "visit 1: w = 1, b = 1; visit 2 '
                       'has score 0, a mistake: w = 0, b = 2; the means are 0.5 and 1.5"\n'
                       'print("averaged_perceptron: the visible tests pass. The hidden tests check many more '
                       'cases.")\n'},
            {'cell_type': 'markdown',
             'grade_id': 'hinge_text',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'markdown',
                                       'checksum': '0a8e803474bb0743e9dcf7bbbbfae4d0',
                                       'grade': False,
                                       'grade_id': 'hinge_text',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': '## 5. The hinge loss beside the perceptron (3 points)\n'
                       '\n'
                       'With the functional margin $z = y\\,(w \\cdot x + b)$, the perceptron is stochastic '
                       '(sub)gradient descent\n'
                       'on the perceptron criterion $\\max(0, -z)$: it steps only when $z \\le 0$. The soft-margin SVM '
                       'charges,\n'
                       'for each point, $\\frac{\\lambda}{2}\\|w\\|^2 + \\max(0, 1 - z)$: the hinge also charges '
                       'points that are\n'
                       'correct but closer than functional margin 1, and the term $\\frac{\\lambda}{2}\\|w\\|^2$ pulls '
                       '$w$ (not $b$)\n'
                       'toward 0 at every visit. With learning rate $\\eta$, one visit of $(x, y)$ computes $z$ with '
                       'the current\n'
                       'weights, then\n'
                       '\n'
                       "- if $z \\le 1$ (the kink $z = 1$ included, as the perceptron's $\\le 0$): $w \\leftarrow (1 - "
                       '\\eta\\lambda)\\,w + \\eta\\,y\\,x$ and $b \\leftarrow b + \\eta\\,y$;\n'
                       '- otherwise: $w \\leftarrow (1 - \\eta\\lambda)\\,w$ and $b$ is unchanged.\n'
                       '\n'
                       'Start from $w = 0$, $b = 0$ and visit the rows in order for exactly `epochs` passes (no early '
                       'stop:\n'
                       'the hinge and the $\\lambda$ term keep acting after every point is correct). With $\\lambda = '
                       '0$ and the\n'
                       'threshold 0 instead of 1 this would be the perceptron.\n'
                       '\n'
                       "**$\\lambda$ and lecture 7's $C$.** Averaged over the $n$ points, the loss is\n"
                       '$\\frac{\\lambda}{2}\\|w\\|^2 + \\frac1n \\sum_i \\max(0, 1 - z_i)$, which is $\\lambda$ times '
                       "the soft-margin SVM's objective\n"
                       '$\\frac12\\|w\\|^2 + C \\sum_i \\max(0, 1 - z_i)$ with $C = \\frac{1}{n\\lambda}$. So a small '
                       '$\\lambda$ is a large $C$ (a harder\n'
                       'margin), and $\\lambda = 0$ drops the $\\frac12\\|w\\|^2$ term that makes the SVM pick the '
                       'widest band.'},
            {'cell_type': 'code',
             'grade_id': 'hinge_sgd',
             'metadata': {'deletable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': '478b7ad28e08c0dfa3ca719cf8bb6399',
                                       'grade': False,
                                       'grade_id': 'hinge_sgd',
                                       'locked': False,
                                       'schema_version': 3,
                                       'solution': True,
                                       'task': False}},
             'role': 'solution',
             'source': 'def hinge_sgd(X, y, learning_rate, lam, epochs):\n'
                       '    """Stochastic subgradient descent on the regularised hinge loss, one point at a time.\n'
                       '\n'
                       '    Parameters\n'
                       '    ----------\n'
                       '    X : array_like, shape (n, d)\n'
                       '    y : array_like of -1/+1, shape (n,)\n'
                       '    learning_rate : float > 0 (eta)\n'
                       '    lam : float >= 0, with learning_rate * lam <= 1\n'
                       '    epochs : int >= 1, the exact number of passes\n'
                       '\n'
                       '    Returns\n'
                       '    -------\n'
                       '    w : ndarray of float, shape (d,)\n'
                       '    b : float\n'
                       '    n_steps : int\n'
                       "        The number of visits with z = y (w·x + b) <= 1 (computed before the visit's update).\n"
                       '    """\n'
                       '    # YOUR CODE HERE\n'
                       '    raise NotImplementedError("write hinge_sgd: see its docstring")'},
            {'cell_type': 'code',
             'grade_id': 'test_hinge_sgd',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': 'd53415f7908a98cc63578a9c53b68e9b',
                                       'grade': True,
                                       'grade_id': 'test_hinge_sgd',
                                       'locked': True,
                                       'points': 3,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'tests',
             'source': '# Visible tests: quick hints. Hidden tests compare with the reference on many cases.\n'
                       'X, y = np.array([[1.0, 0.0], [-1.0, 0.0]]), np.array([1, -1])\n'
                       'w, b, n_steps = hinge_sgd(X, y, 0.5, 0.0, 3)\n'
                       'assert np.allclose(w, [2.0, 0.0]) and np.isclose(b, 0.0) and n_steps == 4, \\\n'
                       '    "after epoch 1 every point is correct (the perceptron stops), but z = 1 is still charged: '
                       'two more steps, w = (2, 0), b = 0"\n'
                       'w, b, n_steps = hinge_sgd(X, y, 0.5, 0.5, 1)\n'
                       'assert np.allclose(w, [0.875, 0.0]) and np.isclose(b, 0.0) and n_steps == 2, \\\n'
                       '    "each visit shrinks w by 1 - learning_rate * lam = 0.75 before its step: w = 0.75 * (0.5, '
                       '0) + 0.5 * (1, 0)"\n'
                       'print("hinge_sgd: the visible tests pass. The hidden tests check many more cases.")\n'},
            {'cell_type': 'markdown',
             'grade_id': 'mlp_text',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'markdown',
                                       'checksum': '0dc5d71682fb056b28ce70ead2a6bffe',
                                       'grade': False,
                                       'grade_id': 'mlp_text',
                                       'locked': True,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'locked',
             'source': '## 6. On the road to neural networks: a forward pass (2 points)\n'
                       '\n'
                       'No line separates XOR, but two layers of units do. A network with one hidden layer of $h$ '
                       'units\n'
                       'computes, for a point $x$ of $d$ features,\n'
                       '\n'
                       '$$\\mathrm{hidden} = \\tanh(W x + c), \\qquad f(x) = v \\cdot \\mathrm{hidden} + d_0,$$\n'
                       '\n'
                       'with $W$ of shape $(h, d)$, $c$ and $v$ of shape $(h,)$ and a number $d_0$ (the argument `d`), '
                       'and\n'
                       'predicts $\\mathrm{sign}(f(x))$ with $\\mathrm{sign}(0) = +1$. Compute this for every row of '
                       '`X` at once. The\n'
                       'visible test gives weights with which a 2-2-1 network computes XOR: the first hidden unit is '
                       'close to\n'
                       '$+1$ when $x_1 + x_2 > -1$, the second when $x_1 + x_2 > 1$.'},
            {'cell_type': 'code',
             'grade_id': 'mlp_forward',
             'metadata': {'deletable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': 'd1d2ba95cc25409437882bd6648ab464',
                                       'grade': False,
                                       'grade_id': 'mlp_forward',
                                       'locked': False,
                                       'schema_version': 3,
                                       'solution': True,
                                       'task': False}},
             'role': 'solution',
             'source': 'def mlp_forward(X, W, c, v, d):\n'
                       '    """The forward pass of a network with one tanh hidden layer, for every row of X.\n'
                       '\n'
                       '    Parameters\n'
                       '    ----------\n'
                       '    X : array_like, shape (n, n_features)\n'
                       '    W : array_like, shape (h, n_features)\n'
                       '    c : array_like, shape (h,)\n'
                       '    v : array_like, shape (h,)\n'
                       '    d : float\n'
                       '\n'
                       '    Returns\n'
                       '    -------\n'
                       '    hidden : ndarray of float64, shape (n, h)\n'
                       '        tanh(W x_i + c) in row i.\n'
                       '    scores : ndarray of float64, shape (n,)\n'
                       '        v · hidden[i] + d.\n'
                       '    labels : ndarray of int, shape (n,)\n'
                       '        sign(scores) with sign(0) = +1: each -1 or +1.\n'
                       '\n'
                       "    Compute in float64, NumPy's default float (float32 is not enough): hidden and scores\n"
                       "    are compared with the reference's to within 1e-9.\n"
                       '    """\n'
                       '    # YOUR CODE HERE\n'
                       '    raise NotImplementedError("write mlp_forward: see its docstring")'},
            {'cell_type': 'code',
             'grade_id': 'test_mlp_forward',
             'metadata': {'deletable': False,
                          'editable': False,
                          'nbgrader': {'cell_type': 'code',
                                       'checksum': 'cdbb6b57168e92fbac5ffb80c18c75c8',
                                       'grade': True,
                                       'grade_id': 'test_mlp_forward',
                                       'locked': True,
                                       'points': 2,
                                       'schema_version': 3,
                                       'solution': False,
                                       'task': False}},
             'role': 'tests',
             'source': '# Visible tests: quick hints. Hidden tests compare with the reference on many cases.\n'
                       'X = np.array([[1.0, 1.0], [-1.0, -1.0], [1.0, -1.0], [-1.0, 1.0]])\n'
                       'W, c, v, d = np.array([[5.0, 5.0], [5.0, 5.0]]), np.array([5.0, -5.0]), np.array([1.0, -1.0]), '
                       '-1.0\n'
                       'hidden, scores, labels = mlp_forward(X, W, c, v, d)\n'
                       'assert np.shape(hidden) == (4, 2) and np.shape(scores) == (4,), "hidden has one row per point '
                       'and one column per unit"\n'
                       'assert np.allclose(hidden[0], np.tanh([15.0, 5.0])), "hidden[0] = tanh(W (1, 1) + c) = '
                       'tanh((15, 5))"\n'
                       'assert list(labels) == [-1, -1, 1, 1], "these weights compute XOR: +1 exactly when the '
                       'coordinates have opposite signs"\n'
                       'assert list(mlp_forward(X, W, c, np.zeros(2), 0.0)[2]) == [1, 1, 1, 1], "with v = 0 and d = 0 '
                       'every score is 0: sign(0) = +1"\n'
                       'print("mlp_forward: the visible tests pass. The hidden tests check many more cases.")\n'}],
  'notebook': 'limitations'}]
