#!/usr/bin/env bash
# Set up .venv from nothing if needed, then run every test: the linter, the course's consistency check, the
# course's tests (library, notebooks, assignments: tests/ and notebooks/), and the grader's own (grader/tests/, on
# fixture courses of its own). --dist loadgroup keeps each file on one worker (a notebook's cells share a kernel) unless its
# tests declare groups (grader/course_grader/testing/xdist_units.py).
# Three workers on two cores: a worker often waits (a kernel starting, a deadline, a program's start), and a third keeps
# both cores busy (the grader's suite alone: 86% busy on -n 2, 98% on -n 3; BENCHMARKS.md, "The test commands").
# `--course` first: the course's part only (ruff, check, the course's tests: what an instructor runs after an edit;
# further arguments go to pytest, e.g. `bash scripts/test.sh --course notebooks/01_geometry.ipynb`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
grader=yes
if [ "${1:-}" = "--course" ]; then grader=no; shift; fi
bash scripts/setup.sh
export MPLBACKEND=Agg PYTHONHASHSEED=0
# A fresh temporary folder for every run (pytest's own, /tmp/pytest-of-$USER, is shared, and its recursive
# clean-up fails on the deep folders hostile fixtures make); removed after a green run, kept after a red one.
basetemp=$(mktemp -d "${TMPDIR:-/tmp}/perceptron-course-tests-XXXXXX")
status=0
.venv/bin/ruff check . || status=$?
# The course is consistent (term file, checks and parts, points, registrations, release/, limits): one screen if not.
[ "$status" -eq 0 ] && { .venv/bin/perceptron-course check || status=$?; }
[ "$status" -eq 0 ] && { .venv/bin/python -m pytest -n 3 --basetemp "$basetemp/course" "$@" || status=$?; }
if [ "$status" -eq 0 ] && [ "$grader" = yes ]; then
    echo "---------------------------------------- the grader's tests (grader/tests, run in grader/)"
    (cd grader && ../.venv/bin/python -m pytest -n 3 --basetemp "$basetemp/grader" "$@") || status=$?
fi
if [ "$status" -eq 0 ]; then rm -rf -- "$basetemp"; else echo "test files kept in $basetemp" >&2; fi
exit "$status"
