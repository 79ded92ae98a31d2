"""Multi-attribute bias amplification (Zhao, Andrews & Xiang 2023): Multi_MALS and Multi→.

A hand-computed example, a naive per-combination reference, the single-attribute
reduction to BiasAmp_MALS / BiasAmp→, properties (perfect predictions, row order,
attribute relabelling), input errors, and a run on the real COCO gender/object labels.
"""

from __future__ import annotations

import itertools
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from biasamp import UndefinedPairWarning, bias_amp_directional, bias_amp_mals
from biasamp.multiattribute import MultiAttributeCounts, multi_bias_amp, multi_from_counts

# hand-computed examples are tiny by construction: their groups are small, and each family says so with a
# SmallGroupWarning (tested once per family in tests/test_common.py); here it would only be noise
pytestmark = pytest.mark.filterwarnings("ignore::biasamp.SmallGroupWarning")

PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------- #
# a naive reference, written from the formulas (one combination at a time)
# --------------------------------------------------------------------------- #
def contains(X, m):
    return X[:, list(m)].all(axis=1) if len(m) else np.ones(len(X), dtype=bool)


def reference_combinations(X_tr, X_te, mode, min_size=1, max_size=None, min_support=1):
    """The kept combinations by brute force (all subsets of the attribute set)."""
    n_attrs = X_tr.shape[1]
    max_size = n_attrs if max_size is None else max_size
    if mode == "observed":
        cands = {tuple(np.flatnonzero(row)) for row in X_tr}
    else:
        cands = {c for k in range(1, n_attrs + 1) for c in itertools.combinations(range(n_attrs), k)}
    return sorted(
        (m for m in cands
         if min_size <= len(m) <= max_size
         and contains(X_tr, m).sum() >= min_support and contains(X_te, m).sum() >= 1),
        key=lambda m: (len(m), m),
    )


def reference(g_tr, X_tr, g, X, g_hat, X_hat, combos, n_groups):
    """Multi_MALS, G→M, M→G as (value, raw, variance) triples, from boolean masks."""
    mals, gm, mg = [], [], []
    for m in combos:
        c_tr, c, c_hat = contains(X_tr, m), contains(X, m), contains(X_hat, m)
        for k in range(n_groups):
            b_train = np.mean(g_tr[c_tr] == k)
            b_pred = np.mean(g_hat[c_hat] == k) if c_hat.any() else np.nan
            ind = b_train > 1 / n_groups
            if ind and np.isnan(b_pred):
                pass  # undefined term
            else:
                mals.append(b_pred - b_train if ind else 0.0)
            n = len(g_tr)
            y = np.sign(n * np.sum(c_tr & (g_tr == k)) - np.sum(g_tr == k) * c_tr.sum())
            if (g == k).any():
                gm.append((c_hat[g == k].mean() - c[g == k].mean(), y))
            mg.append((np.mean(g_hat[c] == k) - np.mean(g[c] == k), y))
    d = np.array(mals)
    out = {"mals": (np.abs(d).sum() / len(combos), d.sum() / len(combos), d.var())}
    for name, pairs in (("g_to_m", gm), ("m_to_g", mg)):
        delta = np.array([p[0] for p in pairs])
        y = np.array([p[1] for p in pairs])
        out[name] = (np.abs(delta).mean(), (y * delta).mean(), delta.var())
    return out


def random_case(seed, n_train, n_test, n_attrs, n_groups, density=0.4, noise=0.2):
    """Random train/test labels and noisy predictions; every group is in test, one set is shared."""
    rng = np.random.default_rng(seed)
    X_tr = (rng.random((n_train, n_attrs)) < density).astype(np.int8)
    X = (rng.random((n_test, n_attrs)) < density).astype(np.int8)
    X_tr[0] = X[0] = 1  # at least one combination is in train and test
    g_tr = rng.integers(0, n_groups, n_train)
    g = rng.integers(0, n_groups, n_test)
    g_tr[:n_groups] = g[:n_groups] = np.arange(n_groups)
    X_hat = np.where(rng.random(X.shape) < noise, 1 - X, X).astype(np.int8)
    g_hat = np.where(rng.random(n_test) < noise, rng.integers(0, n_groups, n_test), g)
    return g_tr, X_tr, g, X, g_hat, X_hat


def run(g_tr, X_tr, g, X, g_hat, X_hat, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        return multi_bias_amp(g, X, attr_pred=g_hat, task_pred=X_hat, attr_train=g_tr, task_train=X_tr, **kw)


def row(table, group, combination):
    """The one row of a per-pair table for (group, combination)."""
    hit = table[(table["attr"] == group) & table["combination"].map(lambda c: c == combination)]
    assert len(hit) == 1
    return hit.iloc[0]


def triples(res):
    return {k: (getattr(res, k).value, getattr(res, k).raw, getattr(res, k).variance) for k in ("mals", "g_to_m", "m_to_g")}


# --------------------------------------------------------------------------- #
# hand-computed example (10 training and 8 test instances)
# --------------------------------------------------------------------------- #
def hand_example():
    """Attributes a, b; groups 0, 1.

    Train: group 0 has {a,b}, {a,b}, {a}, {b}, {}; group 1 has {a,b}, {a}, {a}, {b}, {b}.
    So #a = 3/3, #b = 3/3 (balanced, y = 0) and #{a,b} = 2/1 (y = +1 for group 0, −1 for 1).
    Test (truth -> prediction): 0{a,b}->0{a,b}, 0{a}->0{a,b}, 0{b}->1{b}, 0{}->0{},
    1{a,b}->0{a}, 1{a}->1{a}, 1{b}->0{a,b}, 1{a,b}->1{a,b}.
    """
    cols = ["a", "b"]
    X_tr = pd.DataFrame([[1, 1], [1, 1], [1, 0], [0, 1], [0, 0], [1, 1], [1, 0], [1, 0], [0, 1], [0, 1]], columns=cols)
    g_tr = np.repeat([0, 1], 5)
    X = pd.DataFrame([[1, 1], [1, 0], [0, 1], [0, 0], [1, 1], [1, 0], [0, 1], [1, 1]], columns=cols)
    g = np.repeat([0, 1], 4)
    X_hat = pd.DataFrame([[1, 1], [1, 1], [0, 1], [0, 0], [1, 0], [1, 0], [1, 1], [1, 1]], columns=cols)
    g_hat = np.array([0, 0, 1, 0, 0, 1, 0, 1])
    return g_tr, X_tr, g, X, g_hat, X_hat


@pytest.mark.parametrize("mode", ["observed", "all"])
def test_hand_computed_example(mode):
    g_tr, X_tr, g, X, g_hat, X_hat = hand_example()
    res = multi_bias_amp(g, X, attr_pred=g_hat, task_pred=X_hat, attr_train=g_tr, task_train=X_tr,
                         combinations=mode)
    assert res.combinations == (("a",), ("b",), ("a", "b"))
    assert res.train_source == "train"
    # Multi_MALS: only bias_train({a,b}, 0) = 2/3 > 1/2; bias_pred = #(ĝ=0, {a,b} ⊆ Ŝ)/#({a,b} ⊆ Ŝ) = 3/4.
    # Δ = 3/4 − 2/3 = 1/12, the five other Δ are 0: value = raw = (1/12)/3, variance = 5/5184.
    assert res.mals.value == pytest.approx(1 / 36)
    assert res.mals.raw == pytest.approx(1 / 36)
    assert res.mals.variance == pytest.approx(5 / 5184)
    r = row(res.mals.table, 0, ("a", "b"))
    assert (r.bias_train, r.bias_pred, r.n_train, r.n_pred, r.n_pred_comb) == (
        pytest.approx(2 / 3), 0.75, 2, 3, 4)
    # G→M: Δ = P(m̂|g) − P(m|g): group 0: a 0, b +1/4, ab +1/4; group 1: a +1/4, b −1/4, ab 0.
    # y = 0 for a and b, ±1 for ab: raw = (1·1/4 − 1·0)/6.
    assert res.g_to_m.value == pytest.approx(1 / 6)
    assert res.g_to_m.raw == pytest.approx(1 / 24)
    assert res.g_to_m.variance == pytest.approx(5 / 144)
    # M→G: Δ = P(ĝ|m) − P(g|m): a +1/5/−1/5, b +1/5/−1/5, ab +1/3/−1/3 (groups 0/1).
    assert res.m_to_g.value == pytest.approx(11 / 45)
    assert res.m_to_g.raw == pytest.approx(1 / 9)
    assert res.m_to_g.variance == pytest.approx(43 / 675)
    y = res.m_to_g.table.set_index(["attr", "combination"])["y"]
    assert y.to_dict() == {(0, ("a",)): 0, (0, ("b",)): 0, (0, ("a", "b")): 1,
                           (1, ("a",)): 0, (1, ("b",)): 0, (1, ("a", "b")): -1}
    # the top contributors
    assert res.m_to_g.top(2)["combination"].tolist() == [("a", "b"), ("a", "b")]
    assert res.mals.top(1)["combination"].tolist() == [("a", "b")]
    assert res.mals.n_undefined == res.g_to_m.n_undefined == res.m_to_g.n_undefined == 0


def test_hand_example_matches_reference_and_fraction_arithmetic():
    g_tr, X_tr, g, X, g_hat, X_hat = hand_example()
    res = multi_bias_amp(g, X, attr_pred=g_hat, task_pred=X_hat, attr_train=g_tr, task_train=X_tr)
    ref = reference(g_tr, X_tr.to_numpy(), g, X.to_numpy(), g_hat, X_hat.to_numpy(), [(0,), (1,), (0, 1)], 2)
    for key, got in triples(res).items():
        np.testing.assert_allclose(got, ref[key], atol=1e-12)
    # Δ of the MALS table are exact ratios of counts
    t = res.mals.table
    frac = [Fraction(int(p), int(c)) - Fraction(int(q), int(d))
            for p, c, q, d in zip(t.n_pred, t.n_pred_comb, t.n_train, t.n_train_comb)]
    np.testing.assert_allclose(t["delta"], [float(f) for f in frac], atol=1e-15)


# --------------------------------------------------------------------------- #
# against the naive reference; the miner against brute force
# --------------------------------------------------------------------------- #
@PROPERTY
@given(seed=st.integers(0, 2**32 - 1), n_attrs=st.integers(1, 6), n_groups=st.integers(2, 3),
       mode=st.sampled_from(["observed", "all"]), min_size=st.integers(1, 2), extra=st.integers(0, 3),
       min_support=st.integers(1, 3))
def test_matches_reference(seed, n_attrs, n_groups, mode, min_size, extra, min_support):
    case = random_case(seed, 30, 25, n_attrs, n_groups)
    g_tr, X_tr, g, X, g_hat, X_hat = case
    max_size = min(n_attrs, min_size + extra)
    if min_size > n_attrs:
        return
    combos = reference_combinations(X_tr, X, mode, min_size, max_size, min_support)
    if not combos:
        with pytest.raises(ValueError):  # noqa: PT011 - no combination; the wording depends on the mode
            run(*case, combinations=mode, min_size=min_size, max_size=max_size, min_support=min_support)
        return
    res = run(*case, combinations=mode, min_size=min_size, max_size=max_size, min_support=min_support)
    assert res.combinations == tuple(combos)
    ref = reference(g_tr, X_tr, g, X, g_hat, X_hat, combos, n_groups)
    for key, got in triples(res).items():
        np.testing.assert_allclose(got, ref[key], atol=1e-12, err_msg=key)


def test_all_mode_mines_frequent_sets_without_enumerating():
    # 40 attributes, dense rows: 2^40 subsets, but only few are frequent
    rng = np.random.default_rng(0)
    X = (rng.random((400, 40)) < 0.08).astype(np.int8)
    X[:60, :4] = 1  # one frequent 4-set
    g = rng.integers(0, 2, 400)
    res = multi_bias_amp(g, X, task_pred=X, combinations="all", min_support=30)
    assert (0, 1, 2, 3) in res.combinations
    for m in res.combinations:
        assert contains(X, m).sum() >= 30
    # nothing frequent is missed: check size 2 by brute force
    pairs = {m for m in itertools.combinations(range(40), 2) if contains(X, m).sum() >= 30}
    assert pairs == {m for m in res.combinations if len(m) == 2}
    assert res.selection["n_candidates"] == len(res.combinations)


# --------------------------------------------------------------------------- #
# single-attribute reduction (docs/definitions.md#def-multi, a required property)
# --------------------------------------------------------------------------- #
@PROPERTY
@given(seed=st.integers(0, 2**32 - 1), n_attrs=st.integers(1, 5), n_groups=st.integers(2, 3))
def test_reduces_to_single_attribute_metrics_single_label(seed, n_attrs, n_groups):
    rng = np.random.default_rng(seed)
    n_tr, n_te = 40, 30
    t_tr, t = rng.integers(0, n_attrs, n_tr), rng.integers(0, n_attrs, n_te)
    a_tr, a = rng.integers(0, n_groups, n_tr), rng.integers(0, n_groups, n_te)
    t_tr[:n_attrs] = t[:n_attrs] = np.arange(n_attrs)  # every attribute in train and test
    a_tr[-n_groups:] = a[-n_groups:] = np.arange(n_groups)  # every group in train and test
    t_hat, a_hat = rng.integers(0, n_attrs, n_te), rng.integers(0, n_groups, n_te)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        # every class is an attribute (two classes: both, the one-hot reading)
        multi = multi_bias_amp(a, t, attr_pred=a_hat, task_pred=t_hat, attr_train=a_tr, task_train=t_tr,
                               binary_task="both")
        single = bias_amp_directional(a, t, attr_pred=a_hat, task_pred=t_hat, attr_train=a_tr, task_train=t_tr,
                                      binary_task="both")
        mals = bias_amp_mals(attr_pred=a_hat, task_pred=t_hat, attr_train=a_tr, task_train=t_tr, binary_task="both")
    assert multi.combinations == tuple((k,) for k in range(n_attrs))
    assert multi.g_to_m.raw == pytest.approx(single.a_to_t.value, abs=1e-12)
    assert multi.m_to_g.raw == pytest.approx(single.t_to_a.value, abs=1e-12)
    assert multi.mals.raw == pytest.approx(mals.value, abs=1e-12)
    assert multi.mals.n_undefined == mals.n_undefined


@PROPERTY
@given(seed=st.integers(0, 2**32 - 1), n_attrs=st.integers(1, 6), n_groups=st.integers(2, 3))
def test_reduces_to_single_attribute_metrics_multi_label(seed, n_attrs, n_groups):
    g_tr, X_tr, g, X, g_hat, X_hat = random_case(seed, 40, 30, n_attrs, n_groups)
    multi = run(g_tr, X_tr, g, X, g_hat, X_hat, combinations="all", max_size=1)
    kept = [m[0] for m in multi.combinations]
    cols = np.array(kept)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        single = bias_amp_directional(g, X[:, cols], attr_pred=g_hat, task_pred=X_hat[:, cols],
                                      attr_train=g_tr, task_train=X_tr[:, cols])
        mals = bias_amp_mals(attr_pred=g_hat, task_pred=X_hat[:, cols], attr_train=g_tr, task_train=X_tr[:, cols])
    assert multi.g_to_m.raw == pytest.approx(single.a_to_t.value, abs=1e-12)
    assert multi.m_to_g.raw == pytest.approx(single.t_to_a.value, abs=1e-12)
    assert multi.mals.raw == pytest.approx(mals.value, abs=1e-12)


# --------------------------------------------------------------------------- #
# properties
# --------------------------------------------------------------------------- #
@PROPERTY
@given(seed=st.integers(0, 2**32 - 1), n_attrs=st.integers(1, 6), n_groups=st.integers(2, 3),
       mode=st.sampled_from(["observed", "all"]))
def test_perfect_predictions_give_zero(seed, n_attrs, n_groups, mode):
    g_tr, X_tr, g, X, _, _ = random_case(seed, 30, 25, n_attrs, n_groups)
    # directional metrics: 0 whatever the training set
    res = run(g_tr, X_tr, g, X, g, X, combinations=mode)
    assert res.g_to_m.value == 0 and res.g_to_m.raw == 0 and res.g_to_m.variance == 0
    assert res.m_to_g.value == 0 and res.m_to_g.raw == 0 and res.m_to_g.variance == 0
    # Multi_MALS compares with the training bias: 0 when train is the test set
    res = multi_bias_amp(g, X, attr_pred=g, task_pred=X, combinations=mode)
    assert res.train_source == "test"
    assert (res.mals.value, res.mals.raw, res.mals.variance) == (0, 0, 0)
    assert res.g_to_m.value == 0 and res.m_to_g.value == 0


@PROPERTY
@given(seed=st.integers(0, 2**32 - 1), n_attrs=st.integers(1, 6), n_groups=st.integers(2, 3),
       mode=st.sampled_from(["observed", "all"]))
def test_invariant_to_row_order(seed, n_attrs, n_groups, mode):
    g_tr, X_tr, g, X, g_hat, X_hat = random_case(seed, 30, 25, n_attrs, n_groups)
    rng = np.random.default_rng(seed + 1)
    p_tr, p = rng.permutation(len(g_tr)), rng.permutation(len(g))
    a = run(g_tr, X_tr, g, X, g_hat, X_hat, combinations=mode)
    b = run(g_tr[p_tr], X_tr[p_tr], g[p], X[p], g_hat[p], X_hat[p], combinations=mode)
    assert a.combinations == b.combinations
    for key, got in triples(a).items():
        np.testing.assert_allclose(triples(b)[key], got, atol=1e-12, err_msg=key)
    pd.testing.assert_frame_equal(a.to_frame(), b.to_frame())


@PROPERTY
@given(seed=st.integers(0, 2**32 - 1), n_attrs=st.integers(1, 6), n_groups=st.integers(2, 3),
       mode=st.sampled_from(["observed", "all"]))
def test_invariant_to_attribute_relabelling(seed, n_attrs, n_groups, mode):
    g_tr, X_tr, g, X, g_hat, X_hat = random_case(seed, 30, 25, n_attrs, n_groups)
    perm = np.random.default_rng(seed + 2).permutation(n_attrs)
    names = [f"attr{k}" for k in range(n_attrs)]
    new_names = [names[k] for k in perm]

    def frame(x, cols):
        return pd.DataFrame(x, columns=cols)

    a = run(g_tr, frame(X_tr, names), g, frame(X, names), g_hat, frame(X_hat, names), combinations=mode)
    b = run(g_tr, frame(X_tr[:, perm], new_names), g, frame(X[:, perm], new_names), g_hat,
            frame(X_hat[:, perm], new_names), combinations=mode)
    assert {frozenset(m) for m in a.combinations} == {frozenset(m) for m in b.combinations}
    for key, got in triples(a).items():
        np.testing.assert_allclose(triples(b)[key], got, atol=1e-12, err_msg=key)
    # the per-pair tables agree row by row once combinations are keyed as sets
    for key in ("mals", "g_to_m", "m_to_g"):
        ta, tb = (getattr(r, key).table.assign(combination=lambda t: t.combination.map(lambda c: tuple(sorted(c))))
                  .set_index(["attr", "combination"]).sort_index() for r in (a, b))
        tb = tb.loc[ta.index]
        pd.testing.assert_frame_equal(ta, tb)


def test_input_kinds_agree():
    g_tr, X_tr, g, X, g_hat, X_hat = random_case(3, 30, 25, 4, 2)
    base = triples(run(g_tr, X_tr, g, X, g_hat, X_hat))
    one_hot = np.eye(2, dtype=int)
    other = triples(run(one_hot[g_tr], X_tr.astype(bool), one_hot[g], pd.DataFrame(X), one_hot[g_hat].tolist(),
                        X_hat.tolist()))
    for key in base:
        np.testing.assert_allclose(other[key], base[key])
    other = triples(run(pd.Series(g_tr), X_tr, pd.Series(g), X, list(g_hat), X_hat))
    for key in base:
        np.testing.assert_allclose(other[key], base[key])
    named = triples(run(np.array(["m", "w"])[g_tr], X_tr, np.array(["m", "w"])[g], X,
                        np.array(["m", "w"])[g_hat], X_hat))
    for key in base:
        np.testing.assert_allclose(named[key], base[key])


# --------------------------------------------------------------------------- #
# undefined pairs, results, counts
# --------------------------------------------------------------------------- #
def test_group_without_test_members_is_undefined_for_g_to_m():
    g_tr, X_tr, g, X, g_hat, X_hat = hand_example()
    g_tr = g_tr.copy()
    g_tr[-1] = 2  # group 2 exists only in training
    with pytest.warns(UndefinedPairWarning, match="Multi_G->M"):
        res = multi_bias_amp(g, X, attr_pred=g_hat, task_pred=X_hat, attr_train=g_tr, task_train=X_tr)
    t = res.g_to_m.table
    assert t.loc[t.attr == 2, "undefined"].all() and not t.loc[t.attr != 2, "undefined"].any()
    assert res.g_to_m.n_undefined == len(res.combinations)
    assert res.g_to_m.n_pairs == 2 * len(res.combinations)
    assert np.isfinite(res.g_to_m.value)


def test_never_predicted_combination_is_undefined_for_mals():
    g_tr, X_tr, g, X, g_hat, X_hat = hand_example()
    X_hat = X_hat.assign(b=0)  # {a,b} (indicator 1 for group 0) is never predicted
    with pytest.warns(UndefinedPairWarning, match="Multi_MALS"):
        res = multi_bias_amp(g, X, attr_pred=g_hat, task_pred=X_hat, attr_train=g_tr, task_train=X_tr)
    t = res.mals.table
    assert row(t, 0, ("a", "b")).undefined and not row(t, 1, ("a", "b")).undefined
    assert res.mals.n_undefined == 1
    assert res.mals.n_combinations == 3  # |M| unchanged
    assert res.mals.table["contribution"].isna().sum() == 1


def test_missing_predictions_give_none_and_results_serialise():
    g_tr, X_tr, g, X, g_hat, X_hat = hand_example()
    only_attrs = multi_bias_amp(g, X, task_pred=X_hat, attr_train=g_tr, task_train=X_tr)
    assert only_attrs.mals is None and only_attrs.m_to_g is None
    assert only_attrs.g_to_m.value == pytest.approx(1 / 6)
    only_group = multi_bias_amp(g, X, attr_pred=g_hat, attr_train=g_tr, task_train=X_tr)
    assert only_group.mals is None and only_group.g_to_m is None
    assert only_group.m_to_g.value == pytest.approx(11 / 45)
    full = multi_bias_amp(g, X, attr_pred=g_hat, task_pred=X_hat, attr_train=g_tr, task_train=X_tr)
    d = full.to_dict()
    assert d["mals"]["value"] == pytest.approx(1 / 36)
    assert d["combinations"] == [["a"], ["b"], ["a", "b"]]
    assert len(d["g_to_m"]["table"]) == 6
    text = repr(full)
    assert "Multi_MALS = +0.0278" in text and "Multi_M->G" in text and "observed" in text
    assert set(full.to_frame()["metric"]) == {"Multi_MALS", "Multi_G->M", "Multi_M->G"}
    sizes = full.m_to_g.by_size()
    assert sizes.loc[2, "value"] == pytest.approx(1 / 3)
    assert sizes.loc[1, "value"] == pytest.approx(1 / 5)


def test_counts_add_and_recompute():
    g_tr, X_tr, g, X, g_hat, X_hat = hand_example()
    res = multi_bias_amp(g, X, attr_pred=g_hat, task_pred=X_hat, attr_train=g_tr, task_train=X_tr)
    c = res.counts
    assert isinstance(c, MultiAttributeCounts)
    assert c.train_joint.tolist() == [[3, 3, 2], [3, 3, 1]]
    again = multi_from_counts(c)
    assert triples(again) == triples(res)
    doubled = multi_from_counts(c + c)  # every count doubled: same rates, same metrics
    for key, got in triples(doubled).items():
        np.testing.assert_allclose(got, triples(res)[key], atol=1e-15)
    assert "3 combinations" in repr(c)


# --------------------------------------------------------------------------- #
# bad input
# --------------------------------------------------------------------------- #
def test_multi_from_counts_errors_name_the_argument():
    import dataclasses

    g_tr, X_tr, g, X, g_hat, X_hat = hand_example()
    c = multi_bias_amp(g, X, attr_pred=g_hat, task_pred=X_hat, attr_train=g_tr, task_train=X_tr).counts
    with pytest.raises(TypeError, match="counts must be a MultiAttributeCounts"):
        multi_from_counts(c.train_joint)
    joints = ("train_joint", "test_joint", "joint_g_mhat", "joint_ghat_m", "joint_ghat_mhat")
    empty = dataclasses.replace(c, combinations=(), **{f: getattr(c, f)[:, :0] for f in joints})
    with pytest.raises(ValueError, match=r"^counts holds no combination"):
        multi_from_counts(empty)
    train = c.train_joint.copy()
    train[:, 2] = 0  # the combination ('a', 'b') never in the training ground truth
    with pytest.raises(ValueError, match=r"^counts\.train_joint: .*training ground truth.*\('a', 'b'\)"):
        multi_from_counts(dataclasses.replace(c, train_joint=train))
    test = c.test_joint.copy()
    test[:, 0] = 0
    with pytest.raises(ValueError, match=r"^counts\.test_joint: .*test ground truth.*\('a',\)"):
        multi_from_counts(dataclasses.replace(c, test_joint=test))


def test_group_not_one_hot_names_rows():
    g_tr, X_tr, g, X, g_hat, X_hat = hand_example()
    bad = np.eye(2, dtype=int)[g]
    bad[2] = 0
    bad[5] = 1
    with pytest.raises(ValueError, match=r"attr must be one-hot.*rows 2, 5.*0 or 2 classes"):
        multi_bias_amp(bad, X, attr_pred=g_hat, task_pred=X_hat)
    bad_pred = np.eye(2, dtype=int)[g_hat]
    bad_pred[7] = 0
    with pytest.raises(ValueError, match=r"attr_pred must be one-hot.*rows 7"):
        multi_bias_amp(g, X, attr_pred=bad_pred, task_pred=X_hat)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"min_size": 3}, r"observed.*no training instance has an attribute set of size within \[min_size=3"),
        ({"combinations": "all", "min_size": 3}, r"'all'.*no combination of size within \[min_size=3"),
        ({"min_support": 11}, r"min_support=11 removed all 3 candidate"),
        ({"combinations": "all", "min_support": 11}, r"contained in at least min_support=11"),
        ({"max_size": 1, "min_size": 2}, r"max_size \(1\) must be >= min_size \(2\)"),
        ({"combinations": "some"}, r"combinations must be one of"),
        ({"min_size": 0}, r"min_size must be an integer >= 1, got 0"),
    ],
)
def test_bad_options(kwargs, match):
    g_tr, X_tr, g, X, g_hat, X_hat = hand_example()
    with pytest.raises(ValueError, match=match):
        multi_bias_amp(g, X, attr_pred=g_hat, task_pred=X_hat, attr_train=g_tr, task_train=X_tr, **kwargs)


def test_no_combination_in_test_names_the_filter():
    g_tr, X_tr, g, X, g_hat, X_hat = hand_example()
    with pytest.raises(ValueError, match=r"none of the 3 candidate combinations.*test ground truth"):
        multi_bias_amp(g, X * 0, attr_pred=g_hat, task_pred=X_hat, attr_train=g_tr, task_train=X_tr)


def test_other_bad_input():
    g_tr, X_tr, g, X, g_hat, X_hat = hand_example()
    with pytest.raises(TypeError, match=r"max_size must be None or an integer >= 1, got 2.5"):
        multi_bias_amp(g, X, task_pred=X_hat, max_size=2.5)
    with pytest.raises(ValueError, match="both attr_train and task_train"):
        multi_bias_amp(g, X, task_pred=X_hat, attr_train=g_tr)
    with pytest.raises(ValueError, match="neither was given"):
        multi_bias_amp(g, X)
    # probabilities follow the library's policy: thresholded at 0.5 (strictly above), never expected rates
    halves = multi_bias_amp(g, X, task_pred=X_hat * 0.5)
    pd.testing.assert_frame_equal(halves.to_frame(), multi_bias_amp(g, X, task_pred=X_hat * 0).to_frame())
    assert halves.predictions == "task_pred: thresholded at 0.5 (per label)"
    with pytest.raises(ValueError, match="soft='expected' is not defined"):
        multi_bias_amp(g, X, task_pred=X_hat * 0.5, soft="expected")
    with pytest.raises(ValueError, match=r"task_pred holds probabilities outside \[0, 1\]"):
        multi_bias_amp(g, X, task_pred=X_hat * 2)
    with pytest.raises(ValueError, match="length mismatch"):
        multi_bias_amp(g[:-1], X, task_pred=X_hat)
    with pytest.raises(ValueError, match="max_combinations"):
        multi_bias_amp(g, X, task_pred=X_hat, combinations="all", max_combinations=2)


# --------------------------------------------------------------------------- #
# real labels: gender-annotated COCO (79 objects), simulated predictions
# --------------------------------------------------------------------------- #
def test_coco_real_labels(shared_data):
    coco = shared_data / "wang2019_balanced" / "coco"
    train, test = np.load(coco / "val.npz"), np.load(coco / "test.npz")
    X_tr, X = train["objects"], test["objects"]
    g_tr, g = train["gender_onehot"], test["gender_onehot"]
    assert X.shape[1] == 79
    rng = np.random.default_rng(0)
    # a model that misses objects, hallucinates a few, and leans on "woman" for kitchen-ish rows
    X_hat = np.where(rng.random(X.shape) < 0.2, 0, X)
    X_hat = np.where(rng.random(X.shape) < 0.005, 1, X_hat).astype(np.int8)
    flip = rng.random(len(g)) < 0.15
    g_hat = np.where(flip[:, None], g[:, ::-1], g)
    kw = dict(attr_pred=g_hat, task_pred=X_hat, attr_train=g_tr, task_train=X_tr)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        observed = multi_bias_amp(g, X, **kw)
        singles = multi_bias_amp(g, X, combinations="all", max_size=1, **kw)
        frequent = multi_bias_amp(g, X, combinations="all", max_size=3, min_support=20, **kw)
    for res in (observed, singles, frequent):
        for metric in (res.mals, res.g_to_m, res.m_to_g):
            assert np.isfinite([metric.value, metric.raw, metric.variance]).all()
            assert metric.value >= abs(metric.raw) - 1e-12
    assert len(observed.combinations) > 500
    assert max(len(m) for m in observed.combinations) > 3
    assert 50 < len(singles.combinations) <= 79
    assert max(len(m) for m in frequent.combinations) == 3
    # "all" with max_size=1 agrees with "observed" restricted to the singletons both keep
    for key in ("mals", "g_to_m", "m_to_g"):
        a = getattr(observed, key).table
        b = getattr(singles, key).table
        a = a[a["size"] == 1].set_index(["attr", "combination"])
        b = b.set_index(["attr", "combination"])
        common = a.index.intersection(b.index)
        assert len(common) > 40
        pd.testing.assert_frame_equal(a.loc[common], b.loc[common])
    # a singleton-only M reproduces the single-attribute metrics on those objects
    cols = np.array([m[0] for m in singles.combinations])
    single = bias_amp_directional(g, X[:, cols], attr_pred=g_hat, task_pred=X_hat[:, cols],
                                  attr_train=g_tr, task_train=X_tr[:, cols])
    assert singles.g_to_m.raw == pytest.approx(single.a_to_t.value, abs=1e-12)
    assert singles.m_to_g.raw == pytest.approx(single.t_to_a.value, abs=1e-12)


# --------------------------------------------------------------------------- #
# option (b): support="exact" (the authors' selection); (d): attr_pred_rule="argmax"
# --------------------------------------------------------------------------- #
def _authors_selection(train_sets, test_sets, thresh, k=1):
    """The authors' get_multiatts: exact training sets seen more than thresh times, contained in more
    than thresh test ground-truth rows (written from their description, one row at a time)."""
    counts: dict = {}
    for s in train_sets:
        if len(s) >= k:
            counts[s] = counts.get(s, 0) + 1
    kept = {s for s, c in counts.items() if c > thresh}
    return {s for s in kept if sum(set(s) <= set(t) for t in test_sets) > thresh}


def test_support_exact_by_hand():
    cols = ["a", "b", "c"]
    frame = lambda sets: pd.DataFrame([[int(c in s) for c in cols] for s in sets], columns=cols)
    train_sets = ["a", "a", "b", "b", "ab", "c", "c"]
    train_g = [0, 1, 0, 1, 0, 0, 1]
    test_sets = ["a", "a", "b", "c", "ab"]
    test_g = [0, 1, 1, 0, 1]
    kw = dict(attr_train=train_g, task_train=frame(train_sets), task_pred=frame(test_sets), min_support=2)
    # containment: a 3, b 3, c 2, {a,b} 1 training instances contain them -> a, b, c
    res = multi_bias_amp(test_g, frame(test_sets), **kw)
    assert res.combinations == (("a",), ("b",), ("c",)) and res.selection["support"] == "containment"
    # exact: a, b, c are the exact set of 2 training rows each, {a,b} of 1; then c is contained in only
    # one test row (< 2) -> a, b
    res = multi_bias_amp(test_g, frame(test_sets), support="exact", **kw)
    assert res.combinations == (("a",), ("b",))
    assert res.selection["removed_min_support"] == 1 and res.selection["removed_not_in_test"] == 1
    assert set(res.combinations) == {tuple(s) for s in _authors_selection(train_sets, test_sets, thresh=1)}
    with pytest.raises(ValueError, match="combinations='observed'"):
        multi_bias_amp(test_g, frame(test_sets), support="exact", combinations="all", **kw)
    with pytest.raises(ValueError, match="support must be one of"):
        multi_bias_amp(test_g, frame(test_sets), support="subset", **kw)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**16), st.integers(1, 3))
def test_support_exact_matches_the_authors_selection(seed, min_support):
    rng = np.random.default_rng(seed)
    n_tasks = 4
    train = (rng.random((60, n_tasks)) < 0.35).astype(int)
    test = (rng.random((40, n_tasks)) < 0.35).astype(int)
    sets = lambda m: [tuple(np.flatnonzero(r).tolist()) for r in m]
    expected = _authors_selection(sets(train), sets(test), thresh=min_support - 1)
    if not expected:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        res = multi_bias_amp(rng.integers(0, 2, 40), test, task_pred=test, attr_train=rng.integers(0, 2, 60),
                             task_train=train, min_support=min_support, support="exact")
    assert set(res.combinations) == expected


def test_attr_pred_argmax_by_hand():
    attr = [0, 0, 1, 1]
    task = np.array([[1, 0], [1, 1], [1, 0], [1, 1]])
    scores = np.array([[0.9, 0.1], [0.4, 0.6], [0.2, 0.8], [0.7, 0.3]])  # argmax: 0, 1, 1, 0
    plug_in = {"cross_fit": False}  # 4 rows, by hand: the signs of every row
    res = multi_bias_amp(attr, task, attr_pred=scores, attr_pred_rule="argmax", **plug_in)
    same = multi_bias_amp(attr, task, attr_pred=[0, 1, 1, 0], **plug_in)
    pd.testing.assert_frame_equal(res.to_frame(), same.to_frame())
    # the default policy thresholds P(class 1) at 0.5: the same groups for two classes
    pd.testing.assert_frame_equal(multi_bias_amp(attr, task, attr_pred=scores, **plug_in).to_frame(), same.to_frame())
    # M->G by hand: combination {0}: 4 rows, P(g=0|m) = 1/2 = P(g^=0|m) -> 0; {0,1}: rows 1 and 3,
    # P(g=0|m) = 1/2, P(g^=0|m) = P(row 1 -> 1, row 3 -> 0) = 1/2 -> 0
    assert res.m_to_g.value == 0.0
    # 0/1 rows with none or two classes: M->G counts each thresholded column on its own (the authors'
    # calculate_mba_mg), a row in both columns in both, a row in none in neither
    hard = np.array([[1, 1], [0, 0], [0, 1], [1, 0]])
    res = multi_bias_amp(attr, task, attr_pred=hard, attr_pred_rule="argmax", **plug_in)
    table = res.m_to_g.table.set_index(["attr", "combination"])["p_pred"]
    # P(g^ = g | m): m = {0} holds the 4 rows, column 0 holds rows 0, 3 and column 1 rows 0, 2;
    # m = {0,1} holds rows 1 and 3: column 0 row 3 only, column 1 none
    assert table.to_dict() == {(0, (0,)): 0.5, (0, (0, 1)): 0.5, (1, (0,)): 0.5, (1, (0, 1)): 0.0}
    # column names are aligned with the classes
    named = multi_bias_amp(["f", "f", "m", "m"], task, attr_pred=pd.DataFrame(scores[:, ::-1], columns=["m", "f"]),
                           attr_pred_rule="argmax")
    assert named.m_to_g.value == 0.0
    with pytest.raises(ValueError, match="attr_pred_rule must be one of"):
        multi_bias_amp(attr, task, attr_pred=scores, attr_pred_rule="max")
    with pytest.raises(ValueError, match="3 columns"):
        multi_bias_amp(attr, task, attr_pred=np.ones((4, 3)), attr_pred_rule="argmax")


def test_attr_pred_argmax_in_the_bootstrap():
    from biasamp import bootstrap

    rng = np.random.default_rng(0)
    attr = rng.integers(0, 2, 200)
    task = (rng.random((200, 3)) < 0.4).astype(int)
    p = rng.random(200)
    scores = np.column_stack([p, 1 - p])  # class probabilities: one column above 0.5 per row
    boot = bootstrap(multi_bias_amp, attr, task, attr_pred=scores, task_pred=task, attr_pred_rule="argmax",
                     n_boot=30, random_state=0)
    point = multi_bias_amp(attr, task, attr_pred=scores.argmax(axis=1), task_pred=task)
    assert boot.estimate["M->G"] == pytest.approx(point.m_to_g.value)
    # rows in no or two thresholded groups: the replicate tables hold one group per row, so the bootstrap
    # refuses (naming attr_pred) rather than resample a different M->G than the point estimate's
    with pytest.raises(ValueError, match="^attr_pred: bootstrap"):
        bootstrap(multi_bias_amp, attr, task, attr_pred=rng.random((200, 2)), task_pred=task,
                  attr_pred_rule="argmax", n_boot=30, random_state=0)


def test_the_bootstrap_counts_and_refuses_as_the_function():
    """One counting path: the bootstrap's estimates are the function's values on every option path, and a call
    the function refuses, the bootstrap refuses in the function's words; the argmax rule's refusal alone is its own."""
    from biasamp import bootstrap

    rng = np.random.default_rng(5)
    n = 240
    attr = rng.integers(0, 3, n)
    task = (rng.random((n, 4)) < 0.3 + 0.15 * attr[:, None]).astype(int)
    task_pred = task ^ (rng.random((n, 4)) < 0.1)
    attr_pred = np.where(rng.random(n) < 0.15, rng.integers(0, 3, n), attr)
    probs = np.clip(task * 0.6 + rng.random((n, 4)) * 0.4, 0, 1)
    gappy = attr.astype(float)
    gappy[[3, 17]] = np.nan
    weights = rng.random(n) + 0.5
    train = {"attr_train": rng.integers(0, 3, n), "task_train": (rng.random((n, 4)) < 0.4).astype(int)}
    for labels, options in [
        ({}, {"combinations": "all", "max_size": 3}),
        ({}, {"support": "exact", "min_support": 3}),
        ({}, {"min_support": 5, "min_size": 2}),
        ({}, {"cross_fit": False, "sample_weight": weights}),
        ({}, {"cross_fit_random_state": 4, "sample_weight": weights}),
        ({"task_pred": probs}, {"threshold": 0.6}),
        ({"attr": gappy}, {"missing": "drop"}),
        (train, {"sample_weight": weights}),
    ]:
        call = {"attr": attr, "task": task, "attr_pred": attr_pred, "task_pred": task_pred, **labels, **options}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = multi_bias_amp(**call)
            boot = bootstrap(multi_bias_amp, **call, n_boot=20, random_state=0)
        point = {"Multi_MALS": res.mals, "G->M": res.g_to_m, "M->G": res.m_to_g}
        for name, metric in point.items():  # the same counts (the bootstrap's from the cells' table: weighted sums
            # in another order differ in the last bits)
            assert boot.estimate[name] == pytest.approx(metric.value, rel=1e-12, abs=1e-15), (options, name)
            assert boot.estimate[name + " raw"] == pytest.approx(metric.raw, rel=1e-12, abs=1e-15), (options, name)
    refused = [  # ((args, kwargs), ...): each refused by the function
        ((attr, task, attr_pred), {"task_pred": task_pred}),
        ((attr,), {"task_pred": task_pred}),
        ((attr, task), {"attr_pred": rng.random((n, 3)), "attr_pred_rule": "argmax", "cross_fit": True, **train}),
        ((attr, task), {"task_pred": probs, "soft": "expected"}),
    ]
    for args, kwargs in refused:
        with pytest.raises((TypeError, ValueError)) as by_function:
            multi_bias_amp(*args, **kwargs)
        with pytest.raises(by_function.type) as by_bootstrap:
            bootstrap(multi_bias_amp, *args, **kwargs, n_boot=20, random_state=0)
        assert str(by_bootstrap.value) == str(by_function.value)  # the function's words (Python's for a binding)


def test_attr_pred_argmax_reproduces_the_authors_m_to_g_by_hand():
    """Zhao, Andrews & Xiang's code: Multi_MALS from argmax groups, M->G from each thresholded column."""
    attr = [0, 0, 1, 1]
    task = np.array([[1], [1], [1], [0]])  # the combination {0} holds rows 0, 1, 2
    hard = np.array([[1, 1], [0, 0], [0, 1], [1, 0]])  # row 0 in both groups, row 1 in none
    plug_in = {"cross_fit": False}  # 4 rows, by hand: the signs of every row
    res = multi_bias_amp(attr, task, attr_pred=hard, attr_pred_rule="argmax", **plug_in)
    # P(g|m) = 2/3, 1/3; P(g^|m) by columns: column 0 row 0 -> 1/3, column 1 rows 0, 2 -> 2/3
    # y: P(g=0, m) = 1/2 > P(g=0) P(m) = 3/8 -> +1; g=1: 1/4 < 3/8 -> -1
    # raw = mean(y * delta) = mean(+1 * (1/3 - 2/3), -1 * (2/3 - 1/3)) = -1/3; abs = 1/3
    assert res.m_to_g.raw == pytest.approx(-1 / 3, abs=1e-15)
    assert res.m_to_g.value == pytest.approx(1 / 3, abs=1e-15)
    assert res.counts.joint_ghat_m.tolist() == [[1], [2]]
    # the argmax rows (0, 0, 1, 0) would give P(g^|m) = 2/3, 1/3 = P(g|m): 0, the number the issue reported
    argmax_rows = multi_bias_amp(attr, task, attr_pred=hard.argmax(axis=1), **plug_in)
    assert argmax_rows.m_to_g.value == 0.0
    # weighted: rows weigh 1, 2, 1, 3; P(g|m) = 3/4, 1/4; columns: 1/4, 2/4; y = +1, -1 -> raw -3/8
    weighted = multi_bias_amp(attr, task, attr_pred=hard, attr_pred_rule="argmax", sample_weight=[1, 2, 1, 3],
                              **plug_in)
    assert weighted.m_to_g.raw == pytest.approx(-3 / 8, abs=1e-15)
    # probabilities are thresholded at 0.5 (the authors' np.round), logits at 0
    assert multi_bias_amp(attr, task, attr_pred=hard * 0.8 + 0.1, attr_pred_rule="argmax", **plug_in).m_to_g.raw == \
        pytest.approx(-1 / 3, abs=1e-15)
    assert multi_bias_amp(attr, task, attr_pred=hard * 4.0 - 2.0, attr_pred_rule="argmax", **plug_in).m_to_g.raw == \
        pytest.approx(-1 / 3, abs=1e-15)
    # Multi_MALS still uses the argmax rows (the authors' create_bog): equal to the one-hot argmax input
    with_task = multi_bias_amp(attr, task, attr_pred=hard, task_pred=task, attr_pred_rule="argmax")
    onehot = multi_bias_amp(attr, task, attr_pred=hard.argmax(axis=1), task_pred=task)
    assert with_task.mals.value == onehot.mals.value


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000))
def test_attr_pred_argmax_m_to_g_equals_a_loop_over_columns(seed):
    rng = np.random.default_rng(seed)
    n, k, n_groups = 30, 3, 3
    attr = rng.integers(0, n_groups, n)
    task = (rng.random((n, k)) < 0.5).astype(int)
    pred = (rng.random((n, n_groups)) < 0.4).astype(int)
    try:
        res = multi_bias_amp(attr, task, attr_pred=pred, attr_pred_rule="argmax")
    except ValueError:
        return  # a class absent from attr, or no combination
    for combo, j in zip(res.combinations, range(len(res.combinations))):
        rows = task[:, list(combo)].all(axis=1)
        for g in range(n_groups):
            # the authors' ahat_cond_t: rows containing m whose column g is 1, over rows containing m
            assert res.counts.joint_ghat_m[g, j] == int(pred[rows, g].sum())


def test_inconsistent_hand_built_counts_name_the_field():
    ok = dict(attr_classes=(0, 1), task_classes=("a", "b"), combinations=(("a",),), n_train=10,
              train_attr=np.array([5, 5]), train_joint=np.array([[3], [2]]), n_test=10,
              test_attr=np.array([5, 5]), test_joint=np.array([[3], [2]]))
    MultiAttributeCounts(**ok)  # consistent
    for change, words in [
        ({"train_joint": np.array([[3, 2]])}, "train_joint has shape"),
        ({"test_joint": np.array([[6], [2]])}, "test_joint exceeds test_attr"),
        ({"train_attr": np.array([5, -1])}, "train_attr must hold finite non-negative"),
        ({"combinations": (("z",),)}, "combination .* task_classes"),
        ({"n_test": 3}, "test_attr sums to 10 > n_test"),
        ({"joint_g_mhat": np.zeros((3, 1))}, "joint_g_mhat has shape"),
    ]:
        with pytest.raises(ValueError, match=words):
            MultiAttributeCounts(**{**ok, **change})
    with pytest.raises(TypeError, match="n_train must be a non-negative integer"):
        MultiAttributeCounts(**{**ok, "n_train": 1.5})


# --------------------------------------------------------------------------- #
# a wholly undefined metric (docs: def-undefined)
# --------------------------------------------------------------------------- #
def test_undefined_metric_is_flagged_and_skipped_by_the_bootstrap():
    """A valid table never leaves a whole multi-attribute metric undefined (every kept combination occurs in
    the training and the test ground truth), so the flag is exercised on a result marked by hand: its repr,
    ``undefined_reasons`` and ``to_frame`` carry it, and the bootstrap gives it no statistic, with a note."""
    from dataclasses import replace

    from biasamp.multiattribute._plan import multi_evaluator

    attr = [0, 0, 0, 0, 1, 1, 1, 1]
    task = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1], [1, 1, 0], [1, 1, 0], [0, 0, 1], [0, 0, 0]])
    res = multi_bias_amp(attr, task, attr_pred=attr, task_pred=task)
    assert not any(r.undefined for r in (res.mals, res.g_to_m, res.m_to_g)) and res.undefined_reasons == {}
    g_to_m = replace(res.g_to_m, value=np.nan, raw=np.nan, variance=np.nan, undefined=True, reason="no member")
    marked = replace(res, g_to_m=g_to_m)
    assert repr(g_to_m) == "Multi_G->M = undefined: no member"
    assert marked.undefined_reasons == {"Multi_G->M": "no member"}
    assert marked.to_frame().attrs["undefined_reasons"] == {"Multi_G->M": "no member"}
    assert marked.to_dict()["g_to_m"]["undefined"] is True
    plan = multi_evaluator(marked)
    assert "G->M undefined, no interval: no member" in plan.notes
    full = np.zeros((1, 5, 1 + 2 * len(res.combinations)))
    assert set(plan.values(full)) == {"Multi_MALS", "Multi_MALS raw", "M->G", "M->G raw"}


def test_weights_and_missing_are_recorded_on_the_result():
    attr = np.array([0, 0, 0, 0, 1, 1, 1, 1, np.nan])
    task = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1], [1, 1, 0], [1, 1, 0], [0, 0, 1], [0, 0, 0],
                     [1, 0, 0]])
    res = multi_bias_amp(attr, task, task_pred=task, missing="drop", sample_weight=[1, 2, 1, 1, 1, 1, 0, 1, 1])
    assert res.weighted and res.counts.weighted and res.rows.n_dropped == 1 and res.rows.n_zero_weight == 1
    assert "1 rows with a missing value dropped" in repr(res) and "every count is a sum of sample weights" in repr(res)
    assert res.to_dict()["rows"]["n_zero_weight"] == 1 and res.train_rows is None
