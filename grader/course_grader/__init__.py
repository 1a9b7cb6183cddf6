"""course_grader: grade nbgrader courses whose verdicts are decided outside the student's kernel.

- ``trusted/``: runs in the TA's process and owns every verdict: the course on disk (``course/``), running
  submissions in the sandbox (``running/``), judging what the kernel returned (``judging/``), the gradebook
  (``gradebook/``), what TAs and students read (``outputs/``), grading as hand-ins arrive (``serving/``), and the
  commands (``cli``). Student code never runs here.
- ``in_sandbox/``: the little that runs inside a student's sandboxed kernel (the kernel launcher, the harness that
  calls the student's functions). It holds no reference answers and no hidden tests, and imports nothing else.
- ``checks_api``: the one module a course's ``hidden_checks.py`` imports (cases, comparisons, random draws, the
  solution reference).
- ``intake_rules`` and ``selfcheck``: what a hand-in must be, applied by the grader's intake and by the student's
  self-check alike; the only part of this package a student installs.

The grader knows no course: a course names its reference library and its term in its own ``term.toml``.
See ``docs/architecture.md`` in the repository.
"""

from .deferred_imports import defer_rfc3987_syntax

defer_rfc3987_syntax()  # 1.4 s off every program's start (the module says why)
