"""Benchmark: LIC_M of one captioning model at the LIC paper's scale, default attacker.

1. **Target**: ``lic`` with its defaults (TF-IDF word uni+bigrams and a
   logistic regression, gender words masked, class-balanced train/val
   images, 10 iterations) on the 10,780 captions of one model in
   ``../shared/data/lic_captions/`` (``--model``, default
   ``nic_equalizer``): <= 10 s on 2 cores. Printed: the time, and its ratio to
   the target. For scale, ``dbac`` (both directions, COCO object words) on
   the same images with another model's captions standing in for the human
   ones (the human captions are not in the data folder).
2. **bias-amplification** (PyPI, the DPA authors' package): its LIC/DBAC are
   timed in the same run only when ``bias_amplification.text.metrics``
   imports; otherwise the script says why it was skipped. (Version 0.2.1,
   the newest on the index, ships no ``text`` subpackage; the repository's
   ``bias_amplification/text`` needs torchtext, gensim, fastText,
   sentence-transformers and transformers, and downloads embedding weights.)

Run from the repository root::

    python benchmarks/bench_captioning.py [--model nic] [--strict]

``--strict`` exits with 1 when the target is missed.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
from pathlib import Path

import pandas as pd

from biasamp import caption_labels, dbac, lic

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("BIASAMP_SHARED_DATA", ROOT.parent / "shared" / "data")) / "lic_captions"
TARGET_S = 10.0


def _competitor() -> tuple[object | None, str]:
    try:
        dist = importlib.import_module("importlib.metadata").version("bias-amplification")
    except Exception:  # noqa: BLE001 - not installed
        return None, ("bias-amplification is not installed, and was not installed for this run: its newest release "
                      "on the index (0.2.1) ships no text subpackage (no LIC/DBAC; they exist only in its GitHub "
                      "repository and need torchtext, gensim, fastText, sentence-transformers and transformers)")
    try:
        return importlib.import_module("bias_amplification.text.metrics"), dist
    except ImportError as exc:
        return None, (f"bias-amplification {dist} is installed but has no importable text metrics "
                      f"(bias_amplification.text.metrics: {exc}); its LIC/DBAC exist only in the GitHub "
                      "repository and need torchtext, gensim, fastText, sentence-transformers and transformers")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="nic_equalizer")
    parser.add_argument("--strict", action="store_true")
    args = parser.parse_args(argv)
    path = DATA / f"{args.model}.csv"
    if not path.exists():
        print(f"skipped: data not found ({path} is absent)")
        return 0
    frame = pd.read_csv(path)
    print(f"{len(frame):,} captions of {args.model}; cores: {os.cpu_count()}")

    start = time.perf_counter()
    res = lic(frame["gender"], captions_pred=frame["caption"], split=frame["split"], n_iter=10, random_state=0,
              progress=False)
    took = time.perf_counter() - start
    ok = took <= TARGET_S
    print(f"biasamp lic (default attacker, 10 iterations): {took:.2f} s  (target <= {TARGET_S:.0f} s: "
          f"ratio {took / TARGET_S:.2f}, {'met' if ok else 'MISSED'});  LIC_M = {100 * res.lic_m:.1f} "
          f"[{100 * res.ci_m[0]:.1f}, {100 * res.ci_m[1]:.1f}]")

    other = pd.read_csv(DATA / ("nic_plus.csv" if args.model != "nic_plus" else "nic.csv")).set_index("image_id")
    human = other.loc[frame["image_id"], "caption"].to_numpy()
    start = time.perf_counter()
    d = dbac(frame["gender"], caption_labels(human), captions=human, captions_pred=frame["caption"],
             task_pred=caption_labels(frame["caption"]), split=frame["split"], n_iter=10, random_state=0,
             progress=False)
    took_d = time.perf_counter() - start
    print(f"biasamp dbac (both directions, 80 COCO object labels, another model as the human side): {took_d:.2f} s;"
          f"  A->T {d.a_to_t.value:+.3f}, T->A {d.t_to_a.value:+.3f}")

    module, info = _competitor()
    if module is None:
        print(f"bias-amplification LIC/DBAC: skipped: {info}")
    else:  # pragma: no cover - not installable without heavy dependencies here
        print(f"bias-amplification {info}: text metrics importable; timing them needs an attacker model and "
              "embedding weights, which this benchmark does not download: skipped")
    return 1 if args.strict and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
