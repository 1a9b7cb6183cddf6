"""What a course calls the grader's commands: the console scripts it installs for them.

A course's distribution names the grader's entry points after itself (this repository's course installs
``course_grader.trusted.cli:main`` as ``perceptron-course``); the grader's own distribution names them
``course-grader`` and ``course-selfcheck``. Messages that tell a TA or a student what to run use the course's name
when one is installed, whichever program prints them (a TA's command, nbgrader's, a formgrader's server).
"""

from __future__ import annotations

import functools
from importlib.metadata import entry_points

#: The grader's entry points, and the names its own distribution installs them as.
GRADER_ENTRY_POINT, GRADER_DEFAULT = "course_grader.trusted.cli:main", "course-grader"
SELFCHECK_ENTRY_POINT, SELFCHECK_DEFAULT = "course_grader.selfcheck:main", "course-selfcheck"


@functools.cache
def script_name(entry_point: str, default: str) -> str:
    """The console script installed for ``entry_point`` under a name other than ``default``, else ``default``.

    Parameters
    ----------
    entry_point : str
        ``"module:function"``, as a distribution's ``[project.scripts]`` names it.
    default : str
        The grader's own name for it.

    Returns
    -------
    str
        E.g. ``"perceptron-course"``; the alphabetically first when several courses are installed.
    """
    names = sorted({script.name for script in entry_points(group="console_scripts") if script.value == entry_point})
    return next((name for name in names if name != default), default)


def grader_command() -> str:
    """What a TA types to run the grader here: ``perceptron-course`` in this repository's course."""
    return script_name(GRADER_ENTRY_POINT, GRADER_DEFAULT)


def selfcheck_command() -> str:
    """What a student types to self-check a notebook: ``perceptron-selfcheck`` in this repository's course."""
    return script_name(SELFCHECK_ENTRY_POINT, SELFCHECK_DEFAULT)
