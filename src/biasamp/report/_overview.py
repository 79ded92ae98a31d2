"""The overview of a :class:`~biasamp.report.Report`: the headline readings side by side, and why they disagree.

:func:`report_overview` (``Report.overview()``) reads, per protected
attribute, every headline row of the report's summary (never recomputing a
metric), marks the readings that point in a direction of amplification
(*amplified* +1, *reduced* −1; every other reading, known or not, is
non-directional), sets ``disagree`` when one reads *amplified* and another
*reduced*, and explains the readings with facts the sections keep:

* what each metric compares, from its section's declaration
  (``register_section(scales=...)``: a difference of rates, a ratio of rates
  or predictability);
* which predictions it reads, from its family's declaration
  (``StatisticSpec.needs``) or its direction (``A->T``: the task's, ``T->A``:
  the attribute's);
* each group's rate of the task in the labels and in the predictions (the
  :data:`~biasamp.report._registry.BASE_RATES` table a section keeps), for
  the base-rate shift, and the largest difference and ratio between groups;
* the per-pair tables (``attr``, ``task``, ``p_true``, ``p_pred``, ``delta``,
  ``contribution`` and the interval of ``delta``), for the pairs that
  contribute most.

No family is named here: everything is found by the declarations and by the
columns of the tables. The renderers of each format call the ``*_lines`` /
``overview_html`` functions below once, at the top of the report.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from biasamp._core.results import EXACT_ZERO, signed
from biasamp._engine.options import DEFAULT_LEVEL

__all__ = ["AttributeOverview", "Overview", "report_overview"]

#: the readings that point in a direction of amplification, and their sign; any other reading (a disparity,
#: a distortion, "no evidence", "mixed", a reading added later) is not a direction
DIRECTIONS = {"amplified": 1, "reduced": -1}

#: columns of :attr:`AttributeOverview.headlines` (and of :meth:`Overview.to_frame`, which adds ``attribute``)
HEADLINE_COLUMNS = ("section", "metric", "direction", "value", "ci_low", "ci_high", "reading", "sign", "scale",
                    "reads")

#: columns of a per-pair table the overview can put into words
_PAIR_COLUMNS = {"attr", "task", "p_true", "p_pred", "delta", "contribution"}

#: pairs put into words per attribute
TOP_PAIRS = 3

#: groups listed by name in the base-rate sentence (the largest first)
_MAX_GROUPS = 6

#: a change of a rate, a gap or a ratio smaller than this is "about the same"
_SAME = 1e-3

_READS = {"task_pred": "the task predictions", "attr_pred": "the attribute predictions"}


def _wrapped(text: str, width: int, indent: str = "", rest: str | None = None) -> list[str]:
    """``text`` as lines of at most ``width`` characters, broken between words (never inside a number)."""
    import textwrap

    rest = indent + "  " if rest is None else rest
    return textwrap.wrap(text, max(20, width), initial_indent=indent, subsequent_indent=rest,
                         break_on_hyphens=False, break_long_words=True) or [indent.rstrip()]


# --------------------------------------------------------------------------- #
# the result
# --------------------------------------------------------------------------- #
@dataclass(eq=False)
class AttributeOverview:
    """The overview of one protected attribute.

    Attributes
    ----------
    attribute : str
    headlines : pandas.DataFrame
        One row per headline number of the attribute's sections, columns
        ``section, metric, direction, value, ci_low, ci_high, reading`` (as
        in the summary), ``sign`` (+1 *amplified*, −1 *reduced*, 0 any other
        reading), ``scale`` (``"difference"``, ``"ratio"``,
        ``"predictability"`` or ``""``) and ``reads`` (the predictions the
        metric reads: ``"task_pred"``, ``"attr_pred"``, ``"both"`` or ``""``).
    disagree : bool
        One headline reads *amplified* and another *reduced*.
    explanation : list of str
        Sentences computed from the report's data: the readings, the
        base-rate shift, differences against ratios, predictability, and the
        predictions each reading is about.
    pairs : list of str
        The (attribute, task) pairs that contribute most, in words, with
        their intervals.
    base_rates : pandas.DataFrame
        Per headline class: the overall rate in the labels and in the
        predictions, the largest difference and ratio between the groups'
        rates in each (empty without a base-rate table).
    """

    attribute: str
    headlines: pd.DataFrame
    disagree: bool
    explanation: list = field(default_factory=list)
    pairs: list = field(default_factory=list)
    base_rates: pd.DataFrame = field(default_factory=pd.DataFrame)

    def to_dict(self) -> dict:
        """A JSON-ready dict (NaN as None)."""
        return {"attribute": self.attribute, "disagree": bool(self.disagree),
                "explanation": list(self.explanation), "pairs": list(self.pairs),
                "headlines": _records(self.headlines), "base_rates": _records(self.base_rates)}


@dataclass(eq=False)
class Overview:
    """What :meth:`Report.overview <biasamp.Report.overview>` returns: one overview per attribute.

    Attributes
    ----------
    attributes : list of AttributeOverview
        In the report's order (one for the report of one attribute).
    level : float
        Confidence level of the intervals quoted.

    Examples
    --------
    >>> import biasamp, biasamp.datasets
    >>> demo = biasamp.datasets.make_amplification_demo()  # the model amplifies A->T, its gender errors weaken T->A
    >>> ov = biasamp.audit(demo.attr, demo.task, attr_pred=demo.attr_pred, task_pred=demo.task_pred,
    ...                    sections=["directional"], n_boot=50, progress=False).overview()
    >>> ov.disagree, ov.to_frame()[["direction", "reading", "reads"]].values.tolist()
    (True, [['A->T', 'amplified', 'task_pred'], ['T->A', 'reduced', 'attr_pred']])
    """

    attributes: list
    level: float = DEFAULT_LEVEL

    @property
    def disagree(self) -> bool:
        """Whether the readings disagree for some attribute."""
        return any(a.disagree for a in self.attributes)

    def to_frame(self) -> pd.DataFrame:
        """Every headline row of every attribute: ``attribute``, ``disagree`` and the columns of ``headlines``."""
        parts = [a.headlines.assign(attribute=a.attribute, disagree=a.disagree) for a in self.attributes]
        columns = ["attribute", "disagree", *HEADLINE_COLUMNS]
        if not parts:
            return pd.DataFrame(columns=columns)
        return pd.concat(parts, ignore_index=True)[columns]

    def to_dict(self) -> dict:
        """A JSON-ready dict: ``disagree``, ``level`` and ``attributes`` (each attribute's ``to_dict()``)."""
        return {"disagree": self.disagree, "level": float(self.level),
                "attributes": [a.to_dict() for a in self.attributes]}

    def text(self, width: int = 100) -> str:
        """The overview as plain text, lines of at most ``width`` characters (names not yet escaped)."""
        return "\n".join(overview_lines(self, width=width))

    def __str__(self) -> str:
        from biasamp._core.escape import terminal

        return "\n".join(terminal(line) for line in overview_lines(self))

    __repr__ = __str__


def _records(frame: pd.DataFrame) -> list:
    from biasamp._core.results import to_builtin

    out = []
    for row in frame.to_dict(orient="records"):
        out.append({str(k): (None if isinstance(v, float) and not math.isfinite(v) else to_builtin(v))
                    for k, v in row.items()})
    return out


# --------------------------------------------------------------------------- #
# reading the report
# --------------------------------------------------------------------------- #
def _base_key(key: str) -> str:
    """A section's builder key: ``"fairness[race]"`` -> ``"fairness"`` (a merged report's keys carry the attribute)."""
    return key.split("[", 1)[0]


def _scale(key: str, metric: str) -> str:
    from biasamp.report._registry import section_builder

    builder = section_builder(_base_key(key))
    return "" if builder is None else str(builder.scales.get(metric, ""))


def _reads(key: str, metric: str, direction: str) -> str:
    """The predictions a headline reads: its family's declaration (``StatisticSpec.needs``), else its direction."""
    from biasamp._families import REGISTRY

    base = _base_key(key)
    for family in REGISTRY:
        if family.section != base:
            continue
        for spec in family.statistics:
            if (spec.label or spec.name) == metric and spec.direction == direction:
                needs = [r for r in spec.needs if r in _READS]
                return needs[0] if len(needs) == 1 else "both" if needs else ""
    head = direction.split("->", 1)[0].strip() if "->" in direction else ""
    return "task_pred" if head in ("A", "G") else "attr_pred" if head in ("T", "M") else ""


def _headlines(report: Any) -> pd.DataFrame:
    table = report.table
    rows = []
    for r in table.itertuples(index=False):
        reading = str(r.reading)
        rows.append({"section": r.section, "metric": str(r.metric), "direction": str(r.direction),
                     "value": r.value, "ci_low": r.ci_low, "ci_high": r.ci_high, "reading": reading,
                     "sign": DIRECTIONS.get(reading, 0), "scale": _scale(r.section, str(r.metric)),
                     "reads": _reads(r.section, str(r.metric), str(r.direction))})
    frame = pd.DataFrame(rows, columns=list(HEADLINE_COLUMNS))
    for c in ("value", "ci_low", "ci_high"):
        frame[c] = pd.to_numeric(frame[c], errors="coerce").astype(np.float64)
    frame["sign"] = frame["sign"].astype(np.int64)
    return frame


def _table_with(report: Any, name: str | None = None, columns: Iterable[str] = ()) -> list[tuple[Any, str, Any]]:
    """``(section, table name, table)`` of the computed sections' tables named ``name`` / having ``columns``."""
    wanted = set(columns)
    return [(s, t_name, t) for s in report.sections if s.status == "ok" for t_name, t in s.tables.items()
            if (name is None or t_name == name) and wanted <= set(map(str, t.columns))]


# --------------------------------------------------------------------------- #
# words
# --------------------------------------------------------------------------- #
def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _points(x: float) -> str:
    return f"{100 * abs(x):.1f}"


def _name(row: Any) -> str:
    """``BiasAmp-> A->T (-0.0106)``: a headline by its metric, direction and value."""
    label = f"{row.metric} {row.direction}".strip()
    return f"{label} ({signed(row.value, 4)})" if np.isfinite(row.value) else label


def _listing(rows: Iterable[Any]) -> str:
    return ", ".join(_name(r) for r in rows)


def _change(before: float, after: float, grows: str = "grows", shrinks: str = "shrinks") -> str:
    if not (np.isfinite(before) and np.isfinite(after)) or abs(after - before) < _SAME * max(1.0, abs(before)):
        return "stays about the same"
    return grows if after > before else shrinks


# --------------------------------------------------------------------------- #
# the facts: base rates, gaps and ratios
# --------------------------------------------------------------------------- #
def _rate_facts(rates: pd.DataFrame) -> pd.DataFrame:
    """Per headline class: overall rates and the largest difference and ratio between the groups (labels, preds)."""
    columns = ["class", "rate_true", "rate_pred", "gap_true", "gap_pred", "ratio_true", "ratio_pred", "groups"]
    if rates is None or not len(rates):
        return pd.DataFrame(columns=columns)
    r = rates.copy()
    r["headline"] = r["headline"].map(_truthy)
    r["small"] = r["small"].map(_truthy)
    r = r[r["headline"]]
    out = []
    for cls, part in r.groupby(r["class"].map(str), sort=False):
        n = pd.to_numeric(part["n"], errors="coerce").to_numpy(dtype=np.float64)
        true = pd.to_numeric(part["rate_true"], errors="coerce").to_numpy(dtype=np.float64)
        pred = pd.to_numeric(part["rate_pred"], errors="coerce").to_numpy(dtype=np.float64)
        ok = np.isfinite(n) & (n > 0) & np.isfinite(true) & np.isfinite(pred)
        if not ok.any():
            continue
        w = n[ok] / n[ok].sum()
        kept = ok & ~part["small"].to_numpy(dtype=bool)
        if kept.sum() < 2:  # fewer than two groups of the headline: compare every group
            kept = ok
        gaps = [float(np.ptp(v[kept])) if kept.sum() >= 2 else np.nan for v in (true, pred)]
        ratios = []
        for v in (true, pred):
            lo, hi = (float(v[kept].min()), float(v[kept].max())) if kept.sum() >= 2 else (np.nan, np.nan)
            ratios.append(hi / lo if lo > 0 else (np.inf if hi > 0 else np.nan))
        out.append({"class": cls, "rate_true": float(w @ true[ok]), "rate_pred": float(w @ pred[ok]),
                    "gap_true": gaps[0], "gap_pred": gaps[1], "ratio_true": ratios[0], "ratio_pred": ratios[1],
                    "groups": int(kept.sum())})
    return pd.DataFrame(out, columns=columns)


def _truthy(v: Any) -> bool:
    if isinstance(v, str):
        return v.strip().lower() in ("true", "1", "yes")
    return bool(v) if v is not None and not (isinstance(v, float) and math.isnan(v)) else False


def _rates_sentence(rates: pd.DataFrame, facts: pd.DataFrame, task: str) -> list[str]:
    """The base-rate shift, in words."""
    if not len(facts):
        return []
    if len(facts) == 1:
        f = facts.iloc[0]
        what = f"{task} = {f['class']}" if task else f"class {f['class']}"
        shift = f["rate_pred"] - f["rate_true"]
        how = ("as often as the labels have it" if abs(shift) < _SAME else
               f"{'less' if shift < 0 else 'more'} often than the labels have it "
               f"({_pct(f['rate_pred'])} of the test rows vs {_pct(f['rate_true'])}: "
               f"{'fewer' if shift < 0 else 'more'} positives overall)")
        part = rates[rates["class"].map(str) == f["class"]]
        part = part.iloc[np.argsort(-pd.to_numeric(part["n"], errors="coerce").to_numpy(dtype=np.float64),
                                    kind="stable")]
        groups = [f"{g} {_pct(p)} vs {_pct(t)}" + (f" (small group, n={float(n):,.0f})" if _truthy(small) else "")
                  for g, p, t, n, small in zip(part["group"], part["rate_pred"], part["rate_true"], part["n"],
                                               part["small"])
                  if np.isfinite(float(p)) and np.isfinite(float(t))]
        more = f", and {len(groups) - _MAX_GROUPS} more groups" if len(groups) > _MAX_GROUPS else ""
        per_group = f"; per group, predictions vs labels: {', '.join(groups[:_MAX_GROUPS])}{more}" if groups else ""
        return [f"The model predicts {what} {how}{per_group}."]
    shift = (facts["rate_pred"] - facts["rate_true"]).to_numpy(dtype=np.float64)
    order = np.argsort(-np.abs(shift), kind="stable")[:3]
    n_fewer, n_more = int((shift < -_SAME).sum()), int((shift > _SAME).sum())
    largest = ", ".join(f"{facts['class'].iloc[i]} {_pct(facts['rate_pred'].iloc[i])} vs "
                        f"{_pct(facts['rate_true'].iloc[i])}" for i in order)
    counts = [f"{k} {word} often" for k, word in ((n_more, "more"), (n_fewer, "less")) if k]
    same = len(facts) - n_more - n_fewer
    counts += [f"{same} about as often"] if same else []
    return [f"Of the {len(facts)} task classes, the model predicts {' and '.join(counts)} than the labels have "
            f"them (largest shifts, predictions vs labels: {largest})."]


def _log(x: float) -> float:
    return math.log(x) if np.isfinite(x) and x > 0 else float("nan")


def _ratio_text(x: float) -> str:
    return f"{x:.2f}" if np.isfinite(x) else "undefined (a group's rate is 0)"


def _scales_sentences(facts: pd.DataFrame, head: pd.DataFrame, disagree: bool) -> list[str]:
    """Differences against ratios between the groups, and which readings follow which."""
    out: list[str] = []
    if len(facts) != 1 or facts["groups"].iloc[0] < 2:
        if len(facts) > 1:
            d = np.sign(np.round((facts["gap_pred"] - facts["gap_true"]).to_numpy(dtype=np.float64) / _SAME))
            q = np.sign(np.round((facts["ratio_pred"].map(_log) - facts["ratio_true"].map(_log))
                                 .to_numpy(np.float64) / _SAME))
            opposite = int(((d * q) < 0).sum())
            out.append(f"Between the groups, the difference of the rates grows for {int((d > 0).sum())} of the "
                       f"{len(facts)} classes and their ratio for {int((q > 0).sum())}; in {opposite} they move in "
                       "opposite directions, where a measure of differences and a measure of ratios can disagree.")
        return out
    f = {c: float(facts[c].iloc[0]) for c in ("rate_true", "rate_pred", "gap_true", "gap_pred", "ratio_true",
                                               "ratio_pred")}
    d_move = _change(f["gap_true"], f["gap_pred"])
    lt, lp = _log(f["ratio_true"]), _log(f["ratio_pred"])
    q_move = _change(lt, lp)
    link = "while" if {d_move, q_move} == {"grows", "shrinks"} else "and"
    out.append(f"Between the groups, the difference of the rates {d_move} ({_points(f['gap_true'])} -> "
               f"{_points(f['gap_pred'])} points, max - min) {link} their ratio {q_move} "
               f"({_ratio_text(f['ratio_true'])} -> {_ratio_text(f['ratio_pred'])}, max / min"
               + (f"; log-ratio {lt:.2f} -> {lp:.2f}" if np.isfinite(lt) and np.isfinite(lp) else "") + ").")
    if not disagree:
        return out
    d_sign = {"grows": 1, "shrinks": -1}.get(d_move, 0)
    q_sign = {"grows": 1, "shrinks": -1}.get(q_move, 0)
    differences = head[(head["scale"] == "difference") & (head["sign"] == d_sign) & (head["sign"] != 0)]
    ratios = head[(head["scale"] == "ratio") & (head["sign"] == q_sign) & (head["sign"] != 0)]
    if d_sign * q_sign < 0 and len(differences) and len(ratios):
        fewer = f["rate_pred"] < f["rate_true"] - _SAME
        more = f["rate_pred"] > f["rate_true"] + _SAME
        cause: str = ("With fewer positives predicted, " if fewer else "With more positives predicted, " if more
                 else "")
        out.append(f"{cause}measures of differences follow the difference ({_listing(differences.itertuples())}: "
                   f"{'reduced' if d_sign < 0 else 'amplified'}) and measures of ratios follow the ratio "
                   f"({_listing(ratios.itertuples())}: {'amplified' if q_sign > 0 else 'reduced'}): this is why "
                   "they disagree, and each is right on its own scale.")
    return out


def _predictability_sentence(head: pd.DataFrame, disagree: bool) -> list[str]:
    pred = head[(head["scale"] == "predictability") & (head["sign"] != 0)]
    if not disagree or not len(pred):
        return []
    # measures of differences on the same predictions that read the other way
    other = head[(head["scale"] == "difference") & (head["sign"] != 0) & (head["reads"] != "")]
    against = other[other["sign"].isin(-pred["sign"].unique()) & other["reads"].isin(pred["reads"].unique())]
    if not len(against):
        return []
    return [f"Predictability measures ({_listing(pred.itertuples())}) ask how well an attacker predicts one "
            "variable from the other, not how far the groups' rates are apart: they grow when the predictions "
            "follow the attribute more consistently than the labels do, even while the gaps shrink, so they can "
            f"read the other way from measures of differences on the same predictions "
            f"({_listing(against.itertuples())})."]


def _small_sentence(head: pd.DataFrame, disagree: bool) -> list[str]:
    """Readings of effects too small to matter much, where they take part in a disagreement."""
    from biasamp.report._sections import SMALL_EFFECT

    small = head[(head["sign"] != 0) & (head["value"].abs() < SMALL_EFFECT)]
    if not disagree or not len(small):
        return []
    one = len(small) == 1
    return [f"{_listing(small.itertuples())} {'is a small effect' if one else 'are small effects'} (|value| < "
            f"{SMALL_EFFECT:g}): {'its interval excludes' if one else 'their intervals exclude'} 0, but the "
            "disagreement may matter less than the numbers of the other measures."]


def _sides_sentence(head: pd.DataFrame) -> list[str]:
    """Opposite readings on different predictions: two findings, not a contradiction."""
    directed = head[head["sign"] != 0]
    sides = [s for s in ("task_pred", "attr_pred", "both") if (directed["reads"] == s).any()]
    if len(sides) < 2 or not ((directed["sign"] > 0).any() and (directed["sign"] < 0).any()):
        return []
    words = {**_READS, "both": "both predictions"}
    parts = []
    for side in sides:
        rows = directed[directed["reads"] == side]
        parts.append(f"on {words[side]}, " + ", ".join(f"{_name(r)} {r.reading}" for r in rows.itertuples()))
    one_way = all(directed[directed["reads"] == s]["sign"].nunique() == 1 for s in ("task_pred", "attr_pred"))
    tail = (" The measures of one kind of predictions agree with each other: the model can amplify in one "
            "direction and weaken the other, two findings rather than a contradiction" if one_way else "")
    return [f"By the predictions they read: {'; '.join(parts)}.{tail}" + ("." if tail else "")]


def _read(rows: pd.DataFrame) -> str:
    return "reads" if len(rows) == 1 else "read"


def _readings_sentence(head: pd.DataFrame) -> str:
    up, down = head[head["sign"] > 0], head[head["sign"] < 0]
    if len(up) and len(down):
        return (f"The readings disagree: {_listing(up.itertuples())} {_read(up)} amplified, "
                f"{_listing(down.itertuples())} {_read(down)} reduced.")
    if len(up) or len(down):
        rows, word = (up, "amplified") if len(up) else (down, "reduced")
        return (f"The readings agree: {_listing(rows.itertuples())} {_read(rows)} {word}, and none reads the "
                "opposite.")
    return "No measure reads amplified or reduced (no interval of a signed amplification excludes 0)."


# --------------------------------------------------------------------------- #
# pairs
# --------------------------------------------------------------------------- #
def _pair_sentences(report: Any, classes: set, level: float, task: str, where: str) -> list[str]:
    """The pairs contributing most to the amplification headlines, in words, with their intervals; ``where``: the
    labels the association is read from (the training data, else the test labels)."""
    found = []
    for _section, name, table in _table_with(report, columns=_PAIR_COLUMNS):
        direction = name.rsplit(" ", 1)[-1] if "->" in name else ""
        head = direction.split("->", 1)[0]
        if head not in ("A", "T"):
            continue
        t = table.copy()
        for flag in ("small", "undefined"):
            if flag in t.columns:
                t = t[~t[flag].map(_truthy)]
        contribution = pd.to_numeric(t["contribution"], errors="coerce").to_numpy(dtype=np.float64)
        t = t[np.isfinite(contribution) & (np.abs(contribution) > EXACT_ZERO)]
        given, predicted = ("attr", "task") if head == "A" else ("task", "attr")
        if t[predicted].map(str).nunique() == 2:  # two classes: each pair has a mirror image; keep one
            y = pd.to_numeric(t["y"], errors="coerce").fillna(0).to_numpy() if "y" in t.columns else np.zeros(len(t))
            if predicted == "task":  # the headline class (without a base-rate table: the last, 1 of 0/1)
                preferred = t["task"].map(str).isin(classes or {max(t["task"].map(str))}).to_numpy()
            else:  # the group the task leans to
                preferred = y > 0
            t = t.iloc[np.argsort(~preferred, kind="stable")].drop_duplicates(given).sort_index()
        for row in t.to_dict(orient="records"):
            found.append((abs(float(row["contribution"])), direction, given, predicted, row))
    found.sort(key=lambda item: -item[0])
    return [_pair_sentence(direction, given, predicted, row, level, task, where)
            for _, direction, given, predicted, row in found[:TOP_PAIRS]]


def _pair_sentence(direction: str, given: str, predicted: str, row: dict, level: float, task: str,
                   where: str = "the training data") -> str:
    """One pair in words; ``task``: the task's name (a single-label task's class reads ``income = 1``); ``where``:
    the labels whose association the pair's sign reads."""
    delta = float(row["delta"])
    label = f"{task} = {row['task']}" if task else str(row["task"])
    among = f"among {row['attr']}" if given == "attr" else f"among rows labelled {label}"
    text = (f"{row['attr']} x {label} ({direction}): {among}, the model predicts "
            f"{label if predicted == 'task' else row['attr']} "
            f"{_points(delta)} points {'less' if delta < 0 else 'more'} often than the labels have it "
            f"({_pct(float(row['p_pred']))} vs {_pct(float(row['p_true']))}")
    lo, hi = row.get("ci_low"), row.get("ci_high")
    if lo is not None and hi is not None and np.isfinite(float(lo)) and np.isfinite(float(hi)):
        text += f"; {round(100 * level)}% CI of the difference {100 * float(lo):+.1f} to {100 * float(hi):+.1f} points"
    contribution = float(row["contribution"])
    text += f"), {'strengthening' if contribution > 0 else 'weakening'} the association in {where}"
    return text + f" (contribution {signed(contribution, 4)})."


# --------------------------------------------------------------------------- #
# assembling
# --------------------------------------------------------------------------- #
def _attribute_overview(report: Any, attribute: str, level: float) -> AttributeOverview:
    from biasamp.report._registry import BASE_RATES

    head = _headlines(report)
    disagree = bool((head["sign"] > 0).any() and (head["sign"] < 0).any())
    found = _table_with(report, BASE_RATES, ("class", "group", "n", "rate_true", "rate_pred"))
    rates = found[0][2] if found else pd.DataFrame(columns=["class", "group", "n", "small", "headline",
                                                            "rate_true", "rate_pred"])
    if "headline" not in rates.columns:
        rates = rates.assign(headline=True)
    if "small" not in rates.columns:
        rates = rates.assign(small=False)
    facts = _rate_facts(rates)
    task = str(report.inputs.get("task") or "") if report.inputs.get("task_kind") != "multi-label" else ""
    explanation = [_readings_sentence(head)]
    explanation += _rates_sentence(rates, facts, task)
    explanation += _scales_sentences(facts, head, disagree)
    explanation += _predictability_sentence(head, disagree)
    explanation += _small_sentence(head, disagree)
    explanation += _sides_sentence(head)
    classes = set(facts["class"].map(str)) if len(facts) else set()
    where = "the training data" if report.inputs.get("n_train") else "the test labels"
    pairs = _pair_sentences(report, classes, level, task, where)
    return AttributeOverview(attribute, head, disagree, explanation, pairs, facts)


def report_overview(report: Any) -> Overview:
    """The :class:`Overview` of a report: one :class:`AttributeOverview` per protected attribute."""
    from biasamp.report._attributes import attribute_names, split_by_attribute

    level = float(report.options.get("level", DEFAULT_LEVEL))
    if attribute_names(report):
        parts = [_attribute_overview(sub, name, level) for name, sub in split_by_attribute(report).items()]
    else:
        parts = [_attribute_overview(report, str(report.inputs.get("attribute", "attr")), level)]
    return Overview(parts, level)


# --------------------------------------------------------------------------- #
# rendering (each format escapes the text it is given)
# --------------------------------------------------------------------------- #
def _why(a: AttributeOverview) -> list[str]:
    """The explanation below the readings it starts with (which the renderers list above it)."""
    return a.explanation[1:] or a.explanation


def _verdict(a: AttributeOverview) -> str:
    if a.disagree:
        return "the measures DISAGREE"
    return "the measures agree" if (a.headlines["sign"] != 0).any() else "no measure reads a direction"


def _others(a: AttributeOverview) -> str:
    """The non-directional readings, grouped: ``disparity: DP, DI; no evidence: DPA T->A``."""
    rest = a.headlines[(a.headlines["sign"] == 0) & (a.headlines["reading"] != "")]
    groups: dict[str, list[str]] = {}
    for r in rest.itertuples():
        groups.setdefault(r.reading, []).append(f"{r.metric} {r.direction}".strip())
    return "; ".join(f"{reading}: {', '.join(names)}" for reading, names in groups.items())


def _reading_lines(a: AttributeOverview) -> list[tuple[str, str]]:
    """``(label, text)`` of the readings: amplified, reduced, the others."""
    out = []
    for word, sign in DIRECTIONS.items():
        rows = a.headlines[a.headlines["sign"] == sign]
        if len(rows):
            out.append((word, ", ".join(_name(r) + (f" [{r.scale}]" if r.scale else "") for r in rows.itertuples())))
    others = _others(a)
    if others:
        out.append(("other readings", others))
    return out


def overview_lines(ov: Overview, *, width: int = 100, brief: bool = False) -> list[str]:
    """The overview as plain-text lines (the terminal summary; the caller escapes them).

    ``brief``: the verdict of each attribute only (a report's ``repr``, a glance in a REPL).
    """

    lines: list[str] = []
    for a in ov.attributes:
        name = f" of {a.attribute}" if len(ov.attributes) > 1 else ""
        if brief:
            lines.append(f"OVERVIEW{name}: {_verdict(a)} (print(report.overview()) says why)")
            continue
        lines.append(f"OVERVIEW{name}: {_verdict(a)} (docs/report.md, 'Overview')")
        for label, text in _reading_lines(a):
            lines += _wrapped(f"{label}: {text}", width, indent="  ", rest="    ")
        lines.append("  why:")
        for sentence in _why(a):
            lines += _wrapped(f"- {sentence}", width, indent="    ", rest="      ")
        if a.pairs:
            lines.append("  pairs contributing most:")
            for p in a.pairs:
                lines += _wrapped(f"- {p}", width, indent="    ", rest="      ")
    return lines


def overview_markdown(ov: Overview, heading: str, md: Any) -> list[str]:
    """The overview as Markdown lines under ``heading`` (``md`` escapes text from the data)."""
    lines = [f"{heading} Overview", ""]
    for a in ov.attributes:
        name = f"{md(a.attribute)}: " if len(ov.attributes) > 1 else ""
        lines += [f"**{name}{_verdict(a)}.**", ""]
        lines += [f"- *{label}*: {md(text)}" for label, text in _reading_lines(a)] + [""]
        lines += ["Why:", ""] + [f"- {md(sentence)}" for sentence in _why(a)] + [""]
        if a.pairs:
            lines += ["Pairs contributing most:", ""] + [f"- {md(p)}" for p in a.pairs] + [""]
    return lines


def overview_html(ov: Overview, escape: Any) -> str:
    """The overview as an HTML ``<section id="overview">`` (``escape`` escapes text from the data)."""
    parts = ['<section id="overview" class="overview"><h2>Overview</h2>']
    for a in ov.attributes:
        if len(ov.attributes) > 1:
            parts.append(f"<h3>{escape(a.attribute)}</h3>")
        cls = "disagree" if a.disagree else "agree"
        parts.append(f'<p class="{cls}"><strong>{escape(_verdict(a))}</strong></p>')
        parts.append("<ul>" + "".join(f"<li><i>{escape(label)}</i>: {escape(text)}</li>"
                                      for label, text in _reading_lines(a)) + "</ul>")
        parts.append('<p>Why:</p><ul class="why">' + "".join(f"<li>{escape(x)}</li>" for x in _why(a)) + "</ul>")
        if a.pairs:
            parts.append("<p>Pairs contributing most:</p><ul>" + "".join(f"<li>{escape(p)}</li>" for p in a.pairs)
                         + "</ul>")
    parts.append("</section>")
    return "".join(parts)


def overview_latex(ov: Overview, tex: Any) -> list[str]:
    """A short version for the LaTeX table's notes: where the measures disagree, the explanation's sentences."""
    out = []
    for a in ov.attributes:
        if not a.disagree:
            continue
        name = f" ({tex(a.attribute)})" if len(ov.attributes) > 1 else ""
        out.append(rf"{{\footnotesize \emph{{The measures disagree{name}.}} {tex(' '.join(_why(a)))}\par}}")
    return out
