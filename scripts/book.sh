#!/usr/bin/env bash
# Build the course's website into book/_build/html (git-ignored) from the lecture and assignment notebooks,
# with their stored outputs (nothing is executed). Needs the `book` extra (scripts/setup.sh installs it) and npm's
# mathjax (package.json; scripts/setup.sh runs npm install). Extra arguments go to sphinx-build (e.g. -E to
# rebuild every page). Open book/_build/html/index.html, or deploy that folder as a static site (docs/hosting.md).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON=${PYTHON:-.venv/bin/python}
[ -x "$PYTHON" ] || PYTHON=python3
exec "$PYTHON" -m sphinx -b html -d book/_build/doctrees --fail-on-warning --keep-going "$@" book book/_build/html
