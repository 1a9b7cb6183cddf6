"""Grading one hand-in at a time on a warm pool kept alive: a free worker takes the next hand-in.

``grade`` runs a batch: its pool lives as long as the batch. The service keeps one pool
(``batch.warm_pool``: each worker's zygote started once) for its whole life and gives it a job
only when a worker is free, so that the fair queue, not the pool, decides who is next, and a
hostile hand-in taking its whole time budget on one worker delays nobody on the others. Each
outcome is merged here, in the one process that writes the gradebook, as it completes
(``pipeline.merge_outcome``, as ``grade`` merges). A worker's death is met as ``grade`` meets it:
the jobs lost with it are graded again, each alone on a pool of one worker, and a job whose worker
dies there is failed with the reason.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections import deque
from concurrent.futures import FIRST_COMPLETED, Future, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from ..course.course import Course, nbgrader_api
from ..course.secret import load_or_create_secret
from ..course.files import replace_text, replace_tree
from ..gradebook.ledger import Entry, LedgerWriter, fingerprint, read_ledger
from ..gradebook.outcome import GRADED, Key, Outcome
from ..gradebook.records import GradingContext, record_path
from ..gradebook.reveal import Schedule
from ..pipeline import Merging, _unchanged_answers, merge_outcome
from ..running.batch import (GradeJob, copy_gradebook, grade_job, manual_grades_to_keep, merge_result, stop_workers, warm_pool,
                             worker_failure)
from ..running.kernel_pool import ZygoteError
from ..course.nbgrader_patches import SCRATCH_PREFIX, release_scratch_gradebooks, tune_nbgrader
from ..running.sandbox import Isolation


class _Lane:
    """A warm pool (``batch.warm_pool``), replaced by a fresh one when a dying worker breaks it."""

    def __init__(self, workers: int, isolation: Isolation) -> None:
        self.workers, self.isolation, self.generation = workers, isolation, 0
        self._start()

    def _start(self) -> None:
        self._context = warm_pool(self.workers, self.isolation)
        self.pool = self._context.__enter__()

    def submit(self, job: GradeJob) -> Future:
        try:
            return self.pool.submit(grade_job, job)
        except BrokenProcessPool:  # broken since its last job: a fresh pool takes this one
            self.replace()
            return self.pool.submit(grade_job, job)

    def replace(self) -> None:
        self.close(abandon=False)
        self.generation += 1
        self._start()

    def close(self, *, abandon: bool) -> None:
        if abandon:
            stop_workers(self.pool)
        self._context.__exit__(None, None, None)


class GradingStream:
    """A warm pool of ``workers`` and the course's gradebook, open for as long as the ``with`` block lasts."""

    def __init__(self, course: Course, isolation: Isolation, workers: int) -> None:
        self.course, self.isolation, self.workers = course, isolation, workers
        self.shared: _Lane | None = None
        self.pending: dict[Future, tuple[GradeJob, _Lane, int]] = {}  #: each job in flight, its lane and that lane's pool
        self.retries: deque[GradeJob] = deque()  #: jobs lost with a dying worker, each to be graded again alone
        self.alone: _Lane | None = None
        self.schedules: dict[Key, Schedule] = {}
        self.keep: dict[Key, Path | None] = {}
        self.count = 0

    def __enter__(self) -> "GradingStream":
        tune_nbgrader()
        self.shared = _Lane(self.workers, self.isolation)
        self.scratch = Path(tempfile.mkdtemp(dir=self.course.root, prefix=SCRATCH_PREFIX))
        secret = load_or_create_secret(self.course.root)
        self._gradebook_context = nbgrader_api(self.course).gradebook
        gradebook = self._gradebook_context.__enter__()
        ledger = read_ledger(self.course)
        self.merging = Merging(self.course, gradebook, ledger, LedgerWriter(self.course, ledger), {}, self.isolation,
                               None, GradingContext.now(self.course, secret))
        return self

    def __exit__(self, kind, error, trace) -> None:
        self.close(abandon=kind is not None)

    def close(self, *, abandon: bool) -> None:
        """Stop: with ``abandon``, the jobs in flight are dropped (their workers stopped at once); then clean up."""
        if self.shared is None:
            return
        for lane in filter(None, (self.shared, self.alone)):
            lane.close(abandon=abandon and bool(self.pending))
        self.shared = self.alone = None
        self.merging.writer.flush()
        self._gradebook_context.__exit__(None, None, None)
        shutil.rmtree(self.scratch, ignore_errors=True)

    @property
    def free(self) -> int:
        """Workers of the shared pool with nothing to grade."""
        return max(0, self.workers - sum(lane is self.shared for _, lane, _ in self.pending.values()))

    def submit(self, student: str, assignment: str, schedule: Schedule, keep: Path | None = None) -> None:
        """Grade ``submitted/<student>/<assignment>/`` as it is now, on the next free worker.

        With ``keep``, a graded attempt's output is kept there too (``keep_attempt``), so that it can be restored.
        """
        key = (student, assignment)
        self.keep[key] = keep
        now = fingerprint(self.course, student, assignment)
        self.merging.fingerprints[key] = now
        self.schedules[key] = schedule  # what its feedback was written at, for its ledger entry
        kept = manual_grades_to_keep(self.merging.gradebook, student, assignment,
                                     _unchanged_answers(self.merging.ledger.get(key), now))
        self.count += 1
        template = self.scratch / f"template-{self.count}.db"
        copy_gradebook(self.course.root / "gradebook.db", template)  # the gradebook as it is now: earlier merges in it
        job = GradeJob(str(self.course.root), str(self.scratch / f"job-{self.count}"), str(template), student, assignment,
                       self.isolation.sandbox, self.isolation.memory_mb, kept, schedule.as_of.isoformat())
        self._send(job)

    def _send(self, job: GradeJob) -> None:
        self.pending[self.shared.submit(job)] = (job, self.shared, self.shared.generation)

    @property
    def active(self) -> bool:
        """Whether a hand-in is being graded, or waits for its retry."""
        return bool(self.pending or self.retries)

    def wait(self, timeout: float) -> list[tuple[GradeJob, Outcome]]:
        """Wait up to ``timeout`` seconds for jobs to complete; merge and return each one completed.

        A job lost with a dying worker (every job of that pool is lost with it) is graded again alone, on a
        pool of one worker, one job at a time: a hand-in that kills its worker then fails alone (with the
        reason), and takes no one else's grading with it a second time.
        """
        self._start_retry()
        if not self.pending:
            return []
        done, _ = wait(list(self.pending), timeout=timeout, return_when=FIRST_COMPLETED)
        finished = []
        for future in done:
            job, lane, generation = self.pending.pop(future)
            try:
                finished.append((job, future.result()))
            except (BrokenProcessPool, ZygoteError) as error:
                if isinstance(error, BrokenProcessPool) and generation == lane.generation:
                    lane.replace()  # once per broken pool, not once per job it lost
                if lane is self.shared:
                    self.retries.append(job)
                else:  # it died alone: its own doing
                    finished.append((job, worker_failure(job, self._max_score(job.assignment), error)))
            except Exception as error:  # noqa: BLE001 - never the service's failure
                finished.append((job, worker_failure(job, self._max_score(job.assignment), error)))
        self._start_retry()
        merged = []
        for job, outcome in finished:
            self.merging.schedule = self.schedules.pop(job.key)
            keep = self.keep.pop(job.key, None)
            try:
                merged.append((job, merge_outcome(self.merging, job, outcome)))
                self.merging.writer.flush()  # the ledger is the truth of what is graded: written before it is told
                if merged[-1][1].status == GRADED:
                    self._follow_term(job, merged[-1][1])
                if keep is not None and merged[-1][1].status == GRADED:
                    keep_attempt(self.course, job, self.merging.ledger[job.key], keep)
            finally:
                release_scratch_gradebooks(job.area)
                shutil.rmtree(job.area, ignore_errors=True)
                Path(job.template_gradebook).unlink(missing_ok=True)
        return merged

    def restore(self, kept: Path, student: str, assignment: str) -> None:
        """Make a kept attempt (``keep_attempt``) the submission's grade again: its files, scores, ledger entry, record.

        ``submitted/<student>/<assignment>/`` must hold that attempt's files already.
        """
        entry = Entry.from_json(json.loads((kept / KEPT_ENTRY).read_text(encoding="utf-8")))
        job = GradeJob(str(self.course.root), str(kept), "", student, assignment, self.isolation.sandbox,
                       self.isolation.memory_mb)
        outcome = Outcome(student, assignment, GRADED, 0.0, self._max_score(assignment))
        merge_result(self.course, job, outcome, self.merging.gradebook)
        self.merging.ledger[(student, assignment)] = entry
        self.merging.writer.flush()
        record = record_path(self.course, student, assignment)
        if record is not None and (kept / KEPT_RECORD).is_file():
            replace_text(record, (kept / KEPT_RECORD).read_text(encoding="utf-8"))

    def _follow_term(self, job: GradeJob, outcome: Outcome) -> None:
        """As ``grade`` does after its merges: the new submission's row takes the student's extension from term.toml,
        its lateness is read again, and its pages are rewritten if what they show changed (lateness, reveal).

        On the open gradebook, for this submission alone (the exports' refresh follows the term for the whole
        class): a hand-in's feedback waits for none of its classmates' rows.
        """
        from ..course.late_policy import follow_term
        from ..course.lateness import submission_lateness
        from ..gradebook.reveal import feedback_state
        from ..refresh import has_feedback, rewrite_changed_pages

        gradebook = self.merging.gradebook
        follow_term(gradebook, self.course.term(), only=job.key)
        outcome.seconds_late, outcome.late_penalty = submission_lateness(gradebook.find_submission(job.assignment,
                                                                                                   job.student))
        entry = self.merging.ledger.get(job.key)
        if entry is not None and entry.feedback_of and has_feedback(self.course, *job.key) and \
                entry.feedback_of == feedback_state(gradebook, *job.key, self.merging.schedule):
            return  # its pages show the gradebook as it is now
        rewrite_changed_pages(self.course, [job.key], self.merging.schedule)
        self.merging.ledger.clear()  # the rewrite recorded what the pages show now
        self.merging.ledger.update(read_ledger(self.course))

    def _start_retry(self) -> None:
        """Give the next job waiting for its retry to the pool of one, if it is idle."""
        if not self.retries or any(lane is self.alone for _, lane, _ in self.pending.values()):
            return
        if self.alone is None:
            self.alone = _Lane(1, self.isolation)
        job = self.retries.popleft()
        self.pending[self.alone.submit(job)] = (job, self.alone, self.alone.generation)

    def _max_score(self, assignment: str) -> float:
        return float(sum(self.course.graded_cells(assignment).values()))


#: What ``keep_attempt`` writes beside an attempt's gradebook and pages.
KEPT_ENTRY, KEPT_RECORD = "ledger_entry.json", "record.json"


def keep_attempt(course: Course, job: GradeJob, entry: Entry, folder: Path) -> None:
    """Keep what a graded attempt gave (its job's gradebook and pages, its ledger entry and grading record) in ``folder``."""
    from dataclasses import asdict

    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    copy_gradebook(Path(job.area) / "gradebook.db", folder / "gradebook.db")
    for output in ("autograded", "feedback"):
        replace_tree(Path(job.area) / output / job.student / job.assignment, folder, Path(output) / job.student / job.assignment)
    (folder / KEPT_ENTRY).write_text(json.dumps(asdict(entry)), encoding="utf-8")
    record = record_path(course, job.student, job.assignment)
    if record is not None and record.is_file():
        shutil.copyfile(record, folder / KEPT_RECORD)
