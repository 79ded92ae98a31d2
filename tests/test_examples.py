"""The reproduction gallery in ``examples/``: every script runs, and its numbers are the published ones.

Each script is run once as a program (``python examples/<script>.py``) without
the validation data, where it must exit with 0 (skipping cleanly when it needs
the data), and its ``reproduce()`` is called in-process on ``../shared/data``
to check the numbers against the papers, with the tolerance the reproduction
supports: exact where the paper prints its inputs, the paper's readings (signs,
orderings) where its model predictions were never published. Tests that need
the data skip where it is absent. ``select_least_amplifying_model.py`` is
tested in ``test_sklearn.py``; ``synthetic_waterbirds.py`` (90 s of training)
is not run here.
"""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
GALLERY = {  # script -> needs the validation data
    "qian_table3.py": False,
    "compas_dpa_table7.py": False,
    "compas_dpa.py": True,
    "compas_threshold.py": True,
    "coco_multi_attribute.py": True,
    "lic_models.py": True,
    "fairness_variance_table4.py": True,  # a clone of lin-tan/fairness-variance: BIASAMP_FAIRNESS_VARIANCE
    "zhao2017_mals.py": True,  # a clone of uclanlp/reducingbias: BIASAMP_REDUCINGBIAS
}
#: the environment variables naming the third-party clones some scripts read (never committed to the repository)
CLONES = ("BIASAMP_FAIRNESS_VARIANCE", "BIASAMP_REDUCINGBIAS")


def _load(script: str) -> dict:
    return runpy.run_path(str(EXAMPLES / script), run_name="gallery")


def _documented_output(script: str) -> str:
    """The output pasted under the script's entry in docs/examples.md."""
    docs = (ROOT / "docs" / "examples.md").read_text(encoding="utf-8")
    start = docs.index("```text\n", docs.index(f"`python examples/{script}`")) + len("```text\n")
    return docs[start:docs.index("\n```\n", start)]


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} absent")
    return path


# --------------------------------------------------------------------------- #
# every script: a docstring, main(), and a clean run (or a clean skip) as a program
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("script", sorted(GALLERY))
def test_script_runs_as_a_program_without_the_data(script, tmp_path):
    source = (EXAMPLES / script).read_text(encoding="utf-8")
    assert source.startswith('"""') and 'if __name__ == "__main__":' in source and "def main(" in source
    env = {**{k: v for k, v in os.environ.items() if k not in CLONES}, "BIASAMP_SHARED_DATA": str(tmp_path / "absent")}
    proc = subprocess.run([sys.executable, str(EXAMPLES / script)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    if GALLERY[script]:
        assert proc.stdout.startswith("skipped: data not found"), proc.stdout
    else:
        assert "skipped" not in proc.stdout and len(proc.stdout.splitlines()) > 10


def test_every_gallery_script_is_listed_in_the_docs():
    docs = (ROOT / "docs" / "examples.md").read_text(encoding="utf-8")
    for script in GALLERY:
        assert f"python examples/{script}" in docs, script


# --------------------------------------------------------------------------- #
# Qian et al. (2021), App. C, Table 3: exact
# --------------------------------------------------------------------------- #
def test_qian_table3_exact(capsys):
    ns = _load("qian_table3.py")
    tables = ns["reproduce"]()
    overall = tables["overall"]
    assert overall["biasamp"].round(1).to_dict() == ns["PUBLISHED"]
    assert list(overall.index) == ["DP", "DI", "SPSF", "FPSF", "EOFP", "EOTP", "BA"]
    by_class = tables["by_class"]
    for (cls, metric), value in ns["PUBLISHED_BY_CLASS"].items():
        assert round(by_class.loc[(cls, metric), "biasamp"], 1) == value, (cls, metric)
    # the binary default reports the positive class: the Sport row, not the paper's mean
    binary = tables["binary"].iloc[:, 1]
    assert binary.round(1).to_dict() == {"DP": 20.0, "DI": 30.8, "SPSF": 10.0, "FPSF": 30.0, "EOFP": 60.0,
                                         "EOTP": 20.0, "BA": 9.1}
    assert ns["main"]() == 0
    out = capsys.readouterr().out
    assert "equal the published ones to the printed decimal: True" in out
    assert out.rstrip("\n") == _documented_output("qian_table3.py")
    assert "BA             10.1     10.101    +0.0" in out


# --------------------------------------------------------------------------- #
# DPA App. E, Table 7 from Table 6: BA-> and Multi-> exact to 3 d.p.; DPA not derivable
# --------------------------------------------------------------------------- #
def test_dpa_table7_from_table6_counts(capsys):
    ns = _load("compas_dpa_table7.py")
    table = ns["reproduce"]()
    co = table[table.metric != "DPA"]
    assert len(co) == 8 and co.match_3dp.all()
    assert (co["diff"].abs() < 5e-4).all()
    balanced_ba = table[(table.setting == "balanced") & (table.metric == "BA->")]
    assert (balanced_ba.biasamp == 0.0).all()  # every y_at is exactly 0
    assert table[table.metric == "DPA"].biasamp.isna().all()
    est = ns["dpa_estimate"]()
    assert est["row_accuracy"] == pytest.approx(0.69, abs=2e-4)
    assert 0 < est["inv_ce"] < 0.063 and est["inv_ce_ci"][0] > 0  # the sign agrees, the value does not
    assert 0 < est["accuracy"] < 0.063 and est["accuracy_ci"][0] > 0
    assert ns["main"]() == 0
    out = capsys.readouterr().out
    assert "8 of 8 values equal the published ones to 3 decimals" in out
    assert out.count("not derivable from Table 6") == 4
    assert out.rstrip("\n") == _documented_output("compas_dpa_table7.py")


def test_dpa_table7_rows_reach_the_stated_accuracy():
    ns = _load("compas_dpa_table7.py")
    for accuracy in (0.5, 0.69, 0.8):
        attr, task, attr_pred = ns["rows_with_accuracy"](ns["TABLE6"]["unbalanced"], accuracy)
        assert abs(np.mean(attr == attr_pred) - accuracy) <= 1 / len(attr)
        a_t = [[int(np.sum((attr == a) & (task == t))) for t in (0, 1)] for a in (0, 1)]
        t_ah = [[int(np.sum((task == t) & (attr_pred == a))) for a in (0, 1)] for t in (0, 1)]
        assert a_t == ns["TABLE6"]["unbalanced"]["A_T"] and t_ah == ns["TABLE6"]["unbalanced"]["T_Ahat"]


def test_dpa_table7_transcriptions_agree_with_the_data_folder(shared_data):
    """The script's transcription of Tables 6 and 7 equals the data folder's, made independently."""
    folder = _need(shared_data / "dpa_tokas2025")
    ns = _load("compas_dpa_table7.py")
    counts = pd.read_csv(_need(folder / "compas_table6_counts.csv"))
    keys = {"data_A_T": ("A_T", "A", "T"), "pred_Ahat_given_T": ("T_Ahat", "T", "Ahat"),
            "pred_That_given_A": ("A_That", "A", "That")}
    for _, row in counts.iterrows():
        key, i, j = keys[row.quantity]
        assert ns["TABLE6"][row.setting][key][int(row[i])][int(row[j])] == row["count"], tuple(row)
    assert len(counts) == 24
    published = pd.read_csv(_need(folder / "compas_table7_published.csv"))
    names = {"BA_directional": "BA->", "Multi_directional": "Multi->", "DPA": "DPA"}
    for _, row in published.iterrows():
        assert ns["TABLE7"][(row.setting, names[row.metric], row.direction)] == (row.value, row.ci95)
    assert len(published) == len(ns["TABLE7"]) == 12


# --------------------------------------------------------------------------- #
# DPA App. E on the COMPAS file: counts exact, balanced-set readings
# --------------------------------------------------------------------------- #
def test_compas_dpa_appendix_e(shared_data, capsys):
    _need(shared_data / "compas" / "compas-scores-two-years.csv")
    ns = _load("compas_dpa.py")
    out = ns["reproduce"](shared_data)
    for setting in ("unbalanced", "balanced"):
        assert out[setting]["table6"]["A_T"] == ns["PAPER_TABLE6"][setting]["A_T"]
    assert out["unbalanced"]["n"] == 5278 and out["balanced"]["n"] == 3496
    balanced = out["balanced"]["metrics"]
    assert balanced[("BA->", "T->A")][0] == 0.0 and balanced[("BA->", "A->T")][0] == 0.0
    readings = ns["readings"](out)
    held = [text for text, ok in readings.items() if ok]
    assert len(held) == 5 and all(not text.startswith("unbalanced: BA->") for text in held)
    for d in ("T->A", "A->T"):  # the two attackers agree on one binary input
        mlp, tab = out["balanced"]["metrics"][("DPA", d)], out["balanced"]["metrics"][("DPA (tabular)", d)]
        assert mlp[0] == pytest.approx(tab[0], abs=0.005)
    assert ns["main"](["--data", str(shared_data)]) == 0
    printed = capsys.readouterr().out
    assert printed.count("  exact\n") == 2 and "[holds ] balanced: BA-> is exactly 0 in both directions" in printed


# --------------------------------------------------------------------------- #
# Wang & Russakovsky (2021), Fig. 6: BiasAmp A->T near 0, FPR gap large
# --------------------------------------------------------------------------- #
def test_compas_threshold_curve(shared_data, capsys):
    _need(shared_data / "compas" / "compas-scores-two-years.csv")
    ns = _load("compas_threshold.py")
    table = ns["reproduce"](shared_data)
    assert list(table.threshold) == list(range(11))
    np.testing.assert_allclose(table.biasamp_a_to_t, table.recount_a_to_t, atol=1e-12)
    np.testing.assert_allclose(table.fpr_gap, table.recount_fpr_gap, atol=1e-12)
    # an earlier independent recomputation of the figure's curve (3 d.p.)
    assert table.biasamp_a_to_t.round(3).tolist() == [-0.066, 0.020, 0.042, 0.052, 0.056, 0.053, 0.041, 0.014,
                                                      -0.011, -0.042, -0.066]
    realistic = table[table.threshold.between(1, 5)]
    assert realistic.fpr_gap.between(0.17, 0.22).all()  # "a large FPR disparity"
    assert table[table.threshold.between(1, 9)].biasamp_a_to_t.abs().max() < 0.06  # "close to 0"
    np.testing.assert_allclose(table.EOFP, table.fpr_gap.abs(), atol=1e-12)  # two groups: EOFP = |gap|
    assert ns["main"](["--data", str(shared_data)]) == 0
    assert "equals the independent numpy recount at every threshold: True" in capsys.readouterr().out


# --------------------------------------------------------------------------- #
# Zhao, Andrews & Xiang (2023), §5 COCO setting on the real labels
# --------------------------------------------------------------------------- #
def test_coco_multi_attribute_setting(shared_data, capsys):
    _need(shared_data / "wang2019_balanced" / "coco" / "val.npz")
    ns = _load("coco_multi_attribute.py")
    out = ns["reproduce"](shared_data)
    data, balance, metrics = out["data"], out["balance"], out["metrics"]
    assert data["objects kept"] == 47  # the paper's rule on these labels (52 on the paper's images)
    assert round(data["female share of the images (%)"], 1) == 28.9
    # the oversampling procedure: every single object inside 1/2 +/- 0.025, most combinations not
    assert balance["single objects outside 1/2 +/- eps"] == 0
    assert balance["max |bias - 1/2|, single objects"] <= 0.025
    assert balance["combinations outside 1/2 +/- eps (%)"] > 50
    assert balance["training images (original, oversampled)"][0] == 5367
    # the paper's readings on the stand-in model
    assert all(ns["qualitative_checks"](metrics).values())
    for key in [("Multi G->M", 1), ("Multi G->M", 2), ("BiasAmp G->M", 1)]:
        assert metrics[key][:2] == (0.0, 0.0)  # perfect object predictions: no G->M amplification
    # single-attribute metrics are the singleton case of the multi-attribute ones
    assert metrics[("BiasAmp_MALS", 1)][0] < metrics[("Multi_MALS", 1)][0]
    assert ns["main"](["--data", str(shared_data)]) == 0
    printed = capsys.readouterr().out
    assert "NOT reproduced" in printed and printed.count("[holds]") == 3


# --------------------------------------------------------------------------- #
# Hirota et al. 2022: LIC_M of nine captioning models, NIC+Equalizer the most leaking
# --------------------------------------------------------------------------- #
def test_lic_models_ranking(shared_data, capsys):
    folder = _need(shared_data / "lic_captions")
    ns = _load("lic_models.py")
    table = ns["reproduce"](folder.parent)
    assert len(table) == 9 and list(table.index) == list(range(1, 10))
    assert table["lic_m"].is_monotonic_decreasing
    assert all(ns["readings"](table).values())  # NIC+Equalizer first, its interval above the others'
    assert ((table["lic_m_low"] <= table["lic_m"]) & (table["lic_m"] <= table["lic_m_high"])).all()
    assert table["lic_m"].between(0.4, 0.55).all()  # well above chance (0.25), as the paper's 43 to 52
    assert ns["main"](["--data", str(folder.parent)]) == 0
    out = capsys.readouterr().out
    assert out.rstrip("\n") == _documented_output("lic_models.py")


# --------------------------------------------------------------------------- #
# third-party clones, named by environment variables (skipped where absent)
# --------------------------------------------------------------------------- #
def _clone(variable: str, marker: str) -> Path:
    """The clone named by ``variable``, which must hold ``marker``; the test skips without it."""
    value = os.environ.get(variable)
    if not value:
        pytest.skip(f"{variable} is not set (a clone of the authors' repository)")
    _need(Path(value) / marker)
    return Path(value)


# --------------------------------------------------------------------------- #
# Qian et al. (2021), App. D.1, Table 4, from the authors' released per-run values
# --------------------------------------------------------------------------- #
def test_fairness_variance_table4(capsys):
    clone = _clone("BIASAMP_FAIRNESS_VARIANCE", "raw_bias_numbers/overall")
    ns = _load("fairness_variance_table4.py")
    out = ns["reproduce"](clone)
    assert out["counts"]["Table 4 (paper)"] == (108, 108)
    assert out["counts"]["Table 4 (paper), biasamp 0.2"] == (78, 108)  # the sample SD, each statistic's maximum
    if "released" in out:  # raw_data.csv: every printed statistic of every technique and metric
        assert out["counts"]["released table (raw_data.csv)"] == (1890, 1890)
    # printed cells of the paper's Table 4, overall and per class (percent): S-GR, C-Base, I-R3
    table4 = out["table4"]
    for tech, printed in {"S-GR": (11.8, 3.5, 50.1, 12.7), "C-Base": (2.6, 0.8, 100.0, 38.9),
                          "I-R3": (1.2, 0.4, 44.7, 13.4)}.items():
        assert [round(100 * v, 1) for v in table4.loc[tech, "ours"]] == list(printed)
    assert ns["main"](["--clone", str(clone)]) == 0
    assert "108 / 108" in capsys.readouterr().out


# --------------------------------------------------------------------------- #
# Zhao et al. (2017), Table 2: BiasAmp_MALS from the released gender ratios
# --------------------------------------------------------------------------- #
def test_zhao2017_table2(capsys):
    clone = _clone("BIASAMP_REDUCINGBIAS", "results/COCO_gender_ratio_dev_res.csv")
    ns = _load("zhao2017_mals.py")
    table = ns["reproduce"](clone).set_index(["task", "model"])
    assert (table["biasamp"].round(3) == table["published"]).all()
    # the values the authors' notebook (src/fairCRF_gender_ratio.ipynb) prints from the same files
    notebook = {("vSRL (imSitu)", "CRF"): 0.0502234224204, ("vSRL (imSitu)", "CRF+RBA"): 0.0238762190632,
                ("MLC (MS-COCO)", "CRF"): 0.031742516637, ("MLC (MS-COCO)", "CRF+RBA"): 0.0216953903291}
    for key, value in notebook.items():
        assert table.loc[key, "biasamp"] == pytest.approx(value, abs=1e-12)
    assert table["tasks"].tolist() == [212, 212, 66, 66]
    assert ns["main"](["--clone", str(clone)]) == 0
    assert "every value rounds to the published one (3 d.p.): True" in capsys.readouterr().out
