"""Helpers for test suites: the grader's own, and a course's (which depends on the grader anyway).

Nothing of the grader imports this package; it needs the test tools (pytest-xdist) that a grading install lacks.
"""
