"""Group fairness metrics of Qian et al. (2021): DP, DI, SPSF, FPSF, EOFP, EOTP, BA.

Every metric is a pure function of :class:`ConfusionCounts`, the one-vs-rest
confusion counts per (group, class), built from the labels in one vectorized
pass ("counts first"). Each metric is computed per class and the
overall value is the positive class's value of a binary task (``average="binary"``, the rule for a
binary task, :ref:`def-binary-task`) or the unweighted mean over the classes where it is defined
(:ref:`def-fairness`).

With, for group :math:`g` and class :math:`k` (one-vs-rest),
:math:`PPR_g = (TP+FP)_g/n_g`, :math:`TPR_g = TP_g/P_g`, :math:`FPR_g = FP_g/N_g`:

* ``DP``   = :math:`\\max_g PPR_g - \\min_g PPR_g`
* ``DI``   = :math:`1 - \\min_g PPR_g / \\max_g PPR_g` (0 when every rate is 0)
* ``SPSF`` = :math:`\\sum_g \\Pr[g]\\,|PPR - PPR_g|`
* ``FPSF`` = :math:`\\sum_g \\Pr[g]\\,|FPR - FPR_g|`, :math:`\\Pr[g] = n_g/n`
* ``EOFP`` = :math:`\\max_g FPR_g - \\min_g FPR_g`
* ``EOTP`` = :math:`\\max_g TPR_g - \\min_g TPR_g`
* ``BA``   = :math:`|(TP+FP)_{\\bar g}/(TP+FP) - P_{\\bar g}/P|`,
  :math:`\\bar g = \\arg\\max_g P_g/P`

Undefined cases follow :ref:`def-undefined`: a group rate conditioning on an empty event
(``TPR`` of a group with no positive of the class, ``FPR`` of a group with no
negative) is left out of that class's comparison; a class-level metric that
then compares fewer than two groups (or, for BA, a class with no positive or
never predicted) is undefined for that class, excluded from the mean, marked in
:attr:`FairnessResult.undefined` and counted in
:attr:`FairnessResult.n_undefined`, and an :class:`~biasamp.UndefinedPairWarning`
is emitted. A metric undefined for every class raises ``ValueError``.

References
----------
.. [1] S. Qian, V. H. Pham, T. Lutellier, Z. Hu, J. Kim, L. Tan, Y. Yu, J. Chen,
   S. Shah. "Are My Deep Learning Systems Fair? An Empirical Study of
   Fixed-Seed Training". NeurIPS 2021, Appendix A (definitions) and C
   (running example, Table 3).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from biasamp._core.labels import describe_reading
from biasamp._core.policy import check_include_small_groups, warn_small_groups
from biasamp._core.policy import check_min_group_size as _check_min_group_size
from biasamp._core.policy import small_groups as _small_groups
from biasamp._core.policy_options import DEFAULT_MIN_GROUP_SIZE, DEFAULT_THRESHOLD
from biasamp._core.results import ResultMixin, fmt
from biasamp._core.typing import Average, BinaryTask, Labels, Missing, Soft, Weights
from biasamp._engine.groups import ConfusionCounts, CountsReading
from biasamp._engine.groups import Prepared as _Prepared
from biasamp._engine.groups import counts_of as _counts_of
from biasamp._engine.groups import group_table as _group_table
from biasamp._engine.groups import prepare as _prepare
from biasamp._engine.groups import ratio as _ratio
from biasamp.exceptions import UndefinedPairWarning, warn_outside
from biasamp.fairness._options import METRICS, FairnessOptions, _check_metrics

__all__ = [
    "METRICS",
    "ConfusionCounts",
    "FairnessResult",
    "FairnessSettings",
    "demographic_parity",
    "equalized_odds_false_positive",
    "equalized_odds_true_positive",
    "fairness_from_counts",
    "fairness_metrics",
    "false_positive_subgroup_fairness",
    "group_bias_amplification",
    "normalized_disparate_impact",
    "statistical_parity_subgroup_fairness",
]

_METRIC_NAMES = {
    "DP": "demographic parity",
    "DI": "normalized disparate impact",
    "SPSF": "statistical parity subgroup fairness",
    "FPSF": "false positive subgroup fairness",
    "EOFP": "equalized odds (false positive)",
    "EOTP": "equalized odds (true positive)",
    "BA": "bias amplification",
}


# --------------------------------------------------------------------------- #
# pure functions of the counts (vectorized over any leading axes)
# --------------------------------------------------------------------------- #

def _spread(rate: np.ndarray, ok: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(max, min, number of defined groups) over the group axis (-2)."""
    hi = np.where(ok, rate, -np.inf).max(axis=-2)
    lo = np.where(ok, rate, np.inf).min(axis=-2)
    return hi, lo, ok.sum(axis=-2)


def metric_arrays(
    n: np.ndarray, positives: np.ndarray, predicted: np.ndarray, true_positives: np.ndarray,
    metrics: Sequence[str] = METRICS,
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per-class metric values and definedness masks from raw count arrays.

    ``n`` has shape ``(..., G)`` and the others ``(..., G, K)``; any leading
    axes (e.g. bootstrap replicates) are kept. Returns, per metric name,
    ``(values, defined)`` of shape ``(..., K)``; ``values`` is NaN exactly
    where ``defined`` is False.
    """
    n = np.asarray(n, dtype=np.float64)[..., :, None]
    pos = np.asarray(positives, dtype=np.float64)
    pred = np.asarray(predicted, dtype=np.float64)
    tp = np.asarray(true_positives, dtype=np.float64)
    neg = n - pos
    fp = pred - tp
    has = np.broadcast_to(n > 0, pos.shape)
    n_tot = n.sum(axis=-2)  # (..., 1)
    n_groups = has.sum(axis=-2)  # (..., K)
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def put(name, values, defined):
        with np.errstate(invalid="ignore"):
            out[name] = (np.where(defined, values, np.nan), defined)

    ppr, _ = _ratio(pred, n)
    if "DP" in metrics or "DI" in metrics:
        hi, lo, cnt = _spread(ppr, has)
        defined = cnt >= 2
        if "DP" in metrics:
            put("DP", hi - lo, defined)
        if "DI" in metrics:
            with np.errstate(invalid="ignore", divide="ignore"):
                di = np.where(hi > 0, 1.0 - lo / np.where(hi > 0, hi, 1.0), 0.0)
            put("DI", di, defined)
    with np.errstate(invalid="ignore", divide="ignore"):
        weight = n / np.where(n_tot > 0, n_tot, 1.0)[..., None, :]  # Pr[g], (..., G, 1)
    if "SPSF" in metrics:
        ppr_all, _ = _ratio(pred.sum(axis=-2), n_tot)
        terms = np.where(has, weight * np.abs(ppr_all[..., None, :] - np.nan_to_num(ppr)), 0.0)
        put("SPSF", terms.sum(axis=-2), n_groups >= 2)
    if any(m in metrics for m in ("FPSF", "EOFP")):
        fpr, ok_fp = _ratio(fp, neg)
        hi, lo, cnt = _spread(fpr, ok_fp)
        if "FPSF" in metrics:
            fpr_all, _ = _ratio(fp.sum(axis=-2), neg.sum(axis=-2))
            terms = np.where(ok_fp, weight * np.abs(np.nan_to_num(fpr_all)[..., None, :] - np.nan_to_num(fpr)), 0.0)
            put("FPSF", terms.sum(axis=-2), cnt >= 2)
        if "EOFP" in metrics:
            put("EOFP", hi - lo, cnt >= 2)
    if "EOTP" in metrics:
        tpr, ok_tp = _ratio(tp, pos)
        hi, lo, cnt = _spread(tpr, ok_tp)
        put("EOTP", hi - lo, cnt >= 2)
    if "BA" in metrics:
        p_all = pos.sum(axis=-2)
        pp_all = pred.sum(axis=-2)
        gbar = np.argmax(pos, axis=-2)[..., None, :]  # first on ties; same denominator P
        share_pred, ok_pp = _ratio(np.take_along_axis(pred, gbar, axis=-2)[..., 0, :], pp_all)
        share_true, ok_p = _ratio(np.take_along_axis(pos, gbar, axis=-2)[..., 0, :], p_all)
        put("BA", np.abs(share_pred - share_true), ok_pp & ok_p & (n_groups >= 2))
    return {m: out[m] for m in metrics}


def _aggregate(values: np.ndarray, defined: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unweighted mean over defined classes (last axis); (mean, number of defined classes)."""
    cnt = defined.sum(axis=-1)
    total = np.where(defined, values, 0.0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(cnt > 0, total / np.where(cnt > 0, cnt, 1), np.nan)
    return mean, cnt


# --------------------------------------------------------------------------- #
# settings: which classes make the headline, what was done to the predictions
# --------------------------------------------------------------------------- #
#: Options of :func:`fairness_from_counts` (what a count table cannot know) and of the labels' encoding.
_FROM_COUNTS_OPTIONS = ("average", "pos_label", "min_group_size", "include_small_groups", "reference_group",
                        "tolerance", "binary_task")


@dataclass(frozen=True, eq=False, repr=False)
class FairnessSettings(ResultMixin):
    r"""How a :class:`FairnessResult` was computed: what a reader needs to interpret its headline.

    Attributes
    ----------
    average : str
        ``"binary"`` (the positive class only), ``"macro"`` (unweighted mean
        over the classes) or ``"none"`` (per class only).
    pos_label : object or None
        The positive class of a binary average.
    headline_classes : tuple
        The classes the headline values come from.
    predictions : str
        ``"hard"``, ``"thresholded at t"`` (probabilities of the positive class
        or of each label), ``"argmax of the class probabilities"`` or
        ``"expected rates"`` (``soft="expected"``).
    min_group_size : int
        Groups with fewer (weighted) members are *small*.
    small_groups : tuple
        The small groups (flagged everywhere).
    excluded_groups : tuple
        The groups left out of the headline (the small ones, unless that would
        leave fewer than two groups or ``include_small_groups`` was set).
    reference_group : object
        The group disparities are measured against (or ``"best"``).
    tolerance : tuple of float
        ``(low, high)``: a disparity ratio inside it is "within tolerance".
    rows : RowFilter or None
        Rows dropped or regrouped for missing values or zero weights.
    weighted : bool
        Whether ``sample_weight`` was given (every count is then a weighted count).
    binary_task : str or None
        How a binary task was read (:ref:`def-binary-task`): ``"positive class
        1"`` (``average="binary"``, the default) or ``"both classes 0, 1"``
        (``binary_task="both"`` or ``average="macro"``); None when the task is
        not a single-label binary one.

    Notes
    -----
    The headline of metric m is :math:`m_{k^+}` for ``average="binary"``
    (:math:`k^+` the class ``pos_label``) and
    :math:`\frac{1}{|K_m|}\sum_{k \in K_m} m_k` for ``"macro"`` (:math:`K_m`
    the classes where m is defined), computed on the groups not in
    ``excluded_groups`` (:ref:`def-fairness`, :ref:`def-small-groups`).

    References
    ----------
    .. [1] S. Qian et al. "Are My Deep Learning Systems Fair? An Empirical
       Study of Fixed-Seed Training". NeurIPS 2021, Appendix A.

    Examples
    --------
    >>> import numpy as np
    >>> from biasamp import fairness_metrics
    >>> res = fairness_metrics(np.repeat([1, 0], 60), np.tile([1, 0], 60),
    ...                        sensitive_features=np.repeat([0, 1, 0, 1], 30))
    >>> res.settings.average, res.settings.pos_label, res.settings.predictions
    ('binary', 1, 'hard')
    """

    average: str
    pos_label: Any
    headline_classes: tuple
    predictions: str = "hard"
    min_group_size: int = DEFAULT_MIN_GROUP_SIZE
    small_groups: tuple = ()
    excluded_groups: tuple = ()
    reference_group: Any = None
    tolerance: tuple = (0.8, 1.25)
    rows: Any = None
    weighted: bool = False
    binary_task: str | None = None

    def describe(self) -> list[str]:
        """One line per setting a reader must know, in plain words."""
        if self.average == "binary":
            out = [f"headline: the positive class {self.pos_label!r} (average='binary')"]
        elif self.average == "macro":
            out = [f"headline: unweighted mean over {len(self.headline_classes)} classes (average='macro')"]
        else:
            out = ["headline: per class only (average=None)"]
        out.append(f"predictions: {self.predictions}")
        if self.small_groups:
            what = "excluded from the headline" if self.excluded_groups else "kept in the headline"
            out.append(f"{len(self.small_groups)} small group(s) (< {self.min_group_size} members) {what}: "
                       + ", ".join(map(repr, self.small_groups[:8])) + (" ..." if len(self.small_groups) > 8 else ""))
        if self.rows is not None and self.rows.changed:
            out.append(self.rows.describe())
        if self.weighted:
            out.append("weighted by sample_weight")
        return out

    def __repr__(self) -> str:
        return "FairnessSettings(" + "; ".join(self.describe()) + ")"




# --------------------------------------------------------------------------- #
# result
# --------------------------------------------------------------------------- #
@dataclass(frozen=True, eq=False, repr=False)
class FairnessResult(ResultMixin):
    r"""Result of :func:`fairness_metrics` / :func:`fairness_from_counts`.

    Attributes
    ----------
    overall : dict of str -> float
        Metric name (``"DP" "DI" "SPSF" "FPSF" "EOFP" "EOTP" "BA"``) to its
        headline value (fractions, not percentages): the positive class's value
        (``average="binary"``, the default for two classes) or the unweighted
        mean over the classes where it is defined (``"macro"``). With
        ``average=None``, each value is a Series over the classes. A metric
        undefined for every headline class is NaN and listed in
        ``undefined_reasons``.
    by_class : pandas.DataFrame
        One row per class (index: class names), one column per metric; NaN
        exactly where ``undefined`` is True.
    undefined : pandas.DataFrame of bool
        Same shape as ``by_class``: the (class, metric) entries excluded from
        the means.
    n_undefined : dict of str -> int
        Per metric, the number of headline classes excluded.
    by_group : pandas.DataFrame
        One row per (class, group), one-vs-rest for the class, from the
        (weighted) counts ``n``, ``positives`` P, ``negatives`` N,
        ``predicted_positive`` TP+FP, ``true_positives`` TP and
        ``false_positives`` FP: the base rate ``base_rate`` = P/n (P(Y=1)),
        the selection rate ``ppr`` = (TP+FP)/n, ``tpr`` = TP/P, ``fpr`` =
        FP/N, ``fnr`` = (P−TP)/P = 1 − TPR, ``precision`` (PPV) = TP/(TP+FP)
        and ``accuracy`` = (TP+TN)/n with TN = N−FP; the flags
        ``tpr_undefined`` / ``fpr_undefined`` / ``precision_undefined`` (a
        rate conditioning on an empty event: NaN, left out of its class's
        comparison), ``undefined_reason`` (why, e.g. ``"TPR, FNR: no positive
        in the group"``; empty when every rate is defined), ``small`` (a
        group below ``min_group_size``) and ``in_headline``.
    counts : ConfusionCounts
        The count table of the headline groups (every group but the excluded
        small ones).
    undefined_reasons : dict of str -> str
        Metrics undefined for every headline class, with the reason; their
        ``overall`` value is NaN.
    settings : FairnessSettings or None
        Average, positive class, handling of probabilities, small and excluded
        groups, reference group, tolerance, rows dropped.
    group_view : GroupMetrics or None
        Rates (and any ``group_metrics``) per group, with differences, ratios
        and the reference group (fairlearn's ``MetricFrame`` view).
    disparities : pandas.DataFrame or None
        Per headline class, rate (selection rate, TPR, FPR) and group: the
        value, the reference group's, their difference and ratio, and a reading
        against the tolerance (aequitas's disparities).

    Notes
    -----
    Each headline is the positive class's value (``average="binary"``) or
    averages the per-class values over the classes where the metric is
    defined (``"macro"``; :ref:`def-fairness`, :ref:`def-undefined`):
    :math:`\text{overall}[m] = \frac{1}{|K_m|}\sum_{k \in K_m} m_k`, with
    :math:`K_m` the headline classes where metric m is defined.

    There is no single ``value``: the result holds seven metrics, each with
    its own headline in ``overall`` (``result["DP"]`` is
    ``result.overall["DP"]``). ``to_frame()`` is ``by_class``, the per-class
    values the headlines come from. :attr:`disparate_impact_ratio` is
    fairlearn's ``demographic_parity_ratio`` (:math:`\min_g PPR_g/\max_g PPR_g`
    = 1 − DI) and :attr:`passes_four_fifths` its four-fifths-rule reading.

    References
    ----------
    .. [1] S. Qian et al. "Are My Deep Learning Systems Fair? An Empirical
       Study of Fixed-Seed Training". NeurIPS 2021, Appendix A.

    Examples
    --------
    >>> import numpy as np
    >>> y_true = np.repeat(["sport", "cook", "sport", "cook"], 100)
    >>> y_pred = np.repeat(["sport", "cook"] * 4, [80, 20, 10, 90, 60, 40, 70, 30])
    >>> gender = np.repeat(["female", "male"], 200)
    >>> from biasamp import fairness_metrics
    >>> res = fairness_metrics(y_true, y_pred, sensitive_features=gender, average="macro")
    >>> {k: round(v, 3) for k, v in res.overall.items()}
    {'DP': 0.2, 'DI': 0.336, 'SPSF': 0.1, 'FPSF': 0.2, 'EOFP': 0.4, 'EOTP': 0.4, 'BA': 0.101}
    >>> res.to_frame()[["DP", "EOTP"]].round(3).to_dict("index")
    {'cook': {'DP': 0.2, 'EOTP': 0.6}, 'sport': {'DP': 0.2, 'EOTP': 0.2}}
    """

    overall: dict
    by_class: pd.DataFrame
    undefined: pd.DataFrame
    n_undefined: dict
    by_group: pd.DataFrame
    counts: ConfusionCounts
    undefined_reasons: dict = field(default_factory=dict)
    settings: FairnessSettings | None = None
    group_view: Any = None
    disparities: pd.DataFrame | None = None

    @property
    def classes(self) -> tuple:
        return self.counts.classes

    @property
    def groups(self) -> tuple:
        return self.counts.groups

    @property
    def disparate_impact_ratio(self) -> float:
        """:math:`\\min_g PPR_g / \\max_g PPR_g` averaged like the headline (= 1 − DI); NaN when DI is undefined."""
        if "DI" not in self.overall:
            raise AttributeError("DI was not computed (metrics=...): the disparate-impact ratio needs it")
        di = self.overall["DI"]
        return 1.0 - di

    @property
    def passes_four_fifths(self) -> bool | None:
        """Whether the disparate-impact ratio is at least 0.8 (the four-fifths rule); None when undefined."""
        r = self.disparate_impact_ratio
        if isinstance(r, pd.Series) or not np.isfinite(r):
            return None
        return bool(r >= 0.8)

    def __getitem__(self, metric: str) -> float:
        return self.overall[metric]

    def to_frame(self) -> pd.DataFrame:
        """``by_class``: one row per class, one column per metric (NaN where undefined)."""
        return self.by_class.copy()

    def __repr__(self) -> str:
        lines = [
            f"FairnessResult({len(self.classes)} classes, {len(self.groups)} groups, "
            f"n={self.counts.n_total:g})"
        ]
        if self.settings is not None:
            lines += [f"  [{line}]" for line in self.settings.describe()]
        for name, value in self.overall.items():
            if name in self.undefined_reasons:
                lines.append(f"  {name:<5}= undefined ({self.undefined_reasons[name]})")
                continue
            if isinstance(value, pd.Series):
                lines.append(f"  {name:<5}= " + ", ".join(f"{k}: {fmt(v)}" for k, v in value.items()))
                continue
            extra = f"  ({self.n_undefined[name]} classes undefined)" if self.n_undefined[name] else ""
            lines.append(f"  {name:<5}= {fmt(value)}{extra}")
        return "\n".join(lines)


def _headline_values(counts: ConfusionCounts, metrics: tuple, headline: tuple, per_class: bool):
    """``(overall, by_class, undefined, n_undefined, undefined_reasons)`` of the headline classes."""
    arrays = metric_arrays(counts.n, counts.positives, counts.predicted, counts.true_positives, metrics)
    index = pd.Index(list(counts.classes), name="class")
    by_class = pd.DataFrame({m: v for m, (v, _) in arrays.items()}, index=index)
    undefined = pd.DataFrame({m: ~d for m, (_, d) in arrays.items()}, index=index)
    mask = np.zeros(len(counts.classes), dtype=bool)
    mask[list(headline)] = True
    overall, n_undefined, reasons = {}, {}, {}
    for m, (v, d) in arrays.items():
        mean, cnt = _aggregate(v, d & mask)
        n_undefined[m] = int(mask.sum() - cnt)
        if cnt == 0:
            reasons[m] = why_undefined(m)
            absent = [counts.classes[i] for i in headline if not np.asarray(counts.positives)[:, i].sum() > 0]
            if m in ("EOTP", "BA") and len(absent) == len(headline):
                # the class never occurs in the ground truth: no group has a TPR (the binary case of fairlearn's
                # true_positive_rate, which reports 0 there)
                reasons[m] += (f": the class{'es' if len(absent) > 1 else ''} "
                               f"{', '.join(map(repr, absent[:8]))} never occur{'' if len(absent) > 1 else 's'} "
                               "in y_true")
        overall[m] = by_class[m].copy() if per_class else float(mean)
    return overall, by_class, undefined, n_undefined, reasons


def fairness_from_counts(counts: ConfusionCounts, *, metrics: Sequence[str] = METRICS, average: Any = "auto",
                         pos_label: Any = 1, min_group_size: int = DEFAULT_MIN_GROUP_SIZE,
                         include_small_groups: bool = False,
                         reference_group: Any = "largest", tolerance: Any = (0.8, 1.25),
                         binary_task: BinaryTask = "positive") -> FairnessResult:
    r"""The group fairness metrics from a :class:`ConfusionCounts` table.

    Parameters
    ----------
    counts : ConfusionCounts
        Per-(group, class) one-vs-rest confusion counts.
    metrics : sequence of str, default all seven
        Which of ``"DP" "DI" "SPSF" "FPSF" "EOFP" "EOTP" "BA"`` to compute.
    average : {"auto", "binary", "macro", None}, default "auto"
        As in :func:`fairness_metrics`.
    pos_label : object, default 1
        The positive class of ``average="binary"``.
    min_group_size, include_small_groups, reference_group, tolerance : optional
        Small groups, the reference group and the tolerance of the
        disparities, as in :func:`fairness_metrics`.
    binary_task : {"positive", "both"}, default "positive"
        As in :func:`fairness_metrics`: ``"both"`` reads both classes of a
        binary task (``average="auto"`` becomes ``"macro"``).

    Returns
    -------
    FairnessResult

    Raises
    ------
    ValueError
        Fewer than two non-empty groups, every requested metric undefined for
        every headline class, or ``pos_label`` not a class.

    Warns
    -----
    UndefinedPairWarning
        When some (class, metric) entries or group rates were excluded, or a
        metric is undefined (reported in ``undefined_reasons``).

    See Also
    --------
    fairness_metrics : the same from labels.

    Notes
    -----
    The metrics of :func:`fairness_metrics`, per class k from the one-vs-rest
    counts (:math:`PPR_g = (TP+FP)_g/n_g`, :math:`TPR_g = TP_g/P_g`,
    :math:`FPR_g = FP_g/N_g`), e.g.
    :math:`\mathrm{DP}_k = \max_g PPR_{gk} - \min_g PPR_{gk}`, then the
    positive class's value or the mean over the classes where defined
    (:ref:`def-fairness`).

    References
    ----------
    .. [1] S. Qian et al. "Are My Deep Learning Systems Fair? An Empirical
       Study of Fixed-Seed Training". NeurIPS 2021, Appendix A.

    Examples
    --------
    >>> import numpy as np
    >>> y_true = np.repeat(["sport", "cook", "sport", "cook"], 100)
    >>> y_pred = np.repeat(["sport", "cook"] * 4, [80, 20, 10, 90, 60, 40, 70, 30])
    >>> gender = np.repeat(["female", "male"], 200)
    >>> from biasamp import ConfusionCounts, fairness_from_counts
    >>> counts = ConfusionCounts.from_labels(y_true, y_pred, sensitive_features=gender)
    >>> round(fairness_from_counts(counts, metrics=["EOTP"], average="macro").overall["EOTP"], 3)
    0.4
    >>> round(fairness_from_counts(counts, metrics=["EOTP"], pos_label="cook").overall["EOTP"], 3)
    0.6
    """
    if not isinstance(counts, ConfusionCounts):
        raise TypeError(f"counts must be a ConfusionCounts, got {type(counts).__name__}")
    _check_metrics(metrics)
    _check_groups(counts)
    opts = FairnessOptions(metrics=metrics, average=average, pos_label=pos_label, min_group_size=min_group_size,
                           include_small_groups=include_small_groups, reference_group=reference_group,
                           tolerance=tolerance, binary_task=binary_task)
    return counts_compute(counts, opts)


def counts_compute(counts: ConfusionCounts, opts: FairnessOptions, *, rows: Any = None,
                   weighted: bool = False) -> FairnessResult:
    """The family's ``compute`` hook on a count table alone (:func:`fairness_from_counts`, a stream's tables).

    The headline is read from the table's classes as the counting pass reads
    it from the labels (:class:`~biasamp._engine.groups.CountsReading`);
    ``rows`` and ``weighted`` say what the counting did (a stream sums its
    batches' row filters).
    """
    _check_groups(counts)
    reading = CountsReading.of(counts, average=opts.average, pos_label=opts.pos_label, binary_task=opts.binary_task,
                               rows=rows, weighted=weighted)
    return fairness_compute((reading, counts), opts)


def _from_counts(full: ConfusionCounts, metrics: tuple, *, average: str, pos_label: Any, headline: tuple,
                 min_group_size: Any, include_small_groups: bool, reference_group: Any, tolerance: Any,
                 rows: Any = None, weighted: bool = False, group_metrics: Any = None,
                 labels: tuple | None = None) -> FairnessResult:
    """The whole result from the table of every group: small groups, group view, disparities, headline."""
    from biasamp.fairness._groups import (
        build_group_view,
        check_tolerance,
        disparity_table,
    )

    tolerance = check_tolerance(tolerance)
    min_group_size = _check_min_group_size(min_group_size)
    include_small_groups = check_include_small_groups(include_small_groups)
    small, excluded = _small_groups(np.asarray(full.n, dtype=np.float64), min_group_size, include_small_groups)
    counts = full.restrict_groups(~excluded) if excluded.any() else full
    excluded_names = tuple(g for g, e in zip(full.groups, excluded) if e)
    view = build_group_view(full, headline, small=small, excluded=excluded_names,
                            reference_group=reference_group, group_metrics=group_metrics, labels=labels)
    binary = not full.multilabel and len(full.classes) == 2 and average in ("binary", "macro")
    settings = FairnessSettings(
        average, pos_label, tuple(full.classes[i] for i in headline), full.predictions,
        min_group_size, tuple(g for g, s in zip(full.groups, small) if s), excluded_names, view.reference_group,
        tolerance, rows, weighted,
        describe_reading(full.classes, 0 if average == "macro" else headline[0], "both" if average == "macro"
                         else "positive") if binary else None)
    warn_small_groups(small, excluded, full.groups, np.asarray(full.n, dtype=np.float64), min_group_size,
                      include_small_groups, "group fairness")
    return _result(counts, metrics, headline, settings, full=full, small=small, group_view=view,
                   disparities=disparity_table(view, tolerance))


def _result(counts: ConfusionCounts, metrics: tuple, headline: tuple, settings: FairnessSettings, *,
            full: ConfusionCounts, small: np.ndarray, group_view: Any, disparities: pd.DataFrame) -> FairnessResult:
    """The result of the headline table ``counts``; ``full`` (all groups) feeds ``by_group``."""
    _check_groups(counts)
    overall, by_class, undefined, n_undefined, reasons = _headline_values(
        counts, metrics, headline, settings.average == "none")
    if len(reasons) == len(metrics):
        raise ValueError(
            f"{', '.join(reasons)} undefined for every class "
            "(docs/definitions.md, 'Undefined quantities'): " + "; ".join(reasons.values())
        )
    by_group = _group_table(full)
    in_headline = np.isin(np.arange(len(full.groups)), [full.groups.index(g) for g in counts.groups])
    k = len(full.classes)
    by_group["small"] = np.tile(small, k)
    by_group["in_headline"] = np.tile(in_headline, k)
    _warn(counts, metrics, n_undefined, _group_table(counts), reasons)
    return FairnessResult(overall, by_class, undefined, n_undefined, by_group, counts, reasons, settings,
                          group_view, disparities)


def _check_groups(counts: ConfusionCounts) -> None:
    non_empty = int((counts.n > 0).sum())
    if non_empty < 2:
        raise ValueError(
            f"group fairness metrics compare groups, but only {non_empty} group has instances "
            f"(groups: {list(counts.groups)[:10]!r})"
        )


def why_undefined(metric: str) -> str:
    """Why ``metric`` is undefined for a class (the reason a result, a warning and the report give)."""
    return {
        "EOTP": "EOTP needs, per class, at least two groups with a positive instance",
        "EOFP": "EOFP needs, per class, at least two groups with a negative instance",
        "FPSF": "FPSF needs, per class, at least two groups with a negative instance",
        "BA": "BA needs, per class, a positive instance and at least one prediction of the class",
    }.get(metric, f"{metric} needs at least two non-empty groups")


def _warn(counts: ConfusionCounts, metrics, n_undefined: dict, by_group: pd.DataFrame, reasons: dict) -> None:
    parts = [f"{m} undefined ({why})" for m, why in reasons.items()]
    parts += [f"{m} undefined for {k} classes ({why_undefined(m)})" for m, k in n_undefined.items()
              if k and m not in reasons]
    has = by_group["n"] > 0
    if "EOTP" in metrics and (by_group["tpr_undefined"] & has).any():
        parts.append(f"{int((by_group['tpr_undefined'] & has).sum())} (class, group) TPRs undefined (no positive)")
    if any(m in metrics for m in ("EOFP", "FPSF")) and (by_group["fpr_undefined"] & has).any():
        parts.append(f"{int((by_group['fpr_undefined'] & has).sum())} (class, group) FPRs undefined (no negative)")
    if parts:
        warn_outside(
            "group fairness: " + "; ".join(parts) + ". They were excluded; see the result's "
            "'undefined_reasons', 'undefined' and 'by_group' tables",
            UndefinedPairWarning,
        )


# --------------------------------------------------------------------------- #
# label-level API
# --------------------------------------------------------------------------- #
def fairness_metrics(
    y_true: Labels, y_pred: Labels, *, sensitive_features: Labels, metrics: Sequence[str] = METRICS,
    average: Average = "auto", pos_label: Any = 1, threshold: float = DEFAULT_THRESHOLD, soft: Soft = "threshold",
    sample_weight: Weights | None = None, missing: Missing = "raise", min_group_size: int = DEFAULT_MIN_GROUP_SIZE,
    include_small_groups: bool = False, reference_group: Any = "largest", tolerance: Any = (0.8, 1.25),
    group_metrics: Mapping[str, Any] | None = None, classes: Sequence | None = None,
    binary_task: BinaryTask = "positive",
) -> FairnessResult:
    r"""The seven group fairness metrics of Qian et al. (2021), per class and overall.

    For each class :math:`k` (one-vs-rest) and group :math:`g`, with
    :math:`PPR_g = (TP+FP)_g / n_g`, :math:`TPR_g = TP_g / P_g`,
    :math:`FPR_g = FP_g / N_g` and :math:`\Pr[g] = n_g / n`:

    .. math::

        \mathrm{DP} &= \max_g PPR_g - \min_g PPR_g, \qquad
        \overline{\mathrm{DI}} = 1 - \frac{\min_g PPR_g}{\max_g PPR_g}, \\
        \mathrm{SPSF} &= \sum_g \Pr[g]\,|PPR - PPR_g|, \qquad
        \mathrm{FPSF} = \sum_g \Pr[g]\,|FPR - FPR_g|, \\
        \mathrm{EOFP} &= \max_g FPR_g - \min_g FPR_g, \qquad
        \mathrm{EOTP} = \max_g TPR_g - \min_g TPR_g, \\
        \mathrm{BA} &= \Big|\frac{(TP+FP)_{\bar g}}{TP+FP} - \frac{P_{\bar g}}{P}\Big|,
        \quad \bar g = \arg\max_g P_g / P .

    The headline of each metric is the positive class's value (binary tasks,
    as fairlearn and scikit-learn report it) or the unweighted mean over the
    classes (``average="macro"``, Qian et al.'s convention).

    Parameters
    ----------
    y_true : labels of shape (n,) or (n, K)
        Ground truth: class ids/names (single-label, multi-class or binary) or
        an ``n x K`` indicator matrix (multi-label); any input kind of :ref:`def-inputs`.
    y_pred : labels of the same kind
        Predictions: hard labels, or probabilities (see ``soft``).
    sensitive_features : array-like of shape (n,), DataFrame, mapping or (n, m) array
        Protected group of every instance, any number of groups. Several
        columns (a DataFrame, a dict of columns or a 2-D array) give
        intersectional groups: the observed combinations of values.
    metrics : sequence of str, default all seven
        A subset of ``"DP" "DI" "SPSF" "FPSF" "EOFP" "EOTP" "BA"``.
    average : {"auto", "binary", "macro", None}, default "auto"
        ``"binary"``: the class ``pos_label`` only (a task with two classes);
        ``"macro"``: the unweighted mean over the classes (over the labels of
        a multi-label task); ``None``: per class only (``overall`` values are
        Series). ``"auto"`` is ``"binary"`` for a single-label task with two
        classes and ``"macro"`` otherwise.
    pos_label : object, default 1
        The positive class of ``average="binary"`` (``True``/1 for boolean or
        0/1 labels). A ``ValueError`` names the classes when it is not one.
    threshold : float, default 0.5
        Probabilities given as ``y_pred`` are turned into predictions:
        positive when :math:`p > \text{threshold}` (the positive class's
        probability of a binary task; each label's of a multi-label task); a
        multi-class probability matrix takes its argmax.
    soft : {"threshold", "expected"}, default "threshold"
        ``"expected"`` keeps the probabilities: every rate becomes an expected
        rate (no thresholding). The result's ``settings.predictions`` says
        which was done.
    sample_weight : array-like of shape (n,), optional
        Non-negative weights: every count becomes a weighted count
        (:ref:`def-weights`). Zero-weight rows are dropped.
    missing : {"raise", "drop", "group"}, default "raise"
        Rows with a missing value: raise a ``ValueError`` naming the argument
        and rows, drop them (counted in ``settings.rows``), or (``"group"``)
        make a missing protected attribute its own group ``"missing"``.
    min_group_size : int, default 30
        Groups with fewer (weighted) members are *small*: flagged in every
        table and left out of the headline (unless ``include_small_groups``,
        or unless fewer than two groups would remain).
    include_small_groups : bool, default False
        Keep the small groups in the headline (they stay flagged).
    reference_group : "largest", "best" or a group name, default "largest"
        The group ``disparities`` and ``group_view.ratio("to_reference")``
        compare with: the largest group, per rate the best group (highest
        selection rate and TPR, lowest FPR), or a named group.
    tolerance : float or (float, float), default (0.8, 1.25)
        A disparity ratio inside ``(low, high)`` is "within tolerance" (the
        four-fifths rule by default); a single t means ``(t, 1/t)``.
    group_metrics : mapping of str -> callable, optional
        More metrics per group for ``group_view``, e.g.
        ``{"accuracy": sklearn.metrics.accuracy_score}``: called as
        ``f(y_true_g, y_pred_g)`` (plus ``sample_weight=`` when given) on each
        group's rows and on all rows.
    classes : sequence, optional
        Every class of the task, when ``y_true`` may not show them all (a
        sample where one class never occurs). Without it the classes are those
        of ``y_true``, except that a ground truth showing a single class of 0/1
        (or boolean) labels is the binary task ``(0, 1)``, and a single string
        class with a string ``pos_label`` the task ``{class, pos_label}``
        (:ref:`def-fairness`). A positive class that never occurs leaves EOTP
        and BA undefined (``undefined_reasons``); the other metrics are
        returned.
    binary_task : {"positive", "both"}, default "positive"
        How a binary task is read, the option of every family
        (:ref:`def-binary-task`): its positive class ``pos_label`` (what
        ``average="auto"`` does for two classes), or ``"both"`` classes, which
        is ``average="macro"`` (Qian et al.'s convention). ``"both"`` with
        ``average="binary"`` raises ``ValueError``. ``.settings.binary_task``
        says which was read.

    Returns
    -------
    FairnessResult
        ``.overall`` (metric name -> value), ``.by_class``, ``.undefined``,
        ``.undefined_reasons``, ``.by_group``, ``.group_view``,
        ``.disparities``, ``.settings`` and ``.counts``.

    Raises
    ------
    ValueError
        Bad labels (see :mod:`biasamp.labels`), missing values with
        ``missing="raise"``, a single group, a length mismatch, ``pos_label``
        not a class, or every requested metric undefined.
    TypeError
        An argument of the wrong type.

    Warns
    -----
    UndefinedPairWarning
        When a group rate or a class-level metric is undefined and was left
        out, or a metric is undefined (see Notes).

    See Also
    --------
    ConfusionCounts : the count table, for batches and merging.
    fairness_from_counts : the metrics from a count table.
    biasamp.stats.bootstrap : confidence intervals by resampling the counts.

    Notes
    -----
    * ``average="macro"`` on a binary task is Qian et al.'s convention
      (calculated on both task labels and averaged): their Table 3 is
      reproduced with it (Examples). The default for two classes reports the
      positive class, as fairlearn and scikit-learn do.
    * DP, EOFP, EOTP are ``max - min`` over groups, which for two groups is the
      paper's absolute difference; DI is ``1 - min/max`` (the paper's
      ``1 - min(PPR_0/PPR_1, PPR_1/PPR_0)``), 0 when every rate is 0. The ratio
      itself (fairlearn's ``demographic_parity_ratio``) is
      ``result.disparate_impact_ratio`` and its four-fifths reading
      ``result.passes_four_fifths``.
    * FPSF weights by :math:`\Pr[g] = n_g/n` as printed in the paper (the
      authors' code weights by negatives; not copied).
    * BA: :math:`\bar g` is the first group (in the sorted group order) with
      the most positives of the class.
    * Undefined cases (:ref:`def-undefined`): a group with no positive of class k has no
      TPR and is left out of that class's EOTP; a group with no negative has
      no FPR and is left out of EOFP and FPSF. A class where fewer than two
      groups remain, or (BA) with no positive or never predicted, is
      undefined for that metric; a metric undefined for every headline class
      is NaN with its reason in ``undefined_reasons`` while the others are
      returned.
    * Values are fractions; the paper prints percentages.

    References
    ----------
    .. [1] S. Qian et al. "Are My Deep Learning Systems Fair? An Empirical
       Study of Fixed-Seed Training". NeurIPS 2021, Appendix A and C.

    Examples
    --------
    The running example of Qian et al. (Table 3): "sport"/"cook" predictions
    for 200 women and 200 men, averaged over both classes as in the paper.

    >>> import numpy as np
    >>> from biasamp.fairness import fairness_metrics
    >>> y_true = np.repeat(["sport", "cook", "sport", "cook"], 100)
    >>> y_pred = np.repeat(["sport", "cook"] * 4, [80, 20, 10, 90, 60, 40, 70, 30])
    >>> gender = np.repeat(["female", "male"], 200)
    >>> res = fairness_metrics(y_true, y_pred, sensitive_features=gender, average="macro")
    >>> {k: round(100 * v, 1) for k, v in res.overall.items()}
    {'DP': 20.0, 'DI': 33.6, 'SPSF': 10.0, 'FPSF': 20.0, 'EOFP': 40.0, 'EOTP': 40.0, 'BA': 10.1}
    >>> res.by_class["EOTP"].round(2).to_dict()
    {'cook': 0.6, 'sport': 0.2}

    The positive class only, with the disparity of each group's rate to the
    largest group:

    >>> res = fairness_metrics(y_true, y_pred, sensitive_features=gender, pos_label="sport")
    >>> round(res.overall["EOTP"], 2), round(res.overall["EOFP"], 2)
    (0.2, 0.6)
    >>> res.disparities.query("rate == 'tpr'")[["group", "ratio", "reading"]]
        group  ratio          reading
    2  female   1.00        reference
    3    male   0.75  below tolerance
    """
    opts, labels = FairnessOptions.call_of(locals())  # the declared options, checked; the labels
    return fairness_compute(fairness_count(labels, opts), opts)


def fairness_count(labels: dict, opts: FairnessOptions) -> tuple[_Prepared, ConfusionCounts]:
    """The counting pass of a call (the family's ``count`` hook): the labels prepared, the confusion counts.

    Parameters
    ----------
    labels : dict
        ``y_true``, ``y_pred``, ``sensitive_features`` and ``sample_weight``
        by name.
    opts : FairnessOptions
        The call's options (``average``, ``pos_label``, ``threshold``,
        ``soft``, ``missing``, ``classes`` and ``binary_task`` are read here).

    Returns
    -------
    prepared : Prepared
        The labels encoded, their rows selected, the groups and the headline.
    counts : ConfusionCounts
        The one-vs-rest confusion counts of every (group, class).
    """
    prep = _prepare(labels["y_true"], labels["y_pred"], labels["sensitive_features"], average=opts.average,
                    pos_label=opts.pos_label, threshold=opts.threshold, soft=opts.soft,
                    sample_weight=labels["sample_weight"], missing=opts.missing, classes=opts.classes,
                    binary_task=opts.binary_task)
    return prep, _counts_of(prep)


def fairness_compute(counted: tuple[_Prepared | CountsReading, ConfusionCounts],
                     opts: FairnessOptions) -> FairnessResult:
    """The result of a counted call (the family's ``compute`` hook): the metrics of its confusion counts.

    Small groups, the group view, the disparities and the headline follow
    from the counts and the options (:func:`fairness_from_counts` with the
    call's reading of the labels); ``group_metrics`` read the prepared
    labels themselves.

    Parameters
    ----------
    counted : tuple of (Prepared or CountsReading, ConfusionCounts)
        What :func:`fairness_count` returns, or a count table with its
        reading (:func:`counts_compute`: no prepared labels, so no
        ``group_metrics``).
    opts : FairnessOptions
        The call's options.

    Returns
    -------
    FairnessResult
        What :func:`fairness_metrics` returns.
    """
    prep, full = counted
    labels = None
    if opts.group_metrics:
        if not isinstance(prep, _Prepared):
            raise ValueError("group_metrics reads the labels: it needs fairness_metrics, not a count table")
        yt = np.asarray(prep.yt.classes)[prep.yt.codes] if prep.yt.codes is not None else prep.yt.dense
        if prep.yp.codes is not None:
            yp = np.asarray(prep.yp.classes)[prep.yp.codes]
        else:
            dense = prep.yp.dense
            assert dense is not None  # a LabelMatrix without codes holds its dense matrix
            yp = dense[:, prep.headline[0]] if prep.yp.soft and prep.average == "binary" else dense
        labels = (yt, yp, prep.gcodes, prep.weights)
    return _from_counts(full, opts.metric_names, average=prep.average, pos_label=prep.pos_label,
                        headline=prep.headline, min_group_size=opts.min_group_size,
                        include_small_groups=opts.include_small_groups, reference_group=opts.reference_group,
                        tolerance=opts.tolerance, rows=prep.rows, weighted=prep.weighted,
                        group_metrics=opts.group_metrics, labels=labels)


def _single(metric: str, y_true: Any, y_pred: Any, sensitive_features: Any, options: dict) -> float:
    res = fairness_metrics(y_true, y_pred, sensitive_features=sensitive_features, metrics=(metric,), **options)
    return res.overall[metric]


_SINGLE_DOC = r"""{title} ({abbr}) of Qian et al. (2021), averaged over classes.

    .. math::

        {formula}

    computed per class (one-vs-rest): the positive class's value for a binary
    task, else the unweighted mean over the classes where it is defined
    (``average=``).

    Parameters
    ----------
    y_true : labels of shape (n,) or (n, K)
        Ground truth (any input kind of :ref:`def-inputs`; multi-label indicator allowed).
    y_pred : labels of the same kind
        Predictions (hard, or probabilities: expected rates).
    sensitive_features : array-like of shape (n,) or DataFrame
        Protected group per instance; several columns give intersectional groups.
    **options
        Any option of :func:`~biasamp.fairness_metrics`: ``average``
        (``"binary"`` for two classes by default: the class ``pos_label``),
        ``pos_label``, ``threshold``, ``soft``, ``sample_weight``, ``missing``,
        ``min_group_size``, ``include_small_groups``.

    Returns
    -------
    float
        The metric, a fraction in [0, 1].

    Raises
    ------
    ValueError
        Bad input, a single group, or the metric undefined for every class.

    Warns
    -----
    UndefinedPairWarning
        When some classes or group rates were excluded. {undefined}

    See Also
    --------
    fairness_metrics : all seven metrics with the per-class and per-group tables.

    Notes
    -----
    With one-vs-rest counts per class k and group g:
    :math:`PPR_g = (TP+FP)_g/n_g` (rate of predicting k),
    :math:`TPR_g = TP_g/P_g`, :math:`FPR_g = FP_g/N_g` and
    :math:`\Pr[g] = n_g/n`. {notes} See :ref:`def-fairness` for every
    decision and :ref:`def-undefined` for undefined classes.

    References
    ----------
    .. [1] S. Qian et al. "Are My Deep Learning Systems Fair? An Empirical
       Study of Fixed-Seed Training". NeurIPS 2021, Appendix A.

    Examples
    --------
    The running example of Qian et al. (Table 3):

    >>> import numpy as np
    >>> from biasamp.fairness import {name}
    >>> y_true = np.repeat(["sport", "cook", "sport", "cook"], 100)
    >>> y_pred = np.repeat(["sport", "cook"] * 4, [80, 20, 10, 90, 60, 40, 70, 30])
    >>> gender = np.repeat(["female", "male"], 200)
    >>> round({name}(y_true, y_pred, sensitive_features=gender, average="macro"), 3)
    {expected}
    """


def demographic_parity(y_true: Any, y_pred: Any, *, sensitive_features: Any, **options: Any) -> float:
    return _single("DP", y_true, y_pred, sensitive_features, options)


def normalized_disparate_impact(y_true: Any, y_pred: Any, *, sensitive_features: Any, **options: Any) -> float:
    return _single("DI", y_true, y_pred, sensitive_features, options)


def statistical_parity_subgroup_fairness(y_true: Any, y_pred: Any, *, sensitive_features: Any, **options: Any) -> float:
    return _single("SPSF", y_true, y_pred, sensitive_features, options)


def false_positive_subgroup_fairness(y_true: Any, y_pred: Any, *, sensitive_features: Any, **options: Any) -> float:
    return _single("FPSF", y_true, y_pred, sensitive_features, options)


def equalized_odds_false_positive(y_true: Any, y_pred: Any, *, sensitive_features: Any, **options: Any) -> float:
    return _single("EOFP", y_true, y_pred, sensitive_features, options)


def equalized_odds_true_positive(y_true: Any, y_pred: Any, *, sensitive_features: Any, **options: Any) -> float:
    return _single("EOTP", y_true, y_pred, sensitive_features, options)


def group_bias_amplification(y_true: Labels, y_pred: Labels, *, sensitive_features: Labels, **options: Any) -> float:
    return _single("BA", y_true, y_pred, sensitive_features, options)


_SINGLE_NOTES = {
    "DP": "For two groups DP is the paper's :math:`|PPR_0 - PPR_1|`.",
    "DI": ("For two groups DI equals the paper's :math:`1 - \\min(PPR_0/PPR_1, PPR_1/PPR_0)`; the "
           "ratio :math:`\\min_g PPR_g / \\max_g PPR_g` is fairlearn's ``demographic_parity_ratio``, so "
           "DI is one minus it."),
    "SPSF": "PPR without an index is the rate over all instances.",
    "FPSF": ("The weights are :math:`n_g/n` as printed in the paper (the authors' code weights by "
             "negatives: not copied); a group without a defined FPR contributes no term and the "
             "weights are not renormalised."),
    "EOFP": "A group with no negative of class k has no FPR and leaves that class's comparison.",
    "EOTP": ("A group with no positive of class k has no TPR and leaves that class's comparison. For "
             "two classes, EOTP of class 0 is EOFP of class 1."),
    "BA": ("On ties, :math:`\\bar g` is the first group in sorted order. A class with no positive, or "
           "never predicted, is undefined."),
}

for _fn, _title, _abbr, _formula, _undef, _expected in [
    (demographic_parity, "Demographic parity", "DP", r"\mathrm{DP} = \max_g PPR_g - \min_g PPR_g", "", "0.2"),
    (normalized_disparate_impact, "Normalized disparate impact", "DI",
     r"\overline{\mathrm{DI}} = 1 - \min_g PPR_g / \max_g PPR_g \quad (0 \text{ when every } PPR_g = 0)", "", "0.336"),
    (statistical_parity_subgroup_fairness, "Statistical parity subgroup fairness", "SPSF",
     r"\mathrm{SPSF} = \sum_g \frac{n_g}{n}\,|PPR - PPR_g|", "", "0.1"),
    (false_positive_subgroup_fairness, "False positive subgroup fairness", "FPSF",
     r"\mathrm{FPSF} = \sum_g \frac{n_g}{n}\,|FPR - FPR_g| \quad (\text{weights } n_g/n \text{ as printed})",
     "A group with no negative of a class has no FPR and is left out.", "0.2"),
    (equalized_odds_false_positive, "Equalized odds, false-positive part", "EOFP",
     r"\mathrm{EOFP} = \max_g FPR_g - \min_g FPR_g",
     "A group with no negative of a class has no FPR and is left out.", "0.4"),
    (equalized_odds_true_positive, "Equalized odds, true-positive part", "EOTP",
     r"\mathrm{EOTP} = \max_g TPR_g - \min_g TPR_g",
     "A group with no positive of a class has no TPR and is left out.", "0.4"),
    (group_bias_amplification, "Bias amplification", "BA",
     r"\mathrm{BA} = \Big|\frac{(TP+FP)_{\bar g}}{TP+FP} - \frac{P_{\bar g}}{P}\Big|,\ \bar g = \arg\max_g P_g/P",
     "A class with no positive or never predicted is undefined.", "0.101"),
]:
    _fn.__doc__ = _SINGLE_DOC.format(
        title=_title, abbr=_abbr, formula=_formula, undefined=_undef, name=_fn.__name__, expected=_expected,
        notes=_SINGLE_NOTES[_abbr],
    )
del _fn, _title, _abbr, _formula, _undef, _expected
