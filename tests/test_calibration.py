"""Threshold calibration (Wang & Russakovsky 2021, §3.2)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from biasamp import calibrate_thresholds


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 200), st.floats(0, 1), st.integers(0, 2**32 - 1))
def test_distinct_scores_give_exactly_round_n_p_positives(n, p, seed):
    scores = np.random.default_rng(seed).permutation(n) / n  # distinct
    th = calibrate_thresholds(scores, rates=p)
    assert int((scores > th.thresholds.iloc[0]).sum()) == round(n * p)
    assert th.achieved_rates.iloc[0] == round(n * p) / n


def test_rates_from_labels_per_column():
    rng = np.random.default_rng(0)
    scores = rng.random((1000, 3))
    train_labels = np.zeros((500, 3), dtype=int)
    train_labels[:50, 0] = 1  # 10%
    train_labels[:250, 1] = 1  # 50%
    pred = calibrate_thresholds(scores, val_labels=train_labels).apply(scores)
    assert pred.sum(axis=0).tolist() == [100, 500, 0]


def test_ties_take_the_closest_unique_score():
    scores = np.array([0.1, 0.5, 0.5, 0.5, 0.9])  # 2 positives wanted: 1 (>0.5) or 4 (>0.1)
    th = calibrate_thresholds(scores, rates=0.4)
    assert th.thresholds.iloc[0] == 0.5 and th.achieved_rates.iloc[0] == 0.2
    th = calibrate_thresholds(scores, rates=0.6)  # 3 wanted: 1 is 2 away, 4 is 1 away
    assert th.thresholds.iloc[0] == 0.1 and th.achieved_rates.iloc[0] == 0.8
    th = calibrate_thresholds(np.array([0.2, 0.2, 0.7, 0.7]), rates=0.25)  # 1 wanted: 0 or 2, equally close
    assert th.achieved_rates.iloc[0] == 0.0  # the documented tie-break: fewer positives


def test_extremes():
    scores = np.array([0.3, 0.1, 0.2])
    assert calibrate_thresholds(scores, rates=1.0).thresholds.iloc[0] == -np.inf
    assert calibrate_thresholds(scores, rates=0.0).thresholds.iloc[0] == 0.3


def test_apply_keeps_shape_and_errors():
    th = calibrate_thresholds([[0.1, 0.2], [0.3, 0.4]], rates=[0.5, 0.5])
    assert th.apply([[0.5, 0.0], [0.0, 0.5]]).tolist() == [[1, 0], [0, 1]]
    with pytest.raises(ValueError, match="scores has 3 columns"):
        th.apply(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="exactly one of val_labels"):
        calibrate_thresholds([0.1, 0.2])
    with pytest.raises(ValueError, match="rates must be finite and within"):
        calibrate_thresholds([0.1, 0.2], rates=1.5)
    with pytest.raises(ValueError, match="val_scores contains NaN"):
        calibrate_thresholds([0.1, np.nan], rates=0.5)
    with pytest.raises(ValueError, match="val_labels has 1 columns but val_scores has 2"):
        calibrate_thresholds(np.zeros((3, 2)), val_labels=[0, 1, 1])
    assert "threshold" in repr(th)
