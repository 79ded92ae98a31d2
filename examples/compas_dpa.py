"""DPA on COMPAS: the setup of Tokas, Nair & Kerner (NeurIPS 2025), Appendix E.

* ProPublica's two-year file with the standard filters, two races
  (A: Caucasian = 0, African-American = 1) and T = ``is_recid``
  (docs/definitions.md, "Data sets"; the counts are those of the paper's Table 6: 1229/1402/874/1773).
* Unbalanced set: all 5,278 rows. Balanced set: 874 rows sampled per (A, T)
  cell (3,496 rows; the paper's sampling seed is not published).
* One decision tree predicts race and one predicts recidivism from the five
  features ``age, juv_fel_count, juv_misd_count, juv_other_count,
  priors_count``. The predictions are out-of-fold (5-fold cross-validation),
  so that every row gets a prediction from a tree that did not see it.
* BA→ (Wang & Russakovsky), Multi→ (Zhao et al., single-attribute case) and
  DPA (1/cross-entropy, MLP attacker, 10 iterations, 95% t-intervals) in both
  directions.

The paper's predictions are not public, so the numbers differ from its
Table 7; the dataset counts match.

Run from the repository root (the data lives in ``../shared/data``, or set
``BIASAMP_SHARED_DATA``)::

    python examples/compas_dpa.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import cross_val_predict
from sklearn.tree import DecisionTreeClassifier

from biasamp import bias_amp_directional, multi_bias_amp
from biasamp.datasets import balanced_subset, load_compas
from biasamp.predictability import dpa

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("BIASAMP_SHARED_DATA", ROOT.parent / "shared" / "data"))
SEED = 0


def tree_predictions(x: pd.DataFrame, y: np.ndarray) -> np.ndarray:
    tree = DecisionTreeClassifier(max_depth=6, random_state=SEED)
    return cross_val_predict(tree, x, y, cv=5)


def ci_text(value: float, ci: tuple[float, float]) -> str:
    return f"{value:+.3f} [{ci[0]:+.3f}, {ci[1]:+.3f}]"


def evaluate(name: str, x: pd.DataFrame, attr: np.ndarray, task: np.ndarray) -> None:
    attr_pred, task_pred = tree_predictions(x, attr), tree_predictions(x, task)
    counts = pd.crosstab(pd.Series(task, name="T"), pd.Series(attr, name="A"))
    print(f"\n== {name}: {len(attr)} rows ==")
    print(f"#(A, T):  A=0: T=0 {counts.loc[0, 0]}, T=1 {counts.loc[1, 0]} | "
          f"A=1: T=0 {counts.loc[0, 1]}, T=1 {counts.loc[1, 1]}")
    print(f"tree accuracy: race {np.mean(attr_pred == attr):.3f}, recidivism {np.mean(task_pred == task):.3f}")
    ba = bias_amp_directional(attr, task, attr_pred=attr_pred, task_pred=task_pred)
    multi = multi_bias_amp(attr, np.eye(2, dtype=int)[task], attr_pred=attr_pred,
                           task_pred=np.eye(2, dtype=int)[task_pred])
    res = dpa(attr, task, attr_pred=attr_pred, task_pred=task_pred, attacker="mlp", quality="inv_ce",
              n_iter=10, random_state=SEED, progress=False)
    tab = dpa(attr, task, attr_pred=attr_pred, task_pred=task_pred, attacker="tabular", quality="inv_ce",
              n_iter=10, random_state=SEED, progress=False)
    print(f"{'metric':<16}{'T->A':>26}{'A->T':>26}")
    print(f"{'BA->':<16}{ba.t_to_a.value:>+26.3f}{ba.a_to_t.value:>+26.3f}")
    print(f"{'Multi-> (abs)':<16}{multi.m_to_g.value:>26.3f}{multi.g_to_m.value:>26.3f}")
    print(f"{'DPA (mlp)':<16}{ci_text(res.t_to_a.value, res.t_to_a.ci):>26}{ci_text(res.a_to_t.value, res.a_to_t.ci):>26}")
    print(f"{'DPA (tabular)':<16}{ci_text(tab.t_to_a.value, tab.t_to_a.ci):>26}"
          f"{ci_text(tab.a_to_t.value, tab.a_to_t.ci):>26}")


def main() -> int:
    path = DATA / "compas" / "compas-scores-two-years.csv"
    if not path.is_file():
        print(f"COMPAS data not found at {path}; set BIASAMP_SHARED_DATA", file=sys.stderr)
        return 0
    data = load_compas(path)
    attr = (data.attr == "African-American").to_numpy().astype(int)  # Caucasian 0, African-American 1
    task = data.task.to_numpy()
    print("DPA App. E on COMPAS (A = race, T = is_recid); values are fractions, 95% t-intervals over 10 iterations")
    evaluate("unbalanced", data.features, attr, task)
    rows = balanced_subset(attr, task, equal_cells=True, random_state=SEED)  # 874 per (A, T) cell
    evaluate("balanced", data.features.iloc[rows].reset_index(drop=True), attr[rows], task[rows])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
