"""Hand-ins as they arrive: nbgrader's exchange inbound and an LMS drop folder, read as nbgrader's collectors do.

**Exchange.** ``nbgrader submit`` writes ``<exchange>/<course_id>/inbound/<student>+<assignment>+<timestamp>+<random>/``
(the notebooks, then ``timestamp.txt``, then ``submission_secret.txt``). nbgrader's own ``collect``
(``nbgrader/exchange/default/collect.py``) reads the student and the time from that name and, with
``check_owner`` (its default), warns when the folder's owner is not that student. Here such a folder is
**refused**, with the reason: the inbound is writable by every student, and a folder claiming to be bob's
but owned by alice is alice handing in as bob. A folder is taken once ``submission_secret.txt`` is in it
(``submit`` writes it last).

**Drop folder.** ``[serve] drop_folder`` of ``term.toml``, laid out as ``zip_collect`` reads an LMS download:
``<drop>/<assignment>/...``; each notebook's path is read with the course's LMS pattern (``term.LMS_PATTERNS``,
through nbgrader's own ``FileNameCollectorPlugin``).

Everything here is attacker-writable data: entries are judged with ``lstat`` (``files.folder_problems``:
no link, FIFO, device or hard link anywhere in a hand-in, a cap on entries and depth), read with
``O_NOFOLLOW`` and a size cap (``files.read_capped``), and copied into the course's archive
(``handins/<student>/<assignment>/<number>/``) as new files; nothing is ever followed or copied whole.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ....intake_rules import MAX_FILE_BYTES
from ..course.course import Course, load_config
from ..course.files import UnsafeFileError, folder_problems, name_problem, read_capped, readable_name, real_folder, write_new
from ..course.intake import _PLAIN_FILE_STEM, _PLAIN_SECRET, MAX_TIMESTAMP_BYTES, SECRET_FILE, TIMESTAMP_FILE
from ..course.term import LMS_PATTERNS
from ..outputs.safe_text import quoted

#: Where every hand-in the service took in is kept, one folder per hand-in (student data: git-ignored).
ARCHIVE_FOLDER = "handins"
#: A folder of the inbound still without ``submission_secret.txt`` after this long is refused as incomplete.
INCOMPLETE_AFTER_SECONDS = 600
#: Most entries of the inbound (or the drop folder) looked at in one scan; the rest wait for the next.
MAX_SCAN_ENTRIES = 5000


@dataclass
class Arrival:
    """A hand-in found in the inbound or the drop folder (not yet copied)."""

    origin: str  #: unique: ``exchange:<folder name>`` or ``drop:<relative path>:<sha256>``
    student: str
    assignment: str
    handed_in: str  #: nbgrader's timestamp text, ``""`` when unknown
    path: Path  #: the inbound folder, or the drop file
    refused: str = ""  #: why it is not taken in (then nothing is read from it)
    files: dict[str, bytes] = field(default_factory=dict)  #: what is taken in: file name -> bytes


def nbgrader_settings(course: Course):
    """nbgrader's configuration as its commands read it in the course folder: the ``nbgrader_config.py`` of each
    Jupyter configuration folder (system-wide first, the user's last), then the course's own over them."""
    from jupyter_core.paths import jupyter_config_dir, jupyter_config_path
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    folders = jupyter_config_path()
    if jupyter_config_dir() not in folders:
        folders.insert(0, jupyter_config_dir())
    merged = Config()
    for folder in reversed(folders):
        if (Path(folder) / "nbgrader_config.py").is_file():
            try:
                merged.merge(PyFileConfigLoader("nbgrader_config.py", path=folder).load_config())
            except Exception:  # noqa: BLE001 - a broken shared file: nbgrader's commands warn and go on too
                continue
    merged.merge(load_config(course))
    return merged


def exchange_root(course: Course) -> Path:
    """``c.Exchange.root`` as nbgrader reads it for this course (``nbgrader_settings``), else nbgrader's default."""
    from nbgrader.exchange.default.exchange import Exchange

    return Path(Exchange(config=nbgrader_settings(course)).root)


def check_owner(course: Course) -> bool:
    """``check_owner`` of nbgrader's collector as the course configures it (default: on)."""
    from nbgrader.exchange.default.collect import ExchangeCollect

    return bool(ExchangeCollect(config=nbgrader_settings(course)).check_owner)


def inbound_folder(course: Course) -> Path:
    return exchange_root(course) / course.term().course.id / "inbound"


def _owner_name(uid: int) -> str:
    import pwd

    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid} (no such user)"


def _split_inbound_name(name: str) -> tuple[str, str, str] | None:
    """``(student, assignment, timestamp)`` of an inbound folder name, as nbgrader's collect splits it."""
    parts = name.rsplit("+", 3)
    if len(parts) != 4:
        return None
    return parts[0], parts[1], parts[2]


def scan_exchange(course: Course, inbound: Path, seen, *, owner_checked: bool, now: float) -> list[Arrival]:
    """Every folder of ``inbound`` not ``seen`` (a predicate on the origin) and complete, read or refused."""
    try:
        with os.scandir(inbound) as listing:
            entries = [entry.name for _, entry in zip(range(MAX_SCAN_ENTRIES), listing)]
    except OSError:
        return []  # no inbound (yet): nothing has arrived
    assignments = set(course.assignments())
    found = []
    for name in sorted(entries):
        origin = f"exchange:{readable_name(name)}"
        if seen(origin):
            continue
        try:
            arrival = exchange_arrival(course, inbound / name, origin, assignments, owner_checked, now)
        except OSError as error:  # it changed while read: gone (looked at again if it comes back), or unreadable
            if not os.path.lexists(inbound / name):
                continue
            split = _split_inbound_name(name) or ("", "", "")
            arrival = Arrival(origin, *split, inbound / name,
                              refused=f"{quoted(readable_name(name), 120)} cannot be read ({error.strerror or error})")
        if arrival is not None:
            found.append(arrival)
    return found


def exchange_arrival(course: Course, path: Path, origin: str, assignments: set[str], owner_checked: bool,
                      now: float) -> Arrival | None:
    """One inbound folder as an ``Arrival`` (refused with the reason), or ``None`` while ``submit`` still writes it."""
    split = _split_inbound_name(path.name)
    student, assignment, handed_in = split or ("", "", "")
    arrival = Arrival(origin, student, assignment, handed_in, path)
    try:
        info = path.lstat()
    except OSError:
        return None  # gone again
    shown = quoted(readable_name(path.name), 120)
    if split is None:
        arrival.refused = f"{shown} is not named as `nbgrader submit` names a hand-in (student+assignment+time+random)"
    elif name_problem(student, "student") or name_problem(assignment, "assignment"):
        arrival.refused = name_problem(student, "student") or name_problem(assignment, "assignment")
    elif assignment not in assignments:
        return None  # another assignment of another course, or one not released yet: not this course's to judge
    elif not stat.S_ISDIR(info.st_mode):
        arrival.refused = f"{shown} is not a folder (a link, a file or a FIFO)"
    elif owner_checked and _owner_name(info.st_uid) != student:
        arrival.refused = (f"{shown} claims to be handed in by {student} but is owned by {_owner_name(info.st_uid)} "
                           "(nbgrader's check_owner): a hand-in in another student's name is refused")
    if arrival.refused:
        return arrival
    if not os.path.lexists(path / SECRET_FILE):
        if now - info.st_mtime < INCOMPLETE_AFTER_SECONDS:
            return None  # `nbgrader submit` is still writing it
        arrival.refused = f"{shown} never got its {SECRET_FILE}: an incomplete hand-in"
        return arrival
    problems = folder_problems(path, within=path.parent)
    if problems:
        arrival.refused = "refused, the hand-in holds what a notebook hand-in never does: " + "; ".join(
            quoted(problem, 120) for problem in problems[:5])
        return arrival
    arrival.files, arrival.refused = _read_hand_in(path)
    return arrival


def plain_notebook_name(name: object) -> bool:
    """Whether ``name`` is a notebook's file name that may also name its feedback page (``geometry (1).ipynb``)."""
    return isinstance(name, str) and name.endswith(".ipynb") and bool(_PLAIN_FILE_STEM.fullmatch(name[:-len(".ipynb")]))


def _read_hand_in(folder: Path) -> tuple[dict[str, bytes], str]:
    """The notebooks, ``timestamp.txt`` and ``submission_secret.txt`` at the top of ``folder`` (size-capped, never followed)."""
    files: dict[str, bytes] = {}
    with os.scandir(folder) as listing:
        names = sorted(entry.name for entry in listing if not entry.is_dir(follow_symlinks=False))
    for name in names:
        if not (plain_notebook_name(name) or name in (TIMESTAMP_FILE, SECRET_FILE)):
            continue
        try:
            files[name] = read_capped(folder / name, limit=MAX_FILE_BYTES if name.endswith(".ipynb") else MAX_TIMESTAMP_BYTES)
        except UnsafeFileError as error:
            return {}, f"{quoted(readable_name(name), 80)} is refused: {error}"
    if not any(name.endswith(".ipynb") for name in files):
        return {}, "the hand-in holds no notebook (.ipynb) with a plain name"
    secret = files.get(SECRET_FILE)
    if secret is not None and not _PLAIN_SECRET.fullmatch(secret.strip()):
        del files[SECRET_FILE]
    return files, ""


def scan_drop_folder(course: Course, drop: Path, lms: str, seen, *, now: float, looked_at: set | None = None) -> list[Arrival]:
    """Every notebook of ``drop/<assignment>/`` whose path the LMS pattern reads, not ``seen``.

    ``looked_at`` (kept by the caller between scans) holds ``(path, size, mtime)`` of the files read already: a
    file is read (to know its content, which names the hand-in) once, not at every scan.
    """
    looked_at = set() if looked_at is None else looked_at
    from nbgrader.plugins import FileNameCollectorPlugin

    collector = FileNameCollectorPlugin(named_regexp=LMS_PATTERNS[lms])
    found: list[Arrival] = []
    if not drop.is_dir() or drop.is_symlink():
        return found
    for assignment in course.assignments():
        folder = drop / assignment
        if folder.is_symlink() or not folder.is_dir():
            continue
        looked = 0
        for parent, folders, names in os.walk(folder, followlinks=False):
            folders[:] = [name for name in sorted(folders) if not (Path(parent) / name).is_symlink()]
            for name in sorted(names):
                looked += 1
                if looked > MAX_SCAN_ENTRIES:
                    break
                try:
                    info = os.lstat(Path(parent) / name)
                except OSError:
                    continue
                state = (str(Path(parent) / name), info.st_size, info.st_mtime_ns)
                if state in looked_at:
                    continue
                looked_at.add(state)
                arrival = drop_arrival(Path(parent) / name, drop, assignment, collector, seen, now)
                if arrival is not None:
                    found.append(arrival)
    return found


def drop_arrival(path: Path, drop: Path, assignment: str, collector, seen, now: float) -> Arrival | None:
    if not path.name.endswith(".ipynb"):
        return None
    info = collector.collect(str(path))
    if not info or not isinstance(info.get("student_id"), str):
        return None  # not a file the LMS wrote for a student: zip_collect skips it too
    relative = readable_name(str(path.relative_to(drop)))
    try:
        data = read_capped(path, limit=MAX_FILE_BYTES)
    except UnsafeFileError as error:
        origin = f"drop:{relative}:refused"
        return None if seen(origin) else Arrival(origin, info["student_id"], assignment, "", path, refused=str(error))
    origin = f"drop:{relative}:{hashlib.sha256(data).hexdigest()}"
    if seen(origin):
        return None
    student = info["student_id"]
    arrival = Arrival(origin, student, assignment, "", path)
    if name_problem(student, "student"):
        arrival.refused = name_problem(student, "student")
        return arrival
    moment = info.get("timestamp")
    when = moment if isinstance(moment, dt.datetime) else dt.datetime.fromtimestamp(now, dt.timezone.utc)
    arrival.handed_in = when.strftime("%Y-%m-%d %H:%M:%S.%f %Z").strip() or when.isoformat()
    notebook = info["file_id"] if plain_notebook_name(info.get("file_id")) else f"{assignment}.ipynb"
    arrival.files = {notebook: data, TIMESTAMP_FILE: arrival.handed_in.encode()}
    return arrival


def archive(course: Course, arrival: Arrival, number: int) -> Path:
    """Write what ``arrival`` brought into ``handins/<student>/<assignment>/<number>/`` (new files only); return it."""
    folder = real_folder(course.root, Path(ARCHIVE_FOLDER) / arrival.student / arrival.assignment / str(number))
    for name, data in arrival.files.items():
        target = folder / name
        if os.path.lexists(target):  # a restart after a crash in the middle of this copy: the same bytes again
            target.unlink()
        write_new(target, data)
    return folder


def archived(course: Course, student: str, assignment: str, number: int) -> Path:
    return course.root / ARCHIVE_FOLDER / student / assignment / str(number)


def handed_in_secret(folder: Path) -> str | None:
    """The hand-in's ``submission_secret.txt`` (what nbgrader names its feedback page by), when it has one."""
    try:
        return read_capped(folder / SECRET_FILE, limit=MAX_TIMESTAMP_BYTES).decode("ascii").strip() or None
    except (UnsafeFileError, UnicodeDecodeError):
        return None


def handed_in_notebooks(folder: Path) -> list[str]:
    """The notebook ids (file names without ``.ipynb``) of an archived hand-in."""
    return sorted(path.stem for path in folder.glob("*.ipynb") if not path.is_symlink())
