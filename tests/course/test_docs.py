"""The guides keep their word: every command they mark to run in CI runs, and every link they make leads somewhere.

A fenced block opened with ```` ```bash ci ```` is a command a guide promises works. The blocks of one guide run in
order, in one shell (``set -euo pipefail``), in a temporary copy of the repository's tracked files with the project's
``.venv/bin`` first on ``PATH``, so that a guide can build on its earlier steps and never touches this checkout.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GUIDES = sorted((REPO / "docs").glob("*.md"))
LANDING = REPO / "README.md"
_FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.MULTILINE | re.DOTALL)
_LINK = re.compile(r"\[[^\]]*\]\((?P<target>[^)\s]+)\)")
#: A hang guard, not a measurement: the slowest guide grades the example class once.
GUIDE_TIMEOUT_SECONDS = 1800


def ci_blocks(markdown: str) -> list[str]:
    """The bodies of the ```` ```bash ci ```` blocks of ``markdown``, in order, without the list indentation."""
    blocks = []
    for match in _FENCE.finditer(markdown):
        if match["info"].split() == ["bash", "ci"]:
            indent = match["indent"]
            blocks.append("".join(line[len(indent):] if line.startswith(indent) else line
                                  for line in match["body"].splitlines(keepends=True)))
    return blocks


def test_ci_blocks_are_found_as_written():
    text = "Run\n\n```bash ci\necho one\n```\n\n   ```bash ci\n   echo two\n   ```\n\n```bash\necho never\n```\n"
    assert ci_blocks(text) == ["echo one\n", "echo two\n"]


def tracked_copy(destination: Path) -> Path:
    """A copy of the repository's tracked files (what a fresh clone has), with this checkout's ``.venv`` linked in."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    for name in filter(None, listed.decode("utf-8").split("\0")):
        source = REPO / name
        if source.is_file():
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    (destination / ".venv").symlink_to(REPO / ".venv")
    return destination


@pytest.mark.xdist_group("each test")  # each case its own unit of work (course_grader.testing.xdist_units)
@pytest.mark.slow
@pytest.mark.parametrize("guide", [g for g in [LANDING, *GUIDES] if ci_blocks(g.read_text(encoding="utf-8"))],
                         ids=lambda g: g.name)
def test_the_commands_a_guide_shows_run(guide, tmp_path):
    script = "set -euo pipefail\n" + "\n".join(ci_blocks(guide.read_text(encoding="utf-8")))
    course = tracked_copy(tmp_path / "course")
    env = {**os.environ, "PATH": f"{REPO / '.venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
           "MPLBACKEND": "Agg"}
    done = subprocess.run(["bash", "-c", script], cwd=course, env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=GUIDE_TIMEOUT_SECONDS)
    assert done.returncode == 0, (f"a command of {guide.relative_to(REPO)} failed (exit {done.returncode}):\n"
                                  f"--- stdout\n{done.stdout[-4000:]}\n--- stderr\n{done.stderr[-4000:]}")


def test_the_landing_page_links_every_guide():
    linked = {match["target"] for match in _LINK.finditer(LANDING.read_text(encoding="utf-8"))}
    missing = [g.name for g in GUIDES if f"docs/{g.name}" not in linked and not any(
        f"docs/{g.name}" in target for target in linked)]
    reachable_from_guides = {match["target"].split("#")[0] for g in GUIDES
                             for match in _LINK.finditer(g.read_text(encoding="utf-8"))}
    assert not [name for name in missing if name not in reachable_from_guides], \
        f"guides that neither README.md nor another guide links: {missing}"


@pytest.mark.parametrize("page", [LANDING, *GUIDES], ids=lambda g: g.name)
def test_every_relative_link_leads_to_a_file(page):
    broken = []
    for match in _LINK.finditer(page.read_text(encoding="utf-8")):
        target = match["target"].split("#")[0]
        if not target or re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue
        if not (page.parent / target).exists():
            broken.append(match["target"])
    assert not broken, f"{page.relative_to(REPO)} links to files that do not exist: {broken}"


def test_the_hub_test_runs_the_documented_hub_configuration():
    """The grader's hub test runs a frozen copy of ``docs/examples/jupyterhub_config.py``: the same code, line for
    line (comments aside, and the ``get_config()`` line the test writes itself)."""
    def code(path: Path) -> list[str]:
        lines = [line.split("  #", 1)[0].rstrip() for line in path.read_text(encoding="utf-8").splitlines()]
        return [line for line in lines if line and not line.lstrip().startswith("#") and not line.startswith("c = get_config()")]

    documented = code(REPO / "docs" / "examples" / "jupyterhub_config.py")
    assert "c.JupyterHub.cleanup_servers = False" in documented
    assert documented == code(REPO / "grader" / "tests" / "fixtures" / "hub" / "jupyterhub_config.py")


def test_the_students_image_leaves_out_every_tool_it_names_and_the_validate_button():
    """The hosting guide's students' image: each nbgrader extension it disables exists in the installed nbgrader (a
    renamed one would be left on silently), Validate among them, and it installs the single-user server."""
    import nbgrader

    guide = (REPO / "docs" / "hosting.md").read_text(encoding="utf-8")
    step = guide[guide.index("3. **The students' image**"):guide.index("4. **What the exchange trusts.**")]
    lab_plugins = set(re.findall(r"labextension disable --level=sys_prefix (@jupyter/nbgrader:[\w-]+)", step))
    server_extensions = set(re.findall(r"server extension disable --sys-prefix (nbgrader\.server_extensions\.\w+)", step))
    assert "@jupyter/nbgrader:validate-assignment" in lab_plugins and "jupyterhub==" in step
    assert "nbgrader.server_extensions.validate_assignment" in server_extensions
    bundled = "\n".join(path.read_text(encoding="utf-8", errors="replace") for path in
                        (Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "@jupyter" / "nbgrader").rglob("*.js"))
    assert {plugin for plugin in lab_plugins if f'"{plugin}"' not in bundled} == set()
    package = Path(nbgrader.__file__).parent
    assert {name for name in server_extensions
            if not (package / "server_extensions" / name.rsplit(".", 1)[1]).is_dir()} == set()
