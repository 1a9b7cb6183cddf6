"""Reading pages of the course: the lectures and the students' assignments as accessible HTML.

``perceptron-course pages`` writes one page per notebook of ``notebooks/`` and ``release/`` with
nbconvert's lab template and the course's colours (``page_templates/perceptron_pages``), so that
a student reading without JupyterLab gets the same figures, alternative texts and mathematics.
Figures carry their text because the notebooks display them with ``plotting.show``.
"""

from __future__ import annotations

from pathlib import Path

#: nbconvert's template for the pages (in ``page_templates/``, beside this module).
TEMPLATES = Path(__file__).with_name("page_templates")
TEMPLATE_NAME = "perceptron_pages"
#: What nbconvert writes for an image without alternative text: never on a page of the course.
PLACEHOLDER_ALT = "No description has been provided for this image"


def course_notebooks(course_root: Path) -> list[Path]:
    """The notebooks a student reads: every lecture of ``notebooks/`` and every notebook of ``release/``."""
    root = Path(course_root)
    return sorted(root.glob("notebooks/*.ipynb")) + sorted(root.glob("release/*/*.ipynb"))


def page_name(course_root: Path, notebook: Path) -> Path:
    """Where the page of ``notebook`` goes, relative to the output folder: its path with ``.html``."""
    return Path(notebook).relative_to(course_root).with_suffix(".html")


def render_page(notebook: Path) -> str:
    """The HTML page of one notebook (its stored outputs; nothing is executed)."""
    import nbformat
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name=TEMPLATE_NAME, extra_template_basedirs=[str(TEMPLATES)])
    page, _ = exporter.from_notebook_node(nbformat.read(notebook, as_version=4),
                                          resources={"metadata": {"name": Path(notebook).stem}})
    if PLACEHOLDER_ALT in page:
        raise ValueError(f"{notebook}: an image has no alternative text (display figures with plotting.show)")
    return page


def build_pages(course_root: Path, out: Path) -> list[Path]:
    """Write the page of every notebook of ``course_notebooks`` under ``out``; returns the pages written."""
    written = []
    for notebook in course_notebooks(course_root):
        target = Path(out) / page_name(course_root, notebook)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render_page(notebook), encoding="utf-8")
        written.append(target)
    return written
