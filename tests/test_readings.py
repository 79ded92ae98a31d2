"""Readings a reader can trust (issue 21, items 4-9): many-level attributes, zero and "mixed" readings,
the terminal legend, exports with several attributes, charts without mirror images, compare_runs' level."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

from biasamp._engine.intervals import abs_range, nan_reduce
from biasamp.datasets import make_amplification_demo
from biasamp.exceptions import SmallGroupWarning
from biasamp.fairness import _plan as fplan
from biasamp.report import audit

FAST = {"n_boot": 100, "n_boot_multi": 10, "n_iter": 3, "attacker": "tabular", "progress": False}


@pytest.fixture(scope="module")
def demo():
    return make_amplification_demo(n_train=2000, n_test=1000)


@pytest.fixture(scope="module")
def report(demo):
    d = demo
    return audit(d.attr, d.task, attr_pred=d.attr_pred, task_pred=d.task_pred, attr_train=d.attr_train,
                 task_train=d.task_train, min_support=1, **FAST)


# --------------------------------------------------------------------------- #
# item 4: the band of max - min over many groups is linear in the groups
# --------------------------------------------------------------------------- #
def test_many_groups_parts_are_group_rates_and_box_bounds_match_all_pairs():
    rng = np.random.default_rng(4)
    g, k = fplan.PAIRWISE_MAX_GROUPS + 8, 2
    n = rng.integers(5, 50, size=(3, g)).astype(float)
    pos = np.floor(n[..., None] * rng.random((3, g, k)))
    pred = np.floor(n[..., None] * rng.random((3, g, k)))
    tp = np.minimum(pos, pred)
    gbar = np.zeros((1, k), dtype=np.intp)
    parts = fplan._parts("DP", n, pos, pred, tp, gbar)
    assert parts.shape == (3, k * g)  # G parts per class, not G(G-1)/2
    # the range of max - min over a box of group rates, derived independently over every pair
    lo = rng.random(k * g) * 0.6
    hi = lo + rng.random(k * g) * 0.4
    lo[3] = hi[3] = np.nan  # an undefined group rate is left out
    got_lo, got_hi = fplan._to_units("DP", k, g)(lo, hi)
    lo2, hi2 = lo.reshape(k, g), hi.reshape(k, g)
    i, j = np.triu_indices(g, 1)
    a, b = abs_range(lo2[:, i] - hi2[:, j], hi2[:, i] - lo2[:, j])
    np.testing.assert_allclose(got_lo, nan_reduce(a, 1, "max"))
    np.testing.assert_allclose(got_hi, np.minimum(nan_reduce(b, 1, "max"), 1.0))


def test_few_groups_keep_the_pairwise_band():
    n = np.array([[10.0, 20.0, 30.0]])
    pos = np.array([[[3.0], [5.0], [9.0]]])
    parts = fplan._parts("EOTP", n, pos, pos, pos, np.zeros((1, 1), dtype=np.intp))
    assert parts.shape == (1, 3)  # 3 pairs of 3 groups (the tighter band), numbers unchanged


def test_many_level_attribute_audit_is_bounded_warned_and_holds_estimates():
    rng = np.random.default_rng(0)
    n = 3000
    attr = pd.Series([f"z{i:03d}" for i in rng.integers(0, 400, n)], name="zip")
    y = (rng.random(n) < 0.45).astype(int)
    p = np.where(rng.random(n) < 0.8, y, 1 - y)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rep = audit(attr, y, task_pred=p, n_boot=50, exclude=["dpa", "leakage"], progress=False)
    said = [str(w.message) for w in caught if issubclass(w.category, SmallGroupWarning)]
    median = float(np.median(attr.value_counts().to_numpy()))
    assert any("'zip'" in m and f"median {median:g} rows per level" in m for m in said)
    assert rep.inputs["warnings"] and "few rows per level" in rep.inputs["warnings"][0]
    fair = rep.section("fairness")
    assert fair.status == "ok"
    for r in fair.summary.itertuples():
        assert r.ci_low <= r.value <= r.ci_high
    text = rep.summary(width=100)
    assert max(map(len, text.splitlines())) <= 100
    flat = " ".join(text.split())  # lines wrap between words
    assert re.search(r"'z\d{3}', \.\.\. \(\d{3} in all\)\]", flat)
    assert "'z300'" not in flat.split("values are fractions")[0]  # the header does not list all 400 groups
    assert "warning: attribute 'zip' has few rows per level" in flat


def test_few_rows_per_level_warning_is_silent_for_ordinary_attributes(demo):
    from biasamp.report._inputs import level_size_warning

    assert level_size_warning(demo.attr, "gender", 30) is None  # two large groups
    assert level_size_warning(np.repeat(["a", "b", "c"], [5, 5, 100]), "x", 30) is not None  # median 5
    assert level_size_warning(np.repeat(["a", "b", "c"], [5, 5, 100]), "x", 0) is None  # threshold off


# --------------------------------------------------------------------------- #
# item 5: zero readings
# --------------------------------------------------------------------------- #
def test_balanced_data_reads_not_measurable_not_mixed():
    # docs/fairness.md's example: every (gender, class) pair is independent, so every sign y_at is 0
    y_true = np.repeat(["sport", "cook", "sport", "cook"], 100)
    y_pred = np.repeat(["sport", "cook"] * 4, [80, 20, 10, 90, 60, 40, 70, 30])
    gender = np.repeat(["female", "male"], 200)
    # balanced by design: the design is the training set (without it the signs would be cross-fitted over two
    # halves of the test rows, whose chance imbalance is not the design's; the reading stays "not measurable")
    crossfit = audit(gender, y_true, task_pred=y_pred, sections=["directional"], n_boot=100, progress=False)
    assert crossfit.table.iloc[0].reading == "not measurable" and "halves" in crossfit.table.iloc[0].note
    rep = audit(gender, y_true, task_pred=y_pred, attr_train=gender, task_train=y_true, sections=["directional"],
                n_boot=100, progress=False)
    row = rep.table.iloc[0]
    assert row.value == 0 and row.ci_low == row.ci_high == 0
    assert row.reading == "not measurable"
    assert "DPA" in row.note and "mixed" not in row.note and "bootstrap replicate" not in row.note
    assert "not measurable" in rep.summary()


def test_la_zero_width_names_the_majority_class_attacker():
    rng = np.random.default_rng(0)
    a = np.where(rng.random(1000) < 0.7, "a", "b")
    t = (rng.random(1000) < 0.4).astype(int)
    tp = t.copy()
    tp[:50] = 1 - tp[:50]
    rep = audit(a, t, task_pred=tp, sections=["leakage"], n_iter=3, attacker="tabular", progress=False)
    row = rep.table.iloc[0]
    if row.ci_low != row.ci_high:  # pragma: no cover - the attacker found something after all
        pytest.skip("the attacker is not a majority-class one on this sample")
    assert "majority attribute class" in row.note and "bootstrap replicate" not in row.note


def test_rounding_error_of_zero_prints_as_zero():
    from biasamp._core.results import signed
    from biasamp.report._export import _num
    from biasamp.report._html import _cell

    assert signed(-2.2e-20) == "+0.0000"
    assert _num(-2.2e-20, 4) == "+0.0000"
    assert _cell(-2.2e-20) == ("0.0000", True)
    assert signed(3.2e-6) == "+3.2e-06"  # a real small value keeps its digits


# --------------------------------------------------------------------------- #
# item 7: terminal, exports, charts
# --------------------------------------------------------------------------- #
def test_terminal_legend_and_p_reasons(report):
    text = report.summary(width=100)
    legend = text.split("terms:")[1].split("notes:")[0]
    for term in ("BCa:", "max-t band:", "Holm:", "p:", "MDE:", "BA: Qian et al.", "Psi_D, Psi_M:", "inv_ce:",
                 "lambda_D, lambda_M:"):
        assert term in legend, term
    # every interval has its own p-value now (BiasAmp_MALS and DPA had none: "n/a")
    rows = [line for line in text.splitlines() if line.startswith(("BiasAmp_MALS", "DPA "))]
    assert rows and not any(" n/a " in line for line in rows)
    assert "p n/a:" not in legend
    assert "Qian et al.'s bias amplification" in report.table.set_index("metric").loc["BA", "note"]


def test_terminal_notes_wrap_and_never_cut_a_number(report):
    text = report.summary(width=100)
    assert max(map(len, text.splitlines())) <= 100
    assert "..." not in "\n".join(line for line in text.splitlines() if line.startswith("DPA"))
    # the DPA note's numbers appear whole
    row = report.table.query("metric == 'DPA'").iloc[0]
    for number in re.findall(r"\d+\.\d+", row.note):
        assert number in text


def test_small_effect_is_said_next_to_its_reading():
    from biasamp.report import AuditConfig
    from biasamp.report._sections import SMALL_EFFECT, _row, finish_summary

    tiny = _row("DPA", "A->T", 0.0037, (0.001, 0.006), "t over 10 iterations", 100, "note")
    large = _row("DPA", "A->T", 0.2, (0.1, 0.3), "t over 10 iterations", 100, "note")
    tiny, large = finish_summary([tiny, large], AuditConfig())
    assert tiny["reading"] == "amplified" and tiny["note"].startswith("small effect")
    assert "small effect" not in large["note"] and SMALL_EFFECT == 0.01 == AuditConfig().min_effect
    # the threshold is the audit's min_effect (per metric when a mapping)
    (big,) = finish_summary([_row("DPA", "A->T", 0.2, (0.1, 0.3), "t", 100)], AuditConfig(min_effect={"DPA": 0.5}))
    assert big["note"].startswith("small effect: |value| < 0.5")


def test_markdown_and_model_card_name_the_attribute_of_each_row(demo):
    sex = np.where(np.arange(len(demo.attr)) % 3 == 0, "f", "m")
    rep = audit({"gender": demo.attr, "sex": sex}, demo.task, task_pred=demo.task_pred,
                sections=["fairness"], n_boot=50, progress=False)
    md = rep.to_markdown()
    header = next(line for line in md.splitlines() if line.startswith("| attribute | metric"))
    assert header
    assert re.search(r"^\| gender \| DP \|", md, re.M) and re.search(r"^\| sex \| DP \|", md, re.M)
    card = rep.to_model_card()
    assert "DP [gender]" in card and "DP [sex]" in card


def test_binary_attribute_charts_have_no_mirror_images(report):
    fig = next(f for f in report.section("directional").figures if f.key == "pairs")
    t_to_a = fig.data[fig.data["facet"] == "T->A"]
    tasks = [label.split(" / ")[1] for label in t_to_a["label"]]
    assert len(tasks) == len(set(tasks))  # one bar per task
    multi = next(f for f in report.section("multi").figures if f.key == "combinations")
    m_to_g = multi.data[multi.data["facet"] == "Multi-> M->G"]
    combos = [label.split(": ", 1)[1] for label in m_to_g["label"]]
    assert len(combos) == len(set(combos))


def test_mals_chart_has_group_sizes_and_intervals(report):
    fig = next(f for f in report.section("mals").figures if f.key == "pairs")
    assert {"n", "low", "high", "small"} <= set(fig.data.columns)
    assert (fig.data["low"] <= fig.data["value"]).all() and (fig.data["value"] <= fig.data["high"]).all()


def test_html_method_column_does_not_wrap_and_p_na_has_a_reason(report):
    html = report.to_html(plots=False)
    assert 'class="method"' in html and "td.method{min-width:11em}" in html  # two lines at most, not four
    assert 'class="num na"' not in html  # every interval of this report has its own p-value: no "n/a" cell


def test_audit_min_support_default_and_help():
    import inspect

    from click.testing import CliRunner

    from biasamp.cli import main
    from biasamp.report import AuditConfig

    assert AuditConfig().min_support == 10  # the audit's options are one AuditConfig (its keywords are sugar)
    assert "min_support" in inspect.signature(AuditConfig).parameters
    out = CliRunner().invoke(main, ["audit", "--help"], terminal_width=200).output
    assert "training set (--train), or of the test set without one" in " ".join(out.split())
