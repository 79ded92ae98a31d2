"""The options of the group fairness family, declared with their constraints (``Family.options``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from biasamp._core.policy_options import MISSING, GroupOptions, PolicyOptions
from biasamp._core.validation import NONE, Checked, InstanceOf, OneOf, option
from biasamp.fairness._groups import check_tolerance
from biasamp.fairness._metrics import AVERAGES, METRICS, _check_metrics

__all__ = ["FairnessOptions"]

#: ``average``: the positive class's value, the mean over classes, or (auto) the one that fits the task
AVERAGE = (OneOf(*AVERAGES),)
#: ``tolerance``: the band of disparity ratios that pass
TOLERANCE = (Checked(check_tolerance, "a number in (0, 1] or a pair (low, high)"),)


@dataclass(frozen=True)
class FairnessOptions(PolicyOptions, GroupOptions):
    """Options of :func:`~biasamp.fairness_metrics` (and of the single-metric functions)."""

    metrics: Any = option(METRICS, Checked(_check_metrics, "a subset of the metric names"),
                          doc="the metrics computed")
    average: Any = option("auto", *AVERAGE, doc="'binary' (the positive class), 'macro' (the mean) or 'auto'")
    pos_label: Any = option(1, doc="the positive class of a binary task")
    missing: str = option("raise", *MISSING, doc="rows with a missing value: 'raise', 'drop' or 'group'")
    reference_group: Any = option("largest", doc="reference of the disparity ratios: 'largest', 'best' or a group")
    tolerance: Any = option((0.8, 1.25), *TOLERANCE, doc="disparity ratios inside (low, high) pass")
    group_metrics: Any = option(None, NONE, InstanceOf(Mapping, description="a mapping name -> function"),
                                doc="extra per-group metrics")
    classes: Any = option(None, doc="the task classes (default: inferred)")
