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

Everything here is attacker-writable data. An inbound folder is opened once (``files.open_folder``:
``O_DIRECTORY | O_NOFOLLOW`` relative to a descriptor of the inbound), its owner and type judged with
``fstat`` on that descriptor, and everything after is read through it (``files.tree_problems``: no link,
FIFO, device or hard link anywhere in a hand-in, a cap on entries and depth; ``files.read_capped`` with
``dir_fd``: ``O_NOFOLLOW``, ``fstat``, a size cap per file and in all), so a folder swapped for a link or a
file after it was judged is never followed. What is read is copied into the course's archive
(``handins/<student>/<assignment>/<number>/``) as new files; nothing is ever followed or copied whole.
A hand-in's time is one the service can vouch for: the moment its scan first found it complete (the service's
own clock, journaled then and kept whatever happens to the files afterwards), never a time in its name, its
``timestamp.txt``, or any folder or file time (a student holds a folder's ``st_ctime`` early by making it before
the due date and rewriting its files in place later). A folder still incomplete ``INCOMPLETE_AFTER_SECONDS``
after the service first saw it (by the service's clock), or after the folder last changed if that is earlier (its
``st_ctime``; never its ``st_mtime``, which a student sets), is refused, with the reason.
"""

from __future__ import annotations

import datetime as dt
import errno
import hashlib
import os
import stat
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from ...intake_rules import MAX_FILE_BYTES
from ..course.course import Course, load_config
from ..course.files import (UnsafeFileError, name_problem, open_folder, read_capped, readable_name, real_folder,
                            tree_problems, write_new)
from ..course.intake import _PLAIN_FILE_STEM, _PLAIN_SECRET, MAX_TIMESTAMP_BYTES, SECRET_FILE, TIMESTAMP_FILE
from ..course.term import LMS_PATTERNS
from ..course.safe_text import quoted

#: Where every hand-in the service took in is kept, one folder per hand-in (student data: git-ignored).
ARCHIVE_FOLDER = "handins"
#: A folder of the inbound still without ``submission_secret.txt`` this long after the service first saw it is
#: refused as incomplete.
INCOMPLETE_AFTER_SECONDS = 600
#: Most new entries looked into in one scan (the inbound's folders, a drop folder's files); the rest wait for the
#: next scan. Entries judged before are not counted: a scan always reaches what is new.
MAX_OPENED_PER_SCAN = 500
#: Most bytes read from one hand-in, all its files together (each file also at most ``MAX_FILE_BYTES``).
MAX_HANDIN_BYTES = MAX_FILE_BYTES
#: How nbgrader writes a hand-in's time (``Exchange.timestamp_format``'s default).
NBGRADER_TIME_FORMAT = "%Y-%m-%d %H:%M:%S.%f %Z"


@dataclass
class Arrival:
    """A hand-in found in the inbound or the drop folder (not yet copied)."""

    origin: str  #: unique: ``exchange:<folder name, percent-encoded>`` (``exchange_origin``) or ``drop:<relative path, percent-encoded>:<sha256>``
    student: str
    assignment: str
    handed_in: str  #: a time the service vouches for, as nbgrader writes one (``vouched_time``, ``lms_time``); ``""`` when unknown
    path: Path  #: the inbound folder, or the drop file
    refused: str = ""  #: why it is not taken in (then nothing is read from it)
    files: dict[str, bytes] = field(default_factory=dict)  #: what is taken in: file name -> bytes
    arrived_at: float | None = None  #: the service's clock when a scan first listed it (``None``: when it is journaled)


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


#: Characters of an inbound folder name kept as they are in its origin; every other byte is ``%XX``.
_ORIGIN_SAFE = "+@._-~ :"


def exchange_origin(name: str) -> str:
    """The journal's key of the inbound folder ``name``: one key per name, whatever its bytes.

    The name's bytes percent-encoded (``%`` itself included), so two names never share a key (a control
    character and the text of its escape did, as ``readable_name`` writes both alike); a name nbgrader
    writes (``student+assignment+2026-11-28 01:00:00.123456 UTC+random``) is its own key.
    """
    return "exchange:" + urllib.parse.quote(os.fsencode(name), safe=_ORIGIN_SAFE)


def exchange_folder_name(origin: str) -> str:
    """The inbound folder name of an ``exchange:`` origin (``exchange_origin`` undone)."""
    return os.fsdecode(urllib.parse.unquote_to_bytes(origin.removeprefix("exchange:")))


def drop_file_path(origin: str) -> str:
    """The path, below the drop folder, of a ``drop:`` origin (its percent-encoding undone)."""
    return os.fsdecode(urllib.parse.unquote_to_bytes(origin.removeprefix("drop:").rsplit(":", 1)[0]))


def vouched_time(seconds: float) -> str:
    """A moment the service can vouch for, as nbgrader writes a hand-in's time (``timestamp.txt``)."""
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc).strftime(NBGRADER_TIME_FORMAT)


class ExchangeScan:
    """The scans of one inbound folder by one run of the service, and what they remember between them.

    Each scan lists the whole inbound (names only) and looks into at most ``MAX_OPENED_PER_SCAN`` folders,
    those never looked into first, then round-robin over the entries' owners (uids, never the names' claims): the work of a scan is
    capped by what is new, never by a count of entries in listing order, so a new hand-in is seen however many
    old or junk entries the inbound holds. A name judged once (journaled) is never looked at again.
    """

    def __init__(self, course: Course, inbound: Path, *, owner_checked: bool) -> None:
        self.course, self.inbound, self.owner_checked = course, inbound, owner_checked
        self.judged: set[str] = set()  #: names journaled (or known to the journal): never looked at again
        self.looked_into: set[str] = set()  #: names opened and found incomplete (``submit`` still writing)
        self.more = False  #: the last scan left folders it did not look into (the next one takes them)
        self.first_seen: dict[str, float] = {}  #: name -> the service's clock when a scan first looked into it
        self.listed_at: dict[str, float] = {}  #: name -> the service's clock when a scan first listed it (its arrival)
        #: ``(student, apparent bytes) -> why refused`` before anything of a hand-in is read (the service's quota)
        self.refuse_unread: Callable[[str, int], str] | None = None

    def scan(self, seen, now: float) -> Iterator[Arrival]:
        """Each new complete folder of the inbound, read or refused (one at a time: nothing else held in memory).

        ``seen`` (a predicate on the origin) says which the journal knows. A folder is judged through a
        descriptor opened once (``exchange_arrival``); any error while judging one is its refusal.
        """
        self.more = False
        try:
            inbound_fd = open_folder(self.inbound)
        except OSError:
            return  # no inbound (yet): nothing has arrived
        try:
            assignments = set(self.course.assignments())
            try:
                listed = os.listdir(inbound_fd)
            except OSError:
                return  # the inbound cannot be listed now (it is the exchange's): the next scan tries again
            names = self._candidates(listed, assignments, seen, inbound_fd, now)
            # more to come only while some left out were never looked into (incomplete ones wait for the next scan)
            self.more = any(name not in self.looked_into for name in names[MAX_OPENED_PER_SCAN:])
            for name in names[:MAX_OPENED_PER_SCAN]:
                arrival = self._judge(inbound_fd, name, assignments, now)
                if arrival is None:
                    self.looked_into.add(name)
                    continue
                self.judged.add(name)
                self.looked_into.discard(name)
                arrival.arrived_at = self.listed_at.pop(name, now)
                self.first_seen.pop(name, None)
                yield arrival
        finally:
            os.close(inbound_fd)

    def _candidates(self, names: list[str], assignments: set[str], seen, inbound_fd: int, now: float) -> list[str]:
        """The names to look into: not judged, this course's, not known to the journal; new first, fair by owner.

        Turns go by the uid that owns each entry (``lstat`` relative to ``inbound_fd``), never by the student its
        name claims: a student who makes thousands of folders under made-up names takes one turn in each round
        of the scan, as one student, and a refused folder costs its owner's turn only.
        """
        fresh: list[str] = []
        for name in names:
            if name in self.judged:
                continue
            split = _split_inbound_name(name)
            if split is not None and split[1] not in assignments and not name_problem(split[1], "assignment"):
                continue  # another course's assignment, or one not released yet: judged by its name alone
            if seen(exchange_origin(name)):
                self.judged.add(name)
                continue
            fresh.append(name)
            self.listed_at.setdefault(name, now)
        return owner_turns(fresh, self.looked_into, lambda name: _owner_uid(name, inbound_fd))

    def _judge(self, inbound_fd: int, name: str, assignments: set[str], now: float) -> Arrival | None:
        try:
            return exchange_arrival(self.course, self.inbound, name, assignments, self.owner_checked, now,
                                    inbound_fd=inbound_fd, first_seen=self.first_seen.setdefault(name, now),
                                    refuse_unread=self.refuse_unread)
        except Exception as error:  # noqa: BLE001 -- one hand-in's trouble is its refusal, never the service's end
            split = _split_inbound_name(name) or ("", "", "")
            return Arrival(exchange_origin(name), split[0], split[1], "", self.inbound / name,
                           refused=f"{quoted(readable_name(name), 120)} cannot be read "
                                   f"({quoted(getattr(error, 'strerror', None) or repr(error), 120)})")


def _owner_uid(name: str, inbound_fd: int) -> int:
    """The uid owning the inbound entry ``name`` (not followed); ``-1`` when it is gone."""
    try:
        return os.lstat(name, dir_fd=inbound_fd).st_uid
    except OSError:
        return -1


def owner_turns(names: list[str], looked_into: set[str], owner) -> list[str]:
    """``names`` in the order a scan looks into them: never looked into first, then one per owner in turn.

    Parameters
    ----------
    names
        The inbound entries to order.
    looked_into
        Those looked into before and found incomplete: after every new one.
    owner
        The owner of a name (a uid), by which the turns are taken.

    Returns
    -------
    list of str
        Round by round, each owner's next name (owners and each owner's names in name order).
    """
    turn: dict[tuple[bool, int], int] = {}
    order = []
    for name in sorted(names):
        key = (name in looked_into, owner(name))
        turn[key] = turn.get(key, 0) + 1
        order.append((*key[:1], turn[key], key[1], name))
    return [name for *_, name in sorted(order)]


def exchange_arrival(course: Course, inbound: Path, name: str, assignments: set[str], owner_checked: bool,
                     now: float, *, inbound_fd: int | None = None, first_seen: float | None = None,
                     refuse_unread: Callable[[str, int], str] | None = None) -> Arrival | None:
    """The inbound folder ``name`` as an ``Arrival`` (refused with the reason), or ``None`` while ``submit`` still
    writes it (or when it is gone, or not this course's).

    The folder is opened once (``O_DIRECTORY | O_NOFOLLOW``, relative to ``inbound_fd``); its owner and type are
    judged on that descriptor and everything is read through it, so a folder swapped for a link or a file after it
    was judged is never followed: what is read is what was judged. Its time is ``now``, the moment the service
    found it complete, never a time the student wrote (its name, ``timestamp.txt``) or a folder or file time;
    ``first_seen`` (default ``now``) is when the service first saw it, for the bound on an incomplete one.
    """
    if inbound_fd is None:
        inbound_fd = open_folder(inbound)
        try:
            return exchange_arrival(course, inbound, name, assignments, owner_checked, now, inbound_fd=inbound_fd,
                                    first_seen=first_seen, refuse_unread=refuse_unread)
        finally:
            os.close(inbound_fd)
    split = _split_inbound_name(name)
    student, assignment, _ = split or ("", "", "")
    arrival = Arrival(exchange_origin(name), student, assignment, "", inbound / name)
    shown = quoted(readable_name(name), 120)
    if split is None:
        arrival.refused = f"{shown} is not named as `nbgrader submit` names a hand-in (student+assignment+time+random)"
        return arrival
    if name_problem(student, "student") or name_problem(assignment, "assignment"):
        arrival.refused = name_problem(student, "student") or name_problem(assignment, "assignment")
        return arrival
    if assignment not in assignments:
        return None  # another assignment of another course, or one not released yet: not this course's to judge
    try:
        folder_fd = open_folder(name, dir_fd=inbound_fd)
    except FileNotFoundError:
        return None  # gone again
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            arrival.refused = f"{shown} is not a folder (a link, a file or a FIFO)"
        else:
            arrival.refused = f"{shown} cannot be read ({error.strerror or error})"
        return arrival
    try:
        return _judge_folder(arrival, folder_fd, shown, owner_checked, now, now if first_seen is None else first_seen,
                             refuse_unread)
    finally:
        os.close(folder_fd)


def _judge_folder(arrival: Arrival, folder_fd: int, shown: str, owner_checked: bool, now: float,
                  first_seen: float, refuse_unread: Callable[[str, int], str] | None = None) -> Arrival | None:
    info = os.fstat(folder_fd)
    if not stat.S_ISDIR(info.st_mode):
        arrival.refused = f"{shown} is not a folder (a link, a file or a FIFO)"
    elif owner_checked and _owner_name(info.st_uid) != arrival.student:
        arrival.refused = (f"{shown} claims to be handed in by {arrival.student} but is owned by "
                           f"{_owner_name(info.st_uid)} (nbgrader's check_owner): a hand-in in another student's "
                           "name is refused")
        # Journaled (and shown by status) as the owner's: the student named never handed it in (attack round 9).
        arrival.student = _owner_name(info.st_uid)
    if arrival.refused:
        return arrival
    try:
        # nbgrader's submit creates the secret's file empty, then writes it: an empty one is not there yet.
        secret_written = os.stat(SECRET_FILE, dir_fd=folder_fd, follow_symlinks=False).st_size > 0
    except FileNotFoundError:
        secret_written = False
    if not secret_written:
        # Since the service first saw it, or since the folder last changed (its st_ctime, which no user can set
        # ahead) if that is earlier: a service started again (``serve --once`` from cron) bounds it too.
        age = now - min(first_seen, info.st_ctime)
        if age < INCOMPLETE_AFTER_SECONDS:
            return None  # `nbgrader submit` is still writing it
        arrival.refused = (f"{shown} never got its {SECRET_FILE} (still incomplete {age:.0f} s after the service first "
                           "saw it): an incomplete hand-in, not graded; hand in again")
        return arrival
    problems = tree_problems(folder_fd)
    if problems:
        arrival.refused = "refused, the hand-in holds what a notebook hand-in never does: " + "; ".join(
            quoted(problem, 120) for problem in problems[:5])
        return arrival
    # A sparse file costs its student nothing and the service a read: one over the quota is refused by its size.
    wanted = _wanted(folder_fd)
    arrival.refused = refuse_unread(arrival.student, _apparent_bytes(folder_fd, wanted)) if refuse_unread else ""
    if arrival.refused:
        return arrival
    arrival.files, arrival.refused = _read_hand_in(folder_fd, wanted)
    # The service's own clock when it first found the hand-in complete: no folder or file time (a folder's
    # st_ctime stays as it was when its files are rewritten in place), nor the time in its name or timestamp.txt.
    # Read now, not at the scan's start: a scan held long (by a flood of folders) would date this one before its time.
    arrival.handed_in = vouched_time(max(now, time.time()))
    if arrival.files:
        arrival.files[TIMESTAMP_FILE] = arrival.handed_in.encode()
    return arrival


def plain_notebook_name(name: object) -> bool:
    """Whether ``name`` is a notebook's file name that may also name its feedback page (``geometry (1).ipynb``)."""
    return isinstance(name, str) and name.endswith(".ipynb") and bool(_PLAIN_FILE_STEM.fullmatch(name[:-len(".ipynb")]))


def _wanted(folder_fd: int) -> list[str]:
    """The files a hand-in is read for, at the top of the folder open as ``folder_fd``."""
    return sorted(name for name in os.listdir(folder_fd) if plain_notebook_name(name) or name in (TIMESTAMP_FILE, SECRET_FILE))


def _apparent_bytes(folder_fd: int, names: list[str]) -> int:
    """The sizes of ``names`` in the folder open as ``folder_fd``, as they read (a sparse file by its apparent size)."""
    total = 0
    for name in names:
        try:
            total += os.stat(name, dir_fd=folder_fd, follow_symlinks=False).st_size
        except FileNotFoundError:
            continue
    return total


def _read_hand_in(folder_fd: int, wanted: list[str]) -> tuple[dict[str, bytes], str]:
    """The files ``wanted`` (``_wanted``: the notebooks, ``timestamp.txt`` and ``submission_secret.txt``) at the top of
    the folder open as ``folder_fd`` (read through it, never followed), at most ``MAX_HANDIN_BYTES`` in all,
    ``MAX_FILE_BYTES`` each."""
    files: dict[str, bytes] = {}
    if _apparent_bytes(folder_fd, wanted) > MAX_HANDIN_BYTES:
        return {}, f"the hand-in's files are larger in all than the grader reads ({MAX_HANDIN_BYTES // (1024 * 1024)} MiB)"
    total = 0  # what is read, whatever the sizes said a moment before: a file may grow in between
    for name in wanted:
        limit = MAX_FILE_BYTES if name.endswith(".ipynb") else MAX_TIMESTAMP_BYTES
        try:
            data = read_capped(name, limit=min(limit, MAX_HANDIN_BYTES - total), dir_fd=folder_fd)
        except UnsafeFileError as error:
            return {}, f"{quoted(readable_name(name), 80)} is refused: {error}"
        total += len(data)
        files[name] = data
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
                try:
                    info = os.lstat(Path(parent) / name)
                except OSError:
                    continue
                state = (str(Path(parent) / name), info.st_size, info.st_mtime_ns)
                if state in looked_at:
                    continue
                looked += 1  # only what is new counts: files read before never hide a new one
                if looked > MAX_OPENED_PER_SCAN:
                    break
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
    relative = urllib.parse.quote(os.fsencode(path.relative_to(drop)), safe=_ORIGIN_SAFE + "/")  # one key per path
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
    notebook = info["file_id"] if plain_notebook_name(info.get("file_id")) else f"{assignment}.ipynb"
    arrival.files = {notebook: data}
    # The hand-in's time is the LMS's (in the file name it wrote, as zip_collect reads it), or unknown: the moment
    # the TA downloaded it, or the service saw it, says nothing of when the student handed it in.
    moment = lms_time(info.get("timestamp"))
    if moment is not None:
        arrival.handed_in = moment.strftime(NBGRADER_TIME_FORMAT)
        arrival.files[TIMESTAMP_FILE] = arrival.handed_in.encode()
    return arrival


def lms_time(text: object) -> dt.datetime | None:
    """The time an LMS wrote in a file name (Blackboard's ``2026-11-27-23-59-01``), in UTC as nbgrader takes a
    time without a zone; ``None`` when there is none or it does not read as a time.

    Blackboard's dashes are read field by field: ``zip_collect``'s ``parse_utc`` (dateutil) takes ``-23-59-01``
    for a zone and gives midnight.
    """
    if not isinstance(text, str) or not text:
        return None
    from nbgrader.utils import parse_utc

    try:
        moment = dt.datetime.strptime(text, "%Y-%m-%d-%H-%M-%S")
    except ValueError:
        try:
            moment = parse_utc(text)
        except (ValueError, OverflowError, TypeError):
            return None
    return moment.replace(tzinfo=dt.timezone.utc) if moment.tzinfo is None else moment.astimezone(dt.timezone.utc)


def kept_usage(course: Course, student: str) -> tuple[int, int]:
    """``(hand-ins, bytes)`` kept in ``handins/<student>/``: every file by its apparent size (``st_size``: a sparse
    file counts as large as it reads), links and other entries never followed."""
    root = course.root / ARCHIVE_FOLDER / student
    count = total = 0
    if root.is_symlink() or not root.is_dir():
        return 0, 0
    for parent, folders, names in os.walk(root, followlinks=False):
        depth = len(Path(parent).relative_to(root).parts)
        if depth == 1:  # handins/<student>/<assignment>/: each numbered folder is one hand-in
            count += sum(1 for name in folders if name.isdigit())
        for name in names:
            try:
                total += os.lstat(os.path.join(parent, name)).st_size
            except OSError:
                continue
    return count, total


def quota_problem(course: Course, student: str, size: int, most_handins: int, most_mib: int) -> str:
    """Why keeping a hand-in of ``size`` bytes would put ``student`` over the term's quota (``[serve]
    quota_handins``, ``quota_mib``; 0: none), ``""`` when it fits."""
    if not (most_handins or most_mib):
        return ""
    count, total = kept_usage(course, student)
    if most_handins and count + 1 > most_handins:
        return (f"you have {count} hand-ins kept, the most the course keeps of one student ({most_handins}): "
                "this one is not kept; ask your TA")
    if most_mib and total + size > most_mib * 1024 * 1024:
        return (f"your kept hand-ins take {total / 2**20:.1f} MiB and this one {size / 2**20:.1f} MiB, more than "
                f"the {most_mib} MiB the course keeps of one student: this one is not kept; ask your TA")
    return ""


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


def secret_owners(course: Course) -> dict[str, str]:
    """Each submission secret of the kept hand-ins (``handins/``), with the student whose hand-in brought it."""
    owners: dict[str, str] = {}
    for path in sorted((course.root / ARCHIVE_FOLDER).glob(f"*/*/*/{SECRET_FILE}")):
        secret = handed_in_secret(path.parent)
        if secret is not None:
            owners.setdefault(secret, path.parent.parent.parent.name)
    return owners


def borrowed_secret_problem(owners: dict[str, str], arrival: Arrival) -> str:
    """Why ``arrival`` is refused for carrying the submission secret of another student's hand-in, or ``""``.

    nbgrader names a feedback page in the exchange after the secret (``md5(secret + notebook)``): a hand-in with a
    classmate's secret (read from a cache folder left readable) would have its page released over the classmate's.
    """
    secret = arrival.files.get(SECRET_FILE, b"").decode("ascii", "replace").strip()
    owner = owners.get(secret) if secret else None
    if owner is None or owner == arrival.student:
        return ""
    return (f"the hand-in carries the {SECRET_FILE} of another student's hand-in (what names whose feedback page it "
            "is): refused, not graded; hand in again with nbgrader submit")


def handed_in_notebooks(folder: Path) -> list[str]:
    """The notebook ids (file names without ``.ipynb``) of an archived hand-in."""
    return sorted(path.stem for path in folder.glob("*.ipynb") if not path.is_symlink())
