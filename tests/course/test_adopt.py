"""The next term, rehearsed in CI: an instructor's ordinary edits keep the course's tests green.

``scripts/adopt_check.sh --edit-only`` makes the edits on a scratch copy of this repository (drop an assignment, a
header notebook, the late policy, the timeout, the course id, one part's points, a new part, release); the fast
tests of the course's content then run there, unedited. The whole rehearsal, every test file, is
``bash scripts/adopt_check.sh`` (minutes).
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import TermSettings, term_settings

REPO = Path(__file__).resolve().parents[2]
# The bundle refuses a stale release: its check regenerates release/ with the header, as `release` does.
CONTENT_TESTS = ["tests/course/test_assignments.py", "tests/course/test_notebooks.py", "tests/course/test_bundle.py"]


@pytest.mark.slow
def test_a_terms_edits_keep_the_course_tests_green(tmp_path):
    environment = {**os.environ, "ADOPT_DIR": str(tmp_path)}
    edited = subprocess.run(["bash", str(REPO / "scripts" / "adopt_check.sh"), "--edit-only"], env=environment,
                            capture_output=True, text=True, timeout=1200)
    assert edited.returncode == 0, edited.stdout[-3000:] + edited.stderr[-3000:]
    course = tmp_path / "course"
    assert not (course / "source" / "05_multiclass").exists() and (course / "header.ipynb").is_file()
    assert term_settings(course) == TermSettings(course_id="ml-spring-2027", late_policy="zero", cell_seconds=20.0,
                                                 header="header.ipynb"), "the edits reach the settings the grader reads"

    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-m", "not slow", "-p", "no:cacheprovider",
                          "--basetemp", str(tmp_path / "tmp"), *CONTENT_TESTS],
                         cwd=course, env={**environment, "PYTHONPATH": str(course)}, capture_output=True, text=True, timeout=1200)
    assert run.returncode == 0, run.stdout[-5000:]
