"""The declaration of the differential-fairness family (Foulds et al. 2020), and how the layers serve it.

* **The resampling plan** of a counted call (the family's ``resample`` hook). The cells and the table
  are the group fairness family's (``[n_g | P_gk | (TP+FP)_gk | TP_gk]`` per group g), so a
  replicate's ε comes from the same replicate tables. ε is a maximum over group pairs: non-regular
  where groups tie (e.g. no disparity at all), so the interval of each ε comes from a simultaneous
  (max-t) band on the signed parts, the log smoothed rates of the labels and of the predictions:
  inside the band every ε lies between the smallest and the largest value it can take. The
  amplification ε_pred − ε_true is a difference of two maxima whose upward biases largely cancel;
  its percentile interval meets the coverage targets at 0 and away from it (bench_coverage.py,
  df-none and df-amp; BCa fell just short of 0.93 once), where the band's is about five times
  wider, so ``"auto"`` uses the percentile interval for it and ``ci_method="band"`` still gives
  the band.
* **Streamed counting** (``Family.stream``). Its counts are the per-group confusion counts the group
  fairness family counts too (:mod:`biasamp._engine.group_state`: the same state and counting
  pass); only the settings (``concentration``, ``pos_label``), the function of the counts
  (:func:`~biasamp.differential._metrics.df_from_counts`) and the plan differ.
* **The named streaming forms** (``DifferentialAccumulator``, ``DifferentialFairness`` and
  ``biasamp.dask.df_bias_amplification``) are generated from the declaration; here, only what is
  its own (names, the keywords of ``update``, the definition and the examples of each form).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from biasamp._core.policy import left_out_mask
from biasamp._core.policy_options import BINARY_TASK
from biasamp._core.validation import check
from biasamp._engine import group_state as _fair
from biasamp._engine.groups import cells as _cells
from biasamp._engine.groups import fairness_call
from biasamp._engine.groups import split as _split
from biasamp._engine.intervals import Parts, Plan, Statistic
from biasamp._family import ClassList, Family, Named, Scorer, StatisticSpec, Streaming
from biasamp.differential import _metrics as _d
from biasamp.differential._metrics import DifferentialOptions, df_bias_amplification, df_compute, df_count

__all__ = ["DIFFERENTIAL", "DIFFERENTIAL_STREAM", "DifferentialSettings"]


# --------------------------------------------------------------------------- #
# the resampling plan of a counted call
# --------------------------------------------------------------------------- #
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


# --------------------------------------------------------------------------- #
# streamed counting: the group fairness family's confusion counts, this family's settings and compute
# --------------------------------------------------------------------------- #
@dataclass(frozen=True, eq=False)
class DifferentialSettings(_fair.ConfusionSettings):
    """The confusion counts' settings, whose ``options`` hold ``pos_label``, ``concentration`` and the group options."""

    @property
    def concentration(self) -> float:
        """The total Dirichlet concentration c."""
        return float(self.options["concentration"])


def differential_settings(classes: Mapping[str, tuple], *, concentration: float, pos_label: Any, binary_task: str,
                          **options: Any) -> DifferentialSettings:
    """The settings of a differential-fairness accumulator (options of :func:`~biasamp.df_bias_amplification`; the
    named ones always given, the declared default where the caller gave none; an option the family does not
    declare is refused by the accumulator, :class:`biasamp.accumulators.Accumulator`).

    ``binary_task`` is checked and changes nothing: ε is a maximum over both outcomes.
    """
    check("binary_task", binary_task, BINARY_TASK)
    group_options = {k: options.pop(k) for k in ("min_group_size", "include_small_groups") if k in options}
    return DifferentialSettings(classes["task"], classes["attr"],
                                {"pos_label": pos_label, "concentration": _d._check_concentration(concentration),
                                 **group_options}, options)


def compute(settings: DifferentialSettings, state: _fair.ConfusionState) -> Any:
    """The :class:`~biasamp.DFBiasAmpResult` of the counts."""
    _fair.check_counted(state)
    return _d.df_from_counts(_fair.confusion(settings, state), **settings.options)


def resample(settings: DifferentialSettings, state: _fair.ConfusionState, boot: Any) -> tuple:
    """ε_true, ε_pred and their difference on the confusion table and its replicate tables."""
    point = compute(settings, state)
    full = _fair.table_of(state)
    k = list(settings.classes).index(point.pos_label)
    return df_evaluator(point, k, kept_groups(settings.groups, state.n, point), settings.concentration), full, boot


CLASSES = {"task": ClassList("classes", ("task",)), "attr": ClassList("groups", ("attr",), groups=True)}

DIFFERENTIAL_STREAM = Streaming(classes=CLASSES, settings=differential_settings, start=_fair.start,
                                count=_fair.count, compute=compute, cells=_fair.cells, resample=resample)


# --------------------------------------------------------------------------- #
# the named streaming forms' own docs, and the declaration
# --------------------------------------------------------------------------- #
_DEFINITION = r"""
.. math::

    \tilde P(y \mid s) = \frac{N_{y,s} + c/2}{N_s + c}, \qquad
    \varepsilon = \max_y \Big[\max_s \log \tilde P(y \mid s) - \min_s \log \tilde P(y \mid s)\Big]

and the amplification :math:`\varepsilon_{\text{pred}} - \varepsilon_{\text{true}}` (see
:func:`~biasamp.df_bias_amplification`).
"""

_REFERENCES = """
References
----------
.. [1] J. R. Foulds, R. Islam, K. N. Keya, S. Pan. "An Intersectional
   Definition of Fairness". ICDE 2020.
"""

NAMED = Named(
    accumulator="DifferentialAccumulator", metric="DifferentialFairness", dask=True, generated=True,
    update={"y_true": "task", "y_pred": "task_pred", "sensitive_features": "attr", "sample_weight": "sample_weight"},
    returns=("DF amplification",), base="FairnessAccumulator",
    summary="Differential-fairness bias amplification (Foulds et al. 2020)",
    sections={
        "accumulator": f"""
Notes
-----
The counts are the group fairness family's (:class:`~biasamp.accumulators.FairnessAccumulator`: per group,
its size and the positives of the labels and of the predictions), so batches, ``merge``, ``sync``, Dask
partitions and the streamed bootstrap work alike; ``compute()`` turns them into
{_DEFINITION}
An accumulator of either kind only merges with its own kind.
{_REFERENCES}
Examples
--------
>>> from biasamp.accumulators import DifferentialAccumulator
>>> acc = DifferentialAccumulator([0, 1], ["a", "b"])
>>> acc.update([1, 1, 0, 0], [1, 1, 1, 0], sensitive_features=["a"] * 4)
DifferentialAccumulator(n=4, 2 classes, 2 groups, soft=False)
>>> acc.update([1, 1, 0, 0], [1, 0, 0, 0], sensitive_features=["b"] * 4)
DifferentialAccumulator(n=8, 2 classes, 2 groups, soft=False)
>>> round(acc.compute().value, 4)  # log(.7 / .3), as df_bias_amplification
0.8473
""",
        "metric": f"""
Notes
-----
The states are the counts of :class:`~biasamp.accumulators.DifferentialAccumulator` (summed across
processes); ``compute()`` returns
{_DEFINITION}
and :meth:`result` the whole :class:`~biasamp.DFBiasAmpResult`.
{_REFERENCES}
Examples
--------
>>> import pytest
>>> _ = pytest.importorskip("torchmetrics")
>>> from biasamp.torchmetrics import DifferentialFairness
>>> metric = DifferentialFairness([0, 1], ["a", "b"])
>>> metric.update([1, 1, 0, 0, 1, 1, 0, 0], [1, 1, 1, 0, 1, 0, 0, 0], sensitive_features=list("aaaabbbb"))
>>> round(float(metric.compute()), 4)
0.8473
""",
        "dask": f"""
Returns
-------
DFBiasAmpResult
    Identical to the in-memory result.

Notes
-----
The per-group counts of every partition, tree-merged:
{_DEFINITION}
{_REFERENCES}
Examples
--------
>>> import numpy as np, pytest
>>> da = pytest.importorskip("dask.array")  # the [dask] extra
>>> import biasamp.dask
>>> y = np.array([1, 1, 0, 0, 1, 1, 0, 0] * 50)
>>> p = np.array([1, 1, 1, 0, 1, 0, 0, 0] * 50)
>>> s = np.array(list("aaaabbbb") * 50)
>>> res = biasamp.dask.df_bias_amplification(da.from_array(y, chunks=100), da.from_array(p, chunks=100),
...                                          sensitive_features=da.from_array(s, chunks=100))
>>> round(res.value, 4) == round(biasamp.df_bias_amplification(y, p, sensitive_features=s).value, 4)
True
""",
    },
)


def _read(field: str):
    return lambda res: (float(getattr(res, field)), 0)


DIFFERENTIAL = Family(
    key="differential",
    title="Differential-fairness bias amplification",
    function=df_bias_amplification,
    citation='J. R. Foulds, R. Islam, K. N. Keya, S. Pan. "An Intersectional Definition of Fairness". ICDE 2020.',
    roles=("attr", "task", "task_pred", "sample_weight"),
    statistics=(
        StatisticSpec("DF amplification", "df_amplification", ("task_pred",), _read("value"), (-float("inf"),
                      float("inf")), regular=True, signed=True,
                      scorer=Scorer("DF amplification", target="task", metadata="attr", request="sensitive_features",
                                    aliases=("df_bias_amplification", "differential fairness"))),
        StatisticSpec("epsilon_true", "epsilon_true", ("task_pred",), _read("epsilon_true"), (0.0, float("inf")),
                      regular=False, signed=False),
        StatisticSpec("epsilon_pred", "epsilon_pred", ("task_pred",), _read("epsilon_pred"), (0.0, float("inf")),
                      regular=False, signed=False),
    ),
    call=fairness_call,
    task_labels="binary",
    task_kinds=("binary",),
    count=df_count,
    compute=df_compute,
    resample=df_resample,
    section="differential",
    stream=DIFFERENTIAL_STREAM,
    options=DifferentialOptions,
    named=NAMED,
)
