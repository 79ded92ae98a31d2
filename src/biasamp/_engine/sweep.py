"""Threshold sweeps: a count table at every point of a grid of thresholds, from one sort per score column.

:func:`biasamp.threshold_curve` turns scores into hard predictions at every
point of a grid (``score > tau``) and evaluates a count-based metric there.
Nothing is recounted per threshold: each score column is sorted once
(:class:`Column`), the grid's thresholds cut the sorted column into
segments, each segment's rows are summed once, and the counts above every
cut are the cumulative sums of the segments from the top.

This module holds that machinery and the protocol a family declares to be
swept (:class:`ThresholdSweep`): a *kernel* takes the curve's arguments by
label role (:class:`SweepInputs`) and returns its statistics at every grid
point (:class:`SweepCurve`), evaluated on the stack of count tables by the
family's own pure functions. The kernels live in their family's package
(``cooccurrence/_sweep.py``, ``fairness/_sweep.py``); the engine knows no
family.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import sparse

from biasamp._core.labels import LabelMatrix, _align_columns, _as_array, _check_finite

__all__ = [
    "DEFAULT_POINTS", "Column", "SweepCurve", "SweepInputs", "ThresholdSweep", "closest_cut", "grid_of", "hard",
    "label_taus", "predicted", "score_matrix", "totals",
]

#: points of the default threshold grid
DEFAULT_POINTS = 21


# --------------------------------------------------------------------------- #
# the protocol a family declares
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class SweepInputs:
    """The arguments of a threshold curve, by label role, for a family's sweep kernel.

    ``attr``, ``task``, the scores of either side, the grid (``thresholds``
    or ``rates``, at most one given), the hard predictions of a side without
    scores, the training labels, the statistic columns the curve computes
    (the family's headline statistics whose prediction roles are given) and
    the function's options the sweep honours (:attr:`ThresholdSweep.options`).
    The caller has checked the combinations that hold for every family (some
    scores, not both scores and predictions of a side, both training labels
    or neither); the kernel checks the rest.
    """

    attr: Any
    task: Any
    task_scores: Any = None
    attr_scores: Any = None
    thresholds: Any = None
    rates: Any = None
    attr_pred: Any = None
    task_pred: Any = None
    attr_train: Any = None
    task_train: Any = None
    statistics: tuple[str, ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SweepCurve:
    """What a sweep kernel returns: the statistics at every grid point.

    ``grid`` is ``"threshold"`` or ``"rate"`` and ``values`` its points (G,);
    ``results[column] = (value (G,), number undefined (G,), total)``: the
    statistic at every point, with the number of pairs or classes left out as
    undefined there out of ``total``; ``thresholds`` the score threshold of
    every scored label at every point (columns ``"<side>:<class>"``);
    ``predictions(j)`` the hard predictions by role (``task_pred``,
    ``attr_pred``) at grid point ``j``, on which the bootstrap of that point
    runs.
    """

    grid: str
    values: np.ndarray
    results: dict[str, tuple[np.ndarray, np.ndarray, int]]
    thresholds: dict[str, np.ndarray]
    predictions: Callable[[int], dict[str, Any]]


@dataclass(frozen=True)
class ThresholdSweep:
    """A family's threshold sweep: ``kernel(inputs) -> SweepCurve`` and the options it honours.

    ``options``: the keyword options of the family's function the sweep
    applies (e.g. the fairness metrics' ``average``); any other option is an
    error of :func:`biasamp.threshold_curve`.
    """

    kernel: Callable[[SweepInputs], SweepCurve]
    options: tuple[str, ...] = ()


# --------------------------------------------------------------------------- #
# the grid
# --------------------------------------------------------------------------- #
def closest_cut(ascending: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Thresholds making about ``k`` of the sorted scores ``ascending`` positive (``score > threshold``).

    For each target count in ``k`` (any shape): the candidate thresholds are
    the unique scores and :math:`-\\infty`; the one whose positive count is
    closest to the target wins, the one with fewer positives on a tie in
    closeness (:ref:`def-calibration`). Returns ``(thresholds, positives)``,
    both shaped like ``k``. One binary search per target on the sorted column.
    """
    n = len(ascending)
    uniq = np.unique(ascending)
    pos = n - np.searchsorted(ascending, uniq, side="right")  # #(score > u), decreasing in u
    cand = np.concatenate([uniq[::-1], [-np.inf]])  # by increasing positives
    cand_pos = np.concatenate([pos[::-1], [n]])
    k = np.asarray(k, dtype=np.int64)
    hi = np.minimum(np.searchsorted(cand_pos, k, side="left"), len(cand) - 1)  # first with >= k positives
    lo = np.maximum(hi - 1, 0)  # the last with fewer
    take_hi = (np.abs(cand_pos[hi] - k) < np.abs(cand_pos[lo] - k)) | (lo == hi)
    best = np.where(take_hi, hi, lo)
    return cand[best], cand_pos[best]


def grid_of(thresholds: Any, rates: Any, score_arrays: Sequence[np.ndarray]) -> tuple[str, np.ndarray]:
    """``(grid, values)``: the grid of thresholds or of positive rates, checked (default: 21 thresholds)."""
    if thresholds is not None and rates is not None:
        raise ValueError("give thresholds or rates, not both")
    if rates is not None:
        values = np.atleast_1d(np.asarray(rates, dtype=np.float64))
        if values.ndim != 1 or len(values) == 0 or not np.isfinite(values).all() or (values < 0).any() \
                or (values > 1).any():
            raise ValueError("rates must be a non-empty 1-D sequence of positive rates within [0, 1]")
        return "rate", values
    if thresholds is None:
        lo = min(float(s.min()) for s in score_arrays)
        hi = max(float(s.max()) for s in score_arrays)
        return "threshold", (np.linspace(0.0, 1.0, DEFAULT_POINTS) if lo >= 0 and hi <= 1
                             else np.linspace(lo, hi, DEFAULT_POINTS))
    try:
        values = np.atleast_1d(np.asarray(thresholds, dtype=np.float64))
    except (TypeError, ValueError):
        raise TypeError(f"thresholds must be numbers, got {thresholds!r}") from None
    if values.ndim != 1 or len(values) == 0 or not np.isfinite(values).all():
        raise ValueError("thresholds must be a non-empty 1-D sequence of finite numbers")
    return "threshold", values


def score_matrix(scores: Any, name: str, labels: LabelMatrix, labels_name: str) -> tuple[np.ndarray, bool]:
    """``(N x K score matrix, binary_1d)``: a 1-D score of a binary {0, 1} label is P(class 1)."""
    arr, cols = _as_array(scores, name)
    _check_finite(arr, name)
    if arr.dtype.kind not in "fiub":
        raise TypeError(f"{name} must be numeric scores, got dtype {arr.dtype}")
    if arr.shape[0] != labels.n_rows:
        raise ValueError(f"length mismatch: {name} has {arr.shape[0]} rows, {labels_name} has {labels.n_rows}")
    arr = arr.astype(np.float64, copy=False)
    if arr.ndim == 1:
        if set(labels.classes) != {0, 1}:
            raise ValueError(
                f"{name} is 1-D: a single score is read as P(class 1) of a binary 0/1 {labels_name}, but its "
                f"classes are {list(labels.classes)[:10]!r}; pass one score column per class")
        return arr[:, None], True
    if arr.shape[1] != labels.n_classes:
        raise ValueError(f"{name} has {arr.shape[1]} columns but {labels_name} has {labels.n_classes} classes "
                         f"{list(labels.classes)[:20]!r}")
    return _align_columns(arr, cols, list(labels.classes), name), False


# --------------------------------------------------------------------------- #
# counts above every cut: one sort per score column
# --------------------------------------------------------------------------- #
def totals(m: LabelMatrix) -> np.ndarray:
    """``(K,)`` rows of each class of a 0/1 label matrix (exact integers)."""
    if m.codes is not None:
        return np.bincount(m.codes, minlength=m.n_classes).astype(np.int64)
    return np.asarray(m.dense != 0).sum(axis=0).astype(np.int64)


def _group_sum(m: LabelMatrix, seg: np.ndarray, n_seg: int) -> np.ndarray:
    """``(n_seg, K)`` sums of the rows of a 0/1 label matrix per segment id (exact integers)."""
    k = m.n_classes
    if m.codes is not None:
        return np.bincount(seg * k + m.codes, minlength=n_seg * k).reshape(n_seg, k).astype(np.int64)
    rows = sparse.csr_matrix((np.ones(len(seg), dtype=np.int64), (seg, np.arange(len(seg)))),
                             shape=(n_seg, len(seg)))
    return np.asarray(rows @ np.asarray(m.dense != 0, dtype=np.int64))


@dataclass(frozen=True)
class Column:
    """One score column, sorted once, and its cut positions on the grid."""

    order: np.ndarray  # argsort of the scores (ascending)
    tau: np.ndarray  # (G,) the threshold at each grid point
    cut: np.ndarray  # (G,) sorted position of the first positive row (scores > tau)

    @classmethod
    def build(cls, scores: np.ndarray, grid: str, values: np.ndarray) -> Column:
        order = np.argsort(scores)  # the one sort of this column (ties: any order, a cut never splits them)
        ascending = scores[order]
        n = len(scores)
        if grid == "threshold":
            tau = values
        else:
            tau, _ = closest_cut(ascending, np.rint(n * values).astype(np.int64))
        return cls(order, tau, np.searchsorted(ascending, tau, side="right"))

    def above(self, m: LabelMatrix) -> np.ndarray:
        """``(G, K)``: per grid point, the column sums of ``m`` over the rows with ``score > tau``.

        Rows are put in segments between consecutive cut positions along the
        sorted scores; each segment is summed once and the counts above every
        cut are the cumulative sums of the segments from the top.
        """
        n = len(self.order)
        cuts = np.sort(self.cut)
        bounds = np.concatenate([[0], cuts, [n]])
        seg = np.empty(n, dtype=np.intp)  # segment of each row: number of cuts at or below its sorted position
        seg[self.order] = np.repeat(np.arange(len(cuts) + 1), np.diff(bounds))
        per_seg = _group_sum(m, seg, len(cuts) + 1)
        suffix = np.cumsum(per_seg[::-1], axis=0)[::-1]  # suffix[j] = rows in segments j, j+1, ...
        above_sorted = suffix[1:]  # cut j (sorted): the rows at positions >= cuts[j]
        out = np.empty_like(above_sorted)
        out[np.argsort(self.cut, kind="stable")] = above_sorted
        return out


def predicted(scores: np.ndarray, binary: bool, grid: str, values: np.ndarray,
              weights: LabelMatrix) -> tuple[np.ndarray, np.ndarray]:
    """``(G, K_w, K)``: per grid point, per class of ``weights`` and per class, #(w, predicted).

    A class is predicted where its score exceeds the grid point's threshold;
    for a 1-D binary score (``binary``) that is class 1, and class 0 the
    rest. Also returns the thresholds ``(G, K_scored)`` of the scored columns.
    """
    cols = [Column.build(scores[:, j], grid, values) for j in range(scores.shape[1])]
    counts = np.stack([c.above(weights) for c in cols], axis=-1)  # (G, K_w, K_scored)
    taus = np.stack([c.tau for c in cols], axis=-1)
    if binary:
        counts = np.concatenate([totals(weights)[None, :, None] - counts, counts], axis=-1)
    return counts, taus


def hard(scores: np.ndarray, binary: bool, taus: np.ndarray) -> np.ndarray:
    """Hard predictions at one grid point (for the interval's bootstrap): ``scores > tau``."""
    out = (scores > taus[None, :]).astype(np.int8)
    return out[:, 0] if binary else out


def label_taus(m: LabelMatrix, taus: np.ndarray, binary: bool, side: str) -> dict[str, np.ndarray]:
    """Threshold columns ``"<side>:<class>"`` of the scored labels (a 1-D binary score: class 1's)."""
    names = [m.classes[-1]] if binary else list(m.classes)
    return {f"{side}:{c}": taus[:, j] for j, c in enumerate(names)}
