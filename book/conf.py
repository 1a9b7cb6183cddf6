"""Sphinx configuration of the course's website (Jupyter Book 1.x style: Sphinx, myst-nb, sphinx-book-theme).

Build it with ``scripts/book.sh`` (into ``book/_build/html``). The pages are the notebooks of ``notebooks/`` and
``release/`` with their stored outputs (nothing is executed); the title and the hub's address come from
``term.toml``; MathJax 3 comes from npm (``package.json``) and is served with the site. See ``_ext/course_book.py``
and docs/instructors.md, "The course's website".
"""

import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

BOOK = Path(__file__).resolve().parent
#: The course whose notebooks and term file the book is built from: the folder that holds book/.
COURSE = BOOK.parent
sys.path.insert(0, str(BOOK / "_ext"))

with open(COURSE / "term.toml", "rb") as handle:
    TERM = tomllib.load(handle)

project = TERM["course"].get("title") or TERM["course"]["id"]
author = TERM["course"].get("instructor") or project
copyright = author
html_title = project
html_short_title = project
language = "en"

extensions = ["myst_nb", "course_book"]
course_root = str(COURSE)
course_hub = dict(TERM.get("hub", {}))
#: The order of the assignments on the site: the term's (a page of release/ whose assignment the term lacks goes last).
course_assignments = [assignment["name"] for assignment in TERM.get("assignments", [])]
course_mathjax_dir = str(COURSE / "node_modules" / "mathjax" / "es5")

root_doc = "index"
exclude_patterns = ["_build", "_ext", "**/.ipynb_checkpoints", "README.md"]
suppress_warnings = ["myst.header"]  # a lecture may skip a heading level; the reader's outline is its own

# The notebooks are shown with the outputs stored in them: the book never runs a kernel.
nb_execution_mode = "off"
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath", "substitution", "colon_fence"]
myst_heading_anchors = 3
# JupyterLab renders $$...$$ inside a paragraph as display mathematics; so must the book.
myst_dmath_double_inline = True
myst_substitutions = {
    "course_title": project,
    "course_term": TERM["course"].get("term", ""),
}

# MathJax 3 from npm, copied into _static/mathjax by course_book (never a CDN).
mathjax_path = "mathjax/tex-chtml.js"
mathjax3_config = {"options": {}}

html_theme = "sphinx_book_theme"
html_static_path = ["_static"]
html_css_files = ["course.css"]
html_copy_source = True
html_last_updated_fmt = None
html_theme_options = {
    "home_page_in_toc": True,
    "use_download_button": True,
    "use_fullscreen_button": False,
    "show_toc_level": 2,
    "navigation_with_keys": False,
}
# The theme's templates that the course overrides (for accessibility; each file says why).
templates_path = ["_templates"]
