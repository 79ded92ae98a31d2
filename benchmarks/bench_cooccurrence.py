"""Benchmark: directional bias amplification (BiasAmp→) at N = 10⁶ rows.

Times ``biasamp.bias_amp_directional`` (both directions in one call) on
1,000,000 rows, 2 protected groups and 80 multi-label tasks at 5% density,
twice: the **default** (no training set: the signs cross-fitted on two folds
of the test rows) and the **plug-in** (``cross_fit=False``: the signs of the
very rows they are applied to, as the research code computes them), against

* the **floor**: one float32 ``AᵀT`` product on pre-converted float32 arrays
  (A one-hot N x 2, T N x 80), the least work any count-based implementation
  must do;
* a **per-pair loop** written here the way the research code (Wang &
  Russakovsky's ``directional-bias-amp``) does it: for each (group, task) pair,
  boolean masks over the N rows give the counts and, as masked means, the
  conditional probabilities. A tighter counts-only loop is timed as well, for
  information (the target is judged on the research-code-style loop);
* the DPA authors' package ``bias-amplification`` (class ``DBA``), when it is
  installed.

Targets (the project's speed target for BiasAmp→):

* biasamp / floor   <= 5x   (the plug-in and the cross-fitted default)
* cross-fitted / plug-in <= 2x
* loop / biasamp    >= 20x  (the plug-in, whose signs the loops compute)

The loops double as a validation: their values must agree with biasamp's to
1e-9 in both directions (and pair by pair), or the script fails.

Run from the repository root::

    python benchmarks/bench_cooccurrence.py               # the target sizes
    python benchmarks/bench_cooccurrence.py --n 200000    # quicker
    python benchmarks/bench_cooccurrence.py --strict      # exit 1 on a missed target

Optional competitor (CPU torch wheel first, or pip pulls CUDA builds)::

    pip install torch==2.13.0 bias-amplification

Timings are best-of-``--repeats`` wall-clock times (``time.perf_counter``).
They are sensitive to other processes: on a 2-core machine a concurrently
running job can stall multi-threaded BLAS calls, so the script prints the load
average, and times the cross-fitted default, the plug-in and the floor twice:
with the machine's default BLAS threads and with BLAS limited to one thread,
each as a ratio to the floor and the default as a ratio to the plug-in.

What separates the cross-fitted default from the floor at the default threads
is, for a good part, memory touched for the first time: each call frees about
45 MB that the next call faults in again (10-12k minor page faults, costly in
a virtual machine). ``MALLOC_TOP_PAD_=536870912 python benchmarks/...`` keeps
glibc's freed memory for reuse; the library does not set it (it would change
the allocator of the whole process).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import biasamp

TARGET_FLOOR_RATIO = 5.0  # biasamp / floor must be <= this
TARGET_CROSSFIT_RATIO = 2.0  # cross-fitted / plug-in must be <= this
TARGET_LOOP_SPEEDUP = 20.0  # loop / biasamp must be >= this
AGREEMENT_TOL = 1e-9


# --------------------------------------------------------------------------- #
# data
# --------------------------------------------------------------------------- #
def make_data(n: int, n_tasks: int, density: float, dtype: Any, seed: int = 0) -> dict[str, np.ndarray]:
    """Synthetic test set with real (and amplified) group/task correlation.

    * ``attr``: group id 0/1 (int64), group 1 is 45% of the rows.
    * ``task``: N x K indicators; task t is positive with rate
      ``density * (1 + s_t)`` in group 1 and ``density * (1 - s_t)`` in
      group 0, ``s_t ~ U(-0.6, 0.6)``.
    * ``task_pred``: the ground truth with 5% of positives dropped and false
      positives at a rate proportional to the row's group rate (so the model
      over-predicts a task where it is already common: A→T amplification).
    * ``attr_pred``: the ground truth with 5% random flips, plus a further 15%
      of rows flipped towards the group that the row's tasks are stereotypical
      of (T→A amplification).
    """
    rng = np.random.default_rng(seed)
    attr = (rng.random(n) < 0.45).astype(np.int64)
    skew = rng.uniform(-0.6, 0.6, n_tasks)
    rate_by_group = (density * (1 + np.array([-skew, skew]))).astype(np.float32)  # 2 x K
    rate = rate_by_group[attr]  # N x K
    task = rng.random((n, n_tasks), dtype=np.float32) < rate
    u = rng.random((n, n_tasks), dtype=np.float32)
    fn_rate, fp_scale = 0.05, 0.15
    task_pred = np.where(task, u >= fn_rate, u < fp_scale * rate)
    del rate, u

    stereo = task.astype(np.float32) @ skew.astype(np.float32)  # > 0: tasks typical of group 1
    toward = (stereo > 0).astype(np.int64)
    attr_pred = attr.copy()
    v = rng.random(n)
    nudge = (v < 0.15) & (stereo != 0)
    attr_pred[nudge] = toward[nudge]
    noise = rng.random(n) < 0.05
    attr_pred[noise] = 1 - attr_pred[noise]
    return {
        "attr": attr,
        "attr_pred": attr_pred,
        "task": task.astype(dtype, copy=False),
        "task_pred": task_pred.astype(dtype, copy=False),
    }


def one_hot(ids: np.ndarray, k: int, dtype: Any = np.float32) -> np.ndarray:
    out = np.zeros((len(ids), k), dtype=dtype)
    out[np.arange(len(ids)), ids] = 1
    return out


# --------------------------------------------------------------------------- #
# timing helpers
# --------------------------------------------------------------------------- #
def best_of(fn: Callable[[], Any], repeats: int) -> tuple[float, list[float], Any]:
    """Best wall-clock time of ``repeats`` calls, all times, and the last result."""
    times, result = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), times, result


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:9.1f} ms"


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


# --------------------------------------------------------------------------- #
# baselines
# --------------------------------------------------------------------------- #
def floor_product(a_f32: np.ndarray, t_f32: np.ndarray) -> np.ndarray:
    """The floor: one float32 ``AᵀT`` on already-converted float32 arrays."""
    return a_f32.T @ t_f32


def loop_directional(attr, task, attr_pred, task_pred) -> dict[str, np.ndarray]:
    """BiasAmp→, both directions, one (group, task) pair at a time: the research-code way.

    Mirrors the structure of Wang & Russakovsky's reference code: for every
    pair, y from the pair's counts, then each conditional probability as the
    mean of one boolean column over the rows selected by a boolean mask
    (``np.mean(task_preds[:, t][mask_a])``), with masks instead of the
    ``np.where``/``set`` index lists of the original (which is slower still).
    ``y = sign(n·#(a,t) − #a·#t)`` in exact integers (docs/definitions.md#def-directional).
    """
    n = len(attr)
    groups = np.unique(attr)
    n_tasks = task.shape[1]
    y = np.zeros((len(groups), n_tasks))
    d_at = np.full((len(groups), n_tasks), np.nan)
    d_ta = np.full((len(groups), n_tasks), np.nan)
    for i, a in enumerate(groups):
        in_a = attr == a
        pred_a = attr_pred == a
        for t in range(n_tasks):
            has_t = task[:, t] == 1
            pred_t = task_pred[:, t] == 1
            n_a, n_t, n_at = int(in_a.sum()), int(has_t.sum()), int((in_a & has_t).sum())
            y[i, t] = np.sign(n * n_at - n_a * n_t)
            if n_a:  # A->T: P(T̂_t | A_a) − P(T_t | A_a)
                d_at[i, t] = pred_t[in_a].mean() - has_t[in_a].mean()
            if n_t:  # T->A: P(Â_a | T_t) − P(A_a | T_t)
                d_ta[i, t] = pred_a[has_t].mean() - in_a[has_t].mean()
    return _loop_result(y, d_at, d_ta)


def loop_counts(attr, task, attr_pred, task_pred) -> dict[str, np.ndarray]:
    """A tighter per-pair loop: five ``(mask & mask).sum()`` counts per pair, no compaction.

    Not how the research code is written, but the fastest per-pair loop in
    plain numpy; shown so that the speed-up is not read against a straw man.
    """
    n = len(attr)
    groups = np.unique(attr)
    n_tasks = task.shape[1]
    y = np.zeros((len(groups), n_tasks))
    d_at = np.full((len(groups), n_tasks), np.nan)
    d_ta = np.full((len(groups), n_tasks), np.nan)
    for i, a in enumerate(groups):
        in_a = attr == a
        pred_a = attr_pred == a
        n_a = int(in_a.sum())
        for t in range(n_tasks):
            has_t = task[:, t] != 0
            pred_t = task_pred[:, t] != 0
            n_t = int(has_t.sum())
            n_at = int((in_a & has_t).sum())
            y[i, t] = np.sign(n * n_at - n_a * n_t)
            if n_a:
                d_at[i, t] = (int((in_a & pred_t).sum()) - n_at) / n_a
            if n_t:
                d_ta[i, t] = (int((pred_a & has_t).sum()) - n_at) / n_t
    return _loop_result(y, d_at, d_ta)


def _loop_result(y, d_at, d_ta) -> dict[str, Any]:
    return {
        "y": y,
        "delta_a_to_t": d_at,
        "delta_t_to_a": d_ta,
        "a_to_t": float(np.nanmean(y * d_at)),
        "t_to_a": float(np.nanmean(y * d_ta)),
    }


def pair_matrix(direction_result, column: str, n_groups: int, n_tasks: int) -> np.ndarray:
    return direction_result.pairs[column].to_numpy(dtype=float).reshape(n_groups, n_tasks)


# --------------------------------------------------------------------------- #
# competitor: bias-amplification (Tokas, Nair et al.)
# --------------------------------------------------------------------------- #
def run_competitor(data, res, args, t_biasamp: float) -> None:
    print()
    print("Competitor: bias-amplification (the DPA authors' package, class DBA)")
    try:
        import bias_amplification
        import torch
        from bias_amplification.metrics.CoOccurMetrics import BA_MALS, DBA
    except ImportError as exc:
        print(f"  skipped: not importable ({exc}).")
        print("  install it with:  pip install torch==2.13.0 bias-amplification")
        return

    n = len(data["attr"])
    m = n if args.competitor_n is None else min(args.competitor_n, n)
    sub = slice(0, m)
    print(
        f"  bias-amplification {bias_amplification.__version__}, torch {torch.__version__}, "
        f"{torch.get_num_threads()} torch threads"
    )
    k_t = data["task"].shape[1]
    print(f"  input format: float torch tensors, A and Â one-hot (N x 2), T and T̂ (N x {k_t})")

    def convert():
        return (
            torch.from_numpy(one_hot(data["attr"][sub], 2)),
            torch.from_numpy(one_hot(data["attr_pred"][sub], 2)),
            torch.from_numpy(data["task"][sub]).to(torch.float32),
            torch.from_numpy(data["task_pred"][sub]).to(torch.float32),
        )

    t_conv, _, tensors = best_of(convert, 3)
    A, A_pred, T, T_pred = tensors
    dba = DBA()
    t_dba, _, out = best_of(lambda: dba.computeBiasAmpBidirectional(A, A_pred, T, T_pred), args.repeats)
    scale = n / m
    if m < n:
        print(f"  ran on the first {m:,} rows and extrapolated linearly x{scale:.1f} to N = {n:,}")
    t_conv_n, t_dba_n = t_conv * scale, t_dba * scale
    print(f"  numpy -> float32 tensors  {ms(t_conv_n)}   (once per data set)")
    print(f"  DBA both directions       {ms(t_dba_n)}   (best of {args.repeats}, on the tensors)")
    print(f"  DBA / biasamp             {t_dba_n / t_biasamp:9.2f}x   "
          f"(with conversion: {(t_dba_n + t_conv_n) / t_biasamp:.2f}x)")

    # ---- values, side by side (on the rows DBA saw) ------------------------------
    dba_at = float(out["AtoT"][0])
    dba_ta = float(out["TtoA"][0])
    if m < n:
        data = {key: value[sub] for key, value in data.items()}
        res = biasamp.bias_amp_directional(  # DBA's signs are those of the same rows: cross_fit=False
            data["attr"], data["task"], attr_pred=data["attr_pred"], task_pred=data["task_pred"], cross_fit=False
        )
        print(f"  (values below: both libraries on the same first {m:,} rows)")
    print()
    print(f"  {'direction':<10}{'biasamp':>14}{'DBA':>14}{'difference':>14}")
    for name, ours, theirs in (("A->T", res.a_to_t.value, dba_at), ("T->A", res.t_to_a.value, dba_ta)):
        print(f"  {name:<10}{ours:>14.8f}{theirs:>14.8f}{theirs - ours:>14.2e}")

    explain_dba(res, data, dba, A, T, dba_at, dba_ta)
    compare_mals(data, A, T, T_pred, BA_MALS)


def explain_dba(res, data, dba, A, T, dba_at: float, dba_ta: float) -> None:
    """Re-derive DBA's numbers from exact counts with DBA's formulas, to pin down the causes."""
    k_a, k_t = 2, data["task"].shape[1]
    y = pair_matrix(res.a_to_t, "y", k_a, k_t)
    n_at = pair_matrix(res.a_to_t, "n_both", k_a, k_t)  # #(a, t)
    n_a = pair_matrix(res.a_to_t, "n_attr", k_a, k_t)
    n_at_pred = pair_matrix(res.a_to_t, "p_pred", k_a, k_t) * n_a  # #(a, t̂)
    delta_ta = pair_matrix(res.t_to_a, "delta", k_a, k_t)

    # DBA's y_at: (P(a,t) > P(a)P(t)) in float32, as 0/1 -- then (1-y)(-Δ).
    y01_dba = dba.check_bias(A, T).numpy()
    y01_exact = (y > 0).astype(float)
    flipped = int((y01_dba != y01_exact).sum())
    independent = int((y == 0).sum())

    # A->T: DBA normalises P(T_t | A_a) by Σ_t #(a, t) (computeTgivenA), not by #a.
    p_true_rows = n_at / n_at.sum(axis=1, keepdims=True)
    p_pred_rows = n_at_pred / n_at_pred.sum(axis=1, keepdims=True)
    sign01 = 2 * y01_dba - 1
    emul_at = float(np.mean(sign01 * (p_pred_rows - p_true_rows)))
    # T->A with A one-hot: DBA's row normalisation Σ_a #(t, a) = #t is right; only y differs.
    emul_ta = float(np.mean(sign01 * delta_ta))
    p_true_ratio = float(np.mean(n_a[:, 0] / n_at.sum(axis=1)))

    print()
    print("  Why they differ (from DBA's source, bias_amplification/metrics/CoOccurMetrics.py):")
    print("  * A->T: computeTgivenA divides A.T@T by its row sum Σ_t #(a,t) (line 101), not by #a.")
    print("    With 80 multi-label tasks Σ_t #(a,t) is the number of positive labels in group a,")
    print(f"    about {1 / p_true_ratio:.1f} x #a here, so every 'P(T|A)' is a share of group a's labels,")
    print("    not a rate, and P(T̂|A) is normalised by the *predicted* label count.")
    print(f"    biasamp's exact counts pushed through DBA's formulas give {emul_at:.8f}")
    print(f"    (DBA: {dba_at:.8f}, diff {dba_at - emul_at:.1e}): that is the whole A->T difference.")
    print("  * Both directions: y is (P(a,t) > P(a)P(t)) in 0/1 from float32 products (lines 237-242),")
    print("    then (1-y)(-Δ) (line 275): an exactly independent pair scores -Δ instead of 0, and")
    print("    float rounding can flip near-independent pairs. Here: "
          f"{independent} exactly independent pairs,")
    print(f"    {flipped} pairs whose DBA y differs from sign(n·#(a,t) − #a·#t) > 0.")
    print("    T->A (one-hot A, so DBA's P(A|T) is right): exact counts with DBA's y give")
    print(f"    {emul_ta:.8f} (DBA: {dba_ta:.8f}, diff {dba_ta - emul_ta:.1e}: DBA works in float32).")
    print("    With two one-hot groups the two pairs of a task are independent together and their")
    print("    Δs cancel in the mean, so the fault cannot show in this data; a 12-row, 3-group case")
    print("    where only (group 0, task) is exactly independent:")
    print(f"    {independence_demo(dba)}")
    print("  * Undefined pairs (empty group/task) are clamped to 0 and still averaged (lines 81, 101),")
    print("    instead of being excluded and reported (docs/definitions.md#def-undefined). None occur in this data.")


def independence_demo(dba) -> str:
    """T->A on 12 rows, 3 groups: P(A_0 | T) = P(A_0) exactly, one group-0 row predicted as group 1."""
    import torch

    attr = np.repeat([0, 1, 2], 4)
    task = np.array([[1, 1, 0, 0, 1, 1, 1, 0, 1, 0, 0, 0]]).T
    attr_pred = attr.copy()
    attr_pred[0] = 1
    ours = biasamp.bias_amp_directional(attr, task, attr_pred=attr_pred, cross_fit=False).t_to_a.value
    theirs = dba.computeBiasAmp(
        torch.from_numpy(task.astype(np.float32)),
        torch.from_numpy(one_hot(attr, 3)),
        torch.from_numpy(one_hot(attr_pred, 3)),
    )[0]
    return f"biasamp {ours:.4f} (= (0 + 1/6 + 0)/3), DBA {float(theirs):.4f} (scores -Δ = +1/6 for it)."


def compare_mals(data, A, T, T_pred, BA_MALS) -> None:
    """BiasAmp_MALS side by side (informational: no target)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_ours, _, ours = best_of(
            lambda: biasamp.bias_amp_mals(attr_pred=data["attr_pred"], task_pred=data["task_pred"],
                                          attr_train=data["attr"], task_train=data["task"]), 3
        )
    mals = BA_MALS()
    t_theirs, _, theirs = best_of(lambda: mals.computeBiasAmp(A, T, T_pred), 3)
    theirs_val = float(theirs[0])

    # Re-derive BA_MALS from exact counts: joint probabilities P(a,t) (computePairProbs),
    # not the ratio #(a,t)/Σ_a' #(a',t); T̂ paired with ground-truth A, not Â.
    n = len(data["attr"])
    a_oh = one_hot(data["attr"], 2, np.int64)
    n_at = a_oh.T @ data["task"].astype(np.int64)
    n_at_pred = a_oh.T @ data["task_pred"].astype(np.int64)
    indicator = 2 * n_at > n_at.sum(axis=0, keepdims=True)
    emul = float(np.sum(indicator * (n_at_pred - n_at) / n) / n_at.shape[1])

    print()
    print("  BiasAmp_MALS (informational)")
    print(f"  {'':<10}{'biasamp':>14}{'BA_MALS':>14}")
    print(f"  {'value':<10}{ours.value:>14.8f}{theirs_val:>14.8f}")
    print(f"  {'time':<10}{t_ours * 1e3:>11.1f} ms{t_theirs * 1e3:>11.1f} ms   (best of 3)")
    print("  * BA_MALS.computeBiasAmp (lines 193-199) takes Δ on the joint probabilities P(a,t) =")
    print("    #(a,t)/N (computePairProbs) instead of bias(a,t) = #(a,t)/Σ_a' #(a',t), and pairs T̂")
    print("    with the ground-truth A (it has no Â argument) instead of the predicted Â.")
    print(f"    Exact counts through that formula give {emul:.8f} (BA_MALS: {theirs_val:.8f}).")


# --------------------------------------------------------------------------- #
# main
# --------------------------------------------------------------------------- #
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="rows (default 1,000,000)")
    parser.add_argument("--tasks", type=int, default=80, help="multi-label tasks (default 80)")
    parser.add_argument("--density", type=float, default=0.05, help="task label density (default 0.05)")
    parser.add_argument("--dtype", choices=["bool", "uint8"], default="bool", help="dtype of the 2-D indicators")
    parser.add_argument("--repeats", type=int, default=7, help="repeats for biasamp/floor/DBA (>= 5)")
    parser.add_argument("--loop-repeats", type=int, default=2, help="repeats for the per-pair loops")
    parser.add_argument("--competitor-n", type=int, default=None,
                        help="run the competitor on the first rows only and extrapolate linearly")
    parser.add_argument("--no-competitor", action="store_true", help="skip bias-amplification")
    parser.add_argument("--strict", action="store_true", help="exit with status 1 when a target is missed")
    args = parser.parse_args(argv)
    args.repeats = max(5, args.repeats)

    dtype = np.bool_ if args.dtype == "bool" else np.uint8
    print(f"biasamp {getattr(biasamp, '__version__', '?')}, numpy {np.__version__}, python "
          f"{sys.version.split()[0]}, {os.cpu_count()} CPUs, load average "
          + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    busy = os.getloadavg()[0]
    if busy > 0.5 * (os.cpu_count() or 1):
        print(f"WARNING: 1-minute load average {busy:.2f} on {os.cpu_count()} CPUs: other processes are "
              "running, timings (multi-threaded BLAS above all) will be noisy and pessimistic")
    t0 = time.perf_counter()
    data = make_data(args.n, args.tasks, args.density, dtype)
    print(f"data: N = {args.n:,} rows, 2 groups (int64 ids), {args.tasks} tasks at "
          f"{data['task'].mean():.2%} density ({args.dtype} N x {args.tasks} for T and T̂), "
          f"generated in {time.perf_counter() - t0:.1f} s with default_rng(0)")

    # -- biasamp -------------------------------------------------------------
    def run_biasamp():  # the signs of the test rows (the per-pair loops' plug-in), not cross-fitted
        return biasamp.bias_amp_directional(
            data["attr"], data["task"], attr_pred=data["attr_pred"], task_pred=data["task_pred"], cross_fit=False
        )

    def run_default():  # no training set: the signs cross-fitted (the default)
        return biasamp.bias_amp_directional(
            data["attr"], data["task"], attr_pred=data["attr_pred"], task_pred=data["task_pred"]
        )

    run_biasamp()  # warm-up (imports, first-touch allocations)
    run_default()
    t_ours, times_ours, res = best_of(run_biasamp, args.repeats)
    t_cf, times_cf, _ = best_of(run_default, args.repeats)

    # -- floor -----------------------------------------------------------------
    a_f32 = one_hot(data["attr"], 2)
    t_f32 = data["task"].astype(np.float32)
    floor_product(a_f32, t_f32)
    t_floor, times_floor, _ = best_of(lambda: floor_product(a_f32, t_f32), args.repeats)

    # -- per-pair loops ----------------------------------------------------------
    loop_args = (data["attr"], data["task"], data["attr_pred"], data["task_pred"])
    t_loop, times_loop, loop = best_of(lambda: loop_directional(*loop_args), max(1, args.loop_repeats))
    t_tight, times_tight, tight = best_of(lambda: loop_counts(*loop_args), max(1, args.loop_repeats))

    print()
    print(f"{'':<40}{'best':>12}   all runs (ms)")
    for name, best, times in (
        ("biasamp, cross-fitted (the default)", t_cf, times_cf),
        ("biasamp, plug-in (cross_fit=False)", t_ours, times_ours),
        ("floor: float32 A.T @ T (N x 2, N x 80)", t_floor, times_floor),
        ("per-pair loop, research-code style", t_loop, times_loop),
        ("per-pair loop, counts only", t_tight, times_tight),
    ):
        print(f"{name:<40}{ms(best):>12}   " + " ".join(f"{x * 1e3:.0f}" for x in times))

    # -- the same three timings with BLAS limited to one thread ------------------
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        threadpool_limits = None
    one_thread = None
    if threadpool_limits is not None:
        with threadpool_limits(limits=1, user_api="blas"):
            t1_ours, _, _ = best_of(run_biasamp, args.repeats)
            t1_cf, _, _ = best_of(run_default, args.repeats)
            t1_floor, _, _ = best_of(lambda: floor_product(a_f32, t_f32), args.repeats)
        one_thread = (t1_cf, t1_ours, t1_floor)

    floor_ratio, cf_floor_ratio, cf_ratio = t_ours / t_floor, t_cf / t_floor, t_cf / t_ours
    loop_speedup = t_loop / t_ours
    ok_floor = floor_ratio <= TARGET_FLOOR_RATIO and cf_floor_ratio <= TARGET_FLOOR_RATIO
    ok_cf = cf_ratio <= TARGET_CROSSFIT_RATIO
    ok_loop = loop_speedup >= TARGET_LOOP_SPEEDUP
    print()
    print(f"targets: cross-fitted <= {TARGET_FLOOR_RATIO:g}x floor and <= {TARGET_CROSSFIT_RATIO:g}x plug-in; "
          f"plug-in <= {TARGET_FLOOR_RATIO:g}x floor")
    print(f"{'BLAS threads':<14}{'cross-fitted':>13}{'plug-in':>10}{'floor':>9}{'cf/plug-in':>12}{'cf/floor':>10}"
          f"{'plug-in/floor':>15}")
    rows = [("default", (t_cf, t_ours, t_floor))] + ([("1", one_thread)] if one_thread is not None else [])
    for label, (c, p, f) in rows:
        print(f"{label:<14}{c * 1e3:10.1f} ms{p * 1e3:7.1f} ms{f * 1e3:6.1f} ms{c / p:11.2f}x{c / f:9.2f}x"
              f"{p / f:14.2f}x   {verdict(c / p <= TARGET_CROSSFIT_RATIO)}, {verdict(c / f <= TARGET_FLOOR_RATIO)}, "
              f"{verdict(p / f <= TARGET_FLOOR_RATIO)}")
    print(f"loop / plug-in   = {loop_speedup:6.2f}x   target >= {TARGET_LOOP_SPEEDUP:g}x  {verdict(ok_loop)}   "
          f"(loop / cross-fitted = {t_loop / t_cf:.2f}x)")
    print(f"(tighter counts-only loop / plug-in = {t_tight / t_ours:.2f}x, for information)")

    # -- validation: loop == biasamp ---------------------------------------------
    print()
    k_a, k_t = 2, args.tasks
    checks = []
    for label, ref in (("loop", loop), ("counts loop", tight)):
        for name, direction, key in (("A->T", res.a_to_t, "a_to_t"), ("T->A", res.t_to_a, "t_to_a")):
            pair_diff = np.nanmax(np.abs(pair_matrix(direction, "delta", k_a, k_t) - ref["delta_" + key]))
            y_same = np.array_equal(pair_matrix(direction, "y", k_a, k_t), ref["y"])
            diff = abs(direction.value - ref[key])
            checks.append(diff <= AGREEMENT_TOL and pair_diff <= AGREEMENT_TOL and y_same)
            print(f"validation {name} vs {label:<11}: biasamp {direction.value:+.12f}  {label} {ref[key]:+.12f}  "
                  f"|diff| {diff:.1e}, max pair |ΔΔ| {pair_diff:.1e}, y identical: {y_same}")
    if not all(checks):  # not a bare assert: must also fail under python -O
        raise AssertionError(f"biasamp and the per-pair loops disagree by more than {AGREEMENT_TOL}")
    print(f"validation: biasamp and both per-pair loops agree to {AGREEMENT_TOL:g} (values and every pair)   PASS")

    # -- competitor ---------------------------------------------------------------
    if args.no_competitor:
        print("\nCompetitor: skipped (--no-competitor)")
    else:
        run_competitor(data, res, args, t_ours)

    if args.strict and not (ok_floor and ok_cf and ok_loop):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
