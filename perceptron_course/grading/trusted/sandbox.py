"""Where student code runs during grading: the grading kernel spec, its memory cap and its sandbox.

``grading_kernel`` writes a kernel spec for ``perceptron_course.grading.in_sandbox.kernel`` into
a temporary Jupyter data folder, points Jupyter at it, and returns the nbgrader
configuration that makes autograde use it. The sandbox (bubblewrap) is used when
it works on this machine; when it does not, grading goes on without it and says
so loudly: a warning on stderr and a line in the report. Scores never depend on it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..in_sandbox.kernel import bubblewrap_command

KERNEL_NAME = "perceptron-grading"
#: Address-space cap of a grading kernel; numpy, scipy and scikit-learn need about 1 GiB.
DEFAULT_MEMORY_MB = 3072
SANDBOX_VARIABLE = "PERCEPTRON_COURSE_SANDBOX"  # "off" disables the sandbox (not recommended)


@dataclass(frozen=True)
class Isolation:
    """How grading kernels will run."""

    sandbox: bool
    memory_mb: int
    note: str  #: why there is no sandbox, or ""


def sandbox_problem() -> str:
    """Why bubblewrap cannot sandbox kernels here, or ``""`` if it can."""
    if os.environ.get(SANDBOX_VARIABLE, "").lower() == "off":
        return f"the sandbox is turned off ({SANDBOX_VARIABLE}=off)"
    if not sys.platform.startswith("linux"):
        return "bubblewrap needs Linux"
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    probe = subprocess.run([bwrap, "--ro-bind", "/", "/", "--unshare-all", "--dev", "/dev", "true"],
                           capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        return f"bubblewrap cannot create a sandbox here: {probe.stderr.strip()[:200]}"
    return ""


def choose_isolation(memory_mb: int = DEFAULT_MEMORY_MB) -> Isolation:
    """The sandbox if it works here, and the memory cap in any case; warns loudly without a sandbox."""
    problem = sandbox_problem()
    if problem:
        print(
            f"WARNING: student code will run WITHOUT a sandbox: {problem}. It could read source/ "
            "(solutions, hidden tests), other submissions and the gradebook. Scores are unaffected; "
            "see README, 'Grading safely'.",
            file=sys.stderr,
        )
    return Isolation(sandbox=not problem, memory_mb=memory_mb, note=problem)


@contextmanager
def grading_kernel(course_root: Path, isolation: Isolation, workdir: Path, runtime_dir: Path):
    """Install the grading kernel spec for one submission; yield the nbgrader config that uses it.

    Parameters
    ----------
    course_root : the folder the sandbox hides
    workdir : the submission's folder under ``autograded/``, where the kernel runs
    runtime_dir : the private Jupyter runtime folder of its connection file and sockets
    """
    from traitlets.config import Config

    saved = os.environ.get("JUPYTER_PATH")
    with tempfile.TemporaryDirectory(prefix="perceptron-kernel-") as data_dir:
        spec_dir = Path(data_dir) / "kernels" / KERNEL_NAME
        spec_dir.mkdir(parents=True)
        argv = [sys.executable, "-m", "perceptron_course.grading.in_sandbox.kernel", "--memory-mb", str(isolation.memory_mb),
                "-f", "{connection_file}"]
        if isolation.sandbox:
            argv = bubblewrap_command(course_root, workdir, runtime_dir, argv)
        # Interrupts travel as messages: a signal to bwrap would not reach the kernel inside it.
        spec = {"argv": argv, "display_name": "Python 3 (grading)", "language": "python", "interrupt_mode": "message"}
        (spec_dir / "kernel.json").write_text(json.dumps(spec), encoding="utf-8")
        os.environ["JUPYTER_PATH"] = os.pathsep.join(filter(None, [data_dir, saved]))
        config = Config()
        config.Execute.kernel_name = KERNEL_NAME
        if isolation.sandbox:
            config.KernelManager.transport = "ipc"  # the sandbox has no network, not even loopback
        try:
            yield config
        finally:
            if saved is None:
                os.environ.pop("JUPYTER_PATH", None)
            else:
                os.environ["JUPYTER_PATH"] = saved


@contextmanager
def private_runtime_dir():
    """A fresh Jupyter runtime folder, so a kernel sees no other kernel's connection files or sockets."""
    saved = os.environ.get("JUPYTER_RUNTIME_DIR")
    with tempfile.TemporaryDirectory(prefix="perceptron-runtime-") as runtime:
        os.environ["JUPYTER_RUNTIME_DIR"] = runtime
        try:
            yield Path(runtime)
        finally:
            if saved is None:
                os.environ.pop("JUPYTER_RUNTIME_DIR", None)
            else:
                os.environ["JUPYTER_RUNTIME_DIR"] = saved
