"""Bootstrap plan of differential-fairness bias amplification.

The cells and the table are the group fairness family's (``[n_g | P_gk |
(TP+FP)_gk | TP_gk]`` per group g), so a replicate's ε comes from the same
replicate tables. ε is a maximum over group pairs: non-regular where groups
tie (e.g. no disparity at all), so the interval of each ε comes from a
simultaneous (max-t) band on the signed parts, the log smoothed rates of the
labels and of the predictions: inside the band every ε lies between the
smallest and the largest value it can take. The amplification ε_pred − ε_true
is a difference of two maxima whose upward biases largely cancel; its
percentile interval meets the coverage targets at 0 and away from it
(bench_coverage.py, df-none and df-amp; BCa fell just short of 0.93 once),
where the band's is about five times wider, so ``"auto"`` uses the percentile
interval for it and ``ci_method="band"`` still gives the band.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from biasamp._core.policy import left_out_mask
from biasamp._engine.groups import cells as _cells
from biasamp._engine.groups import split as _split
from biasamp._engine.intervals import Parts, Plan, Statistic
from biasamp.differential import _metrics as _d
from biasamp.differential._options import DifferentialOptions


def _eps_range(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Range of ε_y = max_s x − min_s x per outcome y when x ∈ [lo, hi], boxes of shape (2, S)."""
    low = np.maximum(0.0, lo.max(axis=-1) - hi.min(axis=-1))
    high = hi.max(axis=-1) - lo.min(axis=-1)
    return low, high


def df_evaluator(point: Any, k: int, present: np.ndarray, concentration: float) -> Plan:
    """ε_true, ε_pred and their difference on fairness tables (the groups ``present`` of the estimate)."""
    n_s = int(present.sum())

    def logs(tables: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n, pos, pred, _ = _split(tables, 2)
        n, pos, pred = n[..., present], pos[..., present, k], pred[..., present, k]
        return _d.log_rates(n, pos, concentration), _d.log_rates(n, pred, concentration)

    def values(tables: np.ndarray) -> dict:
        lt, lp = logs(tables)
        et, ep = _d.epsilon(lt), _d.epsilon(lp)
        return {"DF amplification": ep - et, "epsilon_true": et, "epsilon_pred": ep}

    def parts(tables: np.ndarray) -> dict:
        lt, lp = logs(tables)
        both = np.concatenate([lp.reshape(len(tables), -1), lt.reshape(len(tables), -1)], axis=-1)
        return {"DF amplification": both, "epsilon_true": lt.reshape(len(tables), -1),
                "epsilon_pred": lp.reshape(len(tables), -1)}

    def eps_units(lo: np.ndarray, hi: np.ndarray):
        return _eps_range(lo.reshape(2, n_s), hi.reshape(2, n_s))

    def amp_units(lo: np.ndarray, hi: np.ndarray):
        # units: ε_pred of y = 0 and y = 1, then −ε_true (so that the statistic grows with every unit)
        plo, phi = _eps_range(lo[:2 * n_s].reshape(2, n_s), hi[:2 * n_s].reshape(2, n_s))
        tlo, thi = _eps_range(lo[2 * n_s:].reshape(2, n_s), hi[2 * n_s:].reshape(2, n_s))
        return np.append(plo, -thi.max()), np.append(phi, -tlo.max())

    outcomes = pd.DataFrame({"outcome": ["y=0", "y=1"]})

    def statistics(full: np.ndarray) -> list:
        est = parts(full)
        lt, lp = logs(full)
        spread_t = lt[0].max(axis=-1) - lt[0].min(axis=-1)
        spread_p = lp[0].max(axis=-1) - lp[0].min(axis=-1)
        amp = Parts(est["DF amplification"][0], None,
                    pd.DataFrame({"unit": ["epsilon_pred (y=0)", "epsilon_pred (y=1)", "-epsilon_true"]}),
                    np.append(spread_p, -spread_t.max()), amp_units,
                    lambda u: float(u[:2].max() + u[2]), unit_name="value")
        eps = [Parts(est[name][0], None, outcomes, spread, eps_units, lambda u: float(np.max(u)),
                     unit_name="epsilon")
               for name, spread in (("epsilon_true", spread_t), ("epsilon_pred", spread_p))]
        return [
            # a difference of two maxima whose upward biases cancel: the percentile interval covers at 0 and away
            # from it (bench_coverage, df-none / df-amp; BCa fell just short once); ci_method="band" gives the
            # conservative simultaneous-band interval
            Statistic("DF amplification", point.value, None, regular=True, range=(-np.inf, np.inf), parts=amp,
                      extra={"auto": "percentile"}),
            Statistic("epsilon_true", point.epsilon_true, None, regular=False, range=(0.0, np.inf), parts=eps[0]),
            Statistic("epsilon_pred", point.epsilon_pred, None, regular=False, range=(0.0, np.inf), parts=eps[1]),
        ]

    notes = ["differential fairness: epsilon is a maximum over group pairs, so its interval comes from a "
             "simultaneous band on the log smoothed rates of every group; the amplification's is the percentile "
             "interval (coverage measured in benchmarks/bench_coverage.py)"]
    return Plan(None, values, parts, statistics, None, notes)


def kept_groups(groups: tuple, n: np.ndarray, point: Any) -> np.ndarray:
    """The groups ε is computed over in ``point``: present, and not left out as small."""
    return (np.asarray(n, dtype=np.float64) > 0) & ~left_out_mask(groups, point.small_groups)


def df_resample(counted: tuple, opts: DifferentialOptions, point: Any) -> Plan:
    """The resampling plan of a counted call (the family's ``resample`` hook): its cells, ε on replicate tables."""
    prep, counts = counted
    cells, classes, _, _ = _cells(prep, prep.groups)
    k = list(classes).index(prep.pos_label)
    plan = df_evaluator(point, k, kept_groups(counts.groups, counts.n, point),
                        _d._check_concentration(opts.concentration))
    plan.cells = cells
    return plan
