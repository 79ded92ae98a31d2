"""Group fairness options a practitioner needs: average/pos_label, thresholds, small groups,
reference groups and tolerance, sample weights, missing values, per-group metrics.

Each value is checked against an independent computation: a hand count, fairlearn's
MetricFrame, or row replication for integer weights.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from biasamp import SmallGroupWarning, bootstrap, fairness_metrics
from biasamp.accumulators import FairnessAccumulator

pytestmark = pytest.mark.filterwarnings("ignore::biasamp.SmallGroupWarning",
                                        "ignore::biasamp.UndefinedPairWarning")


def _binary_example():
    # group a: 100 rows (50 positives), group b: 100 rows (40 positives)
    y = np.r_[np.repeat([1, 0], [50, 50]), np.repeat([1, 0], [40, 60])]
    p = np.r_[np.repeat([1, 0, 1, 0], [40, 10, 10, 40]), np.repeat([1, 0, 1, 0], [20, 20, 30, 30])]
    g = np.repeat(["a", "b"], 100)
    return y, p, g


def test_binary_default_reports_the_positive_class_by_hand():
    y, p, g = _binary_example()
    res = fairness_metrics(y, p, sensitive_features=g)
    # a: TPR 40/50 = .8, FPR 10/50 = .2, PPR .5; b: TPR 20/40 = .5, FPR 30/60 = .5, PPR .5
    assert res.settings.average == "binary" and res.settings.pos_label == 1
    assert res.overall["EOTP"] == pytest.approx(0.3)
    assert res.overall["EOFP"] == pytest.approx(0.3)
    assert res.overall["DP"] == pytest.approx(0.0)
    # class 0's TPR is class 1's 1 - FPR: macro averages the same gaps here, but not in general
    macro = fairness_metrics(y, p, sensitive_features=g, average="macro")
    assert macro.overall["EOTP"] == pytest.approx((0.3 + 0.3) / 2)
    per_class = fairness_metrics(y, p, sensitive_features=g, average=None)
    assert list(per_class.overall["EOTP"].index) == [0, 1]


def test_binary_eotp_and_eofp_differ_from_their_macro_mean():
    # TPR gap .282-like and FPR gap .127-like: the macro mean of EOTP is their average
    y = np.r_[np.repeat([1, 0], [100, 100]), np.repeat([1, 0], [100, 100])]
    p = np.r_[np.repeat([1, 0, 1, 0], [70, 30, 20, 80]), np.repeat([1, 0, 1, 0], [40, 60, 10, 90])]
    g = np.repeat([0, 1], 200)
    res = fairness_metrics(y, p, sensitive_features=g)
    assert res.overall["EOTP"] == pytest.approx(0.30)  # .7 - .4
    assert res.overall["EOFP"] == pytest.approx(0.10)  # .2 - .1
    macro = fairness_metrics(y, p, sensitive_features=g, average="macro")
    assert macro.overall["EOTP"] == pytest.approx(0.20) == macro.overall["EOFP"]


def test_pos_label_selects_the_class_and_errors_name_it():
    y, p, g = _binary_example()
    names = np.where(y == 1, "yes", "no")
    pnames = np.where(p == 1, "yes", "no")
    ref = fairness_metrics(y, p, sensitive_features=g)
    res = fairness_metrics(names, pnames, sensitive_features=g, pos_label="yes")
    assert res.overall == pytest.approx(ref.overall)
    with pytest.raises(ValueError, match="pos_label=1 is not a class"):
        fairness_metrics(names, pnames, sensitive_features=g)
    with pytest.raises(ValueError, match="average="):
        fairness_metrics(["a", "b", "c", "a"], ["a", "b", "c", "c"], sensitive_features=[0, 0, 1, 1],
                         average="binary")
    with pytest.raises(ValueError, match="average must be one of"):
        fairness_metrics(y, p, sensitive_features=g, average="micro")


def test_probabilities_thresholded_or_expected():
    y, p, g = _binary_example()
    rng = np.random.default_rng(0)
    scores = np.clip(p * 0.6 + rng.uniform(0, 0.39, len(p)), 0, 1)  # > .5 exactly where p == 1
    hard = fairness_metrics(y, p, sensitive_features=g)
    thr = fairness_metrics(y, scores, sensitive_features=g)
    assert thr.overall == pytest.approx(hard.overall)
    assert "thresholded at 0.5" in thr.settings.predictions
    exp = fairness_metrics(y, scores, sensitive_features=g, soft="expected")
    assert exp.settings.predictions.startswith("expected rates")
    # the expected PPR of a group is its mean score
    ppr = [scores[g == k].mean() for k in ("a", "b")]
    assert exp.overall["DP"] == pytest.approx(abs(ppr[0] - ppr[1]))
    moved = fairness_metrics(y, scores, sensitive_features=g, threshold=0.99)
    assert moved.overall["DP"] == pytest.approx(0.0)  # nobody predicted positive: equal rates
    with pytest.raises(ValueError, match="threshold"):
        fairness_metrics(y, scores, sensitive_features=g, threshold=1.5)


def _compas_like():
    """Six groups, two of them tiny, as COMPAS's races."""
    rng = np.random.default_rng(3)
    sizes = {"African-American": 600, "Caucasian": 400, "Hispanic": 120, "Other": 80, "Asian": 6,
             "Native American": 3}
    g = np.repeat(list(sizes), list(sizes.values()))
    y = rng.integers(0, 2, len(g))
    p = np.where(rng.random(len(g)) < 0.75, y, 1 - y)
    # the tiny groups get extreme predictions: they would dominate max - min
    p[g == "Native American"] = 1
    p[g == "Asian"] = 0
    return y, p, g


def test_small_groups_flagged_and_excluded_from_the_headline():
    y, p, g = _compas_like()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = fairness_metrics(y, p, sensitive_features=g)
    assert any(w.category is SmallGroupWarning for w in caught)
    assert set(res.settings.small_groups) == {"Asian", "Native American"}
    assert set(res.settings.excluded_groups) == {"Asian", "Native American"}
    big = np.isin(g, ["African-American", "Caucasian", "Hispanic", "Other"])
    ref = fairness_metrics(y[big], p[big], sensitive_features=g[big])
    assert res.overall == pytest.approx(ref.overall)
    # every group stays in the tables, flagged
    small_rows = res.by_group[res.by_group["small"]]
    assert set(small_rows["group"]) == {"Asian", "Native American"}
    assert not small_rows["in_headline"].any()
    included = fairness_metrics(y, p, sensitive_features=g, include_small_groups=True)
    assert included.overall["DP"] == pytest.approx(1.0)  # all-ones vs all-zeros groups
    assert included.settings.excluded_groups == ()
    none_small = fairness_metrics(y, p, sensitive_features=g, min_group_size=0)
    assert none_small.settings.small_groups == ()


def test_reference_group_disparities_and_four_fifths():
    y, p, g = _binary_example()
    p = p.copy()
    p[(g == "b") & (y == 0)] = 0  # b: PPR 20/100 = .2, a: PPR .5
    res = fairness_metrics(y, p, sensitive_features=g, reference_group="a")
    d = res.disparities.set_index(["rate", "group"])
    assert d.loc[("selection_rate", "b"), "ratio"] == pytest.approx(0.4)
    assert d.loc[("selection_rate", "b"), "reading"] == "below tolerance"
    assert d.loc[("selection_rate", "a"), "reading"] == "reference"
    assert res.disparate_impact_ratio == pytest.approx(0.4)
    assert res.passes_four_fifths is False
    # "largest" ties go to the first group; "best" takes the highest selection rate
    assert fairness_metrics(y, p, sensitive_features=g).settings.reference_group == "a"
    best = fairness_metrics(y, p, sensitive_features=g, reference_group="best").disparities
    assert best.query("rate == 'fpr'").set_index("group").loc["b", "reading"] == "reference"  # lowest FPR (0)
    loose = fairness_metrics(y, p, sensitive_features=g, reference_group="a", tolerance=0.3)
    assert loose.disparities.set_index(["rate", "group"]).loc[("selection_rate", "b"), "reading"] == \
        "within tolerance"
    with pytest.raises(ValueError, match="reference_group='zz' is not a group"):
        fairness_metrics(y, p, sensitive_features=g, reference_group="zz")
    with pytest.raises(ValueError, match="tolerance"):
        fairness_metrics(y, p, sensitive_features=g, tolerance=(1.2, 0.8))


def test_group_view_equals_fairlearn_metricframe():
    fl = pytest.importorskip("fairlearn.metrics")
    from sklearn.metrics import accuracy_score, recall_score

    rng = np.random.default_rng(1)
    n = 500
    g = rng.choice(["x", "y", "z"], n, p=[0.5, 0.3, 0.2])
    y = rng.integers(0, 2, n)
    p = np.where(rng.random(n) < 0.7, y, 1 - y)
    w = rng.integers(1, 4, n).astype(float)
    res = fairness_metrics(y, p, sensitive_features=g, group_metrics={"accuracy": accuracy_score},
                           sample_weight=w)
    mf = fl.MetricFrame(metrics={"selection_rate": fl.selection_rate, "tpr": recall_score,
                                 "fpr": fl.false_positive_rate, "accuracy": accuracy_score},
                        y_true=y, y_pred=p, sensitive_features=g, sample_params={
                            k: {"sample_weight": w} for k in ("selection_rate", "tpr", "fpr", "accuracy")})
    view = res.group_view
    cols = ["selection_rate", "tpr", "fpr", "accuracy"]
    np.testing.assert_allclose(view.by_group[cols].to_numpy(float), mf.by_group[cols].to_numpy(float),
                               rtol=1e-12)
    np.testing.assert_allclose(view.difference()[cols].to_numpy(float), mf.difference()[cols].to_numpy(float),
                               rtol=1e-12)
    np.testing.assert_allclose(view.ratio()[cols].to_numpy(float), mf.ratio()[cols].to_numpy(float), rtol=1e-12)
    np.testing.assert_allclose(view.overall[cols].to_numpy(float), mf.overall[cols].to_numpy(float), rtol=1e-12)
    dpr = fl.demographic_parity_ratio(y, p, sensitive_features=g, sample_weight=w)
    assert res.disparate_impact_ratio == pytest.approx(dpr, rel=1e-12)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(0, 2), st.integers(0, 3)),
                min_size=8, max_size=40))
def test_integer_weights_equal_row_replication(rows):
    y, p, g, w = (np.array(c) for c in zip(*rows))
    if len(np.unique(g[w > 0])) < 2 or len(np.unique(y[w > 0])) < 2 or w.sum() == 0:
        return
    rep = np.repeat(np.arange(len(y)), w)
    kw = dict(average="macro", min_group_size=0)
    try:
        expected = fairness_metrics(y[rep], p[rep], sensitive_features=g[rep], **kw)
    except ValueError:
        with pytest.raises(ValueError):  # noqa: PT011 - the reference's error, whatever its wording
            fairness_metrics(y, p, sensitive_features=g, sample_weight=w, **kw)
        return
    got = fairness_metrics(y, p, sensitive_features=g, sample_weight=w.astype(float), **kw)
    for m, v in expected.overall.items():
        assert got.overall[m] == pytest.approx(v, abs=1e-12, nan_ok=True)
    assert got.settings.weighted


def test_weights_of_one_change_nothing_and_bad_weights_are_named():
    y, p, g = _binary_example()
    assert fairness_metrics(y, p, sensitive_features=g, sample_weight=np.ones(len(y))).overall == \
        pytest.approx(fairness_metrics(y, p, sensitive_features=g).overall)
    for bad, words in ((np.full(len(y), -1.0), "non-negative"), (np.ones(3), "one weight per row"),
                       (np.r_[np.nan, np.ones(len(y) - 1)], "NaN or inf")):
        with pytest.raises(ValueError, match=f"sample_weight.*{words}"):
            fairness_metrics(y, p, sensitive_features=g, sample_weight=bad)


def test_accumulator_weighted_batches_equal_the_function():
    y, p, g = _binary_example()
    w = np.tile([1.0, 2.0, 0.5, 3.0], len(y) // 4)
    acc = FairnessAccumulator([0, 1], ["a", "b"])
    for s in (slice(0, 77), slice(77, 200)):
        acc.update(y[s], p[s], sensitive_features=g[s], sample_weight=w[s])
    got = acc.compute()
    ref = fairness_metrics(y, p, sensitive_features=g, sample_weight=w)
    assert got.overall == pytest.approx(ref.overall, abs=1e-12)
    np.testing.assert_allclose(got.counts.n, [w[:100].sum(), w[100:].sum()])


def test_missing_values_raise_drop_or_group():
    y, p, g = _binary_example()
    g = g.astype(object)
    g[[3, 150]] = None
    yy = y.astype(float)
    yy[7] = np.nan
    with pytest.raises(ValueError, match="sensitive_features"):
        fairness_metrics(y, p, sensitive_features=g)
    dropped = fairness_metrics(yy, p, sensitive_features=g, missing="drop")
    keep = np.ones(len(y), bool)
    keep[[3, 7, 150]] = False
    ref = fairness_metrics(y[keep], p[keep], sensitive_features=g[keep].astype(str))
    assert dropped.overall == pytest.approx(ref.overall)
    assert dropped.settings.rows.n_dropped == 3
    grouped = fairness_metrics(y, p, sensitive_features=g, missing="group", min_group_size=0)
    assert "missing" in grouped.groups
    assert grouped.settings.rows.n_grouped == 2
    with pytest.raises(ValueError, match="missing must be one of"):
        fairness_metrics(y, p, sensitive_features=g, missing="ignore")


def test_bootstrap_takes_the_options_and_holds_the_estimate():
    y, p, g = _compas_like()
    boot = bootstrap(fairness_metrics, y, p, sensitive_features=g, metrics=["DP", "EOTP"], n_boot=200,
                     random_state=0)
    point = fairness_metrics(y, p, sensitive_features=g, metrics=["DP", "EOTP"])
    for m in ("DP", "EOTP"):
        low, high = boot.ci[m]
        assert low <= point.overall[m] <= high
        assert boot.estimate[m] == pytest.approx(point.overall[m])
    with pytest.raises(ValueError, match="average"):
        bootstrap(fairness_metrics, y, p, sensitive_features=g, average=None, n_boot=10)


def test_bootstrap_counts_through_the_functions_one_counting_pass(monkeypatch):
    """The bootstrap prepares the labels once, through the same count hook as the function (no counting of its own)."""
    import biasamp.fairness._metrics as fm

    calls = []
    prepare = fm._prepare

    def spy(*args, **kwargs):
        calls.append(kwargs["average"])
        return prepare(*args, **kwargs)

    monkeypatch.setattr(fm, "_prepare", spy)
    y, p, g = _compas_like()
    boot = bootstrap(fairness_metrics, y, p, sensitive_features=g, average="macro", n_boot=20, random_state=0)
    assert calls == ["macro"]
    point = fairness_metrics(y, p, sensitive_features=g, average="macro")
    assert calls == ["macro", "macro"]
    assert boot.estimate == point.overall


@pytest.mark.parametrize("alias", ["demographic_parity", "normalized_disparate_impact",
                                   "statistical_parity_subgroup_fairness", "false_positive_subgroup_fairness",
                                   "equalized_odds_false_positive", "equalized_odds_true_positive",
                                   "group_bias_amplification"])
def test_an_alias_bootstraps_the_family_call_restricted_to_its_metric(alias):
    import biasamp
    from biasamp.fairness._family import _SINGLE

    fn = getattr(biasamp, alias)
    m = _SINGLE[fn]
    y, p, g = _compas_like()
    w = np.tile([1.0, 2.0, 3.0], len(y) // 3 + 1)[:len(y)]
    one = bootstrap(fn, y, p, sensitive_features=g, sample_weight=w, n_boot=50, random_state=4)
    family = bootstrap(fairness_metrics, y, p, sensitive_features=g, sample_weight=w, metrics=[m], n_boot=50,
                       random_state=4)
    assert list(one.estimate) == [m]
    assert one.estimate[m] == fn(y, p, sensitive_features=g, sample_weight=w)
    assert one.ci == family.ci and one.estimate == family.estimate


def test_bootstrap_refuses_a_wrong_call_in_the_functions_words():
    y, p, g = _binary_example()
    with pytest.raises(TypeError,
                       match=r"^fairness_metrics\(\) missing 1 required keyword-only argument: 'sensitive_features'"):
        bootstrap(fairness_metrics, y, p, n_boot=10)
    with pytest.raises(TypeError, match=r"^fairness_metrics\(\) takes 2 positional arguments but 3 were given"):
        bootstrap(fairness_metrics, y, p, g, n_boot=10)
    with pytest.raises(TypeError, match="unexpected keyword argument 'nonsense'"):
        bootstrap(fairness_metrics, y, p, sensitive_features=g, nonsense=1, n_boot=10)
    # an alias: its own name, and the option that selects its statistic is not one of its arguments
    from biasamp import statistical_parity_subgroup_fairness as spsf

    with pytest.raises(TypeError, match=r"^statistical_parity_subgroup_fairness\(\) takes 2 positional arguments"):
        bootstrap(spsf, y, p, g, n_boot=10)
    with pytest.raises(TypeError, match="got multiple values for keyword argument 'metrics'") as raised:
        bootstrap(spsf, y, p, sensitive_features=g, metrics=["DP"], n_boot=10)
    with pytest.raises(TypeError, match="got multiple values for keyword argument 'metrics'") as called:
        spsf(y, p, sensitive_features=g, metrics=["DP"])
    assert str(raised.value).split("()")[1] == str(called.value).split("()")[1]


def test_bootstrap_with_weights_is_order_free_and_holds_its_estimate():
    y, p, g = _binary_example()
    w = np.tile([1.0, 2.0, 0.5, 3.0], len(y) // 4)
    a = bootstrap(fairness_metrics, y, p, sensitive_features=g, sample_weight=w, metrics=["DP"], n_boot=100,
                  random_state=1)
    order = np.random.default_rng(0).permutation(len(y))
    b = bootstrap(fairness_metrics, y[order], p[order], sensitive_features=g[order], sample_weight=w[order],
                  metrics=["DP"], n_boot=100, random_state=1)
    assert a.ci["DP"] == b.ci["DP"]
    point = fairness_metrics(y, p, sensitive_features=g, sample_weight=w, metrics=["DP"]).overall["DP"]
    assert a.estimate["DP"] == pytest.approx(point)
    assert a.ci["DP"][0] <= point <= a.ci["DP"][1]


def test_audit_flags_small_groups_and_states_the_settings():
    from biasamp import audit

    y, p, g = _compas_like()
    rep = audit(g, y, task_pred=p, sections=["fairness"], n_boot=100, progress=False)
    sec = rep.section("fairness")
    text = " ".join(sec.notes)
    assert "2 small group(s)" in text and "excluded from the headline" in text
    assert "positive class 1" in text
    assert "disparities" in sec.tables and "rates by group" in sec.tables
    big = np.isin(g, ["African-American", "Caucasian", "Hispanic", "Other"])
    ref = fairness_metrics(y[big], p[big], sensitive_features=g[big])
    dp = sec.summary.set_index("metric").loc["DP", "value"]
    assert dp == pytest.approx(ref.overall["DP"])
    # weights and missing values reach the section
    w = np.where(g == "Caucasian", 2.0, 1.0)
    weighted = audit(g, y, task_pred=p, sections=["fairness"], n_boot=50, progress=False, sample_weight=w)
    wref = fairness_metrics(y[big], p[big], sensitive_features=g[big], sample_weight=w[big])
    assert weighted.section("fairness").summary.set_index("metric").loc["DP", "value"] == \
        pytest.approx(wref.overall["DP"])
    assert weighted.inputs["weighted"] is True
    gm = g.astype(object)
    gm[:5] = None
    dropped = audit(gm, y, task_pred=p, sections=["fairness"], n_boot=50, progress=False, missing="drop")
    assert dropped.inputs["rows_test"]["n_dropped"] == 5
    assert any("5 rows with a missing value dropped" in n for n in dropped.section("fairness").notes)


def test_audit_with_string_binary_labels_averages_and_says_so():
    from biasamp import audit

    y, p, g = _binary_example()
    names, pnames = np.where(y == 1, "yes", "no"), np.where(p == 1, "yes", "no")
    rep = audit(g, names, task_pred=pnames, sections=["fairness"], n_boot=50, progress=False)
    sec = rep.section("fairness")
    assert sec.status == "ok"
    assert any("neither 1 nor True" in n for n in sec.notes)
    chosen = audit(g, names, task_pred=pnames, sections=["fairness"], n_boot=50, progress=False, pos_label="yes")
    ref = fairness_metrics(y, p, sensitive_features=g)
    assert chosen.section("fairness").summary.set_index("metric").loc["EOTP", "value"] == \
        pytest.approx(ref.overall["EOTP"])


def test_pandas_inputs_and_named_groups():
    y, p, g = _binary_example()
    frame = pd.DataFrame({"y": y, "p": p, "g": g}, index=np.arange(len(y)) * 3 + 7)
    res = fairness_metrics(frame["y"], frame["p"], sensitive_features=frame["g"])
    assert res.overall == pytest.approx(fairness_metrics(y, p, sensitive_features=g).overall)


def test_rate_chart_intervals_are_wilson_intervals():
    from biasamp.report._sections import _wilson

    # Wilson (1927) 95% interval of 5/10: 0.2366 to 0.7634 (z = 1.959964)
    low, high = _wilson(np.array([5.0, 0.0, 3.0]), np.array([10.0, 0.0, 3.0]), 1.959964)
    assert low[0] == pytest.approx(0.2366, abs=1e-4) and high[0] == pytest.approx(0.7634, abs=1e-4)
    assert np.isnan(low[1]) and np.isnan(high[1])      # no denominator: undefined, not 0
    assert high[2] == 1.0 and 0.4 < low[2] < 0.5        # 3/3: 0.4385 to 1


def test_threshold_curve_of_fairness_equals_the_function_at_each_threshold():
    from biasamp import threshold_curve

    y, _, g = _compas_like()
    rng = np.random.default_rng(5)
    s = np.clip(0.5 * y + rng.uniform(0, 0.5, len(y)), 0, 1)
    for kw in ({}, {"average": "macro"}, {"include_small_groups": True}):
        curve = threshold_curve(fairness_metrics, g, y, task_scores=s, thresholds=[0.3, 0.6], **kw)
        for i, tau in enumerate((0.3, 0.6)):
            ref = fairness_metrics(y, (s > tau).astype(int), sensitive_features=g, **kw).overall
            for m in ("DP", "EOFP", "EOTP"):
                assert curve.values[m].iloc[i] == pytest.approx(ref[m], abs=1e-12), (kw, tau, m)
    from biasamp import bias_amp_directional

    with pytest.raises(TypeError, match=r"unexpected keyword arguments \[.average.\]: bias_amp_directional takes"):
        threshold_curve(bias_amp_directional, g, y, task_scores=s, thresholds=[0.5], average="macro")


def test_amplification_mixed_is_a_note_not_a_reading():
    from biasamp.report._sections import _row

    # the per-pair test (p_global) rejects while the mean's interval holds 0: the reading stays the interval's
    # ("no evidence"), the printed p stays the interval's own, and a note says that pairs offset each other
    mixed = _row("BiasAmp->", "A->T", 0.01, (-0.02, 0.04), "bca bootstrap (100)", 500, p_value=0.4, p_global=0.001)
    assert mixed["reading"] == "no evidence" and mixed["p_value"] == 0.4
    assert mixed["note"].startswith("mixed:") and "offsets" in mixed["note"]
    plain = _row("BiasAmp->", "A->T", 0.01, (-0.02, 0.04), "bca bootstrap (100)", 500, p_value=0.4, p_global=0.4)
    assert plain["reading"] == "no evidence" and "mixed" not in plain["note"]
    above = _row("BiasAmp->", "A->T", 0.05, (0.02, 0.08), "bca bootstrap (100)", 500, p_value=0.001, p_global=0.001)
    assert above["reading"] == "amplified" and "mixed" not in above["note"]
    # a disparity's reading comes from its interval only
    assert _row("DP", "", 0.01, (0.0, 0.04), "band", 500, p_value=0.3, p_global=0.001,
                kind="disparity")["reading"] == "no evidence"


def test_bootstrap_constant_weights_give_the_unweighted_interval():
    y, p, g = _binary_example()
    plain = bootstrap(fairness_metrics, y, p, sensitive_features=g, metrics=["DP", "EOTP"], n_boot=100,
                      random_state=4)
    doubled = bootstrap(fairness_metrics, y, p, sensitive_features=g, metrics=["DP", "EOTP"], n_boot=100,
                        random_state=4, sample_weight=np.full(len(y), 2.0))
    for m in ("DP", "EOTP"):
        assert doubled.ci[m] == pytest.approx(plain.ci[m], abs=1e-12)
    # weights constant within a group change no rate; weights varying within groups do
    same = bootstrap(fairness_metrics, y, p, sensitive_features=g, metrics=["EOTP"], n_boot=100, random_state=4,
                     sample_weight=np.where(g == "a", 5.0, 1.0))
    assert same.ci["EOTP"] == pytest.approx(plain.ci["EOTP"], abs=1e-12)
    w = np.tile([1.0, 4.0, 1.0, 1.0, 4.0], len(y) // 5)
    weighted = bootstrap(fairness_metrics, y, p, sensitive_features=g, metrics=["EOTP"], n_boot=100,
                         random_state=4, sample_weight=w)
    assert weighted.ci["EOTP"] != pytest.approx(plain.ci["EOTP"], abs=1e-9)


def test_compas_audit_with_six_races_flags_and_excludes_the_small_groups(shared_data):
    from biasamp import audit

    df = pd.read_csv(shared_data / "compas" / "compas-scores-two-years.csv")
    df = df[(df.days_b_screening_arrest <= 30) & (df.days_b_screening_arrest >= -30) & (df.is_recid != -1)
            & (df.c_charge_degree != "O") & (df.score_text != "N/A")]  # ProPublica's filter: 6,172 rows
    assert len(df) == 6172
    pred = (df.decile_score >= 5).astype(int)
    race = df.race.to_numpy()
    sizes = pd.Series(race).value_counts()
    small = set(sizes[sizes < 30].index)
    assert small == {"Native American"}  # 11 defendants (Asian: 31)
    rep = audit(race, df.two_year_recid.to_numpy(), task_pred=pred.to_numpy(), sections=["fairness"],
                n_boot=200, progress=False)
    sec = rep.section("fairness")
    assert any("excluded from the headline: 'Native American'" in n for n in sec.notes)
    keep = ~np.isin(race, list(small))
    ref = fairness_metrics(df.two_year_recid.to_numpy()[keep], pred.to_numpy()[keep],
                           sensitive_features=race[keep])
    summary = sec.summary.set_index("metric")
    for m in ("DP", "EOFP", "EOTP"):
        assert summary.loc[m, "value"] == pytest.approx(ref.overall[m])
    # with the 11 defendants the headline DP is theirs: larger
    full = fairness_metrics(df.two_year_recid.to_numpy(), pred.to_numpy(), sensitive_features=race,
                            include_small_groups=True)
    assert full.overall["DP"] > ref.overall["DP"]
    rates = sec.tables["rates by group"]
    assert bool(rates.loc["Native American", "small"]) and rates.loc["Native American", "n"] == 11
    text = rep.summary()
    assert "'Native American'" in text and "positive class 1" in text


def test_disparity_reading_comes_from_the_interval_whatever_the_class_test():
    from biasamp.report._sections import _row

    # before 0.4 a band above 0 with a class test that did not reject read "inconclusive": the two are one
    # inference now (the p printed is the interval's own), so the interval reads
    row = _row("EOTP", "", 0.15, (0.003, 0.85), "max-t band bootstrap (200)", 7669, p_value=0.01, p_global=1.0,
               kind="disparity")
    assert row["reading"] == "disparity" and "inconclusive" not in row["note"]
    no_test = _row("BA", "", 0.07, (0.002, 0.35), "max-t band bootstrap (200)", 7669, kind="disparity")
    assert no_test["reading"] == "disparity"  # BA has no test: the interval alone
