"""The declaration of the group fairness family (Qian et al. 2021): DP, DI, SPSF, FPSF, EOFP, EOTP, BA."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from biasamp._engine.sweep import ThresholdSweep
from biasamp._family import Family, Scorer, StatisticSpec
from biasamp.fairness import _metrics as _f
from biasamp.fairness._options import FairnessOptions
from biasamp.fairness._plan import _fairness_plan
from biasamp.fairness._stream import FAIRNESS_STREAM
from biasamp.fairness._sweep import OPTIONS as _SWEEP_OPTIONS
from biasamp.fairness._sweep import fairness_sweep

__all__ = ["FAIRNESS", "fairness_call"]


def fairness_call(roles: Mapping[str, Any], options: Mapping[str, Any]) -> tuple[tuple, dict]:
    """``f(y_true=task, y_pred=task_pred, *, sensitive_features=attr, sample_weight, **options)``."""
    if roles.get("task_pred") is None:
        raise ValueError("the fairness metrics need the task predictions (task_preds / task_scores)")
    if roles.get("attr_pred") is not None:
        raise ValueError("the fairness metrics take no attribute predictions (attr_preds / attr_scores)")
    kwargs = {"sensitive_features": roles["attr"]}
    if roles.get("sample_weight") is not None:
        kwargs["sample_weight"] = roles["sample_weight"]
    return (roles["task"], roles["task_pred"]), {**kwargs, **options}


def _read(metric: str):
    def read(res: Any) -> tuple[float, int]:
        if not hasattr(res, "overall"):  # a single fairness function returns its number
            return float(res), 0
        return float(res.overall[metric]), int(res.n_undefined[metric])

    return read


_SINGLE = {
    _f.demographic_parity: "DP", _f.normalized_disparate_impact: "DI",
    _f.statistical_parity_subgroup_fairness: "SPSF", _f.false_positive_subgroup_fairness: "FPSF",
    _f.equalized_odds_false_positive: "EOFP", _f.equalized_odds_true_positive: "EOTP",
    _f.group_bias_amplification: "BA",
}

FAIRNESS = Family(
    key="fairness",
    title="Group fairness (Qian et al.)",
    function=_f.fairness_metrics,
    citation='S. Qian et al. "Are My Deep Learning Systems Fair? An Empirical Study of Fixed-Seed Training". '
             'NeurIPS 2021, App. A-C.',
    roles=("attr", "task", "task_pred", "sample_weight"),
    statistics=tuple(
        StatisticSpec(m, m, ("task_pred",), _read(m), (0.0, 1.0), regular=False, signed=False,
                      scorer=Scorer(m, target="task", metadata="attr", request="sensitive_features",
                                    options={"metrics": [m]}))
        for m in _f.METRICS
    ),
    call=fairness_call,
    task_labels="single",
    plan=_fairness_plan,
    sweep=ThresholdSweep(fairness_sweep, options=_SWEEP_OPTIONS),
    options=FairnessOptions,
    aliases={f: (m,) for f, m in _SINGLE.items()},
    selected=lambda options: _f._check_metrics(options.get("metrics", _f.METRICS)),
    section="fairness",
    stream=FAIRNESS_STREAM,
)
