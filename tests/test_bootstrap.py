"""The resampling engine, interval methods and tests of no effect behind :func:`biasamp.bootstrap`."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy import stats as sst

import biasamp as b
from biasamp._engine.intervals import Parts, acceleration, band
from biasamp._engine.resample import Cells, canonical_ids
from biasamp.exceptions import UndefinedPairWarning


def _fair(seed=0, n=1500, gap=0.1, k=2, groups=2):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, groups, n)
    y = rng.integers(0, k, n)
    p = np.where(rng.random(n) < 0.7 - gap * g, y, rng.integers(0, k, n))
    return y, p, g


def _cooc(seed=0, n=1500):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    t = (rng.random((n, 4)) < 0.3 + 0.2 * a[:, None]).astype(int)
    tp = np.where(rng.random((n, 4)) < 0.15, 1 - t, t)
    tp[(a == 1) & (rng.random(n) < 0.2), 0] = 1
    ap = np.where(rng.random(n) < 0.1, 1 - a, a)
    return a, t, ap, tp


# --------------------------------------------------------------------------- #
# engine
# --------------------------------------------------------------------------- #
def test_canonical_ids_ignore_row_order():
    rng = np.random.default_rng(0)
    cols = [rng.integers(0, 3, 200), rng.integers(0, 4, 200)]
    ids = canonical_ids(cols)
    perm = rng.permutation(200)
    ids_p = canonical_ids([c[perm] for c in cols])
    np.testing.assert_array_equal(ids[perm], ids_p)
    # lexicographic: the cell order follows the sorted keys
    keys = sorted({(int(x), int(y)) for x, y in zip(*cols)})
    assert [keys.index((int(x), int(y))) for x, y in zip(*cols)] == ids.tolist()


@pytest.mark.parametrize("counts", [[5000, 3, 1, 700], list(np.ones(9000, dtype=int)) + [40]])
def test_replicate_tables_are_multinomial_resamples(counts):
    """Every replicate keeps n rows; the replicate cell weights have the multinomial mean and variance."""
    counts = np.asarray(counts, dtype=float)
    c = len(counts)
    cells = Cells(np.eye(c), np.ones((c, 1)), counts)  # table = the cell counts themselves
    n = counts.sum()
    reps = np.concatenate([t[:, :, 0] for _, t in cells.replicate_tables(400, np.random.SeedSequence(3))])
    assert reps.shape == (400, c)
    np.testing.assert_array_equal(reps.sum(axis=1), n)
    np.testing.assert_array_equal(reps, np.rint(reps))
    p = counts / n
    i = int(np.argmax(counts))
    se = np.sqrt(n * p[i] * (1 - p[i]) / 400)
    assert abs(reps[:, i].mean() - n * p[i]) < 5 * se
    assert reps[:, i].var() == pytest.approx(n * p[i] * (1 - p[i]), rel=0.25)
    again = np.concatenate([t[:, :, 0] for _, t in cells.replicate_tables(400, np.random.SeedSequence(3))])
    np.testing.assert_array_equal(reps, again)


def _grouped(monkeypatch, groups):
    """Force the grouped bootstrap with ``groups`` groups (of any size) for the test's calls."""
    from biasamp._engine import resample

    monkeypatch.setattr(resample, "_EXACT_WORK", 0)
    monkeypatch.setattr(resample, "_GROUPS", groups)
    monkeypatch.setattr(resample, "_MIN_GROUP_ROWS", 1)


def test_group_tables_partition_the_rows_into_equal_groups():
    counts = np.array([5000, 3, 1, 700, 296], dtype=float)
    c = len(counts)
    cells = Cells(np.eye(c), np.ones((c, 1)), counts)  # a table holds the cell counts themselves
    groups = cells.group_tables(64, np.random.SeedSequence(5))
    assert groups.shape == (64, c)
    np.testing.assert_array_equal(groups.sum(axis=0), counts)  # every row in exactly one group
    sizes = groups.sum(axis=1)
    assert set(sizes.tolist()) <= {6000 // 64, 6000 // 64 + 1} and sizes.sum() == 6000  # 93 or 94 rows each
    np.testing.assert_array_equal(groups, cells.group_tables(64, np.random.SeedSequence(5)))
    assert not np.array_equal(groups, cells.group_tables(64, np.random.SeedSequence(6)))


def test_grouped_replicates_have_the_multinomial_mean_and_variance(monkeypatch):
    """Resampling 400 random groups: cell counts with mean n·p and variance ≈ n·p·(1 − p) (the multinomial's)."""
    _grouped(monkeypatch, 400)
    rng = np.random.default_rng(0)
    counts = rng.integers(1, 40, 300).astype(float)
    c, n = len(counts), counts.sum()
    cells = Cells(np.eye(c), np.ones((c, 1)), counts)
    scheme = cells.resampling(2000, np.random.SeedSequence(1))
    assert scheme.scheme == "grouped" and scheme.n_groups == 400
    reps = np.concatenate([t[:, :, 0] for _, t in scheme.replicate_tables()])
    assert reps.shape == (2000, c)
    np.testing.assert_array_equal(reps, np.rint(reps))  # integer tables: exact products
    p = counts / n
    # mean of the total: n; its variance: that of a sum of 400 resampled group sizes (all 15 or 16 rows)
    assert abs(reps.sum(axis=1).mean() - n) < 5 * np.sqrt(400 * 0.25 / 2000)
    ratio = reps.var(axis=0) / (n * p * (1 - p))
    assert 0.85 < np.median(ratio) < 1.15
    jack = np.concatenate([t[:, :, 0] for _, t in scheme.jackknife_tables()])
    np.testing.assert_array_equal(jack.sum(axis=0), (400 - 1) * counts)  # each row left out by one group
    np.testing.assert_array_equal(scheme.jackknife_weights, np.ones(400))


def test_small_data_keeps_the_exact_multinomial_bootstrap():
    counts = np.array([5000, 3, 1, 700], dtype=float)
    cells = Cells(np.eye(4), np.ones((4, 1)), counts)
    scheme = cells.resampling(1000, np.random.SeedSequence(3))
    assert scheme.scheme == "multinomial" and scheme.n_groups is None and scheme.note(cells.n) is None
    direct = np.concatenate([t for _, t in cells.replicate_tables(1000, np.random.SeedSequence(3))])
    np.testing.assert_array_equal(np.concatenate([t for _, t in scheme.replicate_tables()]), direct)


def test_grouped_bootstrap_agrees_with_the_exact_one(monkeypatch):
    """BiasAmp→ on 30,000 rows: the grouped bootstrap's spread and intervals match the exact bootstrap's."""
    rng = np.random.default_rng(7)
    n = 30_000
    a = rng.integers(0, 2, n)
    t = (rng.random((n, 8)) < 0.2 + 0.15 * a[:, None]).astype(int)
    tp = np.where(rng.random((n, 8)) < 0.1, 1 - t, t)
    tp[(a == 1) & (rng.random(n) < 0.1), 0] = 1
    ap = np.where(rng.random(n) < 0.1, 1 - a, a)
    kw = dict(attr_pred=ap, task_pred=tp, n_boot=1000, random_state=3)
    exact = b.bootstrap(b.bias_amp_directional, a, t, **kw)
    assert not any("grouped" in note for note in exact.notes)
    _grouped(monkeypatch, 1024)
    grouped = b.bootstrap(b.bias_amp_directional, a, t, **kw)
    assert any(note.startswith("grouped bootstrap: the 30,000 rows") for note in grouped.notes)
    assert grouped.estimate == exact.estimate
    assert grouped.p_global == exact.p_global  # the tests of no effect read the counts only
    for name in ("A->T", "T->A"):
        sd_exact, sd_grouped = exact.replicates[name].std(), grouped.replicates[name].std()
        assert sd_grouped == pytest.approx(sd_exact, rel=0.15)
        width = exact.ci[name][1] - exact.ci[name][0]
        assert grouped.ci[name][0] == pytest.approx(exact.ci[name][0], abs=0.25 * width)
        assert grouped.ci[name][1] == pytest.approx(exact.ci[name][1], abs=0.25 * width)
        assert grouped.methods[name] == "BCa"
    # the same seed gives the same intervals whatever the order of the rows
    perm = rng.permutation(n)
    again = b.bootstrap(b.bias_amp_directional, a[perm], t[perm], attr_pred=ap[perm], task_pred=tp[perm],
                        n_boot=1000, random_state=3)
    assert again.ci == grouped.ci
    pd_testing = pytest.importorskip("pandas").testing
    pd_testing.assert_frame_equal(again.replicates, grouped.replicates)


def test_grouped_bootstrap_with_weights_is_reproducible(monkeypatch):
    _grouped(monkeypatch, 256)
    y, p, g = _fair(n=20_000)
    w = np.random.default_rng(3).choice([0.5, 1.0, 2.5], size=len(y))
    first = b.bootstrap(b.demographic_parity, y, p, sensitive_features=g, sample_weight=w, n_boot=300,
                        random_state=1)
    second = b.bootstrap(b.demographic_parity, y, p, sensitive_features=g, sample_weight=w, n_boot=300,
                         random_state=1)
    assert first.ci == second.ci and any("grouped" in note for note in first.notes)
    assert first.estimate["DP"] == pytest.approx(b.demographic_parity(y, p, sensitive_features=g,
                                                                       sample_weight=w), abs=1e-12)
    assert first.ci["DP"][0] <= first.estimate["DP"] <= first.ci["DP"][1]
    # the same replicates on one BLAS thread as on several, weighted or not
    from threadpoolctl import threadpool_limits

    for weights in (w, None):
        runs = []
        for threads in (1, 2):
            with threadpool_limits(limits=threads):
                runs.append(b.bootstrap(b.fairness_metrics, y, p, sensitive_features=g, sample_weight=weights,
                                        n_boot=300, random_state=2).replicates)
        pd_testing = pytest.importorskip("pandas").testing
        pd_testing.assert_frame_equal(runs[0], runs[1])


def test_acceleration_equals_row_jackknife():
    """The count-weighted jackknife over cells equals the ordinary jackknife over the expanded rows."""
    rng = np.random.default_rng(1)
    values = rng.normal(size=6)
    counts = np.array([3, 1, 4, 1, 5, 9])
    rows = np.repeat(values, counts)
    u = rows.mean() - rows
    expected = (u**3).sum() / (6 * ((u**2).sum()) ** 1.5)
    assert acceleration(values, counts.astype(float)) == pytest.approx(expected, rel=1e-12)


def test_band_holds_every_part_and_is_simultaneous():
    rng = np.random.default_rng(2)
    est = np.zeros(5)
    reps = rng.normal(size=(4000, 5))
    parts = Parts(est, reps, None, est, lambda lo, hi: (lo, hi), np.mean)
    lo, hi, c = band(parts, 0.95)
    assert np.all(lo <= est) and np.all(est <= hi)
    # the max-t critical value of 5 independent normals: Φ⁻¹(1 − 0.05/10) ≈ 2.57 (Šidák ≈ 2.568)
    assert c == pytest.approx(sst.norm.ppf((1 + 0.95 ** (1 / 5)) / 2), abs=0.08)


# --------------------------------------------------------------------------- #
# bootstrap: invariance, estimates, intervals
# --------------------------------------------------------------------------- #
def test_same_interval_for_any_row_order():
    y, p, g = _fair()
    perm = np.random.default_rng(9).permutation(len(y))
    r1 = b.bootstrap(b.fairness_metrics, y, p, sensitive_features=g, n_boot=300, random_state=4)
    r2 = b.bootstrap(b.fairness_metrics, y[perm], p[perm], sensitive_features=g[perm], n_boot=300, random_state=4)
    assert r1.ci == r2.ci
    a, t, ap, tp = _cooc()
    d1 = b.bootstrap(b.bias_amp_directional, a, t, attr_pred=ap, task_pred=tp, n_boot=300, random_state=4)
    d2 = b.bootstrap(b.bias_amp_directional, a[perm], t[perm], attr_pred=ap[perm], task_pred=tp[perm], n_boot=300,
                     random_state=4)
    assert d1.ci == d2.ci
    assert d1.p_value == d2.p_value and d1.p_global == d2.p_global


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(40, 400), gap=st.floats(0, 0.4))
@example(seed=4323, n=40, gap=0.0)  # a class's rate defined in a single replicate (once a warning)
def test_every_auto_interval_holds_its_estimate(seed, n, gap):
    y, p, g = _fair(seed, n, gap, k=3, groups=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        try:
            res = b.bootstrap(b.fairness_metrics, y, p, sensitive_features=g, n_boot=200, random_state=seed)
        except ValueError:  # a metric undefined for every class on a tiny sample
            return
        for name, est in res.estimate.items():
            lo, hi = res.ci[name]
            assert lo <= est <= hi, (name, est, lo, hi, res.methods[name])
            assert lo >= 0 and hi <= 1
        a, t, ap, tp = _cooc(seed, n)
        try:
            d = b.bootstrap(b.bias_amp_directional, a, t, attr_pred=ap, task_pred=tp, n_boot=200,
                            random_state=seed)
        except ValueError:
            return
        for name, est in d.estimate.items():
            lo, hi = d.ci[name]
            assert lo <= est <= hi, (name, est, lo, hi, d.methods[name])


def test_methods_and_band_validity_at_zero():
    """With no disparity at all (predictions independent of group) DP's interval starts at 0."""
    rng = np.random.default_rng(5)
    n = 4000
    g, y = rng.integers(0, 3, n), rng.integers(0, 2, n)
    p = rng.integers(0, 2, n)
    res = b.bootstrap(b.fairness_metrics, y, p, sensitive_features=g, n_boot=400, random_state=0)
    assert res.methods["DP"] == "max-t band" and res.ci["DP"][0] == 0.0
    pct = b.bootstrap(b.fairness_metrics, y, p, sensitive_features=g, n_boot=400, random_state=0,
                      ci_method="percentile")
    assert pct.ci["DP"][0] > 0  # the percentile interval excludes the truth 0: why "auto" avoids it
    a, t, ap, tp = _cooc()
    d = b.bootstrap(b.bias_amp_directional, a, t, attr_pred=ap, task_pred=tp, n_boot=300, random_state=0)
    assert set(d.methods.values()) <= {"BCa", "normal (fallback)"}
    for method in ("percentile", "basic", "bca"):
        r = b.bootstrap(b.bias_amp_directional, a, t, attr_pred=ap, task_pred=tp, n_boot=300, random_state=0,
                        ci_method=method)
        assert r.ci_method == method


def test_zero_width_interval_is_explained():
    a, t, _, _ = _cooc()
    res = b.bootstrap(b.bias_amp_directional, a, t, attr_pred=a, task_pred=t, n_boot=100, random_state=0)
    assert res.ci["T->A"] == (0.0, 0.0)
    assert any("width 0" in note for note in res.notes)


# --------------------------------------------------------------------------- #
# tests of no effect
# --------------------------------------------------------------------------- #
def test_mcnemar_p_values_per_pair_by_hand():
    a, t, ap, tp = _cooc(3)
    res = b.bootstrap(b.bias_amp_directional, a, t, attr_pred=ap, task_pred=tp, n_boot=50, random_state=0)
    table = res.tables["A->T"]
    row = table[(table["attr"] == 1) & (table["task"] == 0)].iloc[0]
    members = a == 1
    b_ = int(((t[:, 0] == 1) & (tp[:, 0] == 0) & members).sum())
    c_ = int(((t[:, 0] == 0) & (tp[:, 0] == 1) & members).sum())
    assert row["p_value"] == pytest.approx(sst.binomtest(min(b_, c_), b_ + c_, 0.5).pvalue, rel=1e-10)
    assert row["delta"] == pytest.approx((c_ - b_) / members.sum(), abs=1e-12)
    holm = np.minimum(1, np.maximum.accumulate(np.sort(table["p_value"]) * np.arange(len(table), 0, -1)))
    np.testing.assert_allclose(np.sort(table["p_adjusted"]), holm)
    assert res.p_global["A->T"] == pytest.approx(holm.min())
    # T->A: among the positives of task t, Â_a vs A_a
    t_table = res.tables["T->A"]
    row = t_table[(t_table["attr"] == 0) & (t_table["task"] == 2)].iloc[0]
    pos = t[:, 2] == 1
    b_ = int(((a == 0) & (ap != 0) & pos).sum())
    c_ = int(((a != 0) & (ap == 0) & pos).sum())
    assert row["p_value"] == pytest.approx(sst.binomtest(min(b_, c_), b_ + c_, 0.5).pvalue, rel=1e-10)


def test_fairness_p_values_match_the_g_test():
    y, p, g = _fair(seed=1, n=3000, k=3, groups=3)
    res = b.bootstrap(b.fairness_metrics, y, p, sensitive_features=g, n_boot=50, random_state=0)
    for cls in range(3):
        table = np.array([[((g == gg) & (p != cls)).sum(), ((g == gg) & (p == cls)).sum()] for gg in range(3)])
        _, ref, *_ = sst.chi2_contingency(table, correction=False, lambda_="log-likelihood")
        assert res.tables["DP"].loc[cls, "p_value"] == pytest.approx(ref, rel=1e-9)
        pos = y == cls
        table = np.array([[((g == gg) & pos & (p != cls)).sum(), ((g == gg) & pos & (p == cls)).sum()]
                          for gg in range(3)])
        _, ref, *_ = sst.chi2_contingency(table, correction=False, lambda_="log-likelihood")
        assert res.tables["EOTP"].loc[cls, "p_value"] == pytest.approx(ref, rel=1e-9)
    assert res.p_global["BA"] is None
    bh = b.bootstrap(b.fairness_metrics, y, p, sensitive_features=g, n_boot=50, random_state=0, p_adjust="bh")
    assert (bh.tables["DP"]["p_adjusted"] <= res.tables["DP"]["p_adjusted"] + 1e-15).all()


def test_global_p_is_the_smallest_p_adjusted_of_the_chosen_adjustment():
    # a weak effect on one pair of three: the Holm (Bonferroni) and BH (Simes) global tests differ
    y, p, g = _fair(seed=3, n=600, k=3, groups=2)
    for adjust in ("holm", "bh"):
        res = b.bootstrap(b.fairness_metrics, y, p, sensitive_features=g, n_boot=30, random_state=0, p_adjust=adjust)
        for name, table in res.tables.items():
            if "p_adjusted" in table and res.p_global[name] is not None:
                assert res.p_global[name] == pytest.approx(np.nanmin(table["p_adjusted"]), rel=1e-12, abs=0)
        raw = np.sort(res.tables["DP"]["p_value"].dropna().to_numpy())
        m = raw.size
        expected = min(1.0, m * raw[0]) if adjust == "holm" else min(1.0, (m / np.arange(1, m + 1) * raw).min())
        assert res.p_global["DP"] == pytest.approx(expected, rel=1e-12)



def test_bootstrap_argument_errors():
    y, p, g = _fair()
    with pytest.raises(ValueError, match="p_adjust"):
        b.bootstrap(b.demographic_parity, y, p, sensitive_features=g, p_adjust="bonferroni")
    with pytest.raises(ValueError, match="random_state"):
        b.bootstrap(b.demographic_parity, y, p, sensitive_features=g, random_state=-1)
    with pytest.raises(TypeError, match="random_state"):
        b.bootstrap(b.demographic_parity, y, p, sensitive_features=g, random_state=1.5)
    with pytest.raises(ValueError, match="ci_method"):
        b.bootstrap(b.demographic_parity, y, p, sensitive_features=g, ci_method="studentized")


def test_multi_bias_amp_bootstrap_estimates_order_and_mals():
    a, t, ap, tp = _cooc(6, 1200)
    rng = np.random.default_rng(7)
    at = rng.integers(0, 2, 1200)
    tt = (rng.random((1200, 4)) < 0.3 + 0.2 * at[:, None]).astype(int)
    kw = dict(attr_train=at, task_train=tt, n_boot=200, random_state=1)
    res = b.bootstrap(b.multi_bias_amp, a, t, attr_pred=ap, task_pred=tp, **kw)
    point = b.multi_bias_amp(a, t, attr_pred=ap, task_pred=tp, attr_train=at, task_train=tt)
    for name, part in (("Multi_MALS", point.mals), ("G->M", point.g_to_m), ("M->G", point.m_to_g)):
        assert res.estimate[name] == pytest.approx(part.value, abs=1e-12)
        assert res.estimate[name + " raw"] == pytest.approx(part.raw, abs=1e-12)
        assert res.methods[name] == "max-t band" and res.ci[name][0] >= 0
    perm = rng.permutation(1200)
    again = b.bootstrap(b.multi_bias_amp, a[perm], t[perm], attr_pred=ap[perm], task_pred=tp[perm], **kw)
    assert again.ci == res.ci
    mals = b.bootstrap(b.bias_amp_mals, at, tt, attr_pred=ap, task_pred=tp, n_boot=200, random_state=1, attr_train=at, task_train=tt)
    mals_perm = b.bootstrap(b.bias_amp_mals, at, tt, attr_pred=ap[perm], task_pred=tp[perm], n_boot=200,
                            random_state=1, attr_train=at, task_train=tt)
    assert mals.ci == mals_perm.ci


# --------------------------------------------------------------------------- #
# an undefined statistic gets no interval, with a note (docs: def-undefined)
# --------------------------------------------------------------------------- #
def test_bootstrap_of_a_partly_undefined_call():
    a = np.array([0, 0, 1, 1, 0, 1])
    t = np.zeros((6, 1), int)
    tt = np.array([[1], [0], [1], [0], [0], [0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        res = b.bootstrap(b.bias_amp_directional, a, t, attr_pred=a, task_pred=t, attr_train=a, task_train=tt,
                          n_boot=50, random_state=0)
    assert res.estimate == {"A->T": 0.0} and list(res.ci) == ["A->T"] and res.value == 0.0
    assert any(note.startswith("T->A undefined, no interval: no task has a positive test instance")
               for note in res.notes)
    with pytest.raises(ValueError, match="every statistic asked for is undefined"):
        b.bootstrap(b.bias_amp_directional, a, t, attr_pred=a, attr_train=a, task_train=tt, n_boot=50)


def test_fill_replicates_shares_parts_only_while_they_are_one_array():
    """Two statistics whose parts are the same array share storage; when a later chunk differs, they separate."""
    from types import SimpleNamespace

    from biasamp._engine.bootstrap import fill_replicates

    def stat(name):
        return SimpleNamespace(name=name, parts=SimpleNamespace(estimate=np.zeros(2)))

    def plan(split_at):
        def parts(tables):
            x = tables[:, 0, :2].copy()
            same = tables[0, 0, 0] < split_at
            return {"a": x, "a raw": x if same else x + 100.0, "b": x.copy()}
        return SimpleNamespace(parts=parts, values=lambda tables: dict.fromkeys(("a", "a raw", "b"), tables[:, 0, 0]))

    chunks = [(slice(0, 2), np.arange(12.0).reshape(2, 2, 3)), (slice(2, 4), 20 + np.arange(12.0).reshape(2, 2, 3))]
    stats = [stat("a"), stat("a raw"), stat("b")]
    fill_replicates(plan(split_at=np.inf), stats, iter(chunks), 4)
    assert stats[1].parts.replicates is stats[0].parts.replicates
    assert stats[2].parts.replicates is not stats[0].parts.replicates
    np.testing.assert_array_equal(stats[0].parts.replicates, [[0, 1], [6, 7], [20, 21], [26, 27]])
    stats = [stat("a"), stat("a raw"), stat("b")]
    fill_replicates(plan(split_at=10), stats, iter(chunks), 4)  # the second chunk gives "a raw" its own array
    np.testing.assert_array_equal(stats[0].parts.replicates, [[0, 1], [6, 7], [20, 21], [26, 27]])
    np.testing.assert_array_equal(stats[1].parts.replicates, [[0, 1], [6, 7], [120, 121], [126, 127]])
    np.testing.assert_array_equal(stats[2].parts.replicates, stats[0].parts.replicates)
