"""``perceptron-course serve``: grading hand-ins as they arrive (``docs/architecture.md``, ``docs/ta.md``)."""
