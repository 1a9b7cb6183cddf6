"""``perceptron-course serve``: grading hand-ins as they arrive (DESIGN section 13)."""
