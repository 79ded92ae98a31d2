"""Counts from the rows' bytes (issue 31): every path equals the float products, and fold 1 is the totals less fold 0.

:func:`biasamp._core.crossfit._byte_stats` counts 16-bit words of the
rows' bytes group by group when the groups hold many rows, bytes keyed by
group otherwise, and both task-side roles in one joint histogram when they
fit; :func:`biasamp._core.crossfit.fold_counts` counts the rows of fold 0.
Each is checked against :func:`biasamp._core.crossfit._stats` (float
products of 0/1 blocks) on the same rows, bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import biasamp
from biasamp._core import crossfit as cf
from biasamp._core.labels import LabelMatrix


def _roles(rng, n, n_attr, ka, n_task, kt):
    roles = {r: LabelMatrix(r, tuple(range(ka)), codes=rng.integers(0, ka, n)) for r in ("attr", "attr_pred")[:n_attr]}
    for r in ("task", "task_pred")[:n_task]:
        roles[r] = LabelMatrix(r, tuple(range(kt)), dense=rng.random((n, kt)) < rng.random())
    sides = (tuple(r for r in roles if r in cf._ATTR_ROLES), tuple(r for r in roles if r not in cf._ATTR_ROLES))
    return roles, sides


def _assert_same(got, expected):
    """The same keys in the same order (the signatures hash them in order), the same dtypes and values."""
    assert got is not None
    for part in ("count", "diag", "cross"):
        listed = [[(key, v.dtype, v.tolist()) for key, v in getattr(s, part).items()] for s in (got, expected)]
        assert listed[0] == listed[1], part


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 300), st.integers(1, 2), st.integers(1, 5), st.integers(1, 2),
       st.integers(1, 40), st.booleans(), st.sampled_from(["pairs", "keyed", "bytes", "joint"]))
def test_every_path_of_the_byte_counts_equals_the_products(seed, n, n_attr, ka, n_task, kt, units, path):
    """Every path: 16-bit words per group or with the group in their key, bytes keyed by group, the joint histogram.

    Words: odd widths count the last byte alone; the group in the key takes a
    few groups whose rows are in any order.
    """
    rng = np.random.default_rng(seed)
    roles, sides = _roles(rng, n, n_attr, ka, n_task, kt)
    octets = {r: cf._row_bytes(roles[r]._dense()) for r in sides[1]}
    weights = rng.integers(1, 5, n) if units else None
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cf, "_PAIR_ROWS", 1 if path in ("pairs", "keyed") else 10**9)  # words for any group size, or never
        mp.setattr(cf, "_TOGETHER_BINS", {"joint": 1 << 22, "keyed": 1 << 18}.get(path, 0))
        if path == "keyed":  # one task-side role (two: the joint histogram)
            sides = (sides[0], sides[1][:1])
            roles = {r: roles[r] for r in (*sides[0], *sides[1])}
        got = cf._byte_stats(roles, sides, octets, weights)
    _assert_same(got, cf._stats(roles, sides, weights))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 300), st.integers(1, 2), st.integers(2, 5), st.integers(1, 2),
       st.integers(1, 40), st.booleans(), st.booleans())
def test_fold_counts_are_the_counts_of_the_rows_of_fold_0(seed, n, n_attr, ka, n_task, kt, pairs, given):
    rng = np.random.default_rng(seed)
    roles, sides = _roles(rng, n, n_attr, ka, n_task, kt)
    octets = {r: cf._row_bytes(roles[r]._dense()) for r in sides[1]}
    in_fold0 = (rng.random(n) < 0.5).astype(np.int8)
    rows = np.flatnonzero(in_fold0)
    given_rows = rng.permutation(rows) if given else None  # the rows of fold 0 handed over, in any order
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cf, "_PAIR_ROWS", 1 if pairs else 10**9)
        got = cf.fold_counts(roles, sides, octets, in_fold0, given_rows)
    expected = cf._stats({r: cf._take(m, rows) for r, m in roles.items()}, sides)
    expected.diag.clear()  # fold_counts counts no same-side pairs
    _assert_same(got, expected)
    dense_attr = {"attr": LabelMatrix("attr", (0, 1), dense=np.zeros((n, 2), dtype=bool))}
    assert cf.fold_counts({**roles, **dense_attr}, (("attr",), sides[1]), octets, in_fold0) is None  # codes only


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 400), st.integers(2, 6), st.integers(9, 40), st.booleans())
def test_the_split_hands_back_the_rows_of_fold_0_by_stratum(seed, n, ka, kt, stratified):
    """Rows dealt one by one: the rows of each split's fold 0, stratum by stratum (increasing within), exactly."""
    rng = np.random.default_rng(seed)
    roles, _ = _roles(rng, n, 2, ka, 2, kt)
    reads = [("attr", "task", "task_pred"), ("attr", "attr_pred", "task")]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cf, "_WORD_BITS", 0)  # every content "too wide for a word": dealt row by row
        splits, _, _, fold0 = cf.splits_and_counts(roles, reads, None, seed, stratified)
    for split, rows in zip(splits, fold0):
        if rows is None:  # classes the data cannot tell apart: dealt by content, no rows handed back
            continue
        np.testing.assert_array_equal(np.sort(rows), np.flatnonzero(split))
        if stratified:  # by stratum (the attribute's class), in row order within each
            np.testing.assert_array_equal(rows, np.flatnonzero(split)[np.argsort(roles["attr"].codes[split == 1],
                                                                                  kind="stable")])


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(200, 3000), st.integers(2, 4), st.integers(56, 80))
def test_threads_change_nothing(seed, n, ka, kt):
    """The statistics' splits, the joint histogram and the fold counts in threads: the values of the calls in turn."""
    rng = np.random.default_rng(seed)
    attr, attr_pred = rng.integers(0, ka, n), rng.integers(0, ka, n)
    task = rng.random((n, kt)) < 0.1
    task_pred = task ^ (rng.random((n, kt)) < 0.05)
    got = []
    for cores in (1, 2):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(cf, "_THREAD_ROWS", 0)
            mp.setattr(cf, "_cores", lambda cores=cores: cores)
            res = biasamp.bias_amp_directional(attr, task, task_pred=task_pred, attr_pred=attr_pred)
        got.append((repr(res.a_to_t.to_dict()), repr(res.t_to_a.to_dict())))  # every pair's terms, to the bit
    assert got[0] == got[1]
