"""The grading kernel: an IPython kernel with a memory cap, in a sandbox when one is available.

nbgrader starts it through the kernel spec that ``sandbox.grading_kernel`` writes
for each submission, in that submission's folder under ``autograded/``:

- ``bubblewrap_command`` wraps it in bubblewrap (``bwrap``) when the sandbox is on:
  the whole file system read-only, the course folder and the home folder hidden
  except this submission's own folder (writable), a private ``/tmp``, no network,
  its own process tree;
- ``main`` limits its address space (``resource.RLIMIT_AS``), so a runaway
  allocation raises ``MemoryError`` in that cell instead of taking the grader
  down, then starts ``ipykernel``.

Run as ``python -m perceptron_course.grading.in_sandbox.kernel [--memory-mb N] -f CONNECTION_FILE``.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
from pathlib import Path



def _hidden_roots(course_root: Path) -> list[Path]:
    """Folders replaced by empty ones in the sandbox: the TA's home and the course."""
    home = Path.home()
    roots = [home] if home != Path("/") and home.is_dir() else []
    if not any(course_root == root or root in course_root.parents for root in roots):
        roots.append(course_root)
    return roots


def _environment_roots() -> list[Path]:
    """What the kernel must still read inside hidden folders: Python, its packages, this library."""
    package = Path(__file__).resolve().parents[2]
    return sorted({Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(), package})


def bubblewrap_command(course_root: Path, workdir: Path, runtime_dir: Path, python_args: list[str]) -> list[str]:
    """The ``bwrap`` command that runs ``python_args`` in the grading sandbox.

    Parameters
    ----------
    course_root : the folder to hide (source/, release/, submitted/, the gradebook, ...)
    workdir : the submission's folder under ``autograded/``: visible and writable
    runtime_dir : where this kernel's connection file and sockets live: visible and writable
    python_args : the command to run inside
    """
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise RuntimeError("bubblewrap (bwrap) is not installed")
    command = [bwrap, "--die-with-parent", "--unshare-all",  # no network; own PID, IPC, UTS namespaces
               "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for hidden in _hidden_roots(course_root):
        command += ["--tmpfs", str(hidden)]
    for needed in _environment_roots():
        command += ["--ro-bind", str(needed), str(needed)]
    for writable in (workdir, runtime_dir):
        command += ["--bind", str(writable), str(writable)]
    # In its own PID namespace the kernel cannot see the process that started it; --die-with-parent
    # ties it to the grader instead of ipykernel's parent polling.
    return command + ["--chdir", str(workdir), "--unsetenv", "JPY_PARENT_PID", *python_args]


def limit_memory(megabytes: int) -> None:
    """Cap this process's address space; allocations beyond it raise MemoryError."""
    limit = megabytes * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--memory-mb", type=int, default=0, help="address-space cap in MiB (0: none)")
    parser.add_argument("-f", dest="connection_file", required=True)
    args, rest = parser.parse_known_args(argv)
    if args.memory_mb:
        limit_memory(args.memory_mb)
    from ipykernel import kernelapp

    kernelapp.launch_new_instance(argv=["-f", args.connection_file, *rest])


if __name__ == "__main__":
    main()
