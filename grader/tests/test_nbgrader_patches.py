"""Every function of nbgrader the grader replaces is the one it was checked against.

``nbgrader_patches.PATCHED`` records the hash of each replaced function's source in the nbgrader version the
replacement was checked on; the distribution's bound on nbgrader starts at that version and stops before the next
minor one. A new nbgrader whose source of one of them differs fails here, before a replacement that no longer matches
changes a grade; one whose sources are the same installs and passes.
"""

import re
from pathlib import Path

import nbgrader
import pytest

from course_grader.trusted.course import nbgrader_patches
from course_grader.trusted.course.nbgrader_patches import CHECKED_ON, PATCHED, original_source, source_hash

GRADER = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("module", "qualname"), sorted(PATCHED))
def test_each_patched_function_is_the_source_it_was_checked_against(module, qualname):
    assert source_hash(module, qualname) == PATCHED[module, qualname], (
        f"{module}.{qualname} is not the source checked with nbgrader {CHECKED_ON} (installed: {nbgrader.__version__}): "
        f"check its replacement in course_grader/trusted/course/nbgrader_patches.py against the new source, then "
        f"record the new hash in PATCHED, the version in CHECKED_ON and the bound in grader/pyproject.toml")


def test_the_source_is_read_from_the_installed_file_not_from_what_this_process_replaced():
    import nbgrader.api

    nbgrader_patches.tune_nbgrader()
    nbgrader_patches.stamp_new_gradebooks_in_process()
    assert nbgrader.api.get_alembic_version is nbgrader_patches.head_revision  # replaced in this process ...
    assert original_source("nbgrader.api", "get_alembic_version").startswith("def get_alembic_version(")  # ... not here
    with pytest.raises(LookupError):
        original_source("nbgrader.api", "Gradebook.no_such_method")


def test_the_distribution_bounds_nbgrader_from_the_version_checked_to_the_next_minor_one():
    text = (GRADER / "pyproject.toml").read_text(encoding="utf-8")
    [bound] = re.findall(r'"nbgrader(>=[^"]+)"', text)
    assert bound == f">={CHECKED_ON},<{_next_minor(CHECKED_ON)}"


def test_no_other_module_of_the_grader_replaces_nbgrader_functions():
    """Every assignment to an attribute of an nbgrader module or class happens in nbgrader_patches.py."""
    package = GRADER / "course_grader"
    pattern = re.compile(r"^\s*(nbgrader\.[\w.]+|Gradebook\.\w+|BaseMetadataValidator\.\w+)\s*=[^=]", re.M)
    found = [f"{path.relative_to(package)}: {match.group(1)}" for path in sorted(package.rglob("*.py"))
             if path.name != "nbgrader_patches.py" for match in pattern.finditer(path.read_text(encoding="utf-8"))]
    assert found == []


def _next_minor(version: str) -> str:
    major, minor, _ = version.split(".")
    return f"{major}.{int(minor) + 1}"
