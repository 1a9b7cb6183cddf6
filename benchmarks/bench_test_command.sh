#!/usr/bin/env bash
# Wall time of the README's test command on a fresh clone (new .venv, full install), as CI runs it: the installation,
# then `bash scripts/test.sh` (ruff, `check`, the course's tests, the grader's tests), then
# the course's tests alone (`bash scripts/test.sh --course`: the command an instructor runs after an edit); then the
# slowest files of each suite (the sum of their tests' setup, call and teardown times, on whichever worker ran them).
# Run: bash benchmarks/bench_test_command.sh    Targets: whole command at most 15 minutes on 2 quiet cores, the
# course's tests at most 5. The machine's load is printed before and after: figures taken beside other work are
# inflated (compare files with each other, not with the targets).
# `--burners N`: the same, with N CPU burners (`python3 -c 'while 1: pass'`) running from the end of the
# installation to the end of the tests: no test's outcome may depend on the machine's load.
set -euo pipefail
burners=0
if [ "${1:-}" = "--burners" ]; then burners=${2:?--burners needs a count}; fi
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
scratch="$(mktemp -d)"
clone="$scratch/clone"
git clone --quiet "$repo" "$clone"
cd "$clone"
export MPLBACKEND=Agg PYTHONHASHSEED=0
load() { echo "load (1, 5, 15 min): $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"; }
now() { date +%s; }
load
start=$(now)
bash scripts/setup.sh >"$scratch/setup.log" 2>&1
installed=$(now)
burner_pids=()
for _ in $(seq 1 "$burners"); do python3 -c 'while 1: pass' & burner_pids+=($!); done
stop_burners() { [ "${#burner_pids[@]}" -eq 0 ] || kill "${burner_pids[@]}" 2>/dev/null || true; }
trap stop_burners EXIT
[ "$burners" -eq 0 ] || echo "$burners CPU burners running beside the tests"
status=0
# --durations=0 lists every test's phases; --durations-min keeps the list short
durations=(-q -p no:cacheprovider --durations=0 --durations-min=1)
bash scripts/test.sh "${durations[@]}" >"$scratch/whole.log" 2>&1 || status=$?
whole_done=$(now)
bash scripts/test.sh --course "${durations[@]}" >"$scratch/course.log" 2>&1 || status=$?
course_done=$(now)
load
stop_burners
# The grader's part of the whole command's output: after the line test.sh prints before it
sed -n "/^-* the grader's tests/,\$p" "$scratch/whole.log" >"$scratch/grader.log"

slowest() {  # the files of a suite's --durations list, by their tests' summed time
    awk '$1 ~ /s$/ && ($2 == "setup" || $2 == "call" || $2 == "teardown") {
             split($3, part, "::"); seconds[part[1]] += $1 + 0 }
         END { for (file in seconds) printf "%8.1f s  %s\n", seconds[file], file }' "$1" | sort -rn | head -"${2:-12}"
}
echo "installation (scripts/setup.sh): $((installed - start)) s"
echo "bash scripts/test.sh (ruff, check, the course's tests, the grader's): $((whole_done - installed)) s"
echo "  the course's tests: $(grep -E '^[0-9]+ (passed|failed)|^=+ .*(passed|failed)' "$scratch/whole.log" | head -1)"
echo "  the grader's tests: $(tail -1 "$scratch/grader.log")"
slowest "$scratch/grader.log"
echo "the course's tests alone (bash scripts/test.sh --course): $((course_done - whole_done)) s; $(tail -1 "$scratch/course.log")"
slowest "$scratch/course.log"
echo "fresh clone: README test command took $((whole_done - start)) s, installation included (exit status $status)"
# BENCH_LOGS=folder keeps every test's durations (the suites' logs) after a green run too
if [ -n "${BENCH_LOGS:-}" ]; then mkdir -p "$BENCH_LOGS" && cp "$scratch"/*.log "$BENCH_LOGS"/; fi
if [ "$status" -eq 0 ]; then rm -rf -- "$scratch"; else echo "logs kept in $scratch" >&2; fi
