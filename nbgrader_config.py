"""nbgrader's configuration of the perceptron course (read by nbgrader and by `perceptron-course`).

The grader sets nbgrader up for this course from term.toml beside this file (docs/term-file.md): the course id, the
limits, the late policy, the reveal schedule, the header, the LMS. Edit them there, never here. What the grader wires
into nbgrader (its preprocessors, the feedback exporter, the late-penalty and LMS plugins) is in
grader/course_grader/trusted/course/nbgrader_configuration.py.
"""

from pathlib import Path

from course_grader.trusted.course.nbgrader_configuration import configure

c = get_config()  # noqa: F821 - provided by traitlets when nbgrader loads this file

# Each part's bug witnesses (source/<assignment>/bug_witnesses.py, read by the course's tests) stay unreleased, like
# its hidden checks.
configure(c, Path(__file__).resolve().parent, never_released=["bug_witnesses.py"])  # traitlets sets __file__
