r"""Intervals of LIC and DBAC over the captions (a bootstrap of the scored images), over the iterations, and both.

The iterations of :func:`~biasamp.lic` / :func:`~biasamp.dbac` vary the
split, the class-balancing subsample and the attacker's seed; their
t-interval covers that randomness only, with the captions held fixed. The
captions are a sample too: the caption bootstrap redraws the images (with
replacement, within the strata given) and re-averages every iteration's
per-image scores over the drawn images, the attackers held fixed; model and
human captions of an image are drawn together (paired), and so are the
iterations (an image drawn twice counts twice in every iteration that scored
it). The two sources are independent, so their variances add (law of total
variance): the combined interval is

.. math::

    \hat\theta \pm t_{(1+\ell)/2,\,\nu}\sqrt{se_{c}^2 + s_{it}^2/J},

with :math:`se_c` the standard deviation of the bootstrap replicates,
:math:`s_{it}` that of the :math:`J` iterations, and :math:`\nu` the
Welch-Satterthwaite degrees of freedom (:math:`J - 1` when the iterations
dominate, infinite when the captions do). Not covered: how the attacker
would change had it been trained on other captions (docs/captioning.md,
where the coverage is measured).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd

from ._deps import combined_standard_error, iterations_and_data_intervals

CI_OVER = ("both", "captions", "iterations")
_BLOCK = 1 << 22  # replicate x image cells per block of bootstrap counts (32 MiB of float64)
INTERVAL_COLUMNS = ("quantity", "estimate", "se_iterations", "se_captions", "iterations_low", "iterations_high",
                    "captions_low", "captions_high", "both_low", "both_high")


def check_ci_over(ci_over: Any) -> str:
    if not isinstance(ci_over, str) or ci_over not in CI_OVER:
        raise ValueError(f"ci_over must be one of {CI_OVER}, got {ci_over!r}")
    return ci_over


def image_counts(n_boot: int, strata: np.ndarray, seed: np.random.SeedSequence) -> Iterator[np.ndarray]:
    """Bootstrap counts of the images, in blocks of shape ``(b, n)`` (float64).

    A replicate draws, within each stratum of ``strata`` (e.g. the attribute
    class), as many images as the stratum holds, with replacement; its row
    holds how often each image was drawn. One numpy Generator seeded by
    ``seed`` draws every block, so the counts depend on ``seed`` and
    ``n_boot`` only (not on threads).
    """
    n = len(strata)
    rng = np.random.default_rng(seed)
    order = np.argsort(strata, kind="stable")
    _, inv, sizes = np.unique(strata[order], return_inverse=True, return_counts=True)
    inv = np.asarray(inv).reshape(-1)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    first, size = starts[inv], sizes[inv]  # per sorted position: its stratum's first position and size
    per_block = max(1, _BLOCK // max(n, 1))
    for lo in range(0, n_boot, per_block):
        b = min(per_block, n_boot - lo)
        pos = first + np.minimum((rng.random((b, n)) * size).astype(np.int64), size - 1)
        drawn = order[pos] + n * np.arange(b)[:, None]
        yield np.bincount(drawn.reshape(-1), minlength=b * n).reshape(b, n).astype(np.float64)


def scored_counts(rows: list[np.ndarray], strata: np.ndarray, n_boot: int, seed: np.random.SeedSequence
                  ) -> Iterator[list[np.ndarray]]:
    """Bootstrap counts of the scored images, in blocks: per block, the ``(b, len(r))`` counts of each ``r``.

    The images resampled are those scored in at least one iteration (the
    union of ``rows``; with a fixed split, the scored split): a replicate
    draws as many of them as there are, with replacement, within the strata
    ``strata[image]``; an image's count is the same in every iteration.
    """
    union = np.unique(np.concatenate(rows))
    where = [np.searchsorted(union, r) for r in rows]
    for counts in image_counts(n_boot, strata[union], seed):
        yield [counts[:, w] for w in where]


def mean_over_iterations(values: list[np.ndarray], ok: list[np.ndarray], times: list[int]) -> np.ndarray:
    """Per replicate, the mean over the iterations (each distinct one ``times`` times) where ``ok``; NaN if none."""
    num = sum(t * np.where(o, v, 0.0) for v, o, t in zip(values, ok, times))
    den = sum(t * o.astype(np.float64) for o, t in zip(ok, times))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(num / den, dtype=np.float64)


def standard_error(se_iterations: float, se_captions: float, n_iter: int, ci_over: str) -> tuple[float, float]:
    """``(se, df)`` of the interval ``ci_over``: the t interval over the iterations (``n_iter - 1`` degrees of
    freedom), the normal interval of the caption bootstrap (``df = inf``), or both, their variances added
    (Welch-Satterthwaite degrees of freedom). ``estimate ± t_{(1+level)/2, df} · se`` is the interval."""
    if ci_over == "iterations":
        return se_iterations, float(n_iter - 1)
    if ci_over == "captions":
        return se_captions, math.inf
    return combined_standard_error(se_captions, math.inf, se_iterations, n_iter)


def intervals(quantity: str, estimate: float, per_iteration: np.ndarray, replicates: np.ndarray, level: float,
              bounds: tuple[float, float] | None) -> dict:
    """One row of the intervals table: the three intervals of ``estimate`` (the mean of ``per_iteration``).

    ``replicates``: the bootstrap replicates of the estimate (NaN for a
    replicate that drew no scored image, left out); their standard deviation
    is the captions' standard error. Every interval is symmetric about the
    estimate (before clipping to ``bounds``), so it holds it; it has width 0
    when its standard error is 0.
    """
    kept = replicates[np.isfinite(replicates)]
    se_c = float(np.std(kept, ddof=1)) if len(kept) > 1 else 0.0
    iv = iterations_and_data_intervals(estimate, per_iteration, se_c, level, bounds)
    row = {"quantity": quantity, "estimate": float(estimate), "se_iterations": iv["se_iterations"],
           "se_captions": se_c}
    for kind, key in (("captions", "data"), ("both", "both"), ("iterations", "iterations")):
        row[f"{kind}_low"], row[f"{kind}_high"] = iv[key]
    return row


def table(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(INTERVAL_COLUMNS)).set_index("quantity")


def headline(frame: pd.DataFrame, quantity: str, ci_over: str) -> tuple[float, float]:
    """The interval ``ci_over`` of ``quantity`` from the intervals table."""
    low, high = frame.loc[quantity, [f"{ci_over}_low", f"{ci_over}_high"]].to_numpy(dtype=np.float64)
    return (float(low), float(high))
