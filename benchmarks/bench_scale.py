"""Benchmark: BiasAmp→ on a Parquet dataset larger than one pass of memory (issue #8).

Data: a generated Parquet dataset, by default 50,000,000 rows x (a 2-group
protected attribute, 80 binary tasks at ~5% density, and a model's predictions
of both): 162 boolean/int8 columns in files of ``--rows-per-file`` rows,
cached under ``--data`` (generated once; ~1.3 GB for 50M rows).

Measured, each mode in its own process, with the peak resident memory of the
whole process tree (workers included) sampled every 50 ms:

* ``chunks``: ``pyarrow.parquet`` record batches, file by file -> numpy ->
  :class:`biasamp.accumulators.CooccurrenceAccumulator` ``.update`` (one
  process, bounded memory: one batch at a time);
* ``dask``: ``dask.dataframe.read_parquet`` -> :func:`biasamp.dask.bias_amp_directional`
  on a ``dask.distributed`` ``LocalCluster`` of worker processes (one thread
  each), once per count in ``--workers`` (default ``1,2``), with the peak
  resident memory of the largest single worker process as well;
* ``in-memory`` (where it fits, ``--in-memory-rows``): every file read into
  one numpy array, then :func:`biasamp.bias_amp_directional` once;

and, for the chunked mode, time against rows over ``--fractions`` of the
dataset, with the fitted exponent ``b`` of ``time ~ rows^b`` (1 = linear).
Both modes must agree with each other exactly (integer counts).

Targets (issue #8): peak memory under 2 GB; linear time in rows.

Run: ``python benchmarks/bench_scale.py [--rows N] [--data DIR] [--workers 1,2] [--skip-dask]
[--in-memory-rows N]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

N_TASKS = 80
GROUPS = [0, 1]
TASKS = [f"t{j}" for j in range(N_TASKS)]
PREDS = [f"p{j}" for j in range(N_TASKS)]


# --------------------------------------------------------------------------- #
# data
# --------------------------------------------------------------------------- #
def generate(path: Path, rows: int, rows_per_file: int) -> list[Path]:
    """Write (or reuse) ``ceil(rows / rows_per_file)`` Parquet files; returns their paths in order."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.mkdir(parents=True, exist_ok=True)
    n_files = -(-rows // rows_per_file)
    files = [path / f"part-{i:05d}.parquet" for i in range(n_files)]
    todo = [i for i, f in enumerate(files) if not f.exists()]
    if todo:
        print(f"generating {len(todo)} of {n_files} files of {rows_per_file:,} rows in {path} ...", flush=True)
    t0 = time.perf_counter()
    base = 0.03 + 0.04 * np.linspace(0, 1, N_TASKS, dtype=np.float32)  # task prevalences 3%..7%
    tilt = np.where(np.arange(N_TASKS) % 2 == 0, 1.5, 0.6).astype(np.float32)  # group-1 prevalence factor
    for i in todo:
        n = min(rows_per_file, rows - i * rows_per_file)
        rng = np.random.default_rng(i)
        group = rng.integers(0, 2, n, dtype=np.int8)
        prob = np.where(group[:, None] == 1, base * tilt, base).astype(np.float32)
        task = rng.random((n, N_TASKS), dtype=np.float32) < prob
        flip = rng.random((n, N_TASKS), dtype=np.float32)
        # the model amplifies: more false positives on tilted tasks for group 1
        fp_rate = np.where(group[:, None] == 1, 0.02 * tilt, 0.02).astype(np.float32)
        task_pred = np.where(task, flip >= 0.15, flip < fp_rate)
        group_pred = np.where(rng.random(n, dtype=np.float32) < 0.9, group, 1 - group).astype(np.int8)
        cols = {"group": group, "group_pred": group_pred}
        cols.update({name: task[:, j] for j, name in enumerate(TASKS)})
        cols.update({name: task_pred[:, j] for j, name in enumerate(PREDS)})
        tmp = files[i].with_suffix(".tmp")
        pq.write_table(pa.table(cols), tmp, row_group_size=min(n, 500_000))
        tmp.rename(files[i])
    if todo:
        print(f"  done in {time.perf_counter() - t0:.1f} s", flush=True)
    return files


# --------------------------------------------------------------------------- #
# the two modes (each run in a child process)
# --------------------------------------------------------------------------- #
def run_chunks(files: list[str], batch_rows: int) -> dict:
    import pyarrow.parquet as pq

    from biasamp.accumulators import CooccurrenceAccumulator

    t0 = time.perf_counter()
    acc = CooccurrenceAccumulator(GROUPS, TASKS)
    names = ["group", "group_pred", *TASKS, *PREDS]
    # one file at a time: pyarrow.dataset's scanner reads ahead across files, which on a fast
    # disk holds memory proportional to the dataset (measured: ~13 MB per 1M-row file)
    for path in files:
        for batch in pq.ParquetFile(path).iter_batches(batch_size=batch_rows, columns=names):
            cols = [batch.column(i).to_numpy(zero_copy_only=False) for i in range(batch.num_columns)]
            task = np.column_stack(cols[2: 2 + N_TASKS])
            task_pred = np.column_stack(cols[2 + N_TASKS:])
            acc.update(cols[0], task, attr_pred=cols[1], task_pred=task_pred)
    res = acc.compute()
    return {"seconds": time.perf_counter() - t0, "rows": int(acc.n),
            "a_to_t": res.a_to_t.value, "t_to_a": res.t_to_a.value}


def run_memory(files: list[str]) -> dict:
    import pyarrow.parquet as pq

    import biasamp

    t0 = time.perf_counter()
    names = ["group", "group_pred", *TASKS, *PREDS]
    tables = [pq.read_table(path, columns=names) for path in files]
    cols = {name: np.concatenate([t.column(name).to_numpy() for t in tables]) for name in names}
    del tables
    task = np.column_stack([cols.pop(name) for name in TASKS])
    task_pred = np.column_stack([cols.pop(name) for name in PREDS])
    res = biasamp.bias_amp_directional(cols["group"], task, attr_pred=cols["group_pred"], task_pred=task_pred,
                                       cross_fit=False)  # as the Dask layer reads them (it cross-fits next)
    return {"seconds": time.perf_counter() - t0, "rows": len(task), "a_to_t": res.a_to_t.value,
            "t_to_a": res.t_to_a.value}


def run_dask(files: list[str], workers: int) -> dict:
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    import biasamp.dask as bdask

    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                      host="127.0.0.1", memory_limit=0) as cluster, Client(cluster):
        t0 = time.perf_counter()
        ddf = dd.read_parquet(files, columns=["group", "group_pred", *TASKS, *PREDS], split_row_groups=True)
        res = bdask.bias_amp_directional(
            ddf["group"], ddf[TASKS], attr_pred=ddf["group_pred"],
            task_pred=ddf[PREDS].rename(columns=dict(zip(PREDS, TASKS))),
            attr_classes=GROUPS, task_classes=TASKS,
        )
        seconds = time.perf_counter() - t0
    rows = int(res.a_to_t.pairs["n_attr"].iloc[0] + res.a_to_t.pairs["n_attr"].iloc[N_TASKS])
    return {"seconds": seconds, "rows": rows, "a_to_t": res.a_to_t.value, "t_to_a": res.t_to_a.value}


# --------------------------------------------------------------------------- #
# orchestration: one child per measurement, peak RSS of its process tree
# --------------------------------------------------------------------------- #
def _tree_rss(proc) -> tuple[int, int]:
    """(resident memory of the process tree, of its largest descendant process) in bytes."""
    total, largest = 0, 0
    try:
        members = [proc, *proc.children(recursive=True)]
    except Exception:  # noqa: BLE001 - the child has exited
        return 0, 0
    for i, p in enumerate(members):
        try:
            rss = p.memory_info().rss
        except Exception:  # noqa: BLE001 - a child that just exited
            continue
        total += rss
        if i:
            largest = max(largest, rss)
    return total, largest


def measure(args: list[str]) -> dict:
    import psutil

    child = subprocess.Popen([sys.executable, __file__, *args], stdout=subprocess.PIPE, text=True)
    proc = psutil.Process(child.pid)
    peak, peak_worker = 0, 0
    done = threading.Event()

    def sample():
        nonlocal peak, peak_worker
        while not done.is_set():
            total, largest = _tree_rss(proc)
            peak, peak_worker = max(peak, total), max(peak_worker, largest)
            time.sleep(0.05)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    out, _ = child.communicate()
    done.set()
    thread.join()
    if child.returncode != 0:
        raise RuntimeError(f"benchmark child {args} failed with exit code {child.returncode}")
    result = json.loads(out.strip().splitlines()[-1])
    result["peak_mb"] = peak / 2**20
    result["worker_mb"] = peak_worker / 2**20
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50_000_000)
    parser.add_argument("--rows-per-file", type=int, default=1_000_000)
    parser.add_argument("--batch-rows", type=int, default=500_000)
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "biasamp_bench_scale")
    parser.add_argument("--workers", default="1,2", help="Dask worker processes, one run per count (e.g. 1,2)")
    parser.add_argument("--in-memory-rows", type=int, default=10_000_000,
                        help="also run the in-memory mode when the dataset has at most this many rows")
    parser.add_argument("--fractions", default="0.125,0.25,0.5,1")
    parser.add_argument("--skip-dask", action="store_true")
    parser.add_argument("--child", choices=["chunks", "dask", "memory"], help=argparse.SUPPRESS)
    parser.add_argument("--files", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()

    files = generate(args.data, args.rows, args.rows_per_file)
    if args.child:
        chosen = [str(f) for f in files[: args.files]]
        out = (run_chunks(chosen, args.batch_rows) if args.child == "chunks" else run_memory(chosen)
               if args.child == "memory" else run_dask(chosen, int(args.workers)))
        print(json.dumps(out))
        return

    common = ["--rows", str(args.rows), "--rows-per-file", str(args.rows_per_file), "--data", str(args.data),
              "--batch-rows", str(args.batch_rows)]
    print(f"dataset: {args.rows:,} rows x (2 groups, {N_TASKS} tasks, predictions) in {len(files)} Parquet files "
          f"({sum(f.stat().st_size for f in files) / 2**30:.2f} GiB); {os.cpu_count()} cores")
    load = os.getloadavg()
    print(f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    print(f"{'mode':<26}{'rows':>12}{'seconds':>10}{'rows/s':>14}{'peak MB':>10}{'worker MB':>10}  "
          "BiasAmp A->T / T->A")
    scaling = []
    results = {}
    for frac in sorted(float(f) for f in args.fractions.split(",")):
        k = max(1, round(frac * len(files)))
        r = measure(["--child", "chunks", "--files", str(k), *common])
        scaling.append((r["rows"], r["seconds"]))
        results["chunks"] = r
        print(f"{'streamed chunks':<26}{r['rows']:>12,}{r['seconds']:>10.1f}{r['rows'] / r['seconds']:>14,.0f}"
              f"{r['peak_mb']:>10.0f}{'':>10}  {r['a_to_t']:+.6f} / {r['t_to_a']:+.6f}", flush=True)
    if args.rows <= args.in_memory_rows:
        r = measure(["--child", "memory", "--files", str(len(files)), *common])
        results["memory"] = r
        print(f"{'in memory (one array)':<26}{r['rows']:>12,}{r['seconds']:>10.1f}{r['rows'] / r['seconds']:>14,.0f}"
              f"{r['peak_mb']:>10.0f}{'':>10}  {r['a_to_t']:+.6f} / {r['t_to_a']:+.6f}", flush=True)
    if not args.skip_dask:
        for workers in (int(w) for w in str(args.workers).split(",")):
            r = measure(["--child", "dask", "--files", str(len(files)), "--workers", str(workers), *common])
            results[f"dask{workers}"] = r
            print(f"{f'dask LocalCluster ({workers}x1)':<26}{r['rows']:>12,}{r['seconds']:>10.1f}"
                  f"{r['rows'] / r['seconds']:>14,.0f}{r['peak_mb']:>10.0f}{r['worker_mb']:>10.0f}  "
                  f"{r['a_to_t']:+.6f} / {r['t_to_a']:+.6f}", flush=True)
    others = [k for k in results if k != "chunks"]
    if others:
        same = all((results[k]["a_to_t"], results[k]["t_to_a"]) == (results["chunks"]["a_to_t"],
                                                                    results["chunks"]["t_to_a"]) for k in others)
        print(f"every mode's result identical to the streamed one: {same}")
    if len(scaling) >= 2:
        rows, secs = np.log([s[0] for s in scaling]), np.log([s[1] for s in scaling])
        slope = np.polyfit(rows, secs, 1)[0]
        print(f"time ~ rows^{slope:.3f} (fitted over {len(scaling)} sizes; 1 = linear)")
    peak = max(r["peak_mb"] for k, r in results.items() if k != "memory")  # the streamed modes
    print(f"peak memory of the streamed modes: {peak:.0f} MB ({'under' if peak < 2048 else 'OVER'} the 2 GB target)")


if __name__ == "__main__":
    main()
