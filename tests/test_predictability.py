"""DPA and leakage amplification: paper claims, analytic cases, properties, errors."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.neural_network import MLPRegressor
from sklearn.svm import LinearSVC

from biasamp import bias_amp_directional
from biasamp.predictability._metrics import (
    DPAResult,
    LeakageResult,
    TabularAttacker,
    _encode_variable,
    _flip,
    dpa,
    leakage_amplification,
)

FAST = dict(n_iter=3, random_state=0, progress=False)


def associated(n=2000, strength=0.8, seed=0):
    """Binary A and T with P(T = A) = strength."""
    rng = np.random.default_rng(seed)
    attr = rng.integers(0, 2, n)
    task = np.where(rng.random(n) < strength, attr, 1 - attr)
    return attr, task


def balanced(per_cell=250):
    """Exactly balanced: every (A, T) cell has ``per_cell`` rows (rows ordered A, then T)."""
    attr = np.repeat([0, 1], 2 * per_cell)
    task = np.tile(np.repeat([0, 1], per_cell), 2)
    return attr, task


# --------------------------------------------------------------------------- #
# the tabular attacker is the analytic optimum
# --------------------------------------------------------------------------- #
def test_tabular_attacker_equals_smoothed_conditional():
    # A in {0, 1, 2} one-hot; counts of T = 0/1/2 per A
    counts = np.array([[5, 3, 0], [1, 1, 6], [2, 2, 2]])
    rows, ys = [], []
    for a in range(3):
        for t in range(3):
            rows += [np.eye(3)[a]] * counts[a, t]
            ys += [t] * counts[a, t]
    X, y = np.array(rows), np.array(ys)
    for alpha in (0.0, 0.5, 1.0):
        p = TabularAttacker(alpha=alpha).fit(X, y).predict_proba(np.eye(3))
        expected = (counts + alpha) / (counts.sum(axis=1, keepdims=True) + 3 * alpha)
        np.testing.assert_allclose(p, expected, rtol=0, atol=1e-15)
    att = TabularAttacker(alpha=1.0).fit(X, y)
    # unseen input row: the smoothed training marginal
    np.testing.assert_allclose(att.predict_proba([[1, 1, 0]])[0], (counts.sum(0) + 1) / (counts.sum() + 3))
    np.testing.assert_array_equal(att.predict(np.eye(3)), [0, 2, 0])  # argmax, first on ties


def test_tabular_attacker_multilabel_and_weights():
    X = np.array([[1, 0], [1, 0], [1, 0], [0, 1]])
    Y = np.array([[1, 0], [1, 1], [0, 0], [0, 1]])
    p = TabularAttacker(alpha=1).fit(X, Y).predict_proba([[1, 0], [0, 1]])
    np.testing.assert_allclose(p, [[3 / 5, 2 / 5], [1 / 3, 2 / 3]])
    # sample weights = duplicated rows
    w = TabularAttacker(alpha=1).fit(X[:2], [0, 1], sample_weight=[3, 1]).predict_proba([[1, 0]])
    d = TabularAttacker(alpha=1).fit(X[[0, 0, 0, 1]], [0, 0, 0, 1]).predict_proba([[1, 0]])
    np.testing.assert_allclose(w, d)
    with pytest.raises(ValueError, match="alpha"):
        TabularAttacker(alpha=-1).fit(X, [0, 1, 0, 1])


def test_builtin_attackers_agree_with_the_optimum():
    """On discrete inputs the MLP and logistic attackers reach the Bayes-optimal (tabular) quality."""
    attr, task = associated(1500, 0.75)
    rng = np.random.default_rng(1)
    task_pred = np.where(rng.random(len(task)) < 0.1, 1 - task, task)
    res = {a: dpa(attr, task, task_pred=task_pred, attacker=a, **FAST).a_to_t for a in ("tabular", "logistic", "mlp")}
    for a in ("logistic", "mlp"):
        np.testing.assert_allclose(res[a].iterations["psi_data"], res["tabular"].iterations["psi_data"], rtol=5e-3)
        np.testing.assert_allclose(res[a].iterations["psi_model"], res["tabular"].iterations["psi_model"], rtol=5e-3)


# --------------------------------------------------------------------------- #
# the paper's claims
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("attacker", ["tabular", "logistic", "mlp"])
def test_perfect_predictions_give_exactly_zero(attacker):
    attr, task = associated(600)
    res = dpa(attr, task, attr_pred=attr, task_pred=task, attacker=attacker, **FAST)
    for d in (res.a_to_t, res.t_to_a):
        assert (d.iterations["dpa"] == 0).all() and d.value == 0.0
        assert (d.iterations["n_flipped"] == 0).all()
        assert d.ci == (0.0, 0.0)
    la = leakage_amplification(attr, task, task_pred=task, attacker=attacker, **FAST)
    assert la.value == 0.0


def test_perfect_predictions_multilabel_zero():
    rng = np.random.default_rng(3)
    attr = rng.integers(0, 3, 300)
    task = (rng.random((300, 3)) < 0.2 + 0.2 * (attr[:, None] == np.arange(3)[None, :])).astype(int)
    for attacker in ("tabular", "logistic", "mlp"):
        res = dpa(attr, task, attr_pred=attr, task_pred=task, attacker=attacker, n_iter=2, random_state=0,
                  progress=False)
        assert res.a_to_t.value == 0.0 and res.t_to_a.value == 0.0


def test_copying_attr_into_task_pred_is_strongly_positive():
    attr, task = associated(2000, 0.7)
    res = dpa(attr, task, task_pred=attr, attacker="tabular", **FAST)
    assert res.a_to_t.value > 0.9
    assert res.a_to_t.ci[0] > 0.9 and res.a_to_t.ci[1] <= 1.0
    assert res.t_to_a is None


def test_weakening_the_association_at_equal_accuracy_is_negative():
    """The model's 40% errors all break the A-T association; random flips at 60% accuracy keep some."""
    attr, task = associated(4000, 0.9, seed=2)
    rng = np.random.default_rng(5)
    aligned = np.flatnonzero(task == attr)
    wrong = rng.choice(aligned, size=int(0.4 * len(task)), replace=False)
    task_pred = task.copy()
    task_pred[wrong] = 1 - task_pred[wrong]
    for quality in ("accuracy", "inv_ce"):
        res = dpa(attr, task, task_pred=task_pred, attacker="tabular", quality=quality, n_iter=5,
                  random_state=0, progress=False)
        assert res.a_to_t.model_accuracy == pytest.approx(0.6)
        assert res.a_to_t.value < 0 and res.a_to_t.ci[1] < 0, quality


def test_balanced_dataset_positive_dpa_while_ba_directional_is_zero():
    """DPA App. J / App. E.2.2: on a balanced dataset BA→ is exactly 0 whatever the model; DPA is not."""
    attr, task = balanced(400)
    task_pred = task.copy()
    # 20% errors, all on misaligned rows (T != A), turning them aligned
    mis = np.flatnonzero(task != attr)
    task_pred[mis[::2][: int(0.2 * len(task))]] = attr[mis[::2][: int(0.2 * len(task))]]
    attr_pred = attr.copy()
    mis_a = np.flatnonzero(attr != task)
    attr_pred[mis_a[1::2][:200]] = task[mis_a[1::2][:200]]
    # balanced by design: the design is the training set (cross-fitted signs would read the halves' imbalance)
    ba = bias_amp_directional(attr, task, attr_pred=attr_pred, task_pred=task_pred, attr_train=attr, task_train=task)
    assert ba.a_to_t.value == 0.0 and ba.t_to_a.value == 0.0
    res = dpa(attr, task, attr_pred=attr_pred, task_pred=task_pred, attacker="tabular", n_iter=5,
              random_state=0, progress=False)
    for d in (res.a_to_t, res.t_to_a):
        assert d.value > 0.02 and d.ci[0] > 0, d


def test_relative_dpa_is_less_attacker_sensitive_than_absolute():
    """DPA App. D.1: A ~ N(3, 2), T = poly(A + α1 ε, 2), T̂ = poly(A + α2 ε, 2), 1/RMSE quality."""
    rng = np.random.default_rng(0)
    n = 600
    a = rng.normal(3, 2, n)

    def poly(x):
        return 0.5 * x**2 + x + 1

    t = poly(a + 1.0 * rng.normal(size=n))
    t_hat = poly(a + 2.0 * rng.normal(size=n))
    attackers = [
        LinearRegression(),
        MLPRegressor(hidden_layer_sizes=(4,), solver="lbfgs", max_iter=100),
        MLPRegressor(hidden_layer_sizes=(8, 8), solver="lbfgs", max_iter=100),
    ]
    rel, ab = [], []
    for att in attackers:
        d = dpa(a, t, task_pred=t_hat, attacker=att, quality="inv_rmse", n_iter=2, random_state=0,
                progress=False).a_to_t
        rel.append(d.value)
        ab.append(d.absolute)
    rel, ab = np.array(rel), np.array(ab)
    assert (rel < 0).all() and (ab < 0).all()  # T̂ is noisier: less predictable from A
    cv = lambda x: x.std() / abs(x.mean())
    assert cv(rel) < cv(ab)


# --------------------------------------------------------------------------- #
# accuracy equalisation
# --------------------------------------------------------------------------- #
def test_flip_binary_multiclass_multilabel():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 4, 1000)
    pred = y.copy()
    pred[:137] = (pred[:137] + 1) % 4
    var = _encode_variable(y, pred, "task", "task_pred", "inv_ce")
    flipped, m = _flip(var, np.random.default_rng(1))
    changed = flipped != y
    assert m == 137 and changed.sum() == 137  # round((1 - acc) N) rows, never to the same class
    assert set(np.unique(flipped[changed] - y[changed]) % 4) == {1, 2, 3}  # any other class
    yb = rng.integers(0, 2, 100)
    vb = _encode_variable(yb, 1 - yb, "t", "tp", None)
    fb, mb = _flip(vb, np.random.default_rng(2))
    assert mb == 100 and (fb == 1 - yb).all()
    Y = (rng.random((300, 3)) < 0.4).astype(int)
    P = Y.copy()
    P[:30, 0] ^= 1
    P[:90, 2] ^= 1
    vm = _encode_variable(Y, P, "t", "tp", None)
    assert vm.kind == "multi"
    fm, mm = _flip(vm, np.random.default_rng(3))
    np.testing.assert_array_equal((fm != Y).sum(axis=0), [30, 0, 90])
    assert mm == 120


def test_flips_redrawn_each_iteration():
    attr, task = associated(500)
    pred = task.copy()
    pred[:100] = 1 - pred[:100]
    it = dpa(attr, task, task_pred=pred, attacker="tabular", n_iter=4, random_state=0, progress=False).a_to_t.iterations
    assert (it["n_flipped"] == 100).all()
    assert it["psi_data"].nunique() == 4


def test_soft_predictions_use_the_hard_prediction():
    attr, task = associated(800)
    rng = np.random.default_rng(0)
    p1 = np.clip(task * 0.8 + rng.random(len(task)) * 0.3, 0.01, 0.99)
    hard = (p1 > 0.5).astype(int)
    soft_res = dpa(attr, task, task_pred=p1, attacker="tabular", **FAST)
    hard_res = dpa(attr, task, task_pred=hard, attacker="tabular", **FAST)
    pd.testing.assert_frame_equal(soft_res.a_to_t.iterations, hard_res.a_to_t.iterations)


# --------------------------------------------------------------------------- #
# properties
# --------------------------------------------------------------------------- #
@settings(max_examples=15, deadline=None)
@given(
    n=st.integers(20, 80),
    k=st.integers(2, 3),
    seed=st.integers(0, 2**16),
    quality=st.sampled_from(["inv_ce", "accuracy", "f1", "inv_rmse"]),
)
def test_bounds_and_perfect_zero(n, k, seed, quality):
    rng = np.random.default_rng(seed)
    attr, task = rng.integers(0, k, n), rng.integers(0, 2, n)
    attr_pred, task_pred = rng.integers(0, k, n), rng.integers(0, 2, n)
    res = dpa(attr, task, attr_pred=attr_pred, task_pred=task_pred, attacker="tabular", quality=quality,
              n_iter=2, random_state=seed, progress=False)
    for d in (res.a_to_t, res.t_to_a):
        assert ((d.iterations["dpa"] >= -1) & (d.iterations["dpa"] <= 1)).all()
        assert np.isfinite(d.iterations[["psi_data", "psi_model"]].to_numpy()).all()
        assert -1 <= d.ci[0] <= d.value <= d.ci[1] <= 1
    zero = dpa(attr, task, attr_pred=attr, task_pred=task, attacker="tabular", quality=quality, n_iter=2,
               random_state=seed, progress=False)
    assert zero.a_to_t.value == 0.0 and zero.t_to_a.value == 0.0


def test_inv_ce_finite_with_a_certain_attacker():
    attr, task = associated(400)
    res = dpa(attr, task, task_pred=attr, attacker=TabularAttacker(alpha=0), **FAST)
    it = res.a_to_t.iterations
    assert np.isfinite(it["psi_model"]).all() and (it["psi_model"] > 1e12).all()
    assert (it["dpa"] <= 1).all() and res.a_to_t.value == pytest.approx(1.0)


def test_deterministic_and_independent_of_n_jobs():
    rng = np.random.default_rng(0)
    attr = rng.integers(0, 3, 400)
    task = (rng.random((400, 3)) < 0.3).astype(int)
    attr_pred = np.where(rng.random(400) < 0.2, (attr + 1) % 3, attr)
    task_pred = np.where(rng.random((400, 3)) < 0.1, 1 - task, task)
    kw = dict(attr_pred=attr_pred, task_pred=task_pred, attacker="logistic", n_iter=4, random_state=7, progress=False)
    a, b = dpa(attr, task, **kw), dpa(attr, task, **kw)
    pd.testing.assert_frame_equal(a.to_frame(), b.to_frame())
    c = dpa(attr, task, n_jobs=2, **kw)
    pd.testing.assert_frame_equal(a.to_frame(), c.to_frame())
    d = dpa(attr, task, **{**kw, "random_state": 8})
    assert not a.to_frame().equals(d.to_frame())
    # a direction does not depend on whether the other one was requested
    only = dpa(attr, task, task_pred=task_pred, attacker="logistic", n_iter=4, random_state=7, progress=False)
    pd.testing.assert_frame_equal(only.a_to_t.iterations, a.a_to_t.iterations)


def test_mlp_deterministic_under_random_state():
    attr, task = associated(300)
    pred = np.where(np.arange(300) % 7 == 0, 1 - task, task)
    r1 = dpa(attr, task, task_pred=pred, attr_pred=attr, attacker="mlp", n_iter=2, random_state=3, progress=False)
    r2 = dpa(attr, task, task_pred=pred, attr_pred=attr, attacker="mlp", n_iter=2, random_state=3, progress=False)
    pd.testing.assert_frame_equal(r1.to_frame(), r2.to_frame())


def test_estimator_instance_is_cloned_never_fitted():
    attr, task = associated(300)
    est = LogisticRegression()
    res = dpa(attr, task, task_pred=attr, attacker=est, **FAST)
    assert not hasattr(est, "coef_")
    assert res.attacker == "LogisticRegression"
    # an estimator without predict_proba works with accuracy
    res = dpa(attr, task, task_pred=attr, attacker=LinearSVC(), quality="accuracy", **FAST)
    assert res.a_to_t.value > 0


def test_callable_quality():
    attr, task = associated(400)

    def brier_skill(y, p):
        return float(1 - np.mean((p[np.arange(len(y)), y] - 1) ** 2))

    res = dpa(attr, task, task_pred=attr, attacker="tabular", quality=brier_skill, **FAST)
    assert res.quality == "brier_skill" and res.a_to_t.value > 0
    with pytest.raises(ValueError, match="finite and >= 0"):
        dpa(attr, task, task_pred=attr, attacker="tabular", quality=lambda y, p: -1.0, **FAST)


# --------------------------------------------------------------------------- #
# leakage amplification
# --------------------------------------------------------------------------- #
def test_leakage_amplification():
    attr, task = associated(1500, 0.6)
    res = leakage_amplification(attr, task, task_pred=attr, attacker="tabular", **FAST)
    assert isinstance(res, LeakageResult)
    assert res.lambda_model == 1.0 and 0.3 < res.value < 0.5
    assert res.ci[1] <= 1.0
    assert list(res.iterations.columns) == ["iteration", "lambda_data", "lambda_model", "leakage", "n_flipped"]
    # soft predictions are accepted as attacker inputs
    soft = np.clip(attr * 0.9 + 0.05, 0, 1)
    res_soft = leakage_amplification(attr, task, task_pred=soft, attacker="logistic", **FAST)
    assert res_soft.value > 0.2


# --------------------------------------------------------------------------- #
# results, progress
# --------------------------------------------------------------------------- #
def test_result_objects():
    attr, task = associated(300)
    res = dpa(pd.Series(np.where(attr, "b", "a"), name="race"), task, attr_pred=np.where(attr, "b", "a"),
              task_pred=task, attacker="tabular", **FAST)
    assert isinstance(res, DPAResult)
    text = repr(res)
    assert "DPA A->T" in text and "DPA T->A" in text and "95% CI" in text
    assert list(res.a_to_t.iterations.columns) == ["iteration", "psi_data", "psi_model", "dpa", "absolute",
                                                   "n_flipped"]
    json.dumps(res.to_dict())
    json.dumps(leakage_amplification(attr, task, task_pred=task, attacker="tabular", **FAST).to_dict())
    assert set(res.to_frame()["direction"]) == {"A->T", "T->A"}
    nolevel = dpa(attr, task, task_pred=task, attacker="tabular", n_iter=1, level=None, progress=False)
    assert nolevel.a_to_t.ci is None and "CI" not in repr(nolevel)


def test_progress_bar(capsys):
    attr, task = associated(200)
    dpa(attr, task, task_pred=task, attacker="tabular", n_iter=2, progress=False)
    assert capsys.readouterr().err == ""
    dpa(attr, task, task_pred=task, attacker="tabular", n_iter=2, progress=True)
    assert "DPA" in capsys.readouterr().err
    dpa(attr, task, task_pred=task, attacker="tabular", n_iter=2)  # not a TTY under pytest: silent
    assert capsys.readouterr().err == ""


# --------------------------------------------------------------------------- #
# bad input
# --------------------------------------------------------------------------- #
def test_errors():
    attr, task = associated(100)
    cont = np.random.default_rng(0).normal(size=100)
    with pytest.raises(ValueError, match="neither"):
        dpa(attr, task)
    with pytest.raises(ValueError, match="continuous.*inv_rmse"):
        dpa(attr, cont, task_pred=cont, quality="accuracy", progress=False)
    with pytest.raises(ValueError, match="LinearSVC"):
        dpa(attr, task, task_pred=task, attacker=LinearSVC(), quality="inv_ce", progress=False)
    with pytest.raises(ValueError, match="n_iter"):
        dpa(attr, task, task_pred=task, n_iter=1, progress=False)
    with pytest.raises(ValueError, match="n_iter"):
        dpa(attr, task, task_pred=task, n_iter=0, level=None, progress=False)
    with pytest.raises(ValueError, match="attacker"):
        dpa(attr, task, task_pred=task, attacker="svm")
    with pytest.raises(TypeError, match="instance"):
        dpa(attr, task, task_pred=task, attacker=LogisticRegression)
    with pytest.raises(TypeError, match="attacker"):
        dpa(attr, task, task_pred=task, attacker=42)
    with pytest.raises(ValueError, match="quality"):
        dpa(attr, task, task_pred=task, quality="auc")
    with pytest.raises(ValueError, match="length mismatch"):
        dpa(attr, task, task_pred=task[:50], attacker="tabular", progress=False)
    with pytest.raises(ValueError, match="test_size"):
        dpa(attr, task, task_pred=task, test_size=1.5)
    with pytest.raises(TypeError, match="random_state"):
        dpa(attr, task, task_pred=task, random_state="x")
    with pytest.raises(ValueError, match="task_pred"):
        dpa(attr, task, task_pred=np.full(100, 7), progress=False)
    with pytest.raises(ValueError, match="tabular"):
        dpa(cont, task, task_pred=task, attacker="tabular", quality="inv_rmse", progress=False)
    with pytest.raises(ValueError, match="task_pred"):
        leakage_amplification(attr, task, task_pred=None)
    # a continuous target with inv_rmse is fine
    r = dpa(attr, cont, task_pred=cont + 0.1, attacker="logistic", quality="inv_rmse", **FAST)
    assert r.equalized is False and r.a_to_t.model_accuracy is None


# --------------------------------------------------------------------------- #
# protocol="train_test" and fold (Wang et al. 2019), the split artifact
# --------------------------------------------------------------------------- #
def balanced_tasks(n_tasks=10, per_cell=6):
    """Exactly balanced single-label data: every (A, T) cell has ``per_cell`` rows."""
    attr = np.repeat(np.arange(2), n_tasks * per_cell)
    task = np.tile(np.repeat(np.arange(n_tasks), per_cell), 2)
    return attr, task


def test_train_test_is_at_chance_on_balanced_data_where_split_is_below():
    attr, task = balanced_tasks()
    attr_tr, task_tr = balanced_tasks()
    kw = dict(attacker="tabular", n_iter=20, random_state=0, progress=False)
    # leakage: lambda_D, the accuracy of predicting A from T (chance 1/2)
    split = leakage_amplification(attr, task, task_pred=task, **kw)
    wang = leakage_amplification(attr, task, task_pred=task, protocol="train_test", attr_train=attr_tr,
                                 task_train=task_tr, task_pred_train=task_tr, **kw)
    # every task is 50/50 in the training set: the attacker's probabilities are exactly 1/2, its
    # prediction (the first class on the tie) right on exactly half the balanced test rows
    np.testing.assert_array_equal(wang.iterations["lambda_data"], 0.5)
    assert wang.protocol == "train_test" and split.protocol == "split"
    # the artifact: held-out rows of the same balanced data lean the other way, below chance
    assert split.lambda_data < 0.42
    assert (split.iterations["lambda_data"] < 0.5).mean() >= 0.9
    # DPA A->T: Psi_D = 1/cross-entropy of predicting T from A; chance = 1/ln(10) for 10 equal tasks
    chance = 1 / np.log(10)
    split = dpa(attr, task, task_pred=task, **kw)
    wang = dpa(attr, task, task_pred=task, protocol="train_test", attr_train=attr_tr, task_train=task_tr,
               task_pred_train=task_tr, **kw)
    np.testing.assert_allclose(wang.a_to_t.iterations["psi_data"], chance, rtol=1e-12)
    assert split.a_to_t.psi_data < 0.97 * chance and (split.a_to_t.iterations["psi_data"] < chance).all()
    # perfect predictions: no amplification under either protocol
    assert wang.a_to_t.value == 0.0 and split.a_to_t.value == 0.0


def test_imsitu_balanced_leakage_split_artifact(shared_data):
    """Balanced imSitu (alpha = 1): lambda_D 41% under the split, 50% under Wang et al.'s protocol."""
    folder = shared_data / "wang2019_balanced" / "imsitu"
    ids = np.load(folder / "balanced_subset_ids.npz")
    train = pd.read_csv(folder / "train.csv").set_index("row").loc[ids["train_ratio_1"]]
    test = pd.read_csv(folder / "test.csv").set_index("row").loc[ids["test_ratio_1"]]
    kw = dict(attacker="tabular", n_iter=5, random_state=0, progress=False)
    split = leakage_amplification(train["gender"], train["verb_id"], task_pred=train["verb_id"], **kw)
    assert split.lambda_data == pytest.approx(0.41, abs=0.01)
    wang = leakage_amplification(test["gender"], test["verb_id"], task_pred=test["verb_id"], protocol="train_test",
                                 attr_train=train["gender"], task_train=train["verb_id"],
                                 task_pred_train=train["verb_id"], **kw)
    assert wang.lambda_data == 0.5


def test_train_test_fits_on_training_rows_and_equalises_each_set():
    """Hand-checkable: a training set where T = A, a test set where T = 1 - A."""
    attr_tr = np.repeat([0, 1], 50)
    attr = np.repeat([0, 1], 20)
    # training: T = A exactly; test: T = 1 - A. An attacker fitted on training predicts A = T,
    # wrong on every test row: lambda_D = 0 (folded: 1)
    kw = dict(attacker="tabular", n_iter=2, random_state=0, progress=False, protocol="train_test",
              attr_train=attr_tr, task_train=attr_tr, task_pred_train=attr_tr)
    res = leakage_amplification(attr, 1 - attr, task_pred=1 - attr, **kw)
    assert res.lambda_data == 0.0 and res.lambda_model == 0.0
    folded = leakage_amplification(attr, 1 - attr, task_pred=1 - attr, fold=True, quality="accuracy", **kw)
    assert folded.lambda_data == 1.0 and folded.fold
    # equalisation per set: the model errs on 7 training rows and 3 test rows -> 10 flips
    pred_tr = attr_tr.copy()
    pred_tr[:7] = 1 - pred_tr[:7]
    pred = 1 - attr
    pred[:3] = attr[:3]
    kw.update(task_pred_train=pred_tr)
    res = leakage_amplification(attr, 1 - attr, task_pred=pred, **kw)
    assert (res.iterations["n_flipped"] == 10).all()
    assert res.model_accuracy == pytest.approx(37 / 40)  # on the test rows
    var = _encode_variable(1 - attr, pred, "task", "task_pred", None, attr_tr, pred_tr)
    flipped, m = _flip(var, np.random.default_rng(0))
    assert m == 10 and (flipped[:100] != attr_tr).sum() == 7 and (flipped[100:] != 1 - attr).sum() == 3


def test_train_test_dpa_both_directions_and_split_unchanged():
    attr, task = associated(600, 0.8, seed=1)
    attr_tr, task_tr = associated(900, 0.8, seed=2)
    rng = np.random.default_rng(3)
    noisy = lambda y: np.where(rng.random(len(y)) < 0.1, 1 - y, y)
    preds = dict(attr_pred=noisy(attr), task_pred=noisy(task))
    res = dpa(attr, task, **preds, protocol="train_test", attr_train=attr_tr, task_train=task_tr,
              attr_pred_train=noisy(attr_tr), task_pred_train=noisy(task_tr), attacker="tabular", **FAST)
    assert res.protocol == "train_test" and len(res.a_to_t.iterations) == 3
    assert -1 <= res.a_to_t.value <= 1 and -1 <= res.t_to_a.value <= 1
    # the default protocol does not change its numbers: the same call as before gives the same values
    a = dpa(attr, task, **preds, attacker="tabular", **FAST)
    b = dpa(attr, task, **preds, attacker="tabular", protocol="split", **FAST)
    pd.testing.assert_frame_equal(a.to_frame(), b.to_frame())


def test_protocol_errors():
    attr, task = balanced()
    with pytest.raises(ValueError, match="protocol must be one of"):
        dpa(attr, task, task_pred=task, protocol="wang", **FAST)
    with pytest.raises(ValueError, match="needs the training ground truth"):
        dpa(attr, task, task_pred=task, protocol="train_test", **FAST)
    with pytest.raises(ValueError, match="give task_pred_train with task_pred"):
        dpa(attr, task, task_pred=task, protocol="train_test", attr_train=attr, task_train=task, **FAST)
    with pytest.raises(ValueError, match="attr_pred_train given without attr_pred"):
        dpa(attr, task, task_pred=task, protocol="train_test", attr_train=attr, task_train=task,
            task_pred_train=task, attr_pred_train=attr, **FAST)
    with pytest.raises(ValueError, match="protocol='split'"):
        leakage_amplification(attr, task, task_pred=task, attr_train=attr, task_train=task, **FAST)
    with pytest.raises(ValueError, match="length mismatch: attr_train has 1000, task_train has 4"):
        leakage_amplification(attr, task, task_pred=task, protocol="train_test", attr_train=attr,
                              task_train=task[:4], task_pred_train=task[:4], **FAST)
    with pytest.raises(ValueError, match="needs quality='accuracy'"):
        leakage_amplification(attr, task, task_pred=task, fold=True, quality="f1", **FAST)
    with pytest.raises(ValueError, match="binary targets"):
        leakage_amplification(np.arange(1000) % 3, task, task_pred=task, fold=True, **FAST)
    with pytest.raises(TypeError, match="fold must be"):
        leakage_amplification(attr, task, task_pred=task, fold="yes", **FAST)


# reliability (issue 13)
# --------------------------------------------------------------------------- #
def test_tabular_attacker_refuses_probability_predictions():
    rng = np.random.default_rng(0)
    attr = rng.integers(0, 2, 200)
    task = (rng.random(200) < 0.4 + 0.2 * attr).astype(int)
    soft = np.clip(task * 0.7 + rng.random(200) * 0.3, 0, 1)
    with pytest.raises(ValueError, match="task_pred holds probabilities"):
        leakage_amplification(attr, task, task_pred=soft, attacker="tabular", **FAST)
    # "auto" takes the MLP for soft input and says so
    res = leakage_amplification(attr, task, task_pred=soft, attacker="auto", n_iter=2, random_state=0,
                                progress=False)
    assert res.attacker != "tabular" and "soft" in res.attacker_reason


@pytest.mark.parametrize("seed, kind", [(1.5, TypeError), (-1, ValueError), ("seed", TypeError)])
def test_seeds_are_checked_by_the_shared_checker(seed, kind):
    attr, task = associated(200)
    with pytest.raises(kind, match="random_state"):
        dpa(attr, task, task_pred=task, attacker="tabular", n_iter=2, random_state=seed, progress=False)


def test_tabular_attacker_validates_its_inputs():
    with pytest.raises(ValueError, match="X is empty"):
        TabularAttacker().fit(np.zeros((0, 1)), np.zeros(0))
    fitted = TabularAttacker().fit(np.array([[0.0], [1.0], [0.0], [1.0]]), np.array([0, 1, 0, 1]))
    with pytest.raises(ValueError, match="X contains NaN"):
        fitted.predict_proba([[np.nan]])
    with pytest.raises(ValueError, match="y contains NaN"):
        TabularAttacker().fit([[0], [1]], [0.0, np.nan])
    with pytest.raises(ValueError, match="X must be 1-D or 2-D"):
        TabularAttacker().fit(np.zeros((2, 1, 1)), [0, 1])
