#!/usr/bin/env bash
# Wall time of the README's test command on a fresh clone (new .venv, full install), as CI runs it.
# Run: bash benchmarks/bench_test_command.sh    Target: under 15 minutes on the 2-core machine.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
clone="$(mktemp -d)/clone"
git clone --quiet "$repo" "$clone"
cd "$clone"
start=$(date +%s)
bash scripts/test.sh -q -p no:cacheprovider | tail -1
end=$(date +%s)
echo "fresh clone: README test command took $((end - start)) s, installation included"
rm -rf "$(dirname "$clone")"
