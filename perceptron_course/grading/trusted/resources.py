"""What grading one submission used: wall time, the grader's CPU time, and its grading kernels' CPU time.

Measured in the process that grades the submission (a worker, or the TA's process), on the
trusted side: nothing here is read from what the kernel says about itself.
"""

from __future__ import annotations

import resource
import time
from contextlib import contextmanager
from typing import Iterator


def grading_kernels_cpu_seconds() -> float:
    """CPU time (user and system) of every child process of this one that has ended and been waited for.

    The grading kernels (with their sandbox, and every restart) are this process's children:
    jupyter_client waits for the bubblewrap process of each kernel it shuts down, and bubblewrap
    waits for the kernel inside it, so a kernel's time is counted here once it ends. It is a lower
    bound: a kernel whose bubblewrap was killed before it could wait for it (a shutdown that timed
    out on a busy machine) is not counted; it is never someone else's time. This is the one place
    to change when the kernel is started another way: reading the CPU usage of the sandbox's
    cgroup (``cpuacct.usage`` with cgroup v1, ``usage_usec`` of ``cpu.stat`` with v2) just before
    removing it would count every kernel of the submission exactly.
    """
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def grader_cpu_seconds() -> float:
    """CPU time of this process (every thread: nbgrader, the cases, the judging)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@contextmanager
def measured() -> Iterator[dict[str, float]]:
    """Measure the block: the dict it yields is filled on leaving it.

    Keys: ``wall_seconds``, ``grader_cpu_seconds``, ``kernel_cpu_seconds_at_least`` (the grading
    kernels that ended within the block, see ``grading_kernels_cpu_seconds``), each in seconds,
    rounded to milliseconds.
    """
    used: dict[str, float] = {}
    wall, grader, kernels = time.monotonic(), grader_cpu_seconds(), grading_kernels_cpu_seconds()
    try:
        yield used
    finally:
        used.update(wall_seconds=round(time.monotonic() - wall, 3),
                    grader_cpu_seconds=round(grader_cpu_seconds() - grader, 3),
                    kernel_cpu_seconds_at_least=round(grading_kernels_cpu_seconds() - kernels, 3))
