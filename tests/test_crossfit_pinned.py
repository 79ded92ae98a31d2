"""The cross-fitting split pinned: fold digests and values computed on the code before issue 31's speed-up (325a342).

The split is part of every cross-fitted number (BiasAmp→, BiasAmp_MALS,
Multi→, Multi_MALS): a faster implementation must deal every row to the same
fold. The digests below are the SHA-256 (first 16 hex digits) of each split's
array of fold-0 shares (its dtype included), as :func:`crossfit_splits`
returned them at commit 325a342, on inputs that take every path: wide 0/1
rows dealt row by row (with many repeated rows), narrow rows grouped by
content, units (numbers of identical rows: a stream's distinct rows; integer sample weights were
split so at that commit, and keep their row whole since), non-integer weights, an indicator-matrix
attribute with an unstratified read (Multi_MALS); and three seeds each. The
values are those of the public functions on the first data set, bit for bit.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import biasamp
from biasamp._core import crossfit as cf
from biasamp._core.crossfit import crossfit_splits
from biasamp._core.labels import LabelMatrix

DIRECTIONAL = [("attr", "task", "task_pred"), ("attr", "attr_pred", "task")]
MULTI = [("attr", "task", "attr_pred", "task_pred"), ("attr", "task", "task_pred"), ("attr", "task", "attr_pred")]
CASES = {  # (rng seed, rows, tasks, attribute classes, density, attribute as a 0/1 matrix), reads, weights, strata
    "wide": ((1, 3000, 80, 2, 0.05, False), DIRECTIONAL, None, True),
    "wide3": ((2, 2500, 70, 3, 0.1, False), DIRECTIONAL, None, True),
    "narrow": ((3, 2000, 5, 2, 0.3, False), DIRECTIONAL, None, True),
    "units": ((4, 1500, 80, 3, 0.05, False), DIRECTIONAL, "int", True),
    "real": ((5, 1500, 80, 2, 0.05, False), DIRECTIONAL, "real", True),
    "multi": ((6, 2000, 40, 4, 0.1, True), MULTI, None, [False, True, True]),
}
SEEDS = (None, 7, 2**40 + 3)
EXPECTED = {  # commit 325a342
    "wide": [("bb021a55f9b99293", "2068ed8e5ad7086c"), ("9003ee3d9eb07116", "33a57355b22e15da"),
             ("09ff82180b2e895a", "e55f6266959c44f3")],
    "wide3": [("d8cec176e9c47d5f", "ca35755d4840116a"), ("325b97767fd31832", "99d8f2ed0f1c59ba"),
              ("51ed55b5f46d766f", "3cee2458712071e8")],
    "narrow": [("fb0ce510e13ad5f0", "9256d8c7d50fa8d3"), ("543e6580cc7cdc51", "1487b83ea7ab0f6e"),
               ("0ee7d5f889883bf5", "cc49ab085cc30bd5")],
    "units": [("3843ef83ba94e3f1", "e7e81f28be031f91"), ("e36f6503f91a5a6d", "a3583aaebd58ea5b"),
              ("ec59fe7fe2c777e5", "a50b90605b907dc3")],
    "real": [("6c6c246cf9d2e58d", "60f6fa8b14b8a98f"), ("b79d15968ff69202", "e4f24a31b62c6dc9"),
             ("ba7cc3e2240c862e", "27cf83be9fff55ae")],
    "multi": [("64d024f3949f866b", "52d776dd136b1968", "02945d18fb535a5f"),
              ("45f841d18cb89995", "d27ba0be822f0eee", "44d7e5004f41de70"),
              ("e8b1ca69399a92a8", "5afc75e10f9160b5", "26455d67cd47bd7a")],
}
VALUES = {  # the first data set ("wide"): (A->T, T->A) and BiasAmp_MALS, per seed
    None: (-0.00019558288734591362, -0.0027200443080512716, 0.000994327641731903),
    7: (-0.00029670775602154604, -0.00011983685543824687, 0.0023789620910192),
}


def _inputs(seed, n, kt, ka, density, attr_dense):
    rng = np.random.default_rng(seed)
    attr = rng.integers(0, ka, n)
    task = rng.random((n, kt)) < density
    task[: n // 4] &= rng.random((n // 4, 1)) < 0.05  # many empty rows: repeated contents
    pred = task ^ (rng.random((n, kt)) < 0.02)
    attr_pred = np.where(rng.random(n) < 0.1, (attr + 1) % ka, attr)
    if attr_dense:
        a = rng.random((n, ka)) < 0.4
        am = LabelMatrix("attr", tuple(range(ka)), dense=a)
        apm = LabelMatrix("attr_pred", tuple(range(ka)), dense=a ^ (rng.random((n, ka)) < 0.1))
    else:
        am = LabelMatrix("attr", tuple(range(ka)), codes=attr)
        apm = LabelMatrix("attr_pred", tuple(range(ka)), codes=attr_pred)
    roles = {"attr": am, "attr_pred": apm, "task": LabelMatrix("task", tuple(range(kt)), dense=task),
             "task_pred": LabelMatrix("task_pred", tuple(range(kt)), dense=pred)}
    return roles, rng


def _weights(kind, rng, n):
    drawn = {"int": rng.integers(1, 4, n).astype(float), "real": rng.choice([0.5, 1.0, 2.25], n)}  # both, in turn
    return drawn.get(kind)


def _digest(x: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest()[:16]


@pytest.mark.parametrize("case", list(CASES))
def test_splits_are_those_of_the_pinned_commit(case):
    data, reads, weight_kind, stratified = CASES[case]
    roles, rng = _inputs(*data)
    weights = _weights(weight_kind, rng, roles["attr"].n_rows)
    for seed, expected in zip(SEEDS, EXPECTED[case]):
        given = {"units": weights} if weight_kind == "int" else {"weights": weights}
        splits = crossfit_splits(roles, reads, random_state=seed, stratified=stratified, **given)
        assert tuple(_digest(s) for s in splits) == expected, (case, seed)


def test_the_pins_see_a_changed_split():
    """The digests are sensitive: swapping the folds of one pair of rows of one class changes them."""
    roles, _ = _inputs(*CASES["wide"][0])
    split = crossfit_splits(roles, DIRECTIONAL)[0].copy()
    codes = roles["attr"].codes
    i = np.flatnonzero((codes == 0) & (split == 1))[0]
    j = np.flatnonzero((codes == 0) & (split == 0))[0]
    split[[i, j]] = split[[j, i]]  # the same fold sizes per class, another split
    assert _digest(split) != EXPECTED["wide"][0][0]


@pytest.mark.parametrize("seed", list(VALUES))
def test_cross_fitted_values_are_those_of_the_pinned_commit(seed):
    roles, _ = _inputs(*CASES["wide"][0])
    a, ap = roles["attr"].codes, roles["attr_pred"].codes
    t, tp = roles["task"].dense, roles["task_pred"].dense
    r = biasamp.bias_amp_directional(a, t, attr_pred=ap, task_pred=tp, cross_fit_random_state=seed)
    m = biasamp.bias_amp_mals(a, t, attr_pred=ap, task_pred=tp, cross_fit_random_state=seed)
    assert (r.a_to_t.value, r.t_to_a.value, m.value) == VALUES[seed]  # bit for bit


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 3000), st.integers(1, 6), st.booleans())
def test_rows_ordered_by_stratum_packed_above_the_hash(seed, n, n_strata, ties):
    """:func:`_ordered` with every row's stratum: the order by (stratum, u, row), and the repeats of u, exactly.

    The rows come in any order (the stratum is packed above the top bits of
    ``u``); keys that differ only in their low bits (the bits a packed word
    drops) and equal keys are still ordered by the whole key, then by row.
    """
    rng = np.random.default_rng(seed)
    if ties:  # top bits: four values, low bits: three (equal keys too)
        u = (rng.integers(0, 4, n, dtype=np.uint64) << np.uint64(62)) | rng.integers(0, 3, n, dtype=np.uint64)
    else:
        u = rng.integers(0, 2**64 - 1, n, dtype=np.uint64, endpoint=True)
    strata = rng.integers(0, n_strata, n)
    bounds = np.append(0, np.cumsum(np.bincount(strata, minlength=n_strata)))
    positions = np.arange(n, dtype=np.uint64)
    order, repeats = cf._ordered(u, bounds, positions, np.empty(n, dtype=np.uint64), strata)
    expected = np.lexsort((np.arange(n), u, strata))
    np.testing.assert_array_equal(order, expected)
    same = (u[expected][1:] == u[expected][:-1]) & (strata[expected][1:] == strata[expected][:-1])
    np.testing.assert_array_equal(repeats, np.flatnonzero(same))
