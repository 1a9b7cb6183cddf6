# The grading service, `perceptron-course serve`, as a JupyterHub managed service: add these lines to the hub's
# jupyterhub_config.py (docs/hosting.md, "Grading as hand-ins arrive"). The hub starts the service with itself, as
# GRADER_USER, in the course folder; starts it again if it exits; stops it (SIGINT, then SIGTERM) when the hub stops.
# Its output goes to the hub's log. grader/tests/test_serve_hub.py runs these very lines, its own paths put in.
#
# The three settings: edit them for your hub.
COURSE_ROOT = "/srv/perceptron-course"  # the course folder (a checkout of the course), owned by GRADER_USER
GRADER_USER = "grader"  # a Unix user of its own: not root, not a student; it owns the course and its gradebook
VENV = "/srv/perceptron-course/.venv"  # the course's virtual environment (bash scripts/setup.sh), readable by GRADER_USER

c = get_config()  # noqa: F821 - JupyterHub defines get_config() where it runs its configuration file

c.JupyterHub.services.append(
    {
        "name": "perceptron-grading",
        # --jobs 2: two hand-ins graded at once, so that one student's slow hand-in never holds up another's.
        "command": [f"{VENV}/bin/perceptron-course", "serve", "--root", COURSE_ROOT, "--jobs", "2"],
        "user": GRADER_USER,
        "cwd": COURSE_ROOT,
        # The hub passes only its own PATH, LANG and a few more; HOME is GRADER_USER's. bubblewrap (bwrap) must be on
        # PATH: the service refuses to grade without its sandbox.
        "environment": {"PATH": f"{VENV}/bin:/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"},
    }
)

# Restarting the hub (an upgrade, or to take the service out for a `grade --force`) leaves the students' servers and
# the proxy running: by default a hub that stops stops them too, ending every student's session. A hub under systemd
# also needs KillMode=process in its unit (docs/hosting.md, "Stopping and restarting the service and the hub").
c.JupyterHub.cleanup_servers = False
c.JupyterHub.cleanup_proxy = False
