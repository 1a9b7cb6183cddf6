"""What grading gave: ``Outcome`` for one submission, ``ClassRecord`` for the whole class (merge, CSV, report read them),
and ``Isolation``, how the kernels that graded them ran (the ledger and the report record it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..judging.flags import Flag

GRADED, FAILED = "graded", "failed"


@dataclass
class Outcome:
    """What grading one submission gave."""

    student: str
    assignment: str
    status: str  #: ``"graded"`` or ``"failed"``
    score: float
    max_score: float
    reason: str = ""  #: why it failed, or what the grader had to repair
    cell_scores: dict[str, float] = field(default_factory=dict)  #: score of each graded cell
    feedback: list[Path] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)  #: suspicious code found before it ran (never scored)
    unanalysed: list[str] = field(default_factory=list)  #: cells the static review could not parse
    seconds_late: float = 0.0  #: past the due date (with the student's extension), from nbgrader's gradebook
    late_penalty: float = 0.0  #: points ``LateSubmissionPlugin`` took off ``score`` (nbgrader keeps them apart)
    resources: dict[str, float] = field(default_factory=dict)  #: what grading it used (``resources.measured``)

    @property
    def final_score(self) -> float:
        """The score that counts: ``score`` less the late penalty."""
        return max(0.0, self.score - self.late_penalty)


Key = tuple[str, str]  #: ``(student, assignment)``


@dataclass(frozen=True)
class ClassRecord:
    """Every submission of the class, as the gradebook and ``grades.csv`` know them."""

    assignments: list[str]  #: every assignment of the course, in order
    max_scores: dict[str, float]  #: maximum score of each assignment
    students: list[str]  #: every student of the gradebook or of ``grades.csv``, sorted
    submissions: dict[Key, Outcome]  #: graded (from the gradebook) or failed (from ``grades.csv``)
    flagged_in_gradebook: frozenset[Key]  #: nbgrader's ``flagged`` on one of its notebooks
    awaiting_manual: list[tuple[str, str, str]]  #: ``(student, assignment, part)`` a TA must still grade

    @property
    def max_total(self) -> float:
        return sum(self.max_scores[a] for a in self.assignments)

    def total(self, student: str) -> tuple[float, int]:
        """A student's total score over every assignment, and how many assignments they did not submit."""
        rows = [self.submissions.get((student, a)) for a in self.assignments]
        return sum(row.final_score for row in rows if row is not None), sum(row is None for row in rows)


@dataclass(frozen=True)
class Isolation:
    """How grading kernels will run (``running/sandbox.choose_isolation`` decides it)."""

    sandbox: bool
    memory_mb: int
    note: str  #: why there is no sandbox, or ""
