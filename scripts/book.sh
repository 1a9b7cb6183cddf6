#!/usr/bin/env bash
# Build the course's website into book/_build/html (git-ignored) from the notebooks of notebooks/ and release/, with
# their stored outputs (nothing is executed). Needs the `book` extra (scripts/setup.sh installs it with the dev extra;
# or pip install ".[book]") and npm's mathjax (package.json), which this script installs with npm when it is missing.
# Extra arguments go to sphinx-build (-E rebuilds every page). Then open book/_build/html/index.html, or deploy that
# folder as a static site (docs/hosting.md, "The course's website").
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON=${PYTHON:-.venv/bin/python}
[ -x "$PYTHON" ] || PYTHON=python3
if [ ! -f node_modules/mathjax/es5/tex-chtml.js ]; then
    command -v npm >/dev/null 2>&1 || { echo "book.sh: MathJax comes from npm, which is missing (apt-get install npm)" >&2; exit 1; }
    echo "book.sh: installing MathJax from npm (package.json) into node_modules/" >&2
    npm install --no-audit --no-fund --silent >&2
fi
"$PYTHON" -c "import myst_nb, sphinx_book_theme" 2>/dev/null \
    || { echo "book.sh: the book's tools are missing: $PYTHON -m pip install -e '.[book]'" >&2; exit 1; }
exec "$PYTHON" -m sphinx -b html -d book/_build/doctrees --fail-on-warning --keep-going "$@" book book/_build/html
