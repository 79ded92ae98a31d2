"""The Poisson bootstrap of the accumulators, Dask and the streamed audit."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import biasamp as b
from biasamp.accumulators import CooccurrenceAccumulator, FairnessAccumulator, MultiAttributeAccumulator


def _cooc(seed=0, n=3000):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    t = (rng.random((n, 4)) < 0.3 + 0.2 * a[:, None]).astype(int)
    tp = np.where(rng.random((n, 4)) < 0.1, 1 - t, t)
    ap = np.where(rng.random(n) < 0.1, 1 - a, a)
    return a, t, ap, tp


def test_replicates_add_over_batches_and_merges():
    """Batches, merged partitions and one shot give the same replicate tables when the row ids agree.

    (The plug-in, ``cross_fit=False``: cross-fitted, a row's replicate vector sits in the block of its fold, which
    depends on its batch; tests/test_common.py checks that the folds of a split add up to these tables.)
    """
    a, t, ap, tp = _cooc()
    one = CooccurrenceAccumulator(2, 4, n_boot=50, random_state=3, cross_fit=False).update(a, t, attr_pred=ap,
                                                                                            task_pred=tp)
    batches = CooccurrenceAccumulator(2, 4, n_boot=50, random_state=3, cross_fit=False)
    for rows in np.array_split(np.arange(len(a)), 4):
        batches.update(a[rows], t[rows], attr_pred=ap[rows], task_pred=tp[rows])
    np.testing.assert_allclose(batches.boot, one.boot)
    left = CooccurrenceAccumulator(2, 4, n_boot=50, random_state=3, cross_fit=False)
    right = CooccurrenceAccumulator(2, 4, n_boot=50, random_state=3, cross_fit=False)
    ids = np.arange(len(a))
    left.update(a[:1000], t[:1000], attr_pred=ap[:1000], task_pred=tp[:1000], row_ids=ids[:1000])
    right.update(a[1000:], t[1000:], attr_pred=ap[1000:], task_pred=tp[1000:], row_ids=ids[1000:])
    np.testing.assert_allclose((left + right).boot, one.boot)
    # the state holds hashed group tables: they add up to the count table, and a group's rows are Binomial(n, 1/G)
    sizes = one.boot[:, 0, 0]
    assert sizes.sum() == len(a)
    np.testing.assert_array_equal(one.boot.sum(axis=0)[:, :5], one.gram[:, :5])  # the [1|A|Â] x [1|T] block
    assert abs(sizes.var() - len(a) / len(sizes)) < 0.2 * len(a) / len(sizes)
    with pytest.raises(ValueError, match="n_boot or random_state"):
        left.merge(CooccurrenceAccumulator(2, 4, n_boot=50, random_state=4, cross_fit=False))


def test_stream_tests_equal_in_memory_and_intervals_hold_estimates():
    a, t, ap, tp = _cooc(1)
    acc = CooccurrenceAccumulator(2, 4, n_boot=300, random_state=0, cross_fit=False)  # the plug-in: batches add
    for rows in np.array_split(np.arange(len(a)), 3):
        acc.update(a[rows], t[rows], attr_pred=ap[rows], task_pred=tp[rows])
    streamed = acc.bootstrap()
    memory = b.bootstrap(b.bias_amp_directional, a, t, attr_pred=ap, task_pred=tp, n_boot=300, random_state=0,
                         cross_fit=False)
    assert streamed.estimate == memory.estimate
    assert streamed.p_global == pytest.approx(memory.p_global, rel=1e-12)  # the tests of no effect: the counts
    for name, (lo, hi) in streamed.ci.items():
        assert lo <= streamed.estimate[name] <= hi
        assert streamed.methods[name] == "percentile"
        # both bootstraps estimate the same sampling distribution
        assert hi - lo == pytest.approx(memory.ci[name][1] - memory.ci[name][0], rel=0.3)
    # BCa: the acceleration from the delete-one-group jackknife of the hashed groups
    bca = acc.bootstrap(ci_method="bca")
    memory_bca = b.bootstrap(b.bias_amp_directional, a, t, attr_pred=ap, task_pred=tp, n_boot=300, random_state=0,
                             cross_fit=False, ci_method="bca")
    for name, (lo, hi) in bca.ci.items():
        assert bca.methods[name] == "BCa" and lo <= bca.estimate[name] <= hi
        assert hi - lo == pytest.approx(memory_bca.ci[name][1] - memory_bca.ci[name][0], rel=0.3)
    with pytest.raises(ValueError, match="n_boot"):
        CooccurrenceAccumulator(2, 4).update(a, t, task_pred=tp).bootstrap()


def test_cross_fitted_stream_bootstrap_agrees_with_the_in_memory_one():
    """One batch without a training set: the streamed bootstrap holds the cross-fitted estimate, its exact tests are
    the in-memory ones (on every row), and both bootstraps estimate the same sampling distribution."""
    a, t, ap, tp = _cooc(5)
    acc = CooccurrenceAccumulator(2, 4, n_boot=300, random_state=0).update(a, t, attr_pred=ap, task_pred=tp)
    streamed = acc.bootstrap()
    memory = b.bootstrap(b.bias_amp_directional, a, t, attr_pred=ap, task_pred=tp, n_boot=300, random_state=0)
    assert acc.compute().cross_fit and memory.result.cross_fit
    assert streamed.estimate == memory.estimate
    assert streamed.p_global == pytest.approx(memory.p_global, rel=1e-12)  # the tests of no effect: the counts
    assert any("cross-fitted" in note for note in streamed.notes)
    for name, (lo, hi) in streamed.ci.items():
        assert lo <= streamed.estimate[name] <= hi
        assert hi - lo == pytest.approx(memory.ci[name][1] - memory.ci[name][0], rel=0.3)
    mals = CooccurrenceAccumulator(2, 4, metric="mals", n_boot=300, random_state=0)
    mals.update(a, t, attr_pred=ap, task_pred=tp)
    mine = mals.bootstrap()
    theirs = b.bootstrap(b.bias_amp_mals, a, t, attr_pred=ap, task_pred=tp, cross_fit=True, n_boot=300,
                         random_state=0)
    assert mine.estimate == theirs.estimate
    lo, hi = mine.ci["MALS"]
    assert hi - lo == pytest.approx(theirs.ci["MALS"][1] - theirs.ci["MALS"][0], rel=0.3)


def test_fairness_and_multi_accumulators():
    rng = np.random.default_rng(2)
    n = 2000
    g, y = rng.integers(0, 3, n), rng.integers(0, 3, n)
    p = np.where(rng.random(n) < 0.6 + 0.1 * g, y, rng.integers(0, 3, n))
    acc = FairnessAccumulator(3, 3, n_boot=200, random_state=0)
    for rows in np.array_split(np.arange(n), 4):
        acc.update(y[rows], p[rows], sensitive_features=g[rows])
    res = acc.bootstrap()
    mem = b.bootstrap(b.fairness_metrics, y, p, sensitive_features=g, n_boot=200, random_state=0)
    assert res.estimate == pytest.approx(mem.estimate)
    assert res.p_global == pytest.approx(mem.p_global)
    assert all(lo <= res.estimate[m] <= hi for m, (lo, hi) in res.ci.items())
    a, t, ap, tp = _cooc(3, 2000)
    multi = MultiAttributeAccumulator(2, 4, n_boot=200, random_state=0, cross_fit=False)  # the plug-in: batches add
    multi.collect(t)
    multi.freeze()
    for rows in np.array_split(np.arange(len(a)), 2):
        multi.update(a[rows], t[rows], attr_pred=ap[rows], task_pred=tp[rows])
    mres = multi.bootstrap()
    point = b.multi_bias_amp(a, t, attr_pred=ap, task_pred=tp, cross_fit=False)
    assert mres.estimate["G->M"] == pytest.approx(point.g_to_m.value)
    assert mres.estimate["Multi_MALS raw"] == pytest.approx(point.mals.raw)
    assert all(lo <= mres.estimate[k] <= hi for k, (lo, hi) in mres.ci.items())


def test_dask_bootstrap_matches_accumulators():
    da = pytest.importorskip("dask.array")
    import biasamp.dask as bd

    a, t, ap, tp = _cooc(4, 2100)
    chunks = 700
    res = bd.bootstrap(bd.bias_amp_directional, da.from_array(a, chunks=chunks), da.from_array(t, chunks=chunks),
                       task_pred=da.from_array(tp, chunks=chunks), n_boot=100, random_state=5)
    # the same partitions as accumulators with streams 0, 1, 2
    accs = [CooccurrenceAccumulator(2, 4, n_boot=100, random_state=5, stream=i).update(
        a[i * chunks:(i + 1) * chunks], t[i * chunks:(i + 1) * chunks], task_pred=tp[i * chunks:(i + 1) * chunks])
        for i in range(3)]
    ref = sum(accs[1:], accs[0]).bootstrap()
    assert res.ci == ref.ci and res.p_value == ref.p_value
    same = bd.bootstrap(b.bias_amp_directional, da.from_array(a, chunks=chunks), da.from_array(t, chunks=chunks),
                        task_pred=da.from_array(tp, chunks=chunks), n_boot=100, random_state=5)
    assert same.ci == res.ci
    with pytest.raises(TypeError, match="supports"):
        bd.bootstrap(b.dpa, a, t)


def test_the_monte_carlo_tests_of_a_stream_draw_as_the_functions_bootstrap():
    """With a small group, the per-class independence tests of FPSF/EOFP/EOTP take their Monte-Carlo branch: the
    accumulator's draws are biasamp.bootstrap's for the same random_state, so their p-values are equal (they were
    two draws: 0.0932 against 0.0896 in an audit)."""
    rng = np.random.default_rng(3)
    n = 1200
    g = rng.choice(["a", "b", "c"], n, p=[0.48, 0.48, 0.04])
    y = (rng.random(n) < 0.3).astype(int)
    p = np.where(rng.random(n) < 0.8, y, 1 - y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        memory = b.bootstrap(b.fairness_metrics, y, p, sensitive_features=g, n_boot=50, random_state=5)
        acc = FairnessAccumulator([0, 1], ["a", "b", "c"], n_boot=50, random_state=5)
        for rows in np.array_split(np.arange(n), 4):
            acc.update(y[rows], p[rows], sensitive_features=g[rows])
        streamed = acc.bootstrap()
    for metric in ("FPSF", "EOFP", "EOTP"):
        assert "monte-carlo" in memory.test_methods[metric]
        np.testing.assert_array_equal(streamed.tables[metric]["p_value"], memory.tables[metric]["p_value"])
