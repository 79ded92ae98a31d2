"""Qian et al. (NeurIPS 2021), App. C, Table 3: the seven group fairness metrics of a biased classifier.

Reproduces the running example of "Are My Deep Learning Systems Fair? An
Empirical Study of Fixed-Seed Training" (Appendix C, Table 3): a binary
"Sport"/"Cook" classifier on 200 women and 200 men, 100 of each activity per
gender (a balanced ground truth), with the printed confusion matrix (predicted Sport / predicted Cook)::

              female     male
    Sport     80 / 20    60 / 40
    Cook      10 / 90    70 / 30

and the published values DP 20.0, DI 33.6, SPSF 10.0, FPSF 20.0, EOFP 40.0,
EOTP 40.0, BA 10.1 (percent). The paper computes every metric "on both task
labels, and the average of the two": ``average="macro"`` in biasamp. The
per-class values the paper's text works out (DP 20.0 for both classes, EOTP
20.0 / 60.0, BA 9.1 / 11.1 for Sport / Cook) are checked as well.

biasamp's default for a binary task is ``average="binary"``, the positive
class only, as scikit-learn and fairlearn report it (docs/definitions.md,
"Group fairness metrics"); the last table shows that reading with
``pos_label="sport"``, which differs from the paper's headline by design.

Everything here is exact: the confusion matrix is printed in the paper. No
data files are needed.

Run: ``python examples/qian_table3.py`` (well under a second after import).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from biasamp import fairness_metrics

METRICS = ("DP", "DI", "SPSF", "FPSF", "EOFP", "EOTP", "BA")
# Qian et al. (2021), App. C, Table 3 (percent)
PUBLISHED = {"DP": 20.0, "DI": 33.6, "SPSF": 10.0, "FPSF": 20.0, "EOFP": 40.0, "EOTP": 40.0, "BA": 10.1}
# per-class values worked out in the text of App. C (percent); the others are not printed
PUBLISHED_BY_CLASS = {
    ("sport", "DP"): 20.0, ("cook", "DP"): 20.0,
    ("sport", "SPSF"): 10.0, ("cook", "SPSF"): 10.0,
    ("sport", "EOTP"): 20.0, ("cook", "EOTP"): 60.0,
    ("sport", "BA"): 9.1, ("cook", "BA"): 11.1,
}


def table3() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Instance arrays of the printed confusion matrix: ``y_true, y_pred, gender`` (400 rows)."""
    y_true = np.repeat(["sport", "cook", "sport", "cook"], 100)
    y_pred = np.repeat(["sport", "cook"] * 4, [80, 20, 10, 90, 60, 40, 70, 30])
    gender = np.repeat(["female", "male"], 200)
    return y_true, y_pred, gender


def reproduce() -> dict[str, pd.DataFrame]:
    """The comparison tables: ``overall`` (macro, the paper's), ``by_class`` and ``binary`` (percent)."""
    y_true, y_pred, gender = table3()
    macro = fairness_metrics(y_true, y_pred, sensitive_features=gender, average="macro")
    overall = pd.DataFrame({
        "published": [PUBLISHED[m] for m in METRICS],
        "biasamp": [100 * macro.overall[m] for m in METRICS],
    }, index=pd.Index(METRICS, name="metric"))
    overall["diff"] = overall["biasamp"].round(1) - overall["published"]

    rows = []
    for cls in ("sport", "cook"):
        for m in METRICS:
            rows.append({"class": cls, "metric": m, "published": PUBLISHED_BY_CLASS.get((cls, m), np.nan),
                         "biasamp": 100 * macro.by_class.loc[cls, m]})
    by_class = pd.DataFrame(rows).set_index(["class", "metric"])
    by_class["diff"] = by_class["biasamp"].round(1) - by_class["published"]

    binary = fairness_metrics(y_true, y_pred, sensitive_features=gender, pos_label="sport")
    binary_table = pd.DataFrame({
        "macro (paper)": overall["biasamp"],
        'binary, pos_label="sport"': [100 * binary.overall[m] for m in METRICS],
    }, index=overall.index)
    return {"overall": overall, "by_class": by_class, "binary": binary_table}


def _fmt(value: float) -> str:
    return "-" if pd.isna(value) else f"{value:.1f}"


def main() -> int:
    tables = reproduce()
    print("Qian et al. (2021), App. C, Table 3: Sport/Cook classifier, 200 women and 200 men (percent)")
    print('\nHeadline, average="macro" (the mean over both task labels, the paper\'s convention):')
    print(f"{'metric':<8}{'published':>11}{'biasamp':>11}{'diff':>8}")
    for m, row in tables["overall"].iterrows():
        print(f"{m:<8}{row['published']:>11.1f}{row['biasamp']:>11.3f}{row['diff']:>+8.1f}")
    print("\nPer class (published where the paper's text works it out):")
    print(f"{'class':<7}{'metric':<8}{'published':>11}{'biasamp':>11}{'diff':>8}")
    for (cls, m), row in tables["by_class"].iterrows():
        diff = "" if pd.isna(row["diff"]) else f"{row['diff']:+.1f}"
        print(f"{cls:<7}{m:<8}{_fmt(row['published']):>11}{row['biasamp']:>11.3f}{diff:>8}".rstrip())
    exact = (tables["overall"]["diff"] == 0).all()
    print(f"\nAll seven headline values equal the published ones to the printed decimal: {exact}")
    print("FPSF is weighted by the group shares n_g/n as printed in the paper (its code weights by the "
          "negatives N_g/N);\nhere every group has 100 negatives of each class, so both weightings agree.")
    print('\nbiasamp\'s default for a binary task, average="binary" (the positive class only, as '
          "scikit-learn and fairlearn report it;\ndocs/definitions.md, \"Group fairness metrics\"), "
          "gives the Sport column, not the paper's mean:")
    print(f"{'metric':<8}{'macro (paper)':>15}{'binary, sport':>15}")
    for m, row in tables["binary"].iterrows():
        print(f"{m:<8}{row.iloc[0]:>15.1f}{row.iloc[1]:>15.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
