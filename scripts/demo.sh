#!/usr/bin/env bash
# Set up .venv from nothing if needed, then grade the bundled example class in work/demo/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
export MPLBACKEND=Agg
exec .venv/bin/perceptron-course demo "$@"
