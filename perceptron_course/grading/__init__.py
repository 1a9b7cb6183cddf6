"""Grading: the TA's pipeline around nbgrader, split by who can be trusted.

- ``trusted/``: runs in the TA's process and owns every verdict: the course layout
  (``course``), the pipeline (``pipeline``, ``batch``), the engine of the hidden checks
  (``checks``) and the loader of each assignment's own (``check_registry``: they live in
  ``source/<assignment>/hidden_checks.py`` of the course), the sandbox it starts (``sandbox``),
  feedback, report and the ``perceptron-course`` command (``cli``). Student code never runs here.
- ``checks_api``: what an instructor writes a ``hidden_checks.py`` with (``docs/adding-a-part.md``).
- ``in_sandbox/``: the little that runs inside a student's sandboxed kernel (the
  kernel launcher). It holds no reference answers and no hidden tests.

Nothing in ``in_sandbox/`` imports ``trusted/``.
"""
