"""Where student code runs during grading: the grading kernel, its sandbox and its caps.

``bubblewrap_command`` builds the sandbox (for a kernel of its own, or for the zygote that
forks warm kernels: ``kernel_pool.py`` and ``in_sandbox/zygote.py``, which give each kernel
the same properties in namespaces of its own). With the sandbox, the kernel runs:

- unprivileged whatever the grader's user: its own user namespace as uid 1000, every
  capability dropped, no new user namespaces, a seccomp filter (loaded by the launcher);
- with no network (not even loopback) and its own PID, IPC and UTS namespaces, in a new
  session, killed with the grader;
- on an allowlist file system: read-only system libraries, the Python installation and
  the virtual environment, a *student view* of this package (no reference answers), a
  size-capped scratch tmpfs (cwd, ``HOME``, ``/tmp``), and, writable, only the folder of
  its IPC sockets; its connection file is bound read-only;
- with a cleared environment.

The trusted side never follows what the kernel could have replaced: it connects to the
kernel's sockets through file descriptors opened with ``O_NOFOLLOW`` and checked to be
sockets (``SandboxKernelManager``), and it reads nothing else the kernel wrote (nbclient
builds the executed notebook from kernel messages).

Where bubblewrap cannot run, grading as root refuses to run student code unless the TA
passes ``--unsandboxed``; as another user it warns loudly. Scores never depend on it.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import shutil
import stat
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from queue import Empty

import zmq
import zmq.asyncio
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_core.utils import run_sync
from jupyter_client.manager import AsyncKernelManager
from traitlets import DottedObjectName, Dict, Type

from ...in_sandbox.zygote import KERNELS_ROOT, OWN_FOLDER, VIEWS_ROOT
from ...intake_rules import ImportRules
from ..course.course import CourseError
from ..gradebook.outcome import Isolation
from ..course.library import library_folder, library_modules
from ..judging.kernel_imports import granted_module

KERNEL_NAME = "course-grader"
#: Address-space cap of a grading kernel; numpy, scipy and scikit-learn need about 1 GiB.
DEFAULT_MEMORY_MB = 3072
#: Size of the scratch tmpfs (cwd, HOME, /tmp); it counts against host memory, not RLIMIT_AS.
SCRATCH_MB = 64
#: Largest file the kernel may write (RLIMIT_FSIZE).
MAX_FILE_MB = 16
#: Processes and threads of the kernel (RLIMIT_NPROC); BLAS libraries are told to use one thread.
MAX_PROCESSES = 64
SANDBOX_VARIABLE = "COURSE_GRADER_SANDBOX"  # "off" disables the sandbox (grading then needs --unsafe-no-sandbox)
SANDBOX_UID = 1000
#: Largest message the grader accepts from a kernel (outputs are cut far below this anyway).
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
#: Where the student view of this package sits inside the sandbox (on its PYTHONPATH).
VIEW_MOUNT = "/opt/grading-view"
SCRATCH = "/tmp"
SOCKETS_FOLDER = "sockets"
#: This package, as the grading kernel sees it: the kernel's launcher, and the self-check as a function that does nothing.
GRADER_PACKAGE = Path(__file__).resolve().parents[2]
SANDBOX_MODULES = ("__init__.py", "kernel.py", "zygote.py")
SELF_CHECK_STUB = ('"""The self-check does not run while grading."""\n\n\n'
                   'def check_all(*args, **kwargs):\n    """Does nothing while grading."""\n    return None\n')
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)"
#: What grading safely needs, for the refusal and the warning (the hosting guide says how on a hub or a pod).
SANDBOX_NEEDS = ("Grading needs bubblewrap and libseccomp2, run as root or as a user allowed unprivileged user "
                 "namespaces (a Kubernetes pod usually needs a securityContext that permits them): see docs/hosting.md")
#: The one way to grade without a sandbox (``grade`` and ``explain``).
UNSAFE_FLAG = "--unsafe-no-sandbox"


def _core_flags(*, warm: bool = False, user_namespace: int | None = None) -> list[str]:
    """The namespace and privilege flags every sandbox gets (and the availability probe checks).

    ``warm``: the flags of a zygote (``in_sandbox/zygote.py``), which keeps uid 0 and the
    capabilities of its user namespace to make each kernel's namespaces; each kernel then
    becomes uid 1000 in a user namespace of its own, drops every capability and can make no
    user namespace, as the kernel of a sandbox of its own does here. ``user_namespace``: a
    descriptor of the user namespace the zygote runs in (``kernel_pool.kernels_user_namespace``),
    instead of one bubblewrap makes.
    """
    # --as-pid-1: no bubblewrap reaper inside, whose memory and environment the kernel could read
    # (it runs without the seccomp filter); the launcher is PID 1, and every process inside is filtered.
    if user_namespace is not None:
        return ["--userns", str(user_namespace), "--uid", "0", "--gid", "0", "--unshare-pid", "--unshare-ipc",
                "--unshare-net", "--unshare-uts", "--unshare-cgroup-try", "--as-pid-1", "--die-with-parent",
                "--new-session", "--clearenv"]
    user = ["--uid", "0", "--gid", "0"] if warm else ["--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
                                                      "--disable-userns"]
    privileges = [] if warm else ["--cap-drop", "ALL"]
    return ["--unshare-user", *user, "--unshare-all", "--as-pid-1", *privileges, "--die-with-parent", "--new-session",
            "--clearenv"]


def _system_binds() -> list[str]:
    """Read-only ``/usr`` and the top-level links or folders of the system's binaries and libraries."""
    flags = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        path = Path(top)
        if path.is_symlink():
            flags += ["--symlink", os.readlink(path), top]
        elif path.is_dir():
            flags += ["--ro-bind", top, top]
    for needed in ("/etc/ld.so.cache", "/etc/localtime", "/etc/mime.types", "/etc/fonts"):
        flags += ["--ro-bind-try", needed, needed]
    return flags


def sandbox_problem() -> str:
    """Why the grading sandbox cannot run here, or ``""`` if it can."""
    if os.environ.get(SANDBOX_VARIABLE, "").lower() == "off":
        return f"the sandbox is turned off ({SANDBOX_VARIABLE}=off)"
    if not sys.platform.startswith("linux"):
        return "bubblewrap needs Linux"
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return f"bubblewrap is not installed ({INSTALL_HINT})"
    probe = subprocess.run([bwrap, *_core_flags(), *_system_binds(), "--proc", "/proc", "--dev", "/dev", "true"],
                           capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        return f"bubblewrap cannot create a sandbox here: {probe.stderr.strip()[:200]}"
    try:
        import pyseccomp

        pyseccomp.SyscallFilter(pyseccomp.ALLOW)
    except Exception as error:  # noqa: BLE001 - a missing package or a missing libseccomp
        return f"the seccomp filter cannot be built ({type(error).__name__}: {error}); install libseccomp2 and pyseccomp"
    return ""


def choose_isolation(memory_mb: int = DEFAULT_MEMORY_MB, *, unsandboxed: bool = False) -> Isolation:
    """The sandbox if it works here, and the memory cap in any case.

    Without a sandbox, grading is refused, whoever the grader is: a TA who is not root runs student
    code with their own rights (their course, its secret, the gradebook, their home folder). Only
    ``unsandboxed`` (the TA's explicit ``--unsafe-no-sandbox``) lets it go on, with a warning on
    stderr here and a bold one at the top of the report (``report.isolation_line``).

    Raises
    ------
    CourseError
        When the sandbox cannot run and ``unsandboxed`` is false: saying why, what is needed, and the opt-in.
    """
    problem = sandbox_problem()
    if problem and not unsandboxed:
        who = "as root" if os.geteuid() == 0 else "with your own rights (your files, the course secret, the gradebook)"
        raise CourseError(f"refusing to run student code {who} without a sandbox ({problem}). {SANDBOX_NEEDS}; "
                          f"to grade anyway, knowing that student code can then read and change what you can, "
                          f"pass {UNSAFE_FLAG}")
    if problem:
        print(
            f"WARNING ({UNSAFE_FLAG}): student code will run WITHOUT a sandbox: {problem}. It can read and change "
            "whatever this user can: source/ (solutions, hidden tests), the course secret, other submissions and "
            f"the gradebook. {SANDBOX_NEEDS}.",
            file=sys.stderr,
        )
    return Isolation(sandbox=not problem, memory_mb=memory_mb, note=problem)


# ---------------------------------------------------------------------------- the student view


def _stub(package: str, module: str) -> str:
    return (f'"""Not available while grading."""\n\nraise ImportError("{package}.{module} is not available '
            f'while grading: implement it yourself")\n')


def build_student_view(destination: Path, rules: ImportRules) -> Path:
    """Write the packages a grading kernel imports; return the folder holding them (put on its ``PYTHONPATH``).

    The view holds this package's kernel launcher and self-check stub (nothing of ``trusted/``), and the course's
    library as ``rules`` lets the kernel see it: its student modules as they are, every other module a stub whose
    import raises ``ImportError``, except the names ``rules.grants`` gives the assignment.
    """
    launcher = destination / GRADER_PACKAGE.name / "in_sandbox"
    launcher.mkdir(parents=True)
    for name in SANDBOX_MODULES:
        shutil.copyfile(GRADER_PACKAGE / "in_sandbox" / name, launcher / name)
    (launcher.parent / "__init__.py").write_text('"""Only the kernel launcher is here while grading."""\n')
    (launcher.parent / "selfcheck.py").write_text(SELF_CHECK_STUB)
    for dotted in rules.blocked:  # each bound over its install (``view_binds``), in a cold sandbox and a zygote's kernel
        if _package_folder(dotted) is not None:
            _blocked_package_stub(destination, dotted)
    real = library_folder(rules.package)
    if real is None:
        return destination
    package = destination / rules.package
    package.mkdir()
    for module in rules.student_modules:
        if (real / f"{module}.py").is_file():
            shutil.copyfile(real / f"{module}.py", package / f"{module}.py")
    (package / "__init__.py").write_text(f'"""{rules.package}, as a student\'s grading kernel sees it: no reference '
                                         'answers."""\n')
    for module in library_modules(rules.package):
        if module in rules.student_modules:
            continue
        if module in rules.grants:
            helpers, text = granted_module(rules.package, module, rules.grants[module])
            for helper in helpers:
                shutil.copyfile(real / f"{helper}.py", package / f"{helper}.py")
            (package / f"{module}.py").write_text(text)
        else:
            (package / f"{module}.py").write_text(_stub(rules.package, module))
    return destination


def _blocked_package_stub(destination: Path, dotted: str) -> Path:
    folder = destination / dotted.replace(".", "_")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "__init__.py").write_text(f'raise ImportError("{dotted} is not available while grading: '
                                        'implement it yourself")\n')
    return folder


def _package_folder(dotted: str) -> Path | None:
    """Where ``dotted`` is installed, without importing it."""
    parent, _, child = dotted.rpartition(".")
    spec = importlib.util.find_spec(parent) if parent else None
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(list(spec.submodule_search_locations)[0]) / child
    return folder if folder.is_dir() else None


def _editable_hooks(site_packages: list[Path], packages: tuple[str, ...]) -> list[Path]:
    """setuptools' editable-install hooks of ``packages``: they map each to its checkout."""
    hooks = []
    for folder in site_packages:
        for package in packages:
            hooks += sorted(folder.glob(f"__editable__*{package}*"))
    return sorted(set(hooks))


# ---------------------------------------------------------------------------- the command


def _python_roots() -> list[Path]:
    """The Python installation and the virtual environment, unless ``/usr`` already holds them."""
    roots = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()}
    return sorted(root for root in roots if Path("/usr") not in (root, *root.parents))


#: Where Python installations keep packages, besides the grader's own environment.
_PACKAGE_FOLDERS = ("/usr/lib/python3*/site-packages", "/usr/lib/python3*/dist-packages",
                    "/usr/local/lib/python3*/site-packages", "/usr/local/lib/python3*/dist-packages")


def foreign_site_packages(roots: list[Path]) -> list[Path]:
    """Package folders the sandbox would show but the grader's interpreter does not use.

    They are hidden (an empty folder bound over each): another Python's copy of
    scikit-learn, or of this library, must not be importable or readable from the kernel.
    """
    used = {Path(entry).resolve() for entry in sys.path if entry}
    patterns = [*_PACKAGE_FOLDERS, *(f"{root}/lib/python3*/site-packages" for root in roots)]
    found = {Path(path) for pattern in patterns for path in glob.glob(pattern)}
    return sorted(path for path in found if path.is_dir() and path.resolve() not in used)


#: This interpreter with ``..`` and ``.`` collapsed but links kept (a virtual environment's python is
#: a link it must keep): a path through a folder the sandbox does not show (``attacks/../.venv``) fails there.
_PYTHON = os.path.normpath(os.path.abspath(sys.executable))


def _environment() -> dict[str, str]:
    """The kernel's whole environment."""
    bin_folder = str(Path(_PYTHON).parent)
    return {
        "PATH": f"{bin_folder}:/usr/local/bin:/usr/bin:/bin", "HOME": SCRATCH, "TMPDIR": SCRATCH, "LANG": "C.UTF-8",
        "PYTHONPATH": VIEW_MOUNT, "PYTHONNOUSERSITE": "1", "PYTHONDONTWRITEBYTECODE": "1",
        "MPLBACKEND": "Agg", "MPLCONFIGDIR": f"{SCRATCH}/.config/matplotlib", "IPYTHONDIR": f"{SCRATCH}/.ipython",
        "JUPYTER_RUNTIME_DIR": f"{SCRATCH}/.jupyter", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }


def view_binds(rules: ImportRules) -> list[tuple[str, str]]:
    """Where a kernel's view is bound: ``(folder in the view, target)``; ``""`` is the whole view.

    The whole view sits at :data:`VIEW_MOUNT` (on the kernel's ``PYTHONPATH``); each package of it is also bound over
    its ordinary install (under the Python roots), so that no other copy of it is importable or readable.
    """
    binds = [("", VIEW_MOUNT)]
    roots = (*_python_roots(), Path("/usr"))
    for name, real in ((GRADER_PACKAGE.name, GRADER_PACKAGE), (rules.package, library_folder(rules.package))):
        if name and real is not None and any(root in real.parents for root in roots):
            binds.append((name, str(real)))
    for dotted in rules.blocked:  # a stub whose import raises ImportError, over the blocked package's install
        installed = _package_folder(dotted)
        if installed is not None:
            binds.append((dotted.replace(".", "_"), str(installed)))
    return binds


def bubblewrap_command(inner: list[str], view: Path, rules: ImportRules, *, sockets: Path | None = None,
                       connection_file: str | None = None, scratch_mb: int = SCRATCH_MB,
                       warm_roots: tuple[Path, Path] | None = None, user_namespace: int | None = None) -> list[str]:
    """The ``bwrap`` command that runs ``inner`` in the grading sandbox.

    Parameters
    ----------
    inner : the command to run inside (the kernel launcher)
    view : a folder made by ``build_student_view``: the only copy of the library and of this package inside
    rules : what the view was built with (its packages are bound over their ordinary installs)
    sockets : the kernel's private folder of IPC sockets, the one writable host folder
    connection_file : bound read-only (a kernel spec passes ``"{connection_file}"``)
    scratch_mb : size of the scratch tmpfs
    warm_roots : for a zygote, the host folders of the kernels' files (writable) and of the
        student views (read-only); it sees them at ``zygote.KERNELS_ROOT`` and ``VIEWS_ROOT``,
        and ``/dev`` is read-only (each kernel mounts its own ``/dev/shm``, ``/tmp``, ``/proc``)
    user_namespace : for a zygote, the user namespace to run in (see ``_core_flags``)
    """
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise RuntimeError(f"bubblewrap is not installed ({INSTALL_HINT})")
    command = [bwrap, *_core_flags(warm=warm_roots is not None, user_namespace=user_namespace), *_system_binds(),
               "--proc", "/proc", "--dev", "/dev"]
    if warm_roots is None:
        # /proc read-only: a kernel's user may be root's underneath, which may write /proc/sys without capabilities
        # (bubblewrap leaves /proc/sys writable for it); a zygote's kernels mount their own, read-only
        command += ["--remount-ro", "/proc", "--perms", "1777", "--size", str(1024 * 1024), "--tmpfs", "/dev/shm"]
    else:
        kernels, views = warm_roots
        command += ["--dir", "/dev/shm", "--remount-ro", "/dev", "--bind", str(kernels), KERNELS_ROOT,
                    "--ro-bind", str(views), VIEWS_ROOT, "--dir", OWN_FOLDER]
    command += ["--perms", "1777", "--size", str(scratch_mb * 1024 * 1024), "--tmpfs", SCRATCH]
    roots = _python_roots()
    for root in roots:
        command += ["--ro-bind", str(root), str(root)]
    site_packages = [Path(p) for p in sys.path if p.endswith("-packages") and Path(p).is_dir()]
    for hook in _editable_hooks(site_packages, tuple(filter(None, (GRADER_PACKAGE.name, rules.package)))):
        command += ["--ro-bind", "/dev/null", str(hook)]
    empty = view.parent / "empty"
    empty.mkdir(exist_ok=True)
    for folder in foreign_site_packages(roots):
        command += ["--ro-bind", str(empty), str(folder)]
    for inside, target in view_binds(rules):
        command += ["--ro-bind", str(view / inside) if inside else str(view), target]
    if connection_file is not None:
        command += ["--ro-bind", connection_file, connection_file]
    if sockets is not None:
        command += ["--bind", str(sockets), str(sockets)]
    for name, value in _environment().items():
        command += ["--setenv", name, value]
    if warm_roots is not None:  # its kernels are another user than the one bubblewrap made these folders for
        command += [flag for folder in _made_folders(command) for flag in ("--chmod", "0755", folder)]
    return command + ["--remount-ro", "/", "--chdir", SCRATCH, "--", *inner]


#: bubblewrap's operations and how many arguments each takes (the last is where it mounts or makes something).
_OPERATIONS = {"--ro-bind": 2, "--bind": 2, "--ro-bind-try": 2, "--symlink": 2, "--dir": 1, "--tmpfs": 1, "--proc": 1,
               "--dev": 1, "--remount-ro": 1}
_OTHER_ARGUMENTS = {"--setenv": 2, "--perms": 1, "--size": 1, "--chdir": 1, "--uid": 1, "--gid": 1, "--userns": 1}


def _made_folders(command: list[str]) -> list[str]:
    """The folders bubblewrap makes (mode 0700) on its own root for what ``command`` mounts there: the parents of
    every mount point that are not themselves mount points or inside one (those are the host's, never changed)."""
    targets, position = [], 1
    while position < len(command):
        flag = command[position]
        if flag in _OPERATIONS:
            targets.append(command[position + _OPERATIONS[flag]])
            position += 1 + _OPERATIONS[flag]
        else:
            position += 1 + _OTHER_ARGUMENTS.get(flag, 0)
    mounted = set(targets)
    made = []
    for target in targets:
        for parent in reversed(Path(target).parents):
            folder = str(parent)
            inside_a_mount = any(folder == mount or folder.startswith(mount.rstrip("/") + "/") for mount in mounted)
            if folder != "/" and not inside_a_mount and folder not in made:
                made.append(folder)
    return made


def launcher_command(isolation: Isolation, *, probe_code: str | None = None) -> list[str]:
    """The kernel launcher's command: ipykernel on ``{connection_file}``, or ``probe_code`` (tests)."""
    command = [_PYTHON, "-s", "-m", "course_grader.in_sandbox.kernel",
               "--memory-mb", str(isolation.memory_mb)]
    if isolation.sandbox:
        command += ["--max-file-mb", str(MAX_FILE_MB), "--max-processes", str(MAX_PROCESSES), "--seccomp"]
    return command + (["-c", probe_code] if probe_code is not None else ["-f", "{connection_file}"])


#: Processes and threads of one sandbox in all (bubblewrap, its init and the kernel's own threads included).
MAX_TASKS = MAX_PROCESSES + 32
#: Cores one sandbox may keep busy: a submission that spins many processes slows only itself.
MAX_CORES = 1
CPU_PERIOD_US = 100_000
CGROUP_ROOT = Path("/sys/fs/cgroup")
#: A sandbox's cgroups are named with this and the pid of the grading process that made them.
CGROUP_PREFIX = "course-grader-"
#: What each sandbox's cgroups hold it to: controller -> file -> value, for cgroup v1 and v2.
#: Memory of one sandbox in all (every process of a kernel, its scratch tmpfs, and the zygote that forked it):
#: RLIMIT_AS caps each process at DEFAULT_MEMORY_MB, but 64 of them could hold 64 times that.
MAX_SANDBOX_MEMORY_BYTES = (DEFAULT_MEMORY_MB + 1024) * 1024 * 1024
CGROUP_V1_LIMITS = {"pids": {"pids.max": str(MAX_TASKS)},
                    "cpu": {"cpu.cfs_period_us": str(CPU_PERIOD_US), "cpu.cfs_quota_us": str(CPU_PERIOD_US * MAX_CORES)},
                    "memory": {"memory.limit_in_bytes": str(MAX_SANDBOX_MEMORY_BYTES)}}
CGROUP_V2_LIMITS = {"pids": {"pids.max": str(MAX_TASKS)}, "cpu": {"cpu.max": f"{CPU_PERIOD_US * MAX_CORES} {CPU_PERIOD_US}"},
                    "memory": {"memory.max": str(MAX_SANDBOX_MEMORY_BYTES)}}


def _cgroup_parents() -> dict[Path, dict[str, str]]:
    """Where the grader may make a child cgroup for a sandbox, and the limits to write into it.

    Only as root: RLIMIT_NPROC already holds for a grader that is not root, and an
    unprivileged grader cannot make cgroups. With cgroup v1 each controller has its own
    tree; with cgroup v2, one child of the grader's own cgroup takes the delegated ones.
    """
    if os.geteuid() != 0:
        return {}
    parents = {CGROUP_ROOT / controller: limits for controller, limits in CGROUP_V1_LIMITS.items()
               if (CGROUP_ROOT / controller / "cgroup.procs").is_file() and os.access(CGROUP_ROOT / controller, os.W_OK)}
    if parents:
        return parents
    try:
        own = CGROUP_ROOT / Path("/proc/self/cgroup").read_text().split("0::", 1)[1].split()[0].lstrip("/")
        delegated = (own / "cgroup.subtree_control").read_text().split()
    except (OSError, IndexError):
        return {}
    limits = {name: value for controller, files in CGROUP_V2_LIMITS.items() if controller in delegated
              for name, value in files.items()}
    return {own: limits} if limits else {}


@contextmanager
def sandbox_cgroups():
    """The cgroups of one submission's sandbox (tasks and CPU capped); yields their ``cgroup.procs`` files.

    As root, Linux does not apply RLIMIT_NPROC to the kernel (its user maps back to root),
    so a fork bomb would be bounded only by the time budget; and nothing else bounds the
    cores a kernel's processes keep busy. The cgroups bound both whatever the user. Where
    none can be made the list is empty, and the rlimits are what remains.
    """
    name = f"{CGROUP_PREFIX}{os.getpid()}-{time.monotonic_ns()}"
    groups = []
    for parent, limits in _cgroup_parents().items():
        try:
            (parent / name).mkdir()
        except OSError:
            continue
        groups.append(parent / name)
        for file, value in limits.items():
            try:
                (parent / name / file).write_text(value)
            except OSError:  # a limit this kernel does not offer: the others still hold
                pass
    try:
        yield [group / "cgroup.procs" for group in groups]
    finally:
        for group in groups:
            _remove_cgroup(group)


#: Kernel memory (open files, mappings, sockets, page tables) one sandbox may hold before its kernels are killed.
#: An honest kernel holds about 3 MiB. Open files are counted machine-wide (``fs.file-max``), at about 0.5 KiB
#: each, and no cgroup limit counts them: files kept open by mappings after their descriptor is closed are not
#: in RLIMIT_NOFILE either (the eighth attack round filled the host's whole file table that way).
MAX_SANDBOX_KERNEL_MEMORY_BYTES = 64 * 1024 * 1024
#: Kernel memory a zygote's sandbox may still hold, with no kernel alive, and serve another submission: its own
#: (page tables, open files) and what honest kernels leave cached is a few MiB (``kernel_pool.Zygote.spoiled``).
MAX_RESIDUAL_KERNEL_MEMORY_BYTES = 16 * 1024 * 1024


def kernel_memory_reader(procs: list[Path]):
    """A function giving the kernel memory charged to the sandbox whose cgroups are ``procs`` (bytes), or ``None``.

    cgroup v1: ``memory.kmem.usage_in_bytes``; v2: ``kernel`` of ``memory.stat`` (or its parts, on older kernels).
    """
    for procs_file in procs:
        group = procs_file.parent
        if (group / "memory.kmem.usage_in_bytes").is_file():
            return lambda: int((group / "memory.kmem.usage_in_bytes").read_text())
        if (group / "memory.stat").is_file() and (group / "memory.max").is_file():
            return lambda: _v2_kernel_memory((group / "memory.stat").read_text())
    return None


def _v2_kernel_memory(stat: str) -> int:
    fields = dict(line.split() for line in stat.splitlines() if len(line.split()) == 2)
    if "kernel" in fields:
        return int(fields["kernel"])
    return sum(int(fields.get(name, 0)) for name in ("slab", "kernel_stack", "pagetables", "sock"))


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def abandoned(name: str, prefix: str) -> bool:
    """Whether ``name`` (``<prefix><pid>-...``: a sandbox cgroup, a zygote's folder) belongs to a process that is gone."""
    owner = name[len(prefix):].split("-")[0] if name.startswith(prefix) else ""
    return owner.isdigit() and not process_alive(int(owner))


def remove_abandoned_cgroups() -> None:
    """Remove the sandbox cgroups of grading processes that died before they could (a killed worker's)."""
    for parent in _cgroup_parents():
        for group in parent.glob(f"{CGROUP_PREFIX}*"):
            if abandoned(group.name, CGROUP_PREFIX):
                _remove_cgroup(group)


def _remove_cgroup(group: Path) -> None:
    """Kill whatever is left in ``group`` (the kernel is shut down by now), reclaim its memory, then remove it."""
    for _ in range(50):
        try:
            left = (group / "cgroup.procs").read_text().split()
            for pid in left:
                os.kill(int(pid), 9)
            if not left:
                _reclaim_memory(group)
            group.rmdir()
            return
        except (ProcessLookupError, OSError):
            time.sleep(0.05)


def _reclaim_memory(group: Path) -> None:
    """Free what is still charged to an empty memory cgroup (best effort).

    A kernel's cached lookups of host files (dentries, inodes) stay charged to its cgroup after
    it is gone; a removed cgroup hands them to its parent and the host keeps them cached, until
    memory runs short. A hand-in looked up two million names that do not exist (64 MiB of them
    per kernel, every kernel of a batch): cgroup v1's ``memory.force_empty`` and v2's
    ``memory.reclaim`` free them with the cgroup.
    """
    try:
        if (group / "memory.force_empty").is_file():
            (group / "memory.force_empty").write_text("0")
        elif (group / "memory.reclaim").is_file():
            (group / "memory.reclaim").write_text((group / "memory.current").read_text().strip() or "0")
    except (OSError, ValueError):
        pass


def detached(argv: list[str], procs: list[Path], *, keep_pipes: bool = False) -> list[str]:
    """``argv`` started with an empty environment and no terminal, inside the cgroups of ``procs``.

    bubblewrap's own process then holds nothing of the grader's environment, and nothing a
    kernel writes to its inherited stdout or stderr reaches the TA's terminal. ``keep_pipes``:
    stdin and stdout stay those of the caller (the zygote's requests and replies).
    """
    join = "".join(f'echo $$ > "${number}" && ' for number in range(1, len(procs) + 1))
    streams = "2>/dev/null" if keep_pipes else "</dev/null >/dev/null 2>&1"
    return ["/bin/sh", "-c", join + f'shift {len(procs)} && exec /usr/bin/env -i "$@" {streams}', "sh",
            *(str(path) for path in procs), *argv]


# ---------------------------------------------------------------------------- the kernel's sockets

CHANNELS = ("shell", "iopub", "stdin", "hb", "control")
NOBODY = 65534
#: How long a starting kernel may take to open its sockets.
SOCKET_WAIT_SECONDS = 60.0


class UnsafeSocketError(RuntimeError):
    """A kernel's socket path is not a socket (a symlink, a file): the grader refuses to connect."""


def open_kernel_sockets(folder: Path, prefix: str, ports: dict[str, int], *, still_running,
                        wait: float = SOCKET_WAIT_SECONDS) -> dict[str, int]:
    """Open every channel's socket with ``O_PATH | O_NOFOLLOW`` once it exists; return a file descriptor per channel.

    The folder is writable by the kernel, so each entry is checked on the descriptor
    itself: a symlink or anything but a socket raises ``UnsafeSocketError``. Connecting to
    ``/proc/<pid>/fd/<fd>`` then reaches that very socket, whatever the kernel renames or
    replaces later.

    Parameters
    ----------
    still_running : callable returning False once the kernel process has exited
    """
    deadline = time.monotonic() + wait
    folder_fd = os.open(folder, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW)
    opened: dict[str, int] = {}
    try:
        while len(opened) < len(ports):
            for channel, port in ports.items():
                if channel in opened:
                    continue
                try:
                    descriptor = os.open(f"{prefix}-{port}", os.O_PATH | os.O_NOFOLLOW, dir_fd=folder_fd)
                except FileNotFoundError:
                    continue
                opened[channel] = descriptor
                if not stat.S_ISSOCK(os.fstat(descriptor).st_mode):
                    raise UnsafeSocketError(f"the kernel's {channel} socket {prefix}-{port} is not a socket; "
                                            "the grader does not connect to it")
            if len(opened) < len(ports):
                if not still_running() or time.monotonic() > deadline:
                    raise RuntimeError("the grading kernel did not open its sockets (it exited or took too long)")
                time.sleep(0.02)
    except BaseException:
        for descriptor in opened.values():
            os.close(descriptor)
        raise
    finally:
        os.close(folder_fd)
    return opened


#: How long a kernel's ``idle`` status after its ``kernel_info_reply`` may take to arrive before the request is sent again.
IOPUB_CHECK_SECONDS = 0.5


def capped_context(context: zmq.asyncio.Context) -> zmq.asyncio.Context:
    """``context``, whose sockets refuse a message frame over ``MAX_MESSAGE_BYTES``.

    A bigger one never reaches the grader's memory: ZMQ drops it (and the connection) while
    reading, so one huge print cannot take the TA's machine. The manager's context (control)
    and each client's own (shell, IOPub: jupyter_client makes a context per client) both need it.
    """
    context.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)
    return context


class VerifiedSocketsClient(AsyncKernelClient):
    """A kernel client that connects only to sockets the manager opened and checked."""

    socket_urls = Dict(help="ZMQ URL of each channel")

    def _make_url(self, channel: str) -> str:
        return self.socket_urls[channel]

    def _context_default(self) -> zmq.asyncio.Context:
        return capped_context(super()._context_default())

    def start_channels(self, shell: bool = True, iopub: bool = True, stdin: bool = True, hb: bool = True,
                       control: bool = True) -> None:
        """Connect the shell and IOPub channels only: never stdin, control or the heartbeat.

        Nothing reads stdin or control while grading (input is not allowed; interrupts go
        through the manager), and what a kernel sends on a connected socket that nobody reads
        stays in the grader's memory: a kernel filled gigabytes that way on stdin. Whether the
        kernel lives is the manager's to tell (its process); the heartbeat's thread, once its
        kernel died, opens a new socket to the same endpoint every second, and after a restart
        that endpoint could be the new kernel's (see ``SandboxKernelManager._retire_socket_fds``).
        """
        super().start_channels(shell=shell, iopub=iopub, stdin=False, hb=False, control=False)

    async def wait_for_ready(self, timeout: float | None = None) -> None:
        """Return once the kernel answers ``kernel_info`` on its shell socket and publishes on its IOPub socket.

        jupyter_client's own wait ends by reading IOPub until nothing arrives for 0.2 s, on every
        kernel start: here it ends as soon as the kernel's ``idle`` status for the request
        arrives (which proves IOPub connected, as the 0.2 s wait does). Messages of other
        requests never reach a cell: nbclient keeps only those whose parent is the cell's request.

        Raises
        ------
        RuntimeError
            If the kernel dies first, or does not answer within ``timeout`` seconds.
        """
        deadline = time.monotonic() + (float("inf") if timeout is None else timeout)
        while True:
            request = self.kernel_info()
            try:
                reply = await self.shell_channel.get_msg(timeout=1)
            except Empty:
                reply = None
            if reply is not None and reply["msg_type"] == "kernel_info_reply" and await self._idle_after(request):
                self._handle_kernel_info_reply(reply)
                return
            if not await self._async_is_alive():
                raise RuntimeError("Kernel died before replying to kernel_info")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Kernel didn't respond in {timeout:.0f} seconds")

    async def _idle_after(self, request: str) -> bool:
        """Whether IOPub brings the kernel's ``idle`` status for ``request`` within ``IOPUB_CHECK_SECONDS``."""
        deadline = time.monotonic() + IOPUB_CHECK_SECONDS
        while (left := deadline - time.monotonic()) > 0:
            try:
                message = await self.iopub_channel.get_msg(timeout=left)
            except Empty:
                return False
            if (message["msg_type"] == "status" and message["content"].get("execution_state") == "idle"
                    and message["parent_header"].get("msg_id") == request):
                return True
        return False


class SandboxKernelManager(AsyncKernelManager):
    """Starts the sandboxed kernel with IPC sockets in their own folder, and connects only through checked descriptors."""

    client_class = DottedObjectName("course_grader.trusted.running.sandbox.VerifiedSocketsClient")
    client_factory = Type(VerifiedSocketsClient, klass=AsyncKernelClient)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._socket_fds: dict[str, int] = {}
        self._retired_socket_fds: list[int] = []  #: those of the kernels restarted since (``_retire_socket_fds``)
        self._defer_post_start = False
        self._post_start_arguments: dict | None = None

    def start_in_background(self, **kwargs) -> None:
        """Start the kernel process and return without waiting for it; ``finish_start`` waits.

        The grader does its own work (nbgrader's bookkeeping, the cases) while the kernel boots.
        """
        self._defer_post_start = True
        run_sync(self.start_kernel)(**kwargs)

    def finish_start(self) -> None:
        """Wait for a kernel started by ``start_in_background`` to open its sockets, and connect."""
        if self._post_start_arguments is not None:
            arguments, self._post_start_arguments = self._post_start_arguments, None
            run_sync(super()._async_post_start_kernel)(**arguments)

    async def _async_post_start_kernel(self, **kwargs):
        if self._defer_post_start:  # once: a restart waits as usual
            self._defer_post_start = False
            self._post_start_arguments = kwargs
            return
        await super()._async_post_start_kernel(**kwargs)

    async def interrupt_kernel(self) -> None:
        """As jupyter_client's; then its control socket, which nothing reads and a kernel could fill, is closed."""
        try:
            await super().interrupt_kernel()
        finally:
            self._close_control_socket()  # (it lingers 100 ms to send the request)

    async def request_shutdown(self, restart: bool = False) -> None:
        """As jupyter_client's; then its control socket is closed (see ``interrupt_kernel``)."""
        try:
            await super().request_shutdown(restart=restart)
        finally:
            self._close_control_socket()

    def _context_default(self) -> zmq.asyncio.Context:
        return capped_context(super()._context_default())

    def _sockets_folder(self) -> Path:
        return Path(self.connection_file).parent / SOCKETS_FOLDER

    async def _async_pre_start_kernel(self, **kwargs):
        self._close_socket_fds()
        folder = self._sockets_folder()
        if folder.is_dir() and not folder.is_symlink():
            folder.chmod(0o700)  # closed after the last start (see _socket_urls)
        shutil.rmtree(folder, ignore_errors=True)  # rmtree never follows links
        folder.mkdir(mode=0o700)
        if os.geteuid() == 0:
            # Owned by nobody, writable by others but not readable, sticky: the kernel (root of the host
            # through its user namespace, without privileges over host files) can bind its sockets there but
            # cannot give itself the folder back once it is closed (chmod needs the owner).
            os.chown(folder, NOBODY, NOBODY)
            folder.chmod(0o1733)
        self.transport = "ipc"
        self.ip = self._kernel_socket_prefix()
        return await super()._async_pre_start_kernel(**kwargs)

    def _kernel_socket_prefix(self) -> str:
        """Where the kernel binds its sockets (``<prefix>-<port>``), as the kernel sees its folder."""
        return str(self._sockets_folder() / "kernel")

    def _still_running(self) -> bool:
        process = getattr(self.provisioner, "process", None)
        return process is not None and process.poll() is None

    def _socket_urls(self) -> dict[str, str]:
        if not self._socket_fds:
            ports = {channel: getattr(self, f"{channel}_port") for channel in CHANNELS}
            self._socket_fds = open_kernel_sockets(self._sockets_folder(), "kernel", ports,
                                                   still_running=self._still_running)
            # Its sockets are bound: from now on the kernel may write nothing more into this host folder
            # (no files filling the disk, no tree too deep to remove). Connecting needs no write access to it.
            self._sockets_folder().chmod(0o500)
        return {channel: f"ipc:///proc/{os.getpid()}/fd/{fd}" for channel, fd in self._socket_fds.items()}

    def _make_url(self, channel: str) -> str:
        return self._socket_urls()[channel]

    def client(self, **kwargs):
        kwargs.setdefault("socket_urls", self._socket_urls())
        return super().client(**kwargs)

    def _close_socket_fds(self) -> None:
        for descriptor in self._socket_fds.values():
            os.close(descriptor)
        self._socket_fds = {}

    def _retire_socket_fds(self) -> None:
        """Keep the descriptors of a kernel that is gone open, and its endpoints' numbers with them, until the last kernel.

        A kernel's endpoints are ``/proc/<grader>/fd/<n>``, and ZMQ reconnects a socket whose peer
        went away (every 0.1-0.2 s). Closed, these numbers went to the next descriptors the grader
        opened: often the restarted kernel's, and the sockets of the dead kernel (its client,
        replaced only once the new kernel was up; the control socket, lingering with the
        interrupt sent to the dead kernel) reached the new kernel: a shell socket with the new
        client's ZMQ identity, the stale interrupt on its control socket. The new kernel then
        sometimes left a cell unanswered until its time limit. Kept open, they name the dead
        kernel's sockets, where a reconnection is refused. (At most a few per notebook: restarts
        are bounded by ``max_restarts`` and by the checks of the assignment.)
        """
        self._retired_socket_fds += self._socket_fds.values()
        self._socket_fds = {}

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        if self._control_socket is not None:  # the kernel is gone or killed: what it was sent is dropped, not kept 0.1 s
            self._control_socket.close(linger=0)
            self._control_socket = None
        await super()._async_cleanup_resources(restart=restart)
        if restart:
            self._retire_socket_fds()
            return
        self._close_socket_fds()
        for descriptor in self._retired_socket_fds:
            os.close(descriptor)
        self._retired_socket_fds = []
