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

    Without the sandbox, the grading kernels are this process's children: a kernel's time is
    counted here once jupyter_client has waited for it. A lower bound (a kernel not waited for
    is not counted); never someone else's time. With the sandbox, the zygote's keepers measure
    each kernel exactly (``kernel_pool.Zygote.usage``) and this is not used.
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

    Keys: ``wall_seconds``, ``grader_cpu_seconds``, and for the kernels either what the block
    put in (``kernel_usage``: exact, from the zygote) or ``kernel_cpu_seconds_at_least`` (the
    kernels that ended within the block, see ``grading_kernels_cpu_seconds``); in seconds,
    rounded to milliseconds.
    """
    used: dict[str, float] = {}
    wall, grader, kernels = time.monotonic(), grader_cpu_seconds(), grading_kernels_cpu_seconds()
    try:
        yield used
    finally:
        used.update(wall_seconds=round(time.monotonic() - wall, 3), grader_cpu_seconds=round(grader_cpu_seconds() - grader, 3))
        if "kernel_cpu_seconds" not in used:
            used["kernel_cpu_seconds_at_least"] = round(grading_kernels_cpu_seconds() - kernels, 3)


def kernel_usage(kernels: int, cpu_seconds: float, peak_kib: int) -> dict[str, float]:
    """What a submission's grading kernels used, as the zygote's keepers measured it (``Zygote.usage``)."""
    return {"kernels": float(kernels), "kernel_cpu_seconds": round(cpu_seconds, 3),
            "kernel_peak_memory_mib": round(peak_kib / 1024, 1)}


#: How much a grading job may grow its process's data (heap and private memory) beyond what it held at its start.
#: A kernel can send the grader messages of unlimited size (ZMQ caps each frame, not the frames of a message),
#: which the grader's libzmq keeps in memory: past this, an allocation fails and the job loses that connection
#: (its cell fails) or its worker (the batch grades it again, then reports it), instead of the machine its memory.
JOB_DATA_BUDGET_BYTES = 4 * 1024**3


def data_in_use() -> int:
    """Bytes of this process's data segments and private mappings (``VmData``, what ``RLIMIT_DATA`` limits)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmData:"):
                return int(line.split()[1]) * 1024
    raise OSError("no VmData in /proc/self/status")


@contextmanager
def data_budget(extra_bytes: int | None = None) -> Iterator[None]:
    """Let this process's data grow by at most ``extra_bytes`` (``JOB_DATA_BUDGET_BYTES``) during the block.

    The soft ``RLIMIT_DATA``; processes started meanwhile inherit it.

    The limit is the process's, so only the main thread of a process sets it (a process whose
    threads grade at once, a thread-based cluster worker, is left as it is).
    """
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    limit = data_in_use() + (JOB_DATA_BUDGET_BYTES if extra_bytes is None else extra_bytes)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))
