"""Repository hygiene: student data is never tracked and always ignored."""

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
STUDENT_DATA = ["submitted/ada/01_geometry/geometry.ipynb", "autograded/ada/01_geometry/geometry.ipynb",
                "feedback/ada/01_geometry/geometry.html", "gradebook.db", "grades.csv", "grades_by_student.csv", "reports/report.md",
                "reports/report.html",
                "work/demo/gradebook.db", "source/01_geometry/.ipynb_checkpoints/geometry-checkpoint.ipynb"]


def git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)


def test_no_student_data_is_tracked():
    tracked = git("ls-files").stdout.splitlines()
    assert tracked, "run the tests from a git checkout"
    leaked = [path for path in tracked
              if path.split("/")[0] in ("submitted", "autograded", "feedback", "reports", "work")
              or path.endswith(("gradebook.db", "grades.csv", "grades_by_student.csv"))]
    assert leaked == []


def test_student_data_paths_are_ignored():
    result = git("check-ignore", "--no-index", *STUDENT_DATA)
    assert sorted(result.stdout.split()) == sorted(STUDENT_DATA)
