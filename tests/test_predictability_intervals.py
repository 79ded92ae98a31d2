"""DPA and LA intervals over the rows and the iterations (``ci_over``), docs/predictability.md "Intervals"."""

import math

import numpy as np
import pytest
from scipy import stats

import biasamp as b
from biasamp import dpa, leakage_amplification


def noise(seed, n, k=2):
    """A, T, Â, T̂ independent and uniform: every true DPA and LA is 0."""
    rng = np.random.default_rng(seed)
    return tuple(rng.integers(0, k, n) for _ in range(4))


def test_twenty_noise_rows_no_longer_read_amplified():
    # issue 30: on 20 rows of noise the interval over the iterations alone lies above 0 ("amplified")
    attr, task, _, task_pred = noise(49, 20)
    old = dpa(attr, task, task_pred=task_pred, random_state=0, progress=False, ci_over="iterations").a_to_t
    assert old.ci[0] > 0  # the symptom, still available by name
    new = dpa(attr, task, task_pred=task_pred, random_state=0, progress=False).a_to_t
    assert new.ci_over == "both"
    assert new.ci[0] < 0 < new.ci[1]
    assert new.value == old.value  # the estimate does not change
    assert new.p_value > 0.05


def test_twenty_noise_rows_default_attacker_covers_zero():
    attr, task, _, task_pred = noise(46, 20)  # "auto" runs the early-stopped MLP on 20 rows
    res = dpa(attr, task, task_pred=task_pred, random_state=0, progress=False, n_jobs=1).a_to_t
    assert res.attacker == "mlp_es"
    assert res.ci[0] < 0 < res.ci[1]


# the 0.3.x iteration-only intervals of this call, printed with repr() by the code before ci_over existed
OLD = {
    "tabular": ((-0.028146312526084218, 0.010717291645602478), (-0.03790797172734458, 0.008530965248138678),
                (-0.050246260892050205, 0.01915320761455925), (-0.15798202585616222, 0.12048202585616223)),
    "logistic": ((-0.028036527254336304, 0.010532116504412565), (-0.039057697987934646, 0.008531995962797162),
                 (-0.05001781320212018, 0.01882351349208778), (-0.1293985762057574, 0.11689857620575737)),
}


@pytest.mark.parametrize("attacker", sorted(OLD))
def test_iteration_interval_is_the_old_one_bit_for_bit(attacker):
    rng = np.random.default_rng(0)
    a, t, ap, tp = (rng.integers(0, 3, 200) for _ in range(4))
    kw = {"random_state": 3, "progress": False, "attacker": attacker, "n_iter": 4, "ci_over": "iterations"}
    r = dpa(a, t, attr_pred=ap, task_pred=tp, **kw)
    la = leakage_amplification(a, t, task_pred=tp, **kw)
    assert (r.a_to_t.ci, r.t_to_a.ci, r.a_to_t.absolute_ci, la.ci) == OLD[attacker]
    assert r.a_to_t.replicates is None and la.replicates is None  # no replicate fitted
    assert r.a_to_t.ci_over == la.ci_over == "iterations"


def test_interval_is_the_documented_formula():
    # the rows' variance: the replicates' variance less the iterations' s^2, at least s^2 * 0.2 / 0.8;
    # "both" adds s^2 / J; Welch-Satterthwaite degrees of freedom (the rows' on min(R, J) - 1)
    attr, task, attr_pred, task_pred = noise(5, 300, k=3)
    res = dpa(attr, task, attr_pred=attr_pred, task_pred=task_pred, attacker="tabular", n_iter=8, n_boot=12,
              random_state=1, progress=False)
    for d in (res.a_to_t, res.t_to_a):
        v = d.iterations["dpa"].to_numpy()
        reps = d.replicates["dpa"].to_numpy()
        assert len(reps) == 12
        j, s2 = len(v), v.var(ddof=1)
        var_rows = max(reps.var(ddof=1) - s2, s2 * 0.25)
        se_it2 = s2 / j
        df = (var_rows + se_it2) ** 2 / (var_rows ** 2 / (min(12, j) - 1) + se_it2 ** 2 / (j - 1))
        half = stats.t.ppf(0.975, df) * math.sqrt(var_rows + se_it2)
        assert d.ci == pytest.approx((v.mean() - half, v.mean() + half), abs=1e-12)
        assert d.p_value == pytest.approx(2 * stats.t.sf(abs(v.mean()) / math.sqrt(var_rows + se_it2), df))
        rows = dpa(attr, task, attr_pred=attr_pred, task_pred=task_pred, attacker="tabular", n_iter=8, n_boot=12,
                   random_state=1, progress=False, ci_over="rows")
        r = rows.a_to_t if d.direction == "A->T" else rows.t_to_a
        half_rows = stats.t.ppf(0.975, min(12, j) - 1) * math.sqrt(var_rows)
        assert r.ci == pytest.approx((v.mean() - half_rows, v.mean() + half_rows), abs=1e-12)
        assert r.value == d.value


def test_p_value_agrees_with_the_interval():
    for seed in range(12):
        attr, task, attr_pred, task_pred = noise(seed, 60)
        task_pred = np.where(np.random.default_rng(seed).random(60) < 0.5, attr, task_pred)  # some amplify
        res = dpa(attr, task, attr_pred=attr_pred, task_pred=task_pred, attacker="tabular", random_state=seed,
                  progress=False)
        la = leakage_amplification(attr, task, task_pred=task_pred, attacker="tabular", random_state=seed,
                                   progress=False)
        for r in (res.a_to_t, res.t_to_a, la):
            assert (r.p_value < 0.05) == (r.ci[0] > 0 or r.ci[1] < 0)


def test_interval_holds_its_estimate_and_is_clipped():
    # ten rows: intervals wider than [-1, 1] allows, clipped to it, each holding its estimate
    attr, task = np.tile([0, 1], 5), np.repeat([0, 1], 5)
    ends = []
    for seed in range(5):
        attr_pred, task_pred = np.random.default_rng(seed).integers(0, 2, (2, 10))
        res = dpa(attr, task, attr_pred=attr_pred, task_pred=task_pred, attacker="tabular", quality="accuracy",
                  random_state=seed, progress=False)
        la = leakage_amplification(attr, task, task_pred=task_pred, attacker="tabular", random_state=seed,
                                   progress=False)
        for r in (res.a_to_t, res.t_to_a, la):
            low, high = r.ci
            assert -1 <= low <= r.value <= high <= 1
            ends += [low, high]
        absolute = res.a_to_t.absolute_ci  # the absolute variant is unbounded: not clipped, holds its estimate
        assert absolute[0] <= res.a_to_t.absolute <= absolute[1]
    assert ends.count(1.0) + ends.count(-1.0) >= 3  # clipped, not merely inside


def test_coverage_of_zero_on_noise():
    # 40 samples of 20 noise rows, the default interval: the one over the iterations alone covered 0 in
    # 111 of these 120 readings (0.925); over the rows and the iterations, at least 95%
    covered = 0
    for seed in range(40):
        attr, task, attr_pred, task_pred = noise(1000 + seed, 20)
        res = dpa(attr, task, attr_pred=attr_pred, task_pred=task_pred, attacker="tabular", random_state=seed,
                  progress=False)
        la = leakage_amplification(attr, task, task_pred=task_pred, attacker="tabular", random_state=seed,
                                   progress=False)
        covered += sum(r.ci[0] <= 0 <= r.ci[1] for r in (res.a_to_t, res.t_to_a, la))
    assert covered / 120 >= 0.95


def test_deterministic_whatever_n_jobs():
    attr, task, attr_pred, task_pred = noise(3, 120, k=3)
    kw = {"attacker": "logistic", "n_iter": 3, "n_boot": 3, "random_state": 7, "progress": False}
    one = dpa(attr, task, attr_pred=attr_pred, task_pred=task_pred, n_jobs=1, **kw)
    two = dpa(attr, task, attr_pred=attr_pred, task_pred=task_pred, n_jobs=2, **kw)
    for x, y in ((one.a_to_t, two.a_to_t), (one.t_to_a, two.t_to_a)):
        assert x.ci == y.ci and x.p_value == y.p_value
        assert x.replicates.equals(y.replicates)
    la1 = leakage_amplification(attr, task, task_pred=task_pred, n_jobs=1, **kw)
    la2 = leakage_amplification(attr, task, task_pred=task_pred, n_jobs=2, **kw)
    assert la1.ci == la2.ci and la1.replicates.equals(la2.replicates)


def test_replicates_do_not_move_the_estimate_or_the_other_direction():
    attr, task, attr_pred, task_pred = noise(8, 150)
    kw = {"attacker": "tabular", "random_state": 2, "progress": False}
    both = dpa(attr, task, attr_pred=attr_pred, task_pred=task_pred, **kw)
    alone = dpa(attr, task, task_pred=task_pred, **kw)
    iters = dpa(attr, task, attr_pred=attr_pred, task_pred=task_pred, ci_over="iterations", **kw)
    assert both.a_to_t.ci == alone.a_to_t.ci  # a direction's replicates do not depend on the other's
    assert both.a_to_t.iterations.equals(iters.a_to_t.iterations)
    assert both.t_to_a.value == iters.t_to_a.value


def test_train_test_protocol_resamples_each_set():
    attr, task, attr_pred, task_pred = noise(11, 200)
    attr_tr, task_tr, attr_pred_tr, task_pred_tr = noise(12, 300)
    res = dpa(attr, task, attr_pred=attr_pred, task_pred=task_pred, attacker="tabular", protocol="train_test",
              attr_train=attr_tr, task_train=task_tr, attr_pred_train=attr_pred_tr, task_pred_train=task_pred_tr,
              random_state=0, progress=False)
    for d in (res.a_to_t, res.t_to_a):
        assert d.ci[0] <= d.value <= d.ci[1]
        assert d.replicates["dpa"].std() > 0


def test_result_says_which_interval():
    attr, task, _, task_pred = noise(2, 100)
    la = leakage_amplification(attr, task, task_pred=task_pred, attacker="tabular", random_state=0, progress=False)
    assert "CI over both" in repr(la)
    assert la.to_dict()["ci_over"] == "both"
    assert la.to_frame().equals(la.iterations)  # the per-iteration table, as before
    d = dpa(attr, task, task_pred=task_pred, attacker="tabular", random_state=0, progress=False, ci_over="rows")
    assert "CI over rows" in repr(d.a_to_t)
    none = dpa(attr, task, task_pred=task_pred, attacker="tabular", random_state=0, progress=False, level=None)
    assert none.a_to_t.ci is None and none.a_to_t.replicates is None and none.a_to_t.ci_over == ""


@pytest.mark.parametrize("func", [dpa, leakage_amplification])
def test_bad_ci_over_and_n_boot(func):
    attr, task, _, task_pred = noise(0, 40)
    with pytest.raises(ValueError, match=r"ci_over must be one of \('both', 'rows', 'iterations'\), got 'images'"):
        func(attr, task, task_pred=task_pred, ci_over="images")
    with pytest.raises(ValueError, match="n_boot must be an integer >= 2 or None, got 1"):
        func(attr, task, task_pred=task_pred, n_boot=1)
    with pytest.raises(TypeError, match="n_boot must be"):
        func(attr, task, task_pred=task_pred, n_boot=2.5)


def test_audit_rows_name_the_interval_and_carry_its_p_value():
    attr, task, attr_pred, task_pred = noise(49, 20)
    rep = b.audit(attr, task, attr_pred=attr_pred, task_pred=task_pred, sections=["dpa", "leakage"],
                  random_state=0, progress=False)
    rows = rep.table[rep.table.metric.isin(["DPA", "LA"])]
    assert len(rows) == 3
    assert (rows.ci_method == "t over 10 iterations x row bootstrap (10)").all()
    assert rows.p_value.notna().all()
    # 20 rows of noise: the interval covers 0 and could not have detected a 0.01 effect
    assert (rows.min_detectable > 0.01).all()
    assert (rows.reading == "too small to tell").all()
