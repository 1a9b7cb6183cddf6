"""A warm parent of grading kernels: it imports once, then forks a fresh sandboxed kernel per request.

``trusted/running/kernel_pool.py`` starts it inside bubblewrap, with the grading kernel's allowlist
file system, as uid 0 of its own user namespace with that namespace's capabilities (which it
needs to make namespaces for its children). It imports what every grading kernel needs
(``WARM_MODULES``), and from then on runs no code but this loop; it never runs student code.

For each kernel it forks a *keeper*, which

1. moves into new mount, PID, IPC, UTS and network namespaces and forks the kernel, PID 1
   of the new PID namespace (the keeper waits for it; killing the keeper kills the kernel
   and everything it started);
2. gives the kernel a fresh read-only ``/proc``, a fresh size-capped scratch tmpfs (``/tmp``, also
   ``HOME``) and ``/dev/shm``, its own connection file (read-only) and sockets folder at
   ``/run/kernel``, and its assignment's student view of the package; the folders where
   the other kernels' files and views live are covered by empty read-only tmpfs.

Every other mount it sees is read-only, ``/proc`` and the device nodes included. The kernel
then enters a new user namespace and becomes uid 1000 there (mapped by the keeper to this
namespace's uid 1000, which a grader that is root maps to an unprivileged host uid of this
zygote's kernels; else to the keeper's own), drops every capability,
and runs the launcher's own steps (``kernel.run_kernel``: rlimits, the seccomp filter, which
also refuses new namespaces of any kind, then ipykernel). So a kernel is a process
that never ran another submission's code, with namespaces, scratch space, caps and filter of
its own; what it shares with the zygote is read-only memory (copy on write) and read-only
mounts, and the zygote is outside its PID namespace.

Protocol (one JSON object a line): on stdin ``{"spawn": N, ...}`` (see ``Request``) and
``{"kill": N}``; on stdout ``{"ready": pid}`` once warm, ``{"spawned": N, "pid": P}``,
``{"failed": N, "error": ...}`` and ``{"exited": N, "status": S, "cpu_seconds": C, "max_rss_kb": M}``.
"""

from __future__ import annotations

import ctypes
import json
import os
import select
import signal
import sys
from dataclasses import dataclass

#: Imported once here, so a kernel starts with them loaded (copy on write). Nothing of the
#: course is among them: the student view is chosen per kernel.
WARM_MODULES = ("numpy", "scipy.optimize", "matplotlib", "matplotlib.pyplot", "matplotlib_inline.backend_inline",
                "ipykernel.kernelapp", "ipykernel.ipkernel", "ipykernel.zmqshell", "ipykernel.debugger",
                "IPython.core.interactiveshell", "IPython.core.completer", "IPython.core.debugger",
                "IPython.extensions.storemagic", "jupyter_client.session", "pdb", "sqlite3", "http.server",
                "email.parser", "mimetypes", "faulthandler", "code", "encodings.idna",
                # what a kernel imports as it initialises and runs its first cells (found by comparing sys.modules)
                "tornado.platform.asyncio", "IPython.core.completerlib", "IPython.core.oinspect", "IPython.core.logger",
                "IPython.utils.wildcard", "encodings.ascii", "encodings.latin_1")
#: Not importable in a grading kernel: ipykernel's debugger (debugpy) costs a tenth of a second
#: a kernel and serves no one while grading (ipykernel then starts without it).
BLOCKED_MODULES = ("debugpy",)
#: Where the zygote sees every kernel's folder (connection file, sockets) and every student view.
KERNELS_ROOT = "/run/kernels"
VIEWS_ROOT = "/run/views"
#: Where a kernel sees its own folder.
OWN_FOLDER = "/run/kernel"
KERNEL_UID = 1000
SCRATCH = "/tmp"

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_NOATIME, MS_NODIRATIME, MS_BIND = 32, 1024, 2048, 4096
MS_REC, MS_PRIVATE, MS_RELATIME = 16384, 1 << 18, 1 << 21
#: statvfs flags a read-only remount must keep (a user namespace may not clear them).
KEPT_MOUNT_FLAGS = {os.ST_NOSUID: MS_NOSUID, os.ST_NODEV: MS_NODEV, os.ST_NOEXEC: MS_NOEXEC,
                    os.ST_NOATIME: MS_NOATIME, os.ST_NODIRATIME: MS_NODIRATIME, os.ST_RELATIME: MS_RELATIME}
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 1, 4, 24, 38
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
LINUX_CAPABILITY_VERSION_3 = 0x20080522

_libc = ctypes.CDLL(None, use_errno=True)


@dataclass(frozen=True)
class Request:
    """One kernel to start: paths as the zygote sees them, limits as the launcher takes them."""

    number: int
    folder: str  #: this kernel's folder under KERNELS_ROOT: its connection file and ``sockets/``
    connection_file: str  #: the file's name in ``folder``
    view: str  #: its student view under VIEWS_ROOT (the course's library as the kernel sees it, and the launcher)
    #: ``(folder in the view, target)`` pairs: where the view (``""``) and each package of it are bound
    view_binds: tuple[tuple[str, str], ...]
    scratch_mb: int
    memory_mb: int
    max_file_mb: int
    max_processes: int
    seccomp: bool
    probe_code: str | None = None  #: run this instead of ipykernel, its stdout and stderr in ``folder`` (tests)
    extra_arguments: tuple[str, ...] = ()  #: ipykernel options the kernel manager asks for (``--Class.trait=value``)

    @classmethod
    def from_json(cls, data: dict) -> "Request":
        request = cls(number=int(data["spawn"]), folder=str(data["folder"]), connection_file=str(data["connection_file"]),
                      view=str(data["view"]), view_binds=tuple((str(inside), str(target)) for inside, target in data["view_binds"]),
                      scratch_mb=int(data["scratch_mb"]), memory_mb=int(data["memory_mb"]),
                      max_file_mb=int(data["max_file_mb"]), max_processes=int(data["max_processes"]),
                      seccomp=bool(data["seccomp"]),
                      probe_code=None if data.get("probe_code") is None else str(data["probe_code"]),
                      extra_arguments=tuple(str(argument) for argument in data.get("extra_arguments", ())))
        inside = (os.path.dirname(request.folder), os.path.dirname(request.view))
        if inside != (KERNELS_ROOT, VIEWS_ROOT) or "/" in request.connection_file or ".." in (request.folder + request.view):
            raise ValueError("a kernel's folder and view must be direct entries of the zygote's roots")
        if any(inside and ("/" in inside or inside.startswith(".")) for inside, _ in request.view_binds):
            raise ValueError("a view's bound folders are direct entries of the view")
        if not all(argument.startswith("--") for argument in request.extra_arguments):
            raise ValueError("a kernel's extra arguments are options (--Class.trait=value)")
        return request


# ---------------------------------------------------------------------------- system calls


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


def _encoded(text: str | None) -> bytes | None:
    return None if text is None else text.encode()


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    _check(_libc.mount(_encoded(source), _encoded(target), _encoded(fstype), ctypes.c_ulong(flags), _encoded(data)),
           f"mount {target}")


def _bind(source: str, target: str, *, read_only: bool) -> None:
    """Bind ``source`` on ``target``; read-only keeps the flags the mount has (nosuid, nodev...)."""
    _mount(source, target, None, MS_BIND | MS_REC)
    if read_only:
        _remount_read_only(target)


def _tmpfs(target: str, size_bytes: int, mode: str, *, read_only: bool = False) -> None:
    flags = MS_NOSUID | MS_NODEV | (MS_RDONLY if read_only else 0)
    _mount("tmpfs", target, "tmpfs", flags, f"size={size_bytes},mode={mode}")


def _prctl(option: int, argument: int) -> None:
    _check(_libc.prctl(option, ctypes.c_ulong(argument), 0, 0, 0), f"prctl {option}")


def _unshare(flags: int) -> None:
    _check(_libc.unshare(flags), "unshare")


def _drop_capabilities() -> None:
    """Empty the bounding, ambient, inheritable, permitted and effective sets, and never gain any back."""
    last = int(open("/proc/sys/kernel/cap_last_cap", encoding="ascii").read())
    for capability in range(last + 1):
        _prctl(PR_CAPBSET_DROP, capability)
    _check(_libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "clear ambient capabilities")

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    _check(_libc.capset(ctypes.byref(Header(LINUX_CAPABILITY_VERSION_3, 0)), (Data * 2)()), "capset")
    _prctl(PR_SET_NO_NEW_PRIVS, 1)


# ---------------------------------------------------------------------------- one kernel


def _enter_kernel_namespaces(request: Request) -> None:
    """In the keeper: new namespaces, and the kernel's mounts (those that need no new PID namespace)."""
    _unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET)
    _mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing done here reaches the zygote
    _fresh_scratch(request.scratch_mb)
    _tmpfs(OWN_FOLDER, 4096, "0755")  # this kernel's own, to make its mount points in
    os.close(os.open(os.path.join(OWN_FOLDER, "connection.json"), os.O_WRONLY | os.O_CREAT, 0o644))
    os.mkdir(os.path.join(OWN_FOLDER, "sockets"))
    _bind(os.path.join(request.folder, request.connection_file), os.path.join(OWN_FOLDER, "connection.json"),
          read_only=True)
    _bind(os.path.join(request.folder, "sockets"), os.path.join(OWN_FOLDER, "sockets"), read_only=False)
    for inside, target in request.view_binds:
        _bind(os.path.join(request.view, inside) if inside else request.view, target, read_only=True)
    # the other kernels' folders and views; and the ptys (/dev/ptmx links into /dev/pts): a kernel needs
    # none, and each one counts in the host's global kernel.pty.nr (a kernel took all 3,071 of them)
    for hidden in (KERNELS_ROOT, VIEWS_ROOT, "/dev/pts"):
        _tmpfs(hidden, 4096, "0555", read_only=True)
    _tmpfs("/dev/shm", 1024 * 1024, "1777")
    for target, options in _mounts():  # OWN_FOLDER's tmpfs and the device nodes among them
        if "rw" in options and target not in WRITABLE:
            _remount_read_only(target)


def _fresh_scratch(scratch_mb: int) -> None:
    """A new, empty scratch tmpfs on ``/tmp``, with what the sandbox binds under ``/tmp`` bound again on it.

    A course checked out in the temporary folder has its virtual environment there
    (``/tmp/.../.venv``): the sandbox binds it read-only under the zygote's ``/tmp``, and a
    new tmpfs on top would hide it. Each such mount (with the mounts inside it) is bound
    again, read-only as it was, on the kernel's own scratch.
    """
    below = sorted(target for target, _ in _mounts() if target.startswith(SCRATCH + "/"))
    outermost = [target for target in below if not any(target.startswith(other + "/") for other in below)]
    held = [(target, os.open(target, os.O_PATH), os.path.isdir(target)) for target in outermost]
    _tmpfs(SCRATCH, scratch_mb * 1024 * 1024, "1777")
    for target, descriptor, is_folder in held:
        if is_folder:
            os.makedirs(target, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            os.close(os.open(target, os.O_WRONLY | os.O_CREAT, 0o644))
        _mount(f"/proc/self/fd/{descriptor}", target, None, MS_BIND | MS_REC)
        os.close(descriptor)


def _mounts() -> list[tuple[str, list[str]]]:
    """Every mount of this mount namespace, in mountinfo's order: its mount point and its options (``rw``, ...)."""
    found = []
    for line in open("/proc/self/mountinfo", encoding="utf-8", errors="replace"):
        fields = line.split()
        found.append((fields[4].replace("\\040", " "), fields[5].split(",")))
    return found


#: The only mounts a kernel may write to (``/proc`` is mounted read-only by the kernel itself).
WRITABLE = (SCRATCH, "/dev/shm", f"{OWN_FOLDER}/sockets", "/proc")


def _remount_read_only(target: str) -> None:
    """Make the mount at ``target`` read-only, keeping the flags a user namespace may not clear.

    A device node the sandbox binds from the host (``/dev/null``...) belongs, underneath, to
    the grader's user, as the kernel does: on a read-only mount it still reads and writes, but
    its mode cannot be changed (which would break every later kernel).
    """
    kept = os.statvfs(target).f_flag
    flags = MS_REMOUNT | MS_BIND | MS_RDONLY
    for statvfs_flag, mount_flag in KEPT_MOUNT_FLAGS.items():
        if kept & statvfs_flag:
            flags |= mount_flag
    _mount(None, target, None, flags)


def _become_kernel(request: Request, keeper_alive: int, asked: int, answered: int) -> None:
    """In the kernel (PID 1 of its namespace): a read-only /proc, uid 1000 without capabilities, then the launcher.

    Its ``/proc`` is read-only: were the kernel's user root underneath (a zygote without a user
    namespace of the grader's making), it could write ``/proc/sys`` (``kernel.core_pattern`` runs a
    program as root outside every namespace) without any capability. The keeper writes the
    kernel's uid and gid maps for it (``asked``/``answered``: the pipes they wait on).
    """
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if select.select([keeper_alive], [], [], 0)[0]:  # the keeper died before the line above: so does the kernel
        os._exit(72)
    os.close(keeper_alive)
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY)
    _unshare(CLONE_NEWUSER)
    os.write(asked, b"1")
    if os.read(answered, 1) != b"1":
        raise OSError("the keeper did not map the kernel's user")
    os.close(asked)
    os.close(answered)
    # Become that user: the map alone leaves this process the keeper's user (root, for a grader that is root)
    os.setgroups([])
    os.setresgid(KERNEL_UID, KERNEL_UID, KERNEL_UID)
    os.setresuid(KERNEL_UID, KERNEL_UID, KERNEL_UID)
    _prctl(PR_SET_DUMPABLE, 1)  # as after exec: its own /proc/self (environ, fd) is its own again
    _drop_capabilities()
    os.chdir(SCRATCH)
    _reseed_warm_random_state()
    from . import kernel

    kernel.run_kernel(os.path.join(OWN_FOLDER, "connection.json"), memory_mb=request.memory_mb,
                      max_file_mb=request.max_file_mb, max_processes=request.max_processes, seccomp=request.seccomp,
                      extra_arguments=request.extra_arguments, probe_code=request.probe_code)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _outer_id(map_file: str, fallback: int) -> int:
    """``KERNEL_UID`` if this user namespace maps it (the grader made it so: an unprivileged host uid), else ``fallback``."""
    for line in open(map_file, encoding="ascii"):
        inside, _, count = (int(field) for field in line.split())
        if inside <= KERNEL_UID < inside + count:
            return KERNEL_UID
    return fallback


def _map_user(proc: int, kernel_pid: int, uid: int, gid: int) -> None:
    """Make uid and gid ``KERNEL_UID`` of the kernel's new user namespace this namespace's ``uid`` and ``gid``, and no other."""
    for name, text in (("setgroups", "allow"), ("uid_map", f"{KERNEL_UID} {uid} 1\n"),
                       ("gid_map", f"{KERNEL_UID} {gid} 1\n")):
        descriptor = os.open(f"{kernel_pid}/{name}", os.O_WRONLY, dir_fd=proc)
        try:
            os.write(descriptor, text.encode("ascii"))
        finally:
            os.close(descriptor)


def _reseed_warm_random_state() -> None:
    """NumPy's global generator, seeded once in the zygote, seeded afresh (Python's ``random`` reseeds on fork).

    What a fork cannot renew (attack round 12, item 7): the string-hash key and the memory layout.
    Python draws its hash key (``PYTHONHASHSEED``, cleared from the sandbox's environment: random per
    zygote) once, at interpreter start, and every string and dict made since caches hashes computed
    with it: a new key in the child would make equal strings miss each other in every existing dict.
    Only ``execve`` lays out a process anew (new ASLR offsets), which the kernel's seccomp filter
    refuses and which would undo the warm start. So the kernels of one zygote share both, and no data:
    a key or an address helps only against a process one can feed input to, and a kernel feeds only
    the grader, another interpreter with its own key and layout.
    """
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is not None:
        numpy_random.seed()


def _keeper(request: Request) -> None:
    """The zygote's child for one kernel: set up, fork the kernel, wait for it; exit with its status."""
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    signal.set_wakeup_fd(-1)
    for number in (signal.SIGCHLD, signal.SIGINT, signal.SIGPIPE):
        signal.signal(number, signal.SIG_DFL)
    null = os.open(os.devnull, os.O_RDWR)
    for descriptor in (0, 1, 2):
        os.dup2(null, descriptor)
    os.closerange(3, os.sysconf("SC_OPEN_MAX") if os.sysconf("SC_OPEN_MAX") > 0 else 65536)
    if request.probe_code is not None:  # the tests': stdout and stderr into files of the kernel's folder
        for descriptor, name in ((1, "output"), (2, "errors")):
            output = os.open(os.path.join(request.folder, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW,
                             0o644)
            os.dup2(output, descriptor)
            os.close(output)
    # The kernel's uid and gid here: this namespace's KERNEL_UID where it has one (a grader that is root maps
    # it to an unprivileged host uid), else ours. Read now: the kernel's own /proc will cover this one.
    outer_uid, outer_gid = _outer_id("/proc/self/uid_map", os.geteuid()), _outer_id("/proc/self/gid_map", os.getegid())
    _enter_kernel_namespaces(request)
    proc = os.open("/proc", os.O_PATH | os.O_DIRECTORY)  # the zygote's /proc: where the kernel's maps are written
    keeper_alive, keeper_holds = os.pipe()  # the kernel sees end of file once the keeper is gone
    asked, ask = os.pipe()
    answer, answered = os.pipe()
    kernel_pid = os.fork()
    if kernel_pid == 0:
        try:
            for descriptor in (keeper_holds, proc, asked, answered):
                os.close(descriptor)
            _become_kernel(request, keeper_alive, ask, answer)
        except BaseException:  # noqa: BLE001 - said on its stderr (a probe's output; else nowhere)
            import traceback

            traceback.print_exc()
            sys.stderr.flush()
            os._exit(1)
        finally:
            os._exit(71)
    for descriptor in (keeper_alive, ask, answer):
        os.close(descriptor)
    if os.read(asked, 1) == b"1":  # the kernel is in its user namespace: map its uid 1000 to ours
        _map_user(proc, kernel_pid, outer_uid, outer_gid)
        os.write(answered, b"1")
    os.close(proc)
    # Asked to stop (SIGTERM from the zygote), the keeper kills the kernel's namespace and still
    # waits for it, so what the kernel used is measured.
    signal.signal(signal.SIGTERM, lambda *_: os.kill(kernel_pid, signal.SIGKILL))
    _, status = os.waitpid(kernel_pid, 0)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))


# ---------------------------------------------------------------------------- the loop


def _send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _spawn(request: Request) -> int:
    pid = os.fork()
    if pid == 0:
        try:
            _keeper(request)
        except BaseException:  # noqa: BLE001 - why this kernel could not start, for the grader's logs
            import traceback

            try:
                with open(os.path.join(request.folder, "keeper-error"), "w", encoding="utf-8") as file:
                    file.write(traceback.format_exc())
            except OSError:
                pass
        finally:
            os._exit(72)
    return pid


def _reap(keepers: dict[int, int]) -> None:
    """Report every keeper that has exited (its status and the CPU and memory its kernel used)."""
    while keepers:
        try:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        number = keepers.pop(pid, None)
        if number is not None:
            _send({"exited": number, "status": os.waitstatus_to_exitcode(status),
                   "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 3), "max_rss_kb": usage.ru_maxrss})


def _handle(line: str, keepers: dict[int, int]) -> None:
    try:
        data = json.loads(line)
    except ValueError:
        return
    if "kill" in data:
        for pid, number in list(keepers.items()):
            if number == data["kill"]:
                os.kill(pid, signal.SIGTERM)  # the keeper kills its kernel, then exits
        return
    try:
        request = Request.from_json(data)
    except (KeyError, TypeError, ValueError) as error:
        _send({"failed": data.get("spawn"), "error": f"bad request: {error}"})
        return
    try:
        pid = _spawn(request)
    except OSError as error:
        _send({"failed": request.number, "error": str(error)})
        return
    keepers[pid] = request.number
    _send({"spawned": request.number, "pid": pid})


def can_fork_kernels() -> bool:
    """Whether this zygote holds what making a kernel's namespaces needs (CAP_SYS_ADMIN in its user namespace).

    bubblewrap keeps the capabilities of the sandbox's user namespace for a grader that is root,
    and drops them for one that is not: such a grader's kernels are started cold.
    """
    CAP_SYS_ADMIN = 21
    for line in open("/proc/self/status", encoding="ascii"):
        if line.startswith("CapEff:"):
            return bool(int(line.split()[1], 16) >> CAP_SYS_ADMIN & 1)
    return False


def warm_up() -> None:
    """Import ``WARM_MODULES`` (a missing one is skipped: the kernel imports it if it can)."""
    import importlib

    for name in BLOCKED_MODULES:
        sys.modules[name] = None  # type: ignore[assignment]  # "import debugpy" raises ImportError

    for name in WARM_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:
            continue


def main() -> None:
    warm_up()
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    keepers: dict[int, int] = {}
    pending = b""
    _send({"ready": os.getpid(), "threads": len(os.listdir("/proc/self/task")), "can_fork_kernels": can_fork_kernels()})
    while True:
        try:
            readable, _, _ = select.select([0, wake_read], [], [])
        except InterruptedError:
            readable = [wake_read]
        if wake_read in readable:
            try:
                os.read(wake_read, 4096)
            except BlockingIOError:
                pass
            _reap(keepers)
        if 0 in readable:
            chunk = os.read(0, 65536)
            if not chunk:  # the grader closed the pipe: stop, and every kernel with the keepers
                for pid in keepers:
                    os.kill(pid, signal.SIGKILL)
                return
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                _handle(line.decode("utf-8", "replace"), keepers)


if __name__ == "__main__":
    main()
