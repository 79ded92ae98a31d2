"""Benchmark: the cost of many small batches to a cross-fitted stream, as a ratio to the plug-in stream.

Without a training set a BiasAmp→ accumulator keeps the distinct rows it
counted (a row set) to split every row at the end, as the function does. Wide
multi-label rows are nearly all distinct, so each batch adds its rows to the
row set. The row set merges its batches like a binary counter's carries
(levels, each at most half the one before), so a stream of B batches sorts
each row O(log B) times; merging every batch into the whole would sort the
earlier rows again at every batch, O(B) times, which made small batches
quadratic (200,000 rows of 80 tasks in batches of 500: 10.7 s, against 0.3 s
in one batch).

The script streams N rows of 80 tasks at 5% (the shape of
``bench_cooccurrence.py``) in batches of several sizes, with the default
(cross-fitted) and with ``cross_fit=False`` (the plug-in: fixed-size tables,
no row set) in the same run, and prints both times and their ratio, update
and ``compute()`` together.

Target: many batches cost at most a constant factor more than one: the
cross-fitted / plug-in ratio at every batch size <= 2.5x that ratio in one
batch (the function's own cost of the split), and one value whatever the
batching (``--strict``: exit 1 when missed). Merging every batch into the
whole missed it by 16x at batches of 500 (ratio 39.7x against 2.5x); the
levels are at 1.7-2.1x.

Run: ``python benchmarks/bench_stream_batches.py [--n 200000] [--strict]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))

from bench_cooccurrence import make_data

from biasamp.accumulators import accumulator_for

TARGET = 2.5  # the ratio at any batch size over the ratio in one batch


def stream(d: dict, batch: int, cross_fit: bool | None) -> tuple[float, float]:
    """Seconds to stream the rows in batches and compute, and the A→T value."""
    n = len(d["attr"])
    start = time.perf_counter()
    acc = accumulator_for("directional")([0, 1], list(range(d["task"].shape[1])), cross_fit=cross_fit)
    for i in range(0, n, batch):
        acc.update(d["attr"][i:i + batch], d["task"][i:i + batch], task_pred=d["task_pred"][i:i + batch])
    value = acc.compute().a_to_t.value
    return time.perf_counter() - start, value


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--batches", type=int, nargs="+", default=[None, 20_000, 2_000, 500])
    ap.add_argument("--strict", action="store_true")
    args = ap.parse_args()
    d = make_data(args.n, 80, 0.05, bool)
    print(f"N = {args.n:,} rows, 80 tasks at 5%; load average {os.getloadavg()[0]:.2f}")
    print(f"{'batch':>9}  {'cross-fitted':>12}  {'plug-in':>9}  {'ratio':>6}  {'/ one':>6}  A->T (cross-fitted)")
    ok, first, one = True, None, None
    for batch in args.batches:
        size = args.n if batch is None else batch
        cf, value = min(stream(d, size, None) for _ in range(2))
        plug, _ = min(stream(d, size, False) for _ in range(2))
        ratio = cf / plug
        first, one = (value, ratio) if first is None else (first, one)
        same = "same" if value == first else f"DIFFERENT ({value - first:+.2e})"
        ok &= ratio <= TARGET * one and value == first
        print(f"{size:>9,}  {cf:>10.2f} s  {plug:>7.2f} s  {ratio:>5.2f}x  {ratio / one:>5.2f}x  "
              f"{value:+.12f} ({same})")
    print(f"target: the ratio at every batch size <= {TARGET:g}x the ratio in one batch, one value whatever the "
          "batching: " + ("PASS" if ok else "FAIL"))
    return 1 if args.strict and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
