"""Benchmark: a threshold curve from one sort of the scores vs one recount per threshold.

``threshold_curve`` sorts each score column once and reads the counts of every
grid point as cumulative sums along the sorted scores; the baseline calls the
metric itself on the hard predictions of each threshold (what a user would
write). Both give the same numbers (checked here); the ratio is printed.

Run: ``python benchmarks/bench_curves.py [--n N] [--tasks K] [--points G] [--repeat R]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from biasamp import bias_amp_directional, fairness_metrics, threshold_curve


def best_of(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--points", type=int, default=101)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    attr = rng.integers(0, 2, args.n)
    task = (rng.random((args.n, args.tasks)) < 0.2 + 0.2 * attr[:, None]).astype(np.int8)
    scores = np.clip(0.4 * task + 0.1 * attr[:, None] + rng.normal(0.2, 0.2, task.shape), 0, 1)
    grid = np.linspace(0, 1, args.points)

    t_curve, curve = best_of(lambda: threshold_curve(bias_amp_directional, attr, task, task_scores=scores,
                                                     thresholds=grid), args.repeat)
    t_loop, loop = best_of(lambda: [bias_amp_directional(attr, task, task_pred=(scores > g).astype(np.int8),
                                                         cross_fit=False).a_to_t.value  # the sweep's plug-in signs
                                    for g in grid], 1)
    assert np.allclose(curve.values["a_to_t"], loop, atol=1e-12)
    print(f"BiasAmp-> A->T, n={args.n:,}, {args.tasks} tasks, {args.points} thresholds:")
    print(f"  threshold_curve (one sort per column) {t_curve:8.3f} s")
    print(f"  recount per threshold                 {t_loop:8.3f} s   ratio {t_loop / t_curve:6.1f}x")

    y, s = task[:, 0], scores[:, 0]
    t_curve, curve = best_of(lambda: threshold_curve(fairness_metrics, attr, y, task_scores=s, thresholds=grid),
                             args.repeat)
    t_loop, loop = best_of(lambda: [fairness_metrics(y, (s > g).astype(np.int8), sensitive_features=attr).overall["DP"]
                                    for g in grid], 1)
    assert np.allclose(curve.values["DP"], loop, atol=1e-12)
    print(f"fairness (binary task), n={args.n:,}, {args.points} thresholds:")
    print(f"  threshold_curve (one sort)            {t_curve:8.3f} s")
    print(f"  recount per threshold                 {t_loop:8.3f} s   ratio {t_loop / t_curve:6.1f}x")


if __name__ == "__main__":
    main()
