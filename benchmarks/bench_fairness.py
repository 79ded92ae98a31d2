"""Benchmark: the seven group fairness metrics vs fairlearn's MetricFrame.

Data: N rows (default 1,000,000), 5 classes, 8 groups. biasamp computes all
seven metrics of Qian et al. (2021) for every class (one-vs-rest) from one
count pass; fairlearn computes selection rate, TPR and FPR per group with one
``MetricFrame`` per class (the rates the metrics are built from). Both start
from the same labels. Also times 1,000 bootstrap replicates of DP.

Targets (issue #4): >= 100x faster than fairlearn; 1,000 DP replicates <= 1 s.

Run: ``python benchmarks/bench_fairness.py [--rows N] [--repeat R] [--no-fairlearn]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def best_of(fn, repeat):
    times = []
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--classes", type=int, default=5)
    parser.add_argument("--groups", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--no-fairlearn", action="store_true")
    args = parser.parse_args()

    from biasamp.fairness import demographic_parity, fairness_metrics
    from biasamp.stats import bootstrap

    rng = np.random.default_rng(0)
    n, k = args.rows, args.classes
    group = rng.integers(0, args.groups, n)
    y_true = rng.integers(0, k, n)
    y_pred = np.where(rng.random(n) < 0.6 + 0.03 * group, y_true, rng.integers(0, k, n))
    print(f"N={n:,}, {k} classes, {args.groups} groups")

    t_ours, res = best_of(lambda: fairness_metrics(y_true, y_pred, sensitive_features=group), args.repeat)
    print(f"biasamp fairness_metrics (7 metrics x {k} classes): {t_ours * 1e3:8.1f} ms (best of {args.repeat})")
    print("  overall:", {m: round(v, 5) for m, v in res.overall.items()})

    t_boot, boot = best_of(
        lambda: bootstrap(demographic_parity, y_true, y_pred, sensitive_features=group,
                          n_boot=args.n_boot, random_state=0),
        max(1, args.repeat // 2),
    )
    lo, hi = boot.interval()
    status = "OK" if t_boot <= 1.0 else "MISSED"
    print(f"bootstrap DP, {args.n_boot} replicates:           {t_boot * 1e3:8.1f} ms "
          f"(target <= 1000 ms: {status}); DP = {boot.value:.5f}, 95% CI [{lo:.5f}, {hi:.5f}]")

    if args.no_fairlearn:
        return
    try:
        from fairlearn.metrics import MetricFrame, false_positive_rate, selection_rate, true_positive_rate
    except ImportError:
        print("fairlearn not installed: skipping the comparison (pip install fairlearn)")
        return

    def fairlearn_all():
        frames = []
        for c in range(k):
            frames.append(MetricFrame(
                metrics={"selection_rate": selection_rate, "tpr": true_positive_rate, "fpr": false_positive_rate},
                y_true=(y_true == c).astype(int), y_pred=(y_pred == c).astype(int), sensitive_features=group,
            ))
        return frames

    t_fl, frames = best_of(fairlearn_all, 1)
    print(f"fairlearn MetricFrame (3 rates x {k} classes):   {t_fl * 1e3:8.1f} ms (1 run)")
    # same numbers
    for c in range(k):
        diff = frames[c].difference()
        assert abs(diff["selection_rate"] - res.by_class.iloc[c]["DP"]) < 1e-12
        assert abs(diff["tpr"] - res.by_class.iloc[c]["EOTP"]) < 1e-12
        assert abs(diff["fpr"] - res.by_class.iloc[c]["EOFP"]) < 1e-12
    speedup = t_fl / t_ours
    status = "OK" if speedup >= 100 else "MISSED"
    print(f"speed-up: {speedup:,.0f}x (target >= 100x: {status}); DP/EOTP/EOFP per class agree with fairlearn")


if __name__ == "__main__":
    main()
