"""Benchmark: the whole streamed audit of a Parquet dataset, on 1 and 2 worker processes (issue 24 item 4).

Data: a generated Parquet dataset, by default 50,000,000 rows x (a 2-group
protected attribute and its prediction, 10 binary tasks at prevalences
10%..40% and a model's predictions of them): the rows of the 1M x 10 audit
of ``bench_audit.py`` / case 6 of ``bench_bootstrap.py`` (the same
generator, file by file), 22 int8 columns in files of ``--rows-per-file``
rows, row groups of 250,000, cached under ``--data`` (generated once; about
3 MB per million rows on disk, 22 MB per million rows in memory). 10 tasks because that is the audit issue 24
measures (1M rows x 10 tasks); with 80 tasks the multi-attribute section's
combinations, not the rows, would dominate. No training set.

Measured, each mode in its own process, with the resident memory of every
process of its tree (workers included) sampled every 50 ms:

* ``stream`` (``--workers``, default ``1,2``): :func:`biasamp.report._stream.stream_audit`
  (``biasamp audit --stream --jobs N``) with ``n_jobs=N``: the classes pass,
  the multi-attribute pre-pass and the counting pass split into N ranges,
  counted in N loky worker processes (N=1: in the process itself), then
  the report (1,000 bootstrap replicates per count-based section, drawn
  from the hashed group tables the accumulators keep; DPA and LA
  on a 200,000-row sample, ``--dpa-rows``);
* ``dask`` (``--dask-workers``, default ``2``): the same call inside
  ``joblib.parallel_config(backend="dask")`` with a ``dask.distributed``
  ``LocalCluster`` of N worker processes of one thread (``n_jobs=-1``: every
  worker; with one worker the audit runs in the calling process, so 1 is
  the ``stream`` mode), the cluster's start-up not timed. distributed
  starts its workers with ``MALLOC_TRIM_THRESHOLD_=65536``, which turns
  off glibc's adaptive ``mmap`` threshold: every large temporary is then a
  fresh ``mmap`` (page faults), measured at +40-50% CPU for the same counting
  (with the per-row Poisson bootstrap of earlier versions). The benchmark unsets it
  (``dask.config`` ``distributed.nanny.pre-spawn-environ``); ``--dask-trim``
  keeps it;
* ``memory`` (when the dataset has at most ``--in-memory-rows`` rows,
  default 2,000,000): every file read with pyarrow into pandas, then
  :func:`biasamp.audit` on all the rows (multinomial bootstrap; DPA and LA on
  every row), as ``biasamp audit --no-stream`` runs it.

Printed per mode: wall seconds (imports and cluster start-up excluded),
rows/s, the seconds of the report step (DPA/LA on the sample, the intervals:
what workers do not share), the CPU seconds of all processes, of the main
process and of the busiest worker (imports included; on a machine shared
with other jobs these say how evenly the work was split when the wall time
cannot), the peak memory of all processes together, of the main process and
of the largest worker process. Checked in the script:
every streamed mode writes the same report JSON, byte for byte (hard
labels: the counts are exact integers); the in-memory audit has the same
values of the count-based metrics (its intervals are multinomial, and DPA/LA
ran on every row, not the sample).

Run: ``python benchmarks/bench_scale.py [--rows N] [--data DIR] [--workers 1,2] [--dask-workers 2]
[--in-memory-rows N] [--n-boot B] [--skip-dask] [--dask-trim]``; ``--rows 50000000`` is the issue's size (see
docs/scale.md for the expected time).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

N_TASKS = 10
TASKS = [f"task_{j}" for j in range(N_TASKS)]
PREDS = [f"task_{j}_pred" for j in range(N_TASKS)]
COUNTED = ("directional", "mals", "multi", "fairness")


# --------------------------------------------------------------------------- #
# data
# --------------------------------------------------------------------------- #
def _rows(n: int, seed: int):
    """``bench_bootstrap._wide(n, 10, seed)``: prevalences 10%..40% tilted by group; 15% misses, 2-3% false
    positives."""
    rng = np.random.default_rng(seed)
    base = 0.1 + 0.3 * np.linspace(0, 1, N_TASKS)
    tilt = np.where(np.arange(N_TASKS) % 2 == 0, 1.5, 0.6)
    attr = rng.integers(0, 2, n)
    task = rng.random((n, N_TASKS)) < np.where(attr[:, None] == 1, base * tilt, base)
    flip = rng.random((n, N_TASKS))
    task_pred = np.where(task, flip >= 0.15, flip < np.where(attr[:, None] == 1, 0.02 * tilt, 0.02))
    attr_pred = np.where(rng.random(n) < 0.9, attr, 1 - attr)
    return attr.astype(np.int8), task.astype(np.int8), attr_pred.astype(np.int8), task_pred.astype(np.int8)


def generate(path: Path, rows: int, rows_per_file: int) -> list[Path]:
    """Write (or reuse) ``ceil(rows / rows_per_file)`` Parquet files; returns their paths in order."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.mkdir(parents=True, exist_ok=True)
    n_files = -(-rows // rows_per_file)
    files = [path / f"part-{i:05d}.parquet" for i in range(n_files)]
    sizes = [min(rows_per_file, rows - i * rows_per_file) for i in range(n_files)]
    stale = [f for f, n in zip(files, sizes) if f.exists() and pq.read_metadata(f).num_rows != n]
    for f in stale:  # a last file of another --rows
        f.unlink()
    todo = [i for i, f in enumerate(files) if not f.exists()]
    if todo:
        print(f"generating {len(todo)} of {n_files} files of up to {rows_per_file:,} rows in {path} ...", flush=True)
    t0 = time.perf_counter()
    for i in todo:
        attr, task, attr_pred, task_pred = _rows(sizes[i], seed=1000 + i)
        cols = {"attr": attr, "attr_pred": attr_pred}
        cols.update({name: task[:, j] for j, name in enumerate(TASKS)})
        cols.update({name: task_pred[:, j] for j, name in enumerate(PREDS)})
        tmp = files[i].with_suffix(".tmp")
        pq.write_table(pa.table(cols), tmp, row_group_size=250_000)
        tmp.rename(files[i])
    if todo:
        print(f"  done in {time.perf_counter() - t0:.1f} s", flush=True)
    return files


# --------------------------------------------------------------------------- #
# the modes (each run in a child process)
# --------------------------------------------------------------------------- #
def _config(args) -> dict:
    return {"n_boot": args.n_boot, "dpa_rows": args.dpa_rows, "batch_size": args.batch_size, "progress": False,
            "names": {"attr": "attr", "task": "task"}}


def _timed_report(stream_mod) -> list:
    """Seconds spent building the report (after the passes over the data), recorded in the returned list."""
    spent: list = []
    build = stream_mod._build_report

    def timed(*a, **k):
        t0 = time.perf_counter()
        out = build(*a, **k)
        spent.append(time.perf_counter() - t0)
        return out

    stream_mod._build_report = timed
    return spent


def run_stream(args, workers: int, dask: bool) -> dict:
    import biasamp.report._stream as stream_mod
    from biasamp.report._stream import ParquetDataset, StreamColumns

    columns = StreamColumns("attr", tuple(TASKS), tuple(TASKS), "attr_pred", tuple(PREDS))
    report_seconds = _timed_report(stream_mod)
    data = ParquetDataset.open(args.data)

    def audit(n_jobs):
        return stream_mod.stream_audit(data, columns, n_jobs=n_jobs, **_config(args))

    if not dask:
        t0 = time.perf_counter()
        rep = audit(workers)
        seconds = time.perf_counter() - t0
    else:
        import warnings

        import dask
        from distributed import Client, LocalCluster
        from joblib import parallel_config

        if not args.dask_trim:  # distributed's MALLOC_TRIM_THRESHOLD_=65536 costs the counting 40% more CPU
            dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                                   host="127.0.0.1", memory_limit=0)
        with cluster, Client(cluster), parallel_config(backend="dask"):
            t0 = time.perf_counter()
            rep = audit(-1)
            seconds = time.perf_counter() - t0
    Path(args.out).write_text(rep.to_json(), encoding="utf-8")
    return {"seconds": seconds, "report_seconds": sum(report_seconds), "rows": rep.inputs["n_test"]}


def run_memory(args) -> dict:
    import pandas as pd
    import pyarrow.parquet as pq

    import biasamp

    t0 = time.perf_counter()
    frame = pd.concat([pq.read_table(f).to_pandas() for f in sorted(Path(args.data).glob("*.parquet"))],
                      ignore_index=True)
    read = time.perf_counter() - t0
    kw = {k: v for k, v in _config(args).items() if k not in ("dpa_rows", "batch_size")}
    rep = biasamp.audit(frame["attr"], frame[TASKS], attr_pred=frame["attr_pred"].rename("attr"),
                        task_pred=frame[PREDS].set_axis(TASKS, axis=1), **kw)
    seconds = time.perf_counter() - t0
    Path(args.out).write_text(rep.to_json(), encoding="utf-8")
    return {"seconds": seconds, "report_seconds": seconds - read, "rows": len(frame)}


# --------------------------------------------------------------------------- #
# orchestration: one child per measurement, peak RSS of every process of its tree
# --------------------------------------------------------------------------- #
def measure(args: list[str]) -> dict:
    import psutil

    child = subprocess.Popen([sys.executable, __file__, *args], stdout=subprocess.PIPE, text=True)
    proc = psutil.Process(child.pid)
    peaks: dict[int, int] = {}
    cpu: dict[int, float] = {}  # CPU seconds (user + system) of every process, last seen
    total_peak = 0
    done = threading.Event()

    def sample():
        nonlocal total_peak
        while not done.is_set():
            try:
                members = [proc, *proc.children(recursive=True)]
            except psutil.Error:  # the child has exited
                members = []
            total = 0
            for p in members:
                try:
                    rss = p.memory_info().rss
                    times = p.cpu_times()
                except psutil.Error:  # a process that just exited
                    continue
                total += rss
                peaks[p.pid] = max(peaks.get(p.pid, 0), rss)
                cpu[p.pid] = max(cpu.get(p.pid, 0.0), times.user + times.system)
            total_peak = max(total_peak, total)
            time.sleep(0.05)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    out, _ = child.communicate()
    done.set()
    thread.join()
    if child.returncode != 0:
        raise RuntimeError(f"benchmark child {args} failed with exit code {child.returncode}")
    result = json.loads(out.strip().splitlines()[-1])
    main_mb = peaks.pop(child.pid, 0) / 2**20
    result.update(peak_mb=total_peak / 2**20, main_mb=main_mb,
                  worker_mb=max(peaks.values(), default=0) / 2**20 if peaks else main_mb,
                  cpu_s=sum(cpu.values()), main_cpu_s=cpu.pop(child.pid, 0.0))
    result["worker_cpu_s"] = max(cpu.values(), default=0.0) if cpu else result["main_cpu_s"]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50_000_000)
    parser.add_argument("--rows-per-file", type=int, default=1_000_000)
    parser.add_argument("--data", type=Path, default=None,
                        help="dataset folder [default: $TMPDIR/biasamp_bench_scale_10tasks_<rows>]")
    parser.add_argument("--workers", default="1,2", help="loky worker processes, one run per count ('' for none)")
    parser.add_argument("--dask-workers", default="2",
                        help="LocalCluster worker processes, one run per count (1 worker: the audit runs in-process)")
    parser.add_argument("--skip-dask", action="store_true")
    parser.add_argument("--dask-trim", action="store_true",
                        help="keep distributed's MALLOC_TRIM_THRESHOLD_=65536 in the Dask workers (default: unset)")
    parser.add_argument("--in-memory-rows", type=int, default=2_000_000,
                        help="also run the in-memory audit when the dataset has at most this many rows")
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--dpa-rows", type=int, default=200_000)
    parser.add_argument("--batch-size", type=int, default=65_536)
    parser.add_argument("--child", choices=["stream", "dask", "memory"], help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.data is None:
        args.data = Path(os.environ.get("TMPDIR", "/tmp")) / f"biasamp_bench_scale_{N_TASKS}tasks_{args.rows}"

    if args.child:
        out = run_memory(args) if args.child == "memory" else run_stream(args, args.n, args.child == "dask")
        print(json.dumps(out))
        return

    files = generate(args.data, args.rows, args.rows_per_file)
    common = ["--data", str(args.data), "--n-boot", str(args.n_boot), "--dpa-rows", str(args.dpa_rows),
              "--batch-size", str(args.batch_size), *(["--dask-trim"] if args.dask_trim else [])]
    runs = [("stream", int(w)) for w in args.workers.split(",") if w.strip()]
    if not args.skip_dask:
        runs += [("dask", int(w)) for w in args.dask_workers.split(",") if w.strip()]
    if args.rows <= args.in_memory_rows:
        runs.append(("memory", 1))
    load = os.getloadavg()
    print(f"dataset: {args.rows:,} rows x (2 groups, {N_TASKS} tasks, predictions) in {len(files)} Parquet files "
          f"({sum(f.stat().st_size for f in files) / 2**20:.0f} MiB); n_boot {args.n_boot}, DPA/LA sample "
          f"{args.dpa_rows:,} rows; {os.cpu_count()} cores, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}",
          flush=True)
    print(f"{'mode':<34}{'rows':>12}{'seconds':>9}{'rows/s':>10}{'report s':>9}{'CPU s':>8}{'main CPU':>9}"
          f"{'worker CPU':>11}{'all MB':>8}{'main MB':>8}{'worker MB':>10}", flush=True)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for mode, n in runs:
            out = Path(tmp) / f"{mode}{n}.json"
            r = measure(["--child", mode, "--n", str(n), "--out", str(out), *common])
            r["json"] = out.read_text(encoding="utf-8")
            results[mode, n] = r
            label = {"stream": f"streamed, {n} worker processes" if n > 1 else "streamed, 1 process",
                     "dask": f"streamed, dask LocalCluster {n}x1", "memory": "in memory (audit)"}[mode]
            print(f"{label:<34}{r['rows']:>12,}{r['seconds']:>9.1f}{r['rows'] / r['seconds']:>10,.0f}"
                  f"{r['report_seconds']:>9.1f}{r['cpu_s']:>8.0f}{r['main_cpu_s']:>9.0f}{r['worker_cpu_s']:>11.0f}"
                  f"{r['peak_mb']:>8.0f}{r['main_mb']:>8.0f}{r['worker_mb']:>10.0f}", flush=True)
    load = os.getloadavg()
    print(f"load average after: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    streamed = [k for k in results if k[0] != "memory"]
    if len(streamed) >= 2:
        same = all(results[k]["json"] == results[streamed[0]]["json"] for k in streamed)
        print(f"every streamed mode wrote the same report (JSON byte for byte): {same}")
        if not same:
            raise SystemExit(1)
    if ("memory", 1) in results and streamed:
        same = _compare(results["memory", 1]["json"], results[streamed[0]]["json"])
        print(f"in-memory audit, count-based values: {same}"
              + ("" if same.startswith("same") else " (UNEXPECTED: the stream splits every row at once as the "
                 "in-memory audit does, docs/definitions.md, 'One dataset, one number')"))
    serial = results.get(("stream", 1))
    for k in streamed:
        if serial is not None and k != ("stream", 1):
            print(f"speed-up of {k[0]} x{k[1]} over one process: {serial['seconds'] / results[k]['seconds']:.2f}")


def _compare(memory_json: str, stream_json: str) -> str:
    """Largest difference between the count-based summary values of two reports."""
    import pandas as pd

    from biasamp.report import Report

    a, b = (Report.from_json(j).table for j in (memory_json, stream_json))
    keys = ["section", "metric", "direction"]
    a, b = (t[t["section"].isin(COUNTED)].set_index(keys)["value"].astype(float) for t in (a, b))
    joined = pd.concat([a, b], axis=1, keys=["memory", "stream"]).dropna()
    if len(joined) != len(a):
        return f"DIFFERENT rows ({len(a)} in memory, {len(b)} streamed)"
    diff = float((joined["memory"] - joined["stream"]).abs().max())
    return f"{'same' if diff <= 1e-12 else 'DIFFERENT'} (largest difference {diff:.1e} over {len(joined)} values)"


if __name__ == "__main__":
    main()
