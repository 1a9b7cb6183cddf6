"""``nbgrader zip_collect``'s reading of an LMS's file names, refusing a clash with both files named.

nbgrader's ``FileNameCollectorPlugin`` reads the student id (and a time, a file name) from each
file of the LMS's download with ``c.FileNameCollectorPlugin.named_regexp``. Two files that give
the same student and the same file name, with no time to tell which is later, stop its
``zip_collect`` with ``Duplicate submission file. No timestamps for comparison``, naming neither
(and nothing is collected). That is what two students with one name give when the id is read
from the name. This collector stops there too, before anything is copied, but names both files
and says what to do: no hand-in is dropped or filed under another student.
"""

from __future__ import annotations

from nbgrader.plugins import FileNameCollectorPlugin


class ClashRefusingCollector(FileNameCollectorPlugin):
    """``FileNameCollectorPlugin`` (same configuration) that refuses two files for one student and one file name."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._first_file: dict[tuple[str, str], str] = {}

    def collect(self, submitted_file: str):
        info = super().collect(submitted_file)
        if not info or not isinstance(info.get("student_id"), str) or not isinstance(info.get("file_id"), str):
            return info
        key = (info["student_id"], info["file_id"])
        earlier = self._first_file.setdefault(key, submitted_file)
        if earlier != submitted_file and not info.get("timestamp"):
            message = (f"two files give student {key[0]!r} the same file {key[1]!r}, with no time to tell which is later: "
                       f"{earlier} and {submitted_file}. Nothing was collected. If they are two students, the pattern "
                       "(c.FileNameCollectorPlugin.named_regexp) must read an id the LMS gives each student (Canvas's "
                       "user id, Moodle's participant number, Blackboard's user name), not a name; if they are one "
                       "student's, remove the one that does not count from the archive.")
            fail = getattr(self.parent, "fail", None)
            if fail is not None:
                fail(message)  # nbgrader's way: the message, exit status 1
            raise ValueError(message)
        return info
