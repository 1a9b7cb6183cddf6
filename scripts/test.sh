#!/usr/bin/env bash
# Set up .venv from nothing if needed, then run every test (library, notebooks, grading).
# --dist loadfile keeps each file on one worker: a notebook's cells share a kernel, and the
# end-to-end grading fixture runs once.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
export MPLBACKEND=Agg PYTHONHASHSEED=0
# A fresh temporary folder for every run (pytest's own, /tmp/pytest-of-$USER, is shared, and its recursive
# clean-up fails on the deep folders hostile fixtures make); removed with rm -rf after a green run, kept
# after a red one for its screenshots and logs.
basetemp=$(mktemp -d "${TMPDIR:-/tmp}/perceptron-course-tests-XXXXXX")
status=0
# The course is consistent (term file, checks and parts, points, registrations, release/, limits): one screen if not.
.venv/bin/perceptron-course check || status=$?
[ "$status" -eq 0 ] && .venv/bin/python -m pytest -n 2 --dist loadfile --basetemp "$basetemp" "$@" || status=$?
if [ "$status" -eq 0 ]; then rm -rf -- "$basetemp"; else echo "test files kept in $basetemp" >&2; fi
exit "$status"
