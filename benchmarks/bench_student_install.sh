#!/usr/bin/env bash
# What nbgrader (its Validate button and assignment list) would add to the student install.
# Builds the student bundle, installs its package into a fresh venv, then adds nbgrader to the
# same venv, and prints packages, megabytes and seconds for each step (pip's cache as it is:
# say whether it was warm when quoting the figures).
# Usage: bash benchmarks/bench_student_install.sh   (from the repository, after scripts/setup.sh)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
.venv/bin/perceptron-course bundle --out "$work" >/dev/null
python3 -m venv "$work/venv"
pip=("$work/venv/bin/python" -m pip)
"${pip[@]}" install --quiet --upgrade pip

measure() {  # label, then the pip arguments; prints packages installed, venv MB, seconds
    local label=$1; shift
    local start end
    start=$(date +%s.%N)
    "${pip[@]}" install --quiet "$@" 2> >(grep -v "^WARNING: Location" >&2)
    end=$(date +%s.%N)
    printf '%-34s %4d packages  %5d MB  %5.1f s\n' "$label" \
        "$("${pip[@]}" list --format=freeze 2>/dev/null | wc -l)" \
        "$(du -sm "$work/venv" | cut -f1)" "$(echo "$end - $start" | bc)"
}
"${pip[@]}" list --format=freeze | sort >"$work/before"
measure "student package (bundle)" "$work/perceptron-course-student/package"
"${pip[@]}" list --format=freeze | sort >"$work/student"
measure "student package + nbgrader" "nbgrader>=0.9.2"
"${pip[@]}" list --format=freeze | sort >"$work/nbgrader"
echo "added by nbgrader: $(comm -13 "$work/student" "$work/nbgrader" | cut -d= -f1 | tr '\n' ' ')"
