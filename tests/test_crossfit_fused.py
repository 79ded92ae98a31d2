"""Each split's fold 0 counted in the thread that dealt it (issue 31): the counts of the rows of fold 0, exactly.

:func:`biasamp._core.crossfit.splits_and_fold_counts` deals the statistics'
splits (in threads with several cores) and counts each split's fold 0 right
after dealing it. The splits must be those of
:func:`biasamp._core.crossfit.splits_and_counts`, and each split's counts
those of :func:`biasamp._core.crossfit._stats` (float products of 0/1
blocks) over the rows the split put in fold 0, whatever the number of threads.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from biasamp._core import crossfit as cf
from biasamp._core.labels import LabelMatrix

_READS = [("attr", "task", "task_pred"), ("attr", "attr_pred", "task")]
_SIDES = [(("attr",), ("task", "task_pred")), (("attr", "attr_pred"), ("task",))]


def _roles(seed: int, n: int, ka: int, kt: int, zeros: float) -> dict:
    rng = np.random.default_rng(seed)
    task = rng.random((n, kt)) < 0.08
    task[rng.random(n) < zeros] = False  # repeated rows: all-zero task rows
    return {"attr": LabelMatrix("attr", tuple(range(ka)), codes=rng.integers(0, ka, n)),
            "attr_pred": LabelMatrix("attr_pred", tuple(range(ka)), codes=rng.integers(0, ka, n)),
            "task": LabelMatrix("task", tuple(range(kt)), dense=task),
            "task_pred": LabelMatrix("task_pred", tuple(range(kt)), dense=task ^ (rng.random((n, kt)) < 0.03))}


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 2000), st.integers(1, 4), st.integers(30, 90),
       st.sampled_from([0.0, 0.5]), st.integers(1, 2))
def test_fold_counts_made_with_the_split_are_those_of_fold_0(seed, n, ka, kt, zeros, cores):
    roles = _roles(seed, n, ka, kt, zeros)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cf, "_THREAD_ROWS", 0)  # threads even on few rows
        mp.setattr(cf, "_cores", lambda: cores)
        splits, totals, _, fold0, counts0 = cf.splits_and_fold_counts(roles, _READS, None, seed, True, _SIDES)
        alone = cf.splits_and_counts(roles, _READS, None, seed, True)
    for a, b in zip(splits, alone[0]):
        np.testing.assert_array_equal(a, b)  # the splits of splits_and_counts
    assert len(counts0) == len(_READS)
    for split, rows, sides, got in zip(splits, fold0, _SIDES, counts0):
        if rows is None:  # dealt by content (classes the data cannot tell apart): not counted with the split
            assert got is None
            continue
        assert got is not None
        in_fold0 = np.flatnonzero(split)
        expected = cf._stats({r: cf._take(roles[r], in_fold0) for r in (*sides[0], *sides[1])}, sides)
        for part in ("count", "cross"):
            assert {k: v.tolist() for k, v in getattr(got, part).items()} == \
                   {k: v.tolist() for k, v in getattr(expected, part).items()}, part


def test_no_fold_counts_unless_asked_or_with_weights():
    roles = _roles(3, 500, 2, 70, 0.3)
    assert cf.splits_and_fold_counts(roles, _READS, None, 0, True)[4] == [None, None]
    weights = np.full(500, 2.0)
    assert cf.splits_and_fold_counts(roles, _READS, weights, 0, True, _SIDES)[4] == [None, None]
