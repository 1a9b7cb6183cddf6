"""One writer of a course at a time: ``grade``, ``serve`` and ``refresh`` hold the course lock while they write.

Each of them writes the gradebook, the ledger, ``feedback/`` and the exports; two at once would
interleave their writes (SQLite promises no safe concurrent writers, and the ledger is rewritten
whole). The lock is ``fcntl.flock`` on ``.perceptron-course.lock`` in the course root: the
operating system drops it when its process ends, however it ends (a SIGKILLed service leaves no
stale lock). The file also says who holds it (command, pid, since), for the message of the
command that is refused. Within one process the lock is re-entrant (``serve`` calls code that
``grade`` uses).
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from ..course.commands import grader_command
from ..course.course import CourseError

LOCK_FILE = ".perceptron-course.lock"
#: What the holder's description may take of the lock file (a few fields of JSON).
MAX_HOLDER_BYTES = 4096


@dataclass(frozen=True)
class Holder:
    """Who holds a course's lock."""

    command: str
    pid: int
    since: str  #: ISO 8601, UTC


class CourseBusy(CourseError):
    """Another process holds the course's lock; the message names it and says what to do."""

    def __init__(self, root: Path, command: str, holder: Holder | None) -> None:
        self.holder = holder
        who = (f"`{grader_command()} {holder.command}` (pid {holder.pid}, since {holder.since})" if holder
               else f"another {grader_command()} command")
        advice = (f"stop it first (`{grader_command()} status` shows it, `{grader_command()} doctor` says who runs it): a "
                  "systemd unit with `systemctl stop`, a service started by hand with `kill <pid>` (it stops cleanly on "
                  "SIGTERM); a hub's managed service is started again by the hub when it exits, so take it out of the "
                  "hub's configuration and restart the hub (docs/hosting.md); or wait until it is done"
                  if holder is None or holder.command == "serve" else "wait until it is done, then run this again")
        super().__init__(f"cannot {command} {root}: {who} is working on this course and holds its lock "
                         f"({root / LOCK_FILE}); {advice}")


_held: dict[Path, list] = {}  #: lock file -> [open file descriptor, depth] held by this process


def _forget_in_child() -> None:
    """In a forked child (a grading worker): close the lock's descriptors, so that only the holder pins the lock
    and a SIGKILLed holder's lock goes with it, even while its workers finish."""
    for descriptor, _ in _held.values():
        try:
            os.close(descriptor)
        except OSError:
            pass
    _held.clear()


os.register_at_fork(after_in_child=_forget_in_child)


def read_holder(root: Path) -> Holder | None:
    """Who holds (or last held) the lock of the course at ``root``, as its file says; ``None`` if unknown."""
    try:
        descriptor = os.open(root / LOCK_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(descriptor, "rb") as handle:
        data = handle.read(MAX_HOLDER_BYTES)
    try:
        fields = json.loads(data.decode("utf-8"))
        return Holder(str(fields["command"]), int(fields["pid"]), str(fields["since"]))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def lock_holder(root: Path) -> Holder | None:
    """Who holds the lock of the course at ``root`` now (``None`` when nobody does)."""
    path = Path(root) / LOCK_FILE
    if path in _held:
        return read_holder(Path(root))
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return read_holder(Path(root)) or Holder("(unknown)", 0, "")
    finally:
        os.close(descriptor)
    return None


@contextmanager
def course_lock(root: Path, command: str) -> Iterator[None]:
    """Hold the course's lock while the block runs, for ``command`` (``"grade"``, ``"serve"``, ``"refresh"``).

    Raises
    ------
    CourseBusy
        At once (never waiting) if another process holds it.
    """
    path = Path(root) / LOCK_FILE
    if path in _held:
        _held[path][1] += 1
        try:
            yield
        finally:
            _held[path][1] -= 1
        return
    try:
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as error:
        raise CourseError(f"cannot write in {root} ({error.strerror}): {command} keeps its lock file ({LOCK_FILE}) "
                          f"there, and writes the gradebook, feedback/ and the exports there") from None
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        raise CourseBusy(Path(root), command, read_holder(Path(root))) from None
    since = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    os.ftruncate(descriptor, 0)
    os.pwrite(descriptor, json.dumps({"command": command, "pid": os.getpid(), "since": since}).encode(), 0)
    _held[path] = [descriptor, 1]
    try:
        yield
    finally:
        del _held[path]
        os.close(descriptor)  # closing the only descriptor drops the lock
