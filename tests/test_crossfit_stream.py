"""Cross-fitted signs in the streamed layers (issue 21 item 1, second step).

The co-occurrence accumulators keep the distinct rows they count and split them
once, at the end, with the functional API's rule, so any batching (and any
merge) gives the function's value on every row. Derived independently here:
the function on all the rows, on the distinct rows with their multiplicities
as weights, and the streamed audit of issue 21's noise attribute.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import biasamp
from biasamp import UndefinedPairWarning
from biasamp.accumulators import CooccurrenceAccumulator, MultiAttributeAccumulator
from biasamp.exceptions import SmallGroupWarning


def _data(seed: int, n: int = 900):
    rng = np.random.default_rng(seed)
    attr = rng.integers(0, 3, n)
    task = (rng.random((n, 4)) < 0.25 + 0.1 * attr[:, None]).astype(int)
    task_pred = np.where(rng.random(task.shape) < 0.2, 1 - task, task)
    attr_pred = np.where(rng.random(n) < 0.2, rng.integers(0, 3, n), attr)
    return attr, task, attr_pred, task_pred


def _batches(n: int, k: int) -> list[np.ndarray]:
    return np.array_split(np.arange(n), k)


def _uneven(n: int, k: int, seed: int) -> list[np.ndarray]:
    """k batches of uneven sizes (cut at random places) of the rows 0..n-1."""
    cuts = np.sort(np.random.default_rng(seed).choice(np.arange(1, n), size=k - 1, replace=False))
    return np.split(np.arange(n), cuts)


@pytest.mark.parametrize("k", [1, 2, 5, 7])
@pytest.mark.parametrize("weights", ["none", "integer", "fractional"])
def test_k_batches_are_the_function_bit_for_bit(k, weights):
    """BiasAmp-> of k uneven batches = the function on every row (one dataset, one number): the split is drawn
    once over every row counted, never per batch (before, k batches split each batch on its own)."""
    attr, task, attr_pred, task_pred = _data(1)
    rng = np.random.default_rng(2)
    w = None if weights == "none" else rng.integers(1, 4, len(attr)).astype(float)
    if weights == "fractional":
        w[::7] = 0.5
    acc = CooccurrenceAccumulator(3, 4)
    for rows in _uneven(len(attr), k, k):
        acc.update(attr[rows], task[rows], attr_pred=attr_pred[rows], task_pred=task_pred[rows],
                   sample_weight=None if w is None else w[rows])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        res = acc.compute()
        ref = biasamp.bias_amp_directional(attr, task, attr_pred=attr_pred, task_pred=task_pred, sample_weight=w)
    assert res.cross_fit
    assert res.a_to_t.value == ref.a_to_t.value and res.t_to_a.value == ref.t_to_a.value
    np.testing.assert_array_equal(res.a_to_t.pairs["y_fold0"], ref.a_to_t.pairs["y_fold0"])


@pytest.mark.parametrize("metric", ["directional", "mals"])
def test_merged_shuffled_batches_and_repeated_rows_are_the_function(metric):
    """Two accumulators over shuffled uneven batches, merged (ranks, partitions), equal the function; so do the
    distinct rows given once with their multiplicities as units (crossfit's ``units``, what the row set does; not
    as sample weights, which keep a row whole); and so do their bootstraps."""
    attr, task, attr_pred, task_pred = _data(3)
    fn = biasamp.bias_amp_directional if metric == "directional" else biasamp.bias_amp_mals
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        ref = fn(attr, task, attr_pred=attr_pred, task_pred=task_pred)
        order = np.random.default_rng(5).permutation(len(attr))
        parts = []
        for half in np.array_split(order, 2):
            acc = CooccurrenceAccumulator(3, 4, metric=metric, n_boot=200, random_state=1)
            for rows in _uneven(len(half), 3, 9):
                r = half[rows]
                acc.update(attr[r], task[r], attr_pred=attr_pred[r], task_pred=task_pred[r])
            parts.append(acc)
        merged = parts[0].merge(parts[1])
        one = CooccurrenceAccumulator(3, 4, metric=metric, n_boot=200, random_state=1)
        one.update(attr, task, attr_pred=attr_pred, task_pred=task_pred)
        values = [(r.a_to_t.value, r.t_to_a.value) if metric == "directional" else (r.value,)
                  for r in (ref, merged.compute(), one.compute())]
        assert values[1] == values[0] and values[2] == values[0]
        # the streamed interval is a function of the rows too: the same whatever the batching and merging
        b1, b2 = merged.bootstrap(), one.bootstrap()
    assert b1.ci == b2.ci and b1.estimate == b2.estimate
    assert all(b1.ci[k][0] <= b1.estimate[k] <= b1.ci[k][1] for k in b1.ci)
    assert any("split in two folds once, over every row" in n for n in b1.notes)


def test_multi_one_batch_is_the_function_and_other_seeds_other_splits():
    attr, task, attr_pred, task_pred = _data(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        for seed in (None, 11):
            ref = biasamp.multi_bias_amp(attr, task, attr_pred=attr_pred, task_pred=task_pred,
                                         cross_fit_random_state=seed)
            acc = MultiAttributeAccumulator(3, 4, combinations=list(ref.combinations), cross_fit_random_state=seed)
            res = acc.update(attr, task, attr_pred=attr_pred, task_pred=task_pred).compute()
            assert res.cross_fit
            for name in ("mals", "g_to_m", "m_to_g"):
                assert getattr(res, name).raw == getattr(ref, name).raw, name
                assert getattr(res, name).value == getattr(ref, name).value, name


def test_options_are_checked_by_name():
    with pytest.raises(TypeError, match="cross_fit must be None, True or False"):
        CooccurrenceAccumulator(3, 4, cross_fit="yes")
    with pytest.raises(ValueError, match="cross_fit_random_state"):
        MultiAttributeAccumulator(3, 4, cross_fit_random_state=-1)
    train = biasamp.CooccurrenceCounts.from_labels([0, 1, 2], [[1, 0, 0, 0]] * 3, attr_classes=[0, 1, 2],
                                                   task_classes=range(4))
    with pytest.raises(ValueError, match="cross_fit=True"):
        CooccurrenceAccumulator(3, 4, train=train, cross_fit=True)
    attr, task, attr_pred, task_pred = _data(5, n=60)
    with pytest.raises(ValueError, match="cross_fit=True"):  # MALS without the ground truth cannot be cross-fitted
        CooccurrenceAccumulator(3, 4, metric="mals", cross_fit=True).update(attr_pred=attr_pred, task_pred=task_pred)
    # a generator draws one seed at construction: every batch is split with it
    a = CooccurrenceAccumulator(3, 4, cross_fit_random_state=np.random.default_rng(0))
    b = CooccurrenceAccumulator(3, 4, cross_fit_random_state=np.random.default_rng(0))
    for acc in (a, b):
        for rows in _batches(60, 2):
            acc.update(attr[rows], task[rows], task_pred=task_pred[rows])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert a.compute().a_to_t.value == b.compute().a_to_t.value


def test_dask_one_partition_is_the_function():
    da = pytest.importorskip("dask.array")
    import biasamp.dask as bdask

    attr, task, attr_pred, task_pred = _data(6, n=500)
    res = bdask.bias_amp_directional(da.from_array(attr, chunks=500), da.from_array(task, chunks=(500, 4)),
                                     task_pred=da.from_array(task_pred, chunks=(500, 4)))
    ref = biasamp.bias_amp_directional(attr, task, task_pred=task_pred)
    assert res.cross_fit and res.a_to_t.value == ref.a_to_t.value
    mals = bdask.bias_amp_mals(da.from_array(attr, chunks=500), da.from_array(task, chunks=(500, 4)),
                               attr_pred=da.from_array(attr_pred, chunks=500),
                               task_pred=da.from_array(task_pred, chunks=(500, 4)), cross_fit=True)
    assert mals.value == biasamp.bias_amp_mals(attr, task, attr_pred=attr_pred, task_pred=task_pred,
                                               cross_fit=True).value


def test_the_streamed_audit_reads_the_noise_attribute_as_neither_amplified_nor_reduced(tmp_path):
    """Issue 21's reproducer through the streamed audit: cross-fitted over every row, no "reduced" reading."""
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    from biasamp.report._stream import ParquetDataset, StreamColumns, stream_audit

    from .test_stream import _write

    rng = np.random.default_rng(3)
    n = 6000
    g, y = rng.integers(0, 200, n), (rng.random(n) < 0.45).astype(int)
    p = y ^ (rng.random(n) < 0.3)
    _write(pd.DataFrame({"attr": g, "task": y, "task_pred": p}), tmp_path / "noise", 2, row_group=1500)
    cols = StreamColumns("attr", ("task",), ("task",), None, ("task_pred",))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = stream_audit(ParquetDataset.open(tmp_path / "noise"), cols, batch_size=3000, sections=["directional"],
                           n_boot=200, progress=False)
    rows = rep.table[rep.table["section"] == "directional"]
    assert set(rows["reading"]) & {"amplified", "reduced"} == set(), rows[["direction", "value", "reading"]]
    assert any("cross-fitted" in note for note in rep.section("directional").notes)
    assert any("split in two folds once, over every row" in note for note in rep.section("directional").notes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SmallGroupWarning)
        # the plug-in of the same batches reads "reduced" (the bias cross-fitting removes): the test can fail
        acc = CooccurrenceAccumulator(list(range(200)), [0, 1], cross_fit=False, n_boot=200, random_state=0)
        for rows_ in _batches(n, 2):
            acc.update(g[rows_], y[rows_], task_pred=p[rows_])
        lo, hi = acc.bootstrap().ci["A->T"]
    assert hi < 0


@pytest.mark.parametrize("k", [2, 5])
def test_multi_k_batches_are_the_function_and_so_is_the_interval(k):
    """Multi_MALS, G->M and M->G of k uneven batches = the function on every row (the row set split at the end),
    and the streamed interval does not depend on the batching."""
    attr, task, attr_pred, task_pred = _data(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        ref = biasamp.multi_bias_amp(attr, task, attr_pred=attr_pred, task_pred=task_pred)
        boots = []
        for cuts in (_uneven(len(attr), k, 3), [np.arange(len(attr))]):
            acc = MultiAttributeAccumulator(3, 4, combinations=list(ref.combinations), n_boot=100, random_state=0)
            for rows in cuts:
                acc.update(attr[rows], task[rows], attr_pred=attr_pred[rows], task_pred=task_pred[rows])
            res = acc.compute()
            for name in ("mals", "g_to_m", "m_to_g"):
                assert getattr(res, name).raw == getattr(ref, name).raw, name
            boots.append(acc.bootstrap())
    assert boots[0].ci == boots[1].ci


@pytest.mark.parametrize("name", ["bias_amp_directional", "bias_amp_mals", "multi_bias_amp"])
def test_dask_partitions_and_torchmetrics_batches_are_the_function_by_default(name):
    """The cross-fitted default (no training set, no cross_fit option) on Dask partitions of uneven sizes and on
    torchmetrics over uneven batches equals the function on every row (before: each partition / batch was split
    on its own)."""
    da = pytest.importorskip("dask.array")
    from biasamp import dask as bdask

    attr, task, attr_pred, task_pred = _data(6, n=1200)
    fn = getattr(biasamp, name)

    def values(r):
        if name == "bias_amp_directional":
            return r.a_to_t.value, r.t_to_a.value
        if name == "bias_amp_mals":
            return (r.value,)
        return r.mals.raw, r.g_to_m.raw, r.m_to_g.raw

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = values(fn(attr, task, attr_pred=attr_pred, task_pred=task_pred))
        chunks = (100, 350, 250, 500)
        res = getattr(bdask, name)(da.from_array(attr, chunks=(chunks,)), da.from_array(task, chunks=(chunks, -1)),
                                   attr_pred=da.from_array(attr_pred, chunks=(chunks,)),
                                   task_pred=da.from_array(task_pred, chunks=(chunks, -1)))
        assert values(res) == ref
        if name == "multi_bias_amp":
            return
        torch = pytest.importorskip("torch")
        pytest.importorskip("torchmetrics")
        from biasamp import torchmetrics as btm

        metric = (btm.BiasAmpDirectional if name == "bias_amp_directional" else btm.BiasAmpMALS)(3, 4)
        for rows in _uneven(len(attr), 4, 11):
            metric.update(torch.as_tensor(attr[rows]), torch.as_tensor(task[rows]),
                          attr_pred=torch.as_tensor(attr_pred[rows]), task_pred=torch.as_tensor(task_pred[rows]))
        assert values(metric.result()) == ref


@pytest.mark.parametrize("weights", ["none", "integer"])
def test_beyond_the_units_bound_the_rows_come_back_as_the_function_splits_them(monkeypatch, weights):
    """Beyond crossfit.MAX_UNITS (2**24; lowered here to 500) the split counts rows, not units: the row set gives
    its distinct rows back once per occurrence (unweighted rows without weights, as the function is called), and
    every batching still gives the function's value; the streamed bootstrap deals them as below the bound."""
    import biasamp._core.crossfit as crossfit

    monkeypatch.setattr(crossfit, "MAX_UNITS", 500)
    attr, task, attr_pred, task_pred = _data(4)
    w = None if weights == "none" else np.random.default_rng(5).integers(1, 3, len(attr)).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        warnings.simplefilter("ignore", SmallGroupWarning)
        ref = biasamp.bias_amp_directional(attr, task, attr_pred=attr_pred, task_pred=task_pred, sample_weight=w)
        mals = biasamp.bias_amp_mals(attr, task, attr_pred=attr_pred, task_pred=task_pred, sample_weight=w)
        acc = CooccurrenceAccumulator(3, 4, n_boot=50, random_state=0)
        macc = CooccurrenceAccumulator(3, 4, metric="mals")
        for rows in _uneven(len(attr), 4, 9):
            kw = {"attr_pred": attr_pred[rows], "task_pred": task_pred[rows],
                  "sample_weight": None if w is None else w[rows]}
            acc.update(attr[rows], task[rows], **kw)
            macc.update(attr[rows], task[rows], **kw)
        roles, given = acc.state.rowset.rows()
        assert len(next(iter(roles.values())).codes) == len(attr)  # given back row by row
        assert (given is None) is (w is None)
        res = acc.compute()
        assert res.a_to_t.value == ref.a_to_t.value and res.t_to_a.value == ref.t_to_a.value
        assert macc.compute().value == mals.value
        boot = acc.bootstrap()
    for name, est in boot.estimate.items():
        lo, hi = boot.ci[name]
        assert lo <= est <= hi


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**16), n=st.integers(40, 400), k=st.integers(1, 6),
       weights=st.sampled_from(["none", "integer", "fractional"]))
def test_property_any_batching_in_any_order_is_the_function(seed, n, k, weights):
    """Property (one dataset, one number): BiasAmp->, BiasAmp_MALS and Multi_MALS/Multi-> of any cut of random
    rows into batches, counted by accumulators merged in a random order, equal the function on every row (hard
    labels: bit for bit), with and without sample weights."""
    rng = np.random.default_rng(seed)
    attr = rng.integers(0, 3, n)
    task = (rng.random((n, 3)) < 0.3 + 0.15 * attr[:, None]).astype(int)
    task_pred = np.where(rng.random(task.shape) < 0.2, 1 - task, task)
    attr_pred = np.where(rng.random(n) < 0.2, rng.integers(0, 3, n), attr)
    w = None if weights == "none" else rng.integers(1, 4, n).astype(float)
    if weights == "fractional":
        w[rng.random(n) < 0.2] = 0.5
    cuts = np.split(np.arange(n), np.sort(rng.choice(np.arange(1, n), size=k - 1, replace=False)))
    order = rng.permutation(k)

    def batch(rows):
        return {"attr_pred": attr_pred[rows], "task_pred": task_pred[rows],
                "sample_weight": None if w is None else w[rows]}

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        calls = {"directional": lambda: biasamp.bias_amp_directional(attr, task, attr_pred=attr_pred,
                                                                     task_pred=task_pred, sample_weight=w),
                 "mals": lambda: biasamp.bias_amp_mals(attr, task, attr_pred=attr_pred, task_pred=task_pred,
                                                       sample_weight=w)}
        for metric, call in calls.items():
            try:
                ref = call()
            except ValueError:  # every pair undefined on these rows: the accumulators must say so too
                ref = None
            parts = [CooccurrenceAccumulator(3, 3, metric=metric).update(attr[r], task[r], **batch(r)) for r in cuts]
            merged = sum((parts[i] for i in order[1:]), parts[order[0]])
            if ref is None:
                with pytest.raises(ValueError):  # noqa: PT011 - the function's error, whatever its wording
                    merged.compute()
                continue
            got = merged.compute()
            if metric == "directional":
                assert (got.a_to_t.value, got.t_to_a.value) == (ref.a_to_t.value, ref.t_to_a.value)
            else:
                assert got.value == ref.value
        try:
            ref = biasamp.multi_bias_amp(attr, task, attr_pred=attr_pred, task_pred=task_pred, sample_weight=w)
        except ValueError:
            return
        parts = [MultiAttributeAccumulator(3, 3, combinations=list(ref.combinations)).update(attr[r], task[r],
                                                                                               **batch(r))
                 for r in cuts]
        got = sum((parts[i] for i in order[1:]), parts[order[0]]).compute()
        for name in ("mals", "g_to_m", "m_to_g"):
            a, b = getattr(got, name).raw, getattr(ref, name).raw
            assert a == b or (np.isnan(a) and np.isnan(b)), name
