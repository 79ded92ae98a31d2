"""One inference per reading: the p-value that inverts an interval, and the minimum detectable effect.

A p-value printed beside an interval must say what the interval says:
``p < 1 - level`` exactly when the interval excludes 0 (bounds read with
:func:`biasamp._core.results.as_read`: within 1e-12 of 0 is 0). Two kinds of
interval, two helpers:

* **from replicates** (every bootstrap interval: percentile, basic, BCa, the
  normal fallback, the max-t band): :func:`replicate_bounds` gives the
  interval of the same replicates at *any* level, vectorised over levels, and
  :func:`interval_p_value` inverts it: p is the smallest ``alpha`` at which
  the ``1 - alpha`` interval of the same method excludes 0, found by a
  vectorised search over the levels bracketed by the report's level (so the
  equivalence holds by construction, not up to the search's precision).
  :func:`bootstrap_inference` does both for one statistic.
* **t intervals** (estimate ± t·se, e.g. over iterations):
  :func:`t_inference`, the t-test's p-value (whose inversion the t interval
  is).

The **minimum detectable effect** (MDE) is the smallest true ``|effect|`` an
interval of this width excludes 0 for with probability :data:`MDE_POWER`
(0.8): ``(z_{1-alpha/2} + z_{0.8}) * se`` for a bootstrap interval (``se``
the replicates' standard deviation; for the max-t band, the band's critical
value replaces ``z_{1-alpha/2}``), the non-central t solution for a t
interval. Definitions: docs/inference.md, "One inference per reading".
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from biasamp._core.results import EXACT_ZERO, interval_side

__all__ = ["MDE_POWER", "Inference", "bootstrap_inference", "consistent_p_value", "excludes_zero",
           "interval_p_value", "replicate_bounds", "t_inference", "t_min_detectable", "z_min_detectable"]

#: power at which the minimum detectable effect is detected
MDE_POWER = 0.8

#: a z beyond which the normal tail is 0 in float64: keeps the level-1 interval finite
_Z_MAX = 40.0

Bounds = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
"""``bounds(levels) -> (low, high)``: a family of intervals, one per level, vectorised."""


@dataclass(frozen=True)
class Inference:
    """An interval with its own p-value and minimum detectable effect.

    Attributes
    ----------
    low, high : float
        The interval at ``level``.
    p_value : float
        The interval's inversion: ``p_value < 1 - level`` exactly when the
        interval excludes 0.
    se : float
        The standard error the interval rests on.
    min_detectable : float
        Smallest true ``|effect|`` the interval excludes 0 for with
        probability :data:`MDE_POWER`.
    method : str
        The interval's method.
    """

    low: float
    high: float
    p_value: float
    se: float
    min_detectable: float
    method: str


def excludes_zero(low: Any, high: Any) -> np.ndarray:
    """Elementwise: does ``[low, high]`` exclude 0, the bounds read as a reading reads them (1e-12 is 0)?"""
    lo = np.asarray(low, dtype=np.float64)
    hi = np.asarray(high, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return ((lo >= EXACT_ZERO) | (hi <= -EXACT_ZERO)) & ~(np.isnan(lo) | np.isnan(hi))


def interval_p_value(bounds: Bounds, level: float, *, grid: int = 32, rounds: int = 6) -> float:
    """The smallest ``alpha`` at which the ``1 - alpha`` interval of ``bounds`` excludes 0.

    ``bounds`` is evaluated at ``level`` first, and the search is bracketed by
    it, so ``p < 1 - level`` exactly when ``bounds(level)`` excludes 0
    (whatever the search's precision, ``(1 - level) / grid**rounds``). The
    intervals must narrow as the level falls (every method here does); p is
    0 when even the level-1 interval excludes 0, 1 when even the level-0
    interval holds it.
    """

    def ex(levels: np.ndarray) -> np.ndarray:
        lo, hi = bounds(np.asarray(levels, dtype=np.float64))
        return excludes_zero(lo, hi)

    if ex(np.array([level]))[0]:
        if ex(np.array([1.0]))[0]:
            return 0.0
        a, b = float(level), 1.0  # ex(a) is True, ex(b) False: the boundary level lies between
    else:
        if not ex(np.array([0.0]))[0]:
            return 1.0
        a, b = 0.0, float(level)
    steps = np.arange(1, grid) / grid
    for _ in range(rounds):
        pts = a + (b - a) * steps
        e = ex(pts)
        first_false = int(np.argmin(e)) if not e.all() else len(pts)
        if first_false < len(pts):
            b = float(pts[first_false])
        if first_false > 0:
            a = float(pts[first_false - 1])
    return float(1.0 - (a + b) / 2)


def _clipped(raw: Bounds, value_range: tuple[float, float] | None) -> Bounds:
    if value_range is None:
        return raw
    r0, r1 = value_range

    def bounds(levels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = raw(levels)
        return np.minimum(np.maximum(lo, r0), r1), np.minimum(np.maximum(hi, r0), r1)

    return bounds


def percentile_bounds(reps: np.ndarray) -> Bounds:
    """Percentile intervals of the (finite) replicates ``reps``, per level."""

    def bounds(levels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        q = np.quantile(reps, np.concatenate([(1 - levels) / 2, (1 + levels) / 2]))
        return q[: len(levels)], q[len(levels):]

    return bounds


def bca_bounds(est: float, reps: np.ndarray, accel: float) -> Bounds:
    """Bias-corrected and accelerated intervals (Efron 1987), mid-rank bias correction for ties, per level."""
    from scipy import stats as _st  # imported where used: scipy.stats costs start-up time

    b = len(reps)
    below = (np.sum(reps < est) + 0.5 * np.sum(reps == est)) / b
    below = min(max(below, 0.5 / b), 1 - 0.5 / b)
    z0 = _st.norm.ppf(below)

    def bounds(levels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        z = np.clip(_st.norm.ppf(np.concatenate([(1 - levels) / 2, (1 + levels) / 2])), -_Z_MAX, _Z_MAX)
        denom = 1 - accel * (z0 + z)
        ok = denom > 0
        adj = np.where(ok, _st.norm.cdf(z0 + (z0 + z) / np.where(ok, denom, 1.0)), np.where(z < 0, 0.0, 1.0))
        q = np.quantile(reps, np.clip(adj, 0.0, 1.0))
        return q[: len(levels)], q[len(levels):]

    return bounds


def normal_bounds(est: float, se: float) -> Bounds:
    """``est ± z·se`` per level."""
    from scipy import stats as _st

    def bounds(levels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        half = np.minimum(_st.norm.ppf((1 + levels) / 2), _Z_MAX) * se
        return est - half, est + half

    return bounds


def replicate_bounds(estimate: float, replicates: np.ndarray, method: str, *, acceleration: float = 0.0,
                     band: Bounds | None = None, value_range: tuple[float, float] | None = None) -> Bounds:
    """The intervals of ``method`` from the same ``replicates`` at any level (vectorised over levels).

    ``method``: ``"percentile"``, ``"basic"``, ``"bca"`` (with its
    ``acceleration``), ``"normal"`` (estimate ± z·sd of the replicates) or
    ``"band"`` (``band`` gives the statistic's max-t band interval per level:
    :func:`biasamp._engine.intervals.band_bounds`). Both ends are clipped to
    ``value_range``. Non-finite replicates are left out.
    """
    reps = np.asarray(replicates, dtype=np.float64)
    reps = reps[np.isfinite(reps)]
    raw: Bounds
    if method == "percentile":
        raw = percentile_bounds(reps)
    elif method == "basic":
        pct = percentile_bounds(reps)

        def raw(levels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            lo, hi = pct(levels)
            return 2 * estimate - hi, 2 * estimate - lo
    elif method == "bca":
        raw = bca_bounds(estimate, reps, acceleration)
    elif method == "normal":
        raw = normal_bounds(estimate, float(np.std(reps, ddof=1)) if reps.size > 1 else 0.0)
    elif method == "band":
        if band is None:
            raise ValueError("method='band' needs the statistic's band (band=...)")
        raw = band
    else:
        raise ValueError(f"method must be 'percentile', 'basic', 'bca', 'normal' or 'band', got {method!r}")
    return _clipped(raw, value_range)


def z_min_detectable(se: float, level: float, critical: float | None = None) -> float:
    """``(critical + z_{0.8}) * se``; ``critical`` defaults to ``z_{(1+level)/2}`` (a two-sided normal test)."""
    from scipy import stats as _st

    if not math.isfinite(se):
        return float("nan")
    c = float(_st.norm.ppf((1 + level) / 2)) if critical is None else float(critical)
    return float((c + _st.norm.ppf(MDE_POWER)) * se)


def t_min_detectable(se: float, df: float, level: float) -> float:
    """The true effect at which a two-sided t test (``df`` degrees of freedom) rejects with probability 0.8.

    Solved exactly with the non-central t distribution:
    ``P(|T'| > t_{(1+level)/2, df}) = 0.8`` for ``T' ~ t(df, delta)``, MDE =
    ``delta * se``; ``df = inf`` is the normal case, ``(z_{1-alpha/2} +
    z_{0.8}) * se``.
    """
    from scipy import optimize as _opt
    from scipy import stats as _st

    if not (math.isfinite(se) and se >= 0) or not df > 0:
        return float("nan")
    if se == 0:
        return 0.0
    if not math.isfinite(df) or df > 1e6:
        return z_min_detectable(se, level)
    crit = float(_st.t.ppf((1 + level) / 2, df))

    def power(delta: float) -> float:
        # the far tail (rejecting with the wrong sign) is negligible and scipy's nct gives NaN there at times
        wrong = float(np.nan_to_num(_st.nct.cdf(-crit, df, delta), nan=0.0))
        return float(_st.nct.sf(crit, df, delta)) + wrong - MDE_POWER

    hi = 2 * crit + 2 * float(_st.norm.ppf(MDE_POWER)) + 10.0
    return float(_opt.brentq(power, 0.0, hi, xtol=1e-10)) * se


def t_inference(estimate: float, se: float, df: float, level: float, *,
                value_range: tuple[float, float] | None = None, method: str = "t") -> Inference:
    """The t interval ``estimate ± t_{(1+level)/2, df} · se``, its t-test p-value and its MDE.

    ``df = inf``: the normal interval. The p-value inverts the interval with
    the bounds read as readings read them: ``2 · P(T > (|estimate| - 1e-12) / se)``,
    so ``p < 1 - level`` exactly when the interval (``value_range``-clipped
    ends within 1e-12 of 0 read as 0) excludes 0; a standard error of 0 gives
    p = 0 for a nonzero estimate and 1 for 0.
    """
    from scipy import stats as _st

    if not (math.isfinite(estimate) and math.isfinite(se)):
        nan = float("nan")
        return Inference(nan, nan, nan, nan, nan, method)
    q = float(_st.norm.ppf((1 + level) / 2) if not math.isfinite(df) else _st.t.ppf((1 + level) / 2, df))
    lo, hi = estimate - q * se, estimate + q * se
    if value_range is not None:
        lo, hi = min(max(lo, value_range[0]), value_range[1]), min(max(hi, value_range[0]), value_range[1])
    if se > 0:
        x = max(abs(estimate) - EXACT_ZERO, 0.0) / se
        p = float(2 * (_st.norm.sf(x) if not math.isfinite(df) else _st.t.sf(x, df)))
    else:
        p = 0.0 if abs(estimate) >= EXACT_ZERO else 1.0
    p = consistent_p_value(min(p, 1.0), lo, hi, level)
    return Inference(float(lo), float(hi), p, float(se), t_min_detectable(se, df, level), method)


def bootstrap_inference(estimate: float, replicates: np.ndarray, method: str, level: float, *,
                        acceleration: float = 0.0, band: Bounds | None = None,
                        value_range: tuple[float, float] | None = None) -> Inference:
    """The interval of ``method`` from bootstrap ``replicates``, with its own p-value and MDE.

    The helper every bootstrap interval of a headline goes through (the count
    families' in :func:`biasamp.bootstrap`; call it for a new one, e.g. a row
    bootstrap of DPA): the interval is ``replicate_bounds(...)(level)``, the
    p-value :func:`interval_p_value` of the same bounds (so ``p < 1 - level``
    exactly when the interval excludes 0), the standard error the replicates'
    standard deviation (ddof=1) and the MDE :func:`z_min_detectable` of it.
    For the band, pass ``band`` and use
    :func:`biasamp._engine.intervals.band_inference` for its MDE.

    Examples
    --------
    >>> import numpy as np
    >>> reps = np.random.default_rng(0).normal(0.03, 0.01, 2000)
    >>> inf = bootstrap_inference(0.03, reps, "percentile", 0.95)
    >>> bool(inf.low > 0), bool(inf.p_value < 0.05), round(inf.min_detectable, 3)
    (True, True, 0.028)
    """
    bounds = replicate_bounds(estimate, replicates, method, acceleration=acceleration, band=band,
                              value_range=value_range)
    lo, hi = bounds(np.array([level]))
    p = interval_p_value(bounds, level)
    reps = np.asarray(replicates, dtype=np.float64)
    reps = reps[np.isfinite(reps)]
    se = float(np.std(reps, ddof=1)) if reps.size > 1 else 0.0
    return Inference(float(lo[0]), float(hi[0]), p, se, z_min_detectable(se, level), method)


def consistent_p_value(p: float, low: float, high: float, level: float, *, slack: float = 1e-9) -> float:
    """``p`` made to agree with the interval at a floating-point tie: ``p < 1 - level`` iff it excludes 0.

    A p-value computed in closed form (a t test) and the interval it inverts
    can disagree in the last bits when the bound is within rounding of 0 (or of
    1e-12); then the interval decides and ``p`` moves to the nearest value
    that agrees. A disagreement larger than ``slack`` is a p-value that does
    not belong to this interval: ``ValueError``.
    """
    if p is None or not math.isfinite(p) or low is None or high is None:
        return p
    alpha = 1 - level
    excl = interval_side(low, high) != 0
    if excl == (p < alpha):
        return p
    if abs(p - alpha) > slack:
        raise ValueError(f"p-value {p:.6g} does not belong to the interval [{low:.6g}, {high:.6g}] at level {level:g}: "
                         f"p < {alpha:g} must hold exactly when the interval excludes 0")
    return float(np.nextafter(alpha, 0.0)) if excl else float(alpha)
