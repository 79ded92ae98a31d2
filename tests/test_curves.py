"""Threshold and checkpoint curves: equal to the metric recomputed at every grid point, hand cases,
one sort per score column, intervals equal to the per-point bootstrap, plots and reports."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import biasamp
from biasamp import (
    UndefinedPairWarning,
    bias_amp_directional,
    bias_amp_mals,
    bootstrap,
    calibrate_thresholds,
    checkpoint_curve,
    demographic_parity,
    fairness_metrics,
    multi_bias_amp,
    threshold_curve,
)
from biasamp._families import REGISTRY
from biasamp.report import Report


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        return fn(*args, **kwargs)


# --------------------------------------------------------------------------- #
# hand-computed
# --------------------------------------------------------------------------- #
ATTR = np.array([0, 0, 0, 1, 1, 1])
TASK = np.array([1, 1, 0, 1, 0, 0])
SCORES = np.array([0.9, 0.6, 0.4, 0.7, 0.3, 0.2])


def test_directional_threshold_curve_by_hand():
    """y: n*#(a,t) - #a*#t = 6*2 - 9 > 0 for (a0, t1) and (a1, t0), < 0 for the other two pairs.

    tau = 0.35: T^ = 1,1,1,1,0,0 -> Delta(a0,t1) = 1 - 2/3, Delta(a0,t0) = 0 - 1/3, group 1 unchanged:
    (1/3 + 1/3) / 4 = 1/6. tau = 0.5: T^ = T -> 0. tau = 0.65: T^ = 1,0,0,1,0,0 -> (-1/3 - 1/3) / 4.
    tau = 1: nothing positive: Delta(a0,t1) = -2/3, (a0,t0) = +2/3, (a1,t1) = -1/3, (a1,t0) = +1/3 ->
    (-2/3 - 2/3 + 1/3 + 1/3) / 4 = -1/6.
    """
    curve = threshold_curve(bias_amp_directional, ATTR, TASK, task_scores=SCORES, thresholds=[0.35, 0.5, 0.65, 1.0],
                            attr_train=ATTR, task_train=TASK)  # the signs of these labels (not cross-fitted)
    np.testing.assert_allclose(curve.values["a_to_t"], [1 / 6, 0, -1 / 6, -1 / 6], atol=1e-15)
    assert curve.statistics == ("a_to_t",) and curve.grid == "threshold"
    assert list(curve.to_frame().columns) == ["threshold", "a_to_t"]
    np.testing.assert_array_equal(curve.thresholds["task:1"], [0.35, 0.5, 0.65, 1.0])


def test_rate_grid_uses_the_calibration_rule():
    curve = threshold_curve(bias_amp_directional, ATTR, TASK, task_scores=SCORES, rates=[2 / 6, 3 / 6, 4 / 6],
                            attr_train=ATTR, task_train=TASK)
    # rate 1/2: the 3 highest scores (0.9, 0.7, 0.6) positive -> threshold 0.4, predictions = truth
    np.testing.assert_allclose(curve.to_frame()["threshold"], [0.6, 0.4, 0.3])
    np.testing.assert_allclose(curve.values["a_to_t"], [-1 / 6, 0, 1 / 6], atol=1e-15)
    for r, tau in zip([2 / 6, 3 / 6, 4 / 6], curve.to_frame()["threshold"]):
        assert calibrate_thresholds(SCORES, rates=r).thresholds.iloc[0] == tau


# --------------------------------------------------------------------------- #
# equal to a recount at every grid point
# --------------------------------------------------------------------------- #
def _grid(rng, scores):
    ties = rng.choice(np.ravel(scores), 3)  # thresholds equal to some scores: the strict ">" matters
    return np.concatenate([ties, rng.uniform(-0.1, 1.1, 4)])


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**16), st.integers(1, 3), st.integers(2, 4))
def test_directional_equals_the_metric_at_every_threshold(seed, k_attr, k_task):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 80))
    attr = (rng.random((n, k_attr)) < 0.5).astype(int)
    task = (rng.random((n, k_task)) < 0.4).astype(int)
    task_scores = np.round(rng.random((n, k_task)), 1)  # rounded: many ties
    attr_scores = np.round(rng.random((n, k_attr)), 1)
    grid = _grid(rng, task_scores)
    # cross_fit=False: the one-sort kernel (plug-in signs of the test rows); the cross-fitted default is the
    # function at every point (test_every_declared_sweep_equals_the_function_at_every_threshold)
    curve = _quiet(threshold_curve, bias_amp_directional, attr, task, task_scores=task_scores,
                   attr_scores=attr_scores, thresholds=grid, cross_fit=False)
    for j, tau in enumerate(grid):
        try:
            ref = _quiet(bias_amp_directional, attr, task, task_pred=(task_scores > tau).astype(int),
                         attr_pred=(attr_scores > tau).astype(int), cross_fit=False)
        except ValueError:  # every pair undefined: the curve is NaN there
            assert np.isnan(curve.values.iloc[j]).all()
            continue
        assert curve.values["a_to_t"].iloc[j] == pytest.approx(ref.a_to_t.value, abs=1e-12)
        assert curve.values["t_to_a"].iloc[j] == pytest.approx(ref.t_to_a.value, abs=1e-12)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**16))
def test_binary_1d_scores_mals_and_a_training_set(seed):
    rng = np.random.default_rng(seed)
    n = 120
    attr = rng.integers(0, 2, n)
    task = (rng.random(n) < 0.3 + 0.3 * attr).astype(int)
    attr_train = rng.integers(0, 2, 200)
    task_train = (rng.random(200) < 0.3 + 0.4 * attr_train).astype(int)
    scores = rng.random(n)
    attr_pred = np.where(rng.random(n) < 0.9, attr, 1 - attr)
    grid = _grid(rng, scores)
    curve = _quiet(threshold_curve, bias_amp_directional, attr, task, task_scores=scores, attr_pred=attr_pred,
                   attr_train=attr_train, task_train=task_train, thresholds=grid)
    mals = _quiet(threshold_curve, bias_amp_mals, attr, task, task_scores=scores, attr_pred=attr_pred,
                  attr_train=attr_train, task_train=task_train, thresholds=grid)
    for j, tau in enumerate(grid):
        hard = (scores > tau).astype(int)
        ref = _quiet(bias_amp_directional, attr, task, task_pred=hard, attr_pred=attr_pred, attr_train=attr_train,
                     task_train=task_train)
        assert curve.values["a_to_t"].iloc[j] == pytest.approx(ref.a_to_t.value, abs=1e-12)
        assert curve.values["t_to_a"].iloc[j] == pytest.approx(ref.t_to_a.value, abs=1e-12)  # fixed A^
        try:
            m = _quiet(bias_amp_mals, attr, task, attr_pred=attr_pred, task_pred=hard, attr_train=attr_train,
                       task_train=task_train).value
        except ValueError:
            assert np.isnan(mals.values["mals"].iloc[j])
            continue
        assert mals.values["mals"].iloc[j] == pytest.approx(m, abs=1e-12)
    # the attribute side scored instead
    a_scores = rng.random(n)
    mals = _quiet(threshold_curve, bias_amp_mals, attr, task, attr_scores=a_scores, task_pred=task, thresholds=grid)
    for j, tau in enumerate(grid):
        try:
            # no training set: the test rows stand in, the indicator cross-fitted (as the family's call does)
            m = _quiet(bias_amp_mals, attr, task, attr_pred=(a_scores > tau).astype(int), task_pred=task,
                       cross_fit=True).value
        except ValueError:
            continue
        assert mals.values["mals"].iloc[j] == pytest.approx(m, abs=1e-12)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**16), st.sampled_from(["binary", "multilabel", "multiclass", "intersectional"]))
def test_fairness_equals_the_metric_at_every_threshold(seed, kind):
    rng = np.random.default_rng(seed)
    n = 150
    groups = rng.integers(0, 3, n)
    sensitive = groups
    if kind == "binary":
        y_true, scores = rng.integers(0, 2, n), np.round(rng.random(n), 1)
    elif kind == "multilabel":
        y_true, scores = (rng.random((n, 3)) < 0.4).astype(int), np.round(rng.random((n, 3)), 1)
    elif kind == "multiclass":
        y_true, scores = rng.integers(0, 3, n), np.round(rng.random((n, 3)), 1)
    else:
        y_true, scores = rng.integers(0, 2, n), rng.random(n)
        sensitive = pd.DataFrame({"g": groups, "h": rng.integers(0, 2, n)})
    grid = _grid(rng, scores)
    curve = _quiet(threshold_curve, fairness_metrics, sensitive, y_true, task_scores=scores, thresholds=grid)
    for j, tau in enumerate(grid):
        hard = (scores > tau).astype(int)
        try:
            ref = _quiet(fairness_metrics, y_true, hard, sensitive_features=sensitive).overall
        except ValueError:
            continue
        for m, v in ref.items():
            assert curve.values[m].iloc[j] == pytest.approx(v, abs=1e-12, nan_ok=True), (m, tau)
    single = _quiet(threshold_curve, demographic_parity, sensitive, y_true, task_scores=scores, thresholds=grid)
    np.testing.assert_allclose(single.values["DP"], curve.values["DP"], atol=1e-15)


@pytest.mark.parametrize("family", list(REGISTRY), ids=lambda f: f.key)
def test_every_declared_sweep_equals_the_function_at_every_threshold(family):
    """threshold_curve dispatches through the declaration alone: each family that declares a sweep is swept by
    its own kernel (the curve equals the function on the thresholded scores); one without is refused."""
    rng = np.random.default_rng(12)
    n = 400
    attr = rng.integers(0, 3, n)
    attr_pred = np.where(rng.random(n) < 0.2, rng.integers(0, 3, n), attr)
    k = {"multilabel": 4, "single": 3, "binary": 2}[family.task_labels]
    if family.task_labels == "multilabel":
        task = (rng.random((n, k)) < 0.2 + 0.15 * attr[:, None]).astype(int)
    else:
        task = (rng.random(n) < 0.3 + 0.2 * attr).astype(int) if k == 2 else rng.integers(0, k, n)
    scores = np.clip(0.5 * (task if task.ndim == 2 else np.eye(k)[task]) + 0.6 * rng.random((n, k)), 0, 1)
    extra = {"attr_pred": attr_pred} if "attr_pred" in family.roles else {}
    if family.sweep is None:
        with pytest.raises(TypeError, match="supports the count-based metrics"):
            threshold_curve(family.function, attr, task, task_scores=scores, **extra)
        return
    grid = [0.25, 0.5, 0.75]
    # without a training set: the cross-fitted function at every threshold (the default), and the one-sort
    # sweep of the plug-in signs with cross_fit=False
    for options in ([{}, {"cross_fit": False}] if family.cross_fit else [{}]):
        curve = _quiet(threshold_curve, family.function, attr, task, task_scores=scores, thresholds=grid,
                       **extra, **options)
        assert curve.statistics and curve.thresholds is not None and curve.thresholds.shape == (3, k)
        for j, tau in enumerate(grid):
            args, kwargs = family.call({"attr": attr, "task": task, "task_pred": (scores > tau).astype(int),
                                        **extra}, options)
            res = _quiet(family.function, *args, **kwargs)
            for spec in family.statistics:
                if spec.column in curve.statistics:
                    assert curve.values[spec.column].iloc[j] == pytest.approx(spec.read(res)[0], abs=1e-12,
                                                                             nan_ok=True)


def test_one_sort_per_score_column_and_no_recount(monkeypatch):
    """The grid costs one sort per score column; the metric's own counting never runs per threshold."""
    from biasamp._engine import sweep

    builds, recounts = [], []
    build = sweep.Column.build.__func__
    monkeypatch.setattr(sweep.Column, "build", classmethod(lambda cls, *a: builds.append(1) or build(cls, *a)))
    real = biasamp.CooccurrenceCounts.from_labels.__func__
    monkeypatch.setattr(biasamp.CooccurrenceCounts, "from_labels",
                        classmethod(lambda cls, *a, **k: recounts.append(1) or real(cls, *a, **k)))
    rng = np.random.default_rng(0)
    attr = rng.integers(0, 2, 500)
    task = (rng.random((500, 4)) < 0.4).astype(int)
    curve = threshold_curve(bias_amp_directional, attr, task, task_scores=rng.random((500, 4)),
                            thresholds=np.linspace(0, 1, 101))
    assert len(curve.x) == 101 and len(builds) == 4 and not recounts


# --------------------------------------------------------------------------- #
# intervals
# --------------------------------------------------------------------------- #
def test_intervals_are_the_bootstrap_at_each_point():
    rng = np.random.default_rng(1)
    attr = rng.integers(0, 2, 400)
    task = (rng.random(400) < 0.3 + 0.3 * attr).astype(int)
    scores = np.clip(0.5 * task + 0.2 * attr + rng.normal(0, 0.2, 400), 0, 1)
    grid = [0.3, 0.5, 0.7]
    curve = threshold_curve(bias_amp_directional, attr, task, task_scores=scores, thresholds=grid, n_boot=200,
                            random_state=3)
    frame = curve.to_frame()
    for j, tau in enumerate(grid):
        boot = bootstrap(bias_amp_directional, attr, task, task_pred=(scores > tau).astype(np.int8), n_boot=200,
                         random_state=3)
        assert (frame["a_to_t_low"][j], frame["a_to_t_high"][j]) == boot.ci["A->T"]
        assert frame["a_to_t_low"][j] <= frame["a_to_t"][j] <= frame["a_to_t_high"][j]
    assert curve.level == 0.95 and "bootstrap (200 per point)" in curve.ci_method
    fair = threshold_curve(fairness_metrics, attr, task, task_scores=scores, thresholds=grid, metrics=["DP", "EOTP"],
                           n_boot=100, random_state=0)
    assert list(fair.to_frame().columns) == ["threshold", "DP", "DP_low", "DP_high", "EOTP", "EOTP_low", "EOTP_high"]
    boot = bootstrap(fairness_metrics, task, (scores > 0.5).astype(np.int8), sensitive_features=attr,
                     metrics=["DP", "EOTP"], n_boot=100, random_state=0)
    assert (fair.low["DP"][1], fair.high["DP"][1]) == boot.ci["DP"]


# --------------------------------------------------------------------------- #
# checkpoint curves
# --------------------------------------------------------------------------- #
def test_checkpoint_curve_equals_the_metric_per_checkpoint():
    rng = np.random.default_rng(2)
    attr = rng.integers(0, 2, 300)
    task = (rng.random((300, 3)) < 0.3 + 0.2 * attr[:, None]).astype(int)
    epochs = [np.where(rng.random((300, 3)) < p, 1 - task, task) for p in (0.3, 0.15, 0.05)]
    attr_epochs = [np.where(rng.random(300) < p, 1 - attr, attr) for p in (0.3, 0.15, 0.05)]
    curve = checkpoint_curve(bias_amp_directional, attr, task, task_preds=epochs, attr_preds=attr_epochs,
                             checkpoints=["e1", "e2", "e3"])
    for k in range(3):
        ref = bias_amp_directional(attr, task, task_pred=epochs[k], attr_pred=attr_epochs[k])
        assert curve.values["a_to_t"][k] == ref.a_to_t.value and curve.values["t_to_a"][k] == ref.t_to_a.value
    assert curve.to_frame()["checkpoint"].tolist() == ["e1", "e2", "e3"]
    multi = _quiet(checkpoint_curve, multi_bias_amp, attr, task, task_preds=epochs, attr_preds=attr_epochs,
                   max_size=2)
    ref = _quiet(multi_bias_amp, attr, task, task_pred=epochs[1], attr_pred=attr_epochs[1], max_size=2)
    assert multi.statistics == ("multi_mals", "g_to_m", "m_to_g")
    assert multi.values.iloc[1].tolist() == [ref.mals.value, ref.g_to_m.value, ref.m_to_g.value]
    mals = checkpoint_curve(bias_amp_mals, attr, task, task_preds=epochs, attr_preds=attr_epochs)
    # a checkpoint curve calls the function as the family does: the test rows stand in for the training set, the
    # indicator cross-fitted
    assert mals.values["mals"][2] == bias_amp_mals(attr, task, attr_pred=attr_epochs[2], task_pred=epochs[2],
                                                   cross_fit=True).value
    fair = checkpoint_curve(fairness_metrics, attr, task[:, 0], task_preds=[e[:, 0] for e in epochs], metrics=["DP"],
                            n_boot=50, random_state=0)
    boot = bootstrap(fairness_metrics, task[:, 0], epochs[2][:, 0], sensitive_features=attr, metrics=["DP"],
                     n_boot=50, random_state=0)
    assert fair.values["DP"][2] == boot.estimate["DP"] and (fair.low["DP"][2], fair.high["DP"][2]) == boot.ci["DP"]


def test_curve_errors():
    with pytest.raises(TypeError, match="supports the count-based metrics"):
        threshold_curve(multi_bias_amp, ATTR, TASK, task_scores=SCORES)
    with pytest.raises(TypeError, match="supports the count-based metrics"):
        checkpoint_curve(biasamp.dpa, ATTR, TASK, task_preds=[TASK])
    with pytest.raises(ValueError, match="task_scores and/or attr_scores"):
        threshold_curve(bias_amp_directional, ATTR, TASK)
    with pytest.raises(ValueError, match="thresholds or rates, not both"):
        threshold_curve(bias_amp_directional, ATTR, TASK, task_scores=SCORES, thresholds=[0.5], rates=[0.5])
    with pytest.raises(ValueError, match="rates must be"):
        threshold_curve(bias_amp_directional, ATTR, TASK, task_scores=SCORES, rates=[1.5])
    with pytest.raises(ValueError, match="2 columns but task has 2 classes|has 3 columns"):
        threshold_curve(bias_amp_directional, ATTR, TASK, task_scores=np.ones((6, 3)))
    with pytest.raises(ValueError, match="P\\(class 1\\) of a binary"):
        threshold_curve(bias_amp_directional, ATTR, np.array([0, 1, 2, 0, 1, 2]), task_scores=SCORES)
    with pytest.raises(ValueError, match="NaN"):
        threshold_curve(bias_amp_directional, ATTR, TASK, task_scores=np.r_[SCORES[:5], np.nan])
    with pytest.raises(ValueError, match="task_scores or task_pred"):
        threshold_curve(bias_amp_directional, ATTR, TASK, task_scores=SCORES, task_pred=TASK)
    with pytest.raises(ValueError, match="needs attr_pred"):
        threshold_curve(bias_amp_mals, ATTR, TASK, task_scores=SCORES, attr_train=ATTR, task_train=TASK)
    with pytest.raises(ValueError, match="fairness metrics take task_scores only"):
        threshold_curve(fairness_metrics, ATTR, TASK, task_scores=SCORES, attr_scores=SCORES)
    with pytest.raises(ValueError, match="fairness_metrics only"):
        threshold_curve(bias_amp_directional, ATTR, TASK, task_scores=SCORES, metrics=["DP"])
    with pytest.raises(TypeError, match="a list"):
        checkpoint_curve(bias_amp_directional, ATTR, TASK, task_preds=TASK)
    with pytest.raises(ValueError, match="one prediction set per checkpoint"):
        checkpoint_curve(bias_amp_directional, ATTR, TASK, task_preds=[TASK, TASK], attr_preds=[ATTR])
    with pytest.raises(ValueError, match="checkpoints has 1 labels for 2"):
        checkpoint_curve(bias_amp_directional, ATTR, TASK, task_preds=[TASK, TASK], checkpoints=["a"])
    with pytest.raises(ValueError, match="checkpoint 'b'"):
        checkpoint_curve(bias_amp_mals, ATTR, TASK, task_preds=[TASK, TASK], attr_preds=[ATTR, np.full(6, 7)],
                         checkpoints=["a", "b"], attr_train=ATTR, task_train=TASK)


# --------------------------------------------------------------------------- #
# plots and reports
# --------------------------------------------------------------------------- #
def test_plot_and_report():
    pytest.importorskip("matplotlib")
    curve = threshold_curve(bias_amp_directional, ATTR, TASK, task_scores=SCORES, attr_scores=SCORES,
                            thresholds=[0.35, 0.5, 0.65], n_boot=50, random_state=0, attr_train=ATTR, task_train=TASK)
    fig = curve.plot()
    ax = fig.axes[0]
    assert [line.get_label() for line in ax.get_lines() if not line.get_label().startswith("_")] == \
        ["a_to_t", "t_to_a"]
    np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), curve.values["a_to_t"])
    assert ax.get_xlabel() == "decision threshold"
    report = curve.to_report()
    html = report.to_html()
    assert "<svg" in html and "a_to_t" in html
    section = report.section("threshold_curve")
    assert section.figures[0].kind == "line" and len(section.tables["curve"]) == 3
    # the largest |value| of each statistic is its summary row
    row = section.summary.iloc[0]
    assert row["metric"] == "a_to_t" and abs(row["value"]) == pytest.approx(1 / 6)
    again = Report.from_json(report.to_json())
    assert again.section("threshold_curve").figures[0].kind == "line"
    jsonschema = pytest.importorskip("jsonschema")
    from biasamp.report import REPORT_JSON_SCHEMA

    jsonschema.validate(json.loads(report.to_json()), REPORT_JSON_SCHEMA)
    # a checkpoint curve (labels on the x axis) into an existing report
    ckpt = checkpoint_curve(bias_amp_directional, ATTR, TASK, task_preds=[TASK, 1 - TASK], checkpoints=["a", "b"])
    report.sections.append(ckpt.to_section())
    assert "checkpoint_curve" in [s.key for s in report.sections] and "<svg" in report.to_html()
    assert [t.get_text() for t in ckpt.plot().axes[0].get_xticklabels()] == ["a", "b"]


def test_checkpoint_curve_none_predictions_and_all_undefined_are_named_errors():
    """Found by the fuzz (issue 25, item 8): a None among the predictions leaked a KeyError; a statistic
    undefined at every checkpoint now raises as threshold_curve does."""
    import biasamp as b

    attr = np.array([0, 0, 1, 1, 0, 1])
    task = np.array([0, 1, 0, 1, 1, 0])
    with pytest.raises(ValueError, match=r"task_preds\[0\] is None"):
        b.checkpoint_curve(b.bias_amp_directional, attr, task, task_preds=[None, None],
                           attr_preds=[attr, attr])
    # all-1 ground truth (the binary task (0, 1), positive class 1): no group has a negative, so EOFP has no
    # FPR anywhere, at every checkpoint
    y = np.ones(6, int)
    g = np.array(["a", "b"] * 3)
    with pytest.raises(ValueError, match="EOFP is undefined at every checkpoint"):
        b.checkpoint_curve(b.fairness_metrics, g, y, task_preds=[y, y], metrics=["DP", "EOFP"],
                           min_group_size=0)
