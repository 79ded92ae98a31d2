"""The declaration of the group fairness family (Qian et al. 2021): DP, DI, SPSF, FPSF, EOFP, EOTP, BA."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from biasamp._engine.groups import complete_one_class, fairness_call
from biasamp._engine.sweep import ThresholdSweep
from biasamp._family import Family, Named, Scorer, StatisticSpec
from biasamp.fairness import _metrics as _f
from biasamp.fairness._options import FairnessOptions
from biasamp.fairness._plan import fairness_resample
from biasamp.fairness._stream import FAIRNESS_STREAM
from biasamp.fairness._sweep import OPTIONS as _SWEEP_OPTIONS
from biasamp.fairness._sweep import fairness_sweep

__all__ = ["FAIRNESS", "audit_options"]


def audit_options(options: Mapping[str, Any], classes: Sequence, multilabel: bool) -> tuple[dict, list[str]]:
    """The group fairness options as an audit (in memory or streamed) applies them, and what to note.

    With no ``pos_label`` given and a single-label task of two classes that
    hold neither 1 nor True (``"yes"``/``"no"``), the headline is the mean over
    both classes (``average="macro"``) and a note says so, where the function
    itself would raise (docs/definitions.md, ``def-fairness``); likewise for a
    task showing one class that ``pos_label`` cannot complete.
    """
    out = {k: (tuple(v) if k == "tolerance" else v) for k, v in options.items()}
    notes = []
    if out.get("average", "auto") == "auto" and not multilabel and len(classes) == 1 \
            and complete_one_class(classes[0], out.get("pos_label", 1)) is None:
        out["average"] = "macro"
        notes.append(f"The task shows a single class {classes[0]!r}: the headline is that class's value; pass "
                     "pos_label (--pos-label) naming the class that never occurs to report it instead")
    if "pos_label" not in out and out.get("average", "auto") == "auto" and not multilabel and len(classes) == 2 \
            and not any(not isinstance(c, str) and c == 1 for c in classes):
        out["average"] = "macro"
        notes.append("The task's two classes include neither 1 nor True: the headline is the mean over both "
                     "classes; pass pos_label (--pos-label) to report one class")
    return out, notes


def _complete_classes(classes: Mapping[str, Any], options: Mapping[str, Any]) -> dict:
    """A task showing one class read as a binary task, its other class from ``pos_label``, as
    :func:`~biasamp.fairness_metrics` infers it (the class list unchanged when that cannot be done)."""
    out = dict(classes)
    task = out.get("task")
    if task is not None and len(task) == 1:
        out["task"] = complete_one_class(task[0], options.get("pos_label", 1)) or task
    return out


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
    count=_f.fairness_count,
    compute=_f.fairness_compute,
    resample=fairness_resample,
    sweep=ThresholdSweep(fairness_sweep, options=_SWEEP_OPTIONS),
    options=FairnessOptions,
    named=Named(accumulator="FairnessAccumulator", metric="GroupFairness", dask=True,
                skips=("group_metrics", "classes")),
    aliases={f: (m,) for f, m in _SINGLE.items()},
    selects="metrics",
    selected=lambda options: _f._check_metrics(options.get("metrics", _f.METRICS)),
    section="fairness",
    stream=FAIRNESS_STREAM,
    audit_options=audit_options,
    complete_classes=_complete_classes,
)
