"""Every public name of ``biasamp`` has a complete numpydoc docstring.

Functions: Parameters, Returns, Raises, Notes, References and Examples (with
doctest lines, which ``--doctest-modules`` runs); classes: Parameters or
Attributes, Notes, References and Examples. The formula is in the docstring
(``:math:`` or ``.. math::``), and no docstring cites a file outside the
repository. Parsed with numpydoc's own parser, the one the documentation uses.
"""

from __future__ import annotations

import inspect
import re

import pytest

import biasamp

docscrape = pytest.importorskip("numpydoc.docscrape")  # the [dev] and [docs] extras

# Allow-list, to be emptied by their owners, who are rewriting these in parallel
# branches: biasamp.stats.bootstrap / BootstrapResult and biasamp.counts (the
# lead), biasamp.predictability (the predictability branch).
OWNED_ELSEWHERE: set = set()
# Names that compute no number of their own, so have no formula: the audit and
# its report gather the other metrics; a warning class is a warning.
NO_FORMULA = {"audit", "AuditConfig", "Report", "UndefinedPairWarning", "BiasampWarning"}

FUNCTION_SECTIONS = ("Parameters", "Returns", "Raises", "Notes", "References", "Examples")
CLASS_SECTIONS = ("Notes", "References", "Examples")

PUBLIC = sorted(name for name in biasamp.__all__
                if inspect.isfunction(getattr(biasamp, name)) or inspect.isclass(getattr(biasamp, name)))


def _doc(obj):
    if inspect.isclass(obj):
        return docscrape.ClassDoc(obj, config={"show_class_members": False})
    return docscrape.FunctionDoc(obj)


def test_the_public_api_is_all_there():
    assert len(PUBLIC) >= 50 and "multi_bias_amp" in PUBLIC and "FairnessResult" in PUBLIC


@pytest.mark.parametrize("name", [n for n in PUBLIC if n not in OWNED_ELSEWHERE])
def test_full_numpydoc_set(name):
    obj = getattr(biasamp, name)
    doc = _doc(obj)
    text = inspect.getdoc(obj)
    assert doc["Summary"], f"{name}: no summary line"
    if inspect.isclass(obj):
        assert doc["Parameters"] or doc["Attributes"], f"{name}: no Parameters or Attributes section"
        sections = CLASS_SECTIONS
    else:
        sections = FUNCTION_SECTIONS
        documented = {n.strip() for p in doc["Parameters"] for n in p.name.split(",")}
        documented = {n.lstrip("*") for n in documented}
        params = {p.name for p in inspect.signature(obj).parameters.values()}
        assert params <= documented, f"{name}: parameters not documented: {sorted(params - documented)}"
    for section in sections:
        assert doc[section], f"{name}: no {section} section"
    examples = "\n".join(doc["Examples"])
    assert ">>>" in examples, f"{name}: the Examples section has no doctest"
    if name not in NO_FORMULA:
        assert ":math:" in text or ".. math::" in text, f"{name}: no formula"


@pytest.mark.parametrize("name", [n for n in PUBLIC if n not in OWNED_ELSEWHERE])
def test_no_reference_outside_the_repository(name):
    text = inspect.getdoc(getattr(biasamp, name)) or ""
    assert not re.search(r"\bSPEC\b|papers/|STYLE\.md", text), name
