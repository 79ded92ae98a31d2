"""Parity with aequitas's bias report: disparities to a reference group, read against a tolerance.

aequitas's ``Group().get_crosstabs`` gives per group the predicted
prevalence ``pprev`` (our selection rate), ``tpr`` and ``fpr``;
``Bias().get_disparity_*`` divides each by the reference group's
(``*_disparity``), the reference being a named group
(``get_disparity_predefined_groups``) or the largest one
(``get_disparity_major_group``); ``Fairness`` reads a disparity as fair when
it lies in ``[tau, 1/tau]`` (tau = 0.8 by default). Our
``result.disparities`` holds the same table with ``reference_group=`` and
``tolerance=``.

aequitas is not a dependency (its install pulls altair, fastparquet, seaborn,
...): the expected tables are encoded by hand here, and the live comparison
runs only where aequitas is installed. The documented differences
(docs/fairness.md, "Differences from the peers") have one test each.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from biasamp import fairness_metrics


def _table():
    """Three groups with clean rates (the positive class is 1).

    A: 10 rows, 5 positives, TP 4, FP 1 -> selection 0.5, TPR 0.8, FPR 0.2
    B:  8 rows, 4 positives, TP 2, FP 2 -> selection 0.5, TPR 0.5, FPR 0.5
    C:  5 rows, 2 positives, TP 2, FP 0 -> selection 0.4, TPR 1.0, FPR 0.0
    """
    rows = []
    for g, pos, tp, neg, fp in (("A", 5, 4, 5, 1), ("B", 4, 2, 4, 2), ("C", 2, 2, 3, 0)):
        rows += [(g, 1, 1)] * tp + [(g, 1, 0)] * (pos - tp) + [(g, 0, 1)] * fp + [(g, 0, 0)] * (neg - fp)
    return pd.DataFrame(rows, columns=["race", "label_value", "score"])


# hand values: (group) -> (selection rate, TPR, FPR)
RATES = {"A": (0.5, 0.8, 0.2), "B": (0.5, 0.5, 0.5), "C": (0.4, 1.0, 0.0)}


def _ours(df, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fairness_metrics(df["label_value"].to_numpy(), df["score"].to_numpy(),
                                sensitive_features=df["race"].to_numpy(), min_group_size=0, **kw)


def _disparity(res, rate, group, column="ratio"):
    d = res.disparities
    return d.loc[(d["rate"] == rate) & (d["group"] == group), column].item()


@pytest.mark.parametrize("reference", ["A", "B", "largest"])
def test_disparities_to_a_reference_group_by_hand(reference):
    df = _table()
    res = _ours(df, reference_group=reference)
    ref = "A" if reference == "largest" else reference  # the major group is A (10 rows)
    for g, rates in RATES.items():
        for rate, value, ref_value in zip(("selection_rate", "tpr", "fpr"), rates, RATES[ref]):
            assert _disparity(res, rate, g, "value") == pytest.approx(value)
            assert _disparity(res, rate, g, "reference_value") == pytest.approx(ref_value)
            expected = value / ref_value if ref_value else (1.0 if value == 0 else np.nan)
            got = _disparity(res, rate, g)
            assert (np.isnan(got) and np.isnan(expected)) or got == pytest.approx(expected)


def test_tolerance_readings_by_hand():
    df = _table()
    res = _ours(df, reference_group="A", tolerance=0.8)  # aequitas's tau = 0.8: fair within [0.8, 1.25]
    readings = {(r, g): _disparity(res, r, g, "reading") for r in ("selection_rate", "tpr", "fpr") for g in "ABC"}
    assert readings == {
        ("selection_rate", "A"): "reference", ("selection_rate", "B"): "within tolerance",  # 1.0
        ("selection_rate", "C"): "within tolerance",  # 0.4 / 0.5 = 0.8, the boundary is fair (as tau <= x)
        ("tpr", "A"): "reference", ("tpr", "B"): "below tolerance",  # 0.625
        ("tpr", "C"): "within tolerance",  # 1.25 = 1 / 0.8, the upper boundary is fair too
        ("fpr", "A"): "reference", ("fpr", "B"): "above tolerance",  # 2.5
        ("fpr", "C"): "below tolerance",  # 0
    }
    # a tighter tolerance moves the boundary cases out
    tight = _ours(df, reference_group="A", tolerance=0.9)
    assert _disparity(tight, "selection_rate", "C", "reading") == "below tolerance"
    assert _disparity(tight, "tpr", "C", "reading") == "above tolerance"


def test_live_aequitas_disparities():
    pytest.importorskip("aequitas")
    from aequitas.bias import Bias
    from aequitas.group import Group

    df = _table()
    xtab, _ = Group().get_crosstabs(df)
    for ours_ref, theirs in (("A", lambda b: b.get_disparity_predefined_groups(
            xtab, original_df=df, ref_groups_dict={"race": "A"}, alpha=0.05, mask_significance=True)),
            ("largest", lambda b: b.get_disparity_major_group(xtab, original_df=df, mask_significance=True))):
        bdf = theirs(Bias()).set_index("attribute_value")
        res = _ours(df, reference_group=ours_ref)
        for ours_rate, their_col in (("selection_rate", "pprev_disparity"), ("tpr", "tpr_disparity"),
                                     ("fpr", "fpr_disparity")):
            for g in "ABC":
                got, want = _disparity(res, ours_rate, g), float(bdf.loc[g, their_col])
                assert (np.isnan(got) and np.isnan(want)) or got == pytest.approx(want, rel=1e-9)


# --------------------------------------------------------------------------- #
# documented differences, one test each
# --------------------------------------------------------------------------- #
def test_difference_best_reference_is_the_best_rate_not_the_minimum():
    # aequitas's get_disparity_min_metric divides by the smallest value of every metric; our "best" reference
    # is the highest selection rate and TPR, the lowest FPR. For the FPR they coincide, for the others the
    # ratio is exactly value / max instead of value / min.
    df = _table()
    res = _ours(df, reference_group="best")
    for g, (sel, tpr, fpr) in RATES.items():
        assert _disparity(res, "selection_rate", g) == pytest.approx(sel / 0.5)   # max selection rate 0.5
        assert _disparity(res, "tpr", g) == pytest.approx(tpr / 1.0)              # max TPR 1.0
        # the FPR's best is its minimum, 0 (group C): a zero denominator is undefined unless 0/0 (equal rates)
        expected = 1.0 if fpr == 0 else np.nan
        got = _disparity(res, "fpr", g)
        assert (np.isnan(got) and np.isnan(expected)) or got == expected
    # aequitas's min-metric reference for the selection rate would be C (0.4): A's disparity 1.25, not 1.0
    assert _disparity(res, "selection_rate", "A") == 1.0 and RATES["A"][0] / 0.4 == 1.25


def test_difference_ppr_is_not_the_selection_rate():
    # aequitas's ppr is a group's share of all positive predictions; its pprev is our selection rate
    df = _table()
    res = _ours(df)
    counts = res.by_group.query("`class` == 1").set_index("group")
    ppr = counts["predicted_positive"] / counts["predicted_positive"].sum()  # 5 + 4 + 2 = 11 positive predictions
    assert ppr.to_dict() == pytest.approx({"A": 5 / 11, "B": 4 / 11, "C": 2 / 11})
    assert res.group_view.by_group["selection_rate"].to_dict() == pytest.approx({g: r[0] for g, r in RATES.items()})
