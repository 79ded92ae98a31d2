r"""Differential-fairness bias amplification (Foulds, Islam, Keya & Pan 2020).

A binary outcome :math:`y \in \{0, 1\}` and intersectional groups :math:`s`
(every combination of the ``sensitive_features`` columns that occurs). With a
Dirichlet concentration :math:`c` (total over the two outcomes, so each
outcome gets :math:`\alpha = c/2`), the smoothed rates are

.. math::

    \tilde P(y \mid s) = \frac{N_{y,s} + c/2}{N_s + c},

and the differential fairness of an outcome is the largest log-ratio of a rate
between two groups:

.. math::

    \varepsilon = \max_{y \in \{0,1\}} \Big[\max_s \log \tilde P(y \mid s)
                   - \min_s \log \tilde P(y \mid s)\Big].

DF bias amplification is :math:`\varepsilon_{\text{pred}} - \varepsilon_{\text{true}}`:
ε of the model's predictions minus ε of the ground truth (Foulds et al. §6;
AIF360's ``df_bias_amplification``). Counting is the group fairness family's:
the per-group confusion counts (:class:`~biasamp.ConfusionCounts`) hold
:math:`N_s`, :math:`N_{1,s}` of the labels and of the predictions, so one
counting pass serves both families and the count-table bootstrap resamples
them alike (docs/definitions.md, "Differential fairness").

This module holds the family's definition: its options (:class:`DifferentialOptions`,
declared with their constraints, ``Family.options``), the result, the pure function of the
counts, the public function and its two hooks (``count``, ``compute``); how the other layers
serve it (the resampling plan, the streamed counting, the declaration) is
:mod:`biasamp.differential._family`.
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from biasamp._core.policy import (
    check_include_small_groups,
    check_min_group_size,
    small_groups,
    warn_small_groups,
)
from biasamp._core.policy_options import (
    DEFAULT_MIN_GROUP_SIZE,
    DEFAULT_THRESHOLD,
    MISSING,
    BinaryTaskOptions,
    GroupOptions,
    PolicyOptions,
)
from biasamp._core.results import ResultMixin, fmt
from biasamp._core.typing import BinaryTask, Labels, Missing, Soft, Weights
from biasamp._core.validation import Checked, option
from biasamp._engine.groups import ConfusionCounts, Prepared, counts_of, prepare
from biasamp.exceptions import BiasampWarning

__all__ = ["DFBiasAmpResult", "df_bias_amplification", "df_from_counts"]


#: The smallest concentration: the smoothed rate (c/2) / (N_s + c) of an outcome a group never has must stay a
#: normal float64 for every weighted group size N_s up to 2**53 (a subnormal c, 5e-324, made it 0: ε infinite)
MIN_CONCENTRATION = 1e-100


def _check_concentration(concentration: Any) -> float:
    """The Dirichlet concentration as a float, when finite and >= :data:`MIN_CONCENTRATION` (else a named error)."""
    if isinstance(concentration, bool) or not isinstance(concentration, numbers.Real):
        raise TypeError(f"concentration must be a positive number, got {type(concentration).__name__}")
    c = float(concentration)
    if not (np.isfinite(c) and c > 0):
        raise ValueError(
            f"concentration must be a finite number > 0, got {concentration!r} (without smoothing, ε is infinite "
            "as soon as one group never has an outcome; use a small concentration instead)"
        )
    if c < MIN_CONCENTRATION:
        raise ValueError(f"concentration must be at least {MIN_CONCENTRATION:g}, got {concentration!r} (a smaller "
                         "one rounds to no smoothing in float64: ε infinite as soon as one group never has an "
                         "outcome)")
    return c


@dataclass(frozen=True)
class DifferentialOptions(PolicyOptions, GroupOptions, BinaryTaskOptions):
    """Options of :func:`~biasamp.df_bias_amplification`."""

    concentration: float = option(1.0, Checked(_check_concentration, f"a finite number >= {MIN_CONCENTRATION:g}"),
                                  doc="Dirichlet smoothing of the group rates")
    pos_label: Any = option(1, doc="the positive outcome")
    missing: str = option("raise", *MISSING, doc="rows with a missing value: 'raise', 'drop' or 'group'")


@dataclass(frozen=True, eq=False, repr=False, kw_only=True)
class DFBiasAmpResult(ResultMixin):
    r"""Result of :func:`df_bias_amplification`.

    Attributes
    ----------
    value : float
        DF bias amplification :math:`\varepsilon_{\text{pred}} - \varepsilon_{\text{true}}`.
    epsilon_true, epsilon_pred : float
        Differential fairness ε of the ground truth and of the predictions.
    attained_true, attained_pred : tuple
        ``(y, s_i, s_j)``: the outcome and the two groups whose log-ratio is
        ε (the rate of ``y`` is highest in ``s_i``, lowest in ``s_j``).
    by_group : pandas.DataFrame
        Per intersectional group: ``n`` (weighted size), the smoothed rates
        ``p_true`` and ``p_pred`` of the positive outcome and the raw ones
        ``rate_true``, ``rate_pred``.
    concentration : float
        The Dirichlet concentration :math:`c`.
    pos_label : object
        The positive outcome (y = 1).
    feature_names : tuple
        The ``sensitive_features`` columns the groups intersect.
    small_groups : tuple
        The groups left out of ε (fewer than ``min_group_size`` members).

    Notes
    -----
    ``value`` > 0: the predictions separate the groups more than the labels
    do (the model amplifies the disparity); < 0: less. ε itself is always
    defined (smoothing), so ``n_undefined`` is 0.

    References
    ----------
    .. [1] J. R. Foulds, R. Islam, K. N. Keya, S. Pan. "An Intersectional
       Definition of Fairness". ICDE 2020.

    Examples
    --------
    >>> from biasamp import df_bias_amplification
    >>> res = df_bias_amplification([1, 0, 1, 0], [1, 1, 0, 0], sensitive_features=["a", "a", "b", "b"])
    >>> res.epsilon_true, round(res.epsilon_pred, 4)  # log((2 + .5) / 3) - log((0 + .5) / 3)
    (0.0, 1.6094)
    """

    value: float
    epsilon_true: float
    epsilon_pred: float
    attained_true: tuple
    attained_pred: tuple
    by_group: pd.DataFrame
    concentration: float
    pos_label: Any
    feature_names: tuple = ()
    small_groups: tuple = ()

    @property
    def n_undefined(self) -> int:
        """Always 0: a smoothed rate is defined for every group that occurs."""
        return 0

    def to_frame(self) -> pd.DataFrame:
        """The per-group table (the rates ε is computed from)."""
        return self.by_group.copy()

    def __repr__(self) -> str:
        def pair(att: tuple) -> str:
            y, hi, lo = att
            return "every group alike" if hi == lo else f"y={y!r}: {hi!r} vs {lo!r}"

        return (f"DFBiasAmpResult(value={fmt(self.value)}, epsilon_true={fmt(self.epsilon_true)} "
                f"[{pair(self.attained_true)}], epsilon_pred={fmt(self.epsilon_pred)} "
                f"[{pair(self.attained_pred)}], {len(self.by_group)} groups, concentration={self.concentration:g})")


def log_rates(n: np.ndarray, positives: np.ndarray, concentration: float) -> np.ndarray:
    r"""``(..., 2, S)``: :math:`\log \tilde P(y \mid s)` for y = 0, 1 from group sizes and positive
    counts ``(..., S)``."""
    half = concentration / 2.0
    denom = n + concentration
    return np.log(np.stack([(n - positives + half) / denom, (positives + half) / denom], axis=-2))


#: Mean weights within this factor of 1 smooth about as the unweighted rows do (no warning).
_WEIGHT_SCALE = 2.0


def warn_weight_scale(weights: np.ndarray | None, concentration: float, stacklevel: int = 2) -> None:
    """A ``BiasampWarning`` when the mean positive weight is far from 1 (outside [1/2, 2]).

    The smoothing adds ``concentration`` to *weighted* counts (frequency
    weights: a row of weight 3 counts as three rows), so it weighs as
    ``concentration / mean weight`` rows: weights rescaled to sum to 1 smooth
    every group towards 1/2 (docs/differential.md, "Weights").
    """
    if weights is None:
        return
    w = np.asarray(weights, dtype=np.float64)
    w = w[w > 0]
    if not len(w):
        return
    mean = float(w.mean())
    if 1 / _WEIGHT_SCALE <= mean <= _WEIGHT_SCALE:
        return
    warnings.warn(f"sample_weight averages {mean:.3g} per row: the smoothing adds concentration={concentration:g} "
                  f"to weighted counts, so it weighs as {concentration / mean:.3g} rows and ε changes with the "
                  "weights' scale; scale the weights to average 1 (frequency weights) to smooth as without weights, "
                  "or scale concentration with them (docs/differential.md)", BiasampWarning, stacklevel=stacklevel + 1)


def epsilon(logs: np.ndarray) -> np.ndarray:
    """ε of log rates ``(..., 2, S)``: the largest max − min over groups, over the two outcomes."""
    return (logs.max(axis=-1) - logs.min(axis=-1)).max(axis=-1)


def _attained(logs: np.ndarray, outcomes: tuple, groups: tuple) -> tuple:
    """``(y, s_i, s_j)`` attaining ε; ties go to the positive outcome, then to the first group."""
    spread = logs.max(axis=-1) - logs.min(axis=-1)
    y = 1 if spread[1] >= spread[0] else 0
    return outcomes[y], groups[int(np.argmax(logs[y]))], groups[int(np.argmin(logs[y]))]


def _group_index(groups: tuple, feature_names: tuple) -> pd.Index:
    """Intersectional groups (tuples) as a MultiIndex named by their features; one attribute as an Index."""
    if groups and all(isinstance(g, tuple) for g in groups):
        names = list(feature_names) if len(feature_names) == len(groups[0]) else None
        return pd.MultiIndex.from_tuples(groups, names=names)
    return pd.Index(groups, name=feature_names[0] if len(feature_names) == 1 else "group")


def binary_outcome(y_true: Any, y_pred: Any, pos_label: Any) -> tuple[Any, Any, Any]:
    """``(y_true, y_pred, pos_label)`` with an ``N x 1`` indicator read as the 1-D outcome it indicates.

    One rule for a binary task (:ref:`def-binary-task`): an indicator of one
    column is the positive outcome (1) against the rest (0), the same labels
    as the 1-D column of 0/1, so both give one ε. Anything else is returned
    as it is.
    """
    from biasamp._core.labels import to_numpy

    if y_true is None or y_pred is None:
        return y_true, y_pred, pos_label
    truth = to_numpy(y_true, "y_true")
    if truth.ndim != 2 or truth.shape[1] != 1:
        return y_true, y_pred, pos_label
    pred = to_numpy(y_pred, "y_pred")
    if pred.ndim == 2 and pred.shape[1] != 1:
        raise ValueError(f"y_pred has {pred.shape[1]} columns but y_true is an indicator of one column (the "
                         "positive outcome)")
    return truth[:, 0], pred.reshape(len(pred), -1)[:, 0], 1


def df_from_counts(counts: ConfusionCounts, *, concentration: float = 1.0, pos_label: Any = 1,
                   min_group_size: int = DEFAULT_MIN_GROUP_SIZE, include_small_groups: bool = False) -> DFBiasAmpResult:
    r"""DF bias amplification from per-group confusion counts of a binary task.

    Parameters
    ----------
    counts : ConfusionCounts
        Counts of a binary task (two classes), e.g.
        :meth:`ConfusionCounts.from_labels`; groups of size 0 are ignored.
    concentration : float, default 1.0
        Total Dirichlet concentration :math:`c` (:math:`\alpha = c/2` per outcome).
    pos_label : object, default 1
        The class that is the outcome y = 1.
    min_group_size, include_small_groups : int, bool
        Groups with fewer (weighted) members stay in the per-group table,
        flagged ``small``, and out of ε (:ref:`def-small-groups`).

    Returns
    -------
    DFBiasAmpResult

    Raises
    ------
    TypeError
        ``counts`` is not a :class:`~biasamp.ConfusionCounts`.
    ValueError
        Not two classes, a ``pos_label`` that is not a class, fewer than two
        groups with members, ``concentration`` not > 0.

    Notes
    -----
    :math:`\tilde P(y \mid s) = (N_{y,s} + c/2)/(N_s + c)` and
    :math:`\varepsilon = \max_y [\max_s \log \tilde P(y \mid s) - \min_s \log \tilde P(y \mid s)]`,
    on the labels (``positives``) and on the predictions (``predicted``).

    References
    ----------
    .. [1] J. R. Foulds, R. Islam, K. N. Keya, S. Pan. "An Intersectional
       Definition of Fairness". ICDE 2020.

    Examples
    --------
    >>> import numpy as np
    >>> from biasamp import ConfusionCounts, df_from_counts
    >>> counts = ConfusionCounts.from_labels([1, 1, 0, 0, 1, 0], [1, 1, 1, 0, 0, 0],
    ...                                      sensitive_features=["a", "a", "a", "b", "b", "b"])
    >>> round(df_from_counts(counts).epsilon_pred, 4)  # log((3 + .5) / (3 + 1)) - log((0 + .5) / (3 + 1)) = log 7
    1.9459
    """
    if not isinstance(counts, ConfusionCounts):
        raise TypeError(f"counts must be a ConfusionCounts, got {type(counts).__name__}")
    c = _check_concentration(concentration)
    classes = tuple(counts.classes)
    if len(classes) != 2:
        raise ValueError(f"counts: differential fairness needs a binary outcome, got {len(classes)} classes "
                         f"{list(classes)[:10]!r}")
    if pos_label not in classes:
        raise ValueError(f"pos_label={pos_label!r} is not a class of the outcome; classes are {list(classes)!r}")
    k = classes.index(pos_label)
    outcomes = (classes[1 - k], classes[k])
    n = np.asarray(counts.n, dtype=np.float64)
    present = n > 0
    if present.sum() < 2:
        raise ValueError("counts: differential fairness compares at least two groups; "
                         f"{int(present.sum())} group(s) have members")
    groups = tuple(g for g, ok in zip(counts.groups, present) if ok)
    n = n[present]
    pos_true = np.asarray(counts.positives, dtype=np.float64)[present, k]
    pos_pred = np.asarray(counts.predicted, dtype=np.float64)[present, k]
    logs_true, logs_pred = log_rates(n, pos_true, c), log_rates(n, pos_pred, c)
    small, excluded = small_groups(n, check_min_group_size(min_group_size),
                                   check_include_small_groups(include_small_groups))
    warn_small_groups(small, excluded, groups, n, min_group_size, include_small_groups, "differential fairness")
    kept = ~excluded
    kept_groups = tuple(g for g, ok in zip(groups, kept) if ok)
    eps_true, eps_pred = float(epsilon(logs_true[:, kept])), float(epsilon(logs_pred[:, kept]))
    by_group = pd.DataFrame({
        "n": n,
        "p_true": np.exp(logs_true[1]),
        "p_pred": np.exp(logs_pred[1]),
        "rate_true": pos_true / n,
        "rate_pred": pos_pred / n,
        "small": small,
    }, index=_group_index(groups, tuple(counts.feature_names or ())))
    return DFBiasAmpResult(value=eps_pred - eps_true, epsilon_true=eps_true, epsilon_pred=eps_pred,
                           attained_true=_attained(logs_true[:, kept], outcomes, kept_groups),
                           attained_pred=_attained(logs_pred[:, kept], outcomes, kept_groups), by_group=by_group,
                           concentration=c, pos_label=classes[k], feature_names=tuple(counts.feature_names or ()),
                           small_groups=tuple(g for g, e in zip(groups, excluded) if e))


def df_bias_amplification(
    y_true: Labels,
    y_pred: Labels,
    *,
    sensitive_features: Labels,
    concentration: float = 1.0,
    pos_label: Any = 1,
    sample_weight: Weights | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    soft: Soft = "threshold",
    missing: Missing = "raise",
    min_group_size: int = DEFAULT_MIN_GROUP_SIZE,
    include_small_groups: bool = False,
    binary_task: BinaryTask = "positive",
) -> DFBiasAmpResult:
    r"""Differential-fairness bias amplification :math:`\varepsilon_{\text{pred}} - \varepsilon_{\text{true}}`.

    Foulds et al.'s intersectional fairness: ε is the largest log-ratio of a
    smoothed outcome rate between two intersectional groups,

    .. math::

        \tilde P(y \mid s) = \frac{N_{y,s} + c/2}{N_s + c}, \qquad
        \varepsilon = \max_{y} \Big[\max_s \log \tilde P(y \mid s) - \min_s \log \tilde P(y \mid s)\Big],

    computed on the labels (:math:`\varepsilon_{\text{true}}`) and on the
    predictions (:math:`\varepsilon_{\text{pred}}`); the amplification is
    their difference (> 0: the model widens the gap between groups).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,)
        Binary ground truth and predictions (or probabilities of
        ``pos_label``: thresholded at ``threshold`` unless
        ``soft="expected"``).
    sensitive_features : array-like or DataFrame, keyword-only
        The protected attribute(s); several columns intersect (every
        combination that occurs is a group).
    concentration : float, default 1.0
        Total Dirichlet concentration :math:`c` > 0 over the two outcomes
        (AIF360's parameter; Foulds et al.'s :math:`\alpha = c/2`).
    pos_label : object, default 1
        The outcome y = 1.
    sample_weight : array-like of shape (n,), optional
        Non-negative row weights: every count becomes a weighted count.
    threshold : float, default 0.5
        Scores strictly above it are predicted positive.
    soft : {"threshold", "expected"}, default "threshold"
        ``"expected"``: probabilities count as expected positives.
    missing : {"raise", "drop", "group"}, default "raise"
        Rows with a missing value (as in :func:`fairness_metrics`).
    min_group_size : int, default 30
        Groups with fewer (weighted) members are small: they stay in the
        per-group table, flagged ``small``, and out of ε, with a
        ``SmallGroupWarning``, unless ``include_small_groups`` or fewer than
        two larger groups would remain (:ref:`def-small-groups`).
    include_small_groups : bool, default False
        Keep the small groups in ε.
    binary_task : {"positive", "both"}, default "positive"
        The option of every family for a binary task (:ref:`def-binary-task`),
        accepted and checked here for one vocabulary, but it changes nothing:
        ε is by definition a maximum over *both* outcomes y ∈ {0, 1}, so the
        positive reading and the one-hot reading are the same number. An
        ``N x 1`` indicator ``y_true`` is the 1-D outcome it indicates (the
        same ε as the 1-D column); ``pos_label`` names the outcome y = 1.

    Returns
    -------
    DFBiasAmpResult
        ``.value``, ``.epsilon_true``, ``.epsilon_pred``, the groups that attain
        each ε and the per-group table (``to_frame()``).

    Raises
    ------
    ValueError
        A non-binary outcome, fewer than two groups, a ``pos_label`` that is
        not a class, ``concentration`` not > 0.

    See Also
    --------
    biasamp.bootstrap : intervals (``"DF amplification"``, ``"epsilon_true"``, ``"epsilon_pred"``).
    biasamp.fairness_metrics : the group fairness metrics of the same counts.

    Notes
    -----
    AIF360 gives a group whose labels are all of one class the whole
    concentration on that class (:math:`\alpha = c` instead of :math:`c/2`);
    biasamp smooths every group alike (docs/definitions.md,
    "Differential fairness").

    References
    ----------
    .. [1] J. R. Foulds, R. Islam, K. N. Keya, S. Pan. "An Intersectional
       Definition of Fairness". ICDE 2020.

    Examples
    --------
    >>> from biasamp import df_bias_amplification
    >>> y_true = [1, 1, 0, 0, 1, 1, 0, 0]
    >>> y_pred = [1, 1, 1, 0, 1, 0, 0, 0]
    >>> s = ["a", "a", "a", "a", "b", "b", "b", "b"]
    >>> res = df_bias_amplification(y_true, y_pred, sensitive_features=s)
    >>> round(res.epsilon_true, 4), round(res.epsilon_pred, 4), round(res.value, 4)  # log(.7 / .3)
    (0.0, 0.8473, 0.8473)
    >>> res.attained_pred
    (1, 'a', 'b')
    """
    opts, labels = DifferentialOptions.call_of(locals())  # the declared options, checked; the labels
    return df_compute(df_count(labels, opts), opts)


def df_count(labels: dict, opts: DifferentialOptions) -> tuple[Prepared, ConfusionCounts]:
    """The counting pass of a call (the family's ``count`` hook): the labels prepared, the confusion counts.

    ``labels``: ``y_true``, ``y_pred``, ``sensitive_features``,
    ``sample_weight`` by name. Warns when the weights' scale changes the
    smoothing (:func:`warn_weight_scale`).
    """
    y_true, y_pred, pos_label = binary_outcome(labels["y_true"], labels["y_pred"], opts.pos_label)
    prep = prepare(y_true, y_pred, labels["sensitive_features"], average="binary", pos_label=pos_label,
                   threshold=opts.threshold, soft=opts.soft, sample_weight=labels["sample_weight"],
                   missing=opts.missing)
    warn_weight_scale(prep.weights, opts.concentration, stacklevel=4)
    return prep, counts_of(prep)


def df_compute(counted: tuple[Prepared, ConfusionCounts], opts: DifferentialOptions) -> DFBiasAmpResult:
    """The result of a counted call (the family's ``compute`` hook): :func:`df_from_counts` with its options."""
    prep, counts = counted
    return df_from_counts(counts, concentration=opts.concentration, pos_label=prep.pos_label,
                          min_group_size=opts.min_group_size, include_small_groups=opts.include_small_groups)
