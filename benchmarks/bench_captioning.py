"""Benchmark: LIC and DBAC at the LIC paper's scale (time), and the coverage of their intervals (simulation).

1. **LIC target**: ``lic`` with its defaults (TF-IDF word uni+bigrams and a
   logistic regression, gender words masked, class-balanced train/val
   images, 10 iterations, caption bootstrap of 1,000 replicates) on the
   10,780 captions of one model in ``../shared/data/lic_captions/``
   (``--model``, default ``nic_equalizer``): <= 10 s on 2 cores. Printed: the
   time, and its ratio to the target.
2. **DBAC target**: ``dbac`` (both directions, the 80 COCO object words:
   A->T fits one binary attacker per object present) on the same images,
   with another model's captions standing in for the human ones (the human
   captions are not in the data folder), the data's train/val split, 10
   iterations: <= 10 s on 2 cores. In the same run, unless ``--no-old``, the
   0.2 path: the built-in attacker fitted again in every iteration (what
   ``dbac`` did before it reused the fits of identical iterations; here by
   declaring the attacker non-deterministic), one process, no caption
   bootstrap; printed: both times, their ratio, and whether the values are
   identical. ``--random-split`` adds the case without a split
   (a new split, hence new fits, per iteration; the fits spread over the idle
   cores).
3. **bias-amplification** (PyPI, the DPA authors' package): its LIC/DBAC are
   timed in the same run only when ``bias_amplification.text.metrics``
   imports; otherwise the script says why it was skipped. (Version 0.2.1,
   the newest on the index, ships no ``text`` subpackage; the repository's
   ``bias_amplification/text`` needs torchtext, gensim, fastText,
   sentence-transformers and transformers, and downloads embedding weights.)
4. **Coverage** (``--coverage``, no data needed): simulated captions "a
   <gender word> <activity> in a <place>" whose place depends on the gender
   with a strength chosen per caption set (the gender word is masked, so
   the place is the only signal). Per scenario, ``--reps`` data sets are
   drawn and ``lic`` (and DBAC T->A) run on each with 95% intervals of the
   three kinds (``ci_over``: iterations, captions, both). Two truths:

   * *unconditional*: the expected estimate over data sets of that size
     (the mean of the estimates), the value a new data set would estimate;
   * *conditional* (LIC only): the leakage of the attackers that were
     actually trained, over the whole population of captions, computed
     exactly (the population is 36 caption types).

   The caption bootstrap holds the attackers fixed, so it targets the
   conditional value; what it leaves out (how the attacker varies with its
   training captions) shows in the unconditional coverage.

Run from the repository root::

    python benchmarks/bench_captioning.py [--model nic] [--strict] [--no-old] [--random-split]
    python benchmarks/bench_captioning.py --coverage [--reps 300]

``--strict`` exits with 1 when a time target is missed.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import os
import sys
import time
from pathlib import Path
from unittest import mock

import numpy as np
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


def _same(a, b) -> bool:
    return all(x.iterations[["psi_data", "psi_model", "dbac"]].equals(y.iterations[["psi_data", "psi_model", "dbac"]])
               for x, y in ((a.a_to_t, b.a_to_t), (a.t_to_a, b.t_to_a)))


def timing(args: argparse.Namespace) -> int:
    path = DATA / f"{args.model}.csv"
    if not path.exists():
        print(f"skipped: data not found ({path} is absent)")
        return 0
    frame = pd.read_csv(path)
    try:
        load = f"; load average {os.getloadavg()[0]:.1f}"
    except (AttributeError, OSError):
        load = ""
    print(f"{len(frame):,} captions of {args.model}; cores: {os.cpu_count()}{load}")

    start = time.perf_counter()
    res = lic(frame["gender"], captions_pred=frame["caption"], split=frame["split"], n_iter=10, random_state=0,
              progress=False)
    took = time.perf_counter() - start
    ok = took <= TARGET_S
    print(f"biasamp lic (default attacker, 10 iterations, 1,000 caption replicates): {took:.2f} s  (target <= "
          f"{TARGET_S:.0f} s: ratio {took / TARGET_S:.2f}, {'met' if ok else 'MISSED'});  LIC_M = "
          f"{100 * res.lic_m:.1f} [{100 * res.ci_m[0]:.1f}, {100 * res.ci_m[1]:.1f}]")

    other = pd.read_csv(DATA / ("nic_plus.csv" if args.model != "nic_plus" else "nic.csv")).set_index("image_id")
    human = other.loc[frame["image_id"], "caption"].to_numpy()
    task, task_pred = caption_labels(human), caption_labels(frame["caption"])
    kw = dict(captions=human, captions_pred=frame["caption"], task_pred=task_pred, n_iter=10, random_state=0,
              progress=False)
    start = time.perf_counter()
    d = dbac(frame["gender"], task, split=frame["split"], **kw)
    took_d = time.perf_counter() - start
    ok_d = took_d <= TARGET_S
    labels = int((task.to_numpy().sum(axis=0) > 0).sum())
    print(f"biasamp dbac (both directions, {task.shape[1]} COCO object labels ({labels} present), another model as "
          f"the human side, train/val split, 1,000 caption replicates): {took_d:.2f} s  (target <= "
          f"{TARGET_S:.0f} s: ratio {took_d / TARGET_S:.2f}, {'met' if ok_d else 'MISSED'});  A->T "
          f"{d.a_to_t.value:+.4f} {_ci(d.a_to_t.ci)}, T->A {d.t_to_a.value:+.4f} {_ci(d.t_to_a.ci)}")
    if not args.no_old:
        start = time.perf_counter()
        with mock.patch.object(sys.modules["biasamp.captioning.dbac"], "deterministic", return_value=False):
            old = dbac(frame["gender"], task, split=frame["split"], n_jobs=1, level=None, **kw)
        took_o = time.perf_counter() - start
        print(f"  0.2 path (every iteration fitted again, one process, no caption bootstrap): {took_o:.2f} s; "
              f"speed-up {took_o / took_d:.1f}x; values identical: {_same(old, d)}")
    if args.random_split:
        for n_jobs in (None, 1):
            start = time.perf_counter()
            r = dbac(frame["gender"], task, n_jobs=n_jobs, **kw)
            print(f"biasamp dbac without a split (a new split and new fits per iteration), n_jobs={n_jobs}: "
                  f"{time.perf_counter() - start:.2f} s;  A->T {r.a_to_t.value:+.4f}, T->A {r.t_to_a.value:+.4f}")

    module, info = _competitor()
    if module is None:
        print(f"bias-amplification LIC/DBAC: skipped: {info}")
    else:  # pragma: no cover - not installable without heavy dependencies here
        print(f"bias-amplification {info}: text metrics importable; timing them needs an attacker model and "
              "embedding weights, which this benchmark does not download: skipped")
    return 1 if args.strict and not (ok and ok_d) else 0


def _ci(ci) -> str:
    return "" if ci is None else f"[{ci[0]:+.4f}, {ci[1]:+.4f}]"


# --------------------------------------------------------------------------- #
# coverage
# --------------------------------------------------------------------------- #
PLACES = np.array(["kitchen", "street", "beach", "office", "park", "field"])
ACTIVITIES = np.array(["standing", "sitting", "walking"])
WHO = np.array(["woman", "man"])
TYPES = list(itertools.product(range(2), range(3), range(6)))  # (gender, activity, place)
TYPE_TEXT = [f"a {WHO[g]} {ACTIVITIES[a]} in a {PLACES[p]}" for g, a, p in TYPES]
TYPE_GENDER = np.array([t[0] for t in TYPES])


def _place_p(strength: float) -> np.ndarray:
    """P(place | gender): women tilt to the first three places, men to the last three, by ``strength``."""
    tilt = np.array([1, 1, 1, -1, -1, -1]) * strength / 6
    return np.stack([1 / 6 + tilt, 1 / 6 - tilt])


def _draw(rng: np.random.Generator, g: np.ndarray, strength: float) -> tuple[list[str], np.ndarray]:
    cum = np.cumsum(_place_p(strength)[g], axis=1)
    place = (rng.random(len(g))[:, None] > cum).sum(axis=1)
    act = rng.integers(0, 3, len(g))
    return [f"a {w} {a} in a {p}" for w, a, p in zip(WHO[g], ACTIVITIES[act], PLACES[place])], place


def _type_probability(strength: float) -> np.ndarray:
    """Population probability of each caption type among class-balanced images."""
    p = _place_p(strength)
    return np.array([0.5 / 3 * p[g, c] for g, _, c in TYPES])


class _Spy:
    """Wraps ``lic``'s attacker fits: also scores every fitted attacker on the 36 caption types."""

    def __init__(self) -> None:
        lic_module = sys.modules["biasamp.captioning.lic"]
        from biasamp.captioning import _text

        self.real = lic_module.fit_proba
        masked = _text.mask_tokens(_text.tokenize_all(np.array(TYPE_TEXT, dtype=object)),
                                   _text.word_set(_text.resolve_words("gender", "mask")))
        self.types = _text.join(masked)
        self.probas: list[np.ndarray] = []
        self.patch = mock.patch.object(lic_module, "fit_proba", self)

    def __call__(self, attacker, x, y, train, test, k, seed):
        extra = len(x) + np.arange(len(TYPES))
        p = self.real(attacker, list(x) + self.types, np.concatenate([y, TYPE_GENDER]), train,
                      np.concatenate([test, extra]), k, seed)
        self.probas.append(p[len(test):])
        return p[:len(test)]


def _conditional(spy: _Spy, strength_d: float, strength_m: float) -> dict:
    """The trained attackers' leakage over the population of caption types (mean over the iterations).

    The spy saw two fits (model, human) per iteration, or two in all when the
    iterations were identical and ``lic`` fitted once.
    """
    scores = sys.modules["biasamp.captioning.lic"]._scores
    out = {}
    for side, (q, s) in enumerate((("lic_m", strength_m), ("lic_d", strength_d))):
        w = _type_probability(s)
        out[q] = float(np.mean([np.sum(w * scores(spy.probas[2 * it + side], TYPE_GENDER))
                                for it in range(len(spy.probas) // 2)]))
    out["lic"] = out["lic_m"] - out["lic_d"]
    return out


SCENARIOS = {
    # name: (images, strength of the human captions, of the model's, split mode)
    "none-random": (400, 0.6, 0.6, "random"),
    "none-fixed": (400, 0.6, 0.6, "fixed"),
    "amp-fixed-balanced": (400, 0.3, 0.6, "fixed-balanced"),
    "none-fixed-2000": (2000, 0.6, 0.6, "fixed"),
}


def coverage(args: argparse.Namespace) -> int:
    n_iter = 5
    rows = []
    for name, (n, s_d, s_m, mode) in SCENARIOS.items():
        if args.only and name not in args.only:
            continue
        start = time.perf_counter()
        results = []
        for rep in range(args.reps):
            rng = np.random.default_rng(rep)
            g = rng.integers(0, 2, n)
            human, place_d = _draw(rng, g, s_d)
            model, place_m = _draw(rng, g, s_m)
            kw: dict = {}
            if mode != "random":
                kw["split"] = np.where(np.arange(n) < int(0.7 * n), "train", "val")
                kw["balanced"] = mode == "fixed-balanced"
            spy = _Spy()
            with spy.patch:
                res = lic(g, captions_pred=model, captions=human, n_iter=n_iter, random_state=rep, n_boot=500,
                          progress=False, **kw)
            cond = _conditional(spy, s_d, s_m)
            d = dbac(g, PLACES[place_d], captions=human, captions_pred=model, task_pred=PLACES[place_m],
                     directions="T->A", n_iter=n_iter, random_state=rep, n_boot=500, progress=False,
                     split=kw.get("split"), n_jobs=1)
            results.append((res.intervals, cond, d.t_to_a.intervals))
        took = time.perf_counter() - start
        for q in ("lic_m", "lic", "dbac T->A"):
            frames = [r[2] if q.startswith("dbac") else r[0] for r in results]
            key = "dbac" if q.startswith("dbac") else q
            est = np.array([f.at[key, "estimate"] for f in frames])
            truth = float(est.mean())
            cond = None if q.startswith("dbac") else np.array([r[1][q] for r in results])
            row = {"scenario": name, "quantity": q, "E[estimate]": truth, "sd(estimate)": float(est.std(ddof=1))}
            for kind in ("iterations", "captions", "both"):
                lo = np.array([f.at[key, f"{kind}_low"] for f in frames])
                hi = np.array([f.at[key, f"{kind}_high"] for f in frames])
                row[f"{kind}: cov."] = float(np.mean((lo <= truth) & (truth <= hi)))
                row[f"{kind}: cond. cov."] = (np.nan if cond is None
                                              else float(np.mean((lo <= cond) & (cond <= hi))))
                row[f"{kind}: holds est."] = float(np.mean((lo <= est) & (est <= hi)))
                row[f"{kind}: width"] = float(np.mean(hi - lo))
            rows.append(row)
        print(f"{name}: {args.reps} data sets in {took:.0f} s", flush=True)
    table = pd.DataFrame(rows)
    with pd.option_context("display.width", 250, "display.max_columns", 30, "display.float_format", "{:.3f}".format):
        print(table.to_string(index=False))
    print()
    print(table.to_markdown(index=False, floatfmt=".3f") if _has_tabulate() else "(markdown: install tabulate)")
    return 0


def _has_tabulate() -> bool:
    try:
        importlib.import_module("tabulate")
    except ImportError:
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="nic_equalizer")
    parser.add_argument("--strict", action="store_true")
    parser.add_argument("--no-old", action="store_true", help="skip the 0.2 DBAC path (about a minute)")
    parser.add_argument("--random-split", action="store_true", help="also time DBAC without a split")
    parser.add_argument("--coverage", action="store_true", help="the coverage simulation instead of the timings")
    parser.add_argument("--reps", type=int, default=300, help="data sets per coverage scenario")
    parser.add_argument("--only", nargs="*", choices=list(SCENARIOS), help="coverage scenarios to run")
    args = parser.parse_args(argv)
    return coverage(args) if args.coverage else timing(args)


if __name__ == "__main__":
    sys.exit(main())
