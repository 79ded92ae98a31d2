"""Benchmark: the memory of a cross-fitted stream (no training set), which keeps the distinct rows it counted.

Without a training set the accumulators of BiasAmp→, BiasAmp_MALS and the
multi-attribute metrics split every row counted at the end, as the function
does (docs/definitions.md, "No training set"), so they keep the distinct rows
(a row set) rather than tables of fixed size. This script streams generated
rows through a BiasAmp→ accumulator in batches and prints, every tenth of the
way, the rows counted, the distinct rows held, the row set's bytes and the
process's peak resident memory:

* the audit's shape (default): one attribute of 3 classes, one binary task,
  hard predictions of both: at most 3² x 2² = 36 distinct rows, whatever the
  number of rows (``--rows 50000000`` streams 50M rows);
* ``--tasks K`` multi-label tasks (wide rows): the distinct rows grow with the
  rows until the label space is covered (the bound the docs state).

Run: ``python benchmarks/bench_stream_memory.py [--rows 50000000] [--batch 100000] [--tasks 1]``.
"""

from __future__ import annotations

import argparse
import resource
import time
import warnings

import numpy as np

from biasamp.accumulators import CooccurrenceAccumulator


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--batch", type=int, default=100_000)
    ap.add_argument("--tasks", type=int, default=1, help="1: a binary task (a column); more: multi-label")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    acc = CooccurrenceAccumulator(3, [0, 1] if args.tasks == 1 else args.tasks)
    start, seen, report = time.perf_counter(), 0, max(1, args.rows // 10)
    print(f"{'rows':>12} {'distinct':>9} {'row set':>10} {'peak RSS':>10} {'seconds':>8}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        while seen < args.rows:
            n = min(args.batch, args.rows - seen)
            attr = rng.integers(0, 3, n)
            shape = (n,) if args.tasks == 1 else (n, args.tasks)
            task = (rng.random(shape) < (0.2 + 0.1 * (attr if args.tasks == 1 else attr[:, None]))).astype(np.int8)
            task_pred = np.where(rng.random(shape) < 0.1, 1 - task, task)
            attr_pred = np.where(rng.random(n) < 0.1, rng.integers(0, 3, n), attr)
            acc.update(attr, task, attr_pred=attr_pred, task_pred=task_pred)
            seen += n
            if seen % report < n or seen == args.rows:
                rs = acc.state.rowset
                rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
                print(f"{seen:>12,} {rs.n_distinct:>9,} {rs.nbytes / 1024:>8.1f}KB {rss:>8.0f}MB "
                      f"{time.perf_counter() - start:>8.1f}")
        t0 = time.perf_counter()
        res = acc.compute()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"compute: {time.perf_counter() - t0:.3f} s, peak RSS {rss:.0f}MB (the split deals every row, as the "
          f"function does); A->T {res.a_to_t.value:+.5f}, T->A {res.t_to_a.value:+.5f}")


if __name__ == "__main__":
    main()
