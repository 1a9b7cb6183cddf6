#!/usr/bin/env bash
# The next term, rehearsed: make an instructor's ordinary edits to a scratch copy of the course, by the
# documented routes, and run the test files there one at a time. Every failure left is a real problem
# of the edited course (or a test that still hard-codes this term's course: fix the test, not the edit).
#
#   bash scripts/adopt_check.sh                 # the edits, release, then the fast tests (-m "not slow")
#   bash scripts/adopt_check.sh -m slow         # ... then the slow ones (nbgrader runs: tens of minutes)
#   ADOPT_DIR=/tmp/adopt bash scripts/adopt_check.sh --edit-only   # only make the edited copy
#
# The edits (held out from the tests, which must not know them):
#   - drop the assignment 05_multiclass (source/ and release/; its lecture notebook stays: a lecture is
#     still taught when its graded assignment is dropped);
#   - a header notebook on top of every released notebook (nbgrader's IncludeHeaderFooter);
#   - the late policy "zero", the per-cell timeout 20 s, and the course id (in term.toml where the course has one);
#   - one part's points changed (01_geometry test_augment: 2 -> 3);
#   - a new autograded part in 01_geometry (scores(w, b, X), with its hidden check);
#   - release/ regenerated with `perceptron-course release`.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
python="$repo/.venv/bin/python"
adopt=${ADOPT_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/adopt-XXXXXX")}
edit_only=0
if [ "${1:-}" = "--edit-only" ]; then edit_only=1; shift; fi

# A copy of what git tracks (no student data, no .venv), with uncommitted edits of tracked files.
rm -rf -- "$adopt/course"
mkdir -p "$adopt/course"
(cd "$repo" && git ls-files -z | xargs -0 cp --parents -t "$adopt/course")
cd "$adopt/course"

# 1. Drop an assignment. Its lecture stays (the topic is still taught), without its pointer to the assignment.
rm -rf source/05_multiclass release/05_multiclass
"$python" - <<'PY'
import re
from pathlib import Path

import nbformat

path = Path("notebooks/05_multiclass.ipynb")
notebook = nbformat.reads(path.read_text(encoding="utf-8"), as_version=4)
last = notebook.cells[-1]
last.source, count = re.subn(r"\*\*Assignment 5\*\*.*", "There is no graded assignment on this lecture this term.", last.source, flags=re.S)
assert count == 1, "the lecture 05_multiclass no longer ends with its assignment's pointer: update scripts/adopt_check.sh"
path.write_text(nbformat.writes(notebook) + "\n", encoding="utf-8")
PY

# 2-4. The term settings: header, late policy, timeout, course id (the lines an instructor edits), in term.toml
# where the course has one (and the dropped assignment's [[assignments]] block), else in nbgrader_config.py.
"$python" - <<'EOF'
import re
from pathlib import Path

import nbformat
from nbformat.v4 import new_markdown_cell, new_notebook

header = new_notebook(cells=[new_markdown_cell("**Course: Machine learning, Spring 2027.** Instructor: A. Adopter. "
                                               "Hand in through the hub before each due date.")])
nbformat.write(header, "header.ipynb")
if Path("term.toml").is_file():
    settings = Path("term.toml")
    edits = ((r'(?m)^policy = "none"', 'policy = "zero"'), (r"(?m)^cell_seconds = 15", "cell_seconds = 20"),
             (r'(?m)^id = "perceptron"', 'id = "ml-spring-2027"'), (r'(?m)^header = ""', 'header = "header.ipynb"'),
             (r'(?m)^\[\[assignments\]\]\nname = "05_multiclass"\n(?:(?!\[)[^\n]*\n)*', ""))
else:
    settings = Path("nbgrader_config.py")
    edits = ((r'c\.LateSubmissionPlugin\.penalty_method = "none"', 'c.LateSubmissionPlugin.penalty_method = "zero"'),
             (r"c\.Execute\.timeout = 15", "c.Execute.timeout = 20"),
             (r'c\.CourseDirectory\.course_id = "perceptron"', 'c.CourseDirectory.course_id = "ml-spring-2027"'),
             (r"\Z", '\nc.IncludeHeaderFooter.header = "header.ipynb"\n'))
text = settings.read_text(encoding="utf-8")
for old, new in edits:
    text, count = re.subn(old, new, text)
    assert count == 1, f"{settings} no longer has {old!r}: update scripts/adopt_check.sh"
settings.write_text(text, encoding="utf-8")
EOF

# 5-6. One part's points, and a new part with its hidden check beside it (docs/adding-a-part.md).
"$python" - <<'EOF'
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell

path = Path("source/01_geometry/geometry.ipynb")
notebook = nbformat.read(path, as_version=4)
by_id = {cell.metadata.get("nbgrader", {}).get("grade_id"): cell for cell in notebook.cells}
by_id["test_augment"].metadata.nbgrader.points = 3
by_id["augment_text"].source = by_id["augment_text"].source.replace("(2 points)", "(3 points)")


def nbgrader(grade_id, *, grade=False, solution=False, points=None):
    meta = {"grade": grade, "grade_id": grade_id, "locked": not solution, "schema_version": 3, "solution": solution, "task": False}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


notebook.cells += [
    new_markdown_cell("## 5. Scores (1 point)\n\nThe score of `x` is `w·x + b`.", metadata=nbgrader("scores_text")),
    new_code_cell('def scores(w, b, X):\n    """Scores w·x_i + b of every row of X.\n\n    Parameters\n    ----------\n'
                  '    w : array_like, shape (d,)\n    b : float\n    X : array_like, shape (n, d)\n\n    Returns\n    -------\n'
                  '    ndarray of float, shape (n,)\n    """\n    ### BEGIN SOLUTION\n'
                  '    return np.asarray(X, dtype=float) @ np.asarray(w, dtype=float) + b\n    ### END SOLUTION',
                  metadata=nbgrader("scores", solution=True)),
    new_code_cell('# Visible tests: quick hints. Hidden tests compare with the reference on many cases.\n'
                  'assert np.allclose(scores(np.array([1.0, 2.0]), 1.0, np.array([[1.0, 1.0]])), [4.0]), "expected [4]: 1 + 2 + 1"\n'
                  'print("scores: the visible tests pass. The hidden tests check many more cases.")\n\n'
                  '### BEGIN HIDDEN TESTS\nfrom course_grader.checks_api import check_scores\n'
                  'check_scores(scores)\n### END HIDDEN TESTS',
                  metadata=nbgrader("test_scores", grade=True, points=1)),
]
nbformat.write(notebook, path)

checks = Path("source/01_geometry/hidden_checks.py")  # the part's hidden check, beside its notebook
text = checks.read_text(encoding="utf-8")
assert "\nCHECKS = (AUGMENT, PREDICT, SIGNED_DISTANCE, SET_MARGIN)\n" in text, "update scripts/adopt_check.sh: CHECKS of geometry changed"
text = text.replace(
    "\nCHECKS = (AUGMENT, PREDICT, SIGNED_DISTANCE, SET_MARGIN)\n",
    '''

def _scores_cases(rng: np.random.Generator) -> list[Case]:
    cases = [Case((np.array([1.0, 2.0]), 1.0, np.array([[1.0, 1.0]])), "the visible test's point")]
    for _ in range(N_RANDOM_CASES):
        X = random_points(rng)
        cases.append(Case((np.round(rng.normal(size=X.shape[1]), 3), float(np.round(rng.normal(), 3)), X), "random points"))
    return cases


SCORES = Check("scores", ("w", "b", "X"), _scores_cases, geometry.scores, compare_arrays(exact=False, what="an array of shape (n,)"))

CHECKS = (AUGMENT, PREDICT, SIGNED_DISTANCE, SET_MARGIN, SCORES)
''')
checks.write_text(text, encoding="utf-8")
EOF

# 7. release/ regenerated the documented way, and the term's edits committed (the tests read git).
PYTHONPATH="$adopt/course" "$python" -m course_grader.trusted.cli release --root .
git init -q && git add -A && git -c user.name=adopter -c user.email=adopter@example.org commit -qm "The next term's edits"
echo "edited course: $adopt/course"
[ "$edit_only" -eq 1 ] && exit 0

# The tests, one file at a time (the copy's own perceptron_course first on the path).
export MPLBACKEND=Agg PYTHONHASHSEED=0 PYTHONPATH="$adopt/course"
failed=()
for file in tests/*/test_*.py; do
    echo "=== $file"
    "$python" -m pytest -q -m "not slow" --basetemp "$adopt/tmp" "$file" "$@" || failed+=("$file")
done
if [ "${#failed[@]}" -eq 0 ]; then echo "adopt_check: every test file passes on the edited course"; exit 0; fi
printf 'adopt_check: failing on the edited course: %s\n' "${failed[@]}" >&2
exit 1
