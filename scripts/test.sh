#!/usr/bin/env bash
# Set up .venv from nothing if needed, then run every test (library, notebooks, grading).
# --dist loadfile keeps each file on one worker: a notebook's cells share a kernel, and the
# end-to-end grading fixture runs once.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
export MPLBACKEND=Agg PYTHONHASHSEED=0
# A fresh temporary folder every run, removed with rm -rf first: hostile fixtures nest folders deeper
# than Python's recursive clean-up (pytest's own, in /tmp/pytest-of-$USER) can remove.
basetemp="${TMPDIR:-/tmp}/perceptron-course-tests-$(id -u)"
rm -rf -- "$basetemp"
exec .venv/bin/python -m pytest -n 2 --dist loadfile --basetemp "$basetemp" "$@"
