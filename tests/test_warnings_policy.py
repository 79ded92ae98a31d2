"""What a practitioner meets on real data: warnings, errors, undefined values with their reason, per-group tables.

Each test reproduces a symptom found on real data (issue 30, items 6-8): a 20-row BiasAmp-> that flagged every
pair small but said nothing; an audit of string labels and integer predictions that returned an empty report; a
disparity read "undefined" without saying the reference rate was 0; per-group tables without base rate,
accuracy, precision and FNR, and none in the Markdown; chart labels "Male / 0" without the task's name.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

from biasamp import SmallGroupWarning, UndefinedPairWarning, audit, bias_amp_directional, fairness_metrics
from biasamp.datasets import make_amplification_demo

FAST = {"n_boot": 20, "progress": False, "exclude": ["dpa", "leakage"]}


def _binary(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    sex = rng.choice(["Female", "Male"], n)
    y = (rng.random(n) < np.where(sex == "Male", 0.6, 0.4)).astype(int)
    p = np.where(rng.random(n) < 0.8, y, 1 - y)
    return sex, y, p


# --------------------------------------------------------------------------- #
# small groups: one warning in every family
# --------------------------------------------------------------------------- #
def test_twenty_rows_of_biasamp_warn_that_every_group_is_small():
    sex, y, p = _binary(20, 0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = bias_amp_directional(sex, y, attr_pred=sex, task_pred=p)
    said = [w for w in caught if w.category is SmallGroupWarning]
    assert len(said) == 1 and said[0].filename == __file__  # once, at this line
    n = pd.Series(sex).value_counts()
    assert str(said[0].message) == (
        "BiasAmp->: 2 group(s) with fewer than 30 test members, kept in the headline (fewer than two groups have "
        f"at least min_group_size members, so none is left out): 'Female' (n={n['Female']}), 'Male' (n={n['Male']})")
    assert res.a_to_t.pairs["small"].all()  # the tables flag what the warning says
    # fairness, the family that already warned, says it with the same words
    with pytest.warns(SmallGroupWarning) as fair:
        fairness_metrics(y, p, sensitive_features=sex)
    assert str(fair[0].message).replace("group fairness", "BiasAmp->") == str(said[0].message)


def test_the_audit_keeps_the_small_group_warning_in_each_sections_notes():
    sex, y, p = _binary(40, 1)
    rep = audit(sex, y, task_pred=p, attr_pred=sex, **FAST)
    for key in ("directional", "mals", "fairness", "differential"):
        notes = rep.section(key).notes
        assert sum(n.startswith("SmallGroupWarning: ") and "2 group(s) with fewer than 30" in n for n in notes) == 1, \
            (key, notes)


# --------------------------------------------------------------------------- #
# the audit raises instead of returning an empty report
# --------------------------------------------------------------------------- #
def test_audit_of_string_labels_and_integer_predictions_raises_naming_both_class_sets():
    sex, y, p = _binary(200, 2)
    labels = np.where(y == 1, "yes", "no")
    with pytest.raises(ValueError, match=re.escape("task_pred shares no class with task: task has the classes "
                                                   "['no', 'yes'], task_pred the values [0, 1]")):
        audit(sex, labels, task_pred=p, **FAST)
    with pytest.raises(ValueError, match=re.escape("attr_pred shares no class with attr: attr has the classes "
                                                   "['Female', 'Male'], attr_pred the values [0, 1]")):
        audit(sex, y, task_pred=p, attr_pred=(sex == "Male").astype(int), **FAST)
    # probabilities of a 0/1 label and predictions sharing a class are not refused here
    assert audit(sex, y, task_pred=np.clip(p * 0.7 + 0.1, 0, 1), **FAST).section("fairness").status == "ok"


def test_audit_where_every_section_fails_raises_listing_each_error():
    sex, y, p = _binary(200, 3)
    p = np.where(p == 0, 2, p)  # class 2 is no class of the labels; class 1 is: the sets overlap
    with pytest.raises(ValueError, match="every section failed") as info:
        audit(sex, y, task_pred=p, **FAST)
    message = str(info.value)
    assert message.startswith("audit: no metric could be computed, every section failed:")
    for title in ("Directional bias amplification BiasAmp->", "Group fairness", "Differential fairness"):
        assert re.search(rf"\n  {re.escape(title)}[^\n]*: ValueError: [^\n]*predicted classes \[2\]", message), title
    assert all(s.status in ("error", "skipped") for s in info.value.report.sections)  # the report comes with it
    # several attributes: the audit raises only when no attribute's section was computed
    race = np.random.default_rng(5).choice(["a", "b"], 200)
    with pytest.raises(ValueError, match=r"every section failed:\n  Directional bias amplification BiasAmp-> — sex"):
        audit({"sex": sex, "race": race}, y, task_pred=p, **FAST)
    rep = audit({"sex": sex, "race": race}, y, task_pred=np.where(p == 2, 0, p), **FAST)
    assert rep.section("fairness[sex]").status == "ok" and rep.section("fairness[race]").status == "ok"




# --------------------------------------------------------------------------- #
# "undefined" always says why
# --------------------------------------------------------------------------- #
def test_undefined_disparities_say_why():
    # group a: rows 0-3, no false positive (FPR 0); b: no positive; c: no negative
    y = np.array([1, 0, 1, 0, 0, 0, 1, 1])
    p = np.array([1, 0, 0, 0, 1, 0, 1, 1])
    g = np.array(["a", "a", "a", "a", "b", "b", "c", "c"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (SmallGroupWarning, UndefinedPairWarning))
        res = fairness_metrics(y, p, sensitive_features=g, reference_group="a")
    reading = res.disparities.set_index(["rate", "group"])["reading"]
    assert reading["fpr", "b"] == "undefined: the FPR of the reference group 'a' is 0"
    assert reading["tpr", "b"] == "undefined: no positive in group 'b' (its TPR is undefined)"
    assert reading["fpr", "c"] == "undefined: no negative in group 'c' (its FPR is undefined)"
    assert not any(r == "undefined" for r in reading)  # never a bare "undefined"
    reason = res.by_group.set_index(["class", "group"])["undefined_reason"]
    assert reason[1, "b"] == "TPR, FNR: no positive in the group"  # (one false positive: its precision is 0)
    assert reason[1, "c"] == "FPR: no negative in the group" and reason[1, "a"] == ""


def test_classes_left_out_of_a_fairness_headline_say_why_in_the_report():
    rng = np.random.default_rng(6)
    n = 300
    sex = rng.choice(["F", "M"], n)
    y = rng.integers(0, 3, n)
    y[(sex == "F") & (y == 2)] = 0  # class 2 has no positive among F: its EOTP compares one group
    p = np.where(rng.random(n) < 0.8, y, rng.integers(0, 3, n))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        rep = audit(sex, y, task_pred=p, **FAST)
    row = rep.section("fairness").summary.set_index("metric").loc["EOTP"]
    assert "1 classes undefined: EOTP needs, per class, at least two groups with a positive instance" in row["note"]


# --------------------------------------------------------------------------- #
# the per-group table a practitioner expects
# --------------------------------------------------------------------------- #
def test_by_group_rates_equal_fairlearns_metricframe():
    fl = pytest.importorskip("fairlearn.metrics")
    from sklearn.metrics import accuracy_score, precision_score

    rng = np.random.default_rng(7)
    n = 600
    g = rng.choice(["x", "y", "z"], n, p=[0.5, 0.3, 0.2])
    y = (rng.random(n) < np.select([g == "x", g == "y"], [0.3, 0.5], 0.6)).astype(int)
    p = np.where(rng.random(n) < 0.75, y, 1 - y)
    w = rng.integers(1, 4, n).astype(float)

    def base_rate(y_true, y_pred, sample_weight=None):
        return float(np.average(y_true, weights=sample_weight))

    metrics = {"base_rate": base_rate, "ppr": fl.selection_rate, "tpr": fl.true_positive_rate,
               "fpr": fl.false_positive_rate, "fnr": fl.false_negative_rate,
               "precision": precision_score, "accuracy": accuracy_score}
    mf = fl.MetricFrame(metrics=metrics, y_true=y, y_pred=p, sensitive_features=g,
                        sample_params={k: {"sample_weight": w} for k in metrics})
    res = fairness_metrics(y, p, sensitive_features=g, sample_weight=w)
    ours = res.by_group[res.by_group["class"] == 1].set_index("group")
    np.testing.assert_allclose(ours[list(metrics)].to_numpy(float), mf.by_group[list(metrics)].to_numpy(float),
                               rtol=1e-12)
    assert not ours[["tpr_undefined", "fpr_undefined", "precision_undefined"]].to_numpy().any()
    assert (ours["undefined_reason"] == "").all()


def test_by_group_formulas_by_hand():
    # group a: TP 2, FN 1, FP 1, TN 2 (n 6); weights double the last row (a TN)
    y = np.array([1, 1, 1, 0, 0, 0, 1, 0])
    p = np.array([1, 1, 0, 1, 0, 0, 0, 0])
    g = np.array(["a"] * 6 + ["b"] * 2)
    w = np.array([1, 1, 1, 1, 1, 2, 1, 1], dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (SmallGroupWarning, UndefinedPairWarning))
        res = fairness_metrics(y, p, sensitive_features=g, sample_weight=w)
    a = res.by_group.set_index(["class", "group"]).loc[(1, "a")]
    assert a["n"] == 7 and a["base_rate"] == pytest.approx(3 / 7) and a["ppr"] == pytest.approx(3 / 7)
    assert a["tpr"] == pytest.approx(2 / 3) and a["fnr"] == pytest.approx(1 / 3)
    assert a["fpr"] == pytest.approx(1 / 4) and a["precision"] == pytest.approx(2 / 3)
    assert a["accuracy"] == pytest.approx(5 / 7)  # TP 2 + TN 3 (one of weight 2)
    b = res.by_group.set_index(["class", "group"]).loc[(1, "b")]
    assert np.isnan(b["precision"]) and b["precision_undefined"]  # never predicted positive
    assert b["undefined_reason"] == "precision: no positive prediction in the group"


def test_markdown_has_the_per_group_tables_and_the_audit_shows_the_rates():
    sex, y, p = _binary(300, 8)
    rep = audit(sex, pd.Series(y, name="income"), task_pred=p, attr_pred=sex, **FAST)
    by_group = rep.section("fairness").tables["by group"]
    assert {"base_rate", "accuracy", "precision", "fnr", "ppr", "tpr", "fpr"} <= set(by_group.columns)
    text = rep.to_markdown()
    assert "**by group**" in text and "**rates by group**" in text  # without details=True
    header = next(line for line in text.splitlines() if line.startswith("| class | group |"))
    assert all(f" {c} " in header for c in ("base_rate", "ppr", "tpr", "fpr", "fnr", "precision", "accuracy"))
    assert "**pairs A->T**" not in text  # the other detail tables stay on request
    assert "**pairs A->T**" in rep.to_markdown(details=True)


def test_pair_labels_name_the_task():
    sex, y, p = _binary(300, 9)
    rep = audit(sex, pd.Series(y, name="income"), task_pred=p, attr_pred=sex, **FAST)
    for key in ("directional", "mals"):
        labels = set(rep.section(key).figures[0].data["label"])
        assert labels and all(re.fullmatch(r"(Female|Male) / income=[01]", s) for s in labels), labels
    d = make_amplification_demo(n_train=500, n_test=500)
    multi = audit(d.attr, d.task, task_pred=d.task_pred, attr_pred=d.attr_pred, sections=["directional"],
                  n_boot=0, progress=False)  # a multi-label task: its labels are named columns
    assert set(multi.section("directional").figures[0].data["label"]) <= {
        f"{a} / {t}" for a in d.attr.unique() for t in d.task.columns}
