"""Benchmark: the default ``biasamp audit`` of a 1,000,000-row CSV, end to end, against reading that CSV.

Data: 1,000,000 rows x (a 2-group attribute and its prediction, 10 binary
tasks at prevalences 10%..40% and a model's predictions of them), the same
generator as case 6 of ``bench_bootstrap.py``, written once as a CSV
(``attr, attr_pred, task_0..task_9, task_0_pred..task_9_pred``; about 45 MB)
under ``--data``. No training set (the signs come from the test labels).

Measured in the same run, ``--repeats`` times each (median):

* ``pandas.read_csv`` of the CSV (the baseline; C engine), and
  ``pyarrow.csv.read_csv(...).to_pandas()`` where pyarrow is installed;
* ``biasamp audit data.csv --json out.json -q`` in a fresh Python process:
  start-up, CSV read, every default section (1,000 bootstrap replicates for
  the count-based metrics, DPA and LA), JSON written;
* once, in this process, where the time goes: the CSV read and each report
  section's ``compute``.

With ``--baseline-src DIR`` (the ``src`` folder of another checkout, e.g.
``git archive <commit> src | tar -x -C /tmp/base``) every repeat also times
the same command on that code, alternately, for a before/after in one run.

Target (issue 24): the CLI's wall time <= 100x ``pandas.read_csv``.

Run: ``python benchmarks/bench_audit.py [--rows N] [--repeats R] [--data DIR] [--baseline-src DIR]``
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def write_csv(path: Path, rows: int) -> Path:
    import pandas as pd

    sys.path.insert(0, str(HERE))
    from bench_bootstrap import _wide

    if path.exists():
        return path
    attr, task, attr_pred, task_pred = _wide(rows, 10)
    cols = {"attr": attr, "attr_pred": attr_pred}
    cols.update({f"task_{j}": task[:, j] for j in range(10)})
    cols.update({f"task_{j}_pred": task_pred[:, j] for j in range(10)})
    tmp = path.with_suffix(".tmp")
    pd.DataFrame(cols).to_csv(tmp, index=False)
    tmp.rename(path)
    return path


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def sections_profile(path: Path) -> list[tuple[str, float]]:
    """Seconds of the CSV read and of every section's compute, one in-process CLI run."""
    import click

    from biasamp.cli import _commands
    from biasamp.cli._commands import main as cli
    from biasamp.report._registry import _BUILDERS

    spent: list[tuple[str, float]] = []
    read = _commands.read_table

    def read_table(p):
        t, out = timed(lambda: read(p))
        spent.append(("read the CSV (CLI reader)", t))
        return out

    saved = dict(_BUILDERS)
    for key, builder in saved.items():

        def wrapped(inputs, options, _compute=builder.compute, _key=key):
            t, out = timed(lambda: _compute(inputs, options))
            spent.append((f"section {_key}", t))
            return out

        _BUILDERS[key] = dataclasses.replace(builder, compute=wrapped)
    _commands.read_table = read_table
    try:
        with tempfile.TemporaryDirectory() as tmp:
            t, _ = timed(lambda: cli.main(["audit", str(path), "--json", str(Path(tmp) / "r.json"), "-q"],
                                          standalone_mode=False))
    except click.ClickException as exc:
        raise SystemExit(f"audit failed: {exc.message}") from None
    finally:
        _commands.read_table = read
        _BUILDERS.update(saved)
    spent.append(("rest (columns, checks, report, JSON)", t - sum(s for _, s in spent)))
    spent.append(("whole audit (in process)", t))
    return spent


def main() -> None:
    import pandas as pd

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "biasamp_bench_audit")
    parser.add_argument("--skip-profile", action="store_true", help="no per-section profile")
    parser.add_argument("--baseline-src", type=Path, default=None,
                        help="also time the CLI on this src folder (before/after in the same run)")
    args = parser.parse_args()
    args.data.mkdir(parents=True, exist_ok=True)
    path = write_csv(args.data / f"audit_{args.rows}.csv", args.rows)
    load = os.getloadavg()
    print(f"{args.rows:,} rows x 10 tasks, {path.stat().st_size / 2**20:.0f} MB CSV; {os.cpu_count()} cores, "
          f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}", flush=True)

    reads, arrow, audits = [], [], []
    try:
        import pyarrow.csv as pacsv
    except ImportError:
        pacsv = None
    def cli_seconds(src: Path, out: Path) -> float:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(src), os.environ.get("PYTHONPATH")])))
        cmd = [sys.executable, "-m", "biasamp.cli", "audit", str(path), "--json", str(out), "-q"]
        t, proc = timed(lambda: subprocess.run(cmd, env=env, capture_output=True, text=True))
        if proc.returncode != 0:
            raise SystemExit(f"biasamp audit ({src}) failed ({proc.returncode}): {proc.stderr[-2000:]}")
        return t

    before: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeats):
            reads.append(timed(lambda: pd.read_csv(path))[0])
            if pacsv is not None:
                arrow.append(timed(lambda: pacsv.read_csv(path).to_pandas())[0])
            if args.baseline_src is not None:
                before.append(cli_seconds(args.baseline_src, Path(tmp) / "before.json"))
            audits.append(cli_seconds(HERE.parent / "src", Path(tmp) / "r.json"))
            print(f"  read_csv {reads[-1]:.2f} s" + (f", pyarrow.csv {arrow[-1]:.2f} s" if arrow else "")
                  + f", biasamp audit (CLI, end to end) {audits[-1]:.1f} s"
                  + (f" (baseline code: {before[-1]:.1f} s)" if before else ""), flush=True)
    read, audit = float(np.median(reads)), float(np.median(audits))
    ratio = audit / read
    print(f"median: pandas.read_csv {read:.2f} s" + (f", pyarrow.csv {np.median(arrow):.2f} s" if arrow else "")
          + f"; audit {audit:.1f} s = {ratio:.0f}x pandas.read_csv  "
          f"{'MET' if ratio <= 100 else 'MISSED'} (target <= 100x)")
    if before:
        print(f"baseline code ({args.baseline_src}): audit {np.median(before):.1f} s = "
              f"{np.median(before) / read:.0f}x pandas.read_csv; this code is {np.median(before) / audit:.2f}x faster")
    if not args.skip_profile:
        print("where the time goes (one in-process run of the same command):")
        for name, seconds in sections_profile(path):
            print(f"  {name:<42}{seconds:7.2f} s")
    load = os.getloadavg()
    print(f"load average after: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")


if __name__ == "__main__":
    main()
