"""File handling that never follows what a student left: the intake of submissions and the merge of results.

A submission folder is the student's: it may hold a symlink to ``source/``, a hardlink to
another student's notebook, a FIFO that blocks a reader, or a notebook of gigabytes. So
everything here looks with ``lstat``, opens with ``O_NOFOLLOW``, reads at most a cap, and
writes only below the folder it was given, creating files it owns (``O_EXCL``) and never
changing the mode of anything.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from pathlib import Path

from .safe_text import terminal_text

#: Largest notebook read from a submission.
MAX_NOTEBOOK_BYTES = 5 * 1024 * 1024
#: Most entries, and deepest nesting, of a submission folder the intake looks at.
MAX_ENTRIES = 200
MAX_DEPTH = 8
#: Student and assignment ids: no separators, no "..", no leading dot or dash.
SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.@+-]{0,127}")


class UnsafeFileError(Exception):
    """A path the grader refuses to read or write; the message says why, for ``grades.csv``."""


def readable_name(name: str) -> str:
    """A folder name as the grader shows it: the stray bytes of a name that is not valid UTF-8 (Python's
    surrogate escapes) and every control character written as visible escapes (``\\xff``, ``\\x1b``), so
    that it can go into every file and line and acts in none; a plain name as it is. Such a name is
    never a plain name (``name_problem``): its folder is refused, not read."""
    return terminal_text(name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"), keep="")


_STRAY_BYTE = re.compile(r"\\x[89a-f][0-9a-f]")


def name_problem(name: str, what: str) -> str:
    """Why ``name`` cannot be a student or assignment id (a path component), or ``""``."""
    if _STRAY_BYTE.search(name):
        return f"the {what} folder name {name!r} is not valid UTF-8 (its stray bytes shown as \\x..); rename the folder"
    if not SAFE_NAME.fullmatch(name) or ".." in name:
        return f"the {what} id {name!r} is not a plain name (letters, digits, _ . @ + -; no '..' or separators)"
    return ""


def entry_problem(path: Path) -> str:
    """Why a submitted file or folder is refused, judged on ``lstat`` (never following a link), or ``""``."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return f"{path.name} is missing"
    return stat_problem(info, path.name)


def stat_problem(info: os.stat_result, name: str) -> str:
    """Why an entry named ``name`` whose ``lstat`` is ``info`` is refused (a link, a special file, a hard link), or ``""``."""
    if stat.S_ISLNK(info.st_mode):
        return f"{name} is a symbolic link"
    if stat.S_ISDIR(info.st_mode):
        return ""
    if stat.S_ISFIFO(info.st_mode):
        return f"{name} is a FIFO"
    if stat.S_ISSOCK(info.st_mode):
        return f"{name} is a socket"
    if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode):
        return f"{name} is a device"
    if not stat.S_ISREG(info.st_mode):
        return f"{name} is not a regular file"
    if info.st_nlink > 1:
        return f"{name} is a hard link ({info.st_nlink} names for one file)"
    return ""


def open_folder(name: str | Path, *, dir_fd: int | None = None) -> int:
    """A descriptor of the folder ``name`` (relative to ``dir_fd``), never through a link in its last part.

    Whatever is read of it afterwards goes through the descriptor (``os.listdir(fd)``, ``dir_fd=fd``), so
    the folder cannot be swapped for another (a link, a file) between the moment it is judged and the
    moment it is read.

    Raises
    ------
    OSError
        If it is missing (``FileNotFoundError``), a link (``ELOOP``), not a folder (``NotADirectoryError``),
        or cannot be read (``PermissionError``).
    """
    return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)


def folder_problems(folder: Path, *, within: Path) -> list[str]:
    """Every reason to refuse ``folder``: it and its parents up to ``within`` must be real folders, its entries plain.

    Walks the folder without following links (``tree_problems``); entries are named relative to ``folder``.
    """
    for part in [folder, *folder.parents]:
        if part == within:
            break
        if part.is_symlink() or not part.is_dir():
            return [f"{part.relative_to(within)} is not a real folder (a symbolic link, or missing)"]
    try:
        descriptor = open_folder(folder)
    except OSError as error:
        return [f"{folder.relative_to(within)} cannot be opened as a real folder ({error.strerror or error})"]
    try:
        return tree_problems(descriptor)
    finally:
        os.close(descriptor)


def tree_problems(folder_fd: int) -> list[str]:
    """Every reason to refuse the folder open as ``folder_fd``: a link, special file or hard link anywhere in it,
    a subfolder that cannot be read, more than ``MAX_ENTRIES`` entries or deeper than ``MAX_DEPTH``.

    Everything is read through descriptors (``open_folder`` with ``dir_fd``), never by path: a part renamed,
    swapped for a link or made unreadable while it is walked is a reason, never an exception.
    """
    problems: list[str] = []
    pending: list[tuple[int, str, int]] = [(os.dup(folder_fd), "", 0)]
    seen = 0
    try:
        while pending:  # an explicit stack, capped: a folder 3000 levels deep must not overflow the grader's stack
            current, prefix, depth = pending.pop()
            try:
                names = sorted(os.listdir(current))
                for name in names:
                    seen += 1
                    if seen > MAX_ENTRIES or depth >= MAX_DEPTH:
                        return [*problems, f"the folder holds more than {MAX_ENTRIES} entries or is nested deeper than {MAX_DEPTH} levels"]
                    try:
                        info = os.stat(name, dir_fd=current, follow_symlinks=False)
                    except FileNotFoundError:
                        problems.append(f"{prefix}{name} is missing (it vanished while read)")
                        continue
                    reason = stat_problem(info, name)
                    if reason:
                        problems.append(prefix + reason)
                    elif stat.S_ISDIR(info.st_mode):
                        try:
                            inner = open_folder(name, dir_fd=current)
                        except OSError as error:
                            problems.append(f"{prefix}{name} cannot be read ({error.strerror or error})")
                            continue
                        pending.append((inner, f"{prefix}{name}/", depth + 1))
            finally:
                os.close(current)
    finally:
        for descriptor, _, _ in pending:
            os.close(descriptor)
    return problems


def read_capped(path: Path | str, limit: int = MAX_NOTEBOOK_BYTES, *, dir_fd: int | None = None) -> bytes:
    """The bytes of a regular, singly linked file, opened with ``O_NOFOLLOW`` (relative to ``dir_fd`` if given).

    Raises
    ------
    UnsafeFileError
        If ``path`` is a link, not a regular file, has other names, or is larger than ``limit``.
    """
    name = Path(path).name
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError as error:
        raise UnsafeFileError(f"{name} cannot be opened without following a link ({error.strerror})") from None
    with os.fdopen(descriptor, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
            raise UnsafeFileError(stat_problem(info, name) or f"{name} is not a plain file")
        if info.st_size > limit:
            raise UnsafeFileError(f"{name} is larger than the grader reads ({limit // (1024 * 1024)} MiB)")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise UnsafeFileError(f"{name} is larger than the grader reads ({limit // (1024 * 1024)} MiB)")
    return data


def replace_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole: a new file (``<name>.tmp``) renamed over the old, so never half-written."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)


def write_new(path: Path, data: bytes) -> None:
    """Create ``path`` (which must not exist) and write ``data``; a link in its place makes it fail."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)


#: The mode of a feedback page: nbgrader's ``release_feedback`` copies a page with its mode into the exchange, where
#: the student's ``fetch_feedback`` reads it. Its folders stay the TA's alone (the commands' umask is 077).
FEEDBACK_PAGE_MODE = 0o644


def open_pages_for_exchange(folder: Path) -> None:
    """Give each feedback page (``*.html``) of ``folder`` ``FEEDBACK_PAGE_MODE``; links and other files are left."""
    if not folder.is_dir() or folder.is_symlink():
        return
    for page in folder.glob("*.html"):
        if page.is_file() and not page.is_symlink():
            os.chmod(page, FEEDBACK_PAGE_MODE)


def real_folder(root: Path, relative: Path, *, create: bool = True) -> Path | None:
    """``root / relative`` as a real folder: each missing part is created, a link in the way is refused.

    With ``create=False``, ``None`` when a part is missing.

    Raises
    ------
    UnsafeFileError
        If a part of the path is a symbolic link or not a folder.
    """
    folder = root
    for part in relative.parts:
        folder = folder / part
        if not create and not os.path.lexists(folder):
            return None
        try:
            os.mkdir(folder, 0o755)
        except FileExistsError:
            if folder.is_symlink() or not folder.is_dir():
                raise UnsafeFileError(f"{folder} is not a real folder; the grader will not write through it") from None
    return folder


def remove(path: Path) -> None:
    """Remove a file, a link (not its target) or a whole folder (never following links inside)."""
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def replace_tree(source: Path, root: Path, relative: Path) -> None:
    """Make ``root / relative`` an exact copy of ``source``, writing nothing outside it.

    Only regular files and folders of ``source`` are copied (links and special files are
    skipped), as new files with mode 0644 in new folders with mode 0755. If ``source`` does
    not exist, ``root / relative`` is removed.
    """
    has_output = source.is_dir() and not source.is_symlink()
    if real_folder(root, relative.parent, create=has_output) is None:
        return  # nothing there, and nothing to put there
    destination = root / relative
    remove(destination)
    if not has_output:
        return
    real_folder(root, relative)
    for folder, folders, files in os.walk(source, followlinks=False):
        here = Path(folder).relative_to(source)
        for name in folders:
            if not (Path(folder) / name).is_symlink():
                os.mkdir(destination / here / name, 0o755)
        for name in files:
            if not entry_problem(Path(folder) / name):
                write_new(destination / here / name, read_capped(Path(folder) / name, limit=1 << 28))
