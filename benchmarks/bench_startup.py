"""Benchmark: start-up cost of ``import biasamp`` and of ``biasamp --help``.

Each measurement is a fresh Python process (so nothing is cached in
``sys.modules``), timed from the parent with ``time.perf_counter`` around
``subprocess.run``; each is repeated ``--repeat`` times, interleaved, and the
median is kept. Two ratios are printed (the goals of the start-up work):

* ``import biasamp`` *added* cost over ``import numpy, pandas`` (which biasamp
  cannot avoid), divided by the cost of ``import numpy, pandas`` over a bare
  interpreter: goal <= 0.3;
* ``biasamp --help`` (``python -m biasamp --help``: the same code as the
  console script without the launcher) divided by ``python -c "import pandas"``:
  goal <= 1.5.

Run: ``python benchmarks/bench_startup.py [--repeat R]``. It measures the
biasamp that ``python`` imports (set ``PYTHONPATH=src`` for a checkout).
``python -X importtime -c "import biasamp"`` shows where the time goes.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "bare": [sys.executable, "-c", "pass"],
    "numpy+pandas": [sys.executable, "-c", "import numpy, pandas"],
    "numpy+pandas+biasamp": [sys.executable, "-c", "import numpy, pandas, biasamp"],
    "pandas": [sys.executable, "-c", "import pandas"],
    "biasamp --help": [sys.executable, "-m", "biasamp", "--help"],
}


def run_once(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    for cmd in COMMANDS.values():  # warm the file-system cache; not timed
        run_once(cmd)
    times: dict[str, list[float]] = {k: [] for k in COMMANDS}
    for _ in range(args.repeat):
        for name, cmd in COMMANDS.items():
            times[name].append(run_once(cmd))
    med = {k: statistics.median(v) for k, v in times.items()}
    for name, t in med.items():
        print(f"{name:>22}: {t * 1000:7.0f} ms (median of {args.repeat})")
    np_pd = med["numpy+pandas"] - med["bare"]
    added = med["numpy+pandas+biasamp"] - med["numpy+pandas"]
    r_import = added / np_pd
    r_help = med["biasamp --help"] / med["pandas"]
    print(f"import biasamp adds {added * 1000:.0f} ms over numpy+pandas ({np_pd * 1000:.0f} ms): "
          f"ratio {r_import:.2f} (goal <= 0.30) {'met' if r_import <= 0.3 else 'NOT met'}")
    print(f"biasamp --help / import pandas: ratio {r_help:.2f} (goal <= 1.50) "
          f"{'met' if r_help <= 1.5 else 'NOT met'}")


if __name__ == "__main__":
    main()
