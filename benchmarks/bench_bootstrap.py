"""Benchmark: 1,000 bootstrap replicates of every count-based family, time and memory.

Cases (targets in brackets, all with n_boot = 1000 and the default
``ci_method="auto"``, tests of no effect included):

1. group fairness, 1,000,000 rows, 5 classes, 8 groups          [<= 1 s]
2. BiasAmp→ single-label, 1,000,000 rows (2 groups, 5 classes)   [<= 1 s]
3. BiasAmp→ multi-label, 100,000 rows x 80 tasks                 [<= 10 s]
4. Multi→ / Multi_MALS on the COCO gender/object labels          [<= 10 s]
   (``../shared/data/wang2019_balanced/coco``: val = training, test = test,
   a simulated model); skipped when the data is absent
5. memory: BiasAmp→ multi-label at 1,000,000 rows x 80 tasks: the
   bootstrap's extra memory (tracemalloc peak beyond its inputs) against the
   point computation's peak including its inputs          [ratio <= 2]

6. ratios to the point computation (issue 24), the metric and ``bootstrap``
   timed alternately ``--repeats`` times in the same run (median and range):
   BiasAmp→ and Multi→/Multi_MALS at 1,000,000 rows x 10 tasks (prevalences
   10%..40%, an imperfect model: about 58,000 distinct rows)   [ratio <= 20];
   BiasAmp→ at 100,000 rows x 80 tasks (case 3's data: almost every row is
   its own cell)                                              [ratio <= 50];
   and, with ``tracemalloc``, the bootstrap's peak memory against the point
   computation's (inputs included) at 1,000,000 rows x 10 tasks [ratio <= 2].
   At these sizes ``bootstrap`` uses the grouped bootstrap (its note says so;
   docs/inference.md).

For comparison the same run times fairlearn's ``MetricFrame(n_boot=1000)``
(the selection rate per group of one class) on the first 2,000 rows of case 1
(it resamples and recomputes the rows per replicate: about a minute already),
beside biasamp on the same rows.

Run: ``python benchmarks/bench_bootstrap.py [--quick] [--skip-memory] [--only-ratios] [--repeats R]``
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np

COCO = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "wang2019_balanced" / "coco"


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def verdict(value: float, target: float) -> str:
    return f"{'MET' if value <= target else 'MISSED'} (target <= {target:g})"


def fairness_case(n: int, n_boot: int, fairlearn_rows: int, fairlearn_boot: int) -> None:
    import biasamp as b

    rng = np.random.default_rng(0)
    group = rng.integers(0, 8, n)
    y_true = rng.integers(0, 5, n)
    y_pred = np.where(rng.random(n) < 0.6 + 0.03 * group, y_true, rng.integers(0, 5, n))
    t, res = timed(lambda: b.bootstrap(b.fairness_metrics, y_true, y_pred, sensitive_features=group,
                                       n_boot=n_boot, random_state=0))
    print(f"1. fairness, {n:,} rows, 5 classes, 8 groups, 7 metrics: {t:6.2f} s  {verdict(t, 1.0)}")
    print(f"   DP {res.estimate['DP']:.4f} CI {tuple(round(x, 4) for x in res.ci['DP'])} ({res.methods['DP']}), "
          f"p = {res.p_value['DP']:.3g}")
    try:
        from fairlearn.metrics import MetricFrame, selection_rate
    except ImportError:
        print("   fairlearn not installed: no comparison")
        return
    m = min(n, fairlearn_rows)
    yt, yp, g = (y_true[:m] == 0).astype(int), (y_pred[:m] == 0).astype(int), group[:m]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_fl, _ = timed(lambda: MetricFrame(
            metrics={"selection_rate": selection_rate}, y_true=yt, y_pred=yp, sensitive_features=g,
            n_boot=fairlearn_boot, ci_quantiles=[0.025, 0.975], random_state=0))
        t_us, _ = timed(lambda: b.bootstrap(b.fairness_metrics, y_true[:m], y_pred[:m], sensitive_features=g,
                                            n_boot=fairlearn_boot, random_state=0))
    print(f"   fairlearn MetricFrame(n_boot={fairlearn_boot}), selection rate of one class, {m:,} rows: "
          f"{t_fl:7.2f} s; biasamp (5 classes, 7 metrics, tests) on the same rows: {t_us:5.2f} s -> "
          f"{t_fl / t_us:,.0f}x faster")


def directional_single(n: int, n_boot: int) -> None:
    import biasamp as b

    rng = np.random.default_rng(1)
    attr = rng.integers(0, 2, n)
    task = np.where(rng.random(n) < 0.5, rng.integers(0, 5, n), (attr * 2 + rng.integers(0, 2, n)) % 5)
    task_pred = np.where(rng.random(n) < 0.8, task, rng.integers(0, 5, n))
    attr_pred = np.where(rng.random(n) < 0.9, attr, 1 - attr)
    t, res = timed(lambda: b.bootstrap(b.bias_amp_directional, attr, task, attr_pred=attr_pred,
                                       task_pred=task_pred, n_boot=n_boot, random_state=0))
    print(f"2. BiasAmp-> single-label, {n:,} rows: {t:6.2f} s  {verdict(t, 1.0)}  "
          f"A->T {res.estimate['A->T']:+.4f} CI {tuple(round(x, 4) for x in res.ci['A->T'])} "
          f"({res.methods['A->T']})")


def _multilabel(n: int, k: int, seed: int = 2):
    rng = np.random.default_rng(seed)
    attr = rng.integers(0, 2, n)
    task = rng.random((n, k)) < (0.02 + 0.06 * rng.random(k))[None, :] * (1 + attr[:, None])
    task_pred = task ^ (rng.random((n, k)) < 0.03)
    attr_pred = np.where(rng.random(n) < 0.9, attr, 1 - attr)
    return attr, task, attr_pred, task_pred


def directional_multi(n: int, n_boot: int) -> None:
    import biasamp as b

    attr, task, attr_pred, task_pred = _multilabel(n, 80)
    t, res = timed(lambda: b.bootstrap(b.bias_amp_directional, attr, task, attr_pred=attr_pred,
                                       task_pred=task_pred, n_boot=n_boot, random_state=0))
    print(f"3. BiasAmp-> multi-label, {n:,} rows x 80 tasks: {t:6.2f} s  {verdict(t, 10.0)}  "
          f"A->T {res.estimate['A->T']:+.4f} CI {tuple(round(x, 4) for x in res.ci['A->T'])}")


def coco(n_boot: int) -> None:
    import biasamp as b

    if not (COCO / "test.npz").exists():
        print("4. COCO labels not found: skipped")
        return
    tr, te = np.load(COCO / "val.npz"), np.load(COCO / "test.npz")
    attr_train, task_train = tr["gender_onehot"].argmax(1), tr["objects"]
    attr, task = te["gender_onehot"].argmax(1), te["objects"]
    rng = np.random.default_rng(3)
    task_pred = (task ^ (rng.random(task.shape) < 0.02)).astype(np.int8)
    task_pred[(attr == 1) & (rng.random(len(attr)) < 0.3), 0] = 1
    attr_pred = np.where(rng.random(len(attr)) < 0.85, attr, 1 - attr)
    t, res = timed(lambda: b.bootstrap(b.multi_bias_amp, attr, task, attr_pred=attr_pred, task_pred=task_pred,
                                       attr_train=attr_train, task_train=task_train, n_boot=n_boot,
                                       random_state=0))
    n_comb = len(b.multi_bias_amp(attr, task, attr_pred=attr_pred, task_pred=task_pred, attr_train=attr_train,
                                  task_train=task_train).combinations)
    print(f"4. Multi-attribute on COCO ({len(attr):,} test rows, 79 objects, {n_comb} combinations): {t:6.2f} s  "
          f"{verdict(t, 10.0)}")
    for name in ("G->M", "M->G", "Multi_MALS"):
        print(f"   {name:<10} {res.estimate[name]:.4f} CI {tuple(round(x, 4) for x in res.ci[name])} "
              f"({res.methods[name]})")


def memory(n: int, n_boot: int) -> None:
    import biasamp as b

    attr, task, attr_pred, task_pred = _multilabel(n, 80, seed=4)
    inputs = sum(x.nbytes for x in (attr, task, attr_pred, task_pred))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tracemalloc.start()
        t_point, _ = timed(lambda: b.bias_amp_directional(attr, task, attr_pred=attr_pred, task_pred=task_pred))
        point_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        t_boot, _ = timed(lambda: b.bootstrap(b.bias_amp_directional, attr, task, attr_pred=attr_pred,
                                              task_pred=task_pred, n_boot=n_boot, random_state=0))
        boot_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    point_total = point_peak + inputs
    ratio = boot_peak / point_total
    print(f"5. memory, BiasAmp-> multi-label {n:,} rows x 80 tasks: inputs {inputs / 2**20:,.0f} MB; point "
          f"computation {point_peak / 2**20:,.0f} MB beyond inputs ({t_point:.1f} s); bootstrap {boot_peak / 2**20:,.0f} "
          f"MB beyond inputs ({t_boot:.1f} s)")
    print(f"   bootstrap extra memory / point computation's memory (inputs + working) = {ratio:.2f}  "
          f"{verdict(ratio, 2.0)}")


def _wide(n: int, k: int, seed: int = 5):
    """n rows x k tasks at prevalences 10%..40%, tilted by group; a model with 15% misses, 2-3% false positives."""
    rng = np.random.default_rng(seed)
    base = 0.1 + 0.3 * np.linspace(0, 1, k)
    tilt = np.where(np.arange(k) % 2 == 0, 1.5, 0.6)
    attr = rng.integers(0, 2, n)
    task = rng.random((n, k)) < np.where(attr[:, None] == 1, base * tilt, base)
    flip = rng.random((n, k))
    task_pred = np.where(task, flip >= 0.15, flip < np.where(attr[:, None] == 1, 0.02 * tilt, 0.02))
    attr_pred = np.where(rng.random(n) < 0.9, attr, 1 - attr)
    return attr, task.astype(np.int8), attr_pred, task_pred.astype(np.int8)


def ratio_case(label: str, metric, data, n_boot: int, repeats: int, target: float) -> None:
    import biasamp as b

    attr, task, attr_pred, task_pred = data
    kw = dict(attr_pred=attr_pred, task_pred=task_pred)
    small = slice(0, 2000)  # warm-up: imports and first-call costs out of the timings
    b.bootstrap(metric, attr[small], task[small], attr_pred=attr_pred[small], task_pred=task_pred[small],
                n_boot=50, random_state=0)
    points, boots, res = [], [], None
    for _ in range(repeats):
        points.append(timed(lambda: metric(attr, task, **kw))[0])
        t, res = timed(lambda: b.bootstrap(metric, attr, task, n_boot=n_boot, random_state=0, **kw))
        boots.append(t)
    ratios = np.array(boots) / np.array(points)
    grouped = next((note.split(";")[0] for note in res.notes if note.startswith("grouped")), "exact multinomial")
    print(f"   {label}: point {np.median(points) * 1e3:6.0f} ms, bootstrap {np.median(boots):5.2f} s; "
          f"ratio median {np.median(ratios):5.1f} (range {ratios.min():.1f}-{ratios.max():.1f}, {repeats} runs)  "
          f"{verdict(float(np.median(ratios)), target)}  [{grouped}]", flush=True)


def memory_ratio(label: str, metric, data, n_boot: int) -> None:
    import biasamp as b

    attr, task, attr_pred, task_pred = data
    kw = dict(attr_pred=attr_pred, task_pred=task_pred)
    inputs = sum(x.nbytes for x in data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tracemalloc.start()
        metric(attr, task, **kw)
        point_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        b.bootstrap(metric, attr, task, n_boot=n_boot, random_state=0, **kw)
        boot_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    ratio = boot_peak / (point_peak + inputs)
    print(f"   memory, {label}: point {point_peak / 2**20:,.0f} MB + inputs {inputs / 2**20:,.0f} MB; bootstrap "
          f"{boot_peak / 2**20:,.0f} MB beyond inputs; ratio {ratio:.2f}  {verdict(ratio, 2.0)}", flush=True)


def ratios(n_boot: int, repeats: int, scale: int, skip_memory: bool) -> None:
    import os

    import biasamp as b

    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    print(f"6. bootstrap ({n_boot} replicates) / point computation, same run; {os.cpu_count()} cores, load average "
          f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f}", flush=True)
    wide = _wide(1_000_000 // scale, 10)
    ratio_case(f"BiasAmp-> {1_000_000 // scale:,} rows x 10 tasks", b.bias_amp_directional, wide, n_boot, repeats,
               20.0)
    ratio_case(f"Multi->/Multi_MALS {1_000_000 // scale:,} rows x 10 tasks", b.multi_bias_amp, wide, n_boot,
               repeats, 20.0)
    ratio_case(f"BiasAmp-> {100_000 // scale:,} rows x 80 tasks", b.bias_amp_directional,
               _multilabel(100_000 // scale, 80), n_boot, repeats, 50.0)
    if not skip_memory:
        memory_ratio(f"BiasAmp-> {1_000_000 // scale:,} rows x 10 tasks", b.bias_amp_directional, wide, n_boot)
        memory_ratio(f"Multi->/Multi_MALS {1_000_000 // scale:,} rows x 10 tasks", b.multi_bias_amp, wide, n_boot)
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    print(f"   load average after: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")


def main() -> None:
    from biasamp import UndefinedPairWarning

    warnings.simplefilter("ignore", UndefinedPairWarning)  # a few rare COCO pairs; reported in the results
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--only-ratios", action="store_true", help="case 6 only")
    parser.add_argument("--repeats", type=int, default=3, help="timings per ratio of case 6")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    import biasamp as b

    # warm-up: the first call imports scipy.stats and friends (about 1 s on a busy machine), not case 1's cost
    rng = np.random.default_rng(9)
    b.bootstrap(b.fairness_metrics, rng.integers(0, 2, 500), rng.integers(0, 2, 500),
                sensitive_features=rng.integers(0, 2, 500), n_boot=20, random_state=0)
    if args.only_ratios:
        ratios(args.n_boot, args.repeats, scale, args.skip_memory)
        return
    fairness_case(1_000_000 // scale, args.n_boot, 2_000, 100 if args.quick else args.n_boot)
    directional_single(1_000_000 // scale, args.n_boot)
    directional_multi(100_000 // scale, args.n_boot)
    coco(args.n_boot)
    if not args.skip_memory:
        memory(1_000_000 // scale, args.n_boot)
    ratios(args.n_boot, args.repeats, scale, args.skip_memory)


if __name__ == "__main__":
    main()
