"""Grading one hand-in at a time on a warm pool kept alive: a free worker takes the next hand-in.

``grade`` runs a batch: its pool lives as long as the batch. The service keeps one pool
(``batch.warm_pool``: each worker's zygote started once) for its whole life and gives it a job
only when a worker is free, so that the fair queue, not the pool, decides who is next, and a
hostile hand-in taking its whole time budget on one worker delays nobody on the others. Each
outcome is merged here, in the one process that writes the gradebook, as it completes
(``pipeline.merge_outcome``, as ``grade`` merges). A worker's death is met as ``grade`` meets it:
the jobs lost with it are graded again in a fresh pool, and a job whose worker dies twice is
failed with the reason.
"""

from __future__ import annotations

import shutil
import tempfile
from concurrent.futures import FIRST_COMPLETED, Future, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from ..course.course import Course, nbgrader_api
from ..course.secret import load_or_create_secret
from ..gradebook.ledger import LedgerWriter, fingerprint, read_ledger
from ..gradebook.outcome import Key, Outcome
from ..gradebook.records import GradingContext
from ..gradebook.reveal import Schedule
from ..pipeline import Merging, _unchanged_answers, merge_outcome
from ..running.batch import GradeJob, copy_gradebook, grade_job, manual_grades_to_keep, stop_workers, warm_pool, worker_failure
from ..running.kernel_pool import ZygoteError
from ..running.nbgrader_tuning import SCRATCH_PREFIX, release_scratch_gradebooks, tune_nbgrader
from ..running.sandbox import Isolation

#: A job whose worker died this many times is failed (as ``grade``: once retried, then failed).
MOST_TRIES = 2


class GradingStream:
    """A warm pool of ``workers`` and the course's gradebook, open for as long as the ``with`` block lasts."""

    def __init__(self, course: Course, isolation: Isolation, workers: int) -> None:
        self.course, self.isolation, self.workers = course, isolation, workers
        self.pending: dict[Future, GradeJob] = {}
        self.tries: dict[Key, int] = {}
        self.schedules: dict[Key, Schedule] = {}
        self.count = 0

    def __enter__(self) -> "GradingStream":
        tune_nbgrader()
        self._pool_context = warm_pool(self.workers, self.isolation)
        self.pool = self._pool_context.__enter__()
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
        if getattr(self, "pool", None) is None:
            return
        if abandon and self.pending:
            stop_workers(self.pool)
        self._pool_context.__exit__(None, None, None)
        self.pool = None
        self.merging.writer.flush()
        self._gradebook_context.__exit__(None, None, None)
        shutil.rmtree(self.scratch, ignore_errors=True)

    @property
    def free(self) -> int:
        """Workers with nothing to grade."""
        return max(0, self.workers - len(self.pending))

    def grading(self) -> list[Key]:
        return [job.key for job in self.pending.values()]

    def submit(self, student: str, assignment: str, schedule: Schedule) -> None:
        """Grade ``submitted/<student>/<assignment>/`` as it is now, on the next free worker."""
        key = (student, assignment)
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
        try:
            self.pending[self.pool.submit(grade_job, job)] = job
        except BrokenProcessPool:  # a worker died: the pool is replaced and the job given to the new one
            self._replace_pool()
            self.pending[self.pool.submit(grade_job, job)] = job

    def _replace_pool(self) -> None:
        self._pool_context.__exit__(None, None, None)
        self._pool_context = warm_pool(self.workers, self.isolation)
        self.pool = self._pool_context.__enter__()

    def wait(self, timeout: float) -> list[tuple[GradeJob, Outcome]]:
        """Wait up to ``timeout`` seconds for jobs to complete; merge and return each one completed."""
        if not self.pending:
            return []
        done, _ = wait(list(self.pending), timeout=timeout, return_when=FIRST_COMPLETED)
        finished, lost = [], []
        for future in done:
            job = self.pending.pop(future)
            try:
                finished.append((job, future.result()))
            except (BrokenProcessPool, ZygoteError) as error:
                lost.append((job, error))
            except Exception as error:  # noqa: BLE001 - never the service's failure
                finished.append((job, worker_failure(job, self._max_score(job.assignment), error)))
        if lost:
            broken = any(isinstance(error, BrokenProcessPool) for _, error in lost)
            if broken:
                self._replace_pool()
            for job, error in lost:
                self.tries[job.key] = self.tries.get(job.key, 0) + 1
                if self.tries[job.key] >= MOST_TRIES:
                    finished.append((job, worker_failure(job, self._max_score(job.assignment), error)))
                else:
                    self._send(job)
        merged = []
        for job, outcome in finished:
            self.tries.pop(job.key, None)
            self.merging.schedule = self.schedules.pop(job.key)
            try:
                merged.append((job, merge_outcome(self.merging, job, outcome)))
                self.merging.writer.flush()  # the ledger is the truth of what is graded: written before it is told
            finally:
                release_scratch_gradebooks(job.area)
                shutil.rmtree(job.area, ignore_errors=True)
                Path(job.template_gradebook).unlink(missing_ok=True)
        return merged

    def _max_score(self, assignment: str) -> float:
        return float(sum(self.course.graded_cells(assignment).values()))
