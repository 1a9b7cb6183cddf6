"""Eve's files are broken in three ways; the grader must report each and go on.

- 01: the file is not JSON at all (a crashed editor, a stray save);
- 02: a syntax error in the training cell (that part scores 0, the step is still graded);
- 03: she handed in her 02 notebook under the 03 folder (wrong assignment).
"""

BASE = "solutions"
ASSIGNMENTS = ["01_geometry", "02_algorithm", "03_worked_example"]

FILES = {
    "01_geometry": {"geometry.ipynb": '{"cells": [{"cell_type": "code", "source": "def augment(X):'},
}

CELLS = {
    "02_algorithm": {
        "train_perceptron": '''def train_perceptron(X, y, max_epochs)
    return np.zeros(X.shape[1]), 0.0, 0, True''',
    },
}


def _swap_for_the_algorithm_notebook(notebook):
    """Replace the 03 notebook's cells with cells of another assignment (grade ids unknown to 03)."""
    import nbformat

    other = nbformat.v4.new_code_cell("def perceptron_step(w, b, x, y):\n    return w, b, False")
    other.metadata["nbgrader"] = {"grade": False, "grade_id": "perceptron_step", "locked": False,
                                  "schema_version": 3, "solution": True, "task": False}
    notebook.cells = [other]
    return notebook


EDITS = {"03_worked_example": _swap_for_the_algorithm_notebook}

# What Eve should get (tests/conftest.py, expected_example_grades): two hand-ins reported as failed, with this
# in the reason; in 02, the syntax error costs its cell's test and choose_epoch_cap's, which calls train_perceptron.
FAILS = {"01_geometry": "not a valid notebook", "03_worked_example": "looks like the notebook of 02_algorithm"}
LOSES = {"02_algorithm": ["test_train_perceptron", "test_choose_epoch_cap"]}
