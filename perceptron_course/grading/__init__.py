"""Grading: the hidden-test checks and the TA's pipeline around nbgrader.

- ``checks``: what the assignments' hidden tests run (student function vs reference);
- ``course``: the course layout on disk and nbgrader's configuration;
- ``pipeline``: release, autograde, feedback, grades and report;
- ``report``: the score table and figure;
- ``cli``: the ``perceptron-course`` console script.
"""
