"""Tests of biasamp._engine.pvalues: independence tests, exact McNemar, multiplicity adjustment.

References used as independent oracles: scipy.stats.chi2_contingency (G statistic),
scipy.stats.fisher_exact (2 x 2 exact test), scipy.stats.binomtest (McNemar),
a brute-force enumeration of the Freeman-Halton exact test (Monte-Carlo branch),
hand computations and the worked example of Benjamini & Hochberg (1995).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats

# scipy's results are indexed as tuples ([0] statistic, [1] p-value): the named
# attributes (.statistic / .pvalue) of chi2_contingency and fisher_exact need
# scipy >= 1.10, above the declared floor (.ci/min_versions.sh).
from biasamp._engine import pvalues as _pvalues
from biasamp._engine.pvalues import (
    TestResult,
    _monte_carlo_pvalue,
    adjust_pvalues,
    global_p_value,
    independence_test,
    mcnemar_exact,
)

FAST = settings(max_examples=40, deadline=None)


def tables(min_rows: int = 2, max_rows: int = 5, max_count: int = 40):
    """Strategy: one (n_groups, 2) count table."""
    return st.integers(min_rows, max_rows).flatmap(
        lambda g: hnp.arrays(np.int64, (g, 2), elements=st.integers(0, max_count))
    )


def has_positive_margins(t: np.ndarray) -> bool:
    return bool((t.sum(axis=1) > 0).all() and (t.sum(axis=0) > 0).all())


def freeman_halton_exact(table: np.ndarray) -> float:
    """Brute force: sum of the null probabilities of all r x 2 tables with the observed
    margins that are at most (1 + 1e-7) times as probable as the observed one."""
    r = table.sum(axis=1)
    c1 = int(table[:, 1].sum())
    n = int(r.sum())

    def prob(x):
        return math.prod(math.comb(int(ri), int(xi)) for ri, xi in zip(r, x)) / math.comb(n, c1)

    p_obs = prob(table[:, 1])
    total = 0.0
    for x in itertools.product(*(range(int(ri) + 1) for ri in r)):
        if sum(x) == c1:
            px = prob(x)
            if px <= p_obs * (1 + 1e-7):
                total += px
    return min(total, 1.0)


# --------------------------------------------------------------------------- #
# independence_test: G-test branch
# --------------------------------------------------------------------------- #
@FAST
@given(tables(max_count=60))
def test_g_test_matches_scipy_log_likelihood_chi2(table):
    if not has_positive_margins(table):
        return
    ref = stats.chi2_contingency(table, correction=False, lambda_="log-likelihood")
    res = independence_test(table, min_expected=0)
    assert str(res.method) == "g-test" and bool(res.defined)
    assert float(res.statistic) == pytest.approx(ref[0], rel=1e-9, abs=1e-9)
    assert float(res.p_value) == pytest.approx(ref[1], rel=1e-9, abs=1e-12)


def test_g_test_hand_value_and_default_threshold():
    # G = 2 Σ O ln(O/E) with E = 60, 40 / 60, 40 (row totals 100, column totals 120, 80)
    table = np.array([[70, 30], [50, 50]])
    expected = 2 * (70 * math.log(70 / 60) + 30 * math.log(30 / 40) + 50 * math.log(50 / 60) + 50 * math.log(50 / 40))
    res = independence_test(table)
    assert str(res.method) == "g-test"  # every expected count >= 5
    assert float(res.statistic) == pytest.approx(expected, rel=1e-12)
    assert float(res.p_value) == pytest.approx(stats.chi2.sf(expected, 1), rel=1e-10)


def test_empty_rows_are_ignored_and_do_not_count_in_df():
    table = np.array([[20, 10], [15, 15], [5, 25]])
    ref = stats.chi2_contingency(table, correction=False, lambda_="log-likelihood")
    padded = np.array([[0, 0], [20, 10], [0, 0], [15, 15], [5, 25], [0, 0]])
    res = independence_test(padded)
    assert str(res.method) == "g-test"
    assert float(res.statistic) == pytest.approx(ref[0], rel=1e-12)
    assert float(res.p_value) == pytest.approx(ref[1], rel=1e-10)  # df = 2, not 5


def test_undefined_and_degenerate_tables():
    res = independence_test([[[0, 0], [4, 6]], [[0, 0], [0, 0]], [[5, 0], [7, 0]], [[0, 3], [0, 9]]])
    assert res.method.tolist() == ["undefined", "undefined", "degenerate", "degenerate"]
    assert res.defined.tolist() == [False, False, True, True]
    assert np.isnan(res.p_value[:2]).all() and np.isnan(res.statistic[:2]).all()
    assert res.p_value[2:].tolist() == [1.0, 1.0] and res.statistic[2:].tolist() == [0.0, 0.0]


def test_no_groups_and_empty_batch():
    assert str(independence_test(np.zeros((0, 2), int)).method) == "undefined"
    res = independence_test(np.zeros((0, 3, 2), int))
    assert res.p_value.shape == (0,) and res.method.shape == (0,)


# --------------------------------------------------------------------------- #
# independence_test: Fisher exact branch (two non-empty groups)
# --------------------------------------------------------------------------- #
def test_fisher_lady_tasting_tea_hand_value():
    # margins 4/4, 4/4: P(a) = C(4,a) C(4,4-a) / 70 = [1, 16, 36, 16, 1] / 70; observed a = 1
    res = independence_test([[3, 1], [1, 3]])
    assert str(res.method) == "fisher-exact"
    assert float(res.p_value) == pytest.approx(34 / 70, rel=1e-12)


def test_fisher_scipy_documented_example():
    res = independence_test([[2, 8], [5, 1]])  # rows: groups; scipy's [[8, 2], [1, 5]] transposed
    assert float(res.p_value) == pytest.approx(0.034965034965034975, rel=1e-10)


@FAST
@given(hnp.arrays(np.int64, (2, 2), elements=st.integers(0, 30)))
def test_fisher_matches_scipy(table):
    if not has_positive_margins(table):
        return
    res = independence_test(table, min_expected=np.inf)
    assert str(res.method) == "fisher-exact"
    assert float(res.p_value) == pytest.approx(stats.fisher_exact(table)[1], rel=1e-9, abs=1e-14)


def test_fisher_with_empty_rows_and_wide_support_in_a_batch():
    small = np.array([[0, 0], [40, 2], [0, 0], [3, 4]])
    # a wide support (min(r1, r2, c0, c1) + 1 = 1001 points) with an expected count of 3 < 5
    wide = np.array([[0, 0], [3000, 1], [997_000, 999], [0, 0]])
    res = independence_test(np.stack([small, wide]))
    assert res.method.tolist() == ["fisher-exact", "fisher-exact"]
    for got, t in zip(res.p_value, (small, wide)):
        ref = stats.fisher_exact(t[t.sum(axis=1) > 0])[1]
        assert got == pytest.approx(ref, rel=1e-7, abs=1e-300)


def test_blockwise_loops_give_the_same_answers(monkeypatch):
    batch = np.array([
        [[3, 1], [1, 3], [0, 0], [0, 0]],
        [[0, 0], [3000, 1], [997_000, 999], [0, 0]],  # a support of 1001 points
        [[9, 1], [5, 5], [2, 8], [0, 0]],
    ])
    whole = independence_test(batch, random_state=0)
    monkeypatch.setattr(_pvalues, "_BLOCK", 256)  # supports and draws split across many blocks
    blocks = independence_test(batch, random_state=0)
    assert blocks.method.tolist() == ["fisher-exact", "fisher-exact", "monte-carlo"]
    np.testing.assert_allclose(blocks.p_value[:2], whole.p_value[:2], rtol=1e-12)  # exact branch
    assert abs(blocks.p_value[2] - whole.p_value[2]) <= 0.02  # other draws, same distribution
    assert abs(blocks.p_value[2] - freeman_halton_exact(batch[2, :3])) <= 0.02


# --------------------------------------------------------------------------- #
# independence_test: Monte-Carlo branch (more than two groups, small counts)
# --------------------------------------------------------------------------- #
@settings(max_examples=20, deadline=None)
@given(hnp.arrays(np.int64, (3, 2), elements=st.integers(0, 6)), st.integers(0, 2**32 - 1))
def test_monte_carlo_close_to_exact_freeman_halton(table, seed):
    if not has_positive_margins(table):
        return
    res = independence_test(table, random_state=seed, min_expected=np.inf)
    assert str(res.method) == "monte-carlo"
    # 9999 draws: standard error <= 0.005
    assert abs(float(res.p_value) - freeman_halton_exact(table)) <= 0.02


def test_monte_carlo_on_two_row_tables_matches_fisher():
    rng = np.random.default_rng(2024)
    r = rng.integers(1, 15, size=(60, 2))
    x = rng.binomial(r, rng.uniform(0.1, 0.9, size=(60, 1)))
    keep = (x.sum(axis=1) > 0) & (x.sum(axis=1) < r.sum(axis=1))
    x, r = x[keep], r[keep]
    p_mc = _monte_carlo_pvalue(x, r, 9999, np.random.default_rng(7))
    p_exact = np.array([stats.fisher_exact(np.column_stack([ri - xi, xi]))[1] for xi, ri in zip(x, r)])
    assert np.abs(p_mc - p_exact).max() <= 0.02


def test_monte_carlo_calibration_under_the_null():
    # 300 tables of 4 groups (sizes 3, 5, 8, 12) with a common rate 0.25: H0 holds
    rng = np.random.default_rng(11)
    sizes = np.array([3, 5, 8, 12])
    ones = rng.binomial(sizes, 0.25, size=(300, 4))
    table = np.stack([sizes - ones, ones], axis=-1)
    res = independence_test(table, random_state=3, n_resamples=999)
    mc = res.method == "monte-carlo"
    assert mc.sum() >= 290  # expected counts are below 5: nearly every table needs the simulation
    assert np.mean(res.p_value <= 0.05) <= 0.07


def test_monte_carlo_detects_a_strong_effect():
    res = independence_test([[10, 0], [10, 0], [0, 10]], random_state=0, n_resamples=999)
    assert str(res.method) == "monte-carlo"
    assert float(res.p_value) <= 2 / 1000  # (1 + #extreme) / (1 + B), no draw as extreme w.h.p.


def test_monte_carlo_refuses_tables_beyond_the_sampler_range():
    with pytest.raises(ValueError, match="table: the Monte-Carlo test .* at most"):
        independence_test([[10**9, 0], [5, 5], [3, 3]], random_state=0)


def test_monte_carlo_is_reproducible():
    table = np.array([[9, 1], [5, 5], [2, 8], [4, 1]])
    a = independence_test(table, random_state=5)
    b = independence_test(table, random_state=5)
    c = independence_test(table, random_state=np.random.default_rng(5))
    assert float(a.p_value) == float(b.p_value) == float(c.p_value)
    d = independence_test(table, random_state=None)  # fresh entropy: a valid p-value, close to the others
    assert abs(float(d.p_value) - float(a.p_value)) <= 0.02
    # the grid of a Monte-Carlo p-value is (1 + k) / (1 + n_resamples)
    k = float(a.p_value) * 10000 - 1
    assert k == pytest.approx(round(k), abs=1e-6)


@settings(max_examples=25, deadline=None)
@given(tables(min_rows=3, max_rows=5, max_count=8), st.data())
def test_monte_carlo_exactly_invariant_to_row_order_and_column_swap(table, data):
    perm = data.draw(st.permutations(range(table.shape[0])))
    base = independence_test(table, random_state=1, n_resamples=499, min_expected=np.inf)
    permuted = independence_test(table[list(perm)], random_state=1, n_resamples=499, min_expected=np.inf)
    swapped = independence_test(table[:, ::-1], random_state=1, n_resamples=499, min_expected=np.inf)
    assume(str(base.method) == "monte-carlo")  # at least 3 non-empty rows and both outcomes seen
    assert str(base.method) == str(permuted.method) == str(swapped.method)
    np.testing.assert_array_equal(base.p_value, permuted.p_value)
    np.testing.assert_array_equal(base.p_value, swapped.p_value)


# --------------------------------------------------------------------------- #
# independence_test: properties over every branch
# --------------------------------------------------------------------------- #
@FAST
@given(tables(min_rows=1, max_rows=5, max_count=30), st.data())
def test_invariant_to_row_permutation_and_column_swap(table, data):
    perm = list(data.draw(st.permutations(range(table.shape[0]))))
    results = [
        independence_test(t, random_state=0, n_resamples=999)
        for t in (table, table[perm], table[:, ::-1], table[perm][:, ::-1])
    ]
    for res in results[1:]:
        assert str(res.method) == str(results[0].method)
        np.testing.assert_allclose(res.statistic, results[0].statistic, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(res.p_value, results[0].p_value, rtol=1e-9, atol=1e-12)


@FAST
@given(hnp.arrays(np.int64, st.tuples(st.integers(1, 3), st.integers(1, 4), st.just(2)), elements=st.integers(0, 25)))
def test_p_values_in_unit_interval_and_nan_only_when_undefined(batch):
    res = independence_test(batch, random_state=0, n_resamples=199)
    assert res.p_value.shape == batch.shape[:-2] == res.method.shape == res.defined.shape
    assert np.array_equal(np.isnan(res.p_value), ~res.defined)
    assert np.array_equal(res.method == "undefined", ~res.defined)
    p = res.p_value[res.defined]
    assert ((p >= 0) & (p <= 1)).all()
    assert (res.statistic[res.defined] >= 0).all()


def test_batch_equals_table_by_table():
    rng = np.random.default_rng(0)
    batch = rng.integers(0, 30, size=(2, 3, 2, 2))
    batch[0, 0] = [[1, 2], [3, 0]]  # small counts: Fisher
    res = independence_test(batch)
    assert res.p_value.shape == (2, 3)
    for idx in np.ndindex(2, 3):
        one = independence_test(batch[idx])
        assert res.p_value[idx] == pytest.approx(float(one.p_value), rel=1e-12)
        assert res.method[idx] == str(one.method)


def test_counts_within_tolerance_of_integers_are_accepted():
    table = np.array([[3.0, 1.0], [1.0, 3.0 + 1e-12]])
    assert float(independence_test(table).p_value) == pytest.approx(34 / 70)


def test_result_is_frozen_readable_and_converts():
    res = independence_test([[[3, 1], [1, 3]], [[0, 0], [1, 1]]])
    assert isinstance(res, TestResult)
    with pytest.raises(AttributeError):
        res.p_value = None
    with pytest.raises(ValueError, match="read-only"):
        res.p_value[0] = 0.0
    frame = res.to_frame()
    assert list(frame.columns) == ["statistic", "p_value", "method", "defined"]
    assert frame["method"].tolist() == ["fisher-exact", "undefined"]
    assert res.to_dict()["p_value"][1] is None
    assert "fisher-exact" in repr(res)


@pytest.mark.parametrize(
    ("table", "error", "match"),
    [
        ([[1, -2], [3, 4]], ValueError, "table contains negative"),
        ([[1, np.nan], [3, 4]], ValueError, "table contains non-finite"),
        ([[1, np.inf], [3, 4]], ValueError, "table contains non-finite"),
        ([[1.5, 2], [3, 4]], ValueError, r"table contains non-integer .*hard predictions"),
        ([[1, 2, 3], [3, 4, 5]], ValueError, r"table must have shape \(\.\.\., n_groups, 2\)"),
        ([1, 2], ValueError, "table must have shape"),
        ([["a", "b"], ["c", "d"]], TypeError, "table must hold numbers"),
    ],
)
def test_table_validation(table, error, match):
    with pytest.raises(error, match=match):
        independence_test(table)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"random_state": -1}, ValueError, "random_state"),
        ({"random_state": 1.5}, TypeError, "random_state"),
        ({"random_state": True}, TypeError, "random_state"),
        ({"random_state": "seed"}, TypeError, "random_state"),
        ({"n_resamples": 0}, ValueError, "n_resamples"),
        ({"n_resamples": 10.0}, ValueError, "n_resamples"),
        ({"min_expected": -1}, ValueError, "min_expected"),
        ({"min_expected": float("nan")}, ValueError, "min_expected"),
    ],
)
def test_option_validation_is_eager(kwargs, error, match):
    # checked even though this large table never reaches the Monte-Carlo branch
    with pytest.raises(error, match=match):
        independence_test([[70, 30], [50, 50]], **kwargs)


# --------------------------------------------------------------------------- #
# mcnemar_exact
# --------------------------------------------------------------------------- #
def test_mcnemar_hand_values():
    # b = 10, c = 2: p = 2 (C(12,0) + C(12,1) + C(12,2)) / 2**12 = 158 / 4096
    res = mcnemar_exact([10, 2, 3, 0], [2, 10, 3, 0])
    np.testing.assert_allclose(res.p_value, [158 / 4096, 158 / 4096, 1.0, 1.0], rtol=1e-12)
    assert res.statistic.tolist() == [2.0, 2.0, 3.0, 0.0]
    assert res.method.tolist() == ["mcnemar-exact"] * 3 + ["degenerate"]
    assert res.defined.all()


@FAST
@given(st.integers(0, 300), st.integers(0, 300))
def test_mcnemar_matches_binomtest(b, c):
    res = mcnemar_exact(b, c)
    assert res.p_value.shape == ()
    if b + c == 0:
        assert float(res.p_value) == 1.0
    else:
        ref = stats.binomtest(b, b + c, 0.5).pvalue
        assert float(res.p_value) == pytest.approx(ref, rel=1e-9, abs=1e-300)
        assert float(res.p_value) == float(mcnemar_exact(c, b).p_value)  # symmetric


def test_mcnemar_broadcasts():
    b = np.arange(3)[:, None]
    c = np.arange(4)
    res = mcnemar_exact(b, c)
    assert res.p_value.shape == (3, 4)
    assert res.p_value[2, 3] == pytest.approx(stats.binomtest(2, 5, 0.5).pvalue)


@pytest.mark.parametrize(
    ("b", "c", "match"),
    [
        (-1, 2, "b contains negative"),
        (1, 2.5, r"c contains non-integer .*hard predictions"),
        (np.nan, 2, "b contains non-finite"),
        ([1, 2], [1, 2, 3], "b and c must have broadcastable shapes"),
    ],
)
def test_mcnemar_validation(b, c, match):
    with pytest.raises(ValueError, match=match):
        mcnemar_exact(b, c)


# --------------------------------------------------------------------------- #
# adjust_pvalues and global_p_value
# --------------------------------------------------------------------------- #
def test_holm_and_bh_hand_values():
    p = [0.01, 0.04, 0.03, 0.005]
    # sorted .005 .01 .03 .04; Holm: 4(.005) 3(.01) 2(.03) 1(.04) = .02 .03 .06 .04 -> cummax
    np.testing.assert_allclose(adjust_pvalues(p, method="holm"), [0.03, 0.06, 0.06, 0.02], rtol=1e-12)
    # BH: m p/j = .02 .02 .04 .04 -> cummin from the top
    np.testing.assert_allclose(adjust_pvalues(p, method="bh"), [0.02, 0.04, 0.04, 0.02], rtol=1e-12)
    np.testing.assert_array_equal(adjust_pvalues(p, method="none"), p)
    assert global_p_value(p) == pytest.approx(0.02)


def test_benjamini_hochberg_1995_worked_example():
    # the 15 p-values of Benjamini & Hochberg (1995, §4): at level 0.05 the FDR procedure
    # rejects 4 hypotheses, the Bonferroni-type (Holm) procedure 3
    p = [0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459,
         0.3240, 0.4262, 0.5719, 0.6528, 0.7590, 1.0000]
    assert (adjust_pvalues(p, method="bh") <= 0.05).sum() == 4
    assert (adjust_pvalues(p, method="holm") <= 0.05).sum() == 3


def test_nan_entries_stay_nan_and_do_not_count():
    p = [0.01, np.nan, 0.04]
    np.testing.assert_allclose(adjust_pvalues(p), [0.02, np.nan, 0.04])
    np.testing.assert_allclose(adjust_pvalues(p, method="bh"), [0.02, np.nan, 0.04])
    assert global_p_value(p) == pytest.approx(0.02)
    assert math.isnan(global_p_value([np.nan, np.nan]))
    assert math.isnan(global_p_value([]))
    assert adjust_pvalues([]).shape == (0,)


def test_ties_get_equal_adjusted_values():
    np.testing.assert_allclose(adjust_pvalues([0.02, 0.02, 0.5]), [0.06, 0.06, 0.5])
    np.testing.assert_allclose(adjust_pvalues([0.02, 0.02, 0.5], method="bh"), [0.03, 0.03, 0.5])


pvalue_arrays = hnp.arrays(
    np.float64,
    st.integers(0, 30),
    elements=st.one_of(st.floats(0, 1), st.just(np.nan), st.sampled_from([0.0, 1.0, 0.05])),
)


@FAST
@given(pvalue_arrays, st.sampled_from(["holm", "bh"]))
def test_adjusted_bounds_and_monotone_in_sorted_order(p, method):
    adj = adjust_pvalues(p, method=method)
    ok = ~np.isnan(p)
    assert np.array_equal(np.isnan(adj), ~ok)
    assert (adj[ok] >= p[ok]).all() and (adj[ok] <= 1).all()
    order = np.argsort(p[ok], kind="stable")
    assert (np.diff(adj[ok][order]) >= 0).all()


@FAST
@given(pvalue_arrays, st.randoms(use_true_random=False))
def test_adjustment_properties(p, random):
    holm = adjust_pvalues(p, method="holm")
    bh = adjust_pvalues(p, method="bh")
    ok = ~np.isnan(p)
    assert (bh[ok] <= holm[ok] + 1e-15).all()  # m/i <= m - i + 1: BH never adjusts more than Holm
    perm = list(range(p.size))
    random.shuffle(perm)
    np.testing.assert_array_equal(adjust_pvalues(p[perm], method="holm"), holm[perm])
    np.testing.assert_array_equal(adjust_pvalues(p[perm], method="bh"), bh[perm])
    m = int(ok.sum())
    if m:
        assert global_p_value(p) == pytest.approx(np.nanmin(holm))
        assert global_p_value(p) == pytest.approx(min(1.0, m * np.nanmin(p)))
    else:
        assert math.isnan(global_p_value(p))


@FAST
@given(hnp.arrays(np.float64, st.integers(1, 25), elements=st.floats(0, 1)), st.sampled_from(["holm", "bh"]))
def test_matches_statsmodels(p, method):
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    ref = multitest.multipletests(p, method={"holm": "holm", "bh": "fdr_bh"}[method])[1]
    np.testing.assert_allclose(adjust_pvalues(p, method=method), ref, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize(
    ("p", "kwargs", "error", "match"),
    [
        ([0.1, 0.2], {"method": "bonferroni"}, ValueError, "method must be one of"),
        ([0.1, 0.2], {"method": None}, ValueError, "method must be one of"),
        ([0.1, 1.2], {}, ValueError, r"p must hold p-values in \[0, 1\]"),
        ([-0.1, 0.2], {}, ValueError, r"p must hold p-values in \[0, 1\]"),
        ([np.inf, 0.2], {}, ValueError, r"p must hold p-values in \[0, 1\]"),
        ([[0.1, 0.2]], {}, ValueError, "p must be 1-D"),
        (["a", "b"], {}, TypeError, "p must be a 1-D array of p-values"),
    ],
)
def test_adjust_validation(p, kwargs, error, match):
    with pytest.raises(error, match=match):
        adjust_pvalues(p, **kwargs)


def test_global_p_value_validation():
    with pytest.raises(ValueError, match=r"p must hold p-values in \[0, 1\]"):
        global_p_value([0.5, 2.0])
