"""``Report.overview()``: the headline readings side by side, whether they disagree, and why (issue 30, item 5).

The data are built by hand so that every number of the explanation is known: two groups of 3,000 rows, F with a
positive rate of 12% in the labels and M with 30%; a model that predicts positives for 6% of F and 20% of M
(fewer positives overall: 13% vs 21%) shrinks the difference of the rates (18 -> 14 points), so BiasAmp-> A->T
reads reduced (-0.02 = the mean of y * delta over the pairs: (+0.06 - 0.10) / 2), while their ratio grows
(2.5 -> 3.33), so differential fairness' epsilon grows and DF amplification reads amplified.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from biasamp import audit
from biasamp.report import Report

N = 3000
FAST = {"n_boot": 200, "progress": False, "random_state": 0}


def _data(rate_f: float, rate_m: float, *, names=("F", "M")) -> pd.DataFrame:
    """Labels at 12% (F) and 30% (M); predictions positive for the first ``rate * N`` rows of each group."""
    parts = []
    for group, true, pred in ((names[0], 0.12, rate_f), (names[1], 0.30, rate_m)):
        t = np.zeros(N, dtype=int)
        t[: round(true * N)] = 1
        p = np.zeros(N, dtype=int)
        p[: round(pred * N)] = 1  # the predicted positives are labelled positives (or all of them, and more)
        parts.append(pd.DataFrame({"sex": group, "income": t, "pred": p}))
    return pd.concat(parts, ignore_index=True)


def _audit(d: pd.DataFrame, **kw) -> Report:
    options = {**FAST, "exclude": ["dpa", "leakage"], **kw}
    return audit(d["sex"], d["income"], task_pred=d["pred"], attr_train=d["sex"], task_train=d["income"], **options)


@pytest.fixture(scope="module")
def lowered():
    return _audit(_data(0.06, 0.20))


@pytest.fixture(scope="module")
def raised():
    return _audit(_data(0.12, 0.40))


def test_a_lower_base_rate_makes_differences_and_ratios_disagree(lowered):
    table = lowered.table.set_index(["metric", "direction"])
    assert table.loc[("BiasAmp->", "A->T"), "value"] == pytest.approx((0.06 - 0.10) / 2)  # by hand, see above
    assert table.loc[("BiasAmp->", "A->T"), "reading"] == "reduced"
    eps_true, eps_pred = table.loc[("epsilon_true", ""), "value"], table.loc[("epsilon_pred", ""), "value"]
    assert eps_pred > eps_true and table.loc[("DF amplification", ""), "reading"] == "amplified"

    ov = lowered.overview()
    assert ov.disagree and len(ov.attributes) == 1
    a = ov.attributes[0]
    assert a.disagree and a.attribute == "sex"
    head = a.headlines.set_index(["metric", "direction"])
    assert head.loc[("BiasAmp->", "A->T"), "sign"] == -1 and head.loc[("DF amplification", ""), "sign"] == 1
    assert head.loc[("DP", ""), "sign"] == 0  # a disparity is not a direction of amplification
    assert head.loc[("BiasAmp->", "A->T"), "scale"] == "difference"
    assert head.loc[("DI", ""), "scale"] == "ratio" and head.loc[("DF amplification", ""), "scale"] == "ratio"
    assert set(head["reads"]) == {"task_pred"}
    why = " ".join(a.explanation)
    # the base-rate shift, overall (13% vs 21%) and per group, computed by hand
    assert "less often than the labels have it (13.0% of the test rows vs 21.0%: fewer positives overall)" in why
    assert "F 6.0% vs 12.0%" in why and "M 20.0% vs 30.0%" in why
    # differences shrink, ratios grow: 18 -> 14 points, 2.50 -> 3.33 (log 0.92 -> 1.20)
    assert "difference of the rates shrinks (18.0 -> 14.0 points" in why
    assert f"ratio grows (2.50 -> 3.33, max / min; log-ratio {math.log(2.5):.2f} -> {math.log(20 / 6):.2f})" in why
    assert "With fewer positives predicted, measures of differences follow the difference (BiasAmp-> A->T" in why
    assert "measures of ratios follow the ratio (DF amplification" in why
    # the base rates are kept as numbers too
    facts = a.base_rates.iloc[0]
    assert (facts["rate_true"], facts["rate_pred"]) == pytest.approx((0.21, 0.13))
    assert (facts["gap_true"], facts["gap_pred"]) == pytest.approx((0.18, 0.14))
    assert (facts["ratio_true"], facts["ratio_pred"]) == pytest.approx((2.5, 20 / 6))
    # the pairs: M's rate falls 10 points (weakening M's positive association), F's 6 points (strengthening)
    assert len(a.pairs) == 2
    assert a.pairs[0].startswith("M x income = 1 (A->T): among M, the model predicts income = 1 10.0 points less "
                                 "often than the labels have it (20.0% vs 30.0%; 95% CI of the difference")
    assert "weakening the association in the training data" in a.pairs[0]
    assert "strengthening the association in the training data" in a.pairs[1]
    pairs = lowered.section("directional").tables["pairs A->T"].set_index(["attr", "task"])
    lo, hi = pairs.loc[("M", 1), ["ci_low", "ci_high"]]
    assert f"{100 * lo:+.1f} to {100 * hi:+.1f} points" in a.pairs[0]


def test_without_a_training_set_the_pairs_read_the_association_of_the_test_labels():
    # the signs then come from the test ground truth (cross-fitted): the sentence must not speak of training data
    d = _data(0.06, 0.20)
    report = audit(d["sex"], d["income"], task_pred=d["pred"], **FAST, exclude=["dpa", "leakage"])
    pairs = report.overview().attributes[0].pairs
    assert pairs and all("the association in the test labels" in p for p in pairs)
    assert not any("training" in p for p in pairs)


def test_agreeing_measures_do_not_disagree(raised):
    ov = raised.overview()
    a = ov.attributes[0]
    assert not ov.disagree and not a.disagree
    assert set(a.headlines.loc[a.headlines["sign"] != 0, "reading"]) == {"amplified"}
    why = " ".join(a.explanation)
    assert why.startswith("The readings agree: BiasAmp-> A->T (+0.0500), DF amplification")
    assert "more often than the labels have it (26.0% of the test rows vs 21.0%: more positives overall)" in why
    assert "difference of the rates grows (18.0 -> 28.0 points, max - min) and their ratio grows" in why
    assert "this is why they disagree" not in why


def test_unknown_readings_are_not_directions(lowered):
    """A reading added later (e.g. "too small to tell") or a disparity never sets disagree."""
    rep = Report.from_json(lowered.to_json())
    for s in rep.sections:
        s.summary["reading"] = s.summary["reading"].replace({"amplified": "too small to tell"})
    assert not rep.overview().disagree
    frame = rep.overview().to_frame()
    assert set(frame.loc[frame["reading"] == "too small to tell", "sign"]) == {0}


def test_overview_result_prints_and_converts(lowered):
    ov = lowered.overview()
    frame = ov.to_frame()
    assert list(frame.columns[:2]) == ["attribute", "disagree"] and len(frame) == len(lowered.table)
    obj = ov.to_dict()
    assert json.loads(json.dumps(obj, allow_nan=False)) == obj
    assert obj["disagree"] is True and obj["attributes"][0]["explanation"] == ov.attributes[0].explanation
    text = str(ov)
    assert text.startswith("OVERVIEW: the measures DISAGREE (docs/report.md, 'Overview')\n  amplified: DF amplification (+0.2866) [ratio]\n"
                           "  reduced: BiasAmp-> A->T (-0.0200) [difference]\n")
    assert "  why:\n    - The model predicts income = 1 less often" in text
    assert all(len(line) <= 100 for line in text.splitlines())


def test_overview_comes_first_in_every_format(lowered):
    summary = lowered.summary()
    assert summary.index("OVERVIEW") < summary.index("metric ") < summary.index("BiasAmp->     ")
    html = lowered.to_html(plots=False)
    assert html.index('<section id="overview"') < html.index('<h2 id="summary">')
    assert "the measures DISAGREE" in html and "13.0% of the test rows vs 21.0%" in html
    md = lowered.to_markdown()
    assert md.index("## Overview") < md.index("| metric |")
    assert "fewer positives overall" in md
    obj = json.loads(lowered.to_json())
    assert list(obj)[:6] == ["schema", "biasamp_version", "title", "source", "inputs", "options"]
    assert list(obj).index("overview") < list(obj).index("summary")
    assert obj["overview"] == lowered.overview().to_dict()
    tex = lowered.to_latex()
    assert "The measures disagree." in tex and "fewer positives overall" in tex
    assert "## Overview" in lowered.to_model_card()
    agree = _audit(_data(0.12, 0.40)).to_latex()
    assert "disagree" not in agree


def test_json_round_trip_keeps_the_overview(lowered):
    text = lowered.to_json()
    back = Report.from_json(text)
    assert back.to_json() == text
    assert back.overview().to_dict() == lowered.overview().to_dict()
    assert str(back.overview()) == str(lowered.overview())


def test_json_schema_checks_the_overview(lowered):
    obj = json.loads(lowered.to_json())
    obj["overview"]["attributes"][0]["explanation"] = "not a list"
    with pytest.raises(ValueError, match="overview.attributes"):
        Report.from_dict(obj)
    del obj["overview"]  # a report written before the overview existed is still read
    assert Report.from_dict(obj).overview().disagree


def test_several_attributes_have_one_overview_each():
    d = _data(0.06, 0.20)
    d["other"] = np.tile(["a", "b"], len(d) // 2)  # independent of everything: no amplification
    rep = audit({"sex": d["sex"], "other": d["other"]}, d["income"], task_pred=d["pred"],
                attr_train={"sex": d["sex"], "other": d["other"]}, task_train=d["income"],
                exclude=["dpa", "leakage"], **FAST)
    ov = rep.overview()
    assert [a.attribute for a in ov.attributes] == ["sex", "other"]
    assert ov.attributes[0].disagree and not ov.attributes[1].disagree
    assert set(ov.to_frame().query("attribute == 'sex'")["section"]) == {
        "directional[sex]", "fairness[sex]", "differential[sex]"}
    summary = rep.summary()
    assert summary.count("OVERVIEW") == 2
    assert "## Overview" in rep.to_markdown() and "<h3>other</h3>" in rep.to_html(plots=False)


def test_predictability_is_explained():
    """DPA reads amplified with BiasAmp-> reduced: the predictability sentence says why."""
    d = _data(0.06, 0.20)
    rep = audit(d["sex"], d["income"], task_pred=d["pred"], attr_train=d["sex"], task_train=d["income"],
                sections=["directional", "dpa"], n_iter=3, **FAST)
    a = rep.overview().attributes[0]
    head = a.headlines.set_index(["metric", "direction"])
    assert head.loc[("DPA", "A->T"), "scale"] == "predictability" and head.loc[("DPA", "A->T"), "reads"] == "task_pred"
    assert a.disagree and head.loc[("DPA", "A->T"), "reading"] == "amplified"
    assert any(s.startswith("Predictability measures (DPA A->T") and "BiasAmp-> A->T (-0.0200)" in s
               for s in a.explanation)
    # without the fairness section there is no base-rate table: the pairs read the last class (1 of 0/1)
    assert a.pairs[0].startswith("M x income = 1 (A->T)")


def test_hostile_names_are_escaped():
    d = _data(0.06, 0.20, names=("<script>alert(1)</script>", "M\x1b[2J](http://x)"))
    rep = _audit(d)
    assert rep.overview().disagree
    assert "\x1b" not in rep.summary() and "\\x1b[2J" in rep.summary()
    html = rep.to_html(plots=False)
    overview = html[html.index('<section id="overview"'):html.index('<h2 id="summary">')]
    assert "<script>" not in overview and "&lt;script&gt;" in overview
    md = rep.to_markdown()
    block = md[md.index("## Overview"):md.index("| metric |")]
    assert "](http" not in block.replace("\\](http", "") and "\\](http" in block  # no link: the ]( escaped
    assert "<script>" not in block and "\x1b" not in block
    tex = rep.to_latex()
    assert "\x1b" not in tex


def test_streamed_audit_gives_the_same_overview(tmp_path, lowered):
    pytest.importorskip("pyarrow")
    from biasamp.report._stream import ParquetDataset, StreamColumns, stream_audit

    d = _data(0.06, 0.20)
    (tmp_path / "test").mkdir()
    (tmp_path / "train").mkdir()
    d.iloc[:3500].to_parquet(tmp_path / "test" / "part-0.parquet")
    d.iloc[3500:].to_parquet(tmp_path / "test" / "part-1.parquet")
    d[["sex", "income"]].to_parquet(tmp_path / "train" / "part-0.parquet")
    cols = StreamColumns("sex", ("income",), ("income",), None, ("pred",))
    rep = stream_audit(ParquetDataset.open(tmp_path / "test"), cols, train=ParquetDataset.open(tmp_path / "train"),
                       dpa_rows=0, batch_size=500, names={"attr": "sex", "task": "income"}, n_boot=200,
                       progress=False, random_state=0)
    streamed, in_memory = rep.overview(), lowered.overview()
    assert streamed.disagree
    # the readings and the explanation are those of the in-memory audit (the intervals of the pairs come from
    # another bootstrap, hashed groups of rows: the pair sentences quote them)
    assert streamed.attributes[0].explanation == in_memory.attributes[0].explanation
    assert [p.split("; 95% CI")[0] for p in streamed.attributes[0].pairs] == \
        [p.split("; 95% CI")[0] for p in in_memory.attributes[0].pairs]
    cols_ = ["metric", "direction", "value", "reading", "sign", "scale", "reads"]
    pd.testing.assert_frame_equal(streamed.to_frame()[cols_], in_memory.to_frame()[cols_])


def test_opposite_readings_on_different_predictions_are_two_findings():
    """The demo: BiasAmp-> A->T amplified (task predictions), T->A reduced (attribute predictions)."""
    from biasamp.datasets import make_amplification_demo

    d = make_amplification_demo()  # the demo's sizes: T->A reads reduced
    rep = audit(d.attr, d.task, attr_pred=d.attr_pred, task_pred=d.task_pred, attr_train=d.attr_train,
                task_train=d.task_train, sections=["directional"], **FAST)
    a = rep.overview().attributes[0]
    assert a.disagree
    assert dict(zip(a.headlines["direction"], a.headlines["reads"])) == {"A->T": "task_pred", "T->A": "attr_pred"}
    sides = [s for s in a.explanation if s.startswith("By the predictions they read")]
    assert len(sides) == 1 and "on the task predictions, BiasAmp-> A->T" in sides[0]
    assert "on the attribute predictions, BiasAmp-> T->A" in sides[0] and "two findings" in sides[0]
