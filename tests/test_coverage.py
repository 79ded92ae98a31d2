"""Coverage of ``bootstrap``'s default ("auto") 95% intervals on populations with known values.

A small, seeded version of ``benchmarks/bench_coverage.py``, which holds the
simulation code (populations, exact true values, the sampling loop): 100 test
samples x 200 replicates for four key scenarios, failing below coverage 0.85
or when any interval misses its own estimate. The benchmark measures the
targets themselves (0.93 / 0.90) with 400 samples x 1000 replicates.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import bench_coverage as sim

N_SAMPLES = 100  # the tightest row, Multi M->G raw at 0, covers ~0.91 in the benchmark: 0.85 is ~2 SE below
N_BOOT = 200
MIN_COVERAGE = 0.85
#: no disparity (non-regular max-min statistics at 0), 3x3 with small disparities and some
#: per-class terms exactly 0, BiasAmp-> amplified, Multi-> / Multi_MALS with no amplification (abs at 0),
#: 40 groups of ~80 rows at no disparity (the SPSF/FPSF band needs its standard-error floor there)
KEYS = ("fair2-none", "fair2b-real", "fair3-part", "dir-amp", "multi-none", "df-none", "fair40-none")


@pytest.fixture(scope="module")
def scenarios() -> dict:
    return {sc.key: sc for sc in sim.build_scenarios(seed=0)}


def test_binary_disparity_truth_by_hand(scenarios):
    # fair2-real: P(y=1 | g) = .45, .35; TPR .85, .70; FPR .10, .20 (class 1). PPR_g = P1·TPR + P0·FPR
    truth = scenarios["fair2-real"].truth
    ppr = (0.45 * 0.85 + 0.55 * 0.10, 0.35 * 0.70 + 0.65 * 0.20)
    assert truth["DP"] == pytest.approx(abs(ppr[0] - ppr[1]), abs=1e-12)  # same for class 0 (1 − PPR)
    # class 1: TPR gap .15, FPR gap .10; class 0 (one-vs-rest): TPR_0 = 1 − FPR_1, FPR_0 = 1 − TPR_1
    assert truth["EOTP"] == pytest.approx((0.15 + 0.10) / 2, abs=1e-12)
    assert truth["EOFP"] == pytest.approx((0.10 + 0.15) / 2, abs=1e-12)


def test_binary_default_truth_is_the_positive_class(scenarios):
    # fair2b-real: the populations of fair2-real with average="binary": class 1's gaps only
    truth = scenarios["fair2b-real"].truth
    assert truth["EOTP"] == pytest.approx(0.15, abs=1e-12)  # TPR .85 vs .70
    assert truth["EOFP"] == pytest.approx(0.10, abs=1e-12)  # FPR .10 vs .20
    assert truth["DP"] == pytest.approx(scenarios["fair2-real"].truth["DP"], abs=1e-12)
    assert set(scenarios["fair2b-none"].truth.values()) == {0.0}


def test_partial_disparity_truth_by_hand(scenarios):
    # fair3-part: same base rates (.5, .3, .2) everywhere; groups 0 and 1 predict the true class
    # with .8 (else .1 each), group 2 predicts class 0 as (.8, .15, .05). PPR per class:
    # groups 0/1: (.45, .31, .24); group 2: (.45, .5·.15 + .24 + .02, .5·.05 + .03 + .16)
    truth = scenarios["fair3-part"].truth
    ppr_other, ppr_g2 = (0.45, 0.31, 0.24), (0.45, 0.335, 0.215)
    assert truth["DP"] == pytest.approx(sum(abs(a - b) for a, b in zip(ppr_other, ppr_g2)) / 3, abs=1e-12)
    assert truth["EOTP"] == 0.0  # every group's TPR is .8 in every class


def test_differential_truth_by_hand(scenarios):
    # df-amp: P(y=1 | g) = .3, .4, .5; PPR_g = P1·TPR + P0·FPR = .295, .412, .575
    truth = scenarios["df-amp"].truth
    eps_true = max(math.log(0.5 / 0.3), math.log(0.7 / 0.5))
    ppr = (0.3 * 0.75 + 0.7 * 0.10, 0.4 * 0.85 + 0.6 * 0.12, 0.5 * 0.95 + 0.5 * 0.20)
    eps_pred = max(math.log(max(ppr) / min(ppr)), math.log((1 - min(ppr)) / (1 - max(ppr))))
    assert truth["epsilon_true"] == pytest.approx(eps_true, abs=1e-12)
    assert truth["epsilon_pred"] == pytest.approx(eps_pred, abs=1e-12)
    assert truth["DF amplification"] == pytest.approx(eps_pred - eps_true, abs=1e-12)
    assert set(scenarios["df-none"].truth.values()) == {0.0}


def test_truths_match_the_library_on_expected_counts(scenarios):
    for sc in scenarios.values():
        lib = sim.truth_from_library_counts(sc)
        assert {k: lib[k] for k in sc.stats} == pytest.approx(sc.truth, abs=1e-9), sc.key


def test_no_effect_populations_are_exactly_zero_and_the_others_are_not(scenarios):
    for key in ("fair2-none", "fair3-none", "dir-none", "multi-none"):
        assert set(scenarios[key].truth.values()) == {0.0}, key
    for key in ("fair2-real", "fair3-real", "dir-amp", "mals-amp", "multi-amp"):  # fair3-part: EOTP is 0
        assert min(abs(v) for v in scenarios[key].truth.values()) > 0.01, key


@pytest.mark.parametrize("key", KEYS)
def test_auto_intervals_cover_the_truth_and_hold_their_estimate(scenarios, key):
    rows, _ = sim.run_scenario(scenarios[key], ("auto",), n_samples=N_SAMPLES, n_boot=N_BOOT, seed=0)
    problems = []
    for stat, row in rows["auto"].items():
        if row.na:
            problems.append(f"{stat}: no interval" + ("" if row.na in "; ".join(problems) else f" ({row.na})"))
            continue
        if row.n_errors:
            problems.append(f"{stat}: {row.n_errors} of {row.total} calls raised")
        if row.holds < row.total:
            problems.append(f"{stat}: {row.total - row.holds} of {row.total} intervals miss their own estimate")
        if row.coverage < MIN_COVERAGE:
            problems.append(f"{stat}: coverage {row.coverage:.3f} of the true value {row.truth:.4f} "
                            f"< {MIN_COVERAGE}")
    assert not problems, f"{key}: " + "; ".join(problems)
