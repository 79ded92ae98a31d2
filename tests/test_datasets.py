"""COMPAS loader (docs/definitions.md#def-datasets): the ProPublica filters and the DPA paper's Table 6 counts."""

from __future__ import annotations

import pandas as pd
import pytest

from biasamp.datasets import COMPAS_FEATURES, load_compas


def test_compas_counts_match_dpa_table6(shared_data):
    d = load_compas(shared_data / "compas" / "compas-scores-two-years.csv")
    assert len(d.frame) == 5278 and list(d.features.columns) == list(COMPAS_FEATURES)
    counts = pd.crosstab(d.attr, d.task)
    assert counts.loc["Caucasian"].tolist() == [1229, 874]
    assert counts.loc["African-American"].tolist() == [1402, 1773]
    assert len(load_compas(shared_data / "compas" / "compas-scores-two-years.csv", races=None).frame) == 6172


def test_compas_two_year_recid_differs(shared_data):
    d = load_compas(shared_data / "compas" / "compas-scores-two-years.csv", task="two_year_recid")
    counts = pd.crosstab(d.attr, d.task)
    assert counts.loc["Caucasian"].tolist() == [1281, 822]
    assert counts.loc["African-American"].tolist() == [1514, 1661]


def test_compas_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_compas(tmp_path / "missing.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("race,age\nCaucasian,30\n")
    with pytest.raises(ValueError, match="lacks the column"):
        load_compas(bad)
    cols = ["days_b_screening_arrest", "is_recid", "c_charge_degree", "score_text", "race", *COMPAS_FEATURES]
    tiny = tmp_path / "tiny.csv"
    pd.DataFrame([[0, 1, "F", "Low", "Caucasian", 30, 0, 0, 0, 1],
                  [99, 1, "F", "Low", "Caucasian", 30, 0, 0, 0, 1],     # screening too late
                  [0, -1, "F", "Low", "Caucasian", 30, 0, 0, 0, 1],     # unknown recidivism
                  [0, 0, "O", "Low", "Caucasian", 30, 0, 0, 0, 1],      # ordinance charge
                  [0, 0, "F", "Low", "Hispanic", 30, 0, 0, 0, 1]],      # other race
                 columns=cols).to_csv(tiny, index=False)
    d = load_compas(tiny)
    assert len(d.frame) == 1 and d.task.tolist() == [1]
    with pytest.raises(ValueError, match="no row left"):
        load_compas(tiny, races=("Asian",))
