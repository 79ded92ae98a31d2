"""The hashed-group bootstrap of streams (accumulators, Dask, torch ranks): issue 24.

Every counted row goes to one of G groups by a hash of (row id, seed); the
accumulator keeps the G group tables; ``bootstrap()`` resamples the non-empty
groups (the grouped bootstrap of ``biasamp.bootstrap``).
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse

from biasamp._engine.resample import STREAM_GROUPS, add_group_tables, stream_groups
from biasamp.accumulators import CooccurrenceAccumulator, FairnessAccumulator


def _dense_reference(left: np.ndarray, right: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    """Σ_{i in g} left_i ⊗ right_i, one row at a time (np.add.at: no shared code with the engine)."""
    out = np.zeros((n_groups, left.shape[1], right.shape[1]))
    np.add.at(out, group, left[:, :, None] * right[:, None, :])
    return out


# --------------------------------------------------------------------------- #
# the hash
# --------------------------------------------------------------------------- #
def test_groups_are_uniform_deterministic_and_split_free():
    ids = np.arange(200_000, dtype=np.uint64)
    g = stream_groups(ids, 1000, seed=11)
    assert g.min() >= 0 and g.max() < 1000
    counts = np.bincount(g, minlength=1000)
    # Pearson's chi-square of 1,000 equally likely groups: mean 999, sd sqrt(2 x 999) = 44.7
    chi2 = ((counts - 200.0) ** 2 / 200.0).sum()
    assert abs(chi2 - 999) < 5 * 44.7
    # a row's group depends on (row id, seed) only: any split, any order
    np.testing.assert_array_equal(np.concatenate([stream_groups(ids[:70_001], 1000, 11),
                                                  stream_groups(ids[70_001:], 1000, 11)]), g)
    perm = np.random.default_rng(0).permutation(len(ids))
    np.testing.assert_array_equal(stream_groups(ids[perm], 1000, 11), g[perm])
    # another seed, another partition (two independent partitions share 1/1000 of the rows' groups)
    assert np.mean(stream_groups(ids, 1000, 12) == g) < 0.002
    # consecutive row ids are not clustered: the groups of rows 0..999 hit about 1000 (1 - 1/e) distinct groups
    assert len(np.unique(g[:1000])) == pytest.approx(1000 * (1 - np.exp(-1)), abs=40)
    with pytest.raises(ValueError, match="n_groups"):
        stream_groups(ids, 0, 1)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 60), wl=st.integers(1, 4), wr=st.integers(1, 5), n_groups=st.integers(1, 9),
       seed=st.integers(0, 2**63), cut=st.integers(0, 60), data=st.data())
def test_group_tables_equal_the_row_by_row_sums_and_add_over_batches(n, wl, wr, n_groups, seed, cut, data):
    values = st.integers(0, 3)
    left = np.array(data.draw(st.lists(st.lists(values, min_size=wl, max_size=wl), min_size=n, max_size=n)),
                    dtype=np.float64).reshape(n, wl)
    right = np.array(data.draw(st.lists(st.lists(values, min_size=wr, max_size=wr), min_size=n, max_size=n)),
                     dtype=np.float64).reshape(n, wr)
    ids = np.array(data.draw(st.lists(st.integers(0, 2**40), min_size=n, max_size=n)), dtype=np.uint64)
    one = np.zeros((n_groups, wl, wr))
    add_group_tables(one, sparse.csr_matrix(left), sparse.csr_matrix(right), ids, seed)
    np.testing.assert_array_equal(one, _dense_reference(left, right, stream_groups(ids, n_groups, seed), n_groups))
    cut = min(cut, n)
    two = np.zeros((n_groups, wl, wr))
    add_group_tables(two, sparse.csr_matrix(left[cut:]), sparse.csr_matrix(right[cut:]), ids[cut:], seed)
    add_group_tables(two, sparse.csr_matrix(left[:cut]), sparse.csr_matrix(right[:cut]), ids[:cut], seed)
    np.testing.assert_array_equal(two, one)  # integers: exact in any order
    np.testing.assert_array_equal(one.sum(axis=0), left.T @ right)  # the groups add up to the count table


def test_group_tables_check_their_arguments():
    out = np.zeros((4, 2, 3))
    left, right = sparse.csr_matrix(np.ones((5, 2))), sparse.csr_matrix(np.ones((5, 3)))
    with pytest.raises(ValueError, match="row ids"):
        add_group_tables(out, left, right, np.arange(4), 0)
    with pytest.raises(ValueError, match="right"):
        add_group_tables(out, left, sparse.csr_matrix(np.ones((5, 2))), np.arange(5), 0)
    with pytest.raises(ValueError, match="writeable"):
        add_group_tables(np.zeros((4, 3, 2)).transpose(0, 2, 1), left, right, np.arange(5), 0)


# --------------------------------------------------------------------------- #
# the accumulators
# --------------------------------------------------------------------------- #
def _fair(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 2, n)
    y = rng.integers(0, 2, n)
    p = (rng.random(n) < np.where(g == 1, 0.6, 0.4)).astype(int)  # positive-prediction rates 0.6 and 0.4
    return g, y, p


def test_state_is_g_group_tables_whatever_n_boot():
    for n_boot in (2, 200, 1000):
        acc = FairnessAccumulator(2, 2, n_boot=n_boot, random_state=0)
        # G tables of the cells (no longer n_boot): memory of 1,000 replicate tables at most
        assert acc.boot.shape[0] == STREAM_GROUPS <= 1000
    assert FairnessAccumulator(2, 2).boot is None


def test_result_does_not_depend_on_batching_merges_or_row_order():
    g, y, p = _fair(5000, 1)
    ids = np.arange(5000) * 7 + 3
    one = FairnessAccumulator(2, 2, n_boot=300, random_state=4)
    one.update(y, p, sensitive_features=g, row_ids=ids)
    ref = one.bootstrap()
    batches = FairnessAccumulator(2, 2, n_boot=300, random_state=4)
    for rows in np.array_split(np.arange(5000), 7):
        batches.update(y[rows], p[rows], sensitive_features=g[rows], row_ids=ids[rows])
    perm = np.random.default_rng(1).permutation(5000)
    parts = [FairnessAccumulator(2, 2, n_boot=300, random_state=4) for _ in range(3)]
    for acc, rows in zip(parts, np.array_split(perm, 3)):
        acc.update(y[rows], p[rows], sensitive_features=g[rows], row_ids=ids[rows])
    merged = parts[2] + parts[0] + parts[1]
    shipped = pickle.loads(pickle.dumps(merged))
    for other in (batches, merged, shipped):
        np.testing.assert_array_equal(other.boot, one.boot)
        res = other.bootstrap()
        assert res.ci == ref.ci and res.p_value == ref.p_value
        assert res.replicates.equals(ref.replicates)
    # another seed: other groups and other replicates
    other_seed = FairnessAccumulator(2, 2, n_boot=300, random_state=5).update(y, p, sensitive_features=g,
                                                                               row_ids=ids)
    assert not np.array_equal(other_seed.boot, one.boot)


@pytest.mark.parametrize("n", [400, 40_000])
def test_replicate_spread_is_the_sampling_spread(n):
    """Few rows per group (n=400: a row-level bootstrap) and many (n=40,000: 40 rows per group) alike.

    DP of two groups with positive-prediction rates 0.6 and 0.4 (a gap far from 0, so DP is the difference
    itself): its sampling standard deviation is sqrt(p1 q1 / n1 + p2 q2 / n2), computed from the sample's rates.
    The replicates' standard deviation estimates it with a Monte-Carlo error of about 1/sqrt(2 x 2000) = 1.6%
    and a grouping error of about 1/sqrt(2 G') (2.2% at 1,000 groups, 3.5% at the ~400 non-empty ones).
    """
    g, y, p = _fair(n, 2)
    acc = FairnessAccumulator(2, 2, n_boot=2000, random_state=9, metrics=["DP"], pos_label=1)
    for rows in np.array_split(np.arange(n), 3):
        acc.update(y[rows], p[rows], sensitive_features=g[rows])
    res = acc.bootstrap()
    rates = np.array([p[g == k].mean() for k in (0, 1)])
    sizes = np.array([(g == k).sum() for k in (0, 1)])
    se = np.sqrt((rates * (1 - rates) / sizes).sum())
    assert res.replicates["DP"].std() == pytest.approx(se, rel=0.15)
    assert res.estimate["DP"] == pytest.approx(abs(rates[1] - rates[0]), abs=1e-12)


def test_bca_uses_the_delete_one_group_jackknife():
    """BCa on a stream: every smooth statistic gets a BCa interval holding its estimate, near the in-memory one."""
    import biasamp as b

    rng = np.random.default_rng(5)
    n = 20_000
    a = rng.integers(0, 2, n)
    t = (rng.random((n, 3)) < 0.3 + 0.2 * a[:, None]).astype(int)
    tp = np.where(rng.random((n, 3)) < 0.1, 1 - t, t)
    acc = CooccurrenceAccumulator(2, 3, n_boot=500, random_state=0)
    for rows in np.array_split(np.arange(n), 4):
        acc.update(a[rows], t[rows], task_pred=tp[rows])
    res = acc.bootstrap(ci_method="bca")
    mem = b.bootstrap(b.bias_amp_directional, a, t, task_pred=tp, n_boot=500, random_state=0, cross_fit=False,
                      ci_method="bca")
    pct = acc.bootstrap(ci_method="percentile")
    for name, (lo, hi) in res.ci.items():
        assert res.methods[name] == "BCa" and lo <= res.estimate[name] <= hi
        assert hi - lo == pytest.approx(mem.ci[name][1] - mem.ci[name][0], rel=0.25)
        assert (lo, hi) != pct.ci[name]  # the bias correction and acceleration move the ends
    assert acc.bootstrap().methods == pct.methods  # "auto" on a stream: percentile for the smooth statistics


def test_bootstrap_of_nothing_counted_raises():
    acc = FairnessAccumulator(2, 2, n_boot=10, random_state=0)
    with pytest.raises(ValueError, match="no batch was counted"):
        acc.bootstrap()


def test_the_number_of_groups_bounds_the_memory_of_wide_tables():
    """1,000 group tables while they fit in 128 MB; fewer for wide tables (within the budget), never below 256."""
    from biasamp._engine.resample import stream_group_count

    assert stream_group_count((3, 41)) == 1000  # a BiasAmp-> table of 20 tasks: 1,000 x 123 x 8 B = 1 MB
    width = 30 * 2000  # a cross-fitted multi-attribute table of 2,000 combinations
    g = stream_group_count((30, 2000))
    assert 256 <= g < 1000 and g * width * 8 <= 128 << 20 < (g + 1) * width * 8
    assert stream_group_count((100, 100_000)) == 256  # the floor, whatever the width
