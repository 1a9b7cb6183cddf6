"""``perceptron-course serve``: hand-ins graded as they arrive, feedback released per student, exports in batches.

The loop, each turn: take in what arrived (``inbox``: the exchange inbound and the drop folder, woken
by watchdog's file-system events and by a periodic scan, so nothing is missed across restarts), keep
only each student's latest waiting hand-in per assignment (the others superseded), queue the rest
fairly (``queue``: one queue per student, round-robin, bounded), apply ``[serve]`` (``policy``:
attempts, cool-down, late), give a free worker the next hand-in (``stream``), merge and release each
outcome as it completes (``release``), and rewrite the exports at most every ``refresh_seconds``
while hand-ins arrive, and at once when nothing is left.

Exactly once: every step is recorded in the journal before it counts as done (``journal``), and the
ledger is the truth of what is graded; see ``recover``. The course lock (``writer_lock``) keeps
``grade`` and ``refresh`` out while the service runs.
"""

from __future__ import annotations

import itertools
import os
import signal
import sys
import threading
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Callable

from ..course.course import Course
from ..course.files import UnsafeFileError, replace_tree
from ..course.intake import TIMESTAMP_FILE
from ..course.late_policy import apply_term
from ..gradebook.ledger import read_ledger
from ..gradebook.outcome import GRADED as OUTCOME_GRADED
from ..gradebook.reveal import course_schedule
from ..gradebook.writer_lock import course_lock
from ..judging.check_registry import ready_to_grade
from ..outputs.report import write_exports
from ..course.safe_text import quoted, terminal_text
from ..running.autograde import quiet_nbgrader_warnings
from ..running.batch import FAULT_VARIABLE, default_workers
from ..running.sandbox import choose_isolation
from . import inbox
from .journal import (COLLECTED, GRADED, GRADING, HELD, LIMITED, REFUSED, RELEASED, STANDS, SUPERSEDED, Handin,
                      Journal)
from .policy import GRADE, HOLD, attempts_lines, decide, handed_in_at
from .queue import FairQueue
from .release import annotate_released, release_graded, release_notice
from .stream import GradingStream

#: Seconds between two scans of the inbound and the drop folder when no file-system event wakes the service.
SCAN_SECONDS = 5.0


def _fault(point: str) -> None:
    """Fault injection for tests: ``serve-kill:<point>`` in ``COURSE_GRADER_FAULT`` SIGKILLs the service there."""
    if os.environ.get(FAULT_VARIABLE) == f"serve-kill:{point}":
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGKILL)


class Service:
    """The service's state for one run (see the module)."""

    def __init__(self, course: Course, journal: Journal, stream: GradingStream, isolation, *,
                 say: Callable[[str], None] = print) -> None:
        self.course, self.journal, self.stream, self.isolation = course, journal, stream, isolation
        self.term = course.term()
        self.term_problem = ""  #: why term.toml did not read at the last turn ("" when it did)
        self.queue = FairQueue(self.term.serve.queue_size)
        self.say = lambda line: say(terminal_text(line))  # student names are data: no escape sequence reaches a terminal
        self.grading: dict[tuple[str, str], int] = {}  #: (student, assignment) -> the hand-in being graded
        self.exports_due = False
        self.exports_written_at = 0.0
        self.compared = None  #: the comparison of code of the exports being refreshed, under way
        self.exporting: threading.Thread | None = None  #: the thread writing the exports, while it runs
        self.stopping = threading.Event()
        self.wake = threading.Event()
        self.owner_checked = inbox.check_owner(course)
        self.inbound = inbox.inbound_folder(course)
        self.drop = self.term.serve.drop_path(course.root)
        self.drop_looked_at: set[tuple] = set()  #: (path, size, mtime) of drop files read already in this run
        self.exchange = inbox.ExchangeScan(course, self.inbound, owner_checked=self.owner_checked)
        self.exchange.refuse_unread = self._over_quota
        self.secret_owners = inbox.secret_owners(course)  #: submission secret -> the student whose hand-in brought it

    def _over_quota(self, student: str, size: int) -> str:
        """Why a hand-in of ``size`` bytes, as its files' sizes read, is over ``student``'s quota (before it is read)."""
        return inbox.quota_problem(self.course, student, size, self.term.serve.quota_handins, self.term.serve.quota_mib)

    # ------------------------------------------------------------------ one turn

    def follow_term(self) -> None:
        """Read ``term.toml`` again (each turn): an edit of ``[serve]`` applies from the next hand-in on, as an
        extension does, without a restart. A term file that does not read (an edit half made) leaves the last good
        one in force for what waits, and nothing new taken in until it reads again (said once)."""
        from ..course.course import CourseError

        try:
            term = self.course.term()
        except CourseError as error:
            if str(error) != self.term_problem:
                self.term_problem = str(error)
                self.say("term.toml does not read: nothing new is taken in until it does (its last good version "
                         f"stays in force for what waits): {quoted(str(error), 300)}")
            return
        self.term_problem = ""
        if term.serve != self.term.serve:
            self.say("term.toml's [serve] changed: it applies from the next hand-in on")
        self.term = term
        self.queue.capacity = term.serve.queue_size
        drop = term.serve.drop_path(self.course.root)
        if drop != self.drop:
            self.drop, self.drop_looked_at = drop, set()

    def take_in(self) -> int:
        """Journal and archive every new arrival; return how many (and 1 more when a scan left some for the next)."""
        self.follow_term()
        if self.term_problem:
            return 0  # nothing new is taken in until term.toml reads again (what waits is graded meanwhile)
        now = time.time()
        arrivals = self.exchange.scan(self.journal.known, now)
        if self.drop is not None:
            arrivals = itertools.chain(arrivals, inbox.scan_drop_folder(
                self.course, self.drop, self.term.handin.lms, self.journal.known, now=now, looked_at=self.drop_looked_at))
        count = 0
        for arrival in arrivals:
            count += 1
            try:
                self.take_in_one(arrival)
            except Exception as error:  # noqa: BLE001 -- one arrival's trouble is its refusal; the service goes on
                self.say(f"refused  {arrival.origin}: could not be taken in: {quoted(repr(error), 200)}")
                self._refuse_after_error(arrival, error)
        return count + int(self.exchange.more)

    def take_in_one(self, arrival: inbox.Arrival) -> None:
        if not arrival.refused and arrival.student:
            arrival.refused = inbox.borrowed_secret_problem(self.secret_owners, arrival) or \
                self._over_quota(arrival.student, sum(map(len, arrival.files.values())))
        if arrival.refused:
            self.journal.add(arrival.origin, arrival.student, arrival.assignment, arrival.handed_in, REFUSED,
                             arrival.refused, arrived_at=arrival.arrived_at)
            self.say(f"refused  {arrival.origin}: {arrival.refused}")
            return
        number = self.journal.add(arrival.origin, arrival.student, arrival.assignment, arrival.handed_in, "seen",
                                  arrived_at=arrival.arrived_at)
        try:
            inbox.archive(self.course, arrival, number)
        except (OSError, UnsafeFileError) as error:  # one hand-in's trouble, never the service's
            self.journal.move(number, REFUSED, f"could not be kept in {inbox.ARCHIVE_FOLDER}/: {quoted(str(error), 200)}")
            self.say(f"refused  {arrival.origin}: could not be kept: {error}")
            return
        self.journal.move(number, COLLECTED)
        secret = inbox.handed_in_secret(inbox.archived(self.course, arrival.student, arrival.assignment, number))
        if secret is not None:
            self.secret_owners.setdefault(secret, arrival.student)
        _fault("after-intake")

    def _refuse_after_error(self, arrival: inbox.Arrival, error: Exception) -> None:
        """Journal ``arrival`` as refused for ``error`` (as far as the journal can; never raises)."""
        reason = f"could not be taken in: {quoted(repr(error), 200)}"
        try:
            rows = [h for h in self.journal.of(arrival.student, arrival.assignment) if h.origin == arrival.origin]
            if rows:
                if rows[0].state == "seen":
                    self.journal.move(rows[0].seq, REFUSED, reason)
            else:
                self.journal.add(arrival.origin, arrival.student, arrival.assignment, "", REFUSED, reason)
        except Exception as again:  # noqa: BLE001 -- the journal itself fails: said, and the service goes on
            self.say(f"refused  {arrival.origin}: not journaled either: {quoted(repr(again), 200)}")

    def supersede(self) -> None:
        """Of each student's waiting hand-ins of one assignment, keep the latest; the others are superseded."""
        latest: dict[tuple[str, str], Handin] = {}
        for handin in self.journal.in_state(COLLECTED):
            earlier = latest.get(handin.key)
            if earlier is None:
                latest[handin.key] = handin
                continue
            older, newer = sorted([earlier, handin], key=_arrival_order)
            latest[handin.key] = newer
            self.journal.move(older.seq, SUPERSEDED, f"a newer hand-in (number {newer.seq}) arrived before this one was graded")
            self.queue.discard(older.seq)
            self.say(f"superseded {older.student}/{older.assignment} (hand-in {older.seq}) by hand-in {newer.seq}")

    def fill_queue(self) -> None:
        for handin in self.journal.in_state(COLLECTED):
            self.queue.offer(handin.student, handin.seq)

    def start_grading(self) -> None:
        """Give each free worker the next hand-in, in fair order, after the policy."""
        postponed = []
        while self.stream.free and not self.stopping.is_set():
            taken = self.queue.take()
            if taken is None:
                break
            handin = self.journal.get(taken[1])
            if handin.state != COLLECTED:
                continue
            if handin.key in self.grading or self.holds_its_share(handin.student):
                postponed.append(handin)  # waits for the student's own hand-in being graded
                continue
            self.begin(handin)
        for handin in postponed:
            self.queue.offer(handin.student, handin.seq)

    def holds_its_share(self, student: str) -> bool:
        """Whether ``student`` is being graded on as many workers as one student may hold: all but one (one, with a
        single worker), so that hand-ins to several assignments, each running to the notebook's time limit, never
        take every worker from a classmate who hands in a moment later (attack round 14, finding 9)."""
        share = max(1, self.stream.workers - 1)
        return sum(1 for holder, _ in self.grading if holder == student) >= share

    def begin(self, handin: Handin) -> None:
        decision = decide(self.term, handin, self.journal.of(*handin.key))
        folder = inbox.archived(self.course, handin.student, handin.assignment, handin.seq)
        if decision.action == HOLD:
            # Kept in handins/ only: a held hand-in never replaces a graded one in submitted/ (the TA's use-handin
            # puts it there, within the attempts, for `grade`).
            self.journal.move(handin.seq, HELD, decision.reason)
            self.say(f"held     {handin.student}/{handin.assignment} (hand-in {handin.seq}): {decision.reason}")
            return
        if decision.action != GRADE:
            rows = self.journal.of(*handin.key)
            lines = [decision.reason, f"Your hand-in (number {handin.seq}) is kept, not graded.",
                     grade_line(rows, self.term.serve.counts),
                     *attempts_lines(self.term, handin.student, handin.assignment, rows, time.time())]
            why = release_notice(self.course, folder, f"Refused, not graded: {handin.assignment}", lines)
            self.journal.move(handin.seq, LIMITED, decision.reason + (f"; {why}" if why else ""))
            self.say(f"limited  {handin.student}/{handin.assignment} (hand-in {handin.seq}): {decision.reason}")
            return
        from ..pipeline import record_source_cells

        record_source_cells(self.course, [handin.assignment])  # at once when unchanged; an assignment released since the start
        installed = self.install(handin)
        self.journal.move(handin.seq, GRADING, installed=installed)
        self.grading[handin.key] = handin.seq
        self.stream.submit(handin.student, handin.assignment, course_schedule(self.course), keep=_kept(self.course, handin))
        _fault("while-grading")

    def install(self, handin: Handin) -> str:
        """Put the archived hand-in in ``submitted/<student>/<assignment>/`` (replacing what was there); its fingerprint."""
        from ..gradebook.ledger import fingerprint

        folder = inbox.archived(self.course, handin.student, handin.assignment, handin.seq)
        replace_tree(folder, self.course.root, Path("submitted") / handin.student / handin.assignment)
        return fingerprint(self.course, handin.student, handin.assignment).submitted

    def finish(self, timeout: float) -> int:
        """Merge and release what completed within ``timeout`` seconds; return how many."""
        done = self.stream.wait(timeout)
        for job, outcome in done:
            number = self.grading.pop(job.key)
            graded = outcome.status == OUTCOME_GRADED
            self.journal.move(number, GRADED, outcome.reason, score=outcome.final_score if graded else None,
                              max_score=outcome.max_score, graded_at=time.time())
            _fault("after-grading")
            self.release(self.journal.get(number))
        if done:
            self.exports_due = True
        return len(done)

    def release(self, handin: Handin) -> None:
        """Release a graded hand-in's feedback (a failed one: a page with the reason and the grade that stands); it is
        then done."""
        stands = self.standing(handin)
        folder = inbox.archived(self.course, *handin.key, handin.seq)
        attempts = attempts_lines(self.term, handin.student, handin.assignment, self.journal.of(*handin.key), time.time())
        if handin.score is None:
            why = release_notice(self.course, folder, f"Not graded (it could not be graded): {handin.assignment}",
                                 [*failure_lines(handin, stands), *attempts])
        else:
            why = release_graded(self.course, handin.student, handin.assignment)
            if not why:
                standing = ([] if stands is None or stands.seq == handin.seq else
                            [f"Your grade stays that of your hand-in number {stands.seq}: {stands.score:g} / "
                             f"{stands.max_score:g}, your best attempt."])
                why = annotate_released(self.course, folder, [
                    f"This is the feedback of your hand-in number {handin.seq}: {handin.score:g} / "
                    f"{handin.max_score:g}.", *standing, *attempts])
        released_at = time.time()
        self.journal.move(handin.seq, RELEASED, "; ".join(filter(None, [handin.reason, why])), released_at=released_at)
        if stands is not None and stands.seq != handin.seq:
            self.restore(handin, stands)
        score = f"{handin.score:g}/{handin.max_score:g}" if handin.score is not None else f"not graded ({handin.reason})"
        self.say(f"graded   {handin.student}/{handin.assignment}: {score}, feedback released "
                 f"{released_at - handin.arrival:.1f} s after it arrived" + (f" ({why})" if why else ""))

    def standing(self, latest: Handin) -> Handin | None:
        """The graded attempt whose grade stands once ``latest`` is graded (``None``: ``latest``'s own, or no grade).

        With ``counts = "best"``, the best graded attempt; with ``"latest"``, ``latest`` itself unless it could not be
        graded: then the last attempt that was (a hand-in the grader could not grade never erases a grade). Only
        attempts whose output was kept (``_kept``) can stand again.
        """
        graded = [h for h in self.journal.of(*latest.key) if h.state == RELEASED and h.score is not None
                  and h.seq != latest.seq and _kept(self.course, h).is_dir()]
        if latest.score is not None:
            graded.append(latest)
        return standing_attempt(graded, latest, self.term.serve.counts)

    def restore(self, latest: Handin, stands: Handin) -> None:
        """Make ``stands`` the grade again after ``latest`` was graded: its files back in ``submitted/``, its scores,
        pages and ledger entry from what was kept; the journal says so (``status`` shows it)."""
        self.install(stands)
        self.stream.restore(_kept(self.course, stands), *stands.key)
        why = ("the best attempt" if self.term.serve.counts == "best" and latest.score is not None
               else f"hand-in {latest.seq} could not be graded")
        self.journal.note(latest.seq, STANDS, f"the grade of hand-in {stands.seq} ({stands.score:g}/{stands.max_score:g}) "
                                              f"stands: {why}")
        self.exports_due = True
        if self.term.serve.counts == "best" and latest.score is not None:
            self.say(f"best     {stands.student}/{stands.assignment}: hand-in {stands.seq} ({stands.score:g}) stays the grade")
        else:
            self.say(f"stands   {stands.student}/{stands.assignment}: hand-in {stands.seq} ({stands.score:g}) stays the "
                     f"grade; hand-in {latest.seq} could not be graded")

    def refresh_exports(self, *, idle: bool, wait: bool = False) -> None:
        """Rewrite grades.csv, the LMS export and the report: when idle, or every ``refresh_seconds`` while busy.

        The report's class-wide comparison of code runs in a process of its own first (``similarity``), while
        this loop goes on grading and releasing; the exports are written once it is done (``wait``: now).
        """
        from ..outputs.similarity import compare_in_background

        if self.compared is None:
            if not self.exports_due:
                return
            if not idle and time.monotonic() - self.exports_written_at < self.term.serve.refresh_seconds:
                return
            apply_term(self.course)
            self.compared = compare_in_background(self.course, self.course.assignments())
            self.exports_due = False  # a hand-in graded from now on asks for the next refresh
        if self.exporting is None:
            if not (wait or self.compared.done()):
                return
            # In a thread: a hand-in arriving meanwhile is taken in, graded and released without waiting for the
            # report's figures (a second or two). The thread only reads the gradebook (and names a Canvas roster's
            # students); merges stay in this thread.
            self.exporting = threading.Thread(target=self._write_exports, args=(self.compared,), name="exports",
                                              daemon=True)
            self.exporting.start()
        if wait:
            self.exporting.join()
        if not self.exporting.is_alive():
            self.exporting = self.compared = None
            self.exports_written_at = time.monotonic()

    def _write_exports(self, compared) -> None:
        _fault("during-exports")
        try:
            write_exports(self.course, self.isolation, compared=compared)
        except Exception as error:  # noqa: BLE001 - said; the next refresh writes them; grading goes on
            self.say(f"exports not written: {type(error).__name__}: {quoted(str(error), 200)}")

    # ------------------------------------------------------------------ restart

    def recover(self) -> None:
        """Take up what a stopped (or killed) run left: the ledger says whether a hand-in in grading was graded."""
        ledger = read_ledger(self.course)
        for handin in self.journal.in_state("seen"):  # stopped while it was copied into the archive: copied again
            arrival = _reread(self.course, self.drop, handin)
            if arrival is None or arrival.refused:
                self.journal.move(handin.seq, REFUSED, arrival.refused if arrival else "gone before it was taken in whole")
                continue
            keep_first_time(arrival, handin.handed_in)
            inbox.archive(self.course, arrival, handin.seq)
            self.journal.move(handin.seq, COLLECTED)
        for handin in self.journal.in_state(GRADING):
            entry = ledger.get(handin.key)
            if entry is not None and entry.status == OUTCOME_GRADED and entry.submitted == handin.installed:
                self.journal.move(handin.seq, GRADED, "found graded in the ledger after a restart",
                                  score=_ledger_score(self.course, handin), graded_at=time.time())
                self.exports_due = True
            else:
                self.journal.move(handin.seq, COLLECTED, "its grading was cut off by a stop: graded again")
        for handin in self.journal.in_state(GRADED):
            self.release(handin)
        # The exports at a start when they are behind what was graded: a run stopped (or killed) before its last
        # rewrite of them left them so.
        self.exports_due = self.exports_due or self._exports_behind()

    def _exports_behind(self) -> bool:
        """Whether a hand-in was graded after the oldest of the exports was written (or one is missing)."""
        graded = [at for _, at, _, _, _ in self.journal.events(GRADED)]
        if not graded:
            return False
        exports = (self.course.grades_csv, self.course.reports / "report.md", self.course.reports / "report.html")
        try:
            written = min(path.stat().st_mtime for path in exports)
        except OSError:
            return True
        return max(graded) >= written

    # ------------------------------------------------------------------ the loop

    def busy(self) -> bool:
        return self.stream.active or bool(self.queue) or bool(self.journal.in_state(COLLECTED))

    def run(self, *, once: bool) -> None:
        self.recover()
        while not self.stopping.is_set():
            arrived = self.take_in()
            self.supersede()
            self.fill_queue()
            self.start_grading()
            self.finish(timeout=0.5 if self.stream.active else 0)
            idle = not self.busy()
            self.refresh_exports(idle=idle, wait=once and idle)
            if once and idle and not arrived and not self.exports_due and self.compared is None:
                return
            if idle and not once:
                self.wake.wait(SCAN_SECONDS if self.compared is None else 0.5)
                self.wake.clear()
        if self.exporting is not None:  # files half written are worse than a stop that waits for them
            self.exporting.join()
        elif self.compared is not None:  # stopped: the exports are the next run's to refresh
            from ..outputs.similarity import stop_comparison

            stop_comparison(self.compared)


def standing_attempt(graded: list[Handin], latest: Handin, counts: str) -> Handin | None:
    """Which of the ``graded`` attempts (each with a score) stands once ``latest`` is graded.

    Parameters
    ----------
    graded
        The student's graded attempts at the assignment whose output can be restored, ``latest`` among them when it
        was graded.
    latest
        The hand-in just graded (its ``score`` is ``None`` when it could not be graded).
    counts
        ``[serve] counts``: ``"latest"`` or ``"best"``.

    Returns
    -------
    Handin or None
        The attempt whose grade stands; ``None`` when no attempt has a grade.
    """
    if counts == "best":
        return max(graded, key=lambda h: (h.score, h.seq), default=None)
    if latest.score is not None:
        return latest
    return max(graded, key=lambda h: h.seq, default=None)


def grade_line(rows: list[Handin], counts: str) -> str:
    """Which graded attempt's grade stands now, among the student's journaled ``rows`` of one assignment."""
    graded = [h for h in rows if h.state == RELEASED and h.score is not None]
    if not graded:
        return "You have no graded attempt at this assignment yet."
    stands = (max(graded, key=lambda h: (h.score, h.seq)) if counts == "best" else max(graded, key=lambda h: h.seq))
    which = "your best graded attempt" if counts == "best" else "your last graded attempt"
    return f"Your grade stays that of your hand-in number {stands.seq}: {stands.score:g} / {stands.max_score:g}, {which}."


def failure_lines(handin: Handin, stands: Handin | None) -> list[str]:
    """What the page of a hand-in that could not be graded says: why, and which grade stands."""
    lines = [f"Your hand-in (number {handin.seq}) could not be graded: {handin.reason}"]
    if stands is None:
        lines.append("You have no graded attempt at this assignment yet: hand in again.")
    else:
        lines.append(f"Your grade stays that of your hand-in number {stands.seq}: {stands.score:g} / {stands.max_score:g}, "
                     "your last graded attempt. A hand-in that could not be graded never replaces a grade; "
                     "your TA can decide otherwise.")
    return lines


def stopped_line(cut_off: list[tuple[str, str]]) -> str:
    """What a stopped service says of the hand-ins it was grading (``(student, assignment)`` each)."""
    if not cut_off:
        return "stopped: nothing was being graded"
    shown = ", ".join(f"{student}/{assignment}" for student, assignment in cut_off[:10])
    more = f" and {len(cut_off) - 10} more" if len(cut_off) > 10 else ""
    return f"stopped: {len(cut_off)} hand-in(s) being graded ({shown}{more}) are graded by the next run"


def keep_first_time(arrival: inbox.Arrival, journaled: str) -> None:
    """Give ``arrival``, read again after a restart, the time journaled when it was first seen complete."""
    arrival.handed_in = journaled
    if arrival.files:
        arrival.files.pop(TIMESTAMP_FILE, None)
        if journaled:
            arrival.files[TIMESTAMP_FILE] = journaled.encode()


def _kept(course: Course, handin: Handin) -> Path:
    """Where a graded attempt's output is kept (``stream.keep_attempt``), beside its archived files."""
    folder = inbox.archived(course, handin.student, handin.assignment, handin.seq)
    return folder.with_name(f"{folder.name}.graded")


def _arrival_order(handin: Handin):
    moment = handed_in_at(handin.handed_in)
    return (moment.timestamp() if moment is not None else handin.seen_at, handin.seq)


def _ledger_score(course: Course, handin: Handin) -> float | None:
    """The score the gradebook holds for a hand-in graded before a restart (``None`` if it holds none)."""
    from ..outputs.report import read_class

    outcome = read_class(course).submissions.get(handin.key)
    return outcome.final_score if outcome is not None else None


def _reread(course: Course, drop: Path | None, handin: Handin):
    """The arrival a journal entry came from, read again (``None`` when it is gone)."""
    def never_seen(origin: str) -> bool:
        return False

    if handin.origin.startswith("exchange:"):
        name = inbox.exchange_folder_name(handin.origin)
        try:
            now = time.time()  # complete when it was journaled: incomplete now is refused at once
            arrival = inbox.exchange_arrival(course, inbox.inbound_folder(course), name, set(course.assignments()),
                                             inbox.check_owner(course), now + inbox.INCOMPLETE_AFTER_SECONDS,
                                             first_seen=now)
        except Exception:  # noqa: BLE001 -- the inbound, or the folder, is gone or changed: not taken in
            return None
        return arrival if arrival is not None and arrival.origin == handin.origin else None
    if drop is None:
        return None
    from nbgrader.plugins import FileNameCollectorPlugin

    relative = inbox.drop_file_path(handin.origin)
    collector = FileNameCollectorPlugin(named_regexp=inbox.LMS_PATTERNS[course.term().handin.lms])
    arrival = inbox.drop_arrival(drop / relative, drop, handin.assignment, collector, never_seen, time.time())
    return arrival if arrival is not None and arrival.origin == handin.origin else None


#: File-system watches on folders being handed in at most (beside one per watched folder): a student can make
#: folders without end in the inbound, and the kernel's inotify watches are few and shared by the user's processes.
MAX_YOUNG_WATCHES = 64


def watch(service: Service, folders: list[Path]):
    """Wake the service on file-system events in ``folders`` (watchdog); returns the observer (started), or ``None``.

    Each folder is watched alone, not its tree; a folder made in one (``nbgrader submit`` making its hand-in) is
    watched too while it is young (the last ``MAX_YOUNG_WATCHES`` of them), so that the secret written last into
    it wakes the service at once. Whatever a watch misses, the periodic scan finds.
    """
    from collections import deque

    from watchdog.events import DirCreatedEvent, FileSystemEventHandler
    from watchdog.observers import Observer

    observer = Observer()
    young: deque = deque()
    watched_folders = {str(folder) for folder in folders if folder.is_dir()}

    class Wake(FileSystemEventHandler):
        def on_any_event(self, event) -> None:
            service.wake.set()
            if isinstance(event, DirCreatedEvent) and os.path.dirname(event.src_path) in watched_folders:
                _watch_young(event.src_path)

    def _watch_young(folder: str) -> None:
        try:
            young.append(observer.schedule(wake, folder, recursive=False))
        except (OSError, KeyError):  # gone already, or not a folder any more: the scan judges it
            return
        while len(young) > MAX_YOUNG_WATCHES:
            try:
                observer.unschedule(young.popleft())
            except (OSError, KeyError):
                pass

    if not watched_folders:
        return None
    wake = Wake()
    for folder in sorted(watched_folders):
        observer.schedule(wake, folder, recursive=False)
    observer.daemon = True
    observer.start()
    return observer


def serve(course: Course, *, jobs: int | None = None, once: bool = False, unsandboxed: bool = False,
          say: Callable[[str], None] = print) -> None:
    """Grade hand-ins as they arrive until SIGTERM or SIGINT (``once``: until nothing is waiting). See the module.

    Raises
    ------
    CourseError
        If the sandbox cannot run (and ``unsandboxed`` is not given), a hidden check does not load, or
        another command holds the course (``writer_lock.CourseBusy``).
    """
    stopping, wake = threading.Event(), threading.Event()
    quiet_nbgrader_warnings()  # the service merges into the gradebook itself, as `grade` does: its log is the TA's
    with ExitStack() as stack:
        # First: a SIGTERM while the service starts (its pool, the source cells) stops it as cleanly as later.
        previous = {number: signal.signal(number, lambda *_: (stopping.set(), wake.set()))
                    for number in (signal.SIGTERM, signal.SIGINT)}
        stack.callback(lambda: [signal.signal(number, handler) for number, handler in previous.items()])
        stack.enter_context(course_lock(course.root, "serve"))
        term = course.term()
        isolation = choose_isolation(term.limits.memory_mib, unsandboxed=unsandboxed)
        ready_to_grade(course.root, course.assignments())
        from ..pipeline import record_source_cells

        record_source_cells(course, course.assignments())
        apply_term(course)
        journal = Journal.of_course(course.reports)
        stack.callback(journal.close)
        stream = stack.enter_context(GradingStream(course, isolation, jobs or default_workers()))
        service = Service(course, journal, stream, isolation, say=say)
        service.stopping, service.wake = stopping, wake
        if not once:
            observer = watch(service, [path for path in (service.inbound, service.drop) if path is not None])
            if observer is not None:
                stack.callback(observer.stop)
        say(f"serving {course.root} (pid {os.getpid()}): exchange {service.inbound}"
            + (f", drop folder {service.drop}" if service.drop else "") + f", {stream.workers} workers")
        service.run(once=once)
        if service.stopping.is_set():
            service.say(stopped_line(sorted(service.grading)))
            stream.close(abandon=True)  # what was being graded is graded again by the next run (journal: grading)

