"""The options of the group fairness family, declared with their constraints (``Family.options``).

:func:`~biasamp.fairness_metrics` (and through it each single-metric
function) builds :class:`FairnessOptions` from its keywords at entry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from biasamp._core.policy_options import MISSING, BinaryTaskOptions, GroupOptions, PolicyOptions
from biasamp._core.validation import NONE, Checked, InstanceOf, OneOf, option
from biasamp._engine.groups import AVERAGES
from biasamp.fairness._groups import check_tolerance

__all__ = ["AVERAGES", "METRICS", "FairnessOptions"]

#: The seven metrics of Qian et al. (2021), in the paper's order.
METRICS = ("DP", "DI", "SPSF", "FPSF", "EOFP", "EOTP", "BA")
AVERAGE = (OneOf(*AVERAGES),)
#: ``tolerance``: the band of disparity ratios that pass
TOLERANCE = (Checked(check_tolerance, "a number in (0, 1] or a pair (low, high)"),)


def _check_metrics(metrics: Sequence[str] | str) -> tuple[str, ...]:
    """``metrics`` (one name or several) as the tuple of the names, in the order of :data:`METRICS`."""
    if isinstance(metrics, str):
        metrics = (metrics,)
    metrics = tuple(metrics)
    unknown = [m for m in metrics if m not in METRICS]
    if unknown or not metrics:
        raise ValueError(f"metrics must be a non-empty subset of {METRICS}, got {list(metrics)!r}")
    return tuple(m for m in METRICS if m in metrics)


@dataclass(frozen=True)
class FairnessOptions(PolicyOptions, GroupOptions, BinaryTaskOptions):
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

    def _normalise(self) -> None:
        if not isinstance(self.metrics, (str, tuple)) and isinstance(self.metrics, Iterable):
            object.__setattr__(self, "metrics", tuple(self.metrics))  # an iterator is read once, here

    @property
    def metric_names(self) -> tuple[str, ...]:
        """The metrics computed: ``metrics`` as a tuple in the order of :data:`METRICS`."""
        return _check_metrics(self.metrics)
