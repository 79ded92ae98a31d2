"""One inference per reading (issue 30, items 2 and 4): the p-value printed beside an interval is the interval's own
(``p < 1 - level`` exactly when it excludes 0), values within 1e-12 of 0 read as 0, and every headline has a minimum
detectable effect (MDE) with a reading "too small to tell"."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats as sst

import biasamp as b
from biasamp._engine.inference import (
    MDE_POWER,
    excludes_zero,
    interval_p_value,
    replicate_bounds,
    t_inference,
    t_min_detectable,
    z_min_detectable,
)
from biasamp._engine.intervals import Parts, Statistic, abs_range, inference, mean_of
from biasamp.datasets import make_amplification_demo
from biasamp.report import AuditConfig, Report, audit

LEVELS = (0.8, 0.9, 0.95, 0.99)


# --------------------------------------------------------------------------- #
# the inversion: p < 1 - level exactly when the interval excludes 0
# --------------------------------------------------------------------------- #
def _statistic(est: float, reps: np.ndarray, regular: bool = True) -> Statistic:
    """A statistic whose parts are itself (for the band: |part|, non-regular) with a jackknife (for BCa)."""
    units = pd.DataFrame({"unit": [0]})
    parts = Parts(np.array([est]), reps[:, None].copy(), units, np.array([est]),
                  (lambda lo, hi: (lo, hi)) if regular else abs_range, mean_of(np.array([True])))
    value = est if regular else abs(est)
    return Statistic("x", value, reps if regular else np.abs(reps), regular=regular, parts=parts,
                     jackknife=np.linspace(value - 0.01, value + 0.02, 7))


_values = st.one_of(st.floats(-0.2, 0.2, allow_nan=False), st.sampled_from([0.0, 2.8e-17, -3e-13, 1e-12, 0.05]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reps=st.lists(_values, min_size=5, max_size=60), shift=_values, level=st.sampled_from(LEVELS),
       method=st.sampled_from(["auto", "percentile", "basic", "bca", "band"]), regular=st.booleans())
def test_p_is_below_one_minus_level_exactly_when_the_interval_excludes_zero(reps, shift, level, method, regular):
    reps = np.asarray(reps) + shift
    est = float(np.median(reps)) if len(reps) % 3 else float(reps[0])
    stat = _statistic(est, reps, regular)
    if method == "band" or (method == "auto" and not regular):
        stat.regular = False
    inf, _ = inference(stat, method, level, np.arange(1.0, 8.0))
    excludes = bool(excludes_zero(inf.low, inf.high))
    assert (inf.p_value < 1 - level) == excludes, (inf, level)
    assert 0.0 <= inf.p_value <= 1.0 and inf.min_detectable >= 0.0


def test_percentile_inversion_by_hand():
    # replicates -5, -4, ..., 94: the percentile interval's lower end at level 1 - alpha is
    # q(alpha / 2) = -5 + 99 * alpha / 2 (linear interpolation), which reaches 0 at alpha = 10 / 99
    reps = np.arange(-5.0, 95.0)
    bounds = replicate_bounds(40.0, reps, "percentile")
    p = interval_p_value(bounds, 0.95)
    assert p == pytest.approx(10 / 99, abs=1e-9)
    assert interval_p_value(bounds, 0.85) == pytest.approx(10 / 99, abs=1e-9)  # the same p from any level
    lo, hi = bounds(np.array([0.95, 0.85]))
    assert lo[0] < 0 < lo[1]  # holds 0 at 95% (p > .05), excludes it at 85% (p < .15)
    # every replicate above 0: even the level-1 interval [min, max] excludes 0
    assert interval_p_value(replicate_bounds(3.0, reps + 6, "percentile"), 0.95) == 0.0
    # the basic interval of the mirror image inverts to the same p
    assert interval_p_value(replicate_bounds(44.5, 89.0 - reps, "basic"), 0.95) == pytest.approx(10 / 99, abs=1e-9)


def test_t_inference_is_the_t_test():
    x = np.random.default_rng(0).normal(0.02, 0.05, 10)
    se = x.std(ddof=1) / np.sqrt(10)
    inf = t_inference(float(x.mean()), se, 9, 0.95)
    assert inf.p_value == pytest.approx(sst.ttest_1samp(x, 0.0).pvalue, rel=1e-9)
    assert (inf.low, inf.high) == pytest.approx(b.confidence_interval(x), rel=1e-12)
    assert (inf.p_value < 0.05) == bool(excludes_zero(inf.low, inf.high))
    # the MDE: the non-central t test rejects with probability 0.8 there; the normal case (z + z_.8) * se
    mde = t_min_detectable(se, 9, 0.95)
    crit = sst.t.ppf(0.975, 9)
    assert sst.nct.sf(crit, 9, mde / se) == pytest.approx(MDE_POWER, abs=1e-6)
    assert z_min_detectable(1.0, 0.95) == pytest.approx(1.959964 + 0.841621, abs=1e-5)


def test_bootstrap_p_value_is_the_inversion_of_its_interval_and_p_global_the_pair_test():
    d = make_amplification_demo(n_train=2000, n_test=400, random_state=3)
    kw = dict(attr_pred=d.attr_pred, task_pred=d.task_pred, attr_train=d.attr_train, task_train=d.task_train,
              n_boot=200, random_state=0)
    for method in ("auto", "percentile", "basic", "bca"):
        res = b.bootstrap(b.bias_amp_directional, d.attr, d.task, ci_method=method, **kw)
        for name, (lo, hi) in res.ci.items():
            assert (res.p_value[name] < 0.05) == bool(excludes_zero(lo, hi))
            assert res.min_detectable[name] > 0
        # the global test of the pairs (exact McNemar, Holm) is kept apart: it tests single pairs, not the mean
        holm = res.tables["A->T"]["p_adjusted"].min()
        assert res.p_global["A->T"] == pytest.approx(holm)
    fair = b.bootstrap(b.fairness_metrics, np.asarray(d.task)[:, 0], np.asarray(d.task_pred)[:, 0],
                       sensitive_features=d.attr, n_boot=200, random_state=0)
    for name, (lo, hi) in fair.ci.items():
        assert (fair.p_value[name] < 0.05) == bool(excludes_zero(lo, hi)), name
    assert fair.p_value["BA"] is not None and fair.p_global["BA"] is None  # BA: no class test, an interval's p
    assert {"p_value", "min_detectable", "p_global"} <= set(fair.to_frame().columns)


# --------------------------------------------------------------------------- #
# readings: within 1e-12 of 0 is 0
# --------------------------------------------------------------------------- #
def test_a_bound_of_rounding_error_reads_no_evidence():
    from biasamp._core.results import interval_side
    from biasamp.captioning.section import _row as caption_row
    from biasamp.report._sections import _reading, _row

    assert _reading((2.8e-17, 0.0344)) == "no evidence"  # was "amplified": 2.8e-17 is an exact 0
    assert _reading((-0.03, -2.8e-17)) == "no evidence"
    assert _reading((1e-12, 0.03)) == "amplified" and _reading((2.8e-17, 0.03), "disparity") == "no evidence"
    assert interval_side(2.8e-17, 1.0) == 0 and interval_side(-1.0, -3e-13) == 0
    assert _row("BiasAmp->", "A->T", 0.01, (2.8e-17, 0.0344), "BCa bootstrap (1000)", 100)["reading"] == \
        "no evidence"
    assert caption_row("LIC", "A", 0.01, (2.8e-17, 0.03), 100)["reading"] == "no evidence"
    assert not excludes_zero(2.8e-17, 0.0344)


# --------------------------------------------------------------------------- #
# the report: p beside the interval, the MDE in every format, "too small to tell"
# --------------------------------------------------------------------------- #
FAST = dict(n_boot=100, n_boot_multi=20, n_iter=3, progress=False, exclude=["leakage", "multi"])


@pytest.fixture(scope="module")
def report():
    d = make_amplification_demo(n_train=2000, n_test=600, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return audit(d.attr, d.task, attr_pred=d.attr_pred, task_pred=d.task_pred, attr_train=d.attr_train,
                     task_train=d.task_train, **FAST)


def test_every_printed_p_agrees_with_its_interval(report):
    t = report.table
    rows = t[t["p_value"].notna() & t["ci_low"].notna()]
    assert len(rows) == len(t[t["ci_low"].notna()])  # every interval has its own p-value (MALS, BA, DPA did not)
    for r in rows.itertuples():
        assert (r.p_value < 0.05) == bool(excludes_zero(r.ci_low, r.ci_high)), r
        assert r.min_detectable >= 0
        if r.reading in ("amplified", "reduced", "disparity", "distorted"):
            assert r.p_value < 0.05
        else:
            assert r.p_value >= 0.05


def test_min_detectable_in_every_format_and_the_json_round_trip(report):
    t = report.table
    mde = t["min_detectable"].dropna()
    assert len(mde) == t["ci_low"].notna().sum() and (mde > 0).all()
    text = report.summary()
    header = next(line for line in text.splitlines() if line.startswith("metric"))
    assert header.split()[:6] == ["metric", "dir", "value", "95%", "CI", "MDE"]
    first = t.iloc[0]
    assert f"{first.min_detectable:.4f}" in text
    assert "MDE: minimum detectable effect" in text
    html = report.to_html(plots=False)
    assert "<th>MDE</th>" in html and f">{first.min_detectable:.4f}<" in html
    md = report.to_markdown()
    assert "| metric | direction | value | 95% CI | MDE | p |" in md and f"{first.min_detectable:.4f}" in md
    tex = report.to_latex(digits=3)
    assert "& MDE & $p$ &" in tex and f"${first.min_detectable:.3f}$" in tex
    card = report.to_model_card()
    assert f"MDE {first.min_detectable:.4f}" in card
    back = Report.from_json(report.to_json())
    pd.testing.assert_series_equal(back.table["min_detectable"], t["min_detectable"])
    assert back.to_json() == report.to_json()
    summary = json.loads(report.to_json())["summary"]
    assert "min_detectable" in summary["columns"]
    # a report written before the column: read back with the MDE missing (NaN), never an error
    old = json.loads(report.to_json())
    for tab in [old["summary"], *(s["summary"] for s in old["sections"])]:
        i = tab["columns"].index("min_detectable")
        tab["columns"].pop(i)
        for row in tab["rows"]:
            row.pop(i)
    assert Report.from_dict(old).table["min_detectable"].isna().all()


def test_too_small_to_tell_on_a_tiny_sample():
    d = make_amplification_demo(n_train=2000, n_test=60, random_state=1)
    labels = dict(attr_pred=d.attr_pred, task_pred=d.task_pred, attr_train=d.attr_train, task_train=d.task_train)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = audit(d.attr, d.task, **labels, sections=["directional", "mals"], n_boot=200, progress=False)
        lenient = audit(d.attr, d.task, **labels, sections=["directional", "mals"], n_boot=200, progress=False,
                        min_effect={"*": 1.0})
    t = rep.table
    small = t[t["reading"] == "too small to tell"]
    assert len(small), t[["metric", "direction", "ci_low", "ci_high", "min_detectable", "reading"]]
    for r in small.itertuples():
        assert r.ci_low <= 0 <= r.ci_high and r.min_detectable > 0.01 and "MDE" in r.note
    # the same intervals read "no evidence" when only effects of 1 matter (the MDE is below that)
    other = lenient.table.set_index(["metric", "direction"])
    for r in small.itertuples():
        assert other.loc[(r.metric, r.direction), "reading"] == "no evidence"
    assert "too small to tell" in rep.summary() and "too small to tell" in rep.to_html(plots=False)
    with pytest.raises(ValueError, match="min_effect"):
        AuditConfig(min_effect=-0.1)
    with pytest.raises(TypeError, match="min_effect"):
        AuditConfig(min_effect={1: 0.1})


def test_mixed_is_a_note_and_the_printed_p_is_the_interval_s():
    """The UCI Adult symptom: a per-pair McNemar p of 5e-39 printed beside an interval holding 0. Two groups whose
    pairs move in opposite directions: the pairs differ (McNemar), the mean does not."""
    rng = np.random.default_rng(0)
    n = 3000
    a = rng.integers(0, 2, n)
    t = (rng.random((n, 2)) < np.where(a[:, None] == 1, [0.6, 0.3], [0.3, 0.6])).astype(int)
    tp = t.copy()
    # task 0 over-predicted in group 1 (0.4 * 0.3 of its members), task 1 under-predicted in group 0 (0.6 * 0.2):
    # y * Delta is +0.12 for the one pair and -0.12 for the other, and the mean is 0
    u = rng.random(n)
    tp[(a == 1) & (u < 0.3) & (t[:, 0] == 0), 0] = 1
    tp[(a == 0) & (u < 0.2) & (t[:, 1] == 1), 1] = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = audit(a, t, task_pred=tp, attr_train=a, task_train=t, sections=["directional"], n_boot=300,
                    progress=False)
    row = rep.table.iloc[0]
    pairs = rep.section("directional").tables["pairs A->T"]
    assert pairs["McNemar p (per pair, Holm)"].min() < 1e-6  # single pairs differ
    assert row.ci_low <= 0 <= row.ci_high and row.p_value >= 0.05  # the mean does not: its own p says so
    assert row.reading in ("no evidence", "too small to tell") and "mixed:" in row.note
    assert "McNemar p (per pair)" in pairs.columns and "p_value" not in pairs.columns


def test_cli_min_effect(tmp_path):
    from click.testing import CliRunner

    from biasamp.cli import main

    d = make_amplification_demo(n_train=500, n_test=80, random_state=2)
    frame = pd.DataFrame({"attr": d.attr, "label": np.asarray(d.task)[:, 0],
                          "label_pred": np.asarray(d.task_pred)[:, 0]})
    path = tmp_path / "test.csv"
    frame.to_csv(path, index=False)
    out = tmp_path / "r.json"
    args = ["audit", str(path), "--task", "label", "--exclude", "dpa", "--exclude", "leakage", "--n-boot", "50",
            "-q", "--json", str(out)]
    res = CliRunner().invoke(main, [*args, "--min-effect", "0.5", "--min-effect", "DP=0.02"])
    assert res.exit_code == 0, res.output
    assert Report.from_json(out.read_text()).options["min_effect"] == {"*": 0.5, "DP": 0.02}
    bad = CliRunner().invoke(main, [*args, "--min-effect", "DP=big"])
    assert bad.exit_code == 2 and "METRIC=NUMBER" in bad.output


def test_a_p_value_of_another_test_is_not_printed_beside_an_interval():
    from biasamp.report._sections import _row, finish_summary

    # a registered section passing a per-pair test's p beside an interval holding 0 (the UCI Adult symptom)
    rows = [_row("Toy", "", 0.016, (-0.0016, 0.0344), "bootstrap", 100, p_value=5e-39),
            _row("Toy", "", 0.016, (0.002, 0.0344), "bootstrap", 100, p_value=0.01)]
    wrong, right = finish_summary(rows, AuditConfig())
    assert wrong["p_value"] is None and "not shown" in wrong["note"]
    assert right["p_value"] == 0.01
    # within rounding of the boundary, the interval decides
    (edge,) = finish_summary([_row("Toy", "", 0.02, (1e-12, 0.04), "t", 10, p_value=0.05)], AuditConfig())
    assert edge["p_value"] < 1 - 0.95 and edge["reading"] == "amplified"
