"""Sample weights and missing values in the co-occurrence and multi-attribute families (docs: def-weights, def-missing).

The defining property: integer weights count exactly like repeated rows, for
the point estimate of every metric, whatever the labels.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import biasamp as b
from biasamp import CooccurrenceCounts, MultiAttributeCounts, UndefinedPairWarning
from biasamp._core.rows import RowFilter, select_rows
from biasamp._engine.resample import Cells, cells_of
from biasamp.accumulators import CooccurrenceAccumulator, MultiAttributeAccumulator
from biasamp.labels import encode_labels

pytestmark = pytest.mark.filterwarnings("ignore::biasamp.UndefinedPairWarning")


def _data(seed=0, n=240, k_attr=3, k_task=4, n_train=160):
    rng = np.random.default_rng(seed)
    attr = rng.integers(0, k_attr, n)
    task = (rng.random((n, k_task)) < 0.3 + 0.1 * (attr[:, None] == 1)).astype(int)
    attr_pred = np.where(rng.random(n) < 0.8, attr, rng.integers(0, k_attr, n))
    task_pred = (rng.random((n, k_task)) < 0.3 + 0.15 * (attr[:, None] == 2)).astype(int)
    attr_train = rng.integers(0, k_attr, n_train)
    task_train = (rng.random((n_train, k_task)) < 0.2 + 0.2 * (attr_train[:, None] == 0)).astype(int)
    return attr, task, attr_pred, task_pred, attr_train, task_train


def _values(res) -> dict:
    """Every statistic of a result of the co-occurrence or multi-attribute family."""
    if isinstance(res, b.MALSResult):
        return {"MALS": res.value}
    if isinstance(res, b.DirectionalBiasAmpResult):
        return {d.direction: d.value for d in (res.a_to_t, res.t_to_a) if d is not None}
    out = {}
    for r in (res.mals, res.g_to_m, res.m_to_g):
        if r is not None:
            out[r.metric] = r.value
            out[r.metric + " raw"] = r.raw
            out[r.metric + " variance"] = r.variance
    return out


def _assert_same_values(a, b_, exact=True):
    va, vb = _values(a), _values(b_)
    assert va.keys() == vb.keys()
    for k in va:
        if exact:
            assert va[k] == vb[k] or (np.isnan(va[k]) and np.isnan(vb[k])), (k, va[k], vb[k])
        else:
            assert va[k] == pytest.approx(vb[k], rel=1e-9, abs=1e-12), k


def _metrics(attr, task, attr_pred, task_pred, attr_train, task_train, w=None, tw=None, train=True, plug_in=False):
    """The three label-level metrics on the same data (training set optional; ``plug_in``: without one, the signs
    of every test row, not cross-fitted)."""
    kw = {"attr_train": attr_train, "task_train": task_train, "train_sample_weight": tw} if train else \
        ({"cross_fit": False} if plug_in else {})
    out = {
        "directional": b.bias_amp_directional(attr, task, attr_pred=attr_pred, task_pred=task_pred,
                                              sample_weight=w, **kw),
        "multi": b.multi_bias_amp(attr, task, attr_pred=attr_pred, task_pred=task_pred, sample_weight=w, **kw),
    }
    if train:
        out["mals"] = b.bias_amp_mals(attr_pred=attr_pred, task_pred=task_pred,
                                      sample_weight=w, train_sample_weight=tw, attr_train=attr_train, task_train=task_train)
    return out


# --------------------------------------------------------------------------- #
# integer weights == repeated rows
# --------------------------------------------------------------------------- #
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**16), max_w=st.integers(1, 4), train=st.booleans(),
       n=st.integers(30, 120), k_attr=st.integers(2, 3), k_task=st.integers(1, 4))
def test_integer_weights_equal_repeated_rows(seed, max_w, train, n, k_attr, k_task):
    """Counts: integer weights are repeated rows, with a training set or the plug-in signs. (Cross-fitted, a
    weighted row is one observation and goes to one fold whole, where repeated rows are split: not equal.)"""
    attr, task, attr_pred, task_pred, attr_train, task_train = _data(seed, n, k_attr, k_task, n_train=n)
    rng = np.random.default_rng(seed + 1)
    w = rng.integers(0, max_w + 1, n)
    w[rng.integers(0, n)] = max(1, max_w)  # never all zero
    tw = rng.integers(1, max_w + 1, n)
    rows, trows = np.repeat(np.arange(n), w), np.repeat(np.arange(n), tw)
    try:
        repeated = _metrics(attr[rows], task[rows], attr_pred[rows], task_pred[rows], attr_train[trows],
                            task_train[trows], train=train, plug_in=True)
    except ValueError:  # e.g. every statistic undefined on the repeated rows: the weighted call must agree
        event("the repeated rows raise")
        with pytest.raises(ValueError):  # noqa: PT011 - the repeated rows' error, whatever its wording
            _metrics(attr, task, attr_pred, task_pred, attr_train, task_train, w, tw, train=train, plug_in=True)
        return
    weighted = _metrics(attr, task, attr_pred, task_pred, attr_train, task_train, w, tw, train=train, plug_in=True)
    for name in repeated:
        _assert_same_values(weighted[name], repeated[name])
    assert weighted["multi"].combinations == repeated["multi"].combinations
    # the per-pair tables too (integer weights give integer supports)
    pd.testing.assert_frame_equal(weighted["directional"].to_frame(), repeated["directional"].to_frame())


def test_integer_weights_equal_repeated_rows_with_soft_predictions():
    attr, task, attr_pred, _, attr_train, task_train = _data(3)
    task_pred = np.random.default_rng(4).random(task.shape)
    w = np.random.default_rng(5).integers(0, 4, len(attr))
    rows = np.repeat(np.arange(len(attr)), w)
    weighted = b.bias_amp_directional(attr, task, attr_pred=attr_pred, task_pred=task_pred, sample_weight=w,
                                      cross_fit=False)
    repeated = b.bias_amp_directional(attr[rows], task[rows], attr_pred=attr_pred[rows], task_pred=task_pred[rows],
                                      cross_fit=False)
    _assert_same_values(weighted, repeated, exact=False)


@pytest.mark.parametrize("combinations,support", [("all", "containment"), ("observed", "exact")])
def test_weighted_supports_equal_repeated_rows(combinations, support):
    """``min_support`` counts weighted supports: a row of weight 3 supports a combination three times."""
    attr, task, attr_pred, task_pred, attr_train, task_train = _data(7, k_task=5)
    tw = np.random.default_rng(8).integers(1, 4, len(attr_train))
    trows = np.repeat(np.arange(len(attr_train)), tw)
    kw = dict(attr_pred=attr_pred, task_pred=task_pred, combinations=combinations, support=support, min_support=3,
              max_size=3)
    weighted = b.multi_bias_amp(attr, task, attr_train=attr_train, task_train=task_train, train_sample_weight=tw, **kw)
    repeated = b.multi_bias_amp(attr, task, attr_train=attr_train[trows], task_train=task_train[trows], **kw)
    assert weighted.combinations == repeated.combinations
    assert weighted.selection == repeated.selection
    _assert_same_values(weighted, repeated)


def test_weights_of_one_change_nothing():
    data = _data(11)
    plain = _metrics(*data)
    ones = _metrics(*data, w=np.ones(len(data[0])), tw=np.ones(len(data[4])))
    for name in plain:
        _assert_same_values(ones[name], plain[name])
        assert ones[name].weighted and not plain[name].weighted
    pd.testing.assert_frame_equal(ones["directional"].to_frame(), plain["directional"].to_frame())
    pd.testing.assert_frame_equal(ones["mals"].pairs, plain["mals"].pairs)
    assert ones["multi"].combinations == plain["multi"].combinations


def test_non_integer_weights_are_scale_invariant_and_exact_zeros_stay_zero():
    data = _data(12)
    # weights >= 1: every support stays >= min_support=1 at both scales (supports are not scale-free)
    w = np.random.default_rng(13).random(len(data[0])) + 1
    tw = np.random.default_rng(14).random(len(data[4])) + 1
    one = _metrics(*data, w=w, tw=tw)
    three = _metrics(*data, w=3 * w, tw=3 * tw)
    for name in one:
        _assert_same_values(one[name], three[name], exact=False)
    # exactly independent attr and task with weights 0.1 everywhere: every sign y_at is 0
    attr = np.repeat([0, 1], 40)
    task = np.tile(np.repeat([0, 1], 20), 2)
    res = b.bias_amp_directional(attr, task, task_pred=1 - task, sample_weight=np.full(80, 0.1))
    assert (res.a_to_t.pairs["y"] == 0).all() and res.a_to_t.value == 0.0


def test_zero_weight_rows_are_dropped_before_encoding():
    """A class seen only in rows of weight 0 is no class, exactly as if the rows were absent."""
    attr = np.array([0, 1, 0, 1, 2, 0, 1])
    task = np.array([0, 1, 1, 0, 1, 0, 1])
    task_pred = np.array([0, 1, 0, 0, 1, 1, 1])
    w = np.array([1, 2, 1, 1, 0, 3, 1])
    keep = w > 0
    res = b.bias_amp_directional(attr, task, task_pred=task_pred, attr_pred=attr, sample_weight=w)
    ref = b.bias_amp_directional(np.repeat(attr[keep], w[keep]), np.repeat(task[keep], w[keep]),
                                 task_pred=np.repeat(task_pred[keep], w[keep]), attr_pred=np.repeat(attr[keep], w[keep]))
    assert list(res.a_to_t.pairs["attr"].unique()) == [0, 1]
    _assert_same_values(res, ref)
    assert res.rows == RowFilter("raise", 7, n_zero_weight=1)
    assert "1 zero-weight rows dropped" in repr(res)


# --------------------------------------------------------------------------- #
# errors name the argument
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("weights,error,match", [
    ([1, -1, 1, 1], ValueError, "sample_weight must be non-negative.*rows 1"),
    ([1, np.nan, 1, 1], ValueError, "sample_weight contains NaN or inf.*rows 1"),
    ([1, np.inf, 1, 1], ValueError, "sample_weight contains NaN or inf"),
    ([1, 1, 1], ValueError, r"sample_weight must be 1-D with one weight per row \(4 rows\)"),
    ([[1, 1, 1, 1]], ValueError, "sample_weight must be 1-D"),
    ([0, 0, 0, 0], ValueError, "sample_weight is zero for every row"),
    (["a", "b", "c", "d"], TypeError, "sample_weight must hold numbers"),
    ([1, None, 1, 1], ValueError, "sample_weight contains NaN/None"),
    ("1111", TypeError, "sample_weight must be array-like"),
])
def test_bad_weights_raise_naming_the_argument(weights, error, match):
    attr, task = np.array([0, 1, 0, 1]), np.array([[1, 0], [1, 1], [0, 1], [1, 0]])
    with pytest.raises(error, match=match):
        b.bias_amp_directional(attr, task, task_pred=task, sample_weight=weights)
    with pytest.raises(error, match=match):
        b.bias_amp_mals(attr_pred=attr, task_pred=task, sample_weight=weights, attr_train=attr, task_train=task)
    with pytest.raises(error, match=match):
        b.multi_bias_amp(attr, task, task_pred=task, sample_weight=weights)
    with pytest.raises(error, match=match):
        CooccurrenceCounts.from_labels(attr, task, sample_weight=weights)
    with pytest.raises(error, match=match.replace("sample_weight", "train_sample_weight")):
        b.bias_amp_directional(attr, task, task_pred=task, attr_train=attr, task_train=task,
                               train_sample_weight=weights)
    with pytest.raises(error, match=match):
        CooccurrenceAccumulator([0, 1], [0, 1], binary_task="both").update(attr, task, task_pred=task,
                                                                          sample_weight=weights)
    with pytest.raises(error, match=match):
        MultiAttributeAccumulator([0, 1], [0, 1], combinations=[(0,), (1,)], binary_task="both").update(
            attr, task, task_pred=task, sample_weight=weights)


def test_train_sample_weight_needs_a_training_set_and_missing_is_checked():
    attr, task = np.array([0, 1, 0, 1]), np.array([[1, 0], [1, 1], [0, 1], [1, 0]])
    with pytest.raises(ValueError, match="train_sample_weight weights the training rows"):
        b.bias_amp_directional(attr, task, task_pred=task, train_sample_weight=[1, 1, 1, 1])
    with pytest.raises(ValueError, match="train_sample_weight weights the training rows"):
        b.multi_bias_amp(attr, task, task_pred=task, train_sample_weight=[1, 1, 1, 1])
    for bad in ("nope", None, 1):
        with pytest.raises(ValueError, match="missing must be one of"):
            b.bias_amp_directional(attr, task, task_pred=task, missing=bad)
        with pytest.raises(ValueError, match="missing must be one of"):
            CooccurrenceAccumulator([0, 1], [0, 1], missing=bad)


# --------------------------------------------------------------------------- #
# missing values
# --------------------------------------------------------------------------- #
def _with_missing(seed=0, n=120):
    attr, task, attr_pred, task_pred, attr_train, task_train = _data(seed, n, n_train=n)
    rng = np.random.default_rng(seed + 100)
    attr = attr.astype(float)
    attr[rng.choice(n, 7, replace=False)] = np.nan
    task = task.astype(float)
    task[rng.choice(n, 4, replace=False), 1] = np.nan
    attr_train = attr_train.astype(object)
    attr_train[rng.choice(n, 5, replace=False)] = None
    return attr, task, attr_pred, task_pred, attr_train, task_train


def test_missing_raise_names_the_argument():
    attr, task, attr_pred, task_pred, attr_train, task_train = _with_missing()
    with pytest.raises(ValueError, match="attr contains NaN"):
        b.bias_amp_directional(attr, task, task_pred=task_pred)
    with pytest.raises(ValueError, match="attr_train contains NaN"):
        b.bias_amp_mals(attr_pred=attr_pred, task_pred=task_pred, attr_train=attr_train, task_train=task_train)
    with pytest.raises(ValueError, match="task contains NaN"):
        b.multi_bias_amp(np.nan_to_num(attr), task, task_pred=task_pred)


def test_missing_drop_equals_the_complete_rows():
    attr, task, attr_pred, task_pred, attr_train, task_train = _with_missing(1)
    ok = ~np.isnan(attr) & ~np.isnan(task).any(axis=1)
    tok = pd.notna(attr_train)
    with pytest.raises(ValueError, match="contains NaN"):  # the default still raises
        _metrics(attr, task, attr_pred, task_pred, attr_train, task_train)
    dropped = {
        "directional": b.bias_amp_directional(attr, task, attr_pred=attr_pred, task_pred=task_pred,
                                              attr_train=attr_train, task_train=task_train, missing="drop"),
        "mals": b.bias_amp_mals(attr_pred=attr_pred, task_pred=task_pred, missing="drop", attr_train=attr_train, task_train=task_train),
        "multi": b.multi_bias_amp(attr, task, attr_pred=attr_pred, task_pred=task_pred, attr_train=attr_train,
                                  task_train=task_train, missing="drop"),
    }
    complete = _metrics(attr[ok].astype(int), task[ok].astype(int), attr_pred[ok], task_pred[ok],
                        attr_train[tok].astype(int), task_train[tok])
    complete["mals"] = b.bias_amp_mals(attr_pred=attr_pred,
                                       task_pred=task_pred, attr_train=attr_train[tok].astype(int), task_train=task_train[tok])  # the prediction rows have no missing value
    for name in complete:
        _assert_same_values(dropped[name], complete[name])
    res = dropped["directional"]
    assert res.rows == RowFilter("drop", 120, n_dropped=int((~ok).sum()))
    assert res.train_rows == RowFilter("drop", 120, n_dropped=5)
    assert f"test rows: {int((~ok).sum())} rows with a missing value dropped" in repr(res)
    assert dropped["mals"].train_rows.n_dropped == 5 and dropped["mals"].rows.n_dropped == 0
    assert dropped["multi"].rows.n_dropped == int((~ok).sum())
    assert res.to_dict()["rows"] == {"missing": "drop", "n_rows": 120, "n_dropped": int((~ok).sum()),
                                     "n_grouped": 0, "n_zero_weight": 0}


def test_missing_drop_with_pandas_keeps_names():
    attr, task, attr_pred, task_pred, *_ = _with_missing(2)
    frame = pd.DataFrame(np.nan_to_num(task), columns=list("wxyz"), index=np.arange(1000, 1120))
    frame.iloc[3, 2] = np.nan
    pred = pd.DataFrame(task_pred, columns=list("wxyz"), index=frame.index)
    res = b.bias_amp_directional(pd.Series(attr, index=frame.index, name="sex"), frame, task_pred=pred,
                                 missing="drop")
    assert list(res.a_to_t.pairs["task"].unique()) == list("wxyz")
    assert res.rows.n_dropped == int(np.isnan(attr).sum()) + int(not np.isnan(attr[3]))


def test_missing_group_makes_a_missing_class():
    attr, task, attr_pred, task_pred, attr_train, task_train = _with_missing(3)
    task = np.nan_to_num(task).astype(int)
    res = b.bias_amp_directional(attr, task, task_pred=task_pred, missing="group")
    assert list(res.a_to_t.pairs["attr"].unique()) == [0, 1, 2, "missing"]  # integral floats become ints
    n_missing = int(np.isnan(attr).sum())
    assert res.rows == RowFilter("group", 120, n_grouped=n_missing)
    assert res.a_to_t.pairs.loc[res.a_to_t.pairs["attr"] == "missing", "n_attr"].iloc[0] == n_missing
    assert "put in the group 'missing'" in repr(res)
    # the same as naming the missing class by hand
    named = np.where(np.isnan(attr), "missing", np.nan_to_num(attr).astype(int).astype(object))
    _assert_same_values(res, b.bias_amp_directional(named, task, task_pred=task_pred))
    # MALS: the training attribute's missing values are a class; multi: the test attribute's
    mals = b.bias_amp_mals(attr_pred=attr_pred, task_pred=task_pred, missing="group", attr_train=attr_train, task_train=task_train)
    assert "missing" in list(mals.pairs["attr"]) and mals.train_rows.n_grouped == 5
    multi = b.multi_bias_amp(attr, task, task_pred=task_pred, missing="group")
    assert "missing" in multi.counts.attr_classes and multi.rows.n_grouped == n_missing
    # a missing value elsewhere still raises, naming the argument
    with pytest.raises(ValueError, match="task contains NaN"):
        b.bias_amp_directional(attr, np.where(task == 1, np.nan, task), task_pred=task_pred, missing="group")


def test_missing_group_refuses_an_indicator_matrix():
    attr = np.array([[1, 0], [0, 1], [np.nan, np.nan], [0, 1]])
    task = np.array([[1], [0], [1], [1]])
    with pytest.raises(ValueError, match="missing='group'.*attr is 2-D"):
        b.bias_amp_directional(attr, task, task_pred=task, missing="group")
    res = b.bias_amp_directional(attr, task, task_pred=task, missing="drop")
    assert res.rows.n_dropped == 1


def test_every_row_dropped_raises():
    with pytest.raises(ValueError, match="no row left to count"):
        b.bias_amp_directional([np.nan, np.nan], [1, 0], task_pred=[1, 0], missing="drop")


def test_select_rows_keeps_its_contract():
    """The shared row layer: the signature the fairness family uses stays as it was."""
    arrays, w, rows = select_rows({"y": [1, 2, None], "g": pd.Series(["a", None, "b"])}, missing="group",
                                  group_args=("g",), sample_weight=[1, 1, 0])
    assert rows == RowFilter("group", 3, n_grouped=1, n_zero_weight=1)
    assert list(arrays["g"]) == ["a", "missing"] and w.tolist() == [1.0, 1.0]
    assert rows.to_dict()["n_zero_weight"] == 1 and rows.describe().startswith("1 rows with a missing group")
    assert (rows + rows).n_rows == 6 and rows.n_used == 2
    with pytest.raises(ValueError, match="different missing"):
        _ = rows + RowFilter("drop", 1)
    assert select_rows({"y": [1, 2]})[2] == RowFilter("raise", 2)


# --------------------------------------------------------------------------- #
# counts types and accumulators
# --------------------------------------------------------------------------- #
def test_weighted_counts_scale_the_left_factor():
    attr, task, attr_pred, task_pred, *_ = _data(20)
    w = np.random.default_rng(21).random(len(attr))
    c = CooccurrenceCounts.from_labels(attr, task, attr_pred=attr_pred, task_pred=task_pred, sample_weight=w)
    A = np.eye(3)[attr]
    assert c.weighted and c.n == pytest.approx(w.sum())
    np.testing.assert_allclose(c.cross("attr", "task"), (A * w[:, None]).T @ task)
    np.testing.assert_allclose(c.total("task_pred"), w @ task_pred)
    # batches add, with their row filters
    half = len(attr) // 2
    first = CooccurrenceCounts.from_labels(attr[:half], task[:half], attr_pred=attr_pred[:half],
                                           task_pred=task_pred[:half], sample_weight=w[:half])
    both = first.update(attr=attr[half:], task=task[half:], attr_pred=attr_pred[half:], task_pred=task_pred[half:],
                        sample_weight=w[half:])
    np.testing.assert_allclose(both.gram, c.gram)
    assert both.rows == c.rows == RowFilter("raise", len(attr))
    assert "weighted" in repr(c)


@pytest.mark.parametrize("metric", ["directional", "mals"])
def test_cooccurrence_accumulator_with_weights_equals_the_function(metric):
    attr, task, attr_pred, task_pred, attr_train, task_train = _data(30, n=400)
    rng = np.random.default_rng(31)
    w, tw = rng.integers(0, 3, len(attr)).astype(float), rng.random(len(attr_train)) + 0.1
    acc = CooccurrenceAccumulator([0, 1, 2], [0, 1, 2, 3], metric=metric)
    for rows in np.array_split(np.arange(len(attr)), 3):
        acc.update(attr[rows], task[rows], attr_pred=attr_pred[rows], task_pred=task_pred[rows],
                   sample_weight=w[rows])
    for rows in np.array_split(np.arange(len(attr_train)), 2):
        acc.update_train(attr_train[rows], task_train[rows], sample_weight=tw[rows])
    if metric == "directional":
        ref = b.bias_amp_directional(attr, task, attr_pred=attr_pred, task_pred=task_pred, attr_train=attr_train,
                                     task_train=task_train, sample_weight=w, train_sample_weight=tw)
    else:
        ref = b.bias_amp_mals(attr_pred=attr_pred, task_pred=task_pred, sample_weight=w,
                              train_sample_weight=tw, attr_train=attr_train, task_train=task_train)
    res = acc.compute()
    _assert_same_values(res, ref, exact=False)
    assert res.rows == ref.rows and res.train_rows == ref.train_rows and res.weighted
    merged = CooccurrenceAccumulator([0, 1, 2], [0, 1, 2, 3], metric=metric).merge(acc)
    assert merged.compute().rows == ref.rows


def test_multi_accumulator_with_weights_and_missing_equals_the_function():
    attr, task, attr_pred, task_pred, attr_train, task_train = _with_missing(40, n=300)
    task = np.nan_to_num(task).astype(int)
    attr_train = np.where(pd.isna(attr_train), 0, attr_train).astype(int)
    rng = np.random.default_rng(41)
    w, tw = rng.integers(0, 4, len(attr)).astype(float), rng.integers(1, 3, len(attr_train))
    acc = MultiAttributeAccumulator([0, 1, 2], [0, 1, 2, 3], missing="drop")
    for rows in np.array_split(np.arange(len(attr_train)), 2):
        acc.collect(task_train[rows], sample_weight=tw[rows])
    acc.freeze()
    parts = []
    for rows in np.array_split(np.arange(len(attr)), 3):
        part = acc.copy()
        part.update(attr[rows], task[rows], attr_pred=attr_pred[rows], task_pred=task_pred[rows],
                    sample_weight=w[rows])
        parts.append(part)
    total = parts[0].merge(parts[1]).merge(parts[2])
    total.update_train(attr_train, task_train, sample_weight=tw)
    ref = b.multi_bias_amp(attr, task, attr_pred=attr_pred, task_pred=task_pred, attr_train=attr_train,
                           task_train=task_train, sample_weight=w, train_sample_weight=tw, missing="drop")
    res = total.compute()
    assert res.combinations == ref.combinations
    _assert_same_values(res, ref)
    assert res.rows == ref.rows and res.rows.n_dropped == int(np.isnan(attr).sum()) and res.weighted


def test_multi_counts_accept_weighted_totals():
    res = b.multi_bias_amp([0, 0, 1, 1], [[1, 1], [1, 0], [1, 1], [0, 1]], task_pred=[[1, 0], [1, 0], [1, 1], [1, 1]],
                           sample_weight=[0.5, 1.5, 1.0, 2.0])
    c = res.counts
    assert c.weighted and c.n_test == 5.0 and c.test_attr.tolist() == [2.0, 3.0]
    assert (c + c).n_test == 10.0 and (c + c).rows.n_rows == 8
    with pytest.raises(TypeError, match="n_test must be a non-negative integer"):
        MultiAttributeCounts(c.attr_classes, c.task_classes, c.combinations, 5, c.train_attr,
                             c.train_joint, 5.5, c.test_attr, c.test_joint)


def test_weighted_multi_counting_paths_agree(monkeypatch):
    """Bit-plane popcounts (small integer weights) and the unpacked product (other weights) give the same counts."""
    import biasamp.multiattribute._metrics as m

    attr, task, attr_pred, task_pred, *_ = _data(50, n=500, k_task=6)
    w = np.random.default_rng(51).integers(0, 9, len(attr)).astype(float)
    by_planes = b.multi_bias_amp(attr, task, attr_pred=attr_pred, task_pred=task_pred, sample_weight=w)
    monkeypatch.setattr(m, "_weight_planes", lambda weights: None)
    by_product = b.multi_bias_amp(attr, task, attr_pred=attr_pred, task_pred=task_pred, sample_weight=w)
    for name in ("train_joint", "test_joint", "joint_g_mhat", "joint_ghat_m", "joint_ghat_mhat"):
        np.testing.assert_array_equal(getattr(by_planes.counts, name), getattr(by_product.counts, name))


# --------------------------------------------------------------------------- #
# bootstrap: rows resampled with their weights
# --------------------------------------------------------------------------- #
def test_cells_carry_weights_in_their_key():
    labels = encode_labels({"a": np.array([0, 1, 0, 0, 1])})["a"]
    rep, counts = cells_of([labels], weights=np.array([1.0, 2.0, 1.0, 3.0, 2.0]))
    assert counts.tolist() == [2, 1, 2]  # (0, w=1) x2, (0, w=3), (1, w=2) x2: canonical (sorted) order
    perm = np.array([4, 2, 0, 3, 1])
    labels_p = encode_labels({"a": np.array([0, 1, 0, 0, 1])[perm]})["a"]
    rep_p, counts_p = cells_of([labels_p], weights=np.array([1.0, 2.0, 1.0, 3.0, 2.0])[perm])
    assert counts_p.tolist() == counts.tolist()
    w = np.array([1.0, 2.0, 1.0, 3.0, 2.0])
    assert w[rep].tolist() == w[perm][rep_p].tolist() == [1.0, 3.0, 2.0]
    from scipy import sparse

    left = sparse.csr_matrix(np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [1.0, 0.0, 1.0]]))
    cells = Cells(left, sparse.csr_matrix(np.ones((3, 1))), counts, weights=w[rep])
    np.testing.assert_allclose(cells.table()[:, 0], [2 * 1 + 1 * 3 + 2 * 2, 2 * 1 + 1 * 3, 2 * 2])
    with pytest.raises(ValueError, match="positive"):
        Cells(left, sparse.csr_matrix(np.ones((3, 1))), counts, weights=np.array([1.0, 0.0, 1.0]))


@pytest.mark.parametrize("metric", ["directional", "mals", "multi"])
def test_weighted_bootstrap_is_row_order_invariant_and_deterministic(metric):
    attr, task, attr_pred, task_pred, attr_train, task_train = _data(60, n=300)
    w = np.random.default_rng(61).random(len(attr)) * 2

    def run(order):
        args = {"directional": (b.bias_amp_directional, (attr[order], task[order]), {}),
                "mals": (b.bias_amp_mals, (), {"attr_train": attr_train, "task_train": task_train}),
                "multi": (b.multi_bias_amp, (attr[order], task[order]), {})}[metric]
        fn, pos, kw = args
        return b.bootstrap(fn, *pos, attr_pred=attr_pred[order], task_pred=task_pred[order], sample_weight=w[order],
                           n_boot=150, random_state=5, **kw)

    first, again = run(np.arange(len(attr))), run(np.arange(len(attr)))
    shuffled = run(np.random.default_rng(62).permutation(len(attr)))
    for other in (again, shuffled):
        assert other.estimate.keys() == first.estimate.keys()
        for k in first.estimate:
            assert other.estimate[k] == pytest.approx(first.estimate[k], rel=1e-12, abs=1e-14)
            assert other.ci[k] == pytest.approx(first.ci[k], rel=1e-9, abs=1e-12)
    assert any("together with their sample weights" in note for note in first.notes)
    point = _values({"directional": b.bias_amp_directional(attr, task, attr_pred=attr_pred, task_pred=task_pred,
                                                           sample_weight=w),
                     "mals": b.bias_amp_mals(attr_pred=attr_pred, task_pred=task_pred,
                                             sample_weight=w, attr_train=attr_train, task_train=task_train),
                     "multi": b.multi_bias_amp(attr, task, attr_pred=attr_pred, task_pred=task_pred,
                                               sample_weight=w)}[metric])
    for k, v in first.estimate.items():
        key = {"A->T": "A->T", "T->A": "T->A", "MALS": "MALS", "Multi_MALS": "Multi_MALS",
               "Multi_MALS raw": "Multi_MALS raw", "G->M": "Multi_G->M", "G->M raw": "Multi_G->M raw",
               "M->G": "Multi_M->G", "M->G raw": "Multi_M->G raw"}[k]
        assert v == pytest.approx(point[key], rel=1e-12, abs=1e-14)


def test_bootstrap_with_weights_of_one_equals_the_unweighted_bootstrap():
    attr, task, attr_pred, task_pred, *_ = _data(70, n=300)
    plain = b.bootstrap(b.bias_amp_directional, attr, task, attr_pred=attr_pred, task_pred=task_pred, n_boot=100,
                        random_state=3)
    ones = b.bootstrap(b.bias_amp_directional, attr, task, attr_pred=attr_pred, task_pred=task_pred, n_boot=100,
                       random_state=3, sample_weight=np.ones(len(attr)))
    assert ones.ci == plain.ci and ones.p_value == plain.p_value
    pd.testing.assert_frame_equal(ones.replicates, plain.replicates)


def test_weighted_bootstrap_tests_need_integer_counts():
    attr, task, attr_pred, task_pred, *_ = _data(80, n=300)
    whole = b.bootstrap(b.bias_amp_directional, attr, task, attr_pred=attr_pred, task_pred=task_pred, n_boot=50,
                        random_state=0, sample_weight=np.full(len(attr), 2))
    assert whole.p_global["A->T"] is not None  # integer weights: integer counts, the exact tests run
    frac = b.bootstrap(b.bias_amp_directional, attr, task, attr_pred=attr_pred, task_pred=task_pred, n_boot=50,
                       random_state=0, sample_weight=np.full(len(attr), 0.5))
    assert frac.p_global["A->T"] is None and frac.p_value["A->T"] is not None  # the interval's p: always
    assert any("McNemar tests need integer counts" in note for note in frac.notes)


def test_streaming_bootstrap_carries_the_weights():
    attr, task, attr_pred, task_pred, *_ = _data(90, n=300)
    w = np.random.default_rng(91).integers(1, 3, len(attr)).astype(float)
    acc = CooccurrenceAccumulator([0, 1, 2], [0, 1, 2, 3], n_boot=100, random_state=0)
    acc.update(attr, task, attr_pred=attr_pred, task_pred=task_pred, sample_weight=w)
    boot = acc.bootstrap()
    # one weighted batch: the function's split (integer weights dealt as repeated rows), cross-fitted
    ref = b.bias_amp_directional(attr, task, attr_pred=attr_pred, task_pred=task_pred, sample_weight=w)
    assert boot.estimate["A->T"] == pytest.approx(ref.a_to_t.value)
    lo, hi = boot.ci["A->T"]
    assert lo <= ref.a_to_t.value <= hi
    macc = MultiAttributeAccumulator([0, 1, 2], [0, 1, 2, 3], combinations=[(0,), (1,), (0, 1)], n_boot=50,
                                     random_state=0)
    macc.update(attr, task, task_pred=task_pred, sample_weight=w)
    mboot = macc.bootstrap()
    assert mboot.estimate["G->M"] == pytest.approx(macc.compute().g_to_m.value)


def test_warnings_stay_quiet_for_clean_weighted_data():
    attr, task, attr_pred, task_pred, *_ = _data(95, n=300)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UndefinedPairWarning)
        b.bias_amp_directional(attr, task, attr_pred=attr_pred, task_pred=task_pred,
                               sample_weight=np.full(len(attr), 0.3))


# --------------------------------------------------------------------------- #
# Dask: every partition applies the row layer to its own rows
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("missing", ["drop", "group"])
def test_dask_weights_and_missing_equal_the_in_memory_result(missing):
    da = pytest.importorskip("dask.array")
    import biasamp.dask as bd

    attr, task, attr_pred, task_pred, attr_train, task_train = _with_missing(120, n=400)
    task = np.nan_to_num(task).astype(int)
    rng = np.random.default_rng(121)
    w, tw = rng.integers(0, 3, len(attr)).astype(float), rng.integers(1, 4, len(attr_train)).astype(float)

    def arr(x, chunks=130):
        return da.from_array(x, chunks=chunks)

    kw = dict(sample_weight=w, train_sample_weight=tw, missing=missing)
    dkw = dict(sample_weight=arr(w), train_sample_weight=arr(tw, 90), missing=missing)
    ref = b.bias_amp_directional(attr, task, attr_pred=attr_pred, task_pred=task_pred, attr_train=attr_train,
                                 task_train=task_train, **kw)
    res = bd.bias_amp_directional(arr(attr), arr(task), attr_pred=arr(attr_pred), task_pred=arr(task_pred),
                                  attr_train=arr(attr_train, 90), task_train=arr(task_train, 90), **dkw)
    _assert_same_values(res, ref)
    assert res.rows == ref.rows and res.train_rows == ref.train_rows
    assert list(res.a_to_t.pairs["attr"].unique()) == list(ref.a_to_t.pairs["attr"].unique())
    ref = b.multi_bias_amp(attr, task, attr_pred=attr_pred, task_pred=task_pred, attr_train=attr_train,
                           task_train=task_train, **kw)
    res = bd.multi_bias_amp(arr(attr), arr(task), attr_pred=arr(attr_pred), task_pred=arr(task_pred),
                            attr_train=arr(attr_train, 90), task_train=arr(task_train, 90), **dkw)
    assert res.combinations == ref.combinations and res.rows == ref.rows
    _assert_same_values(res, ref)
    ref = b.bias_amp_mals(attr, task, attr_pred=attr_pred, task_pred=task_pred, attr_train=attr_train,
                          task_train=task_train, **kw)
    res = bd.bias_amp_mals(arr(attr), arr(task), attr_pred=arr(attr_pred), task_pred=arr(task_pred),
                           attr_train=arr(attr_train, 90), task_train=arr(task_train, 90), **dkw)
    _assert_same_values(res, ref)
    with pytest.raises(TypeError, match="sample_weight must be a dask array"):
        bd.bias_amp_directional(arr(attr), arr(task), task_pred=arr(task_pred), sample_weight=w)
