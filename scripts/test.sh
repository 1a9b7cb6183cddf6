#!/usr/bin/env bash
# Set up .venv from nothing if needed, then run every test: the linter, the course's consistency check, the
# course's tests (library, notebooks, assignments: tests/ and notebooks/), and the grader's own (grader/tests/, on
# fixture courses of its own). --dist loadgroup keeps each file on one worker (a notebook's cells share a kernel) unless its
# tests declare groups (grader/course_grader/testing/xdist_units.py).
# The two suites run at the same time: neither reads the other's files, and one suite alone leaves the cores idle
# while its workers wait (kernels starting, deadlines, its last long file). The grader's output goes to a log that is
# shown, and then followed, once the course's tests are done.
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
grader_pid=
if [ "$status" -eq 0 ] && [ "$grader" = yes ]; then
    grader_log="$basetemp/grader-tests.log"
    # In a session of its own, so that stopping this script (Ctrl+C, a failure) stops it and everything it started
    (cd grader && exec setsid ../.venv/bin/python -m pytest -n 2 --basetemp "$basetemp/grader" "$@") >"$grader_log" 2>&1 &
    grader_pid=$!
    trap '[ -z "$grader_pid" ] || kill -- "-$grader_pid" 2>/dev/null || true' EXIT
    trap 'exit 130' INT  # Ctrl+C: pytest ends the course's tests with a status of its own; this ends the rest
    echo "the grader's tests are running beside the course's (shown when the course's are done): $grader_log"
fi
[ "$status" -eq 0 ] && { .venv/bin/python -m pytest -n 2 --basetemp "$basetemp/course" "$@" || status=$?; }
if [ -n "$grader_pid" ]; then
    echo "---------------------------------------- the grader's tests (grader/tests, run in grader/)"
    tail -n +1 --follow=name --pid="$grader_pid" "$grader_log"
    grader_status=0
    wait "$grader_pid" || grader_status=$?
    grader_pid=
    [ "$grader_status" -eq 0 ] || status=$grader_status
fi
if [ "$status" -eq 0 ]; then rm -rf -- "$basetemp"; else echo "test files kept in $basetemp" >&2; fi
exit "$status"
