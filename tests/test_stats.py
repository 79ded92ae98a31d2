"""Tests of biasamp.stats: intervals, bootstrap over count tables, run comparison."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

from biasamp._engine.groups import cells as _cells
from biasamp._engine.groups import prepare as _fairness_prepare
from biasamp.cooccurrence import bias_amp_directional, bias_amp_mals
from biasamp.cooccurrence._plan import _label_cells
from biasamp.counts import CooccurrenceCounts
from biasamp.exceptions import UndefinedPairWarning
from biasamp.fairness import (
    METRICS,
    ConfusionCounts,
    demographic_parity,
    equalized_odds_true_positive,
    fairness_from_counts,
    fairness_metrics,
)
from biasamp.labels import encode_labels
from biasamp.stats import (
    BootstrapResult,
    bootstrap,
    cohens_d_label,
    compare_runs,
    confidence_interval,
    run_summary,
)

VALUES = np.array([0.21, 0.25, 0.19, 0.30, 0.22, 0.27, 0.24, 0.18])


# --------------------------------------------------------------------------- #
# confidence_interval
# --------------------------------------------------------------------------- #
def test_t_interval_matches_scipy():
    low, high = confidence_interval(VALUES)
    ref = st.t.interval(0.95, len(VALUES) - 1, loc=VALUES.mean(), scale=st.sem(VALUES))
    assert (low, high) == pytest.approx(ref, abs=1e-14)
    low, high = confidence_interval(VALUES, level=0.9)
    ref = st.t.interval(0.9, len(VALUES) - 1, loc=VALUES.mean(), scale=st.sem(VALUES))
    assert (low, high) == pytest.approx(ref, abs=1e-14)


def test_normal_interval_uses_population_std():
    low, high = confidence_interval(VALUES, method="normal")
    half = 1.959963984540054 * VALUES.std(ddof=0) / math.sqrt(len(VALUES))
    assert (low, high) == pytest.approx((VALUES.mean() - half, VALUES.mean() + half), abs=1e-14)


def test_bootstrap_interval_is_deterministic_and_sensible():
    a = confidence_interval(VALUES, method="bootstrap", random_state=1)
    b = confidence_interval(VALUES, method="bootstrap", random_state=1)
    assert a == b
    low, high = a
    assert VALUES.min() <= low < VALUES.mean() < high <= VALUES.max()
    t_low, t_high = confidence_interval(VALUES)
    assert abs(low - t_low) < 0.02 and abs(high - t_high) < 0.02


def test_interval_bounds_and_errors():
    assert confidence_interval([0.95, 0.99, 1.0], bounds=(-1, 1))[1] == 1.0
    with pytest.raises(ValueError, match="at least 2"):
        confidence_interval([0.1])
    with pytest.raises(ValueError, match="method"):
        confidence_interval(VALUES, method="wald")
    with pytest.raises(ValueError, match="level"):
        confidence_interval(VALUES, level=95)
    with pytest.raises(ValueError, match="NaN"):
        confidence_interval([0.1, np.nan, 0.2])
    with pytest.raises(TypeError):
        confidence_interval("abc")
    assert confidence_interval(pd.Series(VALUES)) == confidence_interval(list(VALUES))


def test_t_interval_coverage_on_normal_data():
    rng = np.random.default_rng(0)
    hits = 0
    for _ in range(400):
        x = rng.normal(1.0, 2.0, 10)
        low, high = confidence_interval(x)
        hits += low <= 1.0 <= high
    assert 0.92 <= hits / 400 <= 0.98


# --------------------------------------------------------------------------- #
# compare_runs against scipy
# --------------------------------------------------------------------------- #
A = np.array([0.20, 0.22, 0.21, 0.25, 0.19, 0.23, 0.24, 0.18])
B = np.array([0.12, 0.15, 0.11, 0.14, 0.13, 0.16, 0.21, 0.10])


def test_compare_runs_against_scipy():
    res = compare_runs(A, B)
    assert res.alternative == "two-sided"
    u = st.mannwhitneyu(A, B, alternative="two-sided")
    assert res.u_statistic == u.statistic and res.u_pvalue == pytest.approx(u.pvalue)
    d = (A.mean() - B.mean()) / math.sqrt((A.std(ddof=1) ** 2 + B.std(ddof=1) ** 2) / 2)
    assert res.cohens_d == pytest.approx(d)
    assert res.effect_size == "huge"
    lev = st.levene(A / A.mean(), B / B.mean())
    assert res.levene_statistic == pytest.approx(lev.statistic)
    assert res.levene_pvalue == pytest.approx(lev.pvalue)
    assert res.maxdiff_a == pytest.approx(0.07) and res.std_b == pytest.approx(B.std(ddof=0))
    assert res.significant() == {"mean": True, "variance": lev.pvalue < 0.05}
    assert "Cohen's d" in repr(res)
    assert res.to_dict()["effect_size"] == "huge"


def test_compare_runs_direction():
    res = compare_runs(B, A)
    assert res.alternative == "two-sided"  # never chosen from the means
    assert res.u_pvalue == pytest.approx(st.mannwhitneyu(B, A, alternative="two-sided").pvalue)
    assert compare_runs(B, A, alternative=None).alternative == "two-sided"
    less = compare_runs(B, A, alternative="less")
    assert less.u_pvalue == pytest.approx(st.mannwhitneyu(B, A, alternative="less").pvalue)
    assert res.cohens_d < 0
    forced = compare_runs(B, A, alternative="greater")
    assert forced.u_pvalue == pytest.approx(st.mannwhitneyu(B, A, alternative="greater").pvalue)
    two = compare_runs(A, A[::-1])
    assert two.alternative == "two-sided" and two.cohens_d == 0.0 and two.effect_size == "negligible"
    with pytest.raises(ValueError, match="alternative"):
        compare_runs(A, B, alternative="bigger")
    with pytest.raises(ValueError, match="at least 2"):
        compare_runs(A, [0.1])


def test_compare_runs_level_under_no_difference():
    """Under no difference the default test rejects at (at most) its nominal level.

    4,000 simulated pairs of experiments, 10 runs each, from the same normal
    distribution. The two-sided U test's exact level at 5% for n = 10 vs 10 is
    0.043; the binomial SD of the rate is 0.0032, so [0.030, 0.056] holds it with
    room. Choosing the one-sided direction from the means (the former default)
    rejects at about twice the level: > 0.07 here.
    """
    rng = np.random.default_rng(2021)
    a = rng.normal(0.2, 0.03, size=(4000, 10))
    b = rng.normal(0.2, 0.03, size=(4000, 10))
    default = np.array([compare_runs(x, y).u_pvalue for x, y in zip(a, b)])
    assert 0.030 <= np.mean(default < 0.05) <= 0.056
    by_means = np.array([st.mannwhitneyu(x, y, alternative="greater" if x.mean() > y.mean() else "less").pvalue
                         for x, y in zip(a, b)])
    assert np.mean(by_means < 0.05) > 0.07


def test_compare_runs_degenerate_cases():
    res = compare_runs([0.0, 0.0, 0.0], [0.1, 0.2, 0.3])
    assert res.levene_statistic is None and res.levene_pvalue is None
    assert "mean is 0" in res.notes[0]
    assert res.significant()["variance"] is None
    const = compare_runs([0.2, 0.2, 0.2], [0.1, 0.1, 0.1])
    assert const.cohens_d == math.inf and const.effect_size == "huge"
    assert const.levene_pvalue is None


@pytest.mark.parametrize(
    "d,label",
    [(0.0, "negligible"), (0.0099, "negligible"), (0.01, "very small"), (0.19, "very small"),
     (0.2, "small"), (0.5, "medium"), (0.8, "large"), (1.19, "large"), (1.2, "very large"),
     (2.0, "huge"), (-0.6, "medium"), (math.inf, "huge")],
)
def test_cohens_d_labels(d, label):
    assert cohens_d_label(d) == label


# --------------------------------------------------------------------------- #
# cells: the resampled table reproduces the counts
# --------------------------------------------------------------------------- #
def _fair_data(seed=0, n=3000, k=3, n_groups=3, multilabel=False):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, n_groups, n)
    if multilabel:
        y = (rng.random((n, k)) < 0.4).astype(int)
        p = np.where(rng.random((n, k)) < 0.2 + 0.05 * g[:, None], 1 - y, y)
    else:
        y = rng.integers(0, k, n)
        p = np.where(rng.random(n) < 0.6 + 0.1 * g, y, rng.integers(0, k, n))
    return y, p, g


def _fairness_cells(y, p, g):
    prep = _fairness_prepare(y, p, g)
    return _cells(prep, prep.groups)


@pytest.mark.parametrize("multilabel", [False, True])
def test_fairness_cells_reproduce_counts(multilabel):
    y, p, g = _fair_data(multilabel=multilabel)
    cells, classes, groups, _ = _fairness_cells(y, p, g)
    counts = ConfusionCounts.from_labels(y, p, sensitive_features=g)
    gram = cells.table()
    k = len(classes)
    np.testing.assert_array_equal(gram[:, 0], counts.n)
    np.testing.assert_array_equal(gram[:, 1:1 + k], counts.positives)
    np.testing.assert_array_equal(gram[:, 1 + k:1 + 2 * k], counts.predicted)
    np.testing.assert_array_equal(gram[:, 1 + 2 * k:], counts.true_positives)


def test_fairness_replicate_equals_counts_of_resampled_rows():
    """A replicate's metrics equal fairness_from_counts on the table of the same resample."""
    y, p, g = _fair_data(seed=2, n=500)
    cells, classes, groups, _ = _fairness_cells(y, p, g)
    rng = np.random.default_rng(5)
    w = rng.multinomial(int(cells.n), cells.counts / cells.n, size=3)
    grams = [cells.table(row) for row in w]
    k = len(classes)
    from biasamp.fairness._metrics import _aggregate, metric_arrays

    for gram in grams:
        counts = ConfusionCounts(classes, groups, gram[:, 0], gram[:, 1:1 + k], gram[:, 1 + k:1 + 2 * k],
                                 gram[:, 1 + 2 * k:])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedPairWarning)
            expected = fairness_from_counts(counts).overall
        arrays = metric_arrays(gram[None, :, 0], gram[None, :, 1:1 + k], gram[None, :, 1 + k:1 + 2 * k],
                               gram[None, :, 1 + 2 * k:])
        for m, (v, d) in arrays.items():
            assert _aggregate(v, d)[0][0] == pytest.approx(expected[m], abs=1e-12)


def test_cooccurrence_cells_reproduce_gram():
    rng = np.random.default_rng(4)
    n = 2000
    attr = rng.integers(0, 3, n)
    task = (rng.random((n, 5)) < 0.3).astype(int)
    task_pred = np.where(rng.random((n, 5)) < 0.1, 1 - task, task)
    attr_pred = np.where(rng.random(n) < 0.1, (attr + 1) % 3, attr)
    a = encode_labels({"attr": attr}, {"attr_pred": attr_pred})
    t = encode_labels({"task": task}, {"task_pred": task_pred})
    left, right = [a["attr"], a["attr_pred"]], [t["task"], t["task_pred"]]
    cells, _ = _label_cells(left, right)
    counts = CooccurrenceCounts.from_encoded(left, right)
    np.testing.assert_allclose(cells.table(), counts.gram)
    assert cells.n == n and len(cells.counts) < n


# --------------------------------------------------------------------------- #
# bootstrap
# --------------------------------------------------------------------------- #
def test_bootstrap_fairness_all_metrics():
    y, p, g = _fair_data()
    res = bootstrap(fairness_metrics, y, p, sensitive_features=g, n_boot=300, random_state=0)
    assert isinstance(res, BootstrapResult)
    assert res.estimate == pytest.approx(fairness_metrics(y, p, sensitive_features=g).overall)
    assert list(res.replicates.columns) == list(METRICS) and len(res.replicates) == 300
    for m in METRICS:
        low, high = res.ci[m]
        assert 0 <= low <= high <= 1
    again = bootstrap(fairness_metrics, y, p, sensitive_features=g, n_boot=300, random_state=0)
    pd.testing.assert_frame_equal(res.replicates, again.replicates)
    assert "BootstrapResult(n_boot=300" in repr(res)
    with pytest.raises(AttributeError, match="several"):
        res.value
    assert not hasattr(res, "value")


def test_bootstrap_single_metric_and_subset():
    y, p, g = _fair_data(seed=1)
    res = bootstrap(demographic_parity, y, p, sensitive_features=g, n_boot=200, random_state=3)
    assert res.value == demographic_parity(y, p, sensitive_features=g)
    assert list(res.estimate) == ["DP"]
    low, high = res.interval()
    assert low <= high
    sub = bootstrap(fairness_metrics, y, p, sensitive_features=g, metrics=["DP"], n_boot=200, random_state=3)
    np.testing.assert_allclose(sub.replicates["DP"], res.replicates["DP"])
    ml = _fair_data(seed=1, multilabel=True)
    r2 = bootstrap(equalized_odds_true_positive, ml[0], ml[1], sensitive_features=ml[2], n_boot=100, random_state=0)
    assert r2.estimate["EOTP"] == equalized_odds_true_positive(*ml[:2], sensitive_features=ml[2])


def test_bootstrap_coverage_close_to_nominal():
    """The default CI of DP (true value 0.2 for both classes) covers at least about 95% of the time."""
    rng = np.random.default_rng(123)
    n, trials, hits = 1500, 120, 0
    for i in range(trials):
        g = rng.integers(0, 2, n)
        y = rng.integers(0, 2, n)
        p = (rng.random(n) < 0.3 + 0.2 * g).astype(int)
        res = bootstrap(demographic_parity, y, p, sensitive_features=g, n_boot=300, random_state=i)
        low, high = res.interval()
        hits += low <= 0.2 <= high
    assert hits / trials >= 0.9


def test_bootstrap_directional_and_mals():
    rng = np.random.default_rng(8)
    n = 3000
    attr = rng.integers(0, 2, n)
    task = np.where(rng.random(n) < 0.3 + 0.3 * attr, 1, 0) + 2 * (rng.random(n) < 0.3)
    task_pred = np.where(rng.random(n) < 0.8, task, rng.integers(0, 4, n))
    attr_pred = np.where(rng.random(n) < 0.9, attr, 1 - attr)
    res = bootstrap(bias_amp_directional, attr, task, task_pred=task_pred, attr_pred=attr_pred,
                    n_boot=200, random_state=0)
    full = bias_amp_directional(attr, task, task_pred=task_pred, attr_pred=attr_pred)
    assert res.estimate == {"A->T": full.a_to_t.value, "T->A": full.t_to_a.value}
    for name in ("A->T", "T->A"):
        low, high = res.ci[name]
        assert low < res.estimate[name] < high
    only = bootstrap(bias_amp_directional, attr, task, task_pred=task_pred, n_boot=50, random_state=0)
    assert list(only.estimate) == ["A->T"]
    train = bootstrap(bias_amp_directional, attr, task, task_pred=task_pred, attr_train=attr[::-1],
                      task_train=task[::-1], n_boot=50, random_state=0)
    assert train.value == bias_amp_directional(attr, task, task_pred=task_pred, attr_train=attr[::-1],
                                               task_train=task[::-1]).a_to_t.value
    mals = bootstrap(bias_amp_mals, attr, task, attr_pred=attr_pred, task_pred=task_pred, n_boot=200, random_state=0, attr_train=attr, task_train=task)
    assert mals.value == bias_amp_mals(attr_pred=attr_pred, task_pred=task_pred, attr_train=attr, task_train=task).value
    low, high = mals.interval()
    assert low <= mals.value <= high


def test_bootstrap_errors():
    y, p, g = _fair_data()
    with pytest.raises(TypeError, match="supports"):
        bootstrap(np.mean, y)
    with pytest.raises(TypeError, match="sensitive_features"):
        bootstrap(demographic_parity, y, p)
    with pytest.raises(ValueError, match="n_boot"):
        bootstrap(demographic_parity, y, p, sensitive_features=g, n_boot=1)
    with pytest.raises(ValueError, match="level"):
        bootstrap(demographic_parity, y, p, sensitive_features=g, level=1.5)
    with pytest.raises(ValueError, match="ci_method"):
        bootstrap(demographic_parity, y, p, sensitive_features=g, ci_method="nope")


def test_bootstrap_basic_interval():
    """The basic interval reflects the percentile one around the estimate, clipped to [0, 1]."""
    rng = np.random.default_rng(0)
    n = 4000
    g, y, p = rng.integers(0, 4, n), rng.integers(0, 2, n), rng.integers(0, 2, n)  # no true disparity
    pct = bootstrap(demographic_parity, y, p, sensitive_features=g, n_boot=400, random_state=1,
                    ci_method="percentile")
    basic = bootstrap(demographic_parity, y, p, sensitive_features=g, n_boot=400, random_state=1,
                      ci_method="basic")
    (lo, hi), est = pct.interval(), pct.value
    assert basic.interval() == pytest.approx((max(2 * est - hi, 0.0), 2 * est - lo))
    assert basic.interval()[0] <= est <= basic.interval()[1]
    assert "basic" in repr(basic)


def test_bootstrap_reports_undefined_replicates():
    # a tiny group: some replicates draw it empty, so only one group remains
    y = np.array([0, 1] * 20 + [1])
    p = np.array([0, 1] * 20 + [0])
    g = np.array([0] * 40 + [1])
    with pytest.warns(UndefinedPairWarning, match="DP"):
        res = bootstrap(demographic_parity, y, p, sensitive_features=g, n_boot=200, random_state=0)
    assert 0 < res.n_undefined["DP"] < 200
    assert res.replicates["DP"].isna().sum() == res.n_undefined["DP"]


# --------------------------------------------------------------------------- #
# run_summary
# --------------------------------------------------------------------------- #
def _runs(n_runs=5):
    rng = np.random.default_rng(0)
    n = 800
    g = rng.integers(0, 2, n)
    y = rng.integers(0, 3, n)
    out = []
    for _ in range(n_runs):
        p = np.where(rng.random(n) < 0.7, y, rng.integers(0, 3, n))
        out.append(fairness_metrics(y, p, sensitive_features=g))
    return out


def test_run_summary_fairness_results():
    runs = _runs()
    s = run_summary(runs)
    frame = pd.DataFrame([r.overall for r in runs])
    assert list(s.overall.index) == list(METRICS)
    np.testing.assert_allclose(s.overall["mean"], frame.mean())
    np.testing.assert_allclose(s.overall["std"], frame.std(ddof=0))
    np.testing.assert_allclose(s.overall["maxdiff"], frame.max() - frame.min())
    low, high = confidence_interval(frame["DP"])
    assert (s.overall.loc["DP", "ci_low"], s.overall.loc["DP", "ci_high"]) == pytest.approx((low, high))
    assert (s.overall["n_runs"] == 5).all()
    per = pd.DataFrame([r.by_class.loc[2] for r in runs])
    assert s.by_class.loc[("EOTP", 2), "maxdiff"] == pytest.approx(per["EOTP"].max() - per["EOTP"].min())
    assert s.per_class_max.loc["EOTP", "maxdiff"] == pytest.approx(
        s.by_class.loc["EOTP", "maxdiff"].max()
    )
    cls = s.per_class_max.loc["EOTP", "class"]
    assert s.per_class_max.loc["EOTP", "std"] == s.by_class.loc[("EOTP", cls), "std"]
    assert "RunSummary" in repr(s)
    assert s.to_dict()["level"] == 0.95


def test_run_summary_other_inputs():
    frame = pd.DataFrame({"DP": [0.1, 0.2, 0.15], "BA": [0.01, 0.03, 0.02]})
    s = run_summary(frame, method="normal")
    assert s.by_class is None
    assert s.overall.loc["BA", "maxdiff"] == pytest.approx(0.02)
    assert run_summary(frame.to_dict("records")).overall.loc["DP", "mean"] == pytest.approx(0.15)
    s2 = run_summary([0.1, 0.2, 0.3])
    assert s2.overall.loc["value", "mean"] == pytest.approx(0.2)
    with pytest.raises(ValueError, match="at least 2"):
        run_summary([0.1])
    with pytest.raises(ValueError, match="one kind"):
        run_summary([0.1, {"DP": 0.2}])
    with pytest.raises(TypeError):
        run_summary("runs")


def test_stdev_is_the_population_sd_as_qian_et_al_print_it():
    # 0.10, 0.14, 0.12: mean 0.12, squared deviations 4e-4, 4e-4, 0 -> population SD sqrt(8e-4 / 3), sample SD 0.02
    s = run_summary([{"DP": 0.10}, {"DP": 0.14}, {"DP": 0.12}])
    assert s.overall.loc["DP", "std"] == pytest.approx(math.sqrt(8e-4 / 3), rel=1e-12) and s.ddof == 0
    assert s.overall.loc["DP", ["max", "min", "maxdiff"]].tolist() == pytest.approx([0.14, 0.10, 0.04])
    assert run_summary([{"DP": 0.10}, {"DP": 0.14}, {"DP": 0.12}], ddof=1).overall.loc["DP", "std"] == \
        pytest.approx(0.02, rel=1e-12)
    assert run_summary([0.3, 0.3, 0.3]).overall.loc["value", "std"] == 0.0  # exactly, not float noise
    res = compare_runs([0.10, 0.14, 0.12], [0.2, 0.2, 0.3])
    assert res.std_a == pytest.approx(math.sqrt(8e-4 / 3), rel=1e-12)
    assert compare_runs([0.10, 0.14, 0.12], [0.2, 0.2, 0.3], ddof=1).std_a == pytest.approx(0.02, rel=1e-12)
    # Cohen's d keeps the sample SDs whatever ddof: (0.12 - 0.2333) / sqrt((0.02^2 + 0.057735^2) / 2)
    assert res.cohens_d == compare_runs([0.10, 0.14, 0.12], [0.2, 0.2, 0.3], ddof=1).cohens_d
    assert res.cohens_d == pytest.approx((0.12 - 0.7 / 3) / math.sqrt((0.02**2 + (0.1 / math.sqrt(3))**2) / 2))
    for bad, kind in ((-1, ValueError), (0.5, TypeError), (True, TypeError)):
        with pytest.raises(kind, match="ddof"):
            run_summary([0.1, 0.2], ddof=bad)
        with pytest.raises(kind, match="ddof"):
            compare_runs([0.1, 0.2], [0.3, 0.4], ddof=bad)


class _PerClassRun:
    """A run with an ``overall`` mapping and a per-class ``by_class`` table (what run_summary reads of a result)."""

    def __init__(self, by_class: dict):
        self.by_class = pd.DataFrame(by_class, index=pd.Index(["a", "b"], name="class"))
        self.overall = self.by_class.mean().to_dict()


def test_per_class_columns_are_all_of_the_class_with_the_largest_maxdiff():
    # M1: class a has the largest MaxDiff (0.9), class b the largest mean (0.5) and STDEV (0.4)
    # M2: the same with the classes swapped; M3: MaxDiffs equal up to float noise (0.7 - 0.5 < 0.3 - 0.1 in
    # float64): a tie, the first class (a) is taken
    m1 = {"a": [0.0, 0.5, 0.5, 0.5, 0.5, 0.9], "b": [0.1, 0.1, 0.1, 0.9, 0.9, 0.9]}
    m2 = {"a": m1["b"], "b": m1["a"]}
    m3 = {"a": [0.5, 0.6, 0.7, 0.6, 0.6, 0.6], "b": [0.1, 0.2, 0.3, 0.1, 0.3, 0.2]}
    assert 0.7 - 0.5 < 0.3 - 0.1  # the float noise the tie rule absorbs
    m4 = {"a": [np.nan] * 6, "b": [np.nan] * 6}  # undefined for every class in every run
    runs = [_PerClassRun({m: [v[c][r] for c in ("a", "b")] for m, v in (("M1", m1), ("M2", m2), ("M3", m3),
                                                                          ("M4", m4))}) for r in range(6)]
    per = run_summary(runs).per_class_max
    assert per["class"].tolist()[:3] == ["a", "b", "a"]
    assert pd.isna(per.loc["M4", "class"]) and np.isnan(per.loc["M4", "std"]) and per.loc["M4", "undefined"]
    # M1, class a by hand: mean 2.9/6, max 0.9, min 0, MaxDiff 0.9, population SD
    mean = 2.9 / 6
    sd = math.sqrt((mean**2 + 4 * (0.5 - mean) ** 2 + (0.9 - mean) ** 2) / 6)
    assert per.loc["M1", ["mean", "max", "min", "maxdiff", "std"]].tolist() == pytest.approx([mean, 0.9, 0.0, 0.9, sd])
    assert per.loc["M1", "std"] < 0.4  # class b's SD (0.4) is larger: not each statistic's own maximum
    assert per.loc["M2"].drop("class").tolist() == per.loc["M1"].drop("class").tolist()
    assert per.loc["M3", ["mean", "max", "min"]].tolist() == pytest.approx([0.6, 0.7, 0.5])
    assert per.loc["M3", "n_runs"] == 6


# --------------------------------------------------------------------------- #
# reliability (issue 13): named errors, no silent NaN/inf, one seed checker
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("seed, kind", [(1.5, TypeError), (-1, ValueError), ("seed", TypeError), (True, TypeError)])
def test_every_seed_goes_through_one_checker(seed, kind):
    y = np.array([0, 1, 0, 1, 1, 0])
    calls = [
        lambda: confidence_interval(VALUES, method="bootstrap", random_state=seed),
        lambda: confidence_interval(VALUES, random_state=seed),  # checked even where unused
        lambda: bootstrap(bias_amp_directional, y, y, task_pred=y, n_boot=10, random_state=seed),
        lambda: run_summary([0.1, 0.2], random_state=seed),
    ]
    for call in calls:
        with pytest.raises(kind, match="random_state"):
            call()


def test_seed_kinds_agree():
    gen = confidence_interval(VALUES, method="bootstrap", n_boot=200, random_state=np.random.default_rng(3))
    same = confidence_interval(VALUES, method="bootstrap", n_boot=200, random_state=np.random.default_rng(3))
    legacy = confidence_interval(VALUES, method="bootstrap", n_boot=200, random_state=np.random.RandomState(3))
    assert gen == same and all(np.isfinite(legacy))


@pytest.mark.parametrize("bounds, kind, words", [
    ("ab", TypeError, "bounds"), ((0,), ValueError, "bounds must be a pair"),
    ((1.0, 0.0), ValueError, "low < high"), ((0, "x"), TypeError, "bounds"), ((np.nan, 1), ValueError, "low < high"),
])
def test_bounds_are_checked(bounds, kind, words):
    with pytest.raises(kind, match=words):
        confidence_interval(VALUES, bounds=bounds)


def test_values_beyond_float64_arithmetic_raise_instead_of_inf():
    with pytest.raises(ValueError, match="values holds values too large"):
        confidence_interval([1e300, -1.7e308])
    with pytest.raises(ValueError, match="b holds values too large"):
        compare_runs([0.0, 0.0], [-1.7e308, -1.7e308, 1.0])
    # d is scale-free: huge but summable values give the same d as their scaled copies
    a, b = np.array([1.0, 2.0, 3.0]), np.array([2.0, 4.0, 5.0])
    assert compare_runs(a * 1e150, b * 1e150).cohens_d == pytest.approx(compare_runs(a, b).cohens_d)


def test_cohens_d_label_and_run_summary_name_their_argument():
    with pytest.raises(TypeError, match="d must be a real number"):
        cohens_d_label("a")
    with pytest.raises(TypeError, match=r"runs: column\(s\) \['b'\]"):
        run_summary(pd.DataFrame({"a": [1.0, 2.0], "b": ["x", "y"]}))
    with pytest.raises(ValueError, match="every value is NaN"):
        run_summary([np.nan, np.nan])
    with pytest.raises(ValueError, match="inf"):
        run_summary([0.1, np.inf])


def test_run_summary_flags_what_is_undefined():
    s = run_summary([{"DP": 0.1, "EOTP": np.nan}, {"DP": 0.3, "EOTP": 0.2}])
    assert s.overall.loc["DP", "undefined"] == "" and s.overall.loc["DP", "mean"] == pytest.approx(0.2)
    assert s.overall.loc["EOTP", "n_runs"] == 1 and np.isnan(s.overall.loc["EOTP", "std"])
    assert "two" in s.overall.loc["EOTP", "undefined"]


def test_band_standard_error_floor():
    # part 0 varies (bootstrap se ~0.01), part 1 is constant in every replicate (bootstrap se 0): without a
    # floor part 1 gets a band of width 0; with a floor of 0.05 its half-width is c·0.05, where c is the
    # level-quantile of max_j |t_j|, here part 0's |t| alone (part 1's deviations are 0)
    from biasamp._engine.intervals import Parts, band

    rng = np.random.default_rng(3)
    reps = np.column_stack([0.1 + rng.normal(0, 0.01, 2000), np.full(2000, 0.2)])
    kw = dict(estimate=np.array([0.1, 0.2]), replicates=reps, units=pd.DataFrame({"u": [0]}),
              unit_estimate=np.array([0.0]), to_units=lambda lo, hi: (lo, hi), aggregate=np.sum)
    lo, hi, c = band(Parts(**kw), 0.95)
    assert hi[1] == pytest.approx(0.2, abs=1e-12) and lo[1] == pytest.approx(0.2, abs=1e-12)
    lo_f, hi_f, c_f = band(Parts(**kw, se_floor=np.array([np.nan, 0.05])), 0.95)
    se0 = reps[:, 0].std(ddof=1)
    assert c_f == c == pytest.approx(np.quantile(np.abs(reps[:, 0] - 0.1) / se0, 0.95))
    assert hi_f[1] - 0.2 == pytest.approx(c * 0.05) and 0.2 - lo_f[1] == pytest.approx(c * 0.05)
    assert (lo_f[0], hi_f[0]) == (lo[0], hi[0])  # a NaN floor leaves the part's own standard error
