"""The scan's simultaneous max-t band over every subgroup, from one grouped bootstrap.

Each subgroup ``s`` has *units* ``u``: the statistic itself when it is regular
(a smooth function of the counts: BiasAmp→, BiasAmp_MALS, the raw
multi-attribute values, DF amplification), or the signed parts it is built
from when it is not (DP, DI, EOTP, ...: the group rates' differences; the
distortion statistics: the per-combination Δ), as the bootstrap's intervals
of :mod:`biasamp._engine.intervals` read them. Every unit has an estimate
``θ_u``, replicates ``θ*_ub`` (the same bootstrap draws for every subgroup)
and a standard error ``SE_u`` (the replicates' standard deviation, at least
the family's floor where it declares one). With
``Z_ub = |θ*_ub − θ_u| / SE_u``:

* ``T_b = max_u Z_ub`` over every unit of every subgroup scanned, and ``c``
  the ``ceil(level·B)``-th smallest ``T_b``; the band ``θ_u ± c·SE_u`` holds
  every unit at once with probability ≈ level, so the family-wise error of
  the intervals derived from it is at most ``1 − level``;
* the adjusted p-value of ``s`` is the share of ``T_b ≥ t_s``, with
  ``t_s = max_{u of s} |θ_u| / SE_u`` (the test that every unit of ``s`` is
  0); it is at most ``(B − k) / B`` (``k = ceil(level·B)``) exactly when some
  unit's band excludes 0;
* the unadjusted interval and p-value are the same with ``T_b`` replaced by
  ``T_sb = max_{u of s} Z_ub`` (the subgroup alone).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Band", "max_t"]


@dataclass(frozen=True)
class Band:
    """The max-t band of a scan (see the module docstring); arrays over units ``(U,)`` or subgroups ``(S,)``."""

    se: np.ndarray            # (U,) standard error of every unit (0: no variation)
    critical: float           # c: the adjusted critical value
    critical_each: np.ndarray  # (S,) the unadjusted critical value of every subgroup
    t: np.ndarray             # (S,) t_s (NaN: not scanned)
    p_adjusted: np.ndarray    # (S,) adjusted p-values (NaN: not scanned)
    p_unadjusted: np.ndarray  # (S,)
    scanned: np.ndarray       # (S,) bool: in the max (a finite t_s)


def _order_stat(values: np.ndarray, level: float, axis: int = 0) -> np.ndarray:
    """The ``ceil(level·B)``-th smallest value along ``axis`` (B: its length)."""
    b = values.shape[axis]
    k = max(1, int(np.ceil(level * b - 1e-9)))
    return np.take(np.sort(values, axis=axis), k - 1, axis=axis)


def max_t(estimate: np.ndarray, replicates: np.ndarray, owner: np.ndarray, n_subgroups: int, level: float,
          se_floor: np.ndarray | None = None) -> Band:
    """The max-t band of units ``estimate`` ``(U,)``, ``replicates`` ``(B, U)``, unit ``u`` of subgroup ``owner[u]``.

    ``owner`` is non-decreasing. A unit with a NaN estimate or a standard
    error of 0 takes no part; a NaN replicate counts as no deviation.
    """
    estimate = np.asarray(estimate, dtype=np.float64)
    b = replicates.shape[0]
    ok = np.isfinite(replicates)
    cnt = ok.sum(axis=0)
    x = np.where(ok, replicates, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = x.sum(axis=0) / np.maximum(cnt, 1)
        var = (np.where(ok, replicates - mean, 0.0) ** 2).sum(axis=0) / np.maximum(cnt - 1, 1)
    se = np.where(cnt > 1, np.sqrt(var), 0.0)
    if se_floor is not None:
        se = np.fmax(se, se_floor)
    use = np.isfinite(estimate) & (se > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.abs(replicates - estimate) / np.where(use, se, 1.0)
        t_unit = np.where(use, np.abs(estimate) / np.where(use, se, 1.0), -np.inf)
    z = np.where(use[None, :] & np.isfinite(z), z, -np.inf)
    starts = np.searchsorted(owner, np.arange(n_subgroups))
    present = np.zeros(n_subgroups, dtype=bool)
    present[np.unique(owner)] = True
    per = np.full((b, n_subgroups), -np.inf)
    t = np.full(n_subgroups, -np.inf)
    if len(owner):
        idx = starts[present]
        per[:, present] = np.maximum.reduceat(z, idx, axis=1)
        t[present] = np.maximum.reduceat(t_unit, idx)
    scanned = np.isfinite(t)
    total = per[:, scanned].max(axis=1) if scanned.any() else np.full(b, -np.inf)
    critical = float(_order_stat(total, level)) if scanned.any() else float("nan")
    each = np.where(scanned, _order_stat(per, level, axis=0), np.nan)
    p_adj = np.where(scanned, (total[:, None] >= t[None, :]).mean(axis=0), np.nan)
    p_un = np.where(scanned, (per >= t[None, :]).mean(axis=0), np.nan)
    return Band(se, critical, each, np.where(scanned, t, np.nan), p_adj, p_un, scanned)
