"""Qian et al. (NeurIPS 2021), App. D.1, Table 4, from the authors' released per-run values.

Qian et al. train every technique 16 times with fixed seeds and print, per bias metric, the
MaxDiff (max - min) and the STDEV of the 16 values, overall and per class (Table 4: the
normalized disparate impact DI-bar, biasamp's ``DI``, for their 27 techniques). The authors
released the per-run values of all seven metrics (``raw_bias_numbers/``) and the table of all
their statistics (``raw_data.csv``: Mean, Max, Min, MaxDiff, STDEV, overall and per class) in
``github.com/lin-tan/fairness-variance``.

This script reads the per-run values with :func:`biasamp.datasets.load_fairness_variance_runs`,
summarises every technique with :func:`biasamp.stats.run_summary` and prints the paper's
Table 4 and the per-class DI-bar table beside biasamp's. Two rules of the paper matter:

* STDEV is the population standard deviation (``ddof=0``, their code's ``np.std``), and
* the per-class columns are all the statistics of *one* class, the class with the largest
  MaxDiff (the first on ties), not each statistic's own maximum over classes.

A printed cell matches when biasamp's value rounds to it: within half a printed unit (0.05
percentage points), plus the rounding of the authors' intermediate statistics, which pass
through a file of 4 significant digits before they are printed; "<0.1" matches a value in
[0, 0.1). The last lines count the matching cells under the paper's rules and under the
sample SD with each statistic's own maximum (biasamp 0.2's summary).

The package ships none of the data. Clone the repository and point the script at it::

    git clone https://github.com/lin-tan/fairness-variance
    BIASAMP_FAIRNESS_VARIANCE=fairness-variance python examples/fairness_variance_table4.py

or pass ``--clone DIR``; without it the script prints "skipped" and exits with 0.
"""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path

import pandas as pd

from biasamp.datasets import load_fairness_variance_runs
from biasamp.stats import run_summary

CLONE = os.environ.get("BIASAMP_FAIRNESS_VARIANCE")
STATS = ("mean", "max", "min", "maxdiff", "std")
METRICS = ("DP", "DI", "SPSF", "FPSF", "EOFP", "EOTP", "BA")

# The paper's App. D.1, Table 4 (percent): technique -> (overall MaxDiff, STDEV, per-class MaxDiff, STDEV)
PAPER_TABLE4 = {
    "S-Base": (2.0, 0.5, 7.0, 1.9), "S-RS": (2.0, 0.5, 5.8, 1.2), "S-UC": (5.1, 1.7, 18.4, 4.6),
    "S-GR": (11.8, 3.5, 50.1, 12.7), "S-DD1": (2.3, 0.6, 5.4, 1.5), "S-DD2": (1.5, 0.4, 5.3, 1.7),
    "S-DD3": (1.4, 0.4, 5.7, 1.7), "S-DD4": (1.0, 0.2, 8.0, 1.8), "S-DI1": (1.8, 0.5, 5.0, 1.4),
    "S-DI2": (1.1, 0.3, 4.2, 1.0), "C-Base": (2.6, 0.8, 100.0, 38.9), "C-R1": (1.0, 0.3, 50.0, 19.5),
    "C-R2": (2.8, 0.8, 62.5, 21.1), "C-R3": (3.7, 1.1, 100.0, 29.9), "C-A4": (3.7, 0.8, 100.0, 22.8),
    "C-A5": (2.4, 0.6, 100.0, 28.2), "I-Base": (0.8, 0.2, 58.9, 22.6), "I-R1": (0.9, 0.3, 50.0, 14.8),
    "I-R2": (0.7, 0.2, 30.0, 8.1), "I-R3": (1.2, 0.4, 44.7, 13.4), "I-A4": (0.8, 0.2, 40.0, 14.5),
    "I-A5": (1.0, 0.3, 50.0, 23.2), "A-Base": (1.7, 0.5, 5.8, 1.8), "A-L2": (8.0, 2.4, 31.1, 8.8),
    "A-ALM": (4.5, 1.2, 9.3, 3.0), "N-Base": (0.0, 0.0, 0.0, 0.0), "N-Flow": (2.5, 0.6, 3.6, 0.9),
}


def matches(value: float, printed: str | float) -> bool:
    """Whether ``value`` (a fraction) rounds to the ``printed`` percentage (see the module docstring)."""
    x = 100 * value
    if isinstance(printed, str) and printed.strip() == "<0.1":
        return -1e-9 <= x < 0.1
    return abs(x - float(printed)) <= 0.05 + 5e-4 * abs(x) + 1e-9


def _released_table(clone: Path) -> pd.DataFrame | None:
    """``raw_data.csv``: one row per (technique, metric), the ten printed columns as strings; None if absent."""
    path = clone / "raw_data.csv"
    if not path.is_file():
        return None
    frame = pd.read_csv(path, header=None, skiprows=2, dtype=str, keep_default_na=False)
    frame.columns = ["technique", "metric", *(f"overall_{s}" for s in STATS), *(f"class_{s}" for s in STATS)]
    frame["technique"] = frame["technique"].replace("", pd.NA).ffill()
    frame["metric"] = frame["metric"].replace({"DI bar": "DI"})
    return frame.set_index(["technique", "metric"])


def summaries(clone: Path) -> dict:
    """Per technique, the paper's summary (ddof=0, one class) and biasamp 0.2's (ddof=1, each statistic's maximum)."""
    data = load_fairness_variance_runs(clone)
    out = {}
    for tech in data.techniques:
        runs = data.runs(tech)
        paper, old = run_summary(runs), run_summary(runs, ddof=1)
        out[tech] = {
            "overall": paper.overall, "per_class": paper.per_class_max,
            "old_overall": old.overall, "old_per_class": old.by_class.groupby(level="metric", sort=False)[
                list(STATS)].max(),
        }
    return out


def reproduce(clone: Path) -> dict:
    """Table 4 and the released table beside biasamp's, and the numbers of matching cells under both rules."""
    s = summaries(clone)
    rows = []
    for tech, printed in PAPER_TABLE4.items():
        res = s[tech]
        ours = (res["overall"].loc["DI", "maxdiff"], res["overall"].loc["DI", "std"],
                res["per_class"].loc["DI", "maxdiff"], res["per_class"].loc["DI", "std"])
        old = (res["old_overall"].loc["DI", "maxdiff"], res["old_overall"].loc["DI", "std"],
               res["old_per_class"].loc["DI", "maxdiff"], res["old_per_class"].loc["DI", "std"])
        rows.append({"technique": tech, "paper": printed, "ours": ours, "class": res["per_class"].loc["DI", "class"],
                     "match": [matches(v, p) for v, p in zip(ours, printed)],
                     "old_match": [matches(v, p) for v, p in zip(old, printed)]})
    table4 = pd.DataFrame(rows).set_index("technique")
    out = {"table4": table4,
           "counts": {"Table 4 (paper)": (sum(map(sum, table4["match"])), 4 * len(table4)),
                      "Table 4 (paper), biasamp 0.2": (sum(map(sum, table4["old_match"])), 4 * len(table4))}}
    released = _released_table(clone)
    if released is not None:
        cells, old_cells = {}, {}
        for (tech, metric), printed in released.iterrows():
            res = s[tech]
            for side, key, old_key in (("overall", "overall", "old_overall"), ("class", "per_class", "old_per_class")):
                for stat in STATS:
                    col = f"{side}_{stat}"
                    cells.setdefault(col, []).append(matches(res[key].loc[metric, stat], printed[col]))
                    old_cells.setdefault(col, []).append(matches(res[old_key].loc[metric, stat], printed[col]))
        out["released"] = released
        out["columns"] = pd.DataFrame({"matched": {c: sum(v) for c, v in cells.items()},
                                       "biasamp 0.2": {c: sum(v) for c, v in old_cells.items()},
                                       "cells": {c: len(v) for c, v in cells.items()}})
        out["counts"]["released table (raw_data.csv)"] = (sum(map(sum, cells.values())),
                                                          sum(map(len, cells.values())))
        out["counts"]["released table, biasamp 0.2"] = (sum(map(sum, old_cells.values())),
                                                        sum(map(len, old_cells.values())))
        out["summaries"] = s
    return out


def _pct(x: float) -> str:
    return "nan" if math.isnan(x) else f"{100 * x:.1f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clone", type=Path, default=None if CLONE is None else Path(CLONE),
                        help="a clone of github.com/lin-tan/fairness-variance (or set BIASAMP_FAIRNESS_VARIANCE)")
    clone = parser.parse_args(argv).clone
    if clone is None or not ((clone / "raw_bias_numbers").is_dir() or (clone / "overall").is_dir()):
        print(f"skipped: data not found ({clone}); set BIASAMP_FAIRNESS_VARIANCE to a clone of "
              "github.com/lin-tan/fairness-variance or pass --clone")
        return 0
    out = reproduce(clone)
    print("Qian et al. (2021), App. D.1, Table 4: MaxDiff and STDEV of DI-bar over 16 runs (percent)")
    print("'paper' = the printed table; 'ours' = biasamp.run_summary on the released per-run values;")
    print("per class: the class with the largest MaxDiff (its index in the released files)\n")
    print(f"{'':<8}{'Overall MaxDiff':>17}{'Overall STDEV':>15}{'Per-class MaxDiff':>19}{'Per-class STDEV':>17}")
    print(f"{'':<8}" + "    paper  ours" * 2 + "      paper  ours  " + "   paper  ours  class")
    for tech, row in out["table4"].iterrows():
        cells = [f"{p:>7.1f}{_pct(v):>6}{'' if ok else '*'}" for p, v, ok in zip(row["paper"], row["ours"],
                                                                                 row["match"])]
        print(f"{tech:<8}{cells[0]:>17}{cells[1]:>15}{cells[2]:>19}{cells[3]:>17}  {row['class']}")
    if "released" in out:
        released, s = out["released"], out["summaries"]
        print("\nPer-class DI-bar, the class with the largest MaxDiff (released raw_data.csv / ours, percent)")
        print(f"{'':<8}" + "".join(f"{name:>14}" for name in ("Mean", "Max", "Min", "MaxDiff", "STDEV")))
        for tech in PAPER_TABLE4:
            printed = released.loc[(tech, "DI")]
            ours = s[tech]["per_class"].loc["DI"]
            print(f"{tech:<8}" + "".join(f"{printed[f'class_{st}']:>7} /{_pct(ours[st]):>5}" for st in STATS))
        print("\nCells of the released table (27 techniques x 7 metrics) that biasamp reproduces, per column:")
        print(out["columns"].to_string())
    print("\nMatching cells (* above marks a cell that does not match):")
    for name, (hit, total) in out["counts"].items():
        print(f"  {name:<32} {hit:>5} / {total}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
