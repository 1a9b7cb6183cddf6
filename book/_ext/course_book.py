"""The course's website: what Sphinx, myst-nb and sphinx-book-theme do not do by themselves.

- **The pages follow the repository.** Before Sphinx looks for documents, every lecture of ``notebooks/`` and every
  student notebook of ``release/`` is copied into the book's source folder under the same path
  (``book/notebooks/``, ``book/release/``, git-ignored), so a page's name is the notebook's path in the course
  repository, the table of contents (globs in ``index.md``) lists whatever is there, and a notebook removed from
  the course leaves the book at the next build. The copies keep their times, so a rebuild reads only what changed.
- **A launch link on every notebook's page** that opens that notebook in the course's JupyterHub through
  nbgitpuller, from ``term.toml``'s ``[hub] url`` and ``repository``; while either is empty the page says that the
  link appears once the instructor sets them. The repository is the **students'** one: the student bundle
  (``perceptron-course bundle``) committed to git, never the course repository, whose ``source/`` holds the
  solutions (nbgitpuller copies the whole repository into each student's home). So a link opens the notebook
  where the bundle puts it: ``notebooks/<lecture>.ipynb``, ``assignments/<assignment>/<notebook>.ipynb``.
  The ``course-notebooks`` directive lists the lectures or the assignments with their pages and launch links
  (on the landing page). The assignments come in the term's order (``course_assignments``, from ``term.toml``), in
  that list and in the menu; the lectures in their files' order.
- **Cross-references between lectures**: the lectures name each other "notebook 3" or "lecture 3"; each such
  mention (outside code, mathematics and headings) links to the lecture whose file name starts with that number.
- **MathJax served with the site**: npm's ``mathjax`` (version 3, ``package.json``) is copied into the build's
  ``_static/mathjax/``; no page loads anything from a CDN. Notebook outputs that link a CDN stylesheet (matplotlib's
  animation links Font Awesome 4) lose that link: the theme ships Font Awesome itself.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import ClassVar
from urllib.parse import quote, urlencode

from docutils import nodes
from docutils.parsers.rst import Directive, directives
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

#: The folders of the course repository whose notebooks are pages, with the glob of their notebooks.
MIRRORED = {"notebooks": "notebooks/*.ipynb", "release": "release/*/*.ipynb"}
#: Where the student bundle (and so the students' repository) puts the notebooks of each mirrored folder.
BUNDLE_FOLDERS = {"notebooks": "notebooks", "release": "assignments"}
#: The MathJax 3 entry point the pages load (relative to ``_static``), and what of npm's package is served.
MATHJAX_ENTRY = "mathjax/tex-chtml.js"
_MATHJAX_UNUSED_BUNDLES = re.compile(r"^(?!tex-chtml\.js$).*\.js$")
#: "notebook 3", "Lecture 3": a lecture named by its number (no leading zero: "lecture 000" is a deck).
_MENTION = re.compile(r"\b(?:[Nn]otebook|[Ll]ecture)\s+([1-9][0-9]?)\b(?!\.[0-9])")
#: A stylesheet linked from a CDN inside a notebook's HTML output.
_CDN_STYLESHEET = re.compile(r"<link\b[^>]*\bhref=[\"'](?:https?:)?//[^\"']*[\"'][^>]*>\s*", re.IGNORECASE)
#: Where no text or code may turn into a link.
_NO_LINKS = (nodes.FixedTextElement, nodes.literal, nodes.reference, nodes.title, nodes.math, nodes.raw,
             addnodes.pending_xref, nodes.image, nodes.target)


# ------------------------------------------------------------------------------------------- the pages


def mirror_notebooks(course_root: Path, book_root: Path) -> list[str]:
    """Copy the course's notebooks into the book under their repository paths; returns those paths.

    A copy is rewritten only when its source changed (so Sphinx rereads only that page), and a copy
    whose notebook is gone from the course is removed.
    """
    wanted = {}
    for folder, pattern in MIRRORED.items():
        for notebook in sorted(course_root.glob(pattern)):
            if ".ipynb_checkpoints" not in notebook.parts:
                wanted[notebook.relative_to(course_root).as_posix()] = notebook
    for folder in MIRRORED:
        for copy in sorted((book_root / folder).rglob("*"), reverse=True):
            relative = copy.relative_to(book_root).as_posix()
            if copy.is_file() and relative not in wanted:
                copy.unlink()
            elif copy.is_dir() and not any(copy.iterdir()):
                copy.rmdir()
    for relative, notebook in wanted.items():
        copy = book_root / relative
        if not copy.is_file() or copy.stat().st_mtime_ns != notebook.stat().st_mtime_ns \
                or copy.stat().st_size != notebook.stat().st_size:
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(notebook, copy)
    return sorted(wanted)


def launch_url(hub_url: str, repository: str, path: str) -> str:
    """The nbgitpuller link that clones ``repository`` into the student's home and opens ``path`` in JupyterLab.

    nbgitpuller clones into a folder named after the repository (its last path segment, without ``.git``), from
    the repository's default branch, and on later clicks merges the new commits into the student's copy.
    """
    folder = repository.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
    query = {"repo": repository, "urlpath": f"lab/tree/{folder}/{path}"}
    return f"{hub_url.rstrip('/')}/hub/user-redirect/git-pull?{urlencode(query, quote_via=quote, safe='/')}"


def _hub(app: Sphinx) -> tuple[str, str]:
    hub = app.config.course_hub or {}
    return str(hub.get("url", "")).strip(), str(hub.get("repository", "")).strip()


def _notebook_path(app: Sphinx, docname: str) -> str | None:
    """The repository path of the notebook page ``docname`` (``notebooks/01_geometry.ipynb``), else ``None``."""
    if docname.split("/", 1)[0] not in MIRRORED:
        return None
    source = Path(app.env.doc2path(docname))
    return source.relative_to(app.srcdir).as_posix() if source.suffix == ".ipynb" else None


def student_path(path: str) -> str:
    """Where the notebook at ``path`` in the course repository is in the students' repository (the bundle)."""
    folder, _, rest = path.partition("/")
    return f"{BUNDLE_FOLDERS[folder]}/{rest}"


def _launch_paragraph(app: Sphinx, path: str, what: str) -> nodes.paragraph:
    hub_url, repository = _hub(app)
    paragraph = nodes.paragraph(classes=["course-launch"])
    if hub_url and repository:
        paragraph += nodes.Text(f"Work on this {what} in the course's JupyterHub: ")
        paragraph += nodes.reference("", "open it on the hub", classes=["course-launch-link"],
                                     refuri=launch_url(hub_url, repository, student_path(path)))
        paragraph += nodes.Text(" (the course's student files are put in your home, or brought up to date, and the "
                                "notebook opens).")
    else:
        paragraph += nodes.Text(f"A link that opens this {what} in the course's JupyterHub appears here once the "
                                f"instructor sets the hub's address and the course repository in the term file "
                                f"(term.toml, [hub] url and repository).")
    return paragraph


def _what(path: str) -> str:
    return "assignment" if path.startswith("release/") else "lecture"


def add_launch_link(app: Sphinx, doctree: nodes.document) -> None:
    """Put the launch link under the title of every notebook page."""
    path = _notebook_path(app, app.env.docname)
    if path is None:
        return
    section = next(iter(doctree.findall(nodes.section)), None)
    paragraph = _launch_paragraph(app, path, _what(path))
    if section is None:
        doctree.insert(0, paragraph)
    else:
        title = next((i for i, child in enumerate(section.children) if isinstance(child, nodes.title)), -1)
        section.insert(title + 1, paragraph)


# ------------------------------------------------------------------------------------------- cross-references


def lecture_numbers(app: Sphinx) -> dict[int, str]:
    """Lecture number -> docname, from the file names of ``notebooks/`` (``03_worked_example`` is 3); a number
    that two lectures share is left out (it names neither for sure)."""
    found: dict[int, list[str]] = {}
    for docname in sorted(app.env.found_docs):
        folder, _, stem = docname.partition("/")
        match = re.match(r"([0-9]+)_", stem)
        if folder == "notebooks" and "/" not in stem and match:
            found.setdefault(int(match[1]), []).append(docname)
    return {number: names[0] for number, names in found.items() if len(names) == 1}


def link_lecture_mentions(app: Sphinx, doctree: nodes.document) -> None:
    """Turn "notebook N" / "lecture N" in the text of a notebook page into a link to lecture N."""
    if _notebook_path(app, app.env.docname) is None:
        return
    lectures = lecture_numbers(app)
    for text in list(doctree.findall(nodes.Text)):
        parent = text.parent
        if parent is None or any(isinstance(node, _NO_LINKS) for node in _ancestors(text)):
            continue
        pieces, last = [], 0
        for match in _MENTION.finditer(text.astext()):
            target = lectures.get(int(match[1]))
            if target is None or target == app.env.docname:
                continue
            pieces.append(nodes.Text(text.astext()[last:match.start()]))
            reference = addnodes.pending_xref("", refdomain="std", reftype="doc", reftarget="/" + target,
                                              refexplicit=True, refdoc=app.env.docname)
            reference += nodes.inline(match[0], match[0])
            pieces.append(reference)
            last = match.end()
        if pieces:
            pieces.append(nodes.Text(text.astext()[last:]))
            parent.replace(text, [piece for piece in pieces if not (isinstance(piece, nodes.Text) and not piece)])


def _ancestors(node: nodes.Node):
    while node is not None:
        yield node
        node = node.parent


def drop_cdn_stylesheets(app: Sphinx, doctree: nodes.document) -> None:
    """Remove ``<link href="https://cdn...">`` from the raw HTML of notebook outputs."""
    for raw in list(doctree.findall(nodes.raw)):
        if "html" in raw.get("format", "").split() and _CDN_STYLESHEET.search(raw.astext()):
            raw.replace(raw.children[0], nodes.Text(_CDN_STYLESHEET.sub("", raw.astext())))


# ------------------------------------------------------------------------------------------- the landing page


def in_term_order(app: Sphinx, docnames: list[str]) -> list[str]:
    """``docnames`` sorted as the site lists them: pages of ``release/`` in the term's order of their assignments
    (``course_assignments``; one the term lacks after them, by name), every other page by name."""
    order = {name: index for index, name in enumerate(app.config.course_assignments)}

    def key(docname: str) -> tuple[int, str]:
        folder, _, rest = docname.partition("/")
        assignment = rest.split("/")[0] if folder == "release" else ""
        return order.get(assignment, len(order)), docname

    return sorted(docnames, key=key)


def assignments_in_term_order(app: Sphinx, doctree: nodes.document) -> None:
    """A toctree of the assignments (``release/*/*``, which Sphinx sorts by name) takes the term's order: the menu's."""
    for toctree in doctree.findall(addnodes.toctree):
        if toctree["includefiles"] and all(name.startswith("release/") for name in toctree["includefiles"]):
            toctree["includefiles"] = in_term_order(app, toctree["includefiles"])
            position = {name: index for index, name in enumerate(toctree["includefiles"])}
            toctree["entries"] = sorted(toctree["entries"], key=lambda entry: position.get(entry[1], len(position)))


class CourseNotebooks(Directive):
    """``course-notebooks`` with argument ``notebooks`` or ``release``: a list of those pages, each with its launch
    link (or the sentence saying when it appears)."""

    required_arguments = 1
    option_spec: ClassVar[dict] = {"class": directives.class_option}

    def run(self):
        folder = self.arguments[0]
        if folder not in MIRRORED:
            raise self.error(f"course-notebooks takes one of {', '.join(MIRRORED)}; got {folder!r}")
        env = self.state.document.settings.env
        app = env.app
        hub_url, repository = _hub(app)
        listing = nodes.bullet_list(classes=["course-notebooks"])
        for docname in in_term_order(app, [name for name in env.found_docs if name.startswith(folder + "/")]):
            path = _notebook_path(app, docname)
            if path is None:
                continue
            env.note_dependency(env.doc2path(docname))
            item = nodes.list_item()
            paragraph = nodes.paragraph()
            reference = addnodes.pending_xref("", refdomain="std", reftype="doc", reftarget="/" + docname,
                                              refexplicit=False, refdoc=env.docname)
            reference += nodes.inline(docname, docname)
            paragraph += reference
            if folder == "release":
                paragraph += nodes.Text(f" ({student_path(path)})")
            if hub_url and repository:
                paragraph += nodes.Text(" · ")
                paragraph += nodes.reference("", f"open {Path(path).name} on the hub",
                                             refuri=launch_url(hub_url, repository, student_path(path)),
                                             classes=["course-launch-link"])
            item += paragraph
            listing += item
        result = [listing]
        if not (hub_url and repository):
            result.append(nodes.paragraph(text="Links that open each notebook in the course's JupyterHub appear here "
                                               "once the instructor sets the hub's address and the course repository "
                                               "in the term file (term.toml, [hub] url and repository).",
                                          classes=["course-launch"]))
        return result


def every_page_lists_the_notebooks(app: Sphinx, env, added, changed, removed) -> list[str]:
    """The landing page lists every notebook: reread it when any notebook page comes or goes."""
    return [env.config.root_doc] if added or removed else []


# ------------------------------------------------------------------------------------------- MathJax


def copy_mathjax(app: Sphinx, exception: Exception | None) -> None:
    """Copy npm's MathJax 3 (its TeX-to-CHTML bundle, fonts and the components it loads) into ``_static/mathjax``."""
    if exception is not None or app.builder.format != "html":
        return
    source = Path(app.config.course_mathjax_dir)
    if not (source / Path(MATHJAX_ENTRY).name).is_file():
        raise ExtensionError(f"MathJax is missing ({source / Path(MATHJAX_ENTRY).name}): run `npm install` at the "
                             f"repository root (package.json lists mathjax; scripts/setup.sh runs it)")
    target = Path(app.outdir) / "_static" / "mathjax"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target, ignore=lambda folder, names: [
        name for name in names if Path(folder) == source and _MATHJAX_UNUSED_BUNDLES.match(name)] + [
        name for name in names if Path(folder) == source / "output" and name == "svg"])


# ------------------------------------------------------------------------------------------- setup


def mirror(app: Sphinx) -> None:
    mirror_notebooks(Path(app.config.course_root), Path(app.srcdir))


def setup(app: Sphinx) -> dict:
    app.add_config_value("course_root", "", "env", types=frozenset({str}))
    app.add_config_value("course_hub", {}, "env", types=frozenset({dict}))
    app.add_config_value("course_assignments", [], "env", types=frozenset({list}))
    app.add_config_value("course_mathjax_dir", "", "html", types=frozenset({str}))
    app.connect("builder-inited", mirror)
    app.connect("env-get-outdated", every_page_lists_the_notebooks)
    # before Sphinx's own toctree collector (priority 500) records the toctree's order
    app.connect("doctree-read", assignments_in_term_order, priority=400)
    app.connect("doctree-read", add_launch_link)
    app.connect("doctree-read", link_lecture_mentions)
    app.connect("doctree-read", drop_cdn_stylesheets)
    app.connect("build-finished", copy_mathjax)
    app.add_directive("course-notebooks", CourseNotebooks)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
