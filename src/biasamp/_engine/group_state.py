"""The streamed per-group confusion counts: the state and counting hooks the group fairness and the
differential-fairness families share (their ``Streaming`` declarations).

The state is the one-vs-rest confusion counts per (group, class) of
:class:`~biasamp.ConfusionCounts`: the group sizes ``n_g``, the positives
``P_gk``, the predicted positives ``(TP+FP)_gk`` and the true positives
``TP_gk``, summed over batches. A family adds its settings (a subclass of
:class:`ConfusionSettings`), its ``compute`` and its ``resample``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from biasamp._core.labels import to_numpy
from biasamp._core.policy import joined
from biasamp._engine.groups import ConfusionCounts, prepare
from biasamp._engine.groups import count as count_rows
from biasamp._engine.state import (
    CountState,
    ReplicateRows,
    Settings,
    any_of,
    arguments,
    meta,
    setting,
    sum_filters,
    table,
)

__all__ = ["ConfusionSettings", "ConfusionState", "cells", "check_counted", "confusion", "count", "start",
           "table_of"]


@dataclass(frozen=True, eq=False)
class ConfusionSettings(Settings):
    """Class lists and options of an accumulator of confusion counts (``options``: read at ``compute``;
    ``label_options``: how probabilities are counted)."""

    classes: tuple = setting()
    groups: tuple = setting()
    options: dict = setting()
    label_options: dict = setting()


@dataclass(eq=False)
class ConfusionState(CountState):
    """The per-group confusion counts and what the batches said."""

    n: np.ndarray = table()
    positives: np.ndarray = table()
    predicted: np.ndarray = table()
    true_positives: np.ndarray = table()
    feature_names: tuple | None = arguments("sensitive feature columns", describe=lambda f: repr(list(f)))
    soft: bool = meta(False, any_of)
    weighted: bool = meta(False, any_of)
    multilabel: bool = meta(False, any_of)
    predictions: str = meta("hard", joined)
    rows: Any = meta(None, sum_filters)  # the rows the batches dropped (zero weights), summed


def cells(settings: ConfusionSettings) -> tuple[int, int]:
    """One row per group; columns ``[n | P_k | (TP+FP)_k | TP_k]``."""
    return len(settings.groups), 1 + 3 * len(settings.classes)


def start(settings: ConfusionSettings) -> ConfusionState:
    """The empty state (zero tables)."""
    g, k = len(settings.groups), len(settings.classes)
    return ConfusionState(np.zeros(g, dtype=np.float64), np.zeros((g, k), dtype=np.float64),
                          np.zeros((g, k), dtype=np.float64), np.zeros((g, k), dtype=np.float64))


def count(settings: ConfusionSettings, roles: Mapping[str, Any],
          replicate: bool) -> tuple[ConfusionState, ReplicateRows | None]:
    """One batch (``task``: ``y_true``, ``task_pred``: ``y_pred``, ``attr``: ``sensitive_features``).

    The rows are prepared and counted exactly as by
    :func:`~biasamp.fairness_metrics` and
    :func:`~biasamp.df_bias_amplification` count them (one vectorized pass).
    """
    sample_weight, row_ids = roles.get("sample_weight"), roles.get("row_ids")
    prep = prepare(roles.get("task"), roles.get("task_pred"), roles.get("attr"), classes=settings.classes,
                    groups=settings.groups, batch=True, sample_weight=sample_weight, **settings.label_options)
    if row_ids is not None and prep.rows is not None and prep.rows.n_zero_weight:
        row_ids = np.asarray(to_numpy(row_ids, "row_ids"))[to_numpy(sample_weight, "sample_weight") > 0]
    yt, yp, gcodes, w = prep.yt, prep.yp, prep.gcodes, prep.weights
    n_g, pos, pred, tp = count_rows(gcodes, len(prep.groups), yt, yp, w)
    c = ConfusionCounts(yt.classes, prep.groups, n_g, pos, pred, tp, prep.feature_names, yp.soft)
    empty = start(settings)
    state = ConfusionState(empty.n + c.n, empty.positives + c.positives, empty.predicted + c.predicted,
                           empty.true_positives + c.true_positives, c.feature_names, c.soft, w is not None,
                           yt.codes is None, prep.predictions, prep.rows)
    if not replicate:
        return state, None
    from scipy import sparse

    from biasamp._engine.resample import augmented, label_rows

    n, idx = yt.n_rows, np.arange(yt.n_rows)
    trows, prows = label_rows(yt, idx), label_rows(yp, idx)
    vals = np.ones(n) if w is None else w
    left = sparse.csr_matrix((vals, (idx, gcodes)), shape=(n, len(settings.groups)))
    return state, ReplicateRows(left, augmented([trows, prows, trows.multiply(prows)], n), n, row_ids)


def confusion(settings: ConfusionSettings, state: ConfusionState) -> ConfusionCounts:
    """The accumulated :class:`~biasamp.ConfusionCounts` (integers where every count is one)."""
    n, pos = state.n.copy(), state.positives.copy()
    pred, tp = state.predicted.copy(), state.true_positives.copy()
    if not state.weighted:
        n, pos = np.rint(n).astype(np.int64), np.rint(pos).astype(np.int64)
        if not state.soft:
            pred, tp = np.rint(pred).astype(np.int64), np.rint(tp).astype(np.int64)
    return ConfusionCounts(
        settings.classes, settings.groups, n, pos, pred, tp,
        state.feature_names or ("sensitive_feature",), state.soft, state.multilabel, state.predictions,
    )


def check_counted(state: ConfusionState) -> None:
    """``ValueError`` when no row was counted."""
    if int(state.n.sum()) == 0:
        raise ValueError("no batch was counted: call update() first")


def table_of(state: ConfusionState) -> np.ndarray:
    """The state as one table ``(G, 1 + 3K)``, the layout of the plans' replicate tables."""
    return np.column_stack([state.n, state.positives, state.predicted, state.true_positives]).astype(np.float64)
