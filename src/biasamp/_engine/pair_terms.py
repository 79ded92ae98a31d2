"""The per-pair terms of the co-occurrence-table statistics, shared by the count families that read them.

BiasAmp→ and Multi→ read a pair's change ``Δ`` and its sign ``y`` (``sign(n·#(a,t) − #a·#t)``, exact in
integers); BiasAmp_MALS and Multi_MALS a pair's indicator ``1[b_train > 1/|A|]`` and change of share. With
no training set the terms are cross-fitted over two folds of the test rows: a pair's value is the mean of
its defined ways, and a way counts a group only when it is not small in the fold that gives the sign or
indicator (docs/definitions.md, "No training set"). Functions of count arrays with any leading axes
(stacked replicate tables), no labels.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from biasamp._core.policy import small_groups

__all__ = ["crossfit_mean", "fold_keep", "mals_crossfit_arrays", "sign_of"]


def _as_count(counts: Any) -> np.ndarray:
    """Counts as exact integers when they are integral (unweighted, or integer weights), else float64.

    Integer weights therefore give exactly the integers that repeating the
    rows would give, and the exact comparisons below stay exact.
    """
    x = np.asarray(counts, dtype=np.float64)
    r = np.rint(x)
    if np.array_equal(r, x) and (x.size == 0 or np.abs(x).max() < 2.0**62):
        return r.astype(np.int64)
    return x


_REL_TOL = 1e-12  # relative tolerance of comparisons between non-integral (weighted) counts


def _greater(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``x > y``: exact for integers; for weighted (non-integral) counts, beyond a relative rounding tolerance."""
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype.kind in "iub" and y.dtype.kind in "iub":
        return x > y
    return (x - y) > _REL_TOL * np.maximum(np.abs(x), np.abs(y))


def sign_of(n: Any, both: Any, attr: Any, task: Any) -> np.ndarray:
    """``sign(n·#(a,t) − #a·#t)`` over any leading axes, exactly.

    ``n`` has shape ``(...)``, ``both`` ``(..., K_A, K_T)``, ``attr``
    ``(..., K_A)`` and ``task`` ``(..., K_T)`` (stacked replicate tables
    included). Integral counts are compared in integers; others in float64
    with a relative tolerance of 1e-12.
    """
    n = _as_count(n)
    at = _as_count(both)
    a = _as_count(attr)[..., :, None]
    t = _as_count(task)[..., None, :]
    if all(x.dtype.kind == "i" for x in (n, at, a, t)):
        n = n[..., None, None]
        if n.size and int(n.max()) > 2**31:  # n * #(a,t) could overflow int64: use Python integers
            n, at, a, t = n.astype(object), at.astype(object), a.astype(object), t.astype(object)
        return np.sign(n * at - a * t).astype(np.int8)
    x = np.asarray(n, dtype=np.float64)[..., None, None] * at.astype(np.float64)
    y = a.astype(np.float64) * t.astype(np.float64)
    return (_greater(x, y).astype(np.int8) - _greater(y, x).astype(np.int8)).astype(np.int8)


def _direction_arrays(y: np.ndarray | int, both: np.ndarray, support: np.ndarray, predicted: np.ndarray):
    """``(p_true, p_pred, delta, contribution, undefined)`` of one direction, over any leading axes.

    ``both`` = #(a, t), ``support`` = #a (A→T) or #t (T→A) broadcast to the
    pairs, ``predicted`` = #(a, t̂) (A→T) or #(â, t) (T→A).
    """
    undefined = support <= 0
    with np.errstate(invalid="ignore", divide="ignore"):
        safe = np.where(undefined, 1.0, support)
        p_true = np.where(undefined, np.nan, both / safe)
        p_pred = np.where(undefined, np.nan, predicted / safe)
    delta = p_pred - p_true
    return p_true, p_pred, delta, y * delta, undefined


def crossfit_mean(term0: np.ndarray, term1: np.ndarray, undefined0: np.ndarray,
                  undefined1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per pair, the mean of its defined ways: ``(value, undefined)`` (value NaN exactly where neither is defined).

    ``term0`` is the way "signs from fold 0, change on fold 1", ``term1`` the
    reverse; a pair whose two ways are defined gets their average, a pair with
    one defined way gets that one (docs/definitions.md, "No training set").
    """
    ways = (~undefined0).astype(np.int64) + (~undefined1).astype(np.int64)
    total = np.where(undefined0, 0.0, term0) + np.where(undefined1, 0.0, term1)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.where(ways > 0, total / np.maximum(ways, 1), np.nan) + 0.0  # + 0.0: no -0.0
    return value, ways == 0


def _mals_arrays(at: np.ndarray, pp: np.ndarray):
    """BiasAmp_MALS terms from exact training counts ``at`` (K_A x K_T) and predicted counts ``pp`` (..., K_A, K_T).

    Returns ``(bias_train, bias_pred, indicator, delta, contribution, undefined, n_tasks)``;
    ``contribution`` is NaN exactly where ``undefined``.
    """
    n_attr = at.shape[0]
    col = at.sum(axis=0)  # Σ_a' #(a', t)
    task_defined = col > 0
    indicator = _greater(n_attr * at, col[None, :]) & task_defined[None, :]  # bias_train > 1/|A|, exactly
    pcol = pp.sum(axis=-2)[..., None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        bias_train = np.where(task_defined[None, :], at / np.where(col > 0, col, 1)[None, :], np.nan)
        bias_pred = np.where(pcol > 0, pp / np.where(pcol > 0, pcol, 1), np.nan)
    delta = bias_pred - bias_train
    undefined = ~task_defined[None, :] | (indicator & (pcol <= 0))
    contribution = np.where(undefined, np.nan, np.where(indicator, delta, 0.0))
    return bias_train, bias_pred, indicator, delta, contribution, undefined, int(task_defined.sum())


def mals_crossfit_arrays(at0: np.ndarray, at1: np.ndarray, pp0: np.ndarray, pp1: np.ndarray,
                         indicators: tuple | None = None, keep: tuple | None = None):
    """Cross-fitted BiasAmp_MALS terms from two folds' counts (any leading axes before ``(K_A, K_T)``).

    ``at_f`` = #(a, t) of fold f's ground truth, ``pp_f`` = #(â, t̂) of its
    predictions. Way f is ``1[b_train^(f) > 1/|A|] · (b_pred − b_train)`` of
    the other fold: defined when fold f's task has a positive (its indicator
    is defined) and, where the indicator is 1, the other fold's change is
    defined. Returns ``(indicator0, indicator1, contribution, undefined,
    n_tasks)``: ``contribution`` is the mean of a pair's defined ways (NaN
    exactly where ``undefined``), ``n_tasks`` the tasks with a positive on both
    folds together (``|T|``). ``indicators`` = ``(at0, at1)`` of other
    tables: the indicators (and whether they are defined) come from these
    instead (the bootstrap holds the estimate's indicators fixed). ``keep`` =
    ``(keep0, keep1)``, boolean and broadcastable to the tables: whether way f
    counts a pair (its group is large enough *in fold f*, :func:`fold_keep`); a
    pair left out of a way adds 0 to it, its way still counted in the mean.
    """
    n_attr = at0.shape[-2]

    def indicator(at):
        col = at.sum(axis=-2, keepdims=True)
        return _greater(n_attr * at, col) & (col > 0), np.broadcast_to(col > 0, at.shape)

    def change(at, pp):
        col, pcol = at.sum(axis=-2, keepdims=True), pp.sum(axis=-2, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            bias_train = np.where(col > 0, at / np.where(col > 0, col, 1), np.nan)
            bias_pred = np.where(pcol > 0, pp / np.where(pcol > 0, pcol, 1), np.nan)
        return bias_pred - bias_train

    sign0, sign1 = (at0, at1) if indicators is None else indicators
    (i0, known0), (i1, known1) = indicator(sign0), indicator(sign1)
    c1, c0 = change(at1, pp1), change(at0, pp0)  # way 0 reads fold 1's change, way 1 fold 0's
    on0, on1 = (i0, i1) if keep is None else (i0 & keep[0], i1 & keep[1])
    defined0 = known0 & (~on0 | np.isfinite(c1))
    defined1 = known1 & (~on1 | np.isfinite(c0))
    contribution, undefined = crossfit_mean(np.where(on0, c1, 0.0), np.where(on1, c0, 0.0), ~defined0, ~defined1)
    n_tasks = ((at0 + at1).sum(axis=-2) > 0).sum(axis=-1)
    return i0, i1, contribution, undefined, n_tasks


def fold_keep(sizes: Sequence[np.ndarray], min_group_size: int,
              include_small_groups: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per way f, the groups it counts: those not small *in fold f* (at least ``min_group_size / 2`` members).

    The small-group rule of a cross-fitted share statistic (BiasAmp_MALS,
    Multi_MALS) is read, like its indicator, from the fold that gives the
    indicator, never from the rows the change is measured on: a group kept
    because the sample happened to give it many rows would carry that excess
    into its change (docs/definitions.md, "No training set"). Each fold holds
    half the rows, hence half the threshold: the rule :func:`small_groups` on
    twice each fold's sizes (``sizes``: the two folds' group sizes).
    """
    keep0, keep1 = (~small_groups(2 * np.asarray(fold, dtype=np.float64), min_group_size, include_small_groups)[1]
                    for fold in sizes)
    return keep0, keep1
