#!/usr/bin/env bash
# Create .venv (if missing) and install the project with every extra.
# Sourced by scripts/demo.sh and scripts/test.sh; safe to run again.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -c 'import sys; assert sys.version_info >= (3, 10), "Python 3.10+ is needed, found " + sys.version' 
    "$PYTHON" -m venv .venv
fi
# Grading runs student code in a bubblewrap sandbox with a seccomp filter (libseccomp):
# install both where we can (root with apt). As root, grading refuses to run without them.
if ! command -v bwrap >/dev/null 2>&1 || ! ldconfig -p 2>/dev/null | grep -q 'libseccomp\.so\.2'; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        { apt-get update -qq && apt-get install -y -qq bubblewrap libseccomp2; } >/dev/null 2>&1 \
            || echo "warning: could not install bubblewrap and libseccomp2; grading as root will refuse to run" >&2
    else
        echo "note: bubblewrap (bwrap) or libseccomp2 is missing: grading will refuse to run student code until they are installed (see docs/hosting.md)" >&2
    fi
fi
# The browser test (tests/grader/test_browser.py) drives Debian's Chromium; it is skipped where missing.
if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    { apt-get update -qq && apt-get install -y -qq chromium; } >/dev/null 2>&1 \
        || echo "note: could not install chromium; the browser test will be skipped" >&2
fi
# From npm (package.json, into node_modules/): axe-core, which the accessibility tests (tests/grader/test_accessibility.py,
# tests/course/test_book.py) inject, JupyterHub's proxy, configurable-http-proxy, for the hub test
# (tests/grader/test_serve_hub.py), and MathJax 3, which the course's website serves (book/, scripts/book.sh).
if [ ! -f node_modules/axe-core/axe.min.js ] || [ ! -x node_modules/.bin/configurable-http-proxy ] \
        || [ ! -f node_modules/mathjax/es5/tex-chtml.js ] || [ package.json -nt node_modules/.package-lock.json ]; then
    if command -v npm >/dev/null 2>&1; then
        npm install --no-audit --no-fund --silent >/dev/null 2>&1 \
            || echo "warning: npm could not install axe-core and configurable-http-proxy; the accessibility and hub tests will fail" >&2
    else
        echo "note: npm is missing (apt-get install npm): the accessibility test needs axe-core, the hub test configurable-http-proxy" >&2
    fi
fi
# The hub test makes a student and a grader with useradd (passwd) and runs their commands with runuser and nsenter
# (util-linux); the systemd unit of docs/examples/ is checked with systemd-analyze (systemd).
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
        && ! { command -v useradd && command -v runuser && command -v nsenter && command -v systemd-analyze; } >/dev/null 2>&1; then
    { apt-get update -qq && apt-get install -y -qq passwd util-linux systemd; } >/dev/null 2>&1 \
        || echo "note: could not install passwd, util-linux and systemd; the hub test will fail" >&2
fi
# The course and its grader, two distributions, installed together (the course's `grading` extra is the grader,
# found here in grader/); again only when either pyproject.toml changed since the last install.
stamp=.venv/.installed-pyproject
if ! cat pyproject.toml grader/pyproject.toml | cmp -s - "$stamp" 2>/dev/null; then
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -e "./grader[test]" -e ".[dev]"
    .venv/bin/python -m ipykernel install --sys-prefix --name python3 >/dev/null
    cat pyproject.toml grader/pyproject.toml > "$stamp"
fi
