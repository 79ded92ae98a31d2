"""Threshold sweep of the group fairness metrics (the kernel :func:`biasamp.threshold_curve` runs).

The groups' confusion counts at every grid point come from one sort per
scored class (:class:`biasamp._engine.sweep.Column`, counting the rows
above each threshold per group and truth); the metrics are evaluated on the
stack of count tables by :func:`~biasamp.fairness._metrics.metric_arrays`,
with the headline (classes, small groups) of
:func:`~biasamp.fairness_metrics`, so the curve equals the metric at every
grid point.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from biasamp._core.labels import LabelMatrix, encode_labels
from biasamp._core.policy_options import DEFAULT_MIN_GROUP_SIZE
from biasamp._engine.groups import encode_groups, headline_of, infer_classes
from biasamp._engine.sweep import Column, SweepCurve, SweepInputs, grid_of, hard, score_matrix
from biasamp.fairness import _metrics as _f

__all__ = ["OPTIONS", "fairness_sweep"]

#: the options of fairness_metrics the sweep applies (the curve's values equal the function with them)
OPTIONS = ("average", "pos_label", "min_group_size", "include_small_groups")


def fairness_sweep(inputs: SweepInputs) -> SweepCurve:
    """The fairness metrics at every grid point: ``task`` the ground truth, ``attr`` the sensitive feature."""
    if inputs.task_scores is None or inputs.attr_scores is not None or inputs.attr_pred is not None \
            or inputs.task_pred is not None or inputs.attr_train is not None:
        raise ValueError("the fairness metrics take task_scores only (attr is the sensitive feature, task the "
                         "ground truth); attr_scores, attr_pred, task_pred and the training labels do not apply")
    classes = infer_classes(inputs.task)
    yt = encode_labels({"y_true": inputs.task}, classes=classes)["y_true"]
    gcodes, groups, _ = encode_groups(inputs.attr, yt.n_rows)
    n_groups = len(groups)
    if n_groups < 2:
        raise ValueError(f"sensitive_features (attr) has a single group {groups[0]!r}; the fairness metrics "
                         "compare at least two groups")
    scores, binary = score_matrix(inputs.task_scores, "task_scores", yt, "task")
    grid, values = grid_of(inputs.thresholds, inputs.rates, [scores])
    n_g = np.bincount(gcodes, minlength=n_groups).astype(np.int64)
    truth = yt.to_dense(np.int8) != 0  # (n, K)
    positives = np.stack([np.bincount(gcodes, weights=truth[:, k], minlength=n_groups)
                          for k in range(yt.n_classes)], axis=1).astype(np.int64)  # (G_groups, K)
    pred = np.empty((len(values), n_groups, yt.n_classes), dtype=np.int64)
    tp = np.empty_like(pred)
    taus = np.empty((len(values), scores.shape[1]))
    for j in range(scores.shape[1]):  # per scored class: groups x (negative, positive) of that class, one sort
        k = yt.n_classes - 1 if binary else j
        codes = gcodes + n_groups * truth[:, k].astype(np.intp)
        weights = LabelMatrix("w", tuple(range(2 * n_groups)), codes=codes)
        col = Column.build(scores[:, j], grid, values)
        above = col.above(weights)  # (G, 2 * groups)
        pred[:, :, k] = above[:, :n_groups] + above[:, n_groups:]
        tp[:, :, k] = above[:, n_groups:]
        taus[:, j] = col.tau
    if binary:  # class 0 is predicted where class 1 is not
        pred[:, :, 0] = n_g[None, :] - pred[:, :, 1]
        tp[:, :, 0] = (n_g - positives[:, 1])[None, :] - (pred[:, :, 1] - tp[:, :, 1])
    # the headline of fairness_metrics: the positive class (binary) or the mean over classes, without the
    # small groups (docs/definitions.md, def-fairness and def-small-groups)
    opts = inputs.options
    _, _, headline = headline_of(yt.classes, False, opts.get("average", "auto"), opts.get("pos_label", 1))
    _, excluded = _f._small_groups(n_g.astype(np.float64), _f._check_min_group_size(opts.get("min_group_size",
                                                                                             DEFAULT_MIN_GROUP_SIZE)),
                                   bool(opts.get("include_small_groups", False)))
    keep = ~excluded
    in_headline = np.zeros(yt.n_classes, dtype=bool)
    in_headline[list(headline)] = True
    arrays = _f.metric_arrays(np.broadcast_to(n_g[keep], (len(values), int(keep.sum()))),
                              np.broadcast_to(positives[keep], (len(values), *positives[keep].shape)),
                              pred[:, keep], tp[:, keep], inputs.statistics)
    results = {}
    for m, (v, defined) in arrays.items():
        mean, cnt = _f._aggregate(v, defined & in_headline)
        results[m] = (mean, int(in_headline.sum()) - cnt, int(in_headline.sum()))
    label_cols = [yt.classes[-1]] if binary else list(yt.classes)

    def predictions(j: int) -> dict[str, Any]:
        return {"task_pred": hard(scores, binary, taus[j])}

    return SweepCurve(grid, values, results, {f"task:{c}": taus[:, j] for j, c in enumerate(label_cols)},
                      predictions)
