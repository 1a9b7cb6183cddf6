"""Warm grading kernels: a zygote per grading thread forks each submission's kernel.

A fresh Jupyter kernel spends a second or more starting Python, IPython and NumPy. Each
thread that grades (the one of a worker process, or the batch's own when it grades here)
starts, once, a *zygote* (``in_sandbox/zygote.py``) in the grading sandbox: it imports
what kernels need, then forks every kernel of that thread into namespaces, scratch space
and a student view of its own (see that module for what a kernel shares and what it
does not). Starting a kernel then costs a fork.

- ``Zygote``: the sandboxed process, its work folder (the kernels' folders, the student
  views) and its cgroups (tasks and one core, as each sandbox had).
- ``WarmKernelManager``: the sandbox's kernel manager whose kernels come from the zygote
  (``WarmProvisioner``); the grader still connects only through checked descriptors.
- ``grading_kernel``: the nbgrader configuration that grades with it.
"""

from __future__ import annotations

import asyncio
import grp
import hashlib
import json
import multiprocessing.util
import os
import pwd
import secrets
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path

from jupyter_client.provisioning import LocalProvisioner
from traitlets import Dict, Integer

from ...in_sandbox.zygote import KERNELS_ROOT, OWN_FOLDER, VIEWS_ROOT
from ...intake_rules import ImportRules
from ..gradebook.outcome import Isolation
from .sandbox import (abandoned, KERNEL_NAME, MAX_FILE_MB, MAX_PROCESSES, MAX_RESIDUAL_KERNEL_MEMORY_BYTES,
                      MAX_SANDBOX_KERNEL_MEMORY_BYTES,
                      SCRATCH_MB, SOCKETS_FOLDER, SandboxKernelManager, _PYTHON, build_student_view, bubblewrap_command, detached,
                      kernel_memory_reader, launcher_command, remove_abandoned_cgroups, view_binds,
                      sandbox_cgroups)

#: How long a zygote may take to import what it warms (it reports "ready" then).
START_SECONDS = 180.0
#: How long it may take to fork a kernel and say so.
SPAWN_SECONDS = 60.0
#: How often a zygote's sandbox is checked for the kernel memory its kernels hold.
KERNEL_MEMORY_POLL_SECONDS = 0.05
#: How long stopping a zygote waits for it to end, after closing its input and again after killing it.
STOP_SECONDS = 10.0
DEFAULT_VIEW = "any"
#: A zygote's work folder (in the temporary folder) is named with this and its grading process's pid.
WORK_PREFIX = "course-grader-zygote-"
#: A submission's kernel spec folder (``grading_kernel``): named with this and its grading process's pid too.
KERNEL_SPEC_PREFIX = "course-grader-kernel-"
#: How often a stopping kernel is polled (jupyter_client polls every 0.1 s, for processes of its own).
POLL_SECONDS = 0.005


class ZygoteError(RuntimeError):
    """The zygote did not start, or did not start a kernel."""


class WarmProcess:
    """A kernel forked by the zygote, seen as much like a ``subprocess.Popen`` as jupyter_client needs."""

    def __init__(self, zygote: "Zygote", number: int, pid: int) -> None:
        self.zygote, self.number, self.pid = zygote, number, pid
        self.stdin = self.stdout = self.stderr = None
        self.returncode: int | None = None
        self.cpu_seconds: float | None = None  #: CPU time of the kernel and its processes, once it has exited
        self.max_rss_kb: int | None = None
        self._exited = threading.Event()

    def _set_exited(self, status: int, cpu_seconds: float, max_rss_kb: int) -> None:
        self.returncode, self.cpu_seconds, self.max_rss_kb = status, cpu_seconds, max_rss_kb
        self._exited.set()

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._exited.wait(timeout):
            raise subprocess.TimeoutExpired(f"kernel {self.number}", timeout or 0)
        return self.returncode  # type: ignore[return-value]

    def send_signal(self, number: int) -> None:
        """Only killing is passed on (interrupts travel as messages; the kernel is not the grader's child)."""
        if number in (signal.SIGKILL, signal.SIGTERM) and self.returncode is None:
            self.zygote.kill(self.number)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)


#: The umask bubblewrap runs with (it makes the sandbox's mount points with it): the kernels' user reaches them.
SANDBOX_UMASK = 0o022


class Zygote:
    """One sandboxed zygote and the kernels it forked; ``spawn`` starts one, ``close`` stops them all."""

    def __init__(self) -> None:
        self._stack = ExitStack()
        self.work = Path(tempfile.mkdtemp(prefix=f"{WORK_PREFIX}{os.getpid()}-"))
        self._stack.callback(subprocess.run, ["rm", "-rf", "--", str(self.work)], check=False, capture_output=True)
        self.kernels = self.work / "kernels"
        self.views = self.work / "views"
        self.kernels.mkdir()
        self.kernels.chmod(0o711)  # (mkdir's mode is masked by the umask, which the TA's commands set to 077)
        build_student_view(self.views / DEFAULT_VIEW, ImportRules())  # the zygote's own: the launcher, no library
        readable_by_all(self.views)  # the kernels' user is not the grader's, whatever the grader's umask
        procs = self._stack.enter_context(sandbox_cgroups())
        inner = [_PYTHON, "-s", "-m", "course_grader.in_sandbox.zygote"]
        #: the host uid of every kernel of this zygote (for a grader that is root; else the grader's own)
        self.kernel_host_uid = os.geteuid()
        user_namespace = None
        if os.geteuid() == 0:
            self.kernel_host_uid = unprivileged_uid()
            user_namespace = self._stack.enter_context(kernels_user_namespace(self.kernel_host_uid))
        command = bubblewrap_command(inner, self.views / DEFAULT_VIEW, ImportRules(), warm_roots=(self.kernels, self.views),
                                     user_namespace=user_namespace)
        # Its own session: Ctrl+C reaches the batch, which stops the zygote (and its kernels) itself. Its own umask:
        # bubblewrap makes the sandbox's mount points with it, and the TA's commands run with 077, which would leave
        # the kernels' user unable to reach a bound folder (a course's .venv under /tmp, say).
        self.process = subprocess.Popen(detached(command, procs, keep_pipes=True), stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, start_new_session=True, umask=SANDBOX_UMASK,
                                        pass_fds=() if user_namespace is None else (user_namespace,))
        self._stack.callback(self._stop_process)
        self.pipe_descriptors = (self.process.stdin.fileno(), self.process.stdout.fileno())  # type: ignore[union-attr]
        self._lock = threading.Lock()
        self._next = 0  #: kernels forked so far
        self._replies: dict[int, dict] = {}
        self._replied = threading.Condition(self._lock)
        self._running: dict[int, WarmProcess] = {}
        self._started_in: dict[str, list[WarmProcess]] = {}  # kernel folder name -> its kernels (restarts too)
        self.ready = self._read_ready()
        self.can_fork_kernels = bool(self.ready.get("can_fork_kernels"))
        self._reader = threading.Thread(target=self._read_replies, name="zygote-replies", daemon=True)
        self._reader.start()
        self.kernel_memory_kills = 0  #: times its kernels were killed for holding too much kernel memory
        self.read_kernel_memory = kernel_memory_reader(procs)
        if self.read_kernel_memory is not None:
            threading.Thread(target=self._watch_kernel_memory, args=(self.read_kernel_memory,), name="zygote-kernel-memory",
                             daemon=True).start()

    # ---- its process

    def _read_ready(self) -> dict:
        line = _read_line(self.process, START_SECONDS)
        try:
            message = json.loads(line)
        except ValueError:
            message = {}
        if "ready" not in message:
            self.close()
            raise ZygoteError(f"the grading zygote did not start (it said {line[:200]!r})")
        return message

    def _read_replies(self) -> None:
        for raw in self.process.stdout:  # type: ignore[union-attr]
            try:
                message = json.loads(raw)
            except ValueError:
                continue
            with self._lock:
                if "exited" in message:
                    kernel = self._running.pop(message["exited"], None)
                    if kernel is not None:
                        kernel._set_exited(int(message["status"]), float(message["cpu_seconds"]),
                                           int(message["max_rss_kb"]))
                else:
                    self._replies[int(message.get("spawned", message.get("failed", -1)) or -1)] = message
                    self._replied.notify_all()
        with self._lock:  # the zygote is gone, and every kernel with it
            for kernel in self._running.values():
                kernel._set_exited(-signal.SIGKILL, 0.0, 0)
            self._running.clear()
            self._replied.notify_all()

    def alive(self) -> bool:
        return self.process.poll() is None

    def _watch_kernel_memory(self, read) -> None:  # noqa: ANN001 - sandbox.kernel_memory_reader's function
        """Kill its kernels whenever its sandbox holds more than ``MAX_SANDBOX_KERNEL_MEMORY_BYTES`` of kernel memory."""
        while self.process.poll() is None:
            time.sleep(KERNEL_MEMORY_POLL_SECONDS)
            try:
                used = read()
            except (OSError, ValueError):
                return  # its cgroup is gone: the zygote is being stopped
            if used > MAX_SANDBOX_KERNEL_MEMORY_BYTES:
                with self._lock:
                    running = list(self._running)
                for number in running:
                    self.kill(number)
                self.kernel_memory_kills += bool(running)

    def has_live_kernels(self) -> bool:
        """Whether a kernel it forked has not been reported gone by its keeper (killed or not)."""
        with self._lock:
            return bool(self._running)

    def spoiled(self) -> str:
        """Why this zygote must serve no further submission, or ``""``.

        Its kernels share its cgroups and its kernels' user: what one kernel leaves charged to
        them after it is gone counts against the next. A kernel still not gone keeps its user's
        budgets; kernel memory left charged to the sandbox (the cached names of files a kernel
        looked up, each a dentry of the host's own file system, stay charged after it dies) would
        get the next kernels killed by the watchdog as soon as they start (the ninth attack round).
        """
        if self.has_live_kernels():
            return "a kernel it forked is not gone"
        if self.kernel_memory_kills:
            return "its kernels were killed for holding too much kernel memory"
        try:
            left = self.read_kernel_memory() if self.read_kernel_memory is not None else 0
        except (OSError, ValueError):
            return ""
        if left > MAX_RESIDUAL_KERNEL_MEMORY_BYTES:
            return f"its kernels left {left / 2**20:.0f} MiB of kernel memory charged to its sandbox"
        return ""

    def _stop_process(self) -> None:
        try:
            self.process.stdin.close()  # type: ignore[union-attr]  # the zygote kills its kernels and exits
            self.process.wait(timeout=STOP_SECONDS)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            try:
                self.process.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                # A process of its namespace outlives SIGKILL (stuck in the disk, say), and the zygote cannot
                # end before it: nobody waits for it here (its cgroups are swept after a later batch).
                return
        reader = getattr(self, "_reader", None)
        if reader is not None:
            reader.join(10)  # it reads to the end of the zygote's output, then stops
        self.process.stdout.close()  # type: ignore[union-attr]

    def close(self) -> None:
        self._stack.close()

    # ---- kernels

    def kernel_folder(self) -> Path:
        """A new folder for one kernel's connection file and sockets (a private Jupyter runtime folder)."""
        return Path(tempfile.mkdtemp(prefix="kernel-", dir=self.kernels))

    def view_of(self, rules: ImportRules) -> str:
        """The name of the student view built with ``rules`` under ``views/`` (built the first time it is asked for;
        the zygote sees the folder through its read-only bind of ``views/``)."""
        name = "view-" + hashlib.sha256(json.dumps(rules.as_json(), sort_keys=True).encode()).hexdigest()[:16]
        with self._lock:
            if not (self.views / name).is_dir():
                building = Path(tempfile.mkdtemp(prefix=".building-", dir=self.views))
                build_student_view(building / "view", rules)
                readable_by_all(building)
                (building / "view").rename(self.views / name)
                building.rmdir()
        return name

    def spawn(self, folder: Path, connection_file: Path, rules: ImportRules, memory_mb: int, *, seccomp: bool = True,
              probe_code: str | None = None, extra_arguments: tuple[str, ...] = ()) -> WarmProcess:
        """Fork a kernel whose connection file and sockets are in ``folder`` (made by ``kernel_folder``).

        ``probe_code``: run that code where the kernel would run, its output in ``folder/output`` (the tests').
        """
        if folder.parent != self.kernels or connection_file.parent != folder:
            raise ValueError("a kernel's files must be in a folder made by kernel_folder()")
        view = self.view_of(rules)
        with self._lock:
            self._next += 1
            number = self._next
        request = {"spawn": number, "folder": f"{KERNELS_ROOT}/{folder.name}", "connection_file": connection_file.name,
                   "view": f"{VIEWS_ROOT}/{view}", "view_binds": view_binds(rules), "scratch_mb": SCRATCH_MB,
                   "memory_mb": memory_mb, "max_file_mb": MAX_FILE_MB, "max_processes": MAX_PROCESSES,
                   "seccomp": seccomp, "probe_code": probe_code, "extra_arguments": list(extra_arguments)}
        with self._lock:
            if self.process.poll() is not None:
                raise ZygoteError("the grading zygote has stopped")
            self.process.stdin.write((json.dumps(request) + "\n").encode())  # type: ignore[union-attr]
            self.process.stdin.flush()  # type: ignore[union-attr]
            if not self._replied.wait_for(lambda: number in self._replies or self.process.poll() is not None,
                                          SPAWN_SECONDS):
                raise ZygoteError("the grading zygote did not start a kernel in time")
            reply = self._replies.pop(number, {"failed": number, "error": "the grading zygote stopped"})
            if "spawned" not in reply:
                raise ZygoteError(f"the grading zygote could not start a kernel: {str(reply.get('error'))[:300]}")
            kernel = WarmProcess(self, number, int(reply["pid"]))
            self._running[number] = kernel
            self._started_in.setdefault(folder.name, []).append(kernel)
            return kernel

    def usage(self, folder: Path) -> tuple[int, float, int]:
        """Kernels started in ``folder`` (restarts count), their CPU seconds and their largest peak memory (KiB).

        Measured by the keepers (``wait4``) once each kernel has exited; a kernel still running counts 0.
        """
        with self._lock:
            kernels = list(self._started_in.get(folder.name, []))
        return (len(kernels), round(sum(kernel.cpu_seconds or 0.0 for kernel in kernels), 3),
                max((kernel.max_rss_kb or 0 for kernel in kernels), default=0))

    def forget(self, folder: Path) -> None:
        with self._lock:
            self._started_in.pop(folder.name, None)

    def kill(self, number: int) -> None:
        with self._lock:
            if self.process.poll() is None:
                try:
                    self.process.stdin.write((json.dumps({"kill": number}) + "\n").encode())  # type: ignore[union-attr]
                    self.process.stdin.flush()  # type: ignore[union-attr]
                except OSError:
                    pass


#: Host uids a grader that is root gives its kernels: one per zygote, drawn at random, used by no account.
KERNEL_UIDS = range(0x40000000, 0x7FFF0000)


def unprivileged_uid() -> int:
    """A host uid for the kernels of one zygote: not root, not the grader, shared with no other zygote.

    A kernel's user is, underneath, a host uid: were it root's (the grader's, when the grader is root),
    limits Linux keeps per user (pending signals, inotify instances, epoll watches, processes) would be
    root's, shared with every root process of the machine, and root's files would be the kernel's own.
    """
    while True:
        uid = secrets.choice(KERNEL_UIDS)
        if not _known_id(uid):
            return uid


def _known_id(number: int) -> bool:
    """Whether ``number`` is a user or group id the system knows (``/etc/passwd``, LDAP or SSSD through NSS)."""
    for lookup in (pwd.getpwuid, grp.getgrgid):
        try:
            lookup(number)
            return True
        except KeyError:
            continue
    return False


#: Makes a user namespace as the uid in argv[1] (the effective uid owns it; the saved uid stays root only so that,
#: where Linux lets no unprivileged user make one, root makes it instead), then holds it until stdin closes.
_HOLDER = """import ctypes, os, sys
uid = int(sys.argv[1])
unshare = ctypes.CDLL(None, use_errno=True).unshare
os.setgroups([])
os.setresgid(uid, uid, 0)
os.setresuid(uid, uid, 0)
if unshare(0x10000000) != 0:
    os.setresuid(0, 0, 0)
    assert unshare(0x10000000) == 0
print('in', flush=True)
sys.stdin.read()
"""


@contextmanager
def kernels_user_namespace(kernel_host_uid: int):
    """A user namespace (yields a descriptor of it) where uid 0 is root and uid 1000 is ``kernel_host_uid``.

    The zygote runs in it as uid 0, with its capabilities, to make each kernel's namespaces; the
    keeper maps each kernel's uid 1000 to this namespace's 1000, so the kernel is, on the host,
    an unprivileged user of its own. Only root can write such a map (two lines).

    The namespace is made by a process that is already ``kernel_host_uid``, so that user owns it:
    Linux charges what a namespace's processes take of its per-user budgets (pending signals,
    message queues, inotify) to the namespace's owner too, which would otherwise be root.
    """
    holder = subprocess.Popen([_PYTHON, "-c", _HOLDER, str(kernel_host_uid)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, cwd="/")
    try:
        if holder.stdout.readline().strip() != b"in":  # type: ignore[union-attr]
            raise ZygoteError("could not make the kernels' user namespace")
        for name in ("uid_map", "gid_map"):
            Path(f"/proc/{holder.pid}/{name}").write_text(f"0 0 1\n1000 {kernel_host_uid} 1\n", encoding="ascii")
        descriptor = os.open(f"/proc/{holder.pid}/ns/user", os.O_RDONLY)
    finally:
        holder.stdin.close()  # type: ignore[union-attr]  # the namespace lives on in the descriptor and the zygote
        holder.wait()
        holder.stdout.close()  # type: ignore[union-attr]
    try:
        yield descriptor
    finally:
        os.close(descriptor)


def readable_by_all(folder: Path) -> None:
    """Folders 0755 and files 0644 under ``folder`` (a tree this process made: no links in it)."""
    folder.chmod(0o755)
    for path in folder.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)


def _read_line(process: subprocess.Popen, seconds: float) -> str:
    """The first line ``process`` writes, or ``""`` if it exits or says nothing for ``seconds``."""
    found: list[bytes] = []
    reader = threading.Thread(target=lambda: found.append(process.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(seconds)
    return found[0].decode("utf-8", "replace") if found else ""


@contextmanager
def environment_variable(name: str, value: str):
    """``os.environ[name] = value`` for the block, then as it was."""
    saved = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = saved


# ---------------------------------------------------------------------------- one zygote per grading thread

_ZYGOTES: dict[int, Zygote] = {}
_ZYGOTES_LOCK = threading.Lock()
_FINALIZED_IN = 0  #: the process that registered close_zygotes to run at its exit
_WARM: bool | None = None  #: whether this process's zygotes can fork kernels (``warm_kernels``)


def zygote_for_this_thread() -> Zygote:
    """This thread's zygote, started on first use (and again if it has stopped)."""
    key = threading.get_ident()
    with _ZYGOTES_LOCK:
        zygote = _ZYGOTES.get(key)
    if zygote is not None and zygote.alive():
        return zygote
    if zygote is not None:
        zygote.close()
    zygote = Zygote()
    with _ZYGOTES_LOCK:
        _ZYGOTES[key] = zygote
    global _FINALIZED_IN
    if _FINALIZED_IN != os.getpid():  # a pool's worker exits without atexit handlers, but runs these
        multiprocessing.util.Finalize(None, close_zygotes, exitpriority=100)
        _FINALIZED_IN = os.getpid()
    return zygote


def zygote_for_a_submission() -> Zygote:
    """This thread's zygote for a new submission: a new one if the current one is ``spoiled``.

    A kernel that outlives its kill keeps what it took of its user's budgets (epoll watches,
    say), and kernel memory its kernels left charged to its cgroups stays there: the zygote is
    left to end on its own, in the background (its cgroups' memory reclaimed as they are
    removed), and the submission gets a new zygote, a new user and new cgroups.
    """
    key = threading.get_ident()
    with _ZYGOTES_LOCK:
        zygote = _ZYGOTES.get(key)
    if zygote is not None and zygote.alive() and zygote.spoiled():
        with _ZYGOTES_LOCK:
            if _ZYGOTES.get(key) is zygote:
                del _ZYGOTES[key]
        threading.Thread(target=zygote.close, name="zygote-retired", daemon=True).start()
    return zygote_for_this_thread()


def warm_kernels(isolation: Isolation) -> bool:
    """Whether this thread's kernels are forked by a zygote: with the sandbox, where the zygote can fork them.

    A grader that is not root gets a zygote without the capabilities to make a kernel's
    namespaces (bubblewrap drops them): its kernels then start cold, each in a sandbox of its
    own, as the user it is (never root underneath). Decided once per process.
    """
    global _WARM
    if not isolation.sandbox:
        return False
    if _WARM is None:
        zygote = zygote_for_this_thread()
        _WARM = zygote.can_fork_kernels
        if not _WARM:
            close_zygotes()
    return _WARM


def remove_abandoned_zygotes() -> None:
    """Remove what grading processes that died (killed workers, a killed service) left: their zygotes' work folders,
    their kernel spec folders and their cgroups."""
    for prefix in (WORK_PREFIX, KERNEL_SPEC_PREFIX):
        for folder in Path(tempfile.gettempdir()).glob(f"{prefix}*"):
            if abandoned(folder.name, prefix):
                subprocess.run(["rm", "-rf", "--", str(folder)], check=False, capture_output=True)
    remove_abandoned_cgroups()


def kernels_forked_here() -> int:
    """How many kernels the zygotes of this process have forked (a Dask worker's, in the tests)."""
    with _ZYGOTES_LOCK:
        return sum(zygote._next for zygote in _ZYGOTES.values())


def close_zygotes() -> None:
    """Stop every zygote of this process (their kernels with them) and remove their folders."""
    with _ZYGOTES_LOCK:
        zygotes = list(_ZYGOTES.values())
        _ZYGOTES.clear()
    for zygote in zygotes:
        zygote.close()


_INHERITED: list[Zygote] = []


def _forget_zygotes_in_a_forked_child() -> None:
    """In a forked process (a pool's worker): its parent's zygotes are not its own to use or stop.

    Their pipes are closed by descriptor (the zygote must see the end of its input when the
    parent closes it; a file object's lock may be held by a thread that does not exist here),
    and the objects are kept, never collected (they would close descriptors reused by then).
    """
    global _ZYGOTES_LOCK
    _ZYGOTES_LOCK = threading.Lock()  # another thread may have held it at the fork
    for zygote in _ZYGOTES.values():
        _INHERITED.append(zygote)
        for descriptor in zygote.pipe_descriptors:
            try:
                os.close(descriptor)
            except OSError:
                pass
    _ZYGOTES.clear()


os.register_at_fork(after_in_child=_forget_zygotes_in_a_forked_child)


# ---------------------------------------------------------------------------- jupyter_client's side


class WarmProvisioner(LocalProvisioner):
    """Launches the kernel by asking this thread's zygote to fork it (the kernel spec's command is not run)."""

    async def launch_kernel(self, cmd: list[str], **kwargs):
        manager: WarmKernelManager = self.parent  # type: ignore[assignment]
        connection_file = Path(manager.connection_file)
        connection_file.chmod(0o644)  # the kernel's user is not the grader's (the folder stays the grader's alone)
        # what the spec's own command is followed by: ipykernel's options (nbclient's in-memory history, log level)
        extra = tuple(cmd[len(self.kernel_spec.argv):])
        self.process = zygote_for_this_thread().spawn(connection_file.parent, connection_file,
                                                      ImportRules.from_json(manager.import_rules),
                                                      manager.memory_mb, extra_arguments=extra)
        self.pid, self.pgid = self.process.pid, None
        self.cwd = kwargs.get("cwd")
        return self.connection_info

    async def wait(self) -> int | None:
        """As the local provisioner's, polling every few milliseconds (the zygote reports an exit at once)."""
        if self.process is None:
            return 0
        while self.process.poll() is None:
            await asyncio.sleep(POLL_SECONDS)
        status, self.process = self.process.poll(), None
        return status


class WarmKernelManager(SandboxKernelManager):
    """The sandbox's kernel manager, with kernels forked by the zygote of the thread that grades."""

    import_rules = Dict(help="what the kernel may import of the course's library (ImportRules.as_json): it decides "
                             "the kernel's student view").tag(config=True)
    memory_mb = Integer(0, help="address-space cap of the kernel in MiB").tag(config=True)

    def _kernel_socket_prefix(self) -> str:
        return f"{OWN_FOLDER}/{SOCKETS_FOLDER}/kernel"  # where the kernel sees its sockets folder

    async def _async_wait(self, pollinterval: float = 0.1) -> None:
        await super()._async_wait(pollinterval=min(pollinterval, POLL_SECONDS))

    async def _async_pre_start_kernel(self, **kwargs):
        if self.provisioner is None:
            self.kernel_id = self.kernel_id or str(uuid.uuid4())
            self.provisioner = WarmProvisioner(kernel_id=self.kernel_id, kernel_spec=self.kernel_spec, parent=self)
        return await super()._async_pre_start_kernel(**kwargs)



@contextmanager
def private_runtime_dir(isolation: Isolation):
    """A fresh Jupyter runtime folder, so a kernel sees no other kernel's connection files or sockets.

    With warm kernels it is a kernel folder of this thread's zygote, which the kernel sees at
    ``/run/kernel``; otherwise a temporary folder.
    """
    zygote = zygote_for_a_submission() if warm_kernels(isolation) else None
    runtime = zygote.kernel_folder() if zygote else Path(tempfile.mkdtemp(prefix="course-grader-runtime-"))
    try:
        with environment_variable("JUPYTER_RUNTIME_DIR", str(runtime)):
            yield runtime
    finally:
        remove_runtime_folder(runtime)
        if zygote is not None:
            zygote.forget(runtime)


def remove_runtime_folder(runtime: Path, as_user: Sequence[str] = ()) -> None:
    """Remove a kernel's runtime folder, whatever the kernel left in it (``as_user``: a command prefix that runs the
    removal as another user, such as ``setpriv``).

    rm, not shutil.rmtree: a tree nested thousands of levels deep (a kernel's, as a grader that is not root, where the
    kernel owns its sockets folder) is more than rmtree's recursion allows. A folder left without write permission (the
    kernels' ``sockets``, made read-only) keeps rm from its entries as any user but root: given it back first (chmod -R
    follows no link it meets).
    """
    subprocess.run([*as_user, "chmod", "-R", "u+rwx", "--", str(runtime)], check=False, capture_output=True)
    subprocess.run([*as_user, "rm", "-rf", "--", str(runtime)], check=False, capture_output=True)


@contextmanager
def grading_kernel(isolation: Isolation, runtime_dir: Path, rules: ImportRules):
    """Install the grading kernel spec for one submission; yield the nbgrader config that uses it.

    With warm kernels, they are forked by the zygote (``WarmKernelManager``) and the spec's own
    command refuses to start, should anything try to start it directly. Otherwise, with the
    sandbox, the spec starts each kernel in a bubblewrap sandbox of its own (``warm_kernels``).

    Parameters
    ----------
    runtime_dir : the private Jupyter runtime folder of its connection file and sockets
    rules : what the kernel may import of the course's library (the assignment's)
    """
    from traitlets.config import Config

    warm = warm_kernels(isolation)
    with tempfile.TemporaryDirectory(prefix=f"{KERNEL_SPEC_PREFIX}{os.getpid()}-") as data_dir, ExitStack() as stack:
        spec_dir = Path(data_dir) / "kernels" / KERNEL_NAME
        spec_dir.mkdir(parents=True)
        argv = launcher_command(isolation)
        if warm:  # fail closed: these kernels are forked by the zygote, never started from the spec
            argv = [_PYTHON, "-c", "raise SystemExit('a grading kernel is started by the grading zygote only')"]
        elif isolation.sandbox:  # cold: a sandbox of its own for each kernel, in cgroups of its own
            procs = stack.enter_context(sandbox_cgroups())
            view = build_student_view(Path(data_dir) / "view", rules)
            readable_by_all(view)  # the kernel's user is not the grader's, whatever the grader's umask
            argv = detached(bubblewrap_command(argv, view, rules, sockets=runtime_dir / SOCKETS_FOLDER,
                                               connection_file="{connection_file}"), procs)
            argv = ["/bin/sh", "-c", f'umask {SANDBOX_UMASK:03o} && exec "$@"', "sh", *argv]  # as the zygote's, above
        # Interrupts travel as messages: a signal to bwrap would not reach the kernel inside it.
        spec = {"argv": argv, "display_name": "Python 3 (grading)", "language": "python", "interrupt_mode": "message"}
        (spec_dir / "kernel.json").write_text(json.dumps(spec), encoding="utf-8")
        config = Config()
        config.Execute.kernel_name = KERNEL_NAME
        config.GraderOnlyExporter.started_by_grade = True  # nbgrader's autograde runs here, and only here
        if warm:
            config.ExecutePreprocessor.kernel_manager_class = WarmKernelManager
            config.WarmKernelManager.import_rules = rules.as_json()
            config.WarmKernelManager.memory_mb = isolation.memory_mb
            config.Execute.shutdown_kernel = "immediate"  # a graded kernel's state is thrown away: no need to ask
        elif isolation.sandbox:
            config.ExecutePreprocessor.kernel_manager_class = SandboxKernelManager
        with environment_variable("JUPYTER_PATH", os.pathsep.join(filter(None, [data_dir, os.environ.get("JUPYTER_PATH")]))):
            yield config
