"""LIC_M of nine COCO captioning models (Hirota, Nakashima & Garcia, CVPR 2022), with gender error and ratio.

* Data: the captions nine models wrote for the same 10,780 COCO images that
  show one person, with the person's gender and the train/val split of the
  LIC paper (the data released with the paper; ``lic_captions/`` in the data
  folder). The human captions were not released with it, so LIC_D, hence
  LIC = LIC_M - LIC_D, cannot be computed here: only the model side.
* LIC_M per model: the gender words masked, the default attacker (TF-IDF
  word uni- and bigrams and a logistic regression; the paper used an LSTM
  and BERT), fitted on the ``train`` images and scored on the ``val`` images,
  both class-balanced per iteration, 10 iterations, 95% intervals over the
  scored captions and the iterations (``ci_over="both"``).
* The top model against the runner-up, paired on the same images: ``lic``
  with the runner-up's captions in the place of the human ones (no
  vocabulary alignment), so that LIC = LIC_M(top) - LIC_M(runner-up) and its
  bootstrap redraws the images of both models together.
* Beside it, the attacker-free statistics of Burns et al. 2018: gender error
  (the caption names the other gender), gender-neutral rate and the ratio
  of captions naming a woman to captions naming a man over the same ratio
  of the images (1 = the data's proportion kept), with bootstrap intervals.

What the ranking shows: NIC+Equalizer, the model of Burns et al. trained to
look at the person before naming the gender, leaks the gender most through
the rest of its captions: the paper's finding, reproduced with another
attacker. The models' own intervals overlap (each covers the sampling of the
826 scored captions), but the comparison is paired, the same images for
every model: the difference with the runner-up has an interval above 0. Its
gender error is
lower than that of NIC+, the same model without the Equalizer's losses
(7.7% against 12.9%), and it names women more often than the images hold
them (ratio 1.18): correct gender words do not make the rest of the caption
neutral, and the two kinds of statistics rank the models differently (OSCAR
has by far the lowest gender error and a middling LIC_M). The spread of
LIC_M is small (45 to 51, chance being 25): every model's captions reveal
the gender through their context words.

Run from the repository root (the data lives in ``../shared/data``, or set
``BIASAMP_SHARED_DATA``, or pass ``--data DIR``; without it the script
prints "skipped" and exits with 0)::

    python examples/lic_models.py
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pandas as pd

from biasamp import caption_gender_stats, lic

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("BIASAMP_SHARED_DATA", ROOT.parent / "shared" / "data"))
SEED = 0
MODELS = {  # file -> model
    "nic": "NIC", "sat": "SAT", "fc": "FC", "att2in": "Att2in", "updn": "UpDn", "transformer": "Transformer",
    "oscar": "OSCAR", "nic_plus": "NIC+", "nic_equalizer": "NIC+Equalizer",
}


def evaluate(frame: pd.DataFrame) -> dict:
    """LIC_M (with its interval) and the Burns statistics of one model's captions."""
    res = lic(frame["gender"], captions_pred=frame["caption"], split=frame["split"], n_iter=10, random_state=SEED,
              progress=False)
    stats = caption_gender_stats(frame["gender"], captions_pred=frame["caption"], random_state=SEED)
    return {
        "lic_m": res.lic_m, "lic_m_low": res.ci_m[0], "lic_m_high": res.ci_m[1],
        "error": stats.error, "neutral": stats.neutral_rate, "ratio": stats.ratio,
        "ratio_low": stats.ci.get("ratio", (None, None))[0], "ratio_high": stats.ci.get("ratio", (None, None))[1],
    }


def reproduce(data_dir: Path) -> pd.DataFrame:
    """One row per model, ranked by LIC_M (largest first); ``table.attrs["paired"]``: the top two, paired."""
    rows, frames = [], {}
    for key, name in MODELS.items():
        frames[name] = pd.read_csv(data_dir / "lic_captions" / f"{key}.csv")
        rows.append({"model": name, **evaluate(frames[name])})
    table = pd.DataFrame(rows).sort_values("lic_m", ascending=False, kind="stable").reset_index(drop=True)
    table.index = table.index + 1
    table.attrs["paired"] = paired(frames[table.iloc[0]["model"]], frames[table.iloc[1]["model"]])
    table.attrs["paired"]["models"] = (table.iloc[0]["model"], table.iloc[1]["model"])
    return table


def paired(first: pd.DataFrame, second: pd.DataFrame) -> dict:
    """LIC_M(first) - LIC_M(second) on the same images: ``lic`` with ``second``'s captions as the other side."""
    other = second.set_index("image_id").loc[first["image_id"], "caption"].to_numpy()
    res = lic(first["gender"], captions_pred=first["caption"], captions=other, split=first["split"],
              align_vocab=False, n_iter=10, random_state=SEED, progress=False)
    return {"value": res.value, "low": res.ci[0], "high": res.ci[1]}


def readings(table: pd.DataFrame) -> dict[str, bool]:
    """The paper's reading, and what the attacker-free statistics say beside it."""
    top = table.iloc[0]
    by = table.set_index("model")
    return {
        "NIC+Equalizer has the highest LIC_M": top["model"] == "NIC+Equalizer",
        "paired on the same images, its LIC_M exceeds the runner-up's (interval above 0)":
            bool(table.attrs["paired"]["low"] > 0),
        "it names the gender more correctly than NIC+ (lower gender error)":
            bool(by.loc["NIC+Equalizer", "error"] < by.loc["NIC+", "error"]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the shared data folder (holding lic_captions/)")
    args = parser.parse_args(argv)
    if not (args.data / "lic_captions").exists():
        print(f"skipped: data not found ({args.data / 'lic_captions'} is absent)")
        return 0
    table = reproduce(args.data)
    print("LIC_M (x100, 95% interval over the captions and 10 iterations) beside the gender error, neutral rate "
          "and ratio")
    print(f"{'rank':>4}  {'model':<14} {'LIC_M':>6}  {'95% CI':<13}  {'error':>6} {'neutral':>8} {'ratio':>6}")
    for rank, r in table.iterrows():
        print(f"{rank:>4}  {r['model']:<14} {100 * r['lic_m']:6.1f}  [{100 * r['lic_m_low']:4.1f}, "
              f"{100 * r['lic_m_high']:4.1f}]   {100 * r['error']:5.1f}% {100 * r['neutral']:7.1f}% {r['ratio']:6.2f}")
    p = table.attrs["paired"]
    print(f"\n{p['models'][0]} - {p['models'][1]}, paired on the same images: {100 * p['value']:+.1f} "
          f"[{100 * p['low']:+.1f}, {100 * p['high']:+.1f}]")
    print()
    for text, ok in readings(table).items():
        print(f"{'yes' if ok else 'NO ':<3}  {text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
