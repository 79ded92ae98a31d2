"""Threshold calibration of score outputs (Wang & Russakovsky 2021, §3.2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from biasamp._core.labels import _as_array, _as_pandas, _check_finite, encode_labels, to_numpy
from biasamp._core.results import ResultMixin
from biasamp._engine.sweep import closest_cut  # the calibration rule, shared with threshold_curve's rate grid

__all__ = ["Thresholds", "calibrate_thresholds"]


@dataclass(frozen=True, eq=False, repr=False)
class Thresholds(ResultMixin):
    r"""Per-label decision thresholds from :func:`calibrate_thresholds`.

    Attributes
    ----------
    thresholds : pandas.Series
        Threshold per label; a score is positive when ``score > threshold``.
    target_rates : pandas.Series
        The positive rate each threshold aims at.
    achieved_rates : pandas.Series
        The positive rate the threshold gives on the validation scores
        (differs from the target only when tied scores make it unreachable).

    Notes
    -----
    A score :math:`s` of label :math:`l` is predicted positive when
    :math:`s > \tau_l` (:ref:`def-calibration`). There is no single
    ``value``: the result holds one threshold per label (``to_frame()``
    lists them with their rates), not a metric.

    References
    ----------
    .. [1] A. Wang, O. Russakovsky. "Directional Bias Amplification". ICML 2021, §3.2.

    Examples
    --------
    >>> from biasamp import calibrate_thresholds
    >>> th = calibrate_thresholds([[0.1, 0.9], [0.4, 0.2], [0.35, 0.6], [0.8, 0.7]], rates=[0.5, 0.25])
    >>> th.to_frame()["threshold"].tolist()
    [0.35, 0.7]
    >>> th.apply([[0.5, 0.5], [0.3, 0.95]]).tolist()
    [[1, 0], [0, 1]]
    """

    thresholds: pd.Series
    target_rates: pd.Series
    achieved_rates: pd.Series

    def apply(self, scores: Any) -> np.ndarray:
        """Hard 0/1 predictions ``scores > threshold`` (column-wise)."""
        arr, _ = _as_array(scores, "scores")
        _check_finite(arr, "scores")
        arr = arr.reshape(-1, 1) if arr.ndim == 1 else arr
        if arr.shape[1] != len(self.thresholds):
            raise ValueError(f"scores has {arr.shape[1]} columns, expected {len(self.thresholds)} (one per label)")
        out = (arr > self.thresholds.to_numpy()[None, :]).astype(np.int8)
        return out[:, 0] if np.ndim(scores) == 1 else out

    def to_frame(self) -> pd.DataFrame:
        """One row per label: ``threshold``, ``target_rate``, ``achieved_rate``."""
        return pd.DataFrame({"threshold": self.thresholds, "target_rate": self.target_rates,
                             "achieved_rate": self.achieved_rates})

    def __repr__(self) -> str:
        return f"Thresholds(\n{self.to_frame().to_string(max_rows=20)}\n)"


def calibrate_thresholds(val_scores: Any, *, val_labels: Any = None, rates: Any = None) -> Thresholds:
    r"""Choose per-label thresholds so that predictions are well calibrated.

    For each label :math:`l` with target positive rate :math:`p_l`, choose the
    threshold :math:`\tau_l` that makes :math:`k_l = \operatorname{round}(N_{val}\,p_l)`
    validation scores strictly greater than :math:`\tau_l` (Wang & Russakovsky
    2021, §3.2: "the :math:`Np` highest-scoring are predicted positive").

    Parameters
    ----------
    val_scores : array-like of shape (n,) or (n, L)
        Validation scores (any real numbers: logits or probabilities).
    val_labels : labels of shape (n_labels, L) or (n_labels,), optional
        Labels whose positive rate per column gives :math:`p_l`: usually the
        *training* labels (the paper's choice). Any number of rows.
    rates : float or array-like of shape (L,), optional
        The target positive rates directly. Exactly one of ``val_labels`` and
        ``rates`` must be given.

    Returns
    -------
    Thresholds
        ``.thresholds`` (a Series per label) and ``.apply(test_scores)``.

    Raises
    ------
    ValueError
        Non-finite or non-numeric scores, neither or both of ``val_labels``
        and ``rates``, labels whose shape does not match the scores, or rates
        outside [0, 1].

    Notes
    -----
    The threshold is the :math:`(k+1)`-th highest score, so that exactly
    :math:`k` scores exceed it. When scores tie across that boundary no
    threshold gives exactly :math:`k`; the candidates are then the unique
    scores, and the one whose positive count is closest to :math:`k` is taken
    (on a tie in closeness, the one with fewer positives). :math:`k = N` gives
    :math:`-\infty`; :math:`k = 0` gives the maximum score.

    References
    ----------
    .. [1] A. Wang, O. Russakovsky. "Directional Bias Amplification". ICML 2021, §3.2.

    Examples
    --------
    >>> from biasamp import calibrate_thresholds
    >>> th = calibrate_thresholds([0.1, 0.4, 0.35, 0.8], rates=0.5)
    >>> float(th.thresholds.iloc[0])
    0.35
    >>> th.apply([0.2, 0.5, 0.9]).tolist()
    [0, 1, 1]
    """
    scores, cols = _as_array(val_scores, "val_scores")
    _check_finite(scores, "val_scores")
    if scores.dtype.kind not in "fiub":
        raise TypeError(f"val_scores must be numeric, got dtype {scores.dtype}")
    scores = scores.reshape(-1, 1) if scores.ndim == 1 else scores.astype(np.float64, copy=False)
    n, n_labels = scores.shape
    names = cols if cols is not None else list(range(n_labels))
    if (val_labels is None) == (rates is None):
        raise ValueError("give exactly one of val_labels (to take positive rates from) and rates")
    if rates is not None:
        p = np.broadcast_to(np.asarray(rates, dtype=np.float64), (n_labels,)).copy()
        if not np.isfinite(p).all() or (p < 0).any() or (p > 1).any():
            raise ValueError("rates must be finite and within [0, 1]")
    else:
        lab = _as_pandas(val_labels)
        lab = lab if isinstance(lab, pd.DataFrame) else to_numpy(lab, "val_labels")
        if isinstance(lab, np.ndarray) and lab.ndim == 1:  # a DataFrame is 2-D already
            lab = lab.reshape(-1, 1)
        enc = encode_labels({"val_labels": lab})["val_labels"]
        if enc.n_classes != n_labels:
            raise ValueError(f"val_labels has {enc.n_classes} columns but val_scores has {n_labels}")
        p = enc.to_dense().mean(axis=0)
    k = np.rint(n * p).astype(np.int64)
    ascending = np.sort(scores, axis=0)
    thresholds = np.empty(n_labels)
    achieved = np.empty(n_labels)
    for j in range(n_labels):  # per label: O(log n) searches on an already sorted column
        tau, positives = closest_cut(ascending[:, j], k[j:j + 1])
        thresholds[j], achieved[j] = tau[0], positives[0] / n
    idx = pd.Index(names, name="label")
    return Thresholds(pd.Series(thresholds, index=idx), pd.Series(p, index=idx), pd.Series(achieved, index=idx))
