"""The grading kernel's launcher: caps and a seccomp filter, then ipykernel.

The trusted side (``trusted/running/sandbox.py``) starts it inside bubblewrap; before any
student code runs it

- caps the process (``resource``): address space (a runaway allocation raises
  ``MemoryError`` in that cell), file size, processes and threads, no core files;
- with ``--seccomp``, loads a filter (libseccomp, through ``pyseccomp``) that makes the
  system calls a sandbox escape needs, and starting any program (``execve``), fail with
  ``EPERM`` (bubblewrap has already set ``no_new_privs``);
- starts ``ipykernel`` on the connection file (``-f``), or runs ``-c CODE`` instead (the
  sandbox's tests run their probes exactly where a kernel would run).

Run as ``python -m course_grader.in_sandbox.kernel [caps] (-f CONNECTION_FILE | -c CODE)``.
It imports nothing of the grader.
"""

from __future__ import annotations

import argparse
import errno
import fcntl
import os
import resource

MIB = 1024 * 1024
#: System calls no grading kernel needs and every escape wants: mounts, namespaces, tracing,
#: kernel keys and modules, BPF, io_uring (which bypasses seccomp), raw file handles; and starting
#: programs: once this launcher runs, ipykernel starts in this process and runs no program (``!cmd``,
#: ``subprocess``, ``os.exec*`` fail with ``PermissionError``; matplotlib's optional ``fc-list`` too,
#: which it catches), so no tool of the image can be run by a student.
DENIED_SYSCALLS = (
    "execve", "execveat",
    "ptrace", "process_vm_readv", "process_vm_writev",
    "mount", "umount2", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr",
    "pivot_root", "chroot", "unshare", "setns",
    "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "reboot", "swapon", "swapoff", "syslog", "acct",
    "io_uring_setup", "io_uring_enter", "io_uring_register", "open_by_handle_at", "name_to_handle_at",
    # Linux AIO: an io_submit of direct reads lets a process outlive SIGKILL until the disk has read them all.
    "io_setup", "io_submit", "io_getevents", "io_pgetevents", "io_cancel", "io_destroy",
    # Budgets Linux keeps per user or for the whole machine, which no grading kernel uses.
    "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr",
    "fanotify_init", "fanotify_mark", "inotify_init", "inotify_init1", "inotify_add_watch",
)
#: Socket families in no network namespace: ``AF_VSOCK`` reaches the hypervisor of a virtual machine.
DENIED_SOCKET_FAMILIES = (40,)


#: How the grader's call cells begin (``trusted/verdicts.harness_code``): plain Python, no magics or prompts.
HARNESS_CELL_START = "def __course_grader_harness(request):\n"

#: clone's namespace flags: mount, cgroup, UTS, IPC, user, PID, network (time namespaces need clone3 or unshare).
NAMESPACE_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)


def set_limit(which: int, value: int) -> None:
    """Set both the soft and the hard limit (the kernel cannot raise it back)."""
    resource.setrlimit(which, (value, value))


def limit_resources(memory_mb: int, max_file_mb: int, max_processes: int) -> None:
    """Cap address space, file size and processes (0 leaves a cap as it is); never a core file."""
    if memory_mb:
        set_limit(resource.RLIMIT_AS, memory_mb * MIB)
    if max_file_mb:
        set_limit(resource.RLIMIT_FSIZE, max_file_mb * MIB)
    if max_processes:
        set_limit(resource.RLIMIT_NPROC, max_processes)
    set_limit(resource.RLIMIT_CORE, 0)


def load_seccomp_filter() -> None:
    """Make every call in ``DENIED_SYSCALLS`` fail with EPERM, for this process and all it starts."""
    import pyseccomp

    syscall_filter = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
    for name in DENIED_SYSCALLS:
        try:
            syscall_filter.add_rule(pyseccomp.ERRNO(errno.EPERM), name)
        except (RuntimeError, ValueError, OSError):  # not a system call on this architecture
            continue
    # No namespace of any kind from clone (a new user namespace would give its creator every
    # capability inside it); clone3 passes its flags in memory a filter cannot read, so it is
    # refused as unknown (ENOSYS), and the C library falls back to clone.
    for flag in NAMESPACE_FLAGS:
        syscall_filter.add_rule(pyseccomp.ERRNO(errno.EPERM), "clone", pyseccomp.Arg(0, pyseccomp.MASKED_EQ, flag, flag))
    for family in DENIED_SOCKET_FAMILIES:
        syscall_filter.add_rule(pyseccomp.ERRNO(errno.EPERM), "socket", pyseccomp.Arg(0, pyseccomp.EQ, family))
    try:
        syscall_filter.add_rule(pyseccomp.ERRNO(errno.ENOSYS), "clone3")
    except (RuntimeError, ValueError, OSError):  # an older system without clone3
        pass
    refuse_direct_io(syscall_filter, pyseccomp)
    syscall_filter.load()


def refuse_direct_io(syscall_filter, pyseccomp) -> None:  # noqa: ANN001 - pyseccomp's filter and module
    """No file opened or switched to ``O_DIRECT``: a direct read waits for the disk even after SIGKILL.

    Threads looping on direct reads of a large host file kept a killed kernel (its memory, processes
    and user) alive for seconds (the tenth attack round; round 7 did it with Linux AIO). ``openat2``
    passes its flags in memory a filter cannot read: refused as unknown (ENOSYS), and the C library,
    like Python, opens with ``openat``.
    """
    direct = os.O_DIRECT
    for name, flags in (("open", 1), ("openat", 2)):
        try:
            syscall_filter.add_rule(pyseccomp.ERRNO(errno.EPERM), name, pyseccomp.Arg(flags, pyseccomp.MASKED_EQ, direct, direct))
        except (RuntimeError, ValueError, OSError):  # no open() on this architecture (openat only)
            continue
    syscall_filter.add_rule(pyseccomp.ERRNO(errno.EPERM), "fcntl", pyseccomp.Arg(1, pyseccomp.EQ, fcntl.F_SETFL),
                            pyseccomp.Arg(2, pyseccomp.MASKED_EQ, direct, direct))
    try:
        syscall_filter.add_rule(pyseccomp.ERRNO(errno.ENOSYS), "openat2")
    except (RuntimeError, ValueError, OSError):  # an older system without openat2
        pass


def run_kernel(connection_file: str | None, *, memory_mb: int, max_file_mb: int, max_processes: int, seccomp: bool,
               extra_arguments: list[str] | tuple[str, ...] = (), probe_code: str | None = None) -> None:
    """Cap this process, load the seccomp filter, then be ipykernel on ``connection_file`` (until it shuts down).

    ``probe_code``: run that code instead of ipykernel (the sandbox's tests probe exactly where a kernel runs).
    """
    limit_resources(memory_mb, max_file_mb, max_processes)
    if seccomp:
        load_seccomp_filter()
    if probe_code is not None:
        exec(compile(probe_code, "<probe>", "exec"), {"__name__": "__main__"})  # noqa: S102 - the tests' probe
        return
    from ipykernel import kernelapp

    spare_work_on_each_cell()
    kernelapp.launch_new_instance(argv=["-f", connection_file, *extra_arguments])


def spare_work_on_each_cell() -> None:
    """Two costs ipykernel and IPython pay on every cell that a grading kernel need not; what runs is the same.

    - ipykernel names each cell's code file (shown in tracebacks) after a MurmurHash2 of its
      source computed in Python, four bytes at a time; the grader's call cells carry their cases,
      and hashing them was an eighth of a grading kernel's CPU time. Here a CRC-32 names it: only
      those file names change.
    - IPython tokenises every cell (twice) to apply its input transformations (``%magic``,
      ``!cmd``, ``>>>`` prompts), and compiles it once more to see whether it awaits at top
      level; the grader's call cells are plain Python that awaits nothing, and are compiled
      once, as they are. A student's cell that begins the same way only loses its magics.
    """
    import zlib

    from IPython.core.interactiveshell import InteractiveShell
    from ipykernel import compiler

    compiler.murmur2_x86 = lambda data, seed: zlib.crc32(data.encode("utf-8", "surrogatepass"), seed)
    transform_cell = InteractiveShell.transform_cell

    def transform_unless_the_graders(self, raw_cell: str) -> str:  # noqa: ANN001 - IPython's shell
        return raw_cell if raw_cell.startswith(HARNESS_CELL_START) else transform_cell(self, raw_cell)

    InteractiveShell.transform_cell = transform_unless_the_graders
    should_run_async = InteractiveShell.should_run_async

    def async_unless_the_graders(self, raw_cell: str, **kwargs) -> bool:  # noqa: ANN001, ANN003 - as IPython's
        return False if raw_cell.startswith(HARNESS_CELL_START) else should_run_async(self, raw_cell, **kwargs)

    InteractiveShell.should_run_async = async_unless_the_graders


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--memory-mb", type=int, default=0, help="address-space cap in MiB (0: none)")
    parser.add_argument("--max-file-mb", type=int, default=0, help="largest file in MiB (0: no cap)")
    parser.add_argument("--max-processes", type=int, default=0, help="processes and threads (0: no cap)")
    parser.add_argument("--seccomp", action="store_true", help="load the seccomp filter")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("-f", dest="connection_file", help="start ipykernel on this connection file")
    target.add_argument("-c", dest="code", help="run this code instead (the sandbox's tests)")
    args, rest = parser.parse_known_args(argv)
    run_kernel(args.connection_file, memory_mb=args.memory_mb, max_file_mb=args.max_file_mb,
               max_processes=args.max_processes, seccomp=args.seccomp, extra_arguments=rest, probe_code=args.code)


if __name__ == "__main__":
    main()
