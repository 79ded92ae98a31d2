"""Streamed counting of the group fairness metrics: the hooks of the family's declaration (``Streaming``).

The state is the one-vs-rest confusion counts per (group, class) of
:class:`~biasamp.ConfusionCounts`: the group sizes ``n_g``, the positives
``P_gk``, the predicted positives ``(TP+FP)_gk`` and the true positives
``TP_gk``, summed over batches: the state and counting pass shared with the
differential-fairness family (:mod:`biasamp._engine.group_state`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from biasamp._engine.group_state import (
    ConfusionSettings,
    ConfusionState,
    cells,
    check_counted,
    confusion,
    count,
    start,
    table_of,
)
from biasamp._engine.groups import LABEL_OPTIONS as _LABEL_OPTIONS
from biasamp._engine.state import setting
from biasamp._family import ClassList, Streaming
from biasamp.fairness._metrics import (
    _FROM_COUNTS_OPTIONS,
    FairnessResult,
    _check_metrics,
    counts_compute,
)
from biasamp.fairness._options import FairnessOptions

__all__ = ["CLASSES", "FAIRNESS_STREAM", "FairnessStreamSettings"]


@dataclass(frozen=True, eq=False)
class FairnessStreamSettings(ConfusionSettings):
    """The settings of a fairness accumulator: the confusion counts' settings and the metrics it computes."""

    metrics: tuple = setting()


def fairness_settings(classes: Mapping[str, tuple], *, metrics: Sequence[str],
                      **options: Any) -> FairnessStreamSettings:
    """The settings of a fairness accumulator: ``metrics`` (given, the declared default where the caller gave
    none) and the options of :func:`~biasamp.fairness_metrics` (an option the family does not declare is refused
    by the accumulator, :class:`biasamp.accumulators.Accumulator`)."""
    return FairnessStreamSettings(classes["task"], classes["attr"],
                                  {k: v for k, v in options.items() if k in _FROM_COUNTS_OPTIONS},
                                  {k: v for k, v in options.items() if k in _LABEL_OPTIONS}, _check_metrics(metrics))


def compute(settings: FairnessStreamSettings, state: ConfusionState) -> FairnessResult:
    """The fairness metrics of the counts: the family's ``compute`` hook on the summed table, with what the
    batches' counting said (the rows dropped, the weights)."""
    check_counted(state)
    opts = FairnessOptions(metrics=settings.metrics, **settings.options)
    return counts_compute(confusion(settings, state), opts, rows=state.rows, weighted=state.weighted)


def resample(settings: FairnessStreamSettings, state: ConfusionState, boot: np.ndarray) -> tuple:
    """The fairness plan on the confusion table and its replicate tables, restricted to the groups of the headline
    (the small groups left out of it are left out of every replicate, as in memory)."""
    from biasamp.fairness._plan import fairness_evaluator

    point = compute(settings, state)
    full = table_of(state)
    headline = set(point.counts.groups)
    keep = np.array([g in headline for g in settings.groups])
    if not keep.all():
        full, boot = full[keep], boot[..., keep, :]
    return fairness_evaluator(point, full, settings.metrics, state.soft), full, boot


CLASSES = {"task": ClassList("classes", ("task",)), "attr": ClassList("groups", ("attr",), groups=True)}

FAIRNESS_STREAM = Streaming(classes=CLASSES, settings=fairness_settings, start=start, count=count, compute=compute,
                            cells=cells, resample=resample)
