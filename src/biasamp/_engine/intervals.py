"""Intervals from bootstrap replicates: percentile, basic, BCa and simultaneous bands.

A family's resampling plan (see :func:`biasamp.bootstrap`) turns count tables
into :class:`Statistic` objects: the estimate, its replicates, and, for every
statistic, the *signed parts* it is built from (per-pair Δ, per-class group-rate
differences, ...). Two kinds of statistics:

* **regular** (smooth functions of the counts: BiasAmp→, BiasAmp_MALS, the
  "raw" multi-attribute values): percentile, basic or BCa intervals of the
  replicates;
* **non-regular** (maxima, minima or absolute values of differences: DP, DI,
  SPSF, FPSF, EOFP, EOTP, BA, the "abs" multi-attribute values): their
  bootstrap distribution is not centred on the truth when the truth is 0 (a
  max − min is positive in every resample), so the percentile interval lies
  above 0 by construction. Their interval is derived from a simultaneous
  (max-t) band on the signed parts: with probability ≥ level every part lies
  in its band, so the statistic lies between the smallest and the largest
  value it can take inside the bands. Such an interval is valid at 0, and it
  always holds its own estimate (every part's estimate lies in its band).

Definitions: docs/definitions.md, "Intervals".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from biasamp._engine.inference import (
    Bounds,
    Inference,
    bca_bounds,
    interval_p_value,
    percentile_bounds,
    replicate_bounds,
    z_min_detectable,
)

CI_METHODS = ("auto", "percentile", "basic", "bca", "band")


@dataclass
class Parts:
    """The signed quantities a statistic is built from, and how it is built from them.

    ``estimate`` (J,) and ``replicates`` (B, J) of the signed parts (NaN where
    undefined); ``to_units(lo, hi) -> (unit_lo, unit_hi)`` maps a box
    ``lo[j] <= part_j <= hi[j]`` to the range of every *unit* of the statistic
    (a class, a pair, ...), and ``aggregate(unit_values) -> float`` builds the
    statistic from its units (e.g. the mean over the defined classes).
    ``units`` names the units (a DataFrame of U rows), ``unit_estimate`` (U,)
    are their values.
    """

    estimate: np.ndarray
    replicates: np.ndarray | None  # None until the bootstrap fills them in
    units: pd.DataFrame
    unit_estimate: np.ndarray
    to_units: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]
    aggregate: Callable[[np.ndarray], float]
    unit_name: str = "value"
    #: (J,) smallest standard error the band may use for each part (NaN: none), e.g. a rate's standard
    #: error at the pooled rate: a small group's bootstrap spread around a chance-low rate understates it
    se_floor: np.ndarray | None = None

    def bound(self, lo: np.ndarray, hi: np.ndarray) -> tuple[float, float]:
        ulo, uhi = self.to_units(lo, hi)
        return self.aggregate(ulo), self.aggregate(uhi)


@dataclass
class Statistic:
    """One statistic of a bootstrap: its estimate, replicates and parts."""

    name: str
    estimate: float
    replicates: np.ndarray | None  # None until the bootstrap fills them in
    regular: bool
    range: tuple[float, float] = (-np.inf, np.inf)
    parts: Parts | None = None
    jackknife: np.ndarray | None = None  # leave-one-row-out values per cell (for BCa)
    extra: dict = field(default_factory=dict)


def filled(replicates: np.ndarray | None, name: str) -> np.ndarray:
    """The replicates of a statistic or its parts, once the bootstrap has filled them in."""
    if replicates is None:
        raise RuntimeError(f"{name}: no bootstrap replicates yet (a point estimate only)")
    return replicates


def percentile(reps: np.ndarray, level: float) -> tuple[float, float]:
    lo, hi = percentile_bounds(reps)(np.array([level]))
    return float(lo[0]), float(hi[0])


def basic(est: float, reps: np.ndarray, level: float) -> tuple[float, float]:
    lo, hi = percentile(reps, level)
    return 2 * est - hi, 2 * est - lo


def acceleration(jack: np.ndarray, weights: np.ndarray) -> float:
    """BCa acceleration from leave-one-row-out values per cell, weighted by the cells' counts."""
    ok = np.isfinite(jack) & (weights > 0)
    if ok.sum() < 2:
        return 0.0
    j, w = jack[ok], weights[ok]
    mean = np.sum(w * j) / np.sum(w)
    d = mean - j
    den = np.sum(w * d**2)
    if den <= 0:
        return 0.0
    return float(np.sum(w * d**3) / (6.0 * den**1.5))


def bca(est: float, reps: np.ndarray, level: float, accel: float) -> tuple[float, float]:
    """Bias-corrected and accelerated interval (Efron 1987), mid-rank bias correction for ties."""
    lo, hi = bca_bounds(est, reps, accel)(np.array([level]))
    return float(lo[0]), float(hi[0])


def _band_scale(parts: Parts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(defined, se, t)`` of a band: the parts' standard errors and, per replicate, max_j |t*_j| (finite ones)."""
    est = parts.estimate
    reps = filled(parts.replicates, "parts")
    defined = np.isfinite(est)
    ok = np.isfinite(reps) & defined[None, :]
    cnt = ok.sum(axis=0)
    x = np.where(ok, reps, 0.0)  # one working copy, updated in place (the replicates can be large)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = x.sum(axis=0) / np.where(cnt > 0, cnt, 1)
        x -= mean[None, :]
        x[~ok] = 0.0
        x **= 2
        var = x.sum(axis=0) / np.where(cnt > 1, cnt - 1, 1)
    del x
    se = np.where(cnt > 1, np.sqrt(var), 0.0)
    if parts.se_floor is not None:
        se = np.fmax(se, np.where(defined, parts.se_floor, np.nan))  # fmax: a NaN floor leaves se as it is
    use = defined & (se > 0)
    if use.any():
        with np.errstate(invalid="ignore", divide="ignore"):
            t = reps[:, use]
            t -= est[None, use]
            np.abs(t, out=t)
            t /= se[None, use]
        t[~np.isfinite(t)] = -np.inf
        t = t.max(axis=1)
        t = t[np.isfinite(t)]
    else:
        t = np.empty(0)
    return defined, se, t


def _band_at(parts: Parts, defined: np.ndarray, se: np.ndarray, c: float) -> tuple[np.ndarray, np.ndarray]:
    est = parts.estimate
    return np.where(defined, est - c * se, np.nan), np.where(defined, est + c * se, np.nan)


def band(parts: Parts, level: float) -> tuple[np.ndarray, np.ndarray, float]:
    """Simultaneous (max-t) band: ``est_j ± c·se_j`` with c the level-quantile of max_j |t*_j|.

    Parts with a bootstrap standard error of 0 (constant over the replicates)
    get a band of width 0; NaN parts (undefined in the estimate) stay NaN.
    A part's standard error is at least its ``parts.se_floor`` where one is
    declared (the band is then studentised by that floor too).
    """
    defined, se, t = _band_scale(parts)
    c = float(np.quantile(t, level)) if t.size else 0.0
    lo, hi = _band_at(parts, defined, se, c)
    return lo, hi, c


def band_bounds(parts: Parts) -> tuple[Bounds, Callable[[float], float]]:
    """The statistic's max-t band interval at any level (vectorised over levels), and its critical value per level.

    One pass over the replicates (the parts' standard errors and the
    replicates' max |t|); then, per level, the band's critical value ``c``
    and :meth:`Parts.bound` of the band ``est_j ± c·se_j``.
    """
    defined, se, t = _band_scale(parts)

    def critical(level: float) -> float:
        return float(np.quantile(t, level)) if t.size else 0.0

    def bounds(levels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        cs = np.quantile(t, levels) if t.size else np.zeros(len(levels))
        out = [parts.bound(*_band_at(parts, defined, se, float(c))) for c in cs]
        return np.array([o[0] for o in out], dtype=np.float64), np.array([o[1] for o in out], dtype=np.float64)

    return bounds, critical


def inference(stat: Statistic, method: str, level: float, cell_counts: np.ndarray | None) -> tuple[Inference, str]:
    """The interval of one statistic with its own p-value and MDE (:class:`~biasamp._engine.inference.Inference`),
    and the label of the method used; the interval always holds the estimate for "auto".

    The p-value inverts the interval (:func:`~biasamp._engine.inference.interval_p_value`
    of the same replicates and method, the method "auto" picked included), so
    ``p < 1 - level`` exactly when the interval excludes 0. The MDE is
    ``(z_{1-alpha/2} + z_{0.8})·se`` with ``se`` the replicates' standard
    deviation, or for the max-t band ``(c + z_{0.8})·se_band`` with ``c`` the
    band's critical value and ``se_band = max(high - estimate, estimate - low) / c``
    (the band's larger excursion of the statistic from its estimate, per unit
    of critical value: where the range clips one side, the other).
    """
    reps = filled(stat.replicates, stat.name)
    reps = reps[np.isfinite(reps)]
    est = stat.estimate
    if not np.isfinite(est):
        nan = float("nan")
        return Inference(nan, nan, nan, nan, nan, "undefined"), "undefined"
    if reps.size == 0:
        raise ValueError(f"{stat.name} is undefined in every bootstrap replicate")
    chosen = method
    if method == "auto":
        # a family may name the method its coverage was verified with (Statistic.extra["auto"])
        chosen = stat.extra.get("auto") or ("band" if not stat.regular and stat.parts is not None else (
            "bca" if stat.jackknife is not None else "percentile"))
    accel, band_of, critical = 0.0, None, None
    if chosen == "band":
        if stat.parts is None:
            raise ValueError(f"ci_method='band' is not available for {stat.name}")
        band_of, critical = band_bounds(stat.parts)
    elif chosen == "bca":
        if stat.jackknife is None or cell_counts is None:
            raise ValueError(f"ci_method='bca' needs the jackknife over cells, not available for {stat.name}")
        accel = acceleration(stat.jackknife, cell_counts)
    elif chosen not in ("basic", "percentile"):  # pragma: no cover - checked by the caller
        raise ValueError(f"unknown ci_method {method!r}")
    label = {"band": "max-t band", "bca": "BCa"}.get(chosen, chosen)
    bounds = replicate_bounds(est, reps, chosen, acceleration=accel, band=band_of, value_range=stat.range)
    lo_a, hi_a = bounds(np.array([level]))
    lo, hi = float(lo_a[0]), float(hi_a[0])
    if method == "auto" and not (lo <= est <= hi):
        # a smooth statistic whose replicates lie almost all on one side of it: use the
        # normal interval around the estimate, which holds it by construction
        chosen, label = "normal", "normal (fallback)"
        bounds = replicate_bounds(est, reps, "normal", value_range=stat.range)
        lo_a, hi_a = bounds(np.array([level]))
        lo, hi = float(lo_a[0]), float(hi_a[0])
    # the band's bounds cost one Parts.bound per level: bisect (one level per round) rather than search a grid
    p = interval_p_value(bounds, level, **({"grid": 2, "rounds": 36} if chosen == "band" else {}))
    se = float(np.std(reps, ddof=1)) if reps.size > 1 else 0.0
    if critical is not None:
        c = critical(level)
        se = max(hi - est, est - lo, 0.0) / c if c > 0 else 0.0
        mde = z_min_detectable(se, level, critical=c)
    else:
        mde = z_min_detectable(se, level)
    return Inference(lo, hi, p, se, mde, label), label


def interval(stat: Statistic, method: str, level: float, cell_counts: np.ndarray | None) -> tuple[float, float, str]:
    """``(low, high, method used)`` of one statistic; always holds the estimate for "auto"."""
    inf, label = inference(stat, method, level, cell_counts)
    return inf.low, inf.high, label


def unit_table(stat: Statistic, level: float) -> pd.DataFrame:
    """Per-unit table (class, pair, ...): its value and its simultaneous interval."""
    parts = stat.parts
    if parts is None:
        raise ValueError(f"{stat.name} has no per-unit parts")
    lo, hi, c = band(parts, level)
    ulo, uhi = parts.to_units(lo, hi)
    out = parts.units.copy()
    out[parts.unit_name] = parts.unit_estimate
    out["ci_low"] = ulo
    out["ci_high"] = uhi
    # a unit whose value conditions on an empty event: no value, no interval, no test (flagged, not silent)
    out["undefined"] = ~np.isfinite(np.asarray(parts.unit_estimate, dtype=np.float64))
    out.attrs["critical_value"] = c
    return out


def holds(lo: float, hi: float, est: float) -> bool:
    return bool(np.isfinite(est) and lo <= est <= hi)


def zero_width_note(stat: Statistic) -> str:
    return (
        f"{stat.name}: the interval has width 0 because the statistic takes the same value in every "
        "bootstrap replicate (e.g. every correlation sign y_at is 0 on balanced data, so BiasAmp-> is 0 "
        "whatever the predictions; predictions equal to the ground truth for every pair make every Delta "
        "exactly 0; or the predicted attribute is a function of the predicted task)"
    )




# --------------------------------------------------------------------------- #
# resampling plans: what a family tells the bootstrap
# --------------------------------------------------------------------------- #
@dataclass
class UnitTests:
    """p-values of one statistic's units (aligned with its ``Parts.units``)."""

    p_value: np.ndarray
    method: str
    global_method: str = "Holm (min adjusted p over units)"


@dataclass
class Plan:
    """How to bootstrap one metric call.

    ``cells``: the distinct rows of the evaluation set; ``values(tables)``:
    the statistics of a stack of tables ``(B, wl, wr)`` (NaN where undefined);
    ``parts(tables)``: the signed parts ``(B, J)`` of every statistic;
    ``statistics(full)``: the :class:`Statistic` objects of the full table
    ``(1, wl, wr)`` (estimate, parts' estimate and units; the replicates are
    filled in by the bootstrap); ``tests(random_state)``: per-unit p-values
    of the statistics that have a test of no effect; ``result``: the
    metric's result object on the full data, so that a caller that wants both
    (the audit) counts the labels once.
    """

    cells: Any
    values: Callable[[np.ndarray], dict]
    parts: Callable[[np.ndarray], dict]
    statistics: Callable[[np.ndarray], list]
    tests: Callable[[Any], dict] | None = None
    notes: list = field(default_factory=list)
    result: Any = None  # the metric's own result on the full data (the builder computes it anyway)


#: metric function -> plan builder ``builder(*args, **kwargs) -> Plan``
PLANS: dict = {}


def register(*functions: Callable) -> Callable:
    """Decorator: ``builder`` resamples every metric function in ``functions``."""

    def deco(builder: Callable) -> Callable:
        for f in functions:
            PLANS[f] = builder
        return builder

    return deco


def mean_of(defined: np.ndarray) -> Callable[[np.ndarray], float]:
    """Aggregate: the mean of the units that are defined in the estimate."""
    use = np.asarray(defined, dtype=bool)

    def agg(values: np.ndarray) -> float:
        return float(np.mean(values[use])) if use.any() else float("nan")

    return agg


def abs_range(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Range of |x| when x ∈ [lo, hi] (elementwise; NaN stays NaN)."""
    low = np.where((lo <= 0) & (hi >= 0), 0.0, np.minimum(np.abs(lo), np.abs(hi)))
    high = np.maximum(np.abs(lo), np.abs(hi))
    nan = np.isnan(lo) | np.isnan(hi)
    return np.where(nan, np.nan, low), np.where(nan, np.nan, high)


def nan_reduce(x: np.ndarray, axis: int, how: str) -> np.ndarray:
    """max / min / sum over an axis ignoring NaN, NaN where every entry is NaN (no warnings)."""
    nan = np.isnan(x)
    allnan = nan.all(axis=axis)
    if how == "max":
        out = np.where(nan, -np.inf, x).max(axis=axis)
    elif how == "min":
        out = np.where(nan, np.inf, x).min(axis=axis)
    else:
        out = np.where(nan, 0.0, x).sum(axis=axis)
    return np.where(allnan, np.nan, out)
