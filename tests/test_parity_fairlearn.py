"""Parity with fairlearn: the cases of fairlearn's own metric and ``MetricFrame`` tests, in our terms.

fairlearn's ``test/unit/metrics`` checks the selection rate (unweighted,
weighted, a non-numeric ``pos_label``), the demographic parity difference and
ratio and the equalized odds difference and ratio (against ``MetricFrame``'s
``difference``/``ratio``), with sample weights and with one, two or several
sensitive features. The same cases run here against the installed fairlearn
(skipped where it is absent), and every definitional difference documented in
docs/fairness.md ("Differences from the peers") has one test showing it is
exactly that difference and nothing more.

The single-class ground truths of issue 25 (all-0 labels, all-False booleans,
``pos_label=0`` on all-1 labels, the other class predicted) are here too:
fairlearn fixes the positive class by ``pos_label``, and so do we.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pandas as pd
import pytest

from biasamp import fairness_metrics
from biasamp.exceptions import SmallGroupWarning, UndefinedPairWarning

fl = pytest.importorskip("fairlearn.metrics")

RATES = {"selection_rate": "selection_rate", "tpr": "true_positive_rate", "fpr": "false_positive_rate"}


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _ours(y, p, sf, **kw):
    kw.setdefault("min_group_size", 0)
    return _quiet(fairness_metrics, y, p, sensitive_features=sf, **kw)


def _frame(y, p, sf, sample_weight=None, pos_label=1):
    # pos_label is an argument (functools.partial), not a sample parameter: MetricFrame splits those by group
    metrics = {name: functools.partial(getattr(fl, fn), pos_label=pos_label) for name, fn in RATES.items()}
    params = None if sample_weight is None else {name: {"sample_weight": sample_weight} for name in metrics}
    return _quiet(fl.MetricFrame, metrics=metrics, y_true=y, y_pred=p, sensitive_features=sf, sample_params=params)


def _data(seed: int, n: int = 1200):
    """fairlearn's data_for_test in spirit: random binary labels, weights and four group columns."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    p = np.where(rng.random(n) < 0.3, 1 - y, y)
    w = rng.integers(1, 5, n).astype(float)
    groups = {
        "g_1": rng.choice(["aa", "ba"], n),
        "g_2": rng.choice(["f", "g", "h"], n),
        "g_3": rng.choice(["kk", "m"], n, p=[0.7, 0.3]),
        "g_4": rng.integers(0, 4, n),
    }
    return y, p, w, groups


# --------------------------------------------------------------------------- #
# selection rate (fairlearn's test_selection_rate)
# --------------------------------------------------------------------------- #
def test_selection_rate_unweighted_weighted_and_pos_label():
    y = np.array([0, 0, 0, 1, 1, 1, 0, 1])
    p = np.array([0, 1, 1, 1, 0, 1, 0, 1])
    sf = np.array(["a", "a", "a", "a", "b", "b", "b", "b"])
    w = np.array([1, 2, 1, 1, 3, 1, 2, 1], dtype=float)
    res = _ours(y, p, sf)
    # group a predicts 1 for 3 of 4, group b for 2 of 4
    assert res.group_view.by_group["selection_rate"].tolist() == [0.75, 0.5]
    for g, mask in (("a", sf == "a"), ("b", sf == "b")):
        assert res.group_view.by_group.loc[g, "selection_rate"] == pytest.approx(fl.selection_rate(y[mask], p[mask]))
    weighted = _ours(y, p, sf, sample_weight=w)
    # a: (2+1+1)/(1+2+1+1) = 0.8; b: (1+1)/(3+1+2+1) = 2/7
    np.testing.assert_allclose(weighted.group_view.by_group["selection_rate"], [0.8, 2 / 7], rtol=1e-12)
    assert weighted.group_view.by_group.loc["b", "selection_rate"] == pytest.approx(
        fl.selection_rate(y[sf == "b"], p[sf == "b"], sample_weight=w[sf == "b"]), rel=1e-12)
    # pos_label=0: the rate of predicting 0
    zero = _ours(y, p, sf, pos_label=0)
    assert zero.group_view.by_group["selection_rate"].tolist() == [0.25, 0.5]
    assert zero.group_view.by_group.loc["a", "selection_rate"] == fl.selection_rate(
        y[sf == "a"], p[sf == "a"], pos_label=0)


def test_selection_rate_non_numeric_pos_label():
    y = np.array(["yes", "no", "no", "yes", "yes", "no"])
    p = np.array(["yes", "yes", "no", "no", "yes", "yes"])
    sf = np.array([0, 0, 0, 1, 1, 1])
    res = _ours(y, p, sf, pos_label="yes")
    assert res.group_view.by_group["selection_rate"].tolist() == pytest.approx([2 / 3, 2 / 3])
    for g in (0, 1):
        assert res.group_view.by_group.loc[g, "selection_rate"] == pytest.approx(
            fl.selection_rate(y[sf == g], p[sf == g], pos_label="yes"))
    mf = _frame(y, p, sf, pos_label="yes")
    assert res.overall["DP"] == pytest.approx(mf.difference()["selection_rate"])
    assert res.overall["EOTP"] == pytest.approx(mf.difference()["tpr"])


# --------------------------------------------------------------------------- #
# demographic parity and equalized odds (fairlearn's test_fairness_metrics)
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("columns", [["g_1"], ["g_2"], ["g_4"], ["g_1", "g_3"], ["g_1", "g_2", "g_4"]])
def test_demographic_parity_and_equalized_odds_match(columns, weighted):
    y, p, w, groups = _data(len(columns) + 10 * weighted)
    sf = pd.DataFrame({c: groups[c] for c in columns}) if len(columns) > 1 else groups[columns[0]]
    sw = w if weighted else None
    res = _ours(y, p, sf, sample_weight=sw)
    kw = {"sample_weight": sw} if weighted else {}
    assert res.overall["DP"] == pytest.approx(fl.demographic_parity_difference(y, p, sensitive_features=sf, **kw),
                                              abs=1e-12)
    assert res.disparate_impact_ratio == pytest.approx(
        fl.demographic_parity_ratio(y, p, sensitive_features=sf, **kw), abs=1e-12)
    # equalized odds: the worst of the TPR and FPR differences (fairlearn's default agg)
    worst = fl.equalized_odds_difference(y, p, sensitive_features=sf, **kw)
    assert max(res.overall["EOTP"], res.overall["EOFP"]) == pytest.approx(worst, abs=1e-12)
    view = res.group_view
    eo_ratio = fl.equalized_odds_ratio(y, p, sensitive_features=sf, **kw)
    assert min(view.ratio()["tpr"], view.ratio()["fpr"]) == pytest.approx(eo_ratio, abs=1e-12)
    # the whole MetricFrame: by_group, overall, differences and ratios both ways
    mf = _frame(y, p, sf, sample_weight=sw)
    cols = list(RATES)
    np.testing.assert_allclose(view.by_group[cols].to_numpy(float), mf.by_group[cols].to_numpy(float), atol=1e-12)
    np.testing.assert_allclose(view.overall[cols].to_numpy(float), mf.overall[cols].to_numpy(float), atol=1e-12)
    for method in ("between_groups", "to_overall"):
        np.testing.assert_allclose(view.difference(method)[cols].to_numpy(float),
                                   mf.difference(method=method)[cols].to_numpy(float), atol=1e-12)
        np.testing.assert_allclose(view.ratio(method)[cols].to_numpy(float),
                                   mf.ratio(method=method)[cols].to_numpy(float), atol=1e-12)
    np.testing.assert_allclose(view.group_min()[cols].to_numpy(float), mf.group_min()[cols].to_numpy(float))
    np.testing.assert_allclose(view.group_max()[cols].to_numpy(float), mf.group_max()[cols].to_numpy(float))


def test_several_sensitive_features_are_fairlearns_intersections():
    y, p, _, groups = _data(3)
    sf = pd.DataFrame({"g_1": groups["g_1"], "g_2": groups["g_2"]})
    res = _ours(y, p, sf)
    mf = _frame(y, p, sf)
    # the same (g_1, g_2) tuples, in the same sorted order, with the same rates
    assert list(res.group_view.by_group.index) == list(mf.by_group.index)
    np.testing.assert_allclose(res.group_view.by_group["tpr"].to_numpy(float), mf.by_group["tpr"].to_numpy(float))


def test_macro_average_is_fairlearns_mean_aggregate():
    y, p, _, groups = _data(5)
    res = _ours(y, p, groups["g_2"], average="macro")
    mean = fl.equalized_odds_difference(y, p, sensitive_features=groups["g_2"], agg="mean")
    # class 0's TPR is class 1's 1 - FPR, so each of EOTP and EOFP averaged over both classes is the mean of
    # fairlearn's TPR and FPR differences
    assert res.overall["EOTP"] == pytest.approx(mean, abs=1e-12)
    assert res.overall["EOFP"] == pytest.approx(mean, abs=1e-12)


# --------------------------------------------------------------------------- #
# single-class ground truth (issue 25, bug 1): the positive class is pos_label's, as in fairlearn
# --------------------------------------------------------------------------- #
SF10 = np.array(["a", "b"] * 5)


@pytest.mark.parametrize("y, p, pos_label", [
    (np.zeros(10, int), np.zeros(10, int), 1),
    (np.zeros(10, bool), np.zeros(10, bool), True),
    (np.zeros(10, bool), np.zeros(10, bool), 1),
    (np.ones(10, int), np.ones(10, int), 0),
    (np.zeros(10, int), np.array([0, 0, 1, 0, 0, 1, 0, 0, 0, 1]), 1),
    ([0] * 10, [0, 1] * 5, 1),
], ids=["zeros", "false", "false_pos1", "ones_pos0", "other_predicted", "lists"])
def test_single_class_ground_truth_reports_the_positive_class(y, p, pos_label):
    res = _ours(y, p, SF10, pos_label=pos_label)
    assert res.settings.average == "binary"  # never silently the mean over the one class seen
    assert res.settings.pos_label == pos_label and res.classes == (0, 1)
    y_arr, p_arr = np.asarray(y), np.asarray(p)
    mf = _frame(y_arr, p_arr, SF10, pos_label=pos_label)
    # selection rates and FPRs as fairlearn's; the positive class never occurs, so no group has a TPR
    np.testing.assert_allclose(res.group_view.by_group["selection_rate"].to_numpy(float),
                               mf.by_group["selection_rate"].to_numpy(float))
    np.testing.assert_allclose(res.group_view.by_group["fpr"].to_numpy(float), mf.by_group["fpr"].to_numpy(float))
    assert res.group_view.by_group["tpr"].isna().all()
    assert res.overall["DP"] == pytest.approx(mf.difference()["selection_rate"])
    assert res.overall["EOFP"] == pytest.approx(mf.difference()["fpr"])
    # EOTP (and BA) undefined, with the reason naming the class; the others are returned
    assert np.isnan(res.overall["EOTP"]) and np.isnan(res.overall["BA"])
    assert f"class {int(pos_label)!r} never occurs" in res.undefined_reasons["EOTP"]
    assert set(res.undefined_reasons) == {"EOTP", "BA"}


def test_single_class_hand_values():
    # all 0, nothing predicted 1: every selection rate 0 (the class 1's), not 1 (the class 0's)
    res = _ours(np.zeros(10, int), np.zeros(10, int), SF10)
    assert res.group_view.by_group["selection_rate"].tolist() == [0.0, 0.0]
    assert res.by_group.query("`class` == 1")["ppr"].tolist() == [0.0, 0.0]
    assert res.overall["DP"] == 0.0 and res.overall["DI"] == 0.0
    # group b predicted 1 every time (rows 1, 3, 5, 7, 9): DP 1, FPR 0 vs 1
    res = _ours(np.zeros(10, int), np.array([0, 1] * 5), SF10)
    assert res.overall["DP"] == 1.0 and res.overall["EOFP"] == 1.0
    # all 1, pos_label 1 (default): TPR 1 in both groups, FPR undefined (no negative)
    res = _ours(np.ones(10, int), np.ones(10, int), SF10)
    assert res.settings.average == "binary" and res.overall["EOTP"] == 0.0
    assert set(res.undefined_reasons) == {"EOFP", "FPSF"}


def test_single_class_with_classes_and_string_pos_label():
    y = np.array(["x"] * 10)
    p = np.array(["x", "y"] * 5)
    # the other class predicted: known from classes= or from a string pos_label
    for kw in ({"classes": ["x", "y"], "pos_label": "y"}, {"pos_label": "y"}):
        res = _ours(y, p, SF10, **kw)
        assert res.classes == ("x", "y") and res.settings.pos_label == "y"
        assert res.group_view.by_group["selection_rate"].tolist() == [0.0, 1.0]
        assert "class 'y' never occurs" in res.undefined_reasons["EOTP"]
    # one class and nothing to complete it with: average='auto' refuses, naming classes=
    with pytest.raises(ValueError, match="classes="):
        _ours(y, np.array(["x"] * 10), SF10)
    with pytest.raises(ValueError, match="classes="):
        _ours(np.full(10, 3), np.full(10, 3), SF10)
    # an explicit macro over the one class is allowed (it is asked for)
    res = _ours(y, np.array(["x"] * 10), SF10, average="macro")
    assert res.settings.average == "macro" and res.classes == ("x",)
    # classes= with integers other than 0/1
    res = _ours(np.full(10, 3), np.full(10, 3), SF10, classes=[3, 7], pos_label=7)
    assert res.settings.pos_label == 7 and res.group_view.by_group["selection_rate"].tolist() == [0.0, 0.0]


def test_classes_option_and_bootstrap_accept_it():
    from biasamp.stats import bootstrap

    y = np.zeros(60, int)
    p = np.tile([0, 0, 1], 20)
    sf = np.repeat(["a", "b"], 30)
    res = _ours(y, p, sf, classes=[0, 1], metrics=["DP"])
    assert res.overall["DP"] == pytest.approx(abs(10 / 30 - 10 / 30))
    boot = _quiet(bootstrap, fairness_metrics, y, p, sensitive_features=sf, classes=[0, 1], metrics=["DP"],
                  n_boot=50, random_state=0)
    assert boot is not None


# --------------------------------------------------------------------------- #
# the documented differences (docs/fairness.md, "Differences from the peers"), one test each
# --------------------------------------------------------------------------- #
def test_difference_tpr_without_positives_is_left_out_not_zero():
    # group c has no positive: fairlearn gives it TPR 0 (and warns); we leave it out of EOTP
    y = np.array([1, 1, 0, 1, 0, 1, 0, 0, 0])
    p = np.array([1, 0, 0, 1, 1, 1, 1, 0, 1])
    sf = np.array(["a", "a", "a", "b", "b", "b", "c", "c", "c"])
    res = _ours(y, p, sf)
    mf = _frame(y, p, sf)
    assert mf.by_group.loc["c", "tpr"] == 0.0
    assert np.isnan(res.group_view.by_group.loc["c", "tpr"])
    # exactly that difference: fairlearn's difference over the groups with a positive is our EOTP
    kept = mf.by_group["tpr"].drop("c")
    assert res.overall["EOTP"] == pytest.approx(kept.max() - kept.min())  # a 1/2, b 1
    assert res.overall["EOTP"] == 0.5 and mf.difference()["tpr"] == 1.0


def test_difference_ratio_of_zero_rates_is_one_not_nan():
    y = np.array([0, 1, 0, 1])
    p = np.zeros(4, int)
    sf = np.array(["a", "a", "b", "b"])
    res = _ours(y, p, sf)
    assert np.isnan(fl.demographic_parity_ratio(y, p, sensitive_features=sf))
    # equal (zero) rates: DI 0, ratio 1; every other value is fairlearn's
    assert res.overall["DI"] == 0.0 and res.disparate_impact_ratio == 1.0
    assert res.overall["DP"] == fl.demographic_parity_difference(y, p, sensitive_features=sf) == 0.0


def test_difference_di_is_one_minus_fairlearns_ratio():
    y, p, _, groups = _data(11)
    res = _ours(y, p, groups["g_2"])
    assert res.overall["DI"] == pytest.approx(
        1 - fl.demographic_parity_ratio(y, p, sensitive_features=groups["g_2"]), abs=1e-12)


def test_difference_small_groups_leave_the_aggregates():
    y, p, _, groups = _data(12, n=400)
    sf = groups["g_2"].astype(object)
    sf[:5] = "tiny"  # a group of 5 rows, below min_group_size=30
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (SmallGroupWarning, UndefinedPairWarning))
        res = fairness_metrics(y, p, sensitive_features=sf, min_group_size=30)
        kept = fairness_metrics(y, p, sensitive_features=sf, min_group_size=30, include_small_groups=True)
    assert res.settings.excluded_groups == ("tiny",)
    big = sf != "tiny"
    # exactly that difference: without the small group, fairlearn's number; with it kept, fairlearn's on all rows
    assert res.overall["DP"] == pytest.approx(
        fl.demographic_parity_difference(y[big], p[big], sensitive_features=sf[big]), abs=1e-12)
    assert kept.overall["DP"] == pytest.approx(fl.demographic_parity_difference(y, p, sensitive_features=sf),
                                               abs=1e-12)


def test_audit_of_a_single_class_task_notes_it():
    import biasamp

    attr = np.repeat(["f", "m"], 40)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = biasamp.audit(attr, np.array(["x"] * 80), task_pred=np.array(["x"] * 80), sections=["fairness"],
                            n_boot=20)
        zeros = biasamp.audit(attr, np.zeros(80, int), task_pred=np.tile([0, 1], 40), sections=["fairness"],
                              n_boot=20)
    (sec,) = one.sections
    assert sec.status == "ok" and any("single class 'x'" in note for note in sec.notes)
    (sec,) = zeros.sections
    # all-0 labels: the binary task (0, 1), headline the positive class 1 (selection rate 1/2 in both groups)
    assert sec.status == "ok" and any("positive class 1" in note for note in sec.notes)
