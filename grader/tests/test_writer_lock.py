"""The course lock: one writer of a course at a time, a clear refusal naming the holder, and no stale lock."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from course_grader.trusted.gradebook.writer_lock import LOCK_FILE, CourseBusy, course_lock, lock_holder

HOLD = """
import sys, time
from pathlib import Path
from course_grader.trusted.gradebook.writer_lock import course_lock
with course_lock(Path(sys.argv[1]), sys.argv[2]):
    print("held", flush=True)
    time.sleep(600)
"""


def holding(root, command: str) -> subprocess.Popen:
    process = subprocess.Popen([sys.executable, "-c", HOLD, str(root), command], stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline() == "held\n"
    return process


def test_a_second_writer_is_refused_with_the_holders_command_pid_and_since(tmp_path):
    process = holding(tmp_path, "serve")
    try:
        with pytest.raises(CourseBusy) as refused:
            with course_lock(tmp_path, "grade"):
                pass
        message = str(refused.value)
        assert f"`perceptron-course serve` (pid {process.pid}, since " in message and "stop it first" in message
        assert lock_holder(tmp_path).command == "serve" and lock_holder(tmp_path).pid == process.pid
    finally:
        process.kill()
        process.wait()
        process.stdout.close()


def test_a_killed_holder_leaves_no_stale_lock(tmp_path):
    process = holding(tmp_path, "grade")
    process.send_signal(signal.SIGKILL)
    process.wait()
    process.stdout.close()
    assert (tmp_path / LOCK_FILE).exists() and lock_holder(tmp_path) is None
    with course_lock(tmp_path, "serve"):
        assert lock_holder(tmp_path).pid == os.getpid()


def test_the_lock_is_re_entrant_in_one_process_and_free_after(tmp_path):
    with course_lock(tmp_path, "serve"):
        with course_lock(tmp_path, "grade"):  # serve calls code that grade uses
            assert lock_holder(tmp_path).command == "serve"
    assert lock_holder(tmp_path) is None


def test_a_forked_child_does_not_keep_the_lock_after_its_parent_dies(tmp_path):
    code = ("import os, sys, time\nfrom pathlib import Path\n"
            "from course_grader.trusted.gradebook.writer_lock import course_lock\n"
            "with course_lock(Path(sys.argv[1]), 'serve'):\n"
            "    child = os.fork()\n"
            "    if child == 0:\n        print(os.getpid(), file=sys.stderr, flush=True)\n        time.sleep(600)\n        os._exit(0)\n"
            "    print(child, flush=True)\n    time.sleep(600)\n")
    process = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    child = process.stdout.readline().strip()
    try:
        assert process.stderr.readline().strip() == child  # the child runs Python code: its fork hooks ran
        process.send_signal(signal.SIGKILL)  # its child (a grading worker, say) lives on
        process.wait()
        assert lock_holder(tmp_path) is None
    finally:
        process.kill()
        process.wait()
        process.stdout.close()
        process.stderr.close()
        os.kill(int(child), signal.SIGKILL)
