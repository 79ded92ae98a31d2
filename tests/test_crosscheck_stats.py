"""Cross-checks of the hand-written statistics against the libraries that define them.

Each statistic of :mod:`biasamp._engine.intervals` and :mod:`biasamp._engine.pvalues` is
compared, on the same inputs, with its reference implementation, to 1e-11
relative (or better):

* percentile, basic and BCa bootstrap intervals: ``scipy.stats.bootstrap``
  fed *the same replicates* (its ``bootstrap_result`` argument with
  ``n_resamples=0``, scipy >= 1.11), on a statistic whose leave-one-row-out
  jackknife scipy recomputes from the rows (the mean of a sample with few
  distinct values: biasamp's jackknife is one value per cell, weighted by the
  cell's count, which is the row jackknife of the rows of that cell);
* Holm and Benjamini-Hochberg adjustment: ``statsmodels.stats.multitest.multipletests``;
* the exact McNemar test: ``statsmodels.stats.contingency_tables.mcnemar(exact=True)``;
* the G-test: ``scipy.stats.chi2_contingency(lambda_="log-likelihood", correction=False)``;
* Fisher's exact test (2 x 2): ``scipy.stats.fisher_exact``.

statsmodels is a test dependency (the ``dev`` extra); the tests that need it
skip where it is absent (the no-extras CI step).
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from scipy import stats

from biasamp._engine.intervals import Statistic, interval
from biasamp._engine.pvalues import adjust_pvalues, independence_test, mcnemar_exact

RTOL = 1e-11

needs_bootstrap_result = pytest.mark.skipif(
    "bootstrap_result" not in inspect.signature(stats.bootstrap).parameters,
    reason="scipy.stats.bootstrap(bootstrap_result=...) needs scipy >= 1.11",
)


def _sample(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows with a few distinct values (the cells), their distinct values and counts."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(25, 80))
    values = rng.choice(np.array([0.0, 1.0, 2.5, 4.0]), size=n, p=[0.4, 0.3, 0.2, 0.1])
    cells, counts = np.unique(values, return_counts=True)
    return values, cells, counts


def _replicates(values: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """Bootstrap replicates of the mean (any replicates would do: both sides get the same)."""
    rng = np.random.default_rng(seed + 1000)
    idx = rng.integers(0, len(values), size=(n_boot, len(values)))
    return values[idx].mean(axis=1)


class _Given:
    """What scipy.stats.bootstrap reads from a previous result: the replicates."""

    def __init__(self, reps: np.ndarray):
        self.bootstrap_distribution = reps


def _scipy_interval(values: np.ndarray, reps: np.ndarray, method: str, level: float) -> tuple[float, float]:
    res = stats.bootstrap((values,), np.mean, n_resamples=0, bootstrap_result=_Given(reps),
                          confidence_level=level, method=method, vectorized=True)
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def _ours(values: np.ndarray, cells: np.ndarray, counts: np.ndarray, reps: np.ndarray, method: str,
          level: float) -> tuple[float, float, str]:
    n, total = len(values), values.sum()
    jackknife = (total - cells) / (n - 1)  # the mean without one row of each cell
    stat = Statistic("mean", float(values.mean()), reps, regular=True, jackknife=jackknife)
    return interval(stat, method, level, counts.astype(np.float64))


@needs_bootstrap_result
@pytest.mark.parametrize("method", ["percentile", "basic", "bca"])
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
@pytest.mark.parametrize("seed", range(6))
def test_intervals_match_scipy_bootstrap_on_the_same_replicates(method, level, seed):
    values, cells, counts = _sample(seed)
    reps = _replicates(values, 999, seed)
    lo, hi, label = _ours(values, cells, counts, reps, method, level)
    assert label == {"percentile": "percentile", "basic": "basic", "bca": "BCa"}[method]
    ref_lo, ref_hi = _scipy_interval(values, reps, {"bca": "BCa"}.get(method, method), level)
    assert lo == pytest.approx(ref_lo, rel=RTOL, abs=1e-14)
    assert hi == pytest.approx(ref_hi, rel=RTOL, abs=1e-14)


@needs_bootstrap_result
def test_bca_acceleration_is_the_row_jackknife_of_scipy():
    # a skewed sample: the acceleration is far from 0, so a wrong one would move the interval
    values = np.repeat([0.0, 1.0, 10.0], [40, 15, 3])
    cells, counts = np.unique(values, return_counts=True)
    reps = _replicates(values, 1999, 7)
    lo, hi, _ = _ours(values, cells, counts, reps, "bca", 0.95)
    p_lo, p_hi, _ = _ours(values, cells, counts, reps, "percentile", 0.95)
    assert (lo, hi) != pytest.approx((p_lo, p_hi), rel=1e-3)  # BCa corrects the percentile interval here
    ref = _scipy_interval(values, reps, "BCa", 0.95)
    assert (lo, hi) == pytest.approx(ref, rel=RTOL)


# --------------------------------------------------------------------------- #
# multiplicity: statsmodels.stats.multitest.multipletests
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("method, sm_method", [("holm", "holm"), ("bh", "fdr_bh")])
@pytest.mark.parametrize("seed", range(8))
def test_holm_and_bh_match_statsmodels(method, sm_method, seed):
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 60))
    # a mix of tiny, moderate and tied p-values (ties exercise the step-up/step-down order)
    p = np.concatenate([rng.uniform(0, 1, m) ** 3, rng.choice([0.01, 0.04, 0.5], size=m // 3)])
    rng.shuffle(p)
    ref = multitest.multipletests(p, method=sm_method)[1]
    np.testing.assert_allclose(adjust_pvalues(p, method=method), ref, rtol=RTOL, atol=0)


# --------------------------------------------------------------------------- #
# exact McNemar: statsmodels.stats.contingency_tables.mcnemar(exact=True)
# --------------------------------------------------------------------------- #
def test_exact_mcnemar_matches_statsmodels():
    tables = pytest.importorskip("statsmodels.stats.contingency_tables")
    b, c = np.meshgrid(np.arange(0, 41), np.arange(0, 41), indexing="ij")
    b, c = b.ravel(), c.ravel()
    b = np.concatenate([b, [150, 1000, 3]])
    c = np.concatenate([c, [170, 900, 997]])
    res = mcnemar_exact(b, c)
    # statsmodels reads b and c off the 2 x 2 table [[a, b], [c, d]] (a, d play no role)
    ref = np.array([tables.mcnemar(np.array([[5, bi], [ci, 7]]), exact=True).pvalue for bi, ci in zip(b, c)])
    both = (b + c) > 0
    np.testing.assert_allclose(res.p_value[both], ref[both], rtol=RTOL, atol=1e-300)
    assert (res.p_value[~both] == 1.0).all()  # no discordant pair: p = 1 (statsmodels: the same)
    np.testing.assert_array_equal(ref[~both], 1.0)


# --------------------------------------------------------------------------- #
# independence: scipy.stats.chi2_contingency (G) and scipy.stats.fisher_exact
# --------------------------------------------------------------------------- #
def _random_tables(seed: int, shape: tuple[int, ...], high: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = rng.integers(0, high, size=shape)
    keep = (t.sum(axis=-1) > 0).all(axis=-1) & (t.sum(axis=-2) > 0).all(axis=-1)
    return t[keep]


@pytest.mark.parametrize("n_groups", [2, 3, 5])
def test_g_test_matches_scipy_chi2_contingency_log_likelihood(n_groups):
    t = _random_tables(n_groups, (300, n_groups, 2), 80)
    res = independence_test(t, min_expected=0)  # the G-test for every table
    assert set(res.method.tolist()) <= {"g-test", "degenerate"}
    for table, g, p, method in zip(t, res.statistic, res.p_value, res.method):
        if method == "degenerate":
            continue
        # scipy returns (statistic, p-value, dof, expected); its names need scipy >= 1.10
        ref = stats.chi2_contingency(table, correction=False, lambda_="log-likelihood")
        assert g == pytest.approx(ref[0], rel=RTOL, abs=1e-12)
        assert p == pytest.approx(ref[1], rel=RTOL, abs=1e-15)


def test_fisher_matches_scipy_fisher_exact():
    t = _random_tables(11, (400, 2, 2), 30)
    t = np.concatenate([t, [[[0, 9], [11, 3]], [[500, 3], [480, 20]], [[1, 1], [1, 1]]]])
    res = independence_test(t, min_expected=np.inf)  # Fisher's exact test for every table
    for table, p, method in zip(t, res.p_value, res.method):
        if method == "degenerate":
            continue
        assert method == "fisher-exact"
        assert p == pytest.approx(stats.fisher_exact(table)[1], rel=RTOL, abs=1e-15)
