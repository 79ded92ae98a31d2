"""Cross-fitted signs in the streamed layers (issue 21 item 1, second step).

The accumulators split every batch in two folds with the functional API's rule
(the batch is the unit of the split) and add the folds' tables over batches.
Derived independently here: the functional API's own fold tables of each
batch, summed, through the pure ``*_from_folds`` combiners; and the streamed
audit of issue 21's noise attribute.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import biasamp
from biasamp import UndefinedPairWarning
from biasamp.accumulators import CooccurrenceAccumulator, MultiAttributeAccumulator
from biasamp.cooccurrence._metrics import (
    _count_directional,
    _count_mals_crossfit,
    directional_from_folds,
    mals_from_folds,
)
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


@pytest.mark.parametrize("k", [1, 2, 5])
@pytest.mark.parametrize("weighted", [False, True])
def test_k_batches_are_the_functions_fold_tables_of_each_batch_added(k, weighted):
    """BiasAmp-> of k batches = directional_from_folds of the function's fold tables of every batch, summed."""
    attr, task, attr_pred, task_pred = _data(1)
    w = np.random.default_rng(2).integers(1, 4, len(attr)).astype(float) if weighted else None
    acc = CooccurrenceAccumulator(3, 4)
    tests: dict = {}
    for rows in _batches(len(attr), k):
        wr = None if w is None else w[rows]
        acc.update(attr[rows], task[rows], attr_pred=attr_pred[rows], task_pred=task_pred[rows], sample_weight=wr)
        folds, *_ = _count_directional(attr[rows], task[rows], attr_pred[rows], task_pred[rows], None, None,
                                       sample_weight=wr, cross_fit=True)
        for d, f in folds.items():
            tests[d] = f.tests if d not in tests else (tests[d][0] + f.tests[0], tests[d][1] + f.tests[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        expected = directional_from_folds(tests)
        res = acc.compute()
    assert res.cross_fit
    assert res.a_to_t.value == expected.a_to_t.value and res.t_to_a.value == expected.t_to_a.value
    np.testing.assert_array_equal(res.a_to_t.pairs["y_fold0"], expected.a_to_t.pairs["y_fold0"])
    if k == 1:  # one batch: the function, bit for bit
        ref = biasamp.bias_amp_directional(attr, task, attr_pred=attr_pred, task_pred=task_pred, sample_weight=w)
        assert res.a_to_t.value == ref.a_to_t.value and res.t_to_a.value == ref.t_to_a.value


@pytest.mark.parametrize("k", [1, 3])
def test_mals_k_batches_are_the_functions_fold_tables_added(k):
    attr, task, attr_pred, task_pred = _data(3)
    acc = CooccurrenceAccumulator(3, 4, metric="mals")
    f0 = f1 = None
    for rows in _batches(len(attr), k):
        acc.update(attr[rows], task[rows], attr_pred=attr_pred[rows], task_pred=task_pred[rows])
        folds, *_ = _count_mals_crossfit(attr[rows], task[rows], attr_pred[rows], task_pred[rows], None, None,
                                         "raise", 0.5, "threshold", None)
        f0 = folds.tests[0] if f0 is None else f0 + folds.tests[0]
        f1 = folds.tests[1] if f1 is None else f1 + folds.tests[1]
    res = acc.compute()
    assert res.cross_fit and res.value == mals_from_folds(f0, f1).value


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
    """Issue 21's reproducer through the streamed audit: cross-fitted per batch, no "reduced" reading."""
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
    assert any("the batch is the unit of the split" in note for note in rep.section("directional").notes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SmallGroupWarning)
        # the plug-in of the same batches reads "reduced" (the bias cross-fitting removes): the test can fail
        acc = CooccurrenceAccumulator(list(range(200)), [0, 1], cross_fit=False, n_boot=200, random_state=0)
        for rows_ in _batches(n, 2):
            acc.update(g[rows_], y[rows_], task_pred=p[rows_])
        lo, hi = acc.bootstrap().ci["A->T"]
    assert hi < 0
