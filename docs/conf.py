"""Sphinx configuration of Tide's documentation site (scripts/docs.sh builds it).

The Markdown files in docs/ are read as they are by MyST, so they stay readable on GitHub; the
Python reference is generated from tide's docstrings (_ext/tide_api.py writes api/ at each build),
the C ABI and C++ SDK reference from the headers' comments through Doxygen and Breathe.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "_ext"))

project = "Tide"
author = "the Tide authors"
copyright = "the Tide authors"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "breathe",
    "tide_api",
    "root_docs",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_ext", "Thumbs.db", ".DS_Store"]

# MyST: Markdown as GitHub renders it; `#section` links inside and across files.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence", "deflist"]

# Python reference: signatures as written, members in source order, Fluid-style "Args:" read by
# napoleon.
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": False}
autosummary_generate = False
napoleon_google_docstring = True
napoleon_numpy_docstring = False
add_module_names = True

# C ABI and C++ SDK: Doxygen's XML, made by scripts/docs.sh into TIDE_DOXYGEN_XML.
breathe_projects = {"tide": os.environ.get("TIDE_DOXYGEN_XML", "../build/docs/doxygen/xml")}
breathe_default_project = "tide"
breathe_domain_by_extension = {"h": "c", "hpp": "cpp"}
breathe_default_members = ("members",)

html_theme = "furo"
html_title = "Tide"
html_static_path = []
