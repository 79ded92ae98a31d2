"""The per-group view of the fairness family: rates per group, a reference group, disparity ratios.

What a practitioner coming from fairlearn or aequitas reads first: each group's
selection rate, TPR and FPR (and any scikit-learn metric passed in), their
differences and ratios between groups or to a reference group, and whether each
ratio is within a tolerance (by default the four-fifths rule, 0.8 to 1.25).
Built from the same :class:`~biasamp.ConfusionCounts` as the seven metrics.

Vocabulary follows fairlearn's ``MetricFrame`` (``by_group``, ``overall``,
``difference``, ``ratio``, ``group_min``, ``group_max``) and aequitas's
disparities (a reference group, a ratio per group and a pass/fail reading).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from biasamp._core.results import ResultMixin, fmt

__all__ = ["GroupMetrics", "check_tolerance", "RATES"]

#: The group rates behind the seven metrics, and which direction is "better" for ``reference_group="best"``.
RATES = {"selection_rate": "max", "tpr": "max", "fpr": "min"}

_DIFF_METHODS = ("between_groups", "to_overall", "to_reference")


def check_tolerance(tolerance: Any) -> tuple[float, float]:
    """``(low, high)`` with ``0 < low <= 1 <= high``; a single number t in (0, 1] means ``(t, 1/t)``."""
    if isinstance(tolerance, (int, float, np.number)) and not isinstance(tolerance, bool):
        t = float(tolerance)
        if not 0 < t <= 1:
            raise ValueError(f"tolerance must be in (0, 1] (e.g. 0.8, the four-fifths rule), got {tolerance!r}")
        return t, 1.0 / t
    try:
        low, high = (float(x) for x in tolerance)
    except (TypeError, ValueError):
        raise TypeError(f"tolerance must be a number in (0, 1] or a pair (low, high), got {tolerance!r}") from None
    if not (np.isfinite(low) and np.isfinite(high) and 0 < low <= 1 <= high):
        raise ValueError(f"tolerance must be a pair (low, high) with 0 < low <= 1 <= high, got {tolerance!r}")
    return low, high


#: what a rate conditions on, and its name in words: the reason a ratio of it is undefined
_RATE_WORDS = {"selection_rate": ("selection rate", "member"), "tpr": ("TPR", "positive"), "fpr": ("FPR", "negative")}


def _why_ratio_undefined(rate: str, group: Any, value: float, reference: Any, ref_value: float) -> str:
    """Why the ratio of ``group``'s ``rate`` to the reference's is undefined (a NaN ratio)."""
    name, event = _RATE_WORDS.get(rate, (rate, "instance"))
    if not np.isfinite(value):
        return f"no {event} in group {group!r} (its {name} is undefined)"
    where = f"the best {name}" if reference == "best" else f"the {name} of the reference group {reference!r}"
    if not np.isfinite(ref_value):
        return f"{where} is undefined (no {event} in it)"
    return f"{where} is 0"


def _reading(ratio: float, tol: tuple[float, float], is_ref: bool, why: str = "") -> str:
    if not np.isfinite(ratio):
        return f"undefined: {why}" if why else "undefined"  # the rate or the reference's conditions on an empty event
    if is_ref:
        return "reference"
    if ratio < tol[0]:
        return "below tolerance"
    if ratio > tol[1]:
        return "above tolerance"
    return "within tolerance"


def _accepts_weight(fn: Callable) -> bool:
    try:
        return "sample_weight" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _call_metric(name: str, fn: Callable, y_true: Any, y_pred: Any, w: np.ndarray | None) -> tuple[float, str]:
    """``(value, why-undefined)``: a metric that raises or returns a non-finite value is undefined, with the reason."""
    try:
        value = fn(y_true, y_pred, sample_weight=w) if w is not None else fn(y_true, y_pred)
        value = float(value)
    except (ValueError, ZeroDivisionError) as exc:
        return float("nan"), f"{name}: {exc}"
    except TypeError as exc:
        raise TypeError(f"group_metrics[{name!r}] must return a number from (y_true, y_pred): {exc}") from exc
    if not np.isfinite(value):
        return float("nan"), f"{name}: not finite"
    return value, ""


@dataclass(frozen=True, eq=False, repr=False)
class GroupMetrics(ResultMixin):
    r"""Rates (and any scikit-learn metric) per group, with differences, ratios and a reference group.

    The fairlearn ``MetricFrame`` view of a :class:`~biasamp.FairnessResult`
    (``result.group_view``).

    Attributes
    ----------
    by_group : pandas.DataFrame
        One row per group (index: group names): ``n`` (weighted size),
        ``small`` (fewer than ``min_group_size`` members), the selection rate
        :math:`PPR_g`, :math:`TPR_g` and :math:`FPR_g` of each headline class
        (suffixed ``[class]`` when there are several), then one column per
        metric of ``group_metrics``. NaN where a rate conditions on an empty
        event (listed in ``undefined``).
    overall : pandas.Series
        The same columns computed on every row.
    reference_group : object
        The group ``to_reference`` compares with (``"largest"``: most
        members; ``"best"``: per column the best rate; or a named group).
    excluded : tuple
        Groups left out of ``between_groups``/``to_overall`` aggregates (the
        small groups the headline excluded).
    undefined : dict
        ``(group, column) -> reason`` for each NaN of ``by_group``.

    Notes
    -----
    As in fairlearn: ``difference("between_groups")`` is
    :math:`\max_g x_g - \min_g x_g`, ``difference("to_overall")`` is
    :math:`\max_g |x_g - x|`, ``ratio("between_groups")`` is
    :math:`\min_g x_g / \max_g x_g` (fairlearn's ``demographic_parity_ratio``
    for the selection rate), ``ratio("to_overall")`` is
    :math:`\min_g \min(x_g/x, x/x_g)`. ``"to_reference"`` gives, per group,
    :math:`x_g - x_r` and :math:`x_g / x_r` (aequitas's disparities).

    References
    ----------
    .. [1] fairlearn, ``fairlearn.metrics.MetricFrame``.
    .. [2] P. Saleiro et al. "Aequitas: A Bias and Fairness Audit Toolkit".
       arXiv:1811.05577, 2018.

    Examples
    --------
    >>> import numpy as np
    >>> from biasamp import fairness_metrics
    >>> y_true = np.repeat([1, 0, 1, 0], 100)
    >>> y_pred = np.repeat([1, 0] * 4, [80, 20, 10, 90, 60, 40, 30, 70])
    >>> sex = np.repeat(["female", "male"], 200)
    >>> view = fairness_metrics(y_true, y_pred, sensitive_features=sex).group_view
    >>> view.by_group[["n", "selection_rate", "tpr"]]  # doctest: +NORMALIZE_WHITESPACE
              n  selection_rate  tpr
    group
    female  200            0.45  0.8
    male    200            0.45  0.6
    >>> float(round(view.difference()["tpr"], 3)), float(round(view.ratio()["tpr"], 3))
    (0.2, 0.75)
    """

    by_group: pd.DataFrame
    overall: pd.Series
    reference_group: Any
    excluded: tuple = ()
    undefined: dict = field(default_factory=dict)

    def _columns(self) -> pd.DataFrame:
        return self.by_group.drop(columns=["n", "small"])

    def _kept(self) -> pd.DataFrame:
        values = self._columns()
        if self.excluded:
            values = values.iloc[np.flatnonzero([g not in self.excluded for g in values.index])]
        return values.astype(np.float64)

    def _reference_values(self) -> pd.Series:
        values = self._columns().astype(np.float64)
        if self.reference_group != "best":
            return values.iloc[list(values.index).index(self.reference_group)]
        kept = self._kept()
        best = {c: (kept[c].min() if RATES.get(c.split(" [")[0]) == "min" else kept[c].max()) for c in kept.columns}
        return pd.Series(best)

    def group_min(self) -> pd.Series:
        """Per column, the smallest value over the (non-excluded) groups."""
        return self._kept().min()

    def group_max(self) -> pd.Series:
        """Per column, the largest value over the (non-excluded) groups."""
        return self._kept().max()

    def difference(self, method: str = "between_groups") -> pd.Series | pd.DataFrame:
        """Differences: ``"between_groups"`` (max − min), ``"to_overall"`` (largest absolute ``x_g − x``),
        ``"to_reference"``."""
        if method == "between_groups":
            return self.group_max() - self.group_min()
        if method == "to_overall":
            return (self._kept() - self.overall[self._kept().columns].astype(np.float64)).abs().max()
        if method == "to_reference":
            return self._columns().astype(np.float64) - self._reference_values()
        raise ValueError(f"method must be one of {_DIFF_METHODS}, got {method!r}")

    def ratio(self, method: str = "between_groups") -> pd.Series | pd.DataFrame:
        """Ratios: ``"between_groups"`` (min / max), ``"to_overall"``, ``"to_reference"`` (x_g / x_r).

        A ratio with a zero denominator is NaN (undefined); 0/0 is 1 (equal rates).
        """
        with np.errstate(invalid="ignore", divide="ignore"):
            if method == "between_groups":
                lo, hi = self.group_min(), self.group_max()
                return pd.Series(np.where(hi > 0, lo / hi.where(hi > 0, 1.0), np.where(lo == 0, 1.0, np.nan)),
                                 index=lo.index)
            if method == "to_overall":
                kept = self._kept()
                overall = self.overall[kept.columns].astype(np.float64)
                r = np.minimum(kept / overall, overall / kept)
                r = r.where(~((kept == 0) & (overall == 0)), 1.0)
                return r.min()
            if method == "to_reference":
                values = self._columns().astype(np.float64)
                ref = self._reference_values()[values.columns].to_numpy(dtype=np.float64)[None, :]
                v = values.to_numpy()
                r = np.where(ref != 0, v / np.where(ref != 0, ref, 1.0), np.where(v == 0, 1.0, np.nan))
                return pd.DataFrame(r, index=values.index, columns=values.columns)
        raise ValueError(f"method must be one of {_DIFF_METHODS}, got {method!r}")

    def to_frame(self) -> pd.DataFrame:
        """``by_group``: one row per group."""
        return self.by_group.copy()

    def __repr__(self) -> str:
        cols = list(self._columns().columns)[:6]
        lines = [f"GroupMetrics({len(self.by_group)} groups, reference={self.reference_group!r})"]
        for g, row in self.by_group.iterrows():
            flag = " (small)" if row["small"] else ""
            vals = ", ".join(f"{c}={fmt(row[c])}" for c in cols)
            lines.append(f"  {g!s:<16} n={row['n']:g}{flag}: {vals}")
        return "\n".join(lines)


def _rate_columns(counts: Any, headline: Sequence[int]) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """Per-group and overall PPR/TPR/FPR of the headline classes, named columns."""
    n = np.asarray(counts.n, dtype=np.float64)
    pos = np.asarray(counts.positives, dtype=np.float64)
    pred = np.asarray(counts.predicted, dtype=np.float64)
    tp = np.asarray(counts.true_positives, dtype=np.float64)
    neg, fp = n[:, None] - pos, pred - tp
    several = len(headline) > 1
    per_group: dict[str, np.ndarray] = {}
    overall: dict[str, float] = {}
    with np.errstate(invalid="ignore", divide="ignore"):
        for k in headline:
            suffix = f" [{counts.classes[k]}]" if several else ""
            for name, num, den in (("selection_rate", pred[:, k], n), ("tpr", tp[:, k], pos[:, k]),
                                   ("fpr", fp[:, k], neg[:, k])):
                per_group[name + suffix] = np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)
                tot = den.sum()
                overall[name + suffix] = float(num.sum() / tot) if tot > 0 else np.nan
    return per_group, overall


def build_group_view(counts: Any, headline: Sequence[int], *, small: np.ndarray, excluded: tuple,
                     reference_group: Any, group_metrics: Mapping[str, Callable] | None,
                     labels: tuple | None) -> GroupMetrics:
    """The :class:`GroupMetrics` of a count table.

    ``labels`` is ``(y_true, y_pred, group_codes, weights)`` for the scikit-learn
    metrics of ``group_metrics`` (called once per group and once on all rows).
    """
    groups = list(counts.groups)
    per_group, overall = _rate_columns(counts, headline)
    undefined = {}
    for col, values in per_group.items():
        for g, v in zip(groups, values):
            if np.isnan(v) and counts.n[groups.index(g)] > 0:
                what = "positive" if col.startswith("tpr") else "negative"
                undefined[(g, col)] = f"no {what} instance in the group"
    if group_metrics:
        if not isinstance(group_metrics, Mapping):
            raise TypeError("group_metrics must be a mapping of name -> metric function (y_true, y_pred)")
        assert labels is not None  # fairness_compute passes the labels whenever group_metrics is given
        y_true, y_pred, codes, w = labels
        for name, fn in group_metrics.items():
            if not callable(fn):
                raise TypeError(f"group_metrics[{name!r}] must be callable, got {type(fn).__name__}")
            if w is not None and not _accepts_weight(fn):
                raise ValueError(f"group_metrics[{name!r}] takes no sample_weight, but sample_weight was given")
            values = np.full(len(groups), np.nan)
            for i, g in enumerate(groups):  # one call per group, as fairlearn's MetricFrame
                rows = codes == i
                if not rows.any():
                    continue
                values[i], why = _call_metric(name, fn, y_true[rows], y_pred[rows], None if w is None else w[rows])
                if why:
                    undefined[(g, name)] = why
            per_group[name] = values
            overall[name], why = _call_metric(name, fn, y_true, y_pred, w)
            if why:
                undefined[("overall", name)] = why
    index = pd.Index(groups, name="group", tupleize_cols=False)
    frame = pd.DataFrame({"n": counts.n, "small": small, **per_group}, index=index)
    ref = resolve_reference(reference_group, groups, counts.n, small)
    return GroupMetrics(frame, pd.Series(overall, dtype=np.float64), ref, excluded, undefined)


def resolve_reference(reference_group: Any, groups: Sequence, n: np.ndarray, small: np.ndarray) -> Any:
    """``"largest"`` -> the group with the most members (first on ties); ``"best"`` stays; a name is checked."""
    if isinstance(reference_group, str) and reference_group in ("largest", "best") and reference_group not in groups:
        if reference_group == "best":
            return "best"
        return groups[int(np.argmax(n))]
    if reference_group not in list(groups):
        raise ValueError(
            f"reference_group={reference_group!r} is not a group; use 'largest', 'best' or one of "
            f"{list(groups)[:20]!r}")
    return reference_group


def disparity_table(view: GroupMetrics, tolerance: tuple[float, float]) -> pd.DataFrame:
    """Long table of the rates' disparities to the reference group, with a reading per group."""
    values = view._columns()
    rate_cols = [c for c in values.columns if c.split(" [")[0] in RATES]
    ratio = view.ratio("to_reference")[rate_cols].to_numpy()
    diff = view.difference("to_reference")[rate_cols].to_numpy()
    ref_values = view._reference_values()
    groups = list(values.index)
    n, small = view.by_group["n"].to_numpy(), view.by_group["small"].to_numpy(dtype=bool)
    rows = []
    for j, col in enumerate(rate_cols):
        rate, _, cls = col.partition(" [")
        v = values[col].to_numpy(dtype=np.float64)
        for i, g in enumerate(groups):
            is_ref = (g == view.reference_group if view.reference_group != "best"
                      else bool(v[i] == ref_values[col]))
            rows.append({
                "rate": rate, "class": cls[:-1] if cls else None, "group": g, "n": n[i], "small": bool(small[i]),
                "value": float(v[i]), "reference_value": float(ref_values[col]),
                "difference": float(diff[i, j]), "ratio": float(ratio[i, j]),
                "reading": _reading(float(ratio[i, j]), tolerance, is_ref, "" if np.isfinite(ratio[i, j]) else
                                    _why_ratio_undefined(rate, g, v[i], view.reference_group, ref_values[col])),
            })
    frame = pd.DataFrame(rows)
    if frame["class"].isna().all():
        frame = frame.drop(columns="class")
    return frame
