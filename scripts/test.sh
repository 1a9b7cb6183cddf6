#!/usr/bin/env bash
# Set up .venv from nothing if needed, then run every test (library, notebooks, grading).
# --dist loadfile keeps each file on one worker: a notebook's cells share a kernel, and the
# end-to-end grading fixture runs once.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
export MPLBACKEND=Agg PYTHONHASHSEED=0
exec .venv/bin/python -m pytest -n 2 --dist loadfile "$@"
