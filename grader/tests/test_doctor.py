"""``doctor``'s reading of modes (how it decides when it cannot become a student) and its refusal of an unknown account.

The real attempt as a student (root, a child that became the account) is tested end to end in ``test_serve_hub.py``,
on a course set up as ``docs/hosting.md`` says, against a real student account's own attempts.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from course_grader.trusted.cli import main
from course_grader.trusted.doctor import Opening, read_from_modes


@pytest.fixture
def open_folder():
    """A folder every account can reach (``/tmp`` itself, then 0755), unlike pytest's own ``tmp_path`` (under a 0700
    folder): what the modes say below it is then the whole answer."""
    folder = Path(tempfile.mkdtemp(prefix="doctor-", dir="/tmp"))
    folder.chmod(0o755)
    assert all(parent.stat().st_mode & 0o001 for parent in folder.parents)
    yield folder
    shutil.rmtree(folder)


def test_the_modes_say_what_another_account_reaches_through_every_parent(open_folder):
    course = open_folder / "course"
    (course / "source").mkdir(parents=True)
    gradebook, hidden = course / "gradebook.db", course / "source" / "hidden_checks.py"
    gradebook.write_text("grades")
    hidden.write_text("answers")
    for path, mode in ((course, 0o755), (course / "source", 0o700), (gradebook, 0o666), (hidden, 0o644)):
        path.chmod(mode)
    paths = [course, course / "source", gradebook, hidden]
    found = {opening.path: opening for opening in read_from_modes(paths)}
    # the source folder is closed, so its own 0644 file opens nothing
    assert found == {course: Opening(course, True, False), gradebook: Opening(gradebook, True, True)}
    course.chmod(0o711)  # enterable, not listable: the gradebook is still read by its name
    assert {o.path for o in read_from_modes(paths)} == {gradebook}
    course.chmod(0o700)
    assert read_from_modes(paths) == []


def test_an_unknown_account_is_refused_by_name(capsys, tmp_path):
    course = tmp_path / "course"
    (course / "source").mkdir(parents=True)
    (course / "nbgrader_config.py").write_text("c = get_config()\n")
    before = os.umask(0o022)
    try:
        assert main(["doctor", "--root", str(course), "--as", "no-such-account-here"]) == 2
        assert os.umask(0o022) == 0o022  # doctor writes nothing: it leaves the umask as it found it
    finally:
        os.umask(before)
    assert "no account named 'no-such-account-here'" in capsys.readouterr().err


def test_a_writing_command_runs_with_the_private_umask_and_gives_the_old_one_back():
    from course_grader.trusted.cli import private_files

    before = os.umask(0o002)
    try:
        with private_files("grade"):
            assert os.umask(0o077) == 0o077
        assert os.umask(0o002) == 0o002
        with private_files("status"):  # reads only
            assert os.umask(0o002) == 0o002
    finally:
        os.umask(before)
