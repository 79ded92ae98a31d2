"""Several protected attributes in one audit, and intersectional groups.

:func:`biasamp.report.audit` hands over to :func:`audit_attributes` when its
``attr`` is a mapping ``{name: labels}`` or ``intersect=`` is given. Each
attribute (and each intersection, a derived attribute whose groups are the
combinations of its components' values, labelled ``"race=Black, sex=Male"``)
is audited on its own by :func:`~biasamp.report.audit` with the same task,
predictions and options; :func:`merge_reports` then joins the reports into one
:class:`~biasamp.report.Report` whose section keys and titles carry the
attribute: key ``"fairness[race]"``, title ``"Group fairness — race"``.

The merged report's ``inputs`` hold what the audits share, ``"attribute"`` (the
attribute names, comma-separated), ``"attribute_classes"`` (every group of the
attributes that are not intersections, as ``"name=value"``) and
``"attributes"``: per attribute, the entries of its own audit's ``inputs``
that differ between attributes (always its classes), its section keys, and
for an intersection ``"intersection_of"``. The entries of ``options`` that
differ between the audits (a reference group per attribute) are under
``options["attributes"]``, per attribute, instead of at the top.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from biasamp.report._config import AuditConfig
from biasamp.report._errors import NothingComputedError

__all__ = ["attribute_names", "audit_attributes", "intersection_labels", "merge_reports", "section_key",
           "split_by_attribute", "summary_by_attribute"]

#: Joins the names of an intersection's components: ``"race x sex"``.
INTERSECTION_SEP = " x "


def section_key(key: str, name: str) -> str:
    """The key of section ``key`` of attribute ``name`` in a merged report: ``"fairness[race]"``."""
    return f"{key}[{name}]"


def _section_title(title: str, name: str) -> str:
    return f"{title} \u2014 {name}"


# --------------------------------------------------------------------------- #
# intersections
# --------------------------------------------------------------------------- #
def _fmt_label(v: Any) -> str:
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))  # 1.0 (a CSV column with a gap reads as float) -> "1"
    return str(v)


def _match(value: str, labels: Any) -> Any:
    """The label among ``labels`` written ``value`` (``1`` for "1" in a numeric column), else None."""
    for u in pd.unique(pd.Series(labels).dropna()):
        if _fmt_label(u) == value or str(u) == value:
            return u.item() if isinstance(u, np.generic) else u
    if value.lower() in ("true", "false"):  # a boolean column read as 0/1
        return _match(str(int(value.lower() == "true")), labels)
    return None


_NEEDS_QUOTES = re.compile(r'[,="\\]|^\s|\s$|^$')


def _component(v: Any) -> str:
    """A component value in an intersection label: as written, or quoted (JSON) when it holds ``,`` ``=``
    ``"`` or ``\\`` or edge spaces, so that different (race, sex) pairs never make the same label."""
    text = _fmt_label(v)
    return json.dumps(text, ensure_ascii=False) if _NEEDS_QUOTES.search(text) else text


def _as_series(x: Any, name: str) -> pd.Series:
    if isinstance(x, pd.Series):
        return x.reset_index(drop=True)
    from biasamp._core.labels import _from_tensor

    arr = np.asarray(_from_tensor(x), dtype=object)
    if arr.ndim != 1:
        raise ValueError(f"attr[{name!r}] must be 1-D labels (one group per row) to form an intersection, "
                         f"got {arr.ndim}-D")
    return pd.Series(arr)


def intersection_labels(columns: Mapping[str, Any], *, missing: str = "raise") -> pd.Series:
    """The intersectional group of every row: ``"race=Black, sex=Male"``.

    Parameters
    ----------
    columns : mapping of str -> labels of shape (n,)
        The component attributes, in the order their names appear in the labels.
    missing : {"raise", "drop", "group"}, default "raise"
        ``"group"``: a missing component value is written ``missing``
        (``"race=missing, sex=Male"``) and a real value ``missing`` is
        quoted (``race="missing"``); otherwise a row with a missing
        component has a missing label (NaN), left to ``audit(missing=...)``.

    Notes
    -----
    A value holding ``,``, ``=``, ``"`` or ``\\`` (or starting or ending with
    a space, or empty) is written as a JSON string (``race="x, sex=y"``), so
    that two different combinations never share a label.

    Returns
    -------
    pandas.Series
        Object dtype, named after the components joined by ``" x "``.

    Examples
    --------
    >>> intersection_labels({"race": ["A", "B"], "sex": ["F", "M"]}).tolist()
    ['race=A, sex=F', 'race=B, sex=M']
    >>> intersection_labels({"race": ["x, sex=y", "x"], "sex": ["z", "y, sex=z"]}).tolist()
    ['race="x, sex=y", sex=z', 'race=x, sex="y, sex=z"']
    """
    parts = {name: _as_series(col, name) for name, col in columns.items()}
    lengths = {len(s) for s in parts.values()}
    if len(lengths) > 1:
        raise ValueError(f"the attributes of an intersection have different lengths: "
                         f"{ {k: len(s) for k, s in parts.items()} }")
    n = lengths.pop() if lengths else 0
    label = pd.Series([""] * n, dtype=object)
    gap = np.zeros(n, dtype=bool)
    for i, (name, s) in enumerate(parts.items()):
        isna = s.isna().to_numpy()
        text = s.map(_component, na_action="ignore").astype(object)
        if missing == "group":
            text[~isna & (text == "missing").to_numpy()] = '"missing"'  # a real group named missing stays apart
            text[isna] = "missing"
        else:
            gap |= isna
            text[isna] = ""
        label = label + ("" if i == 0 else ", ") + f"{name}=" + text.astype(str)
    out = label.astype(object)  # holds NaN for a combination with a gap
    out[gap] = np.nan
    return out.rename(INTERSECTION_SEP.join(parts))


def _hard_classes(pred: Any, truth: Any) -> bool:
    """Whether ``pred`` holds hard class predictions among the classes of ``truth`` (not scores)."""
    p, t = pd.Series(np.asarray(pred, dtype=object)).dropna(), pd.Series(np.asarray(truth, dtype=object)).dropna()
    return set(p.map(_fmt_label)) <= set(t.map(_fmt_label))


# --------------------------------------------------------------------------- #
# audit
# --------------------------------------------------------------------------- #
def _check_intersect(intersect: Any, names: Sequence[str]) -> list[tuple[str, ...]]:
    if intersect is None:
        return []
    if isinstance(intersect, str):
        raise TypeError(f"intersect must be a list of attribute-name tuples such as [('race', 'sex')], "
                        f"got the string {intersect!r}")
    combos = list(intersect)
    if combos and all(isinstance(c, str) for c in combos):  # intersect=("race", "sex"): one intersection
        combos = [tuple(combos)]
    out = []
    for combo in combos:
        if isinstance(combo, str) or not isinstance(combo, Sequence):
            raise TypeError(f"each entry of intersect must be a tuple of attribute names, got {combo!r}")
        combo = tuple(combo)
        unknown = [c for c in combo if c not in names]
        if unknown:
            raise ValueError(f"intersect names {unknown} that are not attributes; attributes: {list(names)}")
        if len(combo) < 2 or len(set(combo)) != len(combo):
            raise ValueError(f"an intersection needs two or more different attributes, got {combo}")
        if combo not in out:
            out.append(combo)
    return out


def _per_attribute(value: Any, what: str, names: Sequence[str]) -> dict:
    """``attr_pred`` & co. as a dict name -> labels or None (a mapping with some of ``names``, or None)."""
    if value is None:
        return dict.fromkeys(names)
    if not isinstance(value, Mapping):
        raise TypeError(f"with several attributes (attr given as a mapping), {what} must be a mapping with "
                        f"the same keys ({list(names)}) or None, got {type(value).__name__}")
    unknown = [k for k in value if k not in names]
    if unknown:
        raise ValueError(f"{what} has keys {unknown} that are not attributes; attributes: {list(names)}")
    return {k: value.get(k) for k in names}


def audit_attributes(attr: Any, task: Any, *, audit: Callable[..., Any], intersect: Any = None, attr_pred: Any = None,
                     attr_train: Any = None, task_train: Any = None, attr_val_scores: Any = None,
                     config: Any = None, **data: Any) -> Any:
    """:func:`~biasamp.report.audit` of several protected attributes and their intersections, in one report.

    Parameters
    ----------
    attr : mapping of str -> labels of shape (n,)
        The protected attributes by name (e.g. ``{"race": ..., "sex": ...}``).
    task
        As in :func:`~biasamp.report.audit`, shared by every attribute.
    audit : callable
        The audit of one attribute, :func:`~biasamp.report.audit` (passed in by
        it: this module never imports the report's model, so the two form no
        import circle).
    intersect : list of tuples of str, optional
        Intersections to audit as one more attribute each, e.g.
        ``[("race", "sex")]`` (one tuple alone is one intersection).
    attr_pred, attr_train, attr_val_scores : mapping of str -> labels, optional
        Per attribute (keys among those of ``attr``; an absent key is None).
        An intersection gets the combined predictions / training labels when
        every component has them (predictions only when they are hard
        classes, not scores).
    config : AuditConfig, optional
        The options, as in :func:`~biasamp.report.audit` (``names["attr"]``
        is replaced by each attribute's name). ``reference_group`` may also be
        a mapping attribute name -> group (``"largest"`` for an attribute not
        in it).
    **data
        The other label arguments of :func:`~biasamp.report.audit`
        (``task_pred``, ``task_val_scores``, ``sample_weight``), shared by
        every attribute.

    Returns
    -------
    Report
        The sections of every attribute, keyed ``"<section>[<attribute>]"``.
    """
    config = AuditConfig.of(config, {}, "audit")

    if not isinstance(attr, Mapping):
        raise TypeError("intersect= needs attr as a mapping of attribute name -> labels, e.g. "
                        f"attr={{'race': race, 'sex': sex}}; got {type(attr).__name__} (a 2-D attr is one "
                        "multi-label attribute)")
    if not attr:
        raise ValueError("attr is an empty mapping: give at least one attribute")
    attr = dict(attr)
    bad = [k for k in attr if not isinstance(k, str) or not k]
    if bad:
        raise TypeError(f"attribute names must be non-empty strings, got {bad}")
    for name, labels in attr.items():
        if labels is None:
            raise ValueError(f"attr[{name!r}] is None")
        if np.ndim(labels) != 1:
            raise ValueError(f"attr[{name!r}] must be 1-D labels (one group per row), got {np.ndim(labels)}-D; "
                             "a 2-D multi-label attribute is audited on its own: audit(attr=matrix, ...)")
    combos = _check_intersect(intersect, list(attr))
    preds = _per_attribute(attr_pred, "attr_pred", list(attr))
    trains = _per_attribute(attr_train, "attr_train", list(attr))
    vals = _per_attribute(attr_val_scores, "attr_val_scores", list(attr))
    if task_train is not None:
        lacking = [k for k, v in trains.items() if v is None]
        if lacking:
            raise ValueError(f"task_train is given but attr_train has no labels for {lacking}")
    missing = config.missing
    for combo in combos:
        name = INTERSECTION_SEP.join(combo)
        if name in attr:
            raise ValueError(f"the intersection {name!r} has the name of an attribute; rename that attribute")
        attr[name] = intersection_labels({c: attr[c] for c in combo}, missing=missing)
        both = all(preds[c] is not None and _hard_classes(preds[c], attr[c]) for c in combo)
        preds[name] = intersection_labels({c: preds[c] for c in combo}, missing=missing) if both else None
        trains[name] = (intersection_labels({c: trains[c] for c in combo}, missing=missing)
                        if all(trains[c] is not None for c in combo) else None)
        vals[name] = None  # scores of a combination are not defined
    reference = config.reference_group
    if isinstance(reference, Mapping):
        unknown = [k for k in reference if k not in attr]
        if unknown:
            raise ValueError(f"reference_group has keys {unknown} that are not attributes; attributes: {list(attr)}")
    reports = {}
    for name, labels in attr.items():
        ref = reference.get(name, "largest") if isinstance(reference, Mapping) else reference
        try:
            reports[name] = audit(labels, task, attr_pred=preds[name], attr_train=trains[name],
                                  task_train=task_train, attr_val_scores=vals[name], **data,
                                  config=config.replace(names=dict(config.names or {}, attr=str(name)),
                                                        reference_group=ref))
        except NothingComputedError as exc:  # this attribute's sections failed: said if no other's ran
            reports[name] = exc.report
        except ValueError as exc:
            if type(exc) is ValueError and "attr" in str(exc):  # which attribute an input error is about
                raise ValueError(f"attribute {name!r}: {exc}") from exc
            raise
    return merge_reports(reports, title=config.title, intersections={INTERSECTION_SEP.join(c): list(c) for c in combos})


# --------------------------------------------------------------------------- #
# merging and splitting
# --------------------------------------------------------------------------- #
def _split_common(dicts: Mapping[str, dict]) -> tuple[dict, dict]:
    """``(common, differing)``: the entries equal in every dict, and per name the others."""
    first = next(iter(dicts.values()))
    keys = dict.fromkeys(k for d in dicts.values() for k in d)
    common = {k: first[k] for k in keys
              if all(k in d for d in dicts.values()) and all(_same(d[k], first[k]) for d in dicts.values())}
    differing = {name: {k: v for k, v in d.items() if k not in common} for name, d in dicts.items()}
    return common, differing


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b) if not isinstance(a, (np.ndarray, pd.Series, pd.DataFrame)) else False
    except (TypeError, ValueError):
        return False


def merge_reports(reports: Mapping[str, Any], *, title: str | None = None,
                  intersections: Mapping[str, Sequence[str]] | None = None) -> Any:
    """One :class:`~biasamp.report.Report` from the reports of several attributes (name -> report).

    Section keys become ``"<key>[<name>]"`` and titles ``"<title> — <name>"``,
    attribute by attribute in the order given; see the module docstring for
    ``inputs`` and ``options``.
    """
    if not reports:
        raise ValueError("no report to merge")
    intersections = dict(intersections or {})
    first = next(iter(reports.values()))
    sections = []
    for name, rep in reports.items():
        sections += [dataclasses.replace(s, key=section_key(s.key, name), title=_section_title(s.title, name))
                     for s in rep.sections]
    common, differing = _split_common({name: dict(rep.inputs) for name, rep in reports.items()})
    per_attr = {}
    for name, rep in reports.items():
        own = {k: v for k, v in differing[name].items() if k != "attribute"}
        own["attribute_classes"] = list(rep.inputs.get("attribute_classes", []))
        own["sections"] = [section_key(s.key, name) for s in rep.sections]
        if name in intersections:
            own["intersection_of"] = list(intersections[name])
        per_attr[name] = own
    inputs = dict(first.inputs)
    for k in differing[next(iter(reports))]:  # keys that differ: the per-attribute values hold them
        if k not in ("attribute", "attribute_classes"):
            inputs.pop(k, None)
    inputs.update(common)
    inputs["attribute"] = ", ".join(reports)
    inputs["attribute_classes"] = [f"{name}={c}" for name in reports if name not in intersections
                                   for c in per_attr[name]["attribute_classes"]]
    inputs["attributes"] = per_attr
    opt_common, opt_differing = _split_common({name: dict(rep.options) for name, rep in reports.items()})
    options = dict(opt_common)
    if any(opt_differing.values()):  # e.g. a reference group per attribute: no shared value to show
        options["attributes"] = opt_differing
    return type(first)(sections, inputs, options, title=first.title if title is None else title, version=first.version,
                  source=first.source)


def attribute_names(report: Any) -> list[str]:
    """The attributes of a merged report (``[]`` for the report of a single attribute)."""
    attrs = report.inputs.get("attributes")
    return list(attrs) if isinstance(attrs, dict) else []


def split_by_attribute(report: Any) -> dict:
    """A merged report as one :class:`~biasamp.report.Report` per attribute (name -> report).

    Each holds that attribute's sections (keys and titles as in the merged
    report) and its own ``inputs`` (the shared entries and its own), titled
    ``"<title> — protected attribute <name>"``; a report of a single
    attribute comes back as ``{attribute: report}``.
    """
    names = attribute_names(report)
    if not names:
        return {str(report.inputs.get("attribute", "attr")): report}
    out = {}
    for name in names:
        own = dict(report.inputs["attributes"][name])
        keys = own.pop("sections", None) or [s.key for s in report.sections if s.key.endswith(f"[{name}]")]
        inputs = {k: v for k, v in report.inputs.items() if k != "attributes"}
        inputs.update(own)
        inputs["attribute"] = name
        options = {k: v for k, v in report.options.items() if k != "attributes"}
        options.update((report.options.get("attributes") or {}).get(name, {}))
        out[name] = type(report)([s for s in report.sections if s.key in keys], inputs, options,
                           title=_section_title(report.title, f"protected attribute {name}"),
                           version=report.version, source=report.source)
    return out


def summary_by_attribute(report: Any, *, width: int = 100) -> str:
    """:meth:`Report.summary <biasamp.report.Report.summary>`, one block per attribute of a merged report.

    The terminal table has no section column: with several attributes each
    one's rows (and notes) come under its own heading, so that two DP rows
    are never side by side without their attribute.
    """
    parts = split_by_attribute(report)
    if len(parts) == 1 and not attribute_names(report):
        return report.summary(width=width)
    rule = "=" * min(width, 100)
    return "\n\n".join(f"{rule}\n{sub.summary(width=width)}" for sub in parts.values())
