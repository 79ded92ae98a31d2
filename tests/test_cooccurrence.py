"""BiasAmp_MALS and directional BiasAmp→: paper vectors, hand computations, properties."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import biasamp
from biasamp import (
    CooccurrenceCounts,
    UndefinedPairWarning,
    bias_amp_directional,
    bias_amp_mals,
    bootstrap,
    directional_from_counts,
)
from biasamp.exceptions import SmallGroupWarning

from .reference import directional_reference, mals_reference, one_hot

# hand-computed examples are tiny by construction: their groups are small, and each family says so with a
# SmallGroupWarning (tested once per family in tests/test_common.py); here it would only be noise
pytestmark = pytest.mark.filterwarnings("ignore::biasamp.SmallGroupWarning")


# --------------------------------------------------------------------------- #
# the papers' worked examples (Wang & Russakovsky 2021, §3.2 and §4.1)
# --------------------------------------------------------------------------- #
def shortcoming_1():
    """3 groups: A1 10 neg/40 pos, A2 40/10, A3 10/20; model right on A1, T̂=0 on A2, T̂=1 on A3."""
    attr = np.repeat([1, 2, 3], [50, 50, 30])
    task = np.concatenate([np.repeat([0, 1], [10, 40]), np.repeat([0, 1], [40, 10]), np.repeat([0, 1], [10, 20])])
    task_pred = np.where(attr == 1, task, np.where(attr == 2, 0, 1))
    return attr, task, task_pred


def shortcoming_2():
    """2 groups: A1 60 neg/30 pos, A2 10/20; model predicts T̂=0 on A1 and T̂=1 on A2."""
    attr = np.repeat([1, 2], [90, 30])
    task = np.concatenate([np.repeat([0, 1], [60, 30]), np.repeat([0, 1], [10, 20])])
    return attr, task, (attr == 2).astype(int)


@pytest.mark.parametrize("example, expected", [(shortcoming_1, 0.1778), (shortcoming_2, 0.3333)])
@pytest.mark.parametrize("as_column", [False, True])
def test_paper_shortcoming_examples(example, expected, as_column):
    # §4.1: "BiasAmp_{A→T} is positive at .1778 in shortcoming 1 and .3333 in 2;
    # BiasAmp_{T→A} is 0 in both". Same value whether the binary task is one
    # indicator column or two classes (the T=0 column mirrors T=1).
    attr, task, task_pred = example()
    if as_column:
        task, task_pred = task[:, None], task_pred[:, None]
    # the constructed data are the training set: the plug-in signs of the paper (cross_fit=False)
    res = bias_amp_directional(attr, task, attr_pred=attr, task_pred=task_pred, cross_fit=False)
    assert round(res.a_to_t.value, 4) == expected
    assert res.t_to_a.value == 0.0
    assert res.train_source == "test"


def test_paper_mals_examples():
    # §3.2 shortcoming 1: "Eqn. 1 would measure bias amplification as 0".
    attr, task, task_pred = shortcoming_1()
    assert bias_amp_mals(attr_pred=attr, task_pred=task_pred[:, None], attr_train=attr, task_train=task[:, None]).value == 0.0
    # §3.2 shortcoming 2: "a negative bias amplification score of 0/30 − 30/50 = −0.6".
    attr, task, task_pred = shortcoming_2()
    assert bias_amp_mals(attr_pred=attr, task_pred=task_pred[:, None], attr_train=attr, task_train=task[:, None]).value == pytest.approx(-0.6)
    # §3.2 two-group miscalibration: Δ1 = 40/40 − 40/50 = 0.2 and 50/60 − 40/50 = 0.033.
    attr = np.repeat([1, 2], [50, 50])
    task = np.concatenate([np.repeat([0, 1], [10, 40]), np.repeat([0, 1], [40, 10])])[:, None]
    model_1 = np.where(attr == 1, task[:, 0], 0)[:, None]
    model_2 = np.where(attr == 2, task[:, 0], 1)[:, None]
    assert bias_amp_mals(attr_pred=attr, task_pred=model_1, attr_train=attr, task_train=task).value == pytest.approx(0.2)
    assert bias_amp_mals(attr_pred=attr, task_pred=model_2, attr_train=attr, task_train=task).value == pytest.approx(50 / 60 - 40 / 50)


# --------------------------------------------------------------------------- #
# DPA App. E: COMPAS count tables (shared/data/dpa_tokas2025)
# --------------------------------------------------------------------------- #
def _compas_rows(table: pd.DataFrame, setting: str, direction: str):
    """Instance arrays reproducing the published marginals of one setting.

    Only #(A,T) and #(A,T̂) (or #(T,Â)) are published, which is all BiasAmp→
    needs in one direction; the coupling of T̂ with T inside a group is free.
    """
    t = table[table.setting == setting]
    data = t[t.quantity == "data_A_T"]
    attr = np.repeat(data.A.astype(int).to_numpy(), data["count"].to_numpy())
    task = np.repeat(data["T"].astype(int).to_numpy(), data["count"].to_numpy())
    order = np.lexsort((task, attr)) if direction == "A->T" else np.lexsort((attr, task))
    attr, task = attr[order], task[order]
    if direction == "A->T":
        pred = t[t.quantity == "pred_That_given_A"]
        key, col = attr, "A"
        counts = {(int(r.A), int(r.That)): int(r["count"]) for _, r in pred.iterrows()}
    else:
        pred = t[t.quantity == "pred_Ahat_given_T"]
        key, col = task, "T"
        counts = {(int(r["T"]), int(r.Ahat)): int(r["count"]) for _, r in pred.iterrows()}
    predicted = np.empty_like(attr)
    for value in (0, 1):
        idx = np.flatnonzero(key == value)
        n_zero = counts[(value, 0)]
        assert n_zero + counts[(value, 1)] == len(idx), f"published {col}={value} marginals disagree"
        predicted[idx] = (np.arange(len(idx)) >= n_zero).astype(int)
    return attr, task, predicted


@pytest.mark.parametrize(
    "setting, a_to_t, t_to_a", [("unbalanced", -0.038, -0.078), ("balanced", 0.0, 0.0)]
)
def test_compas_table7_ba_directional(shared_data, setting, a_to_t, t_to_a):
    table = pd.read_csv(shared_data / "dpa_tokas2025" / "compas_table6_counts.csv")
    attr, task, task_pred = _compas_rows(table, setting, "A->T")
    # DPA App. E computes BA-> with the test labels as the training statistics: the plug-in (cross_fit=False), and
    # one-hot encodes the binary task (both classes, binary_task="both")
    got_at = bias_amp_directional(attr, task, task_pred=task_pred, cross_fit=False, binary_task="both").a_to_t.value
    attr, task, attr_pred = _compas_rows(table, setting, "T->A")
    got_ta = bias_amp_directional(attr, task, attr_pred=attr_pred, cross_fit=False, binary_task="both").t_to_a.value
    assert round(got_at, 3) == a_to_t
    assert round(got_ta, 3) == t_to_a
    if setting == "balanced":  # exactly independent: every y_at is 0, so exactly 0
        assert got_at == 0.0 and got_ta == 0.0
    else:  # hand computation from the printed counts (y = +1 on the diagonal)
        hand = (-64 / 2103 - 64 / 2103 - 144 / 3175 - 144 / 3175) / 4
        assert got_at == pytest.approx(hand, abs=1e-15)


# --------------------------------------------------------------------------- #
# hand-computed small cases
# --------------------------------------------------------------------------- #
def test_hand_computed_multilabel_with_train_set():
    # train: 2 groups x 2 tasks; test differs; y from train, Δ from test.
    attr_train = np.array([0, 0, 0, 1, 1, 1])
    task_train = np.array([[1, 0], [1, 0], [0, 1], [0, 1], [0, 1], [1, 0]])
    # train: n=6, #a0=3, #a1=3, #t0=3, #t1=3, #(a0,t0)=2 -> 6*2-3*3=3>0: y=+1; (a0,t1)=1 -> -1;
    # (a1,t0)=1 -> -1; (a1,t1)=2 -> +1
    attr = np.array([0, 0, 1, 1])
    task = np.array([[1, 0], [0, 1], [0, 1], [1, 1]])
    task_pred = np.array([[1, 0], [1, 0], [0, 1], [0, 1]])
    attr_pred = np.array([0, 0, 1, 0])
    res = bias_amp_directional(
        attr, task, task_pred=task_pred, attr_pred=attr_pred, attr_train=attr_train, task_train=task_train
    )
    # A->T: a0: P(T̂0|a0)=1, P(T0|a0)=.5 -> Δ=+.5 (y+1); P(T̂1|a0)=0, P(T1|a0)=.5 -> Δ=-.5 (y-1)
    #       a1: P(T̂0|a1)=0, P(T0|a1)=.5 -> -.5 (y-1); P(T̂1|a1)=1, P(T1|a1)=1 -> 0 (y+1)
    assert res.a_to_t.value == pytest.approx((0.5 + 0.5 + 0.5 + 0.0) / 4)
    # T->A: t0 rows {0,3}: P(Â0|t0)=1, P(A0|t0)=.5 -> +.5 (y+1); P(Â1|t0)=0, P(A1|t0)=.5 -> -.5 (y-1)
    #       t1 rows {1,2,3}: P(Â0|t1)=2/3, P(A0|t1)=1/3 -> +1/3 (y-1); P(Â1|t1)=1/3, P(A1|t1)=2/3 -> -1/3 (y+1)
    assert res.t_to_a.value == pytest.approx((0.5 + 0.5 - 1 / 3 - 1 / 3) / 4)
    assert res.train_source == "train"
    pairs = res.a_to_t.pairs.set_index(["attr", "task"])
    assert pairs.loc[(0, 0), "y"] == 1 and pairs.loc[(0, 1), "y"] == -1
    assert pairs.loc[(1, 1), "delta"] == 0.0


def test_exactly_independent_pair_counts_in_mean_with_zero():
    # group 0 and 1 each have the task at rate 1/2: y = 0 for every pair.
    attr = np.array([0, 0, 1, 1])
    task = np.array([[1], [0], [1], [0]])
    res = bias_amp_directional(attr, task, task_pred=np.ones((4, 1), dtype=int), cross_fit=False)
    assert (res.a_to_t.pairs["y"] == 0).all()
    assert res.a_to_t.value == 0.0 and res.a_to_t.n_pairs == 2


def test_sign_is_exact_where_floats_would_not_be():
    # n=15, #a=5, #t=9, #(a,t)=3: exactly independent (15*3 == 5*9), but in floats
    # P(a,t) - P(a)P(t) = 3/15 - (5/15)(9/15) = 2.8e-17 > 0.
    assert 3 / 15 - (5 / 15) * (9 / 15) != 0
    attr = np.repeat([1, 0], [5, 10])
    task = np.zeros((15, 1), dtype=int)
    task[:3] = 1  # 3 of the 5 group-1 rows
    task[5:11] = 1  # 6 of the 10 group-0 rows
    res = bias_amp_directional(attr, task, task_pred=1 - task, cross_fit=False)
    assert (res.a_to_t.pairs["y"] == 0).all()
    assert res.a_to_t.value == 0.0


def test_soft_predictions_are_thresholded_unless_expected():
    attr = np.array([0, 0, 1, 1])
    task = np.array([[1], [0], [0], [0]])
    task_pred = np.array([[0.9], [0.3], [0.2], [0.6]])
    plug_in = {"cross_fit": False}  # hand computations with the signs of every row
    res = bias_amp_directional(attr, task, task_pred=task_pred, **plug_in)
    # thresholded at 0.5 (strictly above): predictions [1, 0, 0, 1]; y(a0)=+1, y(a1)=-1;
    # Δ(a0) = 0.5 - 0.5 = 0, Δ(a1) = 0.5 - 0 = 0.5 -> (0 - 0.5) / 2
    assert res.a_to_t.value == pytest.approx(-0.25)
    assert res.predictions == "task_pred: thresholded at 0.5 (per label)"
    assert bias_amp_directional(attr, task, task_pred=task_pred, threshold=0.85, **plug_in).a_to_t.value == 0.0
    expected = bias_amp_directional(attr, task, task_pred=task_pred, soft="expected", **plug_in)
    # expected rates: Δ(a0) = 0.6 - 0.5 = 0.1, Δ(a1) = 0.4 - 0 = 0.4 -> (0.1 - 0.4) / 2
    assert expected.a_to_t.value == pytest.approx(-0.15)
    assert expected.a_to_t.pairs["p_pred"].tolist() == pytest.approx([0.6, 0.4])
    assert "expected rates" in expected.predictions
    assert bias_amp_directional(attr, task, task_pred=(task_pred > 0.5).astype(int)).predictions == "hard"
    with pytest.raises(ValueError, match="soft"):
        bias_amp_directional(attr, task, task_pred=task_pred, soft="mean")
    with pytest.raises(ValueError, match="threshold"):
        bias_amp_directional(attr, task, task_pred=task_pred, threshold=1.0)


def test_one_d_probabilities_of_binary_label():
    attr = np.array([0, 0, 1, 1])
    task = np.array([1, 0, 0, 0])
    p1 = np.array([0.9, 0.3, 0.2, 0.0])
    res_1d = bias_amp_directional(attr, task, task_pred=p1)
    res_2d = bias_amp_directional(attr, task, task_pred=np.column_stack([1 - p1, p1]))
    assert res_1d.a_to_t.value == pytest.approx(res_2d.a_to_t.value)
    pd.testing.assert_frame_equal(res_1d.a_to_t.pairs, res_2d.a_to_t.pairs)


def test_mals_tie_at_one_over_a_counts_in_denominator():
    attr = np.array([0, 1, 0, 0])
    task = np.array([[1, 1], [1, 0], [0, 1], [0, 0]])  # task 0: 1/2 each (tie), task 1: all group 0
    task_pred = np.array([[1, 1], [1, 1], [0, 0], [0, 0]])
    res = bias_amp_mals(attr_pred=attr, task_pred=task_pred, attr_train=attr, task_train=task)
    # task 1: bias_train(0)=1 > .5, bias_pred(0)=1/2 -> -0.5; task 0 adds 0 but counts: -0.5/2
    assert res.value == pytest.approx(-0.25)
    assert res.n_tasks == 2
    assert not res.pairs["indicator"][res.pairs["task"] == 0].any()


# --------------------------------------------------------------------------- #
# undefined pairs (docs/definitions.md#def-undefined)
# --------------------------------------------------------------------------- #
def test_group_absent_from_test_is_undefined_for_a_to_t():
    attr_train = np.array(["a", "a", "b", "c"])
    task_train = np.array([[1], [0], [1], [0]])
    attr = np.array(["a", "a", "b", "b"])  # no "c" in test
    task = np.array([[1], [0], [1], [0]])
    with pytest.warns(UndefinedPairWarning, match="1 of 3 pairs"):
        res = bias_amp_directional(
            attr, task, task_pred=task, attr_pred=attr, attr_train=attr_train, task_train=task_train
        )
    a_to_t = res.a_to_t
    assert a_to_t.n_undefined == 1 and a_to_t.n_pairs == 2
    row = a_to_t.pairs[a_to_t.pairs["attr"] == "c"].iloc[0]
    assert bool(row["undefined"]) and np.isnan(row["delta"])
    assert a_to_t.value == 0.0  # mean of the defined pairs only
    assert res.t_to_a.n_undefined == 0


def test_undefined_warning_points_at_the_caller():
    with pytest.warns(UndefinedPairWarning) as record:
        bias_amp_directional([0, 0, 1, 1], [[1, 0], [0, 0], [1, 0], [0, 0]], attr_pred=[0, 1, 1, 1])
    assert record[0].filename == __file__


def test_task_never_positive_in_test_is_undefined_for_t_to_a():
    attr = np.array([0, 0, 1, 1])
    task = np.array([[1, 0], [0, 0], [1, 0], [0, 0]])
    with pytest.warns(UndefinedPairWarning):
        res = bias_amp_directional(attr, task, attr_pred=np.array([0, 1, 1, 1]))
    assert res.t_to_a.n_undefined == 2  # both groups x task 1
    assert res.a_to_t is None


def test_every_pair_undefined_raises():
    attr = np.array([0, 0, 1, 1])
    task = np.zeros((4, 2), dtype=int)
    with pytest.raises(ValueError, match="every one of the 4 pairs is undefined"):
        bias_amp_directional(attr, task, attr_pred=attr)


# --------------------------------------------------------------------------- #
# a wholly undefined direction (docs: def-undefined): flagged, the other returned
# --------------------------------------------------------------------------- #
def _t_to_a_undefined():
    """The issue's reproducer: no task has a test positive, so T->A is undefined; A->T is defined."""
    a = np.array([0, 0, 1, 1, 0, 1])
    t = np.zeros((6, 1), int)
    tt = np.array([[1], [0], [1], [0], [0], [0]])
    return dict(attr=a, task=t, attr_pred=a, task_pred=t, attr_train=a, task_train=tt)


def test_undefined_direction_is_flagged_and_the_other_returned():
    kw = _t_to_a_undefined()
    with pytest.warns(UndefinedPairWarning, match="BiasAmp T->A is undefined.*no task has a positive test"):
        res = bias_amp_directional(kw.pop("attr"), kw.pop("task"), **kw)
    assert res.a_to_t.value == 0.0 and not res.a_to_t.undefined and res.a_to_t.reason is None
    t_to_a = res.t_to_a
    assert t_to_a.undefined and np.isnan(t_to_a.value) and t_to_a.n_pairs == 0 and t_to_a.n_undefined == 2
    assert "no task has a positive test instance" in t_to_a.reason
    assert t_to_a.pairs["undefined"].all()
    assert repr(t_to_a) == f"BiasAmp T->A = undefined: {t_to_a.reason}"
    assert "T->A = undefined:" in repr(res) and "A->T = +0.0000" in repr(res)
    assert res.undefined_reasons == {"T->A": t_to_a.reason}
    d = res.to_dict()
    assert d["t_to_a"]["undefined"] is True and d["t_to_a"]["value"] is None and d["t_to_a"]["reason"]
    assert d["a_to_t"]["undefined"] is False
    frame = res.to_frame()
    assert frame.attrs["undefined_reasons"] == {"T->A": t_to_a.reason}
    assert frame.loc[frame["direction"] == "T->A", "undefined"].all()
    assert t_to_a.top(3).empty


def test_undefined_a_to_t_keeps_t_to_a():
    """An attribute indicator matrix with no class in any test row: A->T conditions on empty groups."""
    attr = np.zeros((4, 2), dtype=int)
    task = np.array([[1], [0], [1], [1]])
    attr_train = np.array([[1, 0], [0, 1], [1, 0], [0, 1]])
    task_train = np.array([[1], [0], [0], [1]])
    with pytest.warns(UndefinedPairWarning, match="A->T is undefined"):
        res = bias_amp_directional(attr, task, attr_pred=np.array([[1, 0], [0, 0], [0, 1], [0, 0]]), task_pred=task,
                                   attr_train=attr_train, task_train=task_train)
    assert res.a_to_t.undefined and "no attribute class has a test member" in res.a_to_t.reason
    assert not res.t_to_a.undefined and res.t_to_a.n_pairs == 2


def test_every_direction_asked_for_undefined_raises():
    kw = _t_to_a_undefined()
    with pytest.raises(ValueError, match="every statistic asked for is undefined, BiasAmp T->A: every one of the 2"):
        bias_amp_directional(kw["attr"], kw["task"], attr_pred=kw["attr_pred"], attr_train=kw["attr_train"],
                             task_train=kw["task_train"])
    attr = np.zeros((4, 2), dtype=int)
    with pytest.raises(ValueError, match="BiasAmp A->T: every one of the 2 pairs.*BiasAmp T->A: every one"):
        bias_amp_directional(attr, np.zeros((4, 1), int), attr_pred=attr, task_pred=np.zeros((4, 1), int),
                             attr_train=np.eye(2, dtype=int)[[0, 1, 0, 1]], task_train=np.array([[1], [0], [1], [1]]))


def test_undefined_direction_from_counts_and_accumulators():
    kw = _t_to_a_undefined()
    ref = bias_amp_directional(kw["attr"], kw["task"], attr_pred=kw["attr_pred"], task_pred=kw["task_pred"],
                               attr_train=kw["attr_train"], task_train=kw["task_train"])
    from biasamp.accumulators import CooccurrenceAccumulator

    acc = CooccurrenceAccumulator([0, 1], [0], n_boot=50, random_state=0)
    acc.update(kw["attr"], kw["task"], attr_pred=kw["attr_pred"], task_pred=kw["task_pred"])
    acc.update_train(kw["attr_train"], kw["task_train"])
    with pytest.warns(UndefinedPairWarning):
        res = acc.compute()
    assert res.t_to_a.undefined and res.t_to_a.reason == ref.t_to_a.reason
    assert res.a_to_t.value == ref.a_to_t.value
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        boot = acc.bootstrap()
    assert list(boot.estimate) == ["A->T"]
    assert any(note.startswith("T->A undefined, no interval") for note in boot.notes)


def test_mals_result_is_never_returned_undefined():
    attr = np.array([0, 0, 1, 1])
    with pytest.raises(ValueError, match="every statistic asked for is undefined, BiasAmp_MALS: every one of the 4 "
                                         "pairs is undefined \\(no task has a positive training instance"):
        bias_amp_mals(attr_pred=attr, task_pred=np.ones((4, 2), dtype=int), attr_train=attr, task_train=np.zeros((4, 2), dtype=int))
    res = bias_amp_mals(attr_pred=attr, task_pred=np.ones((4, 2), int), attr_train=attr, task_train=np.eye(2, dtype=int)[[0, 1, 0, 1]])
    assert not res.undefined and res.reason is None and res.to_dict()["undefined"] is False


def test_mals_undefined_terms():
    attr = np.array([0, 0, 1, 1, 0])
    task = np.array([[1, 0, 1], [1, 0, 0], [0, 0, 0], [0, 0, 1], [0, 0, 0]])  # task 1 never positive
    task_pred = np.array([[0, 0, 1], [0, 0, 0], [0, 0, 0], [0, 0, 1], [0, 0, 0]])  # task 0 never predicted
    with pytest.warns(UndefinedPairWarning):
        res = bias_amp_mals(attr_pred=attr, task_pred=task_pred, attr_train=attr, task_train=task)
    # task 1: undefined (2 pairs), |T| = 2. task 0: indicator(a0)=1, never predicted -> undefined term.
    # task 2: bias_train 1/2 each (tie): defined zeros.
    assert res.n_tasks == 2 and res.n_undefined == 3
    assert res.value == 0.0
    with pytest.raises(ValueError, match="every one"):
        bias_amp_mals(attr_pred=attr, task_pred=np.zeros((5, 2), dtype=int), attr_train=attr, task_train=np.zeros((5, 2), dtype=int))


# --------------------------------------------------------------------------- #
# agreement with the naive reference on random data
# --------------------------------------------------------------------------- #
@st.composite
def labelled_data(draw, soft=False):
    n = draw(st.integers(8, 60))
    ka = draw(st.integers(2, 4))
    kt = draw(st.integers(1, 5))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    attr = rng.integers(0, ka, n)
    attr[:ka] = np.arange(ka)  # every group present
    task = (rng.random((n, kt)) < rng.uniform(0.2, 0.8, kt)).astype(int)
    task[0] = 1  # every task has a positive instance
    flip = rng.random((n, kt)) < 0.3
    task_pred = np.where(flip, 1 - task, task)
    if soft:
        task_pred = np.clip(task_pred + rng.uniform(-0.4, 0.4, (n, kt)), 0, 1)
    attr_pred = np.where(rng.random(n) < 0.3, rng.integers(0, ka, n), attr)
    return attr, task, attr_pred, task_pred, ka


@settings(max_examples=60, deadline=None)
@given(labelled_data())
def test_directional_matches_reference(data):
    attr, task, attr_pred, task_pred, ka = data
    res = bias_amp_directional(attr, task, attr_pred=attr_pred, task_pred=task_pred, cross_fit=False)
    ref = directional_reference(one_hot(attr, ka), task, one_hot(attr_pred, ka), task_pred)  # the plug-in
    assert res.a_to_t.value == pytest.approx(ref[0], abs=1e-12)
    assert res.t_to_a.value == pytest.approx(ref[1], abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(labelled_data(soft=True))
def test_soft_directional_matches_reference(data):
    attr, task, attr_pred, task_pred, ka = data
    res = bias_amp_directional(attr, task, task_pred=task_pred, soft="expected", cross_fit=False)
    ref = directional_reference(one_hot(attr, ka), task, None, task_pred)
    hard = bias_amp_directional(attr, task, task_pred=task_pred, cross_fit=False)  # thresholded at 0.5 by default
    assert hard.a_to_t.value == pytest.approx(
        directional_reference(one_hot(attr, ka), task, None, (task_pred > 0.5).astype(float))[0], abs=1e-12)
    assert res.a_to_t.value == pytest.approx(ref[0], abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(labelled_data(), st.booleans())
def test_mals_matches_reference(data, soft):
    attr, task, attr_pred, task_pred, ka = data
    rng = np.random.default_rng(len(attr))
    if soft:
        task_pred = np.clip(task_pred + rng.uniform(-0.4, 0.4, task_pred.shape), 0, 1)
    ref = mals_reference(one_hot(attr, ka), task, one_hot(attr_pred, ka), task_pred)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        res = bias_amp_mals(attr_pred=attr_pred, task_pred=task_pred, soft="expected", attr_train=attr, task_train=task)
        hard = bias_amp_mals(attr_pred=attr_pred, task_pred=(task_pred > 0.5).astype(int), attr_train=attr, task_train=task)
        default = bias_amp_mals(attr_pred=attr_pred, task_pred=task_pred, attr_train=attr, task_train=task)
    assert res.value == pytest.approx(ref, abs=1e-12)
    assert default.value == hard.value  # scores thresholded at 0.5 by default


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_multilabel_attribute_matches_reference(seed):
    rng = np.random.default_rng(seed)
    n, ka, kt = 40, 3, 4
    A = (rng.random((n, ka)) < 0.4).astype(int)
    A[:ka] = np.eye(ka, dtype=int)
    T = (rng.random((n, kt)) < 0.5).astype(int)
    T[0] = 1
    A_hat = np.where(rng.random((n, ka)) < 0.2, 1 - A, A)
    T_hat = np.where(rng.random((n, kt)) < 0.2, 1 - T, T)
    res = bias_amp_directional(A, T, attr_pred=A_hat, task_pred=T_hat, cross_fit=False)
    ref = directional_reference(A, T, A_hat, T_hat)
    assert (res.a_to_t.value, res.t_to_a.value) == pytest.approx(ref, abs=1e-12)


# --------------------------------------------------------------------------- #
# properties
# --------------------------------------------------------------------------- #
@settings(max_examples=50, deadline=None)
@given(labelled_data())
def test_perfect_predictions_give_zero(data):
    attr, task, _, _, _ = data
    res = bias_amp_directional(attr, task, attr_pred=attr, task_pred=task)
    assert res.a_to_t.value == 0.0 and res.t_to_a.value == 0.0
    mals = bias_amp_mals(attr_pred=attr, task_pred=task, attr_train=attr, task_train=task)
    assert mals.value == 0.0


@settings(max_examples=50, deadline=None)
@given(labelled_data(), st.integers(0, 2**32 - 1))
def test_invariant_to_row_order(data, seed):
    attr, task, attr_pred, task_pred, _ = data
    perm = np.random.default_rng(seed).permutation(len(attr))
    a = bias_amp_directional(attr, task, attr_pred=attr_pred, task_pred=task_pred)
    b = bias_amp_directional(attr[perm], task[perm], attr_pred=attr_pred[perm], task_pred=task_pred[perm])
    assert a.a_to_t.value == pytest.approx(b.a_to_t.value, abs=1e-12)
    assert a.t_to_a.value == pytest.approx(b.t_to_a.value, abs=1e-12)


@settings(max_examples=50, deadline=None)
@given(labelled_data(), st.integers(0, 2**32 - 1))
def test_invariant_to_renaming_and_reordering_classes(data, seed):
    attr, task, attr_pred, task_pred, ka = data
    rng = np.random.default_rng(seed)
    names = np.array([f"group-{i}" for i in rng.permutation(ka)], dtype=object)  # renamed, new sort order
    cols = rng.permutation(task.shape[1])
    a = bias_amp_directional(attr, task, attr_pred=attr_pred, task_pred=task_pred)
    b = bias_amp_directional(
        names[attr], task[:, cols], attr_pred=names[attr_pred], task_pred=task_pred[:, cols]
    )
    assert a.a_to_t.value == pytest.approx(b.a_to_t.value, abs=1e-12)
    assert a.t_to_a.value == pytest.approx(b.t_to_a.value, abs=1e-12)
    # the same pair has the same contribution under its new names
    pa = a.a_to_t.pairs.assign(attr=names[a.a_to_t.pairs["attr"].astype(int)])
    pa = pa.assign(task=np.argsort(cols)[pa["task"].astype(int)]).set_index(["attr", "task"]).sort_index()
    pb = b.a_to_t.pairs.set_index(["attr", "task"]).sort_index()
    np.testing.assert_allclose(pa["contribution"].to_numpy(float), pb["contribution"].to_numpy(float))
    with warnings.catch_warnings():  # random predictions may leave a task unpredicted
        warnings.simplefilter("ignore", UndefinedPairWarning)
        m_a = bias_amp_mals(attr_pred=attr_pred, task_pred=task_pred, attr_train=attr, task_train=task).value
        m_b = bias_amp_mals(attr_pred=names[attr_pred], task_pred=task_pred[:, cols], attr_train=names[attr], task_train=task[:, cols]).value
    assert m_a == pytest.approx(m_b, abs=1e-12)


def test_soft_predictions_of_exactly_zero_one_equal_hard():
    rng = np.random.default_rng(3)
    attr = rng.integers(0, 3, 200)
    task = (rng.random((200, 4)) < 0.3).astype(int)
    task_pred = (rng.random((200, 4)) < 0.3).astype(int)
    attr_pred_hard = rng.integers(0, 3, 200)
    attr_pred_soft = one_hot(attr_pred_hard, 3).astype(np.float64)
    hard = bias_amp_directional(attr, task, attr_pred=attr_pred_hard, task_pred=task_pred)
    soft = bias_amp_directional(attr, task, attr_pred=attr_pred_soft, task_pred=task_pred.astype(float))
    assert hard.a_to_t.value == soft.a_to_t.value and hard.t_to_a.value == soft.t_to_a.value
    assert bias_amp_mals(attr_pred=attr_pred_hard, task_pred=task_pred, attr_train=attr, task_train=task).value == bias_amp_mals(attr_pred=attr_pred_soft, task_pred=task_pred.astype(float)
    , attr_train=attr, task_train=task).value


# --------------------------------------------------------------------------- #
# input kinds
# --------------------------------------------------------------------------- #
def test_every_input_kind_gives_the_same_result():
    attr, task, task_pred = shortcoming_1()
    expected = bias_amp_directional(attr, task, task_pred=task_pred).a_to_t.value
    kinds = {
        "list": lambda x: x.tolist(),
        "series": lambda x: pd.Series(x),
        "int8": lambda x: x.astype(np.int8),
        "object": lambda x: x.astype(object),
    }
    for name, conv in kinds.items():
        got = bias_amp_directional(conv(attr), conv(task), task_pred=conv(task_pred)).a_to_t.value
        assert got == expected, name
    # 2-D: numpy bool, DataFrame (columns reordered), float 0/1
    T = one_hot(task, 2)
    T_hat = one_hot(task_pred, 2)
    for conv in (lambda x: x.astype(bool), lambda x: x.astype(np.float32)):
        assert bias_amp_directional(attr, conv(T), task_pred=conv(T_hat)).a_to_t.value == pytest.approx(expected)
    df = pd.DataFrame(T, columns=["no", "yes"])
    df_hat = pd.DataFrame(T_hat, columns=["no", "yes"])[["yes", "no"]]  # reordered: aligned by name
    res = bias_amp_directional(attr, df, task_pred=df_hat)
    assert res.a_to_t.value == pytest.approx(expected)
    assert set(res.a_to_t.pairs["task"]) == {"no", "yes"}


def test_torch_tensors_are_accepted():
    torch = pytest.importorskip("torch")
    attr, task, task_pred = shortcoming_2()
    res = bias_amp_directional(torch.tensor(attr), torch.tensor(task), task_pred=torch.tensor(task_pred),
                               cross_fit=False)
    assert round(res.a_to_t.value, 4) == 0.3333


# --------------------------------------------------------------------------- #
# streaming and merging (counts first)
# --------------------------------------------------------------------------- #
@settings(max_examples=40, deadline=None)
@given(labelled_data(), st.integers(1, 5), st.integers(0, 2**32 - 1))
def test_batches_through_update_equal_one_shot(data, k, seed):
    attr, task, attr_pred, task_pred, ka = data
    classes = list(range(ka))
    cuts = np.sort(np.random.default_rng(seed).choice(np.arange(1, len(attr)), size=k - 1, replace=False))
    parts = np.split(np.arange(len(attr)), cuts)
    kw = dict(attr_classes=classes, task_classes=list(range(task.shape[1])))
    acc = CooccurrenceCounts.from_labels(attr[parts[0]], task[parts[0]], attr_pred=attr_pred[parts[0]],
                                         task_pred=task_pred[parts[0]], **kw)
    for idx in parts[1:]:
        acc = acc.update(attr=attr[idx], task=task[idx], attr_pred=attr_pred[idx], task_pred=task_pred[idx])
    one = CooccurrenceCounts.from_labels(attr, task, attr_pred=attr_pred, task_pred=task_pred, **kw)
    np.testing.assert_array_equal(acc.gram, one.gram)
    train = one.restrict(["attr"], ["task"])
    r_acc = directional_from_counts(train, acc)
    r_one = bias_amp_directional(attr, task, attr_pred=attr_pred, task_pred=task_pred, cross_fit=False)
    assert r_acc.a_to_t.value == r_one.a_to_t.value and r_acc.t_to_a.value == r_one.t_to_a.value


@settings(max_examples=40, deadline=None)
@given(labelled_data(), st.integers(0, 2**32 - 1))
def test_merged_tables_equal_concatenated_data(data, seed):
    attr, task, attr_pred, task_pred, ka = data
    mask = np.random.default_rng(seed).random(len(attr)) < 0.5
    kw = dict(attr_classes=list(range(ka)), task_classes=list(range(task.shape[1])))

    def counts(m):
        return CooccurrenceCounts.from_labels(attr[m], task[m], attr_pred=attr_pred[m], task_pred=task_pred[m], **kw)

    parts = [counts(m) for m in (mask, ~mask) if m.any()]
    merged = sum(parts)
    np.testing.assert_array_equal(merged.gram, counts(np.ones(len(attr), bool)).gram)
    if len(parts) == 2:  # addition commutes
        np.testing.assert_array_equal((parts[0] + parts[1]).gram, (parts[1] + parts[0]).gram)


# --------------------------------------------------------------------------- #
# bad input
# --------------------------------------------------------------------------- #
ATTR = np.array([0, 1, 0, 1])
TASK = np.array([[1, 0], [0, 1], [1, 1], [0, 0]])


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(attr=ATTR[:3], task=TASK, task_pred=TASK), ValueError, "length mismatch: attr has 3"),
        (dict(attr=ATTR, task=TASK, task_pred=TASK[:3]), ValueError, "length mismatch"),
        (dict(attr=np.array([0, 1, np.nan, 1]), task=TASK, task_pred=TASK), ValueError, "attr contains NaN"),
        (dict(attr=ATTR, task=np.where(TASK == 1, np.nan, 0), task_pred=TASK), ValueError, "task contains NaN"),
        (dict(attr=ATTR, task=TASK, task_pred=np.array([[0.5, np.inf]] * 4)), ValueError, "task_pred contains NaN or inf"),
        (dict(attr=ATTR, task=TASK * 2, task_pred=TASK), ValueError, "task is a 2-D ground-truth matrix with values other than 0/1"),
        (dict(attr=ATTR, task=TASK, task_pred=TASK * 1.5), ValueError, "task_pred holds probabilities outside"),
        (dict(attr=ATTR, task=TASK, task_pred=TASK - 0.5), ValueError, "outside \\[0, 1\\]"),
        (dict(attr=[], task=TASK, task_pred=TASK), ValueError, "attr is empty"),
        (dict(attr=ATTR, task=TASK, task_pred=np.ones((4, 3))), ValueError, "task_pred has 3 columns but its ground truth has 2"),
        (dict(attr=ATTR, task=TASK, attr_pred=np.array([0, 1, 2, 1])), ValueError, "attr_pred contains predicted classes \\[2\\]"),
        (dict(attr=ATTR, task=TASK), ValueError, "neither was given"),
        (dict(attr=ATTR, task=TASK, task_pred=TASK, attr_train=ATTR), ValueError, "both attr_train and task_train"),
        (dict(attr=ATTR, task=TASK, task_pred=TASK, attr_train=ATTR, task_train=TASK[:3]), ValueError, "attr_train has 4, task_train has 3"),
        (dict(attr=ATTR, task=TASK, task_pred=TASK, attr_train=np.ones((4, 2)), task_train=TASK), ValueError, "must all be 1-D or all 2-D: attr is 1-D, attr_train is 2-D"),
        (dict(attr=ATTR, task=TASK, task_pred=TASK, attr_train=ATTR, task_train=np.ones((4, 3))), ValueError, "same number of columns"),
        (dict(attr=ATTR, task=np.zeros((4, 2, 2)), task_pred=TASK), ValueError, "3-D"),
        (dict(attr=np.array([0, 0.5, 1, 0]), task=TASK, task_pred=TASK), ValueError, "non-integer float"),
        (dict(attr=ATTR, task=TASK, attr_pred=np.array([0.1, 0.5, 0.2, 0.3]), task_pred=TASK), None, None),
        (dict(attr=np.array([0, 1, 2, 1]), task=TASK, attr_pred=np.array([0.1, 0.5, 0.2, 0.3])), ValueError, "only understood for a binary"),
        (dict(attr=5, task=TASK, task_pred=TASK), TypeError, "attr must be array-like"),
        (dict(attr="0101", task=TASK, task_pred=TASK), TypeError, "attr must be array-like"),
        (dict(attr=ATTR, task={"a": 1}, task_pred=TASK), TypeError, "task must be array-like"),
        (dict(attr=ATTR, task=np.array([["a", "b"]] * 4), task_pred=TASK), TypeError, "task is a 2-D matrix"),
        (dict(attr=ATTR, task=pd.DataFrame(TASK, columns=["x", "y"]), task_pred=pd.DataFrame(TASK, columns=["x", "z"])), ValueError, "do not match the classes"),
    ],
)
def test_bad_input_raises_clear_error(kwargs, error, match):
    if error is None:  # a valid soft prediction of a binary attribute: no error
        bias_amp_directional(**kwargs)
        return
    with pytest.raises(error, match=match):
        bias_amp_directional(**kwargs)


def test_mals_bad_input():
    with pytest.raises(ValueError, match="attr_pred contains predicted classes"):
        bias_amp_mals(attr_pred=np.array([0, 1, 7, 1]), task_pred=TASK, attr_train=ATTR, task_train=TASK)
    with pytest.raises(ValueError, match="length mismatch: attr_train has 4, task_train has 3"):
        bias_amp_mals(attr_pred=ATTR, task_pred=TASK, attr_train=ATTR, task_train=TASK[:3])
    with pytest.raises(ValueError, match="length mismatch: attr_pred has 4, task_pred has 2"):
        bias_amp_mals(attr_pred=ATTR, task_pred=TASK[:2], attr_train=ATTR, task_train=TASK)
    with pytest.raises(ValueError, match="task_pred has 1 columns"):
        bias_amp_mals(attr_pred=ATTR, task_pred=TASK[:, :1], attr_train=ATTR, task_train=TASK)


# --------------------------------------------------------------------------- #
# result objects
# --------------------------------------------------------------------------- #
def test_results_print_and_convert():
    attr, task, task_pred = shortcoming_1()
    res = bias_amp_directional(attr, task, task_pred=task_pred, attr_pred=attr, cross_fit=False)
    text = repr(res)
    assert "A->T = +0.1778" in text and "T->A = +0.0000" in text and "test ground truth" in text
    assert "signs from the test rows" in text and not res.cross_fit
    crossfit = bias_amp_directional(attr, task, task_pred=task_pred, attr_pred=attr)
    assert crossfit.cross_fit and "signs cross-fitted (2 folds)" in repr(crossfit)
    assert {"y_fold0", "y_fold1"} <= set(crossfit.a_to_t.pairs.columns)
    d = res.to_dict()
    assert d["a_to_t"]["value"] == pytest.approx(0.17777, abs=1e-4)
    # the binary task is read as its positive class: one pair per group
    assert len(d["a_to_t"]["pairs"]) == 3 and d["train_source"] == "test" and d["binary_task"] == "positive class 1"
    frame = res.to_frame()
    assert set(frame["direction"]) == {"A->T", "T->A"} and len(frame) == 6
    top = res.a_to_t.top(2)
    # the positive class's three pairs: 1/3 + 0.2 + 0 = 3 x .1778 (class 0's pairs mirrored them)
    assert top["contribution"].abs().tolist() == pytest.approx([1 / 3, 0.2])
    mals = bias_amp_mals(attr_pred=attr, task_pred=task_pred, attr_train=attr, task_train=task)
    assert repr(mals).startswith("BiasAmp_MALS = ")
    assert mals.to_dict()["n_tasks"] == 1 and mals.to_dict()["binary_task"] == "positive class 1"
    with pytest.raises(AttributeError):
        res.a_to_t.value = 1.0  # frozen


# --------------------------------------------------------------------------- #
# option (a): drop_empty_train_rows (the multi-attribute authors' code)
# --------------------------------------------------------------------------- #
def _empty_rows_case():
    """One attribute column (female) and one task; two rows have neither."""
    attr = np.array([[1], [1], [1], [0], [0], [0]])
    task = np.array([[1], [1], [0], [1], [0], [0]])
    task_pred = np.array([[1], [1], [1], [1], [0], [0]])  # the third female row now predicted positive
    attr_pred = np.array([[1], [1], [1], [1], [0], [0]])  # the male positive now predicted female
    return attr, task, attr_pred, task_pred


def test_drop_empty_train_rows_flips_the_sign_by_hand():
    attr, task, attr_pred, task_pred = _empty_rows_case()
    # n = 6, #a = 3, #t = 3, #(a,t) = 2: sign(6*2 - 3*3) = +1; without the 2 empty rows n = 4:
    # sign(4*2 - 9) = -1. Delta A->T = P(T^|A) - P(T|A) = 1 - 2/3; Delta T->A = P(A^|T) - P(A|T) = 1 - 2/3
    kept = bias_amp_directional(attr, task, attr_pred=attr_pred, task_pred=task_pred, cross_fit=False)
    dropped = bias_amp_directional(attr, task, attr_pred=attr_pred, task_pred=task_pred, drop_empty_train_rows=True,
                                   cross_fit=False)
    assert kept.a_to_t.value == pytest.approx(1 / 3) and kept.t_to_a.value == pytest.approx(1 / 3)
    assert dropped.a_to_t.value == pytest.approx(-1 / 3) and dropped.t_to_a.value == pytest.approx(-1 / 3)
    assert kept.a_to_t.pairs["y"].tolist() == [1] and dropped.a_to_t.pairs["y"].tolist() == [-1]
    # an explicit training set: only its empty rows count
    train = dict(attr_train=np.vstack([attr, [[0]] * 4]), task_train=np.vstack([task, [[0]] * 4]))
    res = bias_amp_directional(attr, task, task_pred=task_pred, **train, drop_empty_train_rows=True)
    assert res.a_to_t.value == pytest.approx(-1 / 3)
    assert bias_amp_directional(attr, task, task_pred=task_pred, **train).a_to_t.value == pytest.approx(1 / 3)
    # the bootstrap sees the same signs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)  # replicates without a female row
        boot = bootstrap(bias_amp_directional, attr, task, task_pred=task_pred, drop_empty_train_rows=True,
                         n_boot=50, random_state=0, cross_fit=False)
    assert boot.estimate["A->T"] == pytest.approx(-1 / 3)
    with pytest.raises(TypeError, match="drop_empty_train_rows"):
        bias_amp_directional(attr, task, task_pred=task_pred, drop_empty_train_rows="yes")


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**16))
def test_drop_empty_train_rows_matches_the_authors_filter(seed):
    """The authors keep the training rows with some attribute or some task, then take the signs."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 40))
    attr = (rng.random((n, 2)) < 0.3).astype(int)
    task = (rng.random((n, 3)) < 0.3).astype(int)
    task_pred = (rng.random((n, 3)) < 0.3).astype(int)
    if not attr.any(axis=0).all() or not task.any(axis=0).all():
        return  # every class needs a member for the conditionals of the reference
    keep = attr.any(axis=1) | task.any(axis=1)
    ref, _ = directional_reference(attr, task, None, task_pred, A_train=attr[keep], T_train=task[keep])
    res = bias_amp_directional(attr, task, task_pred=task_pred, drop_empty_train_rows=True, cross_fit=False)
    assert res.a_to_t.value == pytest.approx(ref, abs=1e-12)
    # single-label (1-D) labels have no empty rows: the option changes nothing
    a1, t1 = rng.integers(0, 2, n), np.arange(n) % 3
    p1 = rng.permutation(t1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        assert bias_amp_directional(a1, t1, task_pred=p1, drop_empty_train_rows=True).a_to_t.value == \
            bias_amp_directional(a1, t1, task_pred=p1).a_to_t.value


# reliability (issue 13)
# --------------------------------------------------------------------------- #
def test_ragged_and_duplicate_named_inputs_raise_named_errors():
    with pytest.raises(ValueError, match="attr could not be converted"):
        bias_amp_directional([[0, 1], [1]], [0, 1], task_pred=[0, 1])
    dup = pd.DataFrame([[1, 0], [0, 1], [1, 1]], columns=["c", "c"])
    with pytest.raises(ValueError, match="task has duplicate column names"):
        bias_amp_directional([0, 1, 0], dup, task_pred=np.array(["c"] * 3))


def test_small_attribute_classes_are_left_out_of_the_means_and_kept_in_the_table():
    rng = np.random.default_rng(3)
    attr = np.repeat(["x", "y", "z"], [400, 380, 12])  # z: 12 test members, below min_group_size=30
    task = (rng.random((792, 3)) < 0.3).astype(int)
    task_pred = np.where(rng.random(task.shape) < 0.2, 1 - task, task)
    attr_pred = np.where(rng.random(792) < 0.1, "x", attr)
    with pytest.warns(SmallGroupWarning, match="'z' \\(n=12\\)"):
        res = bias_amp_directional(attr, task, task_pred=task_pred, attr_pred=attr_pred)
    assert res.small_groups == ("z",)
    for d in (res.a_to_t, res.t_to_a):
        pairs = d.pairs
        assert pairs.loc[pairs["attr"] == "z", "small"].all() and not pairs.loc[pairs["attr"] != "z", "small"].any()
        kept = pairs[~pairs["small"] & ~pairs["undefined"]]
        assert d.value == pytest.approx(kept["contribution"].mean(), abs=1e-15)  # the mean without z's pairs
        assert d.n_small == 3 and d.n_pairs == len(kept)
    every = bias_amp_directional(attr, task, task_pred=task_pred, attr_pred=attr_pred, include_small_groups=True)
    assert every.small_groups == () and every.a_to_t.value == pytest.approx(
        every.a_to_t.pairs["contribution"].mean(), abs=1e-15)
    low = bias_amp_directional(attr, task, task_pred=task_pred, attr_pred=attr_pred, min_group_size=10)
    assert low.small_groups == () and low.a_to_t.value == every.a_to_t.value
    boot = biasamp.bootstrap(bias_amp_directional, attr, task, task_pred=task_pred, attr_pred=attr_pred,
                             n_boot=100, random_state=0)
    assert boot.estimate == {"A->T": res.a_to_t.value, "T->A": res.t_to_a.value}
    for name in ("A->T", "T->A"):
        lo, hi = boot.ci[name]
        assert lo <= boot.estimate[name] <= hi


# --------------------------------------------------------------------------- #
# one path: the function and its bootstrap are the family's count and compute hooks
# --------------------------------------------------------------------------- #
def _hook_data():
    rng = np.random.default_rng(5)
    n = 240
    attr = rng.integers(0, 2, n)
    task = (rng.random((n, 3)) < 0.3 + 0.3 * attr[:, None]).astype(int)
    task_pred = task ^ (rng.random((n, 3)) < 0.15)
    attr_pred = np.where(rng.random(n) < 0.1, 1 - attr, attr)
    probs_a = np.clip(np.eye(2)[attr] * 0.6 + rng.random((n, 2)) * 0.4, 0, 1)
    probs_t = np.clip(task * 0.6 + rng.random((n, 3)) * 0.4, 0, 1)
    attr_ind = np.eye(2, dtype=int)[attr]
    empty = rng.random(n) < 0.2  # rows with no attribute class and no task label
    attr_ind[empty], task_e = 0, np.where(empty[:, None], 0, task)
    attr_nan = np.where(rng.random(n) < 0.05, np.nan, attr)
    y = (rng.random(n) < 0.3 + 0.4 * attr).astype(int)
    y_pred = np.where(rng.random(n) < 0.1, 1 - y, y)
    w = rng.integers(1, 4, n).astype(float)
    return dict(attr=attr, task=task, task_pred=task_pred, attr_pred=attr_pred, probs_a=probs_a, probs_t=probs_t,
                attr_ind=attr_ind, task_e=task_e, attr_nan=attr_nan, y=y, y_pred=y_pred, w=w)


_D = _hook_data()
_HOOK_CALLS = {  # every path of the two counting hooks: cross-fitted, training set, plug-in, and the options' own
    "dir": (bias_amp_directional, (_D["attr"], _D["task"]), dict(task_pred=_D["task_pred"], attr_pred=_D["attr_pred"])),
    "dir-train": (bias_amp_directional, (_D["attr"], _D["task"]),
                  dict(task_pred=_D["task_pred"], attr_train=_D["attr"][::-1], task_train=_D["task"], sample_weight=_D["w"],
                       train_sample_weight=_D["w"][::-1])),
    "dir-plug": (bias_amp_directional, (_D["attr"], _D["task"]), dict(attr_pred=_D["probs_a"], cross_fit=False,
                                                                       soft="expected")),
    "dir-empty": (bias_amp_directional, (_D["attr_ind"], _D["task_e"]),
                  dict(task_pred=_D["task_pred"], attr_pred=_D["attr_ind"], drop_empty_train_rows=True)),
    "dir-empty-plug": (bias_amp_directional, (_D["attr_ind"], _D["task_e"]),
                       dict(task_pred=_D["task_pred"], drop_empty_train_rows=True, cross_fit=False, sample_weight=_D["w"])),
    "dir-nan": (bias_amp_directional, (_D["attr_nan"], _D["task"]), dict(task_pred=_D["task_pred"], missing="drop")),
    "dir-both": (bias_amp_directional, (_D["attr"], _D["y"]), dict(task_pred=_D["y_pred"], binary_task="both")),
    "dir-pos": (bias_amp_directional, (_D["attr"], _D["y"]), dict(task_pred=_D["y_pred"], pos_label=0, cross_fit=False)),
    "mals": (bias_amp_mals, (_D["attr"], _D["task"]), dict(attr_pred=_D["attr_pred"], task_pred=_D["task_pred"],
                                                           sample_weight=_D["w"])),
    "mals-train": (bias_amp_mals, (), dict(attr_pred=_D["attr_pred"], task_pred=_D["task_pred"],
                                           attr_train=_D["attr"][::-1], task_train=_D["task"])),
    "mals-plug": (bias_amp_mals, (_D["attr"], _D["task"]), dict(attr_pred=_D["attr_pred"], task_pred=_D["task_pred"],
                                                                cross_fit=False)),
    "mals-soft": (bias_amp_mals, (_D["attr"], _D["task"]), dict(attr_pred=_D["probs_a"], task_pred=_D["probs_t"],
                                                                soft="expected")),
    "mals-soft-plug": (bias_amp_mals, (_D["attr"], _D["task"]),
                       dict(attr_pred=_D["probs_a"], task_pred=_D["probs_t"], soft="expected", cross_fit=False)),
    "mals-nan": (bias_amp_mals, (_D["attr_nan"], _D["task"]), dict(attr_pred=_D["attr_pred"], task_pred=_D["task_pred"],
                                                                   missing="drop")),
    "mals-both": (bias_amp_mals, (_D["attr"], _D["y"]), dict(attr_pred=_D["attr_pred"], task_pred=_D["y_pred"],
                                                             binary_task="both")),
}


@pytest.mark.parametrize("case", list(_HOOK_CALLS))
def test_function_and_bootstrap_are_the_family_hooks(case):
    import inspect

    from biasamp.cooccurrence._family import DIRECTIONAL, MALS

    fn, args, kwargs = _HOOK_CALLS[case]
    family = DIRECTIONAL if fn is bias_amp_directional else MALS
    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    opts, labels = family.options.call_of(bound.arguments)
    counted = family.count(labels, opts)
    res = fn(*args, **kwargs)
    hooked = family.compute(counted, opts)
    assert hooked.to_frame().equals(res.to_frame()) and hooked.predictions == res.predictions
    assert hooked.binary_task == res.binary_task
    boot = bootstrap(fn, *args, n_boot=20, random_state=0, **kwargs)
    if fn is bias_amp_mals:
        assert boot.estimate == {"MALS": res.value}
    else:
        assert boot.estimate == {d.direction: d.value for d in (res.a_to_t, res.t_to_a) if d is not None}
    assert boot.result.to_frame().equals(res.to_frame())


def test_dropped_empty_training_rows_count_as_rows_never_given():
    from biasamp.cooccurrence._metrics import directional_count
    from biasamp.cooccurrence._options import DirectionalOptions

    d = _D
    empty = ~d["attr_ind"].any(axis=1) & ~d["task_e"].any(axis=1)
    assert 20 < empty.sum() < 80
    attr = np.eye(2, dtype=int)[d["attr"]]
    labels = dict(attr=attr, task=d["task"], attr_pred=None, task_pred=d["task_pred"], attr_train=d["attr_ind"],
                  task_train=d["task_e"], sample_weight=None, train_sample_weight=None)
    counted = directional_count(labels, DirectionalOptions(drop_empty_train_rows=True))
    assert counted.source == "train" and not counted.cross_fit
    assert counted.train.n == len(empty) - empty.sum()  # the training table's n: the rows with a label
    stripped = bias_amp_directional(attr, d["task"], task_pred=d["task_pred"], attr_train=d["attr_ind"][~empty],
                                    task_train=d["task_e"][~empty])
    boot = bootstrap(bias_amp_directional, attr, d["task"], task_pred=d["task_pred"], attr_train=d["attr_ind"],
                     task_train=d["task_e"], drop_empty_train_rows=True, n_boot=20, random_state=0)
    assert boot.estimate == {"A->T": stripped.a_to_t.value}


def test_bootstrap_refuses_a_call_in_the_function_s_words():
    d = _D
    with pytest.raises(TypeError) as by_function:
        bias_amp_mals(d["attr"], d["task"], attr_pred=None, task_pred=d["task_pred"])
    with pytest.raises(TypeError) as by_bootstrap:
        bootstrap(bias_amp_mals, d["attr"], d["task"], attr_pred=None, task_pred=d["task_pred"], n_boot=10)
    assert str(by_bootstrap.value) == str(by_function.value) and "attr_pred" in str(by_function.value)
    with pytest.raises(TypeError, match=r"^bias_amp_directional\(\) missing 1 required positional argument: 'task'"):
        bootstrap(bias_amp_directional, d["attr"], task_pred=d["task_pred"], n_boot=10)
    with pytest.raises(TypeError, match=r"^bias_amp_mals\(\) missing 1 required keyword-only argument: 'task_pred'"):
        bootstrap(bias_amp_mals, d["attr"], d["task"], attr_pred=d["attr_pred"], n_boot=10)
