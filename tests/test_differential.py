"""Differential-fairness bias amplification (Foulds et al. 2020): against an independent
implementation of the smoothed ε, against AIF360 where installed, properties, and the layers
derived from the family declaration."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import biasamp
from biasamp import df_bias_amplification

# hand-computed examples are tiny by construction: their groups are small, and each family says so with a
# SmallGroupWarning (tested once per family in tests/test_common.py); here it would only be noise
pytestmark = pytest.mark.filterwarnings("ignore::biasamp.SmallGroupWarning")


def reference_epsilon(y: np.ndarray, groups: list, c: float, w: np.ndarray | None = None) -> tuple[float, tuple]:
    """Foulds et al.'s smoothed ε by a loop over outcome and group pairs (alpha = c / 2 per outcome)."""
    w = np.ones(len(y)) if w is None else np.asarray(w, dtype=float)
    keys = sorted(set(groups), key=str)
    gs = np.array([keys.index(g) for g in groups])
    best, where = 0.0, None
    for outcome in (1, 0):
        rates = {}
        for k, key in enumerate(keys):
            mask = gs == k
            if w[mask].sum() == 0:
                continue
            n_ys = w[mask & (y == outcome)].sum()
            rates[key] = (n_ys + c / 2) / (w[mask].sum() + c)
        for si, sj in itertools.permutations(rates, 2):
            r = math.log(rates[si]) - math.log(rates[sj])
            if r > best:
                best, where = r, (outcome, si, sj)
    return best, where


def _data(seed: int, n: int = 500):
    rng = np.random.default_rng(seed)
    race = rng.choice(["a", "b", "c"], n)
    sex = rng.choice(["f", "m"], n)
    base = 0.2 + 0.2 * (race == "b") + 0.1 * (sex == "m")
    y = (rng.random(n) < base).astype(int)
    p = np.where(rng.random(n) < 0.25, 1 - y, y)
    return y, p, pd.DataFrame({"race": race, "sex": sex})


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("c", [1.0, 0.5, 10.0])
def test_matches_an_independent_implementation_on_intersectional_groups(seed, c):
    y, p, sf = _data(seed)
    groups = list(zip(sf["race"], sf["sex"]))
    res = df_bias_amplification(y, p, sensitive_features=sf, concentration=c)
    eps_t, _ = reference_epsilon(y, groups, c)
    eps_p, where = reference_epsilon(p, groups, c)
    assert res.epsilon_true == pytest.approx(eps_t, abs=1e-12)
    assert res.epsilon_pred == pytest.approx(eps_p, abs=1e-12)
    assert res.value == pytest.approx(eps_p - eps_t, abs=1e-12)
    assert len(res.by_group) == len(set(groups)) == 6
    y_att, hi, lo = res.attained_pred
    logs = np.log(res.by_group["p_pred"] if y_att == 1 else 1 - res.by_group["p_pred"])
    assert logs[hi] - logs[lo] == pytest.approx(res.epsilon_pred, abs=1e-12)  # the pair attains ε


def test_weights_are_weighted_counts():
    y, p, sf = _data(7)
    w = np.random.default_rng(8).random(len(y)) * 3
    groups = list(sf["race"])
    res = df_bias_amplification(y, p, sensitive_features=sf["race"], sample_weight=w)
    assert res.epsilon_true == pytest.approx(reference_epsilon(y, groups, 1.0, w)[0], abs=1e-12)
    assert res.epsilon_pred == pytest.approx(reference_epsilon(p, groups, 1.0, w)[0], abs=1e-12)


def test_hand_example():
    # group a predicts 3 of 4 positive, b 1 of 4: (3 + .5)/(4 + 1) = .7 and .3, ε = log(.7/.3)
    res = df_bias_amplification([1, 1, 0, 0, 1, 1, 0, 0], [1, 1, 1, 0, 1, 0, 0, 0],
                                sensitive_features=list("aaaabbbb"))
    assert res.epsilon_true == 0.0
    assert res.epsilon_pred == pytest.approx(math.log(7 / 3), abs=1e-15)
    assert res.attained_pred == (1, "a", "b")
    assert res.by_group.loc["a", "rate_pred"] == 0.75


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.05, 50))
def test_properties(seed, c):
    y, p, sf = _data(seed, n=120)
    res = df_bias_amplification(y, p, sensitive_features=sf, concentration=c)
    assert res.epsilon_true >= 0 and res.epsilon_pred >= 0
    same = df_bias_amplification(y, y, sensitive_features=sf, concentration=c)
    assert same.value == 0.0  # predictions equal to the labels amplify nothing, exactly
    renamed = df_bias_amplification(y, p, sensitive_features=sf.replace({"a": "zz", "f": "q"}), concentration=c)
    assert renamed.value == pytest.approx(res.value, abs=1e-12)
    flipped = df_bias_amplification(1 - y, 1 - p, sensitive_features=sf, concentration=c)
    assert flipped.value == pytest.approx(res.value, abs=1e-12)  # ε is symmetric in the two outcomes


def test_more_smoothing_shrinks_epsilon_to_zero():
    y, p, sf = _data(3)
    eps = [df_bias_amplification(y, p, sensitive_features=sf, concentration=c).epsilon_pred
           for c in (0.1, 1, 10, 1e3, 1e7)]
    assert all(a > b for a, b in zip(eps, eps[1:]))
    assert eps[-1] < 1e-5


def test_errors_name_the_argument():
    y, p, sf = _data(0, 60)
    with pytest.raises(ValueError, match="concentration"):
        df_bias_amplification(y, p, sensitive_features=sf, concentration=0)
    with pytest.raises(TypeError, match="concentration"):
        df_bias_amplification(y, p, sensitive_features=sf, concentration="1")
    with pytest.raises(ValueError, match="pos_label"):
        df_bias_amplification(y, p, sensitive_features=sf, pos_label=2)
    with pytest.raises(ValueError, match="needs two classes"):
        df_bias_amplification(np.arange(60) % 3, np.arange(60) % 3, sensitive_features=sf)  # not binary
    with pytest.raises(ValueError, match="single group|two groups"):
        df_bias_amplification(y, p, sensitive_features=np.zeros(60))


def test_probabilities_are_thresholded_unless_expected():
    y, p, sf = _data(4, 300)
    scores = np.clip(p * 0.6 + 0.2, 0, 1)  # 0.8 where predicted positive, 0.2 elsewhere
    assert df_bias_amplification(y, scores, sensitive_features=sf).value == \
        df_bias_amplification(y, p, sensitive_features=sf).value
    expected = df_bias_amplification(y, scores, sensitive_features=sf, soft="expected")
    assert expected.value != df_bias_amplification(y, p, sensitive_features=sf).value


def test_bootstrap_interval_and_scorer():
    y, p, sf = _data(5, 800)
    boot = biasamp.bootstrap(df_bias_amplification, y, p, sensitive_features=sf, n_boot=300, random_state=0)
    res = df_bias_amplification(y, p, sensitive_features=sf)
    assert boot.estimate["DF amplification"] == res.value
    lo, hi = boot.ci["DF amplification"]
    assert lo <= res.value <= hi and boot.methods["DF amplification"] == "percentile"
    assert boot.methods["epsilon_true"] == boot.methods["epsilon_pred"] == "max-t band"  # maxima: the band
    from biasamp.sklearn import make_scorer

    scorer = make_scorer("DF amplification")
    assert scorer._kwargs == {"statistic": "DF amplification"}


def test_agrees_with_aif360_where_every_group_has_both_outcomes():
    aif = pytest.importorskip("aif360.sklearn.metrics")
    for seed in range(3):
        y, p, sf = _data(seed, 600)
        idx = pd.MultiIndex.from_frame(sf)
        yt, yp = pd.Series(y, index=idx), pd.Series(p, index=idx)
        ours = df_bias_amplification(y, p, sensitive_features=sf)
        theirs = aif.df_bias_amplification(yt, yp, prot_attr=["race", "sex"])
        assert ours.value == pytest.approx(theirs, abs=1e-12)


def test_aif360_quirk_on_a_single_outcome_group_is_not_copied():
    """AIF360 gives a group whose predictions are all one class alpha = c (not c/2): a documented difference."""
    aif = pytest.importorskip("aif360.sklearn.metrics")
    y = np.array([1, 0, 1, 0, 1, 0, 1, 0])
    p = np.array([1, 1, 1, 1, 1, 0, 1, 0])  # group a: every prediction positive
    s = np.array(list("aaaabbbb"))
    ours = df_bias_amplification(y, p, sensitive_features=s)
    # ours: a (4 + .5)/(4 + 1) = .9 vs b .5 -> ε_pred = max(log(.9/.5), log(.5/.1)) = log 5
    assert ours.epsilon_pred == pytest.approx(math.log(5), abs=1e-12)
    idx = pd.Index(s, name="s")
    with np.errstate(divide="ignore"):
        theirs = aif.df_bias_amplification(pd.Series(y, index=idx), pd.Series(p, index=idx), prot_attr="s")
    # theirs smooths group a with the whole concentration on its one predicted class: P(1|a) = (4 + 1)/(4 + 1)
    # = 1, so the negative outcome's rate is 0 and ε_pred = log(.5 / 0) is infinite
    assert theirs == math.inf


def test_small_groups_are_left_out_of_epsilon_and_kept_in_the_table():
    y, p, sf = _data(11, 600)
    race = sf["race"].to_numpy().copy()
    race[:10] = "tiny"  # 10 members, below min_group_size=30
    with pytest.warns(biasamp.SmallGroupWarning, match="'tiny' \\(n=10\\)"):
        res = df_bias_amplification(y, p, sensitive_features=race)
    assert res.small_groups == ("tiny",) and bool(res.by_group.loc["tiny", "small"])
    keep = race != "tiny"
    without = df_bias_amplification(y[keep], p[keep], sensitive_features=race[keep])
    assert (res.epsilon_true, res.epsilon_pred) == (without.epsilon_true, without.epsilon_pred)
    every = df_bias_amplification(y, p, sensitive_features=race, include_small_groups=True)
    groups = list(race)
    assert every.epsilon_pred == pytest.approx(reference_epsilon(p, groups, 1.0)[0], abs=1e-12)
    boot = biasamp.bootstrap(df_bias_amplification, y, p, sensitive_features=race, n_boot=100, random_state=0)
    assert boot.estimate["DF amplification"] == res.value
