"""Threshold sweeps of BiasAmp→ and BiasAmp_MALS (the kernels :func:`biasamp.threshold_curve` runs).

Each kernel counts the labels once, takes the predicted co-occurrence counts
at every grid point from one sort per score column
(:func:`biasamp._engine.sweep.predicted`), and evaluates the metric on the
stack of count tables with the same pure functions as
:func:`~biasamp.bias_amp_directional` and :func:`~biasamp.bias_amp_mals`, so
the curve equals the metric at every grid point.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from biasamp._core.labels import LabelMatrix, check_consistent_length, encode_labels, positive_class, read_task_roles
from biasamp._core.policy import small_groups
from biasamp._core.policy_options import BINARY_TASK, DEFAULT_MIN_GROUP_SIZE
from biasamp._core.validation import check
from biasamp._engine import pair_terms as _t
from biasamp._engine.sweep import SweepCurve, SweepInputs, grid_of, hard, label_taus, predicted, score_matrix, totals
from biasamp.cooccurrence import _metrics as _c
from biasamp.cooccurrence._counts import CooccurrenceCounts

__all__ = ["directional_sweep", "mals_sweep"]


@dataclass(frozen=True)
class _Encoded:
    """The labels of a co-occurrence curve, encoded and checked, the scores and the grid."""

    attr: LabelMatrix
    task: LabelMatrix
    attr_pred: LabelMatrix | None
    task_pred: LabelMatrix | None
    train_attr: LabelMatrix
    train_task: LabelMatrix
    task_scores: tuple[np.ndarray, bool] | None  # (N x K score matrix, binary 1-D score)
    attr_scores: tuple[np.ndarray, bool] | None
    grid: str
    values: np.ndarray
    task_labels: tuple | None = None  # a binary task read as its positive class: (its classes, the positive index)


def _encode(inputs: SweepInputs) -> _Encoded:
    a = encode_labels({"attr": inputs.attr, "attr_train": inputs.attr_train}, {"attr_pred": inputs.attr_pred})
    t = encode_labels({"task": inputs.task, "task_train": inputs.task_train}, {"task_pred": inputs.task_pred})
    check_consistent_length(attr=a["attr"], task=t["task"], attr_pred=a.get("attr_pred"), task_pred=t.get("task_pred"))
    ts = score_matrix(inputs.task_scores, "task_scores", t["task"], "task") if inputs.task_scores is not None else None
    # the rule for a binary task (the function's binary_task, pos_label): the positive class's score column alone
    binary_task = check("binary_task", inputs.options.get("binary_task", "positive"), BINARY_TASK)
    index = positive_class(t["task"], binary_task, inputs.options.get("pos_label"))
    task_labels = None
    if index is not None:
        task_labels = (t["task"].classes, index)
        t, _ = read_task_roles(t, "task", binary_task, inputs.options.get("pos_label"))
        if ts is not None:
            scores, binary = ts
            ts = ((scores if index == 1 else 1 - scores) if binary else scores[:, [index]], False)
    as_ = score_matrix(inputs.attr_scores, "attr_scores", a["attr"], "attr") if inputs.attr_scores is not None \
        else None
    grid, values = grid_of(inputs.thresholds, inputs.rates, [s[0] for s in (ts, as_) if s is not None])
    train_a = a.get("attr_train", a["attr"])
    train_t = t.get("task_train", t["task"])
    if inputs.attr_train is not None:
        check_consistent_length(attr_train=train_a, task_train=train_t)
    return _Encoded(a["attr"], t["task"], a.get("attr_pred"), t.get("task_pred"), train_a, train_t, ts, as_, grid,
                    values, task_labels)


def _cross(a: LabelMatrix, t: LabelMatrix) -> np.ndarray:
    """``K_A x K_T`` co-occurrence counts #(a, t)."""
    return CooccurrenceCounts.from_encoded([_c._as_role(a, "attr")], [_c._as_role(t, "task")]).cross("attr", "task")


def _predictions(inputs: SweepInputs, enc: _Encoded, task_taus: np.ndarray | None,
                 attr_taus: np.ndarray | None) -> Callable[[int], dict[str, Any]]:
    """The hard predictions at grid point ``j``: the scored sides thresholded, the other side as given."""

    def at(j: int) -> dict[str, Any]:
        preds = {"task_pred": inputs.task_pred, "attr_pred": inputs.attr_pred}
        if enc.task_scores is not None and task_taus is not None:
            preds["task_pred"] = hard(enc.task_scores[0], enc.task_scores[1], task_taus[j])
            if enc.task_labels is not None:  # the positive class's column: as the task's labels
                classes, index = enc.task_labels
                positive = preds["task_pred"][:, 0] == 1
                other = classes[1 - index] if len(classes) == 2 else classes[0]
                preds["task_pred"] = np.where(positive, classes[index] if index < len(classes) else 1, other)
        if enc.attr_scores is not None and attr_taus is not None:
            preds["attr_pred"] = hard(enc.attr_scores[0], enc.attr_scores[1], attr_taus[j])
        return preds

    return at


def _directional_values(attr: LabelMatrix, task: LabelMatrix, y: np.ndarray, a_counts: np.ndarray | None,
                        t_counts: np.ndarray | None) -> dict[str, tuple[np.ndarray, np.ndarray, int]]:
    """BiasAmp→ values over the grid from the stacked predicted counts (None: direction absent).

    Small attribute classes are left out of the means as :func:`~biasamp.bias_amp_directional` leaves them
    (its default ``min_group_size``; their size does not depend on the threshold).
    """
    both = _c._exact(_cross(attr, task)).astype(np.float64)
    out = {}
    n_a, n_t = totals(attr), totals(task)
    _, excluded = small_groups(n_a, DEFAULT_MIN_GROUP_SIZE, False)
    left_out = np.broadcast_to(excluded[:, None], both.shape)
    for s, pred, support in (("a_to_t", t_counts, np.broadcast_to(n_a[:, None], both.shape)),
                             ("t_to_a", a_counts, np.broadcast_to(n_t[None, :], both.shape))):
        if pred is None:
            continue
        _, _, _, contribution, undefined = _t._direction_arrays(y, both, support, pred)
        undefined = np.broadcast_to(undefined, pred.shape)
        value = _c._mean_defined(contribution, undefined | left_out)
        out[s] = (value, undefined.sum(axis=(-2, -1)), undefined.shape[-1] * undefined.shape[-2])
    return out


def directional_sweep(inputs: SweepInputs) -> SweepCurve:
    """BiasAmp→ (A→T from task scores or predictions, T→A from attribute ones) at every grid point."""
    enc = _encode(inputs)
    g = len(enc.values)
    shape = (g, enc.attr.n_classes, enc.task.n_classes)
    y = _c.correlation_sign(CooccurrenceCounts.from_encoded([_c._as_role(enc.train_attr, "attr")],
                                                            [_c._as_role(enc.train_task, "task")]))
    thresholds: dict[str, np.ndarray] = {}
    t_counts = a_counts = task_taus = attr_taus = None
    if enc.task_scores is not None:
        scores, binary = enc.task_scores
        t_counts, task_taus = predicted(scores, binary, enc.grid, enc.values, enc.attr)
        thresholds.update(label_taus(enc.task, task_taus, binary, "task"))
    elif enc.task_pred is not None:
        t_counts = np.broadcast_to(_cross(enc.attr, _c._as_role(enc.task_pred, "task")), shape)
    if enc.attr_scores is not None:
        scores, binary = enc.attr_scores
        a_counts, attr_taus = predicted(scores, binary, enc.grid, enc.values, enc.task)
        a_counts = np.swapaxes(a_counts, -1, -2)  # (G, K_A, K_T)
        thresholds.update(label_taus(enc.attr, attr_taus, binary, "attr"))
    elif enc.attr_pred is not None:
        a_counts = np.broadcast_to(_cross(_c._as_role(enc.attr_pred, "attr"), enc.task), shape)
    results = _directional_values(enc.attr, enc.task, y, a_counts, t_counts)
    return SweepCurve(enc.grid, enc.values, results, thresholds, _predictions(inputs, enc, task_taus, attr_taus))


def mals_sweep(inputs: SweepInputs) -> SweepCurve:
    """BiasAmp_MALS at every grid point: #(â, t̂) with one side scored and the other side's hard predictions."""
    enc = _encode(inputs)
    g = len(enc.values)
    if (enc.task_scores is None) == (enc.attr_scores is None):
        raise ValueError("BiasAmp_MALS needs the scores of one side and the hard predictions of the other "
                         "(task_scores with attr_pred, or attr_scores with task_pred)")
    thresholds: dict[str, np.ndarray] = {}
    task_taus = attr_taus = None
    if enc.task_scores is not None:
        if enc.attr_pred is None:
            raise ValueError("BiasAmp_MALS with task_scores needs attr_pred (the predicted attribute)")
        scores, binary = enc.task_scores
        pp, task_taus = predicted(scores, binary, enc.grid, enc.values, enc.attr_pred)
        thresholds.update(label_taus(enc.task, task_taus, binary, "task"))
        # small attribute classes, sized by their predicted rows (as bias_amp_mals sizes them)
        sizes = np.broadcast_to(totals(enc.attr_pred), (g, enc.attr.n_classes))
    else:
        assert enc.attr_scores is not None  # exactly one side is scored (checked above)
        if enc.task_pred is None:
            raise ValueError("BiasAmp_MALS with attr_scores needs task_pred (the predicted task)")
        scores, binary = enc.attr_scores
        pp, attr_taus = predicted(scores, binary, enc.grid, enc.values, enc.task_pred)
        pp = np.swapaxes(pp, -1, -2)
        thresholds.update(label_taus(enc.attr, attr_taus, binary, "attr"))
        # the predicted rows of each attribute class at each grid point
        above = (scores[None, :, :] > attr_taus[:, None, :]).sum(axis=1)  # (G, scored columns)
        sizes = np.column_stack([len(scores) - above[:, 0], above[:, 0]]) if binary else above
    at = _c._exact(_cross(enc.train_attr, enc.train_task))
    *_, contribution, undefined, n_tasks = _t._mals_arrays(at, pp.astype(np.float64))
    if n_tasks == 0:
        raise ValueError("BiasAmp_MALS: no task has a positive training instance; every pair is undefined")
    left_out = np.stack([small_groups(s, DEFAULT_MIN_GROUP_SIZE, False)[1] for s in sizes])[:, :, None]  # (G, K_A, 1)
    value = _c._mals_value(np.where(left_out, np.nan, contribution), n_tasks)
    nund = np.broadcast_to(undefined, pp.shape).sum(axis=(-2, -1))
    total = undefined.shape[-1] * undefined.shape[-2]
    value = np.where(nund == total, np.nan, value)
    return SweepCurve(enc.grid, enc.values, {"mals": (value, nund, total)}, thresholds,
                      _predictions(inputs, enc, task_taus, attr_taus))
