"""Streamed counting of differential-fairness bias amplification: the hooks of the family's declaration.

Its counts are the per-group confusion counts the group fairness family counts too
(:mod:`biasamp._engine.group_state`: the same state and counting pass); only the
settings (``concentration``, ``pos_label``), the function of the counts
(:func:`~biasamp.differential._metrics.df_from_counts`) and the plan differ.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from biasamp._engine import group_state as _fair
from biasamp._engine.groups import LABEL_OPTIONS
from biasamp._family import ClassList, Streaming

__all__ = ["DIFFERENTIAL_STREAM", "DifferentialSettings"]


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
    named ones always given, the declared default where the caller gave none).

    ``binary_task`` is checked and changes nothing: ε is a maximum over both outcomes.
    """
    from biasamp._core.policy_options import BINARY_TASK
    from biasamp._core.validation import check
    from biasamp.differential._metrics import _check_concentration

    check("binary_task", binary_task, BINARY_TASK)
    group_options = {k: options.pop(k) for k in ("min_group_size", "include_small_groups") if k in options}
    unknown = set(options) - set(LABEL_OPTIONS)
    if unknown:
        raise TypeError(f"DifferentialAccumulator got unexpected options {sorted(unknown)!r}; it takes "
                        f"concentration, pos_label, min_group_size, include_small_groups and "
                        f"{sorted(LABEL_OPTIONS)!r}")
    return DifferentialSettings(classes["task"], classes["attr"],
                                {"pos_label": pos_label, "concentration": _check_concentration(concentration),
                                 **group_options}, options)


def compute(settings: DifferentialSettings, state: _fair.ConfusionState) -> Any:
    """The :class:`~biasamp.DFBiasAmpResult` of the counts."""
    from biasamp.differential._metrics import df_from_counts

    _fair.check_counted(state)
    return df_from_counts(_fair.confusion(settings, state), **settings.options)


def resample(settings: DifferentialSettings, state: _fair.ConfusionState, boot: Any) -> tuple:
    """ε_true, ε_pred and their difference on the confusion table and its replicate tables."""
    from biasamp.differential._plan import df_evaluator, kept_groups

    point = compute(settings, state)
    full = _fair.table_of(state)
    k = list(settings.classes).index(point.pos_label)
    return df_evaluator(point, k, kept_groups(settings.groups, state.n, point), settings.concentration), full, boot


CLASSES = {"task": ClassList("classes", ("task",)), "attr": ClassList("groups", ("attr",), groups=True)}

DIFFERENTIAL_STREAM = Streaming(classes=CLASSES, settings=differential_settings, start=_fair.start,
                                count=_fair.count, compute=compute, cells=_fair.cells, resample=resample,
                                filtered_classes=False)
