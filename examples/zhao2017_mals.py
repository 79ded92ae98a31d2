"""Zhao et al. (EMNLP 2017), Table 2: BiasAmp_MALS of the CRF and CRF+RBA on the development sets.

"Men Also Like Shopping" measures bias amplification as the mean, over the tasks (imSitu verbs
for vSRL, MS-COCO objects for MLC), of the change of the gender ratio from the training set to
the predictions, on the gender each task leans to in training: biasamp's BiasAmp_MALS with
A = {man, woman}. The authors released, in ``github.com/uclanlp/reducingbias``, the ratios
behind their Table 2's development rows: ``results/imSitu_gender_ratio_dev_res.csv`` and
``results/COCO_gender_ratio_dev_res.csv``, one row per task with the training ratio
``#(man, t) / (#(man, t) + #(woman, t))`` and the predicted ratio before and after their
calibration (RBA).

The files hold ratios, not counts. BiasAmp_MALS reads a task's counts only through its
ratios b(a, t) = #(a, t) / sum_a' #(a', t), so each task becomes two weighted rows, (man, t)
with weight r and (woman, t) with weight 1 - r, in a training table and in a prediction table
(:class:`biasamp.CooccurrenceCounts`, ``sample_weight``), and
:func:`biasamp.mals_from_counts` gives BiasAmp_MALS. The group sizes of these tables are not
the data's, so the small-group rule is turned off (``min_group_size=0``).

Published (Table 2, development set; the authors' notebook ``src/fairCRF_gender_ratio.ipynb``
prints the same values from these files, to more digits): vSRL 0.050 (CRF), 0.024 (CRF+RBA);
MLC 0.032 (CRF), 0.022 (CRF+RBA).

The package ships none of the data. Clone the repository and point the script at it::

    git clone https://github.com/uclanlp/reducingbias
    BIASAMP_REDUCINGBIAS=reducingbias python examples/zhao2017_mals.py

or pass ``--clone DIR``; without it the script prints "skipped" and exits with 0.
"""

from __future__ import annotations

import argparse
import os
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from biasamp import CooccurrenceCounts, mals_from_counts

CLONE = os.environ.get("BIASAMP_REDUCINGBIAS")
# Table 2, development set: (task, model) -> (published BiasAmp_MALS, the file, its task column, its ratio column)
PUBLISHED = {
    ("vSRL (imSitu)", "CRF"): (0.050, "imSitu_gender_ratio_dev_res.csv", "verb", "gender_ratio_before_RBA"),
    ("vSRL (imSitu)", "CRF+RBA"): (0.024, "imSitu_gender_ratio_dev_res.csv", "verb", "gender_ratio_after_RBA"),
    ("MLC (MS-COCO)", "CRF"): (0.032, "COCO_gender_ratio_dev_res.csv", "object", "gender_ratio_before_RBA"),
    ("MLC (MS-COCO)", "CRF+RBA"): (0.022, "COCO_gender_ratio_dev_res.csv", "object", "gender_ratio_after_RBA"),
}
GENDERS = ("man", "woman")


def ratio_counts(tasks: pd.Series, man_ratio: pd.Series, *, predicted: bool) -> CooccurrenceCounts:
    """A count table whose #(man, t), #(woman, t) are (r_t, 1 - r_t): two weighted rows per task."""
    r = man_ratio.to_numpy(dtype=np.float64)
    if not ((r >= 0) & (r <= 1)).all():
        raise ValueError(f"{man_ratio.name} must hold ratios in [0, 1]")
    attr = np.repeat(np.array(GENDERS), len(r))
    task = np.tile(tasks.to_numpy(), 2)
    weights = np.concatenate([r, 1 - r])
    classes = {"attr_classes": GENDERS, "task_classes": tuple(tasks)}
    if predicted:
        return CooccurrenceCounts.from_labels(attr_pred=attr, task_pred=task, sample_weight=weights, **classes)
    return CooccurrenceCounts.from_labels(attr, task, sample_weight=weights, **classes)


def reproduce(clone: Path) -> pd.DataFrame:
    """One row per Table 2 cell: the published value, biasamp's, the difference and the number of tasks."""
    rows = []
    for (task, model), (published, file, column, ratio) in PUBLISHED.items():
        frame = pd.read_csv(clone / "results" / file)
        train = ratio_counts(frame[column], frame["training_ratio"], predicted=False)
        pred = ratio_counts(frame[column], frame[ratio], predicted=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tasks never predicted for one gender: defined zeros, no warning needed
            res = mals_from_counts(train, pred, min_group_size=0)
        rows.append({"task": task, "model": model, "published": published, "biasamp": res.value,
                     "diff": res.value - published, "tasks": res.n_tasks})
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clone", type=Path, default=None if CLONE is None else Path(CLONE),
                        help="a clone of github.com/uclanlp/reducingbias (or set BIASAMP_REDUCINGBIAS)")
    clone = parser.parse_args(argv).clone
    if clone is None or not (clone / "results" / "COCO_gender_ratio_dev_res.csv").is_file():
        print(f"skipped: data not found ({clone}); set BIASAMP_REDUCINGBIAS to a clone of "
              "github.com/uclanlp/reducingbias or pass --clone")
        return 0
    table = reproduce(clone)
    print("Zhao et al. (2017), Table 2: BiasAmp_MALS on the development sets, from the released gender ratios")
    print(table.to_string(index=False, formatters={"published": "{:.3f}".format, "biasamp": "{:.4f}".format,
                                                   "diff": "{:+.4f}".format}))
    agree = (table["biasamp"].round(3) == table["published"]).all()
    print(f"\nevery value rounds to the published one (3 d.p.): {agree}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
