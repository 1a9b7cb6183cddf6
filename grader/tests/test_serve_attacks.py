"""Attack round 14 on ``perceptron-course serve`` (``grader/tests/fixtures/attacks_serve_hub/README.md``), one test per finding.

The intake is driven in process (``inbox.ExchangeScan``, ``Service.take_in`` with no grading stream): the races are
made to happen at the moment the code reads (a hook swaps the folder just before the first file is read), never
left to timing.
"""

from __future__ import annotations

import datetime as dt
import os
import stat
import time
from pathlib import Path

import pytest
from conftest import fixture_course

from course_grader.trusted.course import files
from course_grader.trusted.course.example_class import copy_course
from course_grader.trusted.course.term import LMS_PATTERNS
from course_grader.trusted.serving import inbox
from course_grader.trusted.serving.journal import COLLECTED, HELD, LIMITED, REFUSED, RELEASED, Journal
from course_grader.trusted.serving.policy import HOLD, decide
from course_grader.trusted.serving.release import release_notice
from course_grader.trusted.serving.service import Service

COURSE_ID = "fixture"  # grader/tests/fixtures/course/term.toml
ASSIGNMENT = "01_geometry"
EVE_NOTEBOOK = b'{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5, "eve": true}'
BOB_NOTEBOOK = b'{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5, "bob": true}'
BACKDATED = "2020-01-01 00:00:00.000000 UTC"


@pytest.fixture
def course(tmp_path):
    course = copy_course(fixture_course(), tmp_path / "course")
    config = course.root / "nbgrader_config.py"
    config.write_text(config.read_text() + f"\nc.Exchange.root = {str(tmp_path / 'exchange')!r}\n")
    (tmp_path / "exchange" / COURSE_ID / "inbound").mkdir(parents=True)
    return course


def hand_in(folder: Path, notebook: bytes = EVE_NOTEBOOK, *, secret: str = "evesecret", stamp: str = BACKDATED) -> Path:
    """A folder laid out as ``nbgrader submit`` writes it (the secret last)."""
    folder.mkdir()
    (folder / "geometry.ipynb").write_bytes(notebook)
    (folder / "timestamp.txt").write_text(stamp)
    (folder / "submission_secret.txt").write_text(secret)
    return folder


def name_of(student: str, moment: str = BACKDATED, random: str = "a1b2") -> str:
    return f"{student}+{ASSIGNMENT}+{moment}+{random}"


def scan(course) -> list[inbox.Arrival]:
    scanner = inbox.ExchangeScan(course, inbox.inbound_folder(course), owner_checked=False)
    return list(scanner.scan(lambda origin: False, 0.0))


def service(course, tmp_path) -> tuple[Service, list[str]]:
    lines: list[str] = []
    journal = Journal(tmp_path / "journal.sqlite")
    server = Service(course, journal, None, None, say=lines.append)
    server.exchange.owner_checked = False  # the folders here are the test's (the owner check: test_serve.py)
    return server, lines


def swap_before_the_first_read(monkeypatch, do_swap) -> list[bool]:
    """Make ``do_swap`` happen once, just before the intake opens the first file of a hand-in it judged."""
    done: list[bool] = []
    original = inbox.read_capped

    def hooked(*args, **kwargs):
        if not done:
            done.append(True)
            do_swap()
        return original(*args, **kwargs)

    monkeypatch.setattr(inbox, "read_capped", hooked)
    return done


# ---------------------------------------------------------------------------- 3 and 7: the folder swapped after judging


def test_3_a_folder_swapped_for_a_link_after_judging_is_read_as_judged_never_through_the_link(course, monkeypatch, tmp_path):
    inbound = inbox.inbound_folder(course)
    victim = hand_in(tmp_path / "bobs-submitted", BOB_NOTEBOOK, secret="bobsecret")
    eve = hand_in(inbound / name_of("eve"))

    def swap() -> None:  # what renameat2(RENAME_EXCHANGE) does in one step
        eve.rename(inbound / "eve-own")
        (inbound / eve.name).symlink_to(victim)

    done = swap_before_the_first_read(monkeypatch, swap)
    (arrival,) = scan(course)
    assert done and (inbound / eve.name).is_symlink()
    assert arrival.files["geometry.ipynb"] == EVE_NOTEBOOK and arrival.files["submission_secret.txt"] == b"evesecret"
    assert b"bob" not in b"".join(arrival.files.values())


def test_7_a_folder_swapped_for_a_file_or_removed_while_read_is_no_crash(course, monkeypatch, tmp_path):
    inbound = inbox.inbound_folder(course)
    eve = hand_in(inbound / name_of("eve"))

    def swap() -> None:
        eve.rename(tmp_path / "elsewhere")
        (inbound / eve.name).write_bytes(b"")

    swap_before_the_first_read(monkeypatch, swap)
    (arrival,) = scan(course)
    assert arrival.files["geometry.ipynb"] == EVE_NOTEBOOK  # read from the folder that was judged, wherever it went
    # and a folder whose files vanish under the reader: refused with a reason, nothing raised
    hand_in(inbound / name_of("eve", random="c3d4"))
    monkeypatch.undo()
    swap_before_the_first_read(monkeypatch, lambda: [path.unlink() for path in (inbound / name_of("eve", random="c3d4")).iterdir()])
    (arrival,) = [a for a in scan(course) if a.origin.endswith("c3d4")]
    assert arrival.refused and not arrival.files


def test_intake_reads_nothing_by_path_inside_an_inbound_folder(course, monkeypatch):
    """Structurally: every open, listing and stat of the intake below the inbound goes through a descriptor."""
    inbound = inbox.inbound_folder(course)
    hand_in(inbound / name_of("eve"))
    by_path: list[str] = []
    for name in ("open", "listdir", "scandir", "stat", "lstat"):
        original = getattr(os, name)

        def spy(path=".", *args, _original=original, **kwargs):
            if str(path).startswith(str(inbound) + os.sep):
                by_path.append(str(path))
            return _original(path, *args, **kwargs)

        monkeypatch.setattr(os, name, spy)
    (arrival,) = scan(course)
    monkeypatch.undo()
    assert not arrival.refused and arrival.files and by_path == []


# ---------------------------------------------------------------------------- 6: a subfolder that cannot be read


def test_6_an_unreadable_subfolder_is_a_refusal_and_the_service_goes_on(course, monkeypatch, tmp_path):
    inbound = inbox.inbound_folder(course)
    wedge = hand_in(inbound / name_of("eve"))
    (wedge / ".ipynb_checkpoints").mkdir(mode=0o700)
    hand_in(inbound / name_of("bob", random="b0b0"), BOB_NOTEBOOK, secret="bobsecret")
    original = files.open_folder

    def as_a_user_who_may_not(name, *, dir_fd=None):  # what a TA's own uid meets in a student's 0700 folder
        if str(name) == ".ipynb_checkpoints":
            raise PermissionError(13, "Permission denied")
        return original(name, dir_fd=dir_fd)

    monkeypatch.setattr(files, "open_folder", as_a_user_who_may_not)
    server, lines = service(course, tmp_path)
    assert server.take_in() == 2
    rows = {row.student: row for row in server.journal.in_state(REFUSED, COLLECTED)}
    assert rows["eve"].state == REFUSED and ".ipynb_checkpoints cannot be read (Permission denied)" in rows["eve"].reason
    assert rows["bob"].state == COLLECTED


def test_any_error_while_taking_in_one_arrival_is_its_refusal_journaled(course, monkeypatch, tmp_path):
    inbound = inbox.inbound_folder(course)
    hand_in(inbound / name_of("eve"))
    hand_in(inbound / name_of("bob", random="b0b0"), BOB_NOTEBOOK, secret="bobsecret")
    original = inbox._read_hand_in

    def breaks_on_eve(folder_fd, wanted):
        files_read, refused = original(folder_fd, wanted)
        if files_read.get("submission_secret.txt") == b"evesecret":
            raise RuntimeError("something nobody foresaw")
        return files_read, refused

    monkeypatch.setattr(inbox, "_read_hand_in", breaks_on_eve)
    server, lines = service(course, tmp_path)
    server.take_in()
    rows = {row.student: row for row in server.journal.in_state(REFUSED, COLLECTED)}
    assert rows["eve"].state == REFUSED and "something nobody foresaw" in rows["eve"].reason
    assert rows["bob"].state == COLLECTED
    assert server.take_in() == 0  # judged once: not looked at again


# ---------------------------------------------------------------------------- 1: one origin for two names


def test_1_names_that_read_alike_have_distinct_origins_and_are_both_journaled(course, tmp_path):
    inbound = inbox.inbound_folder(course)
    control = name_of("eve", moment="2026-11-28 01:00:00.000000 UTC\x01")
    text = name_of("eve", moment="2026-11-28 01:00:00.000000 UTC\\x01")
    assert files.readable_name(control) == files.readable_name(text)  # what made one origin of both
    hand_in(inbound / control)
    hand_in(inbound / text)
    server, lines = service(course, tmp_path)
    assert server.take_in() == 2
    origins = {row.origin for row in server.journal.in_state(COLLECTED)}
    assert len(origins) == 2
    assert {inbox.exchange_folder_name(origin) for origin in origins} == {control, text}
    assert all(origin.isprintable() for origin in origins)


def test_a_plain_name_keeps_the_origin_it_had():
    name = name_of("ada", moment="2026-11-28 01:00:00.123456 UTC")
    assert inbox.exchange_origin(name) == f"exchange:{name}"


# ---------------------------------------------------------------------------- 4: the scan's cap


def test_4_a_new_hand_in_is_seen_however_many_old_junk_or_incomplete_entries_the_inbound_holds(course, monkeypatch, tmp_path):
    monkeypatch.setattr(inbox, "MAX_OPENED_PER_SCAN", 3)
    inbound = inbox.inbound_folder(course)
    for number in range(40):  # junk named for an assignment the course does not have: judged by the name alone
        (inbound / f"eve+no_such_assignment+{number}+x").write_bytes(b"")
    for number in range(10):  # eve's folders that stay incomplete (no secret): looked into, not journaled
        (inbound / name_of("eve", random=f"inc{number:02}")).mkdir()
    server, lines = service(course, tmp_path)
    server.take_in()
    hand_in(inbound / name_of("bob", random="zzzz"), BOB_NOTEBOOK, secret="bobsecret")  # last in name order
    server.take_in()
    assert [row.student for row in server.journal.in_state(COLLECTED)] == ["bob"]
    hand_in(inbound / name_of("ada", random="zzzz"), secret="adasecret")
    server.take_in()
    assert [row.student for row in server.journal.in_state(COLLECTED)] == ["bob", "ada"]


def test_issue_40_a_flood_under_made_up_names_takes_one_turn_of_its_owner_and_the_wait_runs_from_arrival(
        course, monkeypatch, tmp_path):
    # 12,000 empty folders under made-up names sorting first left an honest hand-in unseen for 111 s: the scan took
    # turns by the name a folder claims. Here 30 folders of one owner, 3 looked into per scan.
    monkeypatch.setattr(inbox, "MAX_OPENED_PER_SCAN", 3)
    inbound = inbox.inbound_folder(course)
    for number in range(30):
        folder = inbound / name_of(f"aa{number:02}")
        folder.mkdir()
        os.chown(folder, 4242, -1)  # the flooder's uid (CI runs as root, as the service's folders are the test's)
    hand_in(inbound / name_of("zed", random="zzzz"), BOB_NOTEBOOK, secret="zedsecret")  # owned by this test's uid
    server, lines = service(course, tmp_path)
    clock = [SERVICE_CLOCK]
    monkeypatch.setattr("course_grader.trusted.serving.service.time.time", lambda: clock[0])
    server.journal.clock = lambda: clock[0]
    server.take_in()
    assert [row.student for row in server.journal.in_state(COLLECTED)] == ["zed"]
    (row,) = server.journal.in_state(COLLECTED)
    assert row.arrival == SERVICE_CLOCK
    # listed by a scan that could not look into it yet: its wait runs from that scan, not from when it was read
    monkeypatch.setattr(inbox, "MAX_OPENED_PER_SCAN", 0)
    hand_in(inbound / name_of("ada", random="zzzz"), secret="adasecret")
    server.take_in()
    clock[0] += 60
    monkeypatch.setattr(inbox, "MAX_OPENED_PER_SCAN", 3)
    server.take_in()
    ada = [row for row in server.journal.in_state(COLLECTED) if row.student == "ada"]
    assert len(ada) == 1 and ada[0].arrival == SERVICE_CLOCK and ada[0].seen_at == SERVICE_CLOCK + 60


def test_the_owner_turns_go_round_by_uid_whatever_the_names_claim():
    owners = {"a1": 1, "a2": 1, "a3": 1, "b1": 2, "c1": 3, "c2": 3}
    assert inbox.owner_turns(list(owners), {"a1"}, owners.get) == ["a2", "b1", "c1", "a3", "c2", "a1"]


def test_the_journal_is_asked_once_per_name_across_scans(course, tmp_path):
    inbound = inbox.inbound_folder(course)
    for number in range(5):
        hand_in(inbound / name_of("eve", random=f"r{number}"))
    asked: list[str] = []
    scanner = inbox.ExchangeScan(course, inbound, owner_checked=False)
    for _ in range(3):
        list(scanner.scan(lambda origin: asked.append(origin) or False, 0.0))
    assert len(asked) == 5 and len(set(asked)) == 5


# ---------------------------------------------------------------------------- 8: sizes


def test_8_sparse_notebooks_larger_in_all_than_the_cap_are_refused_unread(course, monkeypatch):
    inbound = inbox.inbound_folder(course)
    folder = hand_in(inbound / name_of("eve"))
    for number in range(3):  # 3 x 100 MiB apparent, a few blocks on disk
        with open(folder / f"sparse{number}.ipynb", "wb") as handle:
            handle.truncate(100 * 1024 * 1024)
    read: list[int] = []
    original = files.os.fdopen

    def counting(*args, **kwargs):
        handle = original(*args, **kwargs)
        read.append(1)
        return handle

    monkeypatch.setattr(files.os, "fdopen", counting)
    (arrival,) = scan(course)
    assert arrival.refused.startswith("the hand-in's files are larger in all than the grader reads")
    assert not arrival.files and read == []


def with_serve(course, table: str) -> None:
    """``table`` as the fixture course's ``[serve]``."""
    term = course.root / "term.toml"
    term.write_text(term.read_text(encoding="utf-8").replace("[bundle]", f"[serve]\n{table}\n\n[bundle]", 1),
                    encoding="utf-8")


def test_issue_40_sparse_notebooks_count_by_their_size_against_the_students_quota(course, tmp_path):
    # Six sparse 120 MiB notebooks (48 KiB of the student's disk) became 840 MiB of real bytes on the TA's disk:
    # one hand-in was capped, the number not. Here: a quota of 1 MiB and of 3 hand-ins, notebooks of 600 KiB.
    with_serve(course, "quota_mib = 1\nquota_handins = 3")
    inbound = inbox.inbound_folder(course)
    server, _ = service(course, tmp_path)
    for number in range(2):
        folder = hand_in(inbound / name_of("eve", random=f"s{number}"))
        with open(folder / "sparse.ipynb", "wb") as handle:
            handle.truncate(600 * 1024)  # a few blocks on disk
        server.take_in()
    (kept,) = server.journal.in_state(COLLECTED)
    (refused,) = server.journal.in_state(REFUSED)
    assert "more than the 1 MiB the course keeps of one student" in refused.reason
    assert not inbox.archived(course, "eve", ASSIGNMENT, refused.seq).exists()
    for number in range(3):
        hand_in(inbound / name_of("eve", random=f"p{number}"))
        server.take_in()
    assert len(server.journal.in_state(COLLECTED)) == 3 and len(server.journal.in_state(REFUSED)) == 2
    assert "3 hand-ins kept, the most the course keeps of one student (3)" in server.journal.in_state(REFUSED)[-1].reason
    hand_in(inbound / name_of("bob", random="b"), BOB_NOTEBOOK, secret="bobsecret")  # a classmate's own quota
    server.take_in()
    assert [row.student for row in server.journal.in_state(COLLECTED)][-1] == "bob"


def test_a_hand_in_over_the_quota_is_refused_by_its_sizes_before_any_of_it_is_read(course, tmp_path, monkeypatch):
    # Attack round 6: 200 sparse 127 MiB notebooks, made in 3 s, were each read whole (0.45 s) before the quota refused
    # them, in the loop that also grades: a classmate waited 67 s.
    with_serve(course, "quota_mib = 20")
    inbound = inbox.inbound_folder(course)
    folder = hand_in(inbound / name_of("eve", random="big"))
    with open(folder / "geometry.ipynb", "wb") as handle:
        handle.truncate(127 * 1024 * 1024)
    reads: list[str] = []
    real_read = inbox.read_capped
    monkeypatch.setattr(inbox, "read_capped", lambda name, **kwargs: reads.append(str(name)) or real_read(name, **kwargs))
    server, _ = service(course, tmp_path)
    server.take_in()
    (refused,) = server.journal.in_state(REFUSED)
    assert "more than the 20 MiB the course keeps of one student" in refused.reason and reads == []


def test_a_file_that_grows_after_the_sizes_were_summed_is_still_capped_by_what_is_read(course, monkeypatch):
    monkeypatch.setattr(inbox, "MAX_HANDIN_BYTES", 1000)
    inbound = inbox.inbound_folder(course)
    folder = hand_in(inbound / name_of("eve"))
    swap_before_the_first_read(monkeypatch, lambda: (folder / "geometry.ipynb").write_bytes(b"x" * 5000))
    (arrival,) = scan(course)
    assert "larger than the grader reads" in arrival.refused and not arrival.files


# ---------------------------------------------------------------------------- timestamps a student writes


def test_a_backdated_name_and_timestamp_are_replaced_by_the_time_the_service_saw_it_complete(course):
    inbound = inbox.inbound_folder(course)
    hand_in(inbound / name_of("eve"))
    scanner = inbox.ExchangeScan(course, inbound, owner_checked=False)
    (arrival,) = scanner.scan(lambda origin: False, SERVICE_CLOCK)
    vouched = inbox.vouched_time(SERVICE_CLOCK)
    assert arrival.handed_in == vouched and arrival.files["timestamp.txt"] == vouched.encode()
    assert BACKDATED.encode() not in b"".join(arrival.files.values())


def test_a_hand_in_is_dated_when_it_is_found_complete_not_when_a_long_scan_began(course):
    # Attack round 6: a flood kept one scan running across the due date; a folder completed 5 s after it was dated
    # at the scan's start, 49 s before the due date, and graded as on time.
    inbound = inbox.inbound_folder(course)
    hand_in(inbound / name_of("eve"))
    scanner = inbox.ExchangeScan(course, inbound, owner_checked=False)
    began = time.time() - 3600  # the scan began an hour ago and reaches this folder only now
    (arrival,) = scanner.scan(lambda origin: False, began)
    assert arrival.handed_in >= inbox.vouched_time(time.time() - 60)


#: The service's clock in the tests of hand-in times: far from the files' own times (now), so that a folder or file
#: time taken for the hand-in's shows.
SERVICE_CLOCK = dt.datetime(2031, 5, 1, 12, 0, tzinfo=dt.timezone.utc).timestamp()


def test_issue_40_a_folder_made_early_and_rewritten_in_place_after_the_due_date_is_late(course):
    # Made before the due date with empty files (an empty secret reads as still being written), rewritten in place
    # after it: the folder's ctime stays the early one; the hand-in's time is when the service saw it complete.
    inbound = inbox.inbound_folder(course)
    folder = hand_in(inbound / name_of("eve"), secret="")
    (folder / "geometry.ipynb").write_bytes(b"")
    scanner = inbox.ExchangeScan(course, inbound, owner_checked=False)
    clock = time.time()  # the service's clock (the bound on an incomplete folder also reads its change time)
    assert list(scanner.scan(lambda origin: False, clock)) == []  # before the due date: incomplete
    ctime = os.stat(folder).st_ctime
    for name, data in (("geometry.ipynb", EVE_NOTEBOOK), ("submission_secret.txt", b"evesecret")):
        with open(folder / name, "r+b") as handle:  # in place: the folder's entries, and its ctime, unchanged
            handle.write(data)
    assert os.stat(folder).st_ctime == ctime
    later = clock + 300  # after the due date, within the bound on an incomplete hand-in
    (arrival,) = scanner.scan(lambda origin: False, later)
    assert not arrival.refused and arrival.handed_in == inbox.vouched_time(later)


def test_issue_40_a_hand_in_that_never_finishes_is_refused_past_the_bound_even_with_a_future_mtime(course, tmp_path):
    inbound = inbox.inbound_folder(course)
    folder = inbound / name_of("eve")
    folder.mkdir()
    (folder / "geometry.ipynb").write_bytes(EVE_NOTEBOOK)
    clock = time.time()
    future = clock + 10 * 365 * 86400
    os.utime(folder, (future, future))
    server, _ = service(course, tmp_path)
    for moment in (clock, clock + inbox.INCOMPLETE_AFTER_SECONDS - 10):
        assert list(server.exchange.scan(server.journal.known, moment)) == []
    bound = clock + inbox.INCOMPLETE_AFTER_SECONDS
    # a service started again (`serve --once` from cron) knows nothing of the last run's first sight: bounded too
    (again,) = inbox.ExchangeScan(course, inbound, owner_checked=False).scan(lambda origin: False, bound)
    (arrival,) = server.exchange.scan(server.journal.known, bound)
    assert "never got its submission_secret.txt" in arrival.refused and again.refused == arrival.refused
    server.take_in_one(arrival)
    (row,) = server.journal.in_state(REFUSED)
    assert "an incomplete hand-in" in row.reason and row.student == "eve"


def test_a_backdated_hand_in_is_held_when_late_is_hold(course, tmp_path):
    term = course.root / "term.toml"
    text = term.read_text(encoding="utf-8")
    yesterday = (dt.datetime.now() - dt.timedelta(days=1)).strftime("%Y-%m-%d %H:%M")
    term.write_text(text.replace(f'name = "{ASSIGNMENT}"', f'name = "{ASSIGNMENT}"\ndue = "{yesterday}"', 1)
                    .replace("[bundle]", '[serve]\nlate = "hold"\n\n[bundle]', 1), encoding="utf-8")
    hand_in(inbox.inbound_folder(course) / name_of("eve"))  # claims 2020, long before the due date
    server, _ = service(course, tmp_path)
    server.take_in()
    (row,) = server.journal.in_state(COLLECTED)
    assert decide(course.term(), row, [], row.seen_at).action == HOLD
    # issue 40: the held hand-in replaced the graded one in submitted/, where the TA's `grade` graded it
    graded = course.root / "submitted" / "eve" / ASSIGNMENT
    graded.mkdir(parents=True)
    (graded / "geometry.ipynb").write_bytes(BOB_NOTEBOOK)
    server.begin(row)
    assert server.journal.get(row.seq).state == HELD
    assert [path.name for path in graded.iterdir()] == ["geometry.ipynb"]
    assert (graded / "geometry.ipynb").read_bytes() == BOB_NOTEBOOK


# ---------------------------------------------------------------------------- 5: an LMS download's time


def test_5_an_lms_file_without_a_time_in_its_name_gets_none_and_one_with_a_time_gets_the_lms_time(tmp_path):
    from nbgrader.plugins import FileNameCollectorPlugin

    drop = tmp_path / "drop"
    canvas = drop / ASSIGNMENT / "smithbob_4242_99_geometry.ipynb"
    board = drop / ASSIGNMENT / "Assignment_bob_attempt_2026-11-27-23-59-01_geometry.ipynb"
    canvas.parent.mkdir(parents=True)
    canvas.write_bytes(BOB_NOTEBOOK)
    board.write_bytes(BOB_NOTEBOOK)
    late_clock = dt.datetime(2030, 1, 1, tzinfo=dt.timezone.utc).timestamp()  # the TA downloads it long after
    never = lambda origin: False  # noqa: E731
    arrival = inbox.drop_arrival(canvas, drop, ASSIGNMENT, FileNameCollectorPlugin(named_regexp=LMS_PATTERNS["canvas"]),
                                 never, late_clock)
    assert arrival.handed_in == "" and "timestamp.txt" not in arrival.files
    arrival = inbox.drop_arrival(board, drop, ASSIGNMENT, FileNameCollectorPlugin(named_regexp=LMS_PATTERNS["blackboard"]),
                                 never, late_clock)
    assert arrival.handed_in.startswith("2026-11-27 23:59:01") and arrival.files["timestamp.txt"] == arrival.handed_in.encode()


# ---------------------------------------------------------------------------- 2: the feedback folder


def _archived_hand_in(tmp_path: Path) -> Path:
    folder = tmp_path / "archived"
    folder.mkdir()
    (folder / "geometry.ipynb").write_bytes(EVE_NOTEBOOK)
    (folder / "submission_secret.txt").write_text("evesecret")
    return folder


def test_2_a_notice_released_first_leaves_the_feedback_folder_as_nbgrader_makes_it(course, tmp_path):
    from nbgrader.utils import notebook_hash

    assert release_notice(course, _archived_hand_in(tmp_path), "Not graded", ["a reason"]) == ""
    outbound = tmp_path / "exchange" / COURSE_ID / "feedback"
    assert stat.S_IMODE(outbound.stat().st_mode) == 0o711  # nbgrader's ExchangeReleaseFeedback: nobody lists it
    page = outbound / f"{notebook_hash(secret='evesecret', notebook_id='geometry')}.html"
    assert stat.S_IMODE(page.stat().st_mode) & 0o777 == 0o644 and "a reason" in page.read_text()
    assert [path.name for path in outbound.iterdir()] == [page.name]  # no temporary left


def test_a_feedback_folder_left_listable_by_an_earlier_run_is_made_unlistable(course, tmp_path):
    outbound = tmp_path / "exchange" / COURSE_ID / "feedback"
    outbound.mkdir(mode=0o755)
    outbound.chmod(0o755)
    assert release_notice(course, _archived_hand_in(tmp_path), "Not graded", ["a reason"]) == ""
    assert stat.S_IMODE(outbound.stat().st_mode) == 0o711


# ---------------------------------------------------------------------------- 9: one student on every worker


class _Workers:
    """A grading stream's counts of workers, and nothing else (the jobs are recorded, never run)."""

    def __init__(self, workers: int, server: Service) -> None:
        self.workers, self.server = workers, server

    @property
    def free(self) -> int:
        return self.workers - len(self.server.grading)


def test_9_hand_ins_to_several_assignments_never_take_every_worker_from_a_classmate(course, tmp_path, monkeypatch):
    server, _ = service(course, tmp_path)
    server.stream = _Workers(2, server)
    started: list[str] = []
    monkeypatch.setattr(server, "begin", lambda handin: (started.append(f"{handin.student}/{handin.assignment}"),
                                                         server.grading.__setitem__(handin.key, handin.seq)))
    for number, assignment in enumerate(course.assignments()[:3]):
        server.journal.add(f"exchange:eve{number}", "eve", assignment, "", COLLECTED)
    server.fill_queue()
    server.start_grading()
    assert started == [f"eve/{course.assignments()[0]}"]  # one worker stays for a classmate
    server.journal.add("exchange:bob", "bob", ASSIGNMENT, "", COLLECTED)
    server.fill_queue()
    server.start_grading()
    assert started[-1] == f"bob/{ASSIGNMENT}" and len(started) == 2


def test_1_drop_files_whose_names_read_alike_have_distinct_origins(tmp_path):
    from nbgrader.plugins import FileNameCollectorPlugin

    drop = tmp_path / "drop"
    (drop / ASSIGNMENT).mkdir(parents=True)
    control, text = (drop / ASSIGNMENT / "smithbob_4242_99_geo\x01.ipynb", drop / ASSIGNMENT / "smithbob_4242_99_geo\\x01.ipynb")
    origins = []
    for path in (control, text):
        path.write_bytes(BOB_NOTEBOOK)  # the same bytes: the same sha256
        arrival = inbox.drop_arrival(path, drop, ASSIGNMENT, FileNameCollectorPlugin(named_regexp=LMS_PATTERNS["canvas"]),
                                     lambda origin: False, 0.0)
        origins.append(arrival.origin)
        assert drop / inbox.drop_file_path(arrival.origin) == path and arrival.origin.isprintable()
    assert origins[0] != origins[1]


def test_a_scan_says_more_waits_only_while_some_were_never_looked_into(course, monkeypatch):
    monkeypatch.setattr(inbox, "MAX_OPENED_PER_SCAN", 2)
    inbound = inbox.inbound_folder(course)
    for number in range(5):  # incomplete: looked into, never journaled
        (inbound / name_of("eve", random=f"inc{number}")).mkdir()
    scanner = inbox.ExchangeScan(course, inbound, owner_checked=False)
    more = []
    for _ in range(4):
        assert list(scanner.scan(lambda origin: False, 0.0)) == []
        more.append(scanner.more)
    assert more == [True, True, False, False]  # a `serve --once` ends instead of spinning on them


def test_a_secret_file_still_empty_is_a_hand_in_still_being_written(course):
    # `nbgrader submit` creates submission_secret.txt empty, then writes it: a scan between the two once took the
    # hand-in without its secret, and its feedback never reached the exchange.
    inbound = inbox.inbound_folder(course)
    folder = hand_in(inbound / name_of("eve"), secret="")
    scanner = inbox.ExchangeScan(course, inbound, owner_checked=False)
    assert list(scanner.scan(lambda origin: False, 0.0)) == []
    (folder / "submission_secret.txt").write_text("evesecret")
    (arrival,) = scanner.scan(lambda origin: False, 0.0)
    assert not arrival.refused and arrival.files["submission_secret.txt"] == b"evesecret"


def test_watches_are_one_per_folder_and_a_few_young_hand_ins_and_a_secret_written_wakes_the_service(tmp_path, monkeypatch):
    # A recursive watch took one inotify watch per folder a student made in the inbound (the user's watches are few).
    import threading
    import time
    from types import SimpleNamespace

    from course_grader.trusted.serving import service as service_module

    monkeypatch.setattr(service_module, "MAX_YOUNG_WATCHES", 3)
    inbound = tmp_path / "inbound"
    inbound.mkdir()
    waiting = SimpleNamespace(wake=threading.Event())
    observer = service_module.watch(waiting, [inbound])
    try:
        for number in range(8):
            (inbound / f"eve+01_geometry+x+{number}").mkdir()
            (inbound / f"eve+01_geometry+x+{number}" / "deeper").mkdir()  # never watched: not in the inbound itself
        newest = inbound / "eve+01_geometry+x+7"
        deadline = time.monotonic() + 60  # a cap on waiting for the observer, not a measurement
        while str(newest) not in {emitter.watch.path for emitter in observer.emitters} and time.monotonic() < deadline:
            time.sleep(0.05)  # until the last folder made is watched: every event before it was handled
        watched = sorted(emitter.watch.path for emitter in observer.emitters)
        assert len(watched) == 1 + 3 and str(inbound) in watched and str(newest) in watched, watched
        waiting.wake.clear()
        (newest / "submission_secret.txt").write_text("evesecret")
        assert waiting.wake.wait(60), "the secret written into a young hand-in woke nothing"
    finally:
        observer.stop()
        observer.join()


def test_issue_40_an_edit_of_serve_applies_at_the_next_hand_in_without_a_restart(course, tmp_path):
    # With attempts = 3 written into term.toml while the service ran, a 16th hand-in was graded.
    server, lines = service(course, tmp_path)
    done = server.journal.add("exchange:earlier", "eve", ASSIGNMENT, "", COLLECTED)
    server.journal.move(done, RELEASED, score=1.0, max_score=8.0)
    with_serve(course, "attempts = 1")
    hand_in(inbox.inbound_folder(course) / name_of("eve"))
    server.take_in()
    (row,) = server.journal.in_state(COLLECTED)
    server.begin(row)
    assert server.journal.get(row.seq).state == LIMITED and "all 1 graded attempts" in server.journal.get(row.seq).reason
    assert "term.toml's [serve] changed: it applies from the next hand-in on" in lines
    (course.root / "term.toml").write_text("[serve\n", encoding="utf-8")  # an edit half made: the last good one stays
    server.take_in()
    assert server.term.serve.attempts == 1 and any("does not read" in line for line in lines)


def _released_page(tmp_path: Path) -> Path:
    from nbgrader.utils import notebook_hash

    return tmp_path / "exchange" / COURSE_ID / "feedback" / f"{notebook_hash(secret='evesecret', notebook_id='geometry')}.html"


def test_issue_40_a_refusal_says_so_in_its_title_with_the_attempts_used_and_left_and_the_next_time(course, tmp_path):
    # Students saw attempts and cool-downs only once refused, and a refusal looked like graded feedback.
    server, _ = service(course, tmp_path)
    with_serve(course, "attempts = 3\ncooldown_minutes = 60")
    done = server.journal.add("exchange:earlier", "eve", ASSIGNMENT, "", COLLECTED)
    server.journal.move(done, RELEASED, score=5.0, max_score=8.0)
    hand_in(inbox.inbound_folder(course) / name_of("eve"))
    server.take_in()
    (row,) = server.journal.in_state(COLLECTED)
    server.begin(row)
    page = _released_page(tmp_path).read_text(encoding="utf-8")
    assert "<title>Refused, not graded: 01_geometry</title>" in page and "<h1>Refused, not graded: 01_geometry</h1>" in page
    assert "<p>A graded attempt at 01_geometry opens 60 minutes after the last one.</p>" in page
    assert f"Your hand-in (number {row.seq}) is kept, not graded." in page and page.count("kept") == 1
    assert f"Your grade stays that of your hand-in number {done}: 5 / 8, your last graded attempt." in page
    assert "Graded attempts used: 1 of 3 (2 left)." in page and "Your next graded attempt opens at " in page


def test_a_graded_page_released_gets_the_attempts_at_its_top_escaped(course, tmp_path):
    from course_grader.trusted.serving.release import annotate_released

    page = _released_page(tmp_path)
    assert release_notice(course, _archived_hand_in(tmp_path), "Feedback", ["graded"]) == ""  # a page to annotate
    assert annotate_released(course, tmp_path / "archived", ["Graded attempts used: 2 of 3 (1 left).", "<b>x</b>"]) == ""
    text = page.read_text(encoding="utf-8")
    assert text.index("Graded attempts used: 2 of 3 (1 left).") < text.index("<h1>Feedback</h1>")
    assert "&lt;b&gt;x&lt;/b&gt;" in text and "<b>x</b>" not in text


def test_pages_written_under_the_courses_umask_stay_readable_by_the_student(course, tmp_path):
    """The TA's commands and the service run with umask 077: a page written with it would be the service's alone,
    and the student's ``nbgrader fetch_feedback`` (another account) could not copy it."""
    from course_grader.trusted.serving.release import annotate_released

    page = _released_page(tmp_path)
    before = os.umask(0o077)
    try:
        assert release_notice(course, _archived_hand_in(tmp_path), "Feedback", ["graded"]) == ""
        assert stat.S_IMODE(page.stat().st_mode) == 0o644
        assert annotate_released(course, tmp_path / "archived", ["Graded attempts used: 1 of 3 (2 left)."]) == ""
    finally:
        os.umask(before)
    assert stat.S_IMODE(page.stat().st_mode) == 0o644 and "Graded attempts used" in page.read_text(encoding="utf-8")


def test_a_hand_in_with_a_classmates_submission_secret_is_refused_and_the_classmates_page_is_left(course, tmp_path):
    # Attack round 6: eve read bob's secret from his nbgrader cache; her hand-in's page was released over his.
    inbound = inbox.inbound_folder(course)
    hand_in(inbound / name_of("bob", random="b0b0"), BOB_NOTEBOOK, secret="bobsecret")
    server, lines = service(course, tmp_path)
    assert server.take_in() == 1
    hand_in(inbound / name_of("eve", random="e1e1"), secret="bobsecret")
    hand_in(inbound / name_of("eve", random="e2e2"), secret="evesecret")
    again, lines = service(course, tmp_path)  # a service started again knows the secrets kept in handins/
    assert again.take_in() == 2
    refused = again.journal.in_state(REFUSED)
    assert [(row.student, "another student's hand-in" in row.reason) for row in refused] == [("eve", True)]
    assert sorted(row.student for row in again.journal.in_state(COLLECTED)) == ["bob", "eve"]
    assert any("refused" in line and "another student's" in line for line in lines)
