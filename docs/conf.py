"""Sphinx configuration of the biasamp documentation.

Build it with ``pip install -e ".[docs]" && sphinx-build -W --keep-going -n -b html docs docs/_build/html``.

Why Sphinx + numpydoc (and not MkDocs + mkdocstrings): every docstring of biasamp is
numpydoc, with ``.. math::`` formulas, reference lists and doctest examples, which numpydoc
renders natively; Sphinx's Python domain checks every cross-reference (``-n``, nitpicky) and
turns a broken one into a failed build (``-W``); the Markdown guides are read by myst-parser
unchanged, so they stay readable on any Markdown viewer too.
"""

from __future__ import annotations

import biasamp

project = "biasamp"
author = "biasamp developers"
copyright = "biasamp developers"  # noqa: A001 - Sphinx's name
release = version = biasamp.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]

# ---- API reference -------------------------------------------------------- #
autodoc_typehints = "none"  # the numpydoc "Parameters" sections give the types
autodoc_member_order = "bysource"
numpydoc_show_class_members = False  # members are listed explicitly in docs/api/*.rst
numpydoc_xref_param_type = False
numpydoc_attributes_as_param_list = True

# ---- Markdown guides -------------------------------------------------------- #
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3

# ---- cross-references ------------------------------------------------------- #
# Every reference into biasamp must resolve (-n). The build uses no network, so
# names of other projects (numpy, pandas, scikit-learn, torch, ...) cannot be
# resolved without fetching their inventories (the standard library's neither):
# they are not checked.
nitpicky = True
nitpick_ignore_regex = [
    (r"py:.*", r"(numpy|np|pandas|pd|scipy|sklearn|torch|dask|distributed|matplotlib|joblib|click|pyarrow"
                r"|pathlib|os|typing|collections|json|io)(\..*)?"),
    (r"py:.*", r"(int|float|str|bool|dict|list|tuple|callable|None|object|Any|sequence|iterable|mapping)"),
]

# ---- HTML ------------------------------------------------------------------- #
html_theme = "alabaster"
html_title = f"biasamp {release}"
html_theme_options = {
    "description": "Bias and bias amplification metrics for machine-learning classifiers",
    "fixed_sidebar": True,
}


# ---- references to a re-exported name through its defining module --------- #
def _public_path(app, env, node, contnode):
    """Resolve ``biasamp.<module>.<name>`` to ``biasamp.<name>`` when that is the same object.

    The API reference documents each public object once, under its public path
    (``biasamp.bootstrap``); docstrings may name the defining module
    (``biasamp.stats.bootstrap``).
    """
    import importlib

    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "")
    parts = target.split(".")
    if len(parts) < 3 or parts[0] != "biasamp":
        return None
    module_name, name = ".".join(parts[:-1]), parts[-1]
    try:
        same = getattr(importlib.import_module(module_name), name) is getattr(biasamp, name)
    except (ImportError, AttributeError):
        return None
    if not same:
        return None
    domain = env.get_domain("py")
    return domain.resolve_xref(env, node["refdoc"], app.builder, node["reftype"], f"biasamp.{name}", node,
                               contnode)


def setup(app):
    app.connect("missing-reference", _public_path)
