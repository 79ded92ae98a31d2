"""Bootstrap plan and tests of no effect for the group fairness family.

The cells are the distinct (group, y_true, y_pred) rows; a cell's left vector
is its group one-hot and its right vector ``[1 | T | T̂ | T∘T̂]``, so the table
``Lᵀ diag(c) R`` holds ``n_g``, ``P_gk``, ``(TP+FP)_gk`` and ``TP_gk``.

Signed parts of each (non-regular) metric, per class k:

* DP, EOFP, EOTP: the pairwise differences of the group rates (PPR, FPR, TPR)
  when there are at most ``PAIRWISE_MAX_GROUPS`` groups; with more groups, the
  group rates themselves, from whose box the range of max − min follows
  (``[max(0, max lo − min hi), max hi − min lo]``), so the cost is linear in
  the number of groups instead of quadratic (1,000 groups would need 499,500
  pairs × replicates);
* DI: the group PPRs themselves (DI = 1 − min/max is not a function of the
  differences);
* SPSF, FPSF: the weighted deviations Pr[g]·(rate − rate_g);
* BA: share_pred − share_true of the group ḡ of the estimate.

Tests of no effect per class (independence of the prediction and the group):
DP, DI, SPSF among all rows; EOTP among the positives of the class; EOFP and
FPSF among its negatives (G-test, exact or Monte-Carlo for small counts). BA
has no test.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from biasamp._engine.groups import cells as _cells
from biasamp._engine.groups import split as _split
from biasamp._engine.intervals import (
    Parts,
    Plan,
    Statistic,
    UnitTests,
    abs_range,
    mean_of,
    nan_reduce,
)
from biasamp.fairness import _metrics as _f
from biasamp.fairness._options import FairnessOptions

#: up to this many groups the band of DP/EOFP/EOTP is on the pairwise differences (tighter); above, on the group
#: rates (G parts instead of G(G-1)/2, conservative: the width of a difference is the sum of two rates' widths)
PAIRWISE_MAX_GROUPS = 32

_TEST_OF = {"DP": "prediction", "DI": "prediction", "SPSF": "prediction", "EOTP": "positives",
            "EOFP": "negatives", "FPSF": "negatives"}


def _rates(n, pos, pred, tp):
    """PPR, TPR, FPR (..., G, K) with NaN where undefined."""
    n = n[..., :, None]
    neg = n - pos
    fp = pred - tp
    with np.errstate(invalid="ignore", divide="ignore"):
        ppr = np.where(n > 0, pred / np.where(n > 0, n, 1), np.nan)
        tpr = np.where(pos > 0, tp / np.where(pos > 0, pos, 1), np.nan)
        fpr = np.where(neg > 0, fp / np.where(neg > 0, neg, 1), np.nan)
    ppr = np.broadcast_to(ppr, pos.shape)
    return ppr, tpr, fpr


def _pairwise(rate: np.ndarray) -> np.ndarray:
    """(..., G, K) -> (..., K, n_pairs): rate_g − rate_h for g < h."""
    g, h = np.triu_indices(rate.shape[-2], 1)
    d = rate[..., g, :] - rate[..., h, :]
    return np.swapaxes(d, -1, -2)


def _deviation(rate: np.ndarray, overall: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """(..., K, G): Pr[g]·(rate_overall − rate_g)."""
    return np.swapaxes(weight * (overall[..., None, :] - rate), -1, -2)


def _parts(metric: str, n, pos, pred, tp, gbar: np.ndarray) -> np.ndarray:
    """Signed parts of one metric, shape (..., J)."""
    lead = n.shape[:-1]
    ppr, tpr, fpr = _rates(n, pos, pred, tp)
    if metric in ("DP", "EOTP", "EOFP") and n.shape[-1] > PAIRWISE_MAX_GROUPS:
        rate = {"DP": ppr, "EOTP": tpr, "EOFP": fpr}[metric]
        return np.swapaxes(rate, -1, -2).reshape(*lead, -1)
    n_tot = n.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        weight = (n / np.where(n_tot > 0, n_tot, 1))[..., :, None]
    if metric == "DP":
        x = _pairwise(ppr)
    elif metric == "EOTP":
        x = _pairwise(tpr)
    elif metric == "EOFP":
        x = _pairwise(fpr)
    elif metric == "DI":
        x = np.swapaxes(ppr, -1, -2)
    elif metric == "SPSF":
        with np.errstate(invalid="ignore", divide="ignore"):
            overall = pred.sum(axis=-2) / np.where(n_tot > 0, n_tot, 1)
        x = _deviation(ppr, overall, weight)
    elif metric == "FPSF":
        neg = n[..., :, None] - pos
        fp = pred - tp
        with np.errstate(invalid="ignore", divide="ignore"):
            overall = fp.sum(axis=-2) / np.where(neg.sum(axis=-2) > 0, neg.sum(axis=-2), 1)
        x = _deviation(fpr, overall, weight)
    else:  # BA with the estimate's ḡ
        idx = np.broadcast_to(gbar, (*lead, 1, gbar.shape[-1]))
        p_all, pp_all = pos.sum(axis=-2), pred.sum(axis=-2)
        with np.errstate(invalid="ignore", divide="ignore"):
            share_pred = np.take_along_axis(pred, idx, axis=-2)[..., 0, :] / np.where(pp_all > 0, pp_all, np.nan)
            share_true = np.take_along_axis(pos, idx, axis=-2)[..., 0, :] / np.where(p_all > 0, p_all, np.nan)
        x = share_pred - share_true
    return x.reshape(*lead, -1)


def _se_floor(metric: str, full: np.ndarray) -> np.ndarray | None:
    """Standard errors of the parts at the pooled rate r: SPSF's / FPSF's Pr[g]·(r − r_g), and the group rates r_g
    that are the parts of DP / EOTP / EOFP above ``PAIRWISE_MAX_GROUPS`` groups (r(1 − r)/n_g); None for the others.

    With counts n_g (all rows for SPSF, the negatives for FPSF) and the pooled
    rate r, Var(r − r_g) = r(1 − r)(1/n_g − 1/n) when every group has rate r.
    A small group whose rate is low by chance (few false positives among ~50
    negatives) has a bootstrap spread around that low rate far below the
    spread of its rate around the truth, and the max-t band, studentised by
    it, misses 0 (measured: 0.81 coverage with 40 groups of ~80 rows at no
    disparity); the band uses at least this standard error
    (:attr:`Parts.se_floor`). Counts must be frequencies (hard labels,
    whole-number weights).
    """
    k = (full.shape[-1] - 1) // 3
    n, pos, pred, tp = _split(full, k)
    rates = metric in ("DP", "EOTP", "EOFP") and n.shape[-1] > PAIRWISE_MAX_GROUPS  # the parts are the group rates
    if metric not in ("SPSF", "FPSF") and not rates:
        return None
    if metric in ("SPSF", "DP"):
        size, one = np.broadcast_to(n[:, None], pos.shape), pred
    elif metric == "EOTP":
        size, one = pos, tp
    else:
        size, one = n[:, None] - pos, pred - tp
    total = size.sum(axis=0)
    n_all = n.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(total > 0, one.sum(axis=0) / np.where(total > 0, total, 1), np.nan)
        inv = np.where(size > 0, 1.0 / np.where(size > 0, size, 1), np.nan)
        if not rates:  # r − r_g: r includes the group's own rows
            inv = inv - 1.0 / np.where(total > 0, total, 1)[None, :]
        weight = 1.0 if rates else (n[:, None] / n_all if n_all > 0 else np.full_like(size, np.nan))
    se = weight * np.sqrt(rate[None, :] * (1.0 - rate[None, :]) * np.maximum(inv, 0.0))  # (G, K)
    return np.swapaxes(se, 0, 1).reshape(-1)  # class-major, as the parts


def _to_units(metric: str, k: int, n_groups: int):
    """Map a box on the parts to the range of every class's value."""

    def to_units(lo: np.ndarray, hi: np.ndarray):
        if metric == "BA":
            return abs_range(lo, hi)
        lo = lo.reshape(k, -1)
        hi = hi.reshape(k, -1)
        if metric in ("DP", "EOFP", "EOTP") and n_groups > PAIRWISE_MAX_GROUPS:
            # box of the group rates -> range of max_g rate_g - min_g rate_g (NaN rates: undefined groups, left out)
            a = np.maximum(nan_reduce(lo, 1, "max") - nan_reduce(hi, 1, "min"), 0.0)
            b = nan_reduce(hi, 1, "max") - nan_reduce(lo, 1, "min")
            return a, np.clip(b, 0.0, 1.0)
        if metric in ("DP", "EOFP", "EOTP"):
            a, b = abs_range(lo, hi)
            return nan_reduce(a, 1, "max"), np.minimum(nan_reduce(b, 1, "max"), 1.0)
        if metric in ("SPSF", "FPSF"):
            a, b = abs_range(lo, hi)
            return nan_reduce(a, 1, "sum"), np.minimum(nan_reduce(b, 1, "sum"), 1.0)
        # DI from the box of group PPRs
        low, high = np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)
        max_l, min_u = nan_reduce(low, 1, "max"), nan_reduce(high, 1, "min")
        min_l, max_u = nan_reduce(low, 1, "min"), nan_reduce(high, 1, "max")
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio_max = np.where(max_l <= min_u, 1.0, min_u / max_l)
            ratio_min = np.where(max_u > 0, min_l / np.where(max_u > 0, max_u, 1.0), 1.0)
        nan = np.isnan(max_l)
        return np.where(nan, np.nan, 1.0 - ratio_max), np.where(nan, np.nan, 1.0 - ratio_min)

    return to_units


def _headline_units(to_units: Any, hidx: np.ndarray) -> Any:
    """``to_units`` restricted to the headline classes (the last axis)."""
    def restricted(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ulo, uhi = to_units(lo, hi)
        return np.asarray(ulo)[..., hidx], np.asarray(uhi)[..., hidx]

    return restricted


def _unit_index(metric: str, classes: tuple, groups: tuple) -> pd.DataFrame:
    return pd.DataFrame({"class": list(classes)})


def _test_tables(kind: str, n, pos, pred, tp) -> np.ndarray:
    """(K, G, 2) tables [outcome 0, outcome 1] per class for the independence tests."""
    n = n[:, None]
    if kind == "prediction":
        one, total = pred, np.broadcast_to(n, pred.shape)
    elif kind == "positives":
        one, total = tp, pos
    else:
        one, total = pred - tp, n - pos
    return np.stack([total - one, one], axis=-1).transpose(1, 0, 2)


def fairness_evaluator(point: Any, full: np.ndarray, metrics: tuple, soft: bool) -> Plan:
    """The statistics, parts and tests of the fairness metrics on tables ``(B, G, 1+3K)`` (no cells).

    ``point`` is the :class:`~biasamp.FairnessResult` of the full table ``full``
    (``(G, 1+3K)``: ``[n_g | P_gk | (TP+FP)_gk | TP_gk]``).
    """
    classes, groups = point.classes, point.groups
    k, n_groups = len(classes), len(groups)
    headline = np.isin(np.asarray(classes, dtype=object), np.asarray(point.settings.headline_classes, dtype=object)) \
        if point.settings is not None else np.ones(k, dtype=bool)
    metrics = tuple(m for m in metrics if m not in point.undefined_reasons)
    hidx = np.flatnonzero(headline)

    def values(tables: np.ndarray) -> dict:
        n, pos, pred, tp = _split(tables, k)
        arrays = _f.metric_arrays(n, pos, pred, tp, metrics)
        enough = (n > 0).sum(axis=-1) >= 2
        out = {}
        for m, (v, d) in arrays.items():
            mean, _ = _f._aggregate(v, d & headline)
            out[m] = np.where(enough, mean, np.nan)
        return out

    _, pos0, _, _ = _split(full[None], k)
    gbar = np.argmax(pos0, axis=-2)[0][None, :]  # BA's ḡ of the estimate, fixed

    def parts(tables: np.ndarray) -> dict:
        n, pos, pred, tp = _split(tables, k)
        return {m: _parts(m, n, pos, pred, tp, gbar) for m in metrics}

    # weighted counts are read as frequencies when they are whole numbers; otherwise no count-based test
    fractional = bool(np.any(np.abs(full - np.rint(full)) > 1e-9))

    def statistics(full_tables: np.ndarray) -> list:
        est_parts = parts(full_tables)
        out = []
        for m in metrics:
            by_class = point.by_class[m].to_numpy(dtype=np.float64)
            defined = ~point.undefined[m].to_numpy() & headline
            # the units of the per-class table are the headline's classes (the positive class of a binary task)
            p = Parts(
                estimate=est_parts[m][0], replicates=None,
                units=_unit_index(m, classes, groups).iloc[hidx].reset_index(drop=True),
                unit_estimate=by_class[hidx], to_units=_headline_units(_to_units(m, k, n_groups), hidx),
                aggregate=mean_of(defined[hidx]), unit_name=m,
                se_floor=None if fractional else _se_floor(m, full),
            )
            out.append(Statistic(m, float(point.overall[m]), None, regular=False, range=(0.0, 1.0), parts=p))
        return out

    def tests(random_state: Any) -> dict:
        from biasamp._engine.pvalues import independence_test

        if soft or fractional:
            return {}
        n, pos, pred, tp = (np.rint(x[0]).astype(np.int64) for x in _split(full[None], k))
        out, done = {}, {}
        for m in metrics:
            kind = _TEST_OF.get(m)
            if kind is None:
                continue
            if kind not in done:
                done[kind] = independence_test(_test_tables(kind, n, pos, pred, tp), random_state=random_state)
            res = done[kind]
            methods = sorted({str(x) for x in np.ravel(res.method) if str(x) != "undefined"})
            p = np.where(point.undefined[m].to_numpy(), np.nan, np.asarray(res.p_value, dtype=np.float64))[hidx]
            out[m] = UnitTests(p, f"independence of prediction and group ({kind}): " + ", ".join(methods))
        return out

    notes = ["soft predictions: the tests of no effect need hard predictions (counts), none computed"] if soft else []
    if fractional and not soft:
        notes.append("non-integer sample weights: the tests of no effect need counts (whole-number weights are "
                     "read as frequencies), none computed")
    notes += [f"{m} undefined, no interval: {why}" for m, why in point.undefined_reasons.items()]
    wide = [m for m in metrics if m in ("DP", "EOFP", "EOTP")]
    if wide and n_groups > PAIRWISE_MAX_GROUPS:
        notes.append(f"{n_groups} groups: the intervals of {', '.join(wide)} come from a simultaneous band on the "
                     f"group rates (max - min follows from their box; conservative), not on the "
                     f"{n_groups * (n_groups - 1) // 2:,} pairwise differences")
    if point.settings is not None and point.settings.excluded_groups:
        notes.append("small groups excluded from the headline and its interval: "
                     + ", ".join(map(repr, point.settings.excluded_groups)))
    return Plan(None, values, parts, statistics, tests, notes)


def fairness_resample(counted: tuple, opts: FairnessOptions, point: Any) -> Plan:
    """The resampling plan of a counted call (the family's ``resample`` hook): its cells, the metrics on replicates.

    ``counted`` is :func:`~biasamp.fairness._metrics.fairness_count`'s
    (prepared labels, confusion counts), ``point`` the call's
    :class:`~biasamp.FairnessResult`; the cells are the distinct (group,
    y_true, y_pred) rows of the groups it counts, and the statistics are
    :func:`fairness_evaluator`'s for ``opts.metrics``. Raises ``ValueError``
    when ``average=None`` (one value per class, no headline to resample).
    """
    if opts.average is None:
        raise ValueError("bootstrap needs one headline value per metric: average='binary' or 'macro', not None")
    prep, _ = counted
    cells, _, _, soft = _cells(prep, point.counts.groups)
    plan = fairness_evaluator(point, cells.table(), opts.metric_names, soft)
    plan.cells = cells
    return plan
