"""Grading: the TA's pipeline around nbgrader, split by who can be trusted.

- ``trusted/``: runs in the TA's process and owns every verdict: the course layout
  (``course``), the pipeline (``pipeline``, ``batch``), the checks of each
  assignment (``checks``), the sandbox it starts (``sandbox``), feedback, report and
  the ``perceptron-course`` command (``cli``). Student code never runs here.
- ``in_sandbox/``: the little that runs inside a student's sandboxed kernel (the
  kernel launcher). It holds no reference answers and no hidden tests.

Nothing in ``in_sandbox/`` imports ``trusted/``.
"""
