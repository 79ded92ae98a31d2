"""Statistics across runs and samples (:ref:`def-statistics`).

* :func:`confidence_interval`: t, normal or percentile-bootstrap interval of a
  mean over runs;
* :func:`bootstrap`: confidence intervals of any count-based metric of
  biasamp (the group fairness metrics and the co-occurrence metrics) by
  multinomial resampling of the contingency table of distinct rows ("cells"),
  never of the raw rows, so 1,000 replicates cost milliseconds;
* :func:`compare_runs`: one-sided Mann-Whitney U, Cohen's d with its label and
  Levene's test on mean-normalised values (Qian et al. 2021, App. B.3);
* :func:`run_summary`: mean, STDEV, MaxDiff and CI of every metric over many
  runs, overall and per class.

References
----------
.. [1] S. Qian et al. "Are My Deep Learning Systems Fair? An Empirical Study of
   Fixed-Seed Training". NeurIPS 2021, Appendix B.3 and D.1 (Table 4).
.. [2] A. Wang, O. Russakovsky. "Directional Bias Amplification". ICML 2021,
   §5.2 (confidence intervals over runs).
.. [3] S. S. Sawilowsky. "New effect size rules of thumb". Journal of Modern
   Applied Statistical Methods 8(2), 2009.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse, stats as _st

from ._results import ResultMixin, fmt
from .counts import CooccurrenceCounts
from .exceptions import UndefinedPairWarning
from ._resample import check_random_state, generator
from .labels import LabelMatrix, _from_tensor, to_numpy

__all__ = [
    "BootstrapResult",
    "CompareRunsResult",
    "RunSummary",
    "bootstrap",
    "cohens_d_label",
    "compare_runs",
    "confidence_interval",
    "run_summary",
]

_CI_METHODS = ("t", "normal", "bootstrap")


# --------------------------------------------------------------------------- #
# validation helpers
# --------------------------------------------------------------------------- #
def _numbers(arr: np.ndarray, name: str) -> np.ndarray:
    """An array of numbers as float64: object arrays of numbers are accepted, missing entries named."""
    if arr.dtype == object:
        missing = pd.isna(arr)
        if missing.any():
            rows = np.flatnonzero(missing.reshape(len(arr), -1).any(axis=1)) if arr.ndim else np.array([0])
            raise ValueError(f"{name} contains NaN/None/missing values (rows {', '.join(map(str, rows[:5]))})")
        if not all(isinstance(v, numbers.Real) for v in arr.flat):
            raise TypeError(f"{name} must hold numbers (it holds other objects)")
    elif arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold numbers, got dtype {arr.dtype}")
    return arr.astype(np.float64)


def _as_values(values: Any, name: str, min_size: int = 2) -> np.ndarray:
    arr = _numbers(to_numpy(values, name), name)
    if arr.ndim == 2 and 1 in arr.shape:  # a row or column vector
        arr = arr.reshape(-1)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one value per run), got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or inf values")
    if len(arr) < min_size:
        raise ValueError(f"{name} needs at least {min_size} values, got {len(arr)}")
    _check_magnitude(arr, name)
    return arr


def _check_magnitude(arr: np.ndarray, name: str) -> None:
    """Values whose mean, spread or range overflow float64 cannot be summarised: say so, never return inf."""
    with np.errstate(over="ignore", invalid="ignore"):
        ok = np.isfinite(arr.sum()) and np.isfinite(np.ptp(arr)) and np.isfinite(arr.std(ddof=1))
    if not ok:
        raise ValueError(
            f"{name} holds values too large for float64 arithmetic (up to {np.abs(arr).max():.3g}): their sum, "
            "range or spread overflows; rescale them"
        )


def _check_bounds(bounds: Any) -> tuple[float, float] | None:
    if bounds is None:
        return None
    if isinstance(bounds, (str, bytes)) or not isinstance(bounds, (Sequence, np.ndarray)):
        raise TypeError(f"bounds must be None or a pair (low, high) of numbers, got {type(bounds).__name__}")
    if len(bounds) != 2:
        raise ValueError(f"bounds must be a pair (low, high), got {len(bounds)} values")
    low, high = bounds
    for v in (low, high):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise TypeError(f"bounds must hold two numbers, got {bounds!r}")
    low, high = float(low), float(high)
    if math.isnan(low) or math.isnan(high) or not low < high:
        raise ValueError(f"bounds must satisfy low < high (a metric's range), got {bounds!r}")
    return low, high


def _check_level(level: float) -> float:
    if not isinstance(level, (int, float, np.floating)) or not 0 < float(level) < 1:
        raise ValueError(f"level must be a number in (0, 1), got {level!r}")
    return float(level)


MAX_N_BOOT = 1_000_000
"""The most bootstrap replicates any routine takes (the CLI takes 100,000): every replicate is kept."""


def _check_n_boot(n_boot: int) -> int:
    if not isinstance(n_boot, (int, np.integer)) or isinstance(n_boot, bool) or n_boot < 2:
        raise ValueError(f"n_boot must be an integer >= 2, got {n_boot!r}")
    if n_boot > MAX_N_BOOT:
        raise ValueError(f"n_boot must be at most {MAX_N_BOOT:,} (every replicate is kept in memory; 1,000 to "
                         f"10,000 is usual), got {n_boot:,}")
    return int(n_boot)


# --------------------------------------------------------------------------- #
# confidence interval over runs
# --------------------------------------------------------------------------- #
def confidence_interval(
    values: Any,
    *,
    level: float = 0.95,
    method: str = "t",
    n_boot: int = 10_000,
    random_state: Any = None,
    bounds: tuple[float, float] | None = None,
) -> tuple[float, float]:
    r"""Confidence interval of the mean of ``values`` (e.g. one metric over runs).

    * ``"t"`` (default): :math:`\bar x \pm t_{(1+\ell)/2,\,n-1}\, s/\sqrt n`
      with the sample standard deviation :math:`s` (ddof=1).
    * ``"normal"``: :math:`\bar x \pm z_{(1+\ell)/2}\, \sigma/\sqrt n` with the
      population standard deviation :math:`\sigma` (ddof=0); at the 95% level
      :math:`z = 1.96`, what the directional paper's code reports.
    * ``"bootstrap"``: the percentile interval of the means of ``n_boot``
      resamples (with replacement) of the values.

    Parameters
    ----------
    values : array-like of shape (n,)
        Finite numbers, ``n >= 2``.
    level : float, default 0.95
        Confidence level :math:`\ell` in (0, 1).
    method : {"t", "normal", "bootstrap"}, default "t"
    n_boot : int, default 10000
        Resamples for ``"bootstrap"``.
    random_state : None, int or numpy Generator
        Seed of ``"bootstrap"`` (deterministic when given).
    bounds : (float, float), optional
        Clip the interval to a bounded metric's range, e.g. ``(-1, 1)`` for DPA.

    Returns
    -------
    (float, float)
        ``(low, high)``.

    Raises
    ------
    ValueError
        Fewer than two values, non-finite values, an unknown method or a level
        outside (0, 1).

    Notes
    -----
    Use it for a metric repeated over training runs or iterations; for an
    interval over test instances, see :func:`bootstrap`
    (:ref:`def-ci-runs`). ``bounds`` clips both ends to the range of a bounded
    metric, so the interval never leaves it.

    References
    ----------
    .. [1] A. Wang, O. Russakovsky. "Directional Bias Amplification". ICML 2021, §5.2.

    Examples
    --------
    >>> from biasamp.stats import confidence_interval
    >>> runs = [0.10, 0.12, 0.11, 0.13, 0.09]
    >>> [round(x, 4) for x in confidence_interval(runs)]
    [0.0904, 0.1296]
    >>> [round(x, 4) for x in confidence_interval(runs, method="normal")]
    [0.0976, 0.1224]
    """
    x = _as_values(values, "values")
    level = _check_level(level)
    if method not in _CI_METHODS:
        raise ValueError(f"method must be one of {_CI_METHODS}, got {method!r}")
    bounds = _check_bounds(bounds)
    check_random_state(random_state)
    n = len(x)
    mean = float(x.mean())
    if method == "t":
        half = _st.t.ppf((1 + level) / 2, n - 1) * x.std(ddof=1) / math.sqrt(n)
        low, high = mean - half, mean + half
    elif method == "normal":
        half = _st.norm.ppf((1 + level) / 2) * x.std(ddof=0) / math.sqrt(n)
        low, high = mean - half, mean + half
    else:
        n_boot = _check_n_boot(n_boot)
        rng = generator(random_state)
        means = np.empty(n_boot)
        chunk = max(1, 10_000_000 // n)
        for start in range(0, n_boot, chunk):
            stop = min(n_boot, start + chunk)
            means[start:stop] = x[rng.integers(0, n, size=(stop - start, n))].mean(axis=1)
        low, high = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    low, high = float(low), float(high)
    if not (math.isfinite(low) and math.isfinite(high)):  # pragma: no cover - _check_magnitude prevents it
        raise ValueError("values: the interval overflows float64; rescale the values")
    if bounds is not None:
        lo_b, hi_b = bounds
        low, high = min(max(low, lo_b), hi_b), min(max(high, lo_b), hi_b)
    return low, high


# --------------------------------------------------------------------------- #
# bootstrap over the count tables
# --------------------------------------------------------------------------- #
_P_ADJUST = ("holm", "bh")


@dataclass(frozen=True, eq=False, repr=False)
class BootstrapResult(ResultMixin):
    r"""Result of :func:`bootstrap`: intervals and tests of no effect of a count-based metric.

    There is no single ``value`` when the metric has several statistics (e.g.
    ``"A->T"`` and ``"T->A"``): read ``estimate[name]``, ``ci[name]`` and
    ``p_value[name]``; with one statistic ``value`` and :meth:`interval` give
    it directly.

    Attributes
    ----------
    estimate : dict of str -> float
        The metric's statistics on the full data (equal to the metric's own
        values).
    ci : dict of str -> (float, float)
        Confidence interval per statistic; it always holds the estimate with
        ``ci_method="auto"``.
    methods : dict of str -> str
        The interval method used for each statistic (``"BCa"``, ``"max-t
        band"``, ``"percentile"``, ``"basic"``; ``"normal (fallback)"`` when
        ``"auto"`` found a BCa interval not holding its estimate).
    p_value : dict of str -> float or None
        p-value of the test of no effect of each statistic, where one exists:
        the global null "no class / no pair has an effect", i.e. the smallest
        adjusted per-unit p-value (Holm: a valid test of the global null). None
        where the statistic has no test.
    tables : dict of str -> pandas.DataFrame
        Per statistic, one row per unit (class for the fairness metrics, pair
        for BiasAmp→ and BiasAmp_MALS, (group, combination) for the
        multi-attribute metrics): the unit's value, its *simultaneous* interval
        (``ci_low``, ``ci_high``: all units are covered together at ``level``)
        and, where a test exists, ``p_value`` and ``p_adjusted``.
    replicates : pandas.DataFrame
        One row per replicate, one column per statistic; NaN exactly where the
        statistic was undefined in that replicate (counted in ``n_undefined``).
    n_undefined : dict of str -> int
        Replicates in which the statistic was undefined (excluded).
    n_boot : int
    level : float
    ci_method : str
        The requested method.
    p_adjust : {"holm", "bh"}
        Multiple-comparison adjustment of the per-unit p-values.
    test_methods : dict of str -> str
        The test used for each statistic that has one.
    notes : list of str
        Remarks a reader needs (zero-width intervals and why, tests not run).

    Notes
    -----
    A simultaneous interval covers every unit of the table together: with
    probability ``level`` each unit's true value lies in its
    ``[ci_low, ci_high]``. The headline ``p_value`` is
    :math:`\min_u p^{adj}_u`, the Holm test of the global null.

    References
    ----------
    .. [1] B. Efron, R. Tibshirani. "An Introduction to the Bootstrap".
       Chapman & Hall, 1993.

    Examples
    --------
    >>> import numpy as np
    >>> from biasamp import bootstrap, bias_amp_directional
    >>> rng = np.random.default_rng(0)
    >>> attr = rng.integers(0, 2, 1000)
    >>> task = (rng.random((1000, 2)) < 0.3 + 0.2 * attr[:, None]).astype(int)
    >>> res = bootstrap(bias_amp_directional, attr, task, attr_pred=attr, task_pred=task,
    ...                 n_boot=200, random_state=0)
    >>> res.estimate, res.ci["A->T"]  # perfect predictions: no amplification, and no doubt about it
    ({'A->T': 0.0, 'T->A': 0.0}, (0.0, 0.0))
    >>> hasattr(res, "value")  # two statistics: read res.estimate[name]
    False
    """

    estimate: dict
    ci: dict
    replicates: pd.DataFrame
    n_undefined: dict
    n_boot: int
    level: float
    ci_method: str = "auto"
    methods: dict = field(default_factory=dict)
    p_value: dict = field(default_factory=dict)
    tables: dict = field(default_factory=dict)
    p_adjust: str = "holm"
    test_methods: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)

    def _only(self) -> str | None:
        return next(iter(self.estimate)) if len(self.estimate) == 1 else None

    @property
    def value(self) -> float:
        """The estimate, when there is a single statistic (else ``AttributeError``: see ``estimate``)."""
        name = self._only()
        if name is None:
            raise AttributeError(f"several statistics {list(self.estimate)}: read .estimate[name]")
        return self.estimate[name]

    def interval(self, statistic: str | None = None) -> tuple[float, float]:
        """``(low, high)`` of one statistic (optional when there is only one)."""
        if statistic is not None and not isinstance(statistic, str):
            raise TypeError(f"statistic must be a statistic's name (a str) or None, got {type(statistic).__name__}")
        name = statistic if statistic is not None else self._only()
        if name is None:
            raise ValueError(f"several statistics {list(self.estimate)}; name one (statistic=...)")
        if name not in self.ci:
            raise ValueError(f"unknown statistic {name!r}; have {list(self.ci)}")
        return self.ci[name]

    def to_frame(self) -> pd.DataFrame:
        """One row per statistic: estimate, interval, method, p-value, undefined replicates."""
        rows = []
        for name, est in self.estimate.items():
            lo, hi = self.ci[name]
            rows.append({
                "statistic": name, "estimate": est, "ci_low": lo, "ci_high": hi,
                "method": self.methods.get(name), "p_value": self.p_value.get(name),
                "n_undefined": self.n_undefined.get(name, 0),
            })
        return pd.DataFrame(rows).set_index("statistic")

    def to_dict(self) -> dict:
        out = super().to_dict()
        out.pop("replicates", None)
        return out

    def __repr__(self) -> str:
        lines = [f"BootstrapResult(n_boot={self.n_boot}, level={self.level:g}, ci_method={self.ci_method!r})"]
        for name, est in self.estimate.items():
            lo, hi = self.ci[name]
            p = self.p_value.get(name)
            extra = f"  p={p:.3g}" if p is not None and np.isfinite(p) else ""
            if self.n_undefined.get(name):
                extra += f", {self.n_undefined[name]} undefined replicates"
            width = max(len(k) for k in self.estimate)
            lines.append(f"  {name:<{width}} = {fmt(est)}  CI [{fmt(lo)}, {fmt(hi)}] ({self.methods.get(name)}){extra}")
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)


def _load_plans() -> dict:
    from . import _cooccurrence_inference, _fairness_inference  # noqa: F401  (they register their plans)
    from ._inference import PLANS

    try:
        from . import _multi_inference  # noqa: F401
    except ImportError:  # pragma: no cover
        pass
    return PLANS


def bootstrap(
    metric: Callable,
    *args: Any,
    n_boot: int = 1000,
    level: float = 0.95,
    ci_method: str = "auto",
    random_state: Any = None,
    p_adjust: str = "holm",
    **kwargs: Any,
) -> BootstrapResult:
    r"""Bootstrap confidence intervals and tests of no effect for a count-based metric.

    ``bootstrap(metric, *args, **kwargs)`` computes ``metric(*args, **kwargs)``
    and resamples its evaluation set (the test instances) ``n_boot`` times.
    Rows are never copied: the distinct rows ("cells") are found once, in a
    canonical order, and each replicate draws the cell counts
    :math:`c^* \sim \mathrm{Multinomial}(n, c/n)` (exactly a resample of the
    :math:`n` rows with replacement); the replicate's count table is
    :math:`L^\top \operatorname{diag}(c^*) R` with :math:`L, R` the cells'
    augmented label rows. All replicates are computed together, block by
    block over the cells. What the training set fixes stays fixed in every
    replicate: the signs :math:`y`, the training bias scores and indicators,
    the combination set :math:`M`.

    Supported metrics and their statistics:

    * :func:`~biasamp.fairness_metrics` (``"DP" "DI" "SPSF" "FPSF" "EOFP"
      "EOTP" "BA"``) and the single fairness metrics;
    * :func:`~biasamp.bias_amp_directional` (``"A->T"``, ``"T->A"``);
    * :func:`~biasamp.bias_amp_mals` (``"MALS"``);
    * :func:`~biasamp.multi_bias_amp` (``"Multi_MALS"``, ``"G->M"``,
      ``"M->G"``: the "abs" headline values; ``"Multi_MALS raw"``, ``"G->M
      raw"``, ``"M->G raw"``: the signed values).

    Parameters
    ----------
    metric : callable
        One of the functions above.
    *args, **kwargs
        Exactly the arguments ``metric`` takes.
    n_boot : int, default 1000
        Number of replicates (at least 2).
    level : float, default 0.95
        Confidence level, in (0, 1).
    ci_method : {"auto", "percentile", "basic", "bca", "band"}, default "auto"
        ``"percentile"``: the replicates' quantiles. ``"basic"``:
        :math:`(2\hat\theta - q_{hi}, 2\hat\theta - q_{lo})`. ``"bca"``:
        bias-corrected and accelerated (the acceleration from the jackknife
        over cells, weighted by their counts). ``"band"``: derived from a
        simultaneous max-t band on the statistic's signed parts (see Notes).
        ``"auto"``: ``"band"`` for the statistics built from maxima, minima or
        absolute values (DP, DI, SPSF, FPSF, EOFP, EOTP, BA, the "abs"
        multi-attribute values), ``"bca"`` for the smooth ones (BiasAmp→,
        BiasAmp_MALS, the "raw" multi-attribute values); its coverage is
        measured in ``benchmarks/bench_coverage.py``.
    random_state : None, int or numpy Generator
        Seed; the same seed gives the same result whatever the order of the
        rows.
    p_adjust : {"holm", "bh"}, default "holm"
        Adjustment of the per-unit p-values for multiple comparisons (Holm's
        step-down, controlling the family-wise error rate; or
        Benjamini–Hochberg, controlling the false discovery rate).

    Returns
    -------
    BootstrapResult
        ``.estimate``, ``.ci``, ``.methods``, ``.p_value``, ``.tables``
        (per-class / per-pair values, simultaneous intervals, p-values),
        ``.replicates``; ``.value`` and ``.interval()`` for one statistic.

    Raises
    ------
    TypeError
        An unsupported ``metric`` or wrong arguments for it.
    ValueError
        Bad labels, ``n_boot``/``level``/``ci_method``/``random_state`` out of
        range, or a statistic undefined in every replicate.

    Warns
    -----
    UndefinedPairWarning
        When some replicates had an undefined statistic (excluded).

    Notes
    -----
    **Non-regular statistics.** A statistic built from a maximum, minimum or
    absolute value of differences (e.g. DP = max − min of the group rates) is
    positive in almost every resample even when the true value is 0, so its
    percentile interval lies above 0. Its interval is derived instead from a
    simultaneous band on the signed parts :math:`\delta_j` (pairwise
    differences of group rates, per-combination :math:`\Delta`): with
    :math:`s_j` the bootstrap standard error and :math:`c` the ``level``
    quantile of :math:`\max_j |\delta^*_j - \hat\delta_j| / s_j`, every
    :math:`\delta_j` lies in :math:`\hat\delta_j \pm c s_j` together with
    probability ``level``, and the statistic lies between its smallest and
    largest value over that box, e.g.
    :math:`\mathrm{DP} \in [\max(0, \max_{gh} \mathrm{lower}|\delta_{gh}|),
    \max_{gh} \mathrm{upper}|\delta_{gh}|]`.

    **Tests of no effect.** Fairness, per class: independence of the
    prediction and the group (DP, DI, SPSF: all rows; EOTP: the class's
    positives; EOFP, FPSF: its negatives) by the G-test, Fisher's exact test
    (two groups) or a Monte-Carlo test with fixed margins when an expected
    count is below 5. BiasAmp→, per pair: the exact McNemar test of
    :math:`\hat T_t` vs :math:`T_t` among the members of :math:`a` (A→T), or
    of :math:`\hat A_a` vs :math:`A_a` among the positives of :math:`t` (T→A).
    The per-unit p-values are adjusted (``p_adjust``); the statistic's
    ``p_value`` is the smallest adjusted one. Tests need hard predictions.

    The cost is one pass to find the cells, then
    :math:`O(n_{boot} \cdot \mathrm{nnz})` for the tables; with single-label
    inputs the number of cells is bounded by the product of the class counts,
    whatever :math:`n`. Replicates in which a statistic is undefined are
    excluded from its interval and counted in ``n_undefined``.

    References
    ----------
    .. [1] B. Efron, R. Tibshirani. "An Introduction to the Bootstrap".
       Chapman & Hall, 1993 (percentile, BCa).
    .. [2] B. Efron. "Better bootstrap confidence intervals". JASA 82, 1987.
    .. [3] D. N. Politis, J. P. Romano, M. Wolf. "Subsampling", 1999, and
       J. P. Romano, M. Wolf. "Stepwise multiple testing as formalized data
       snooping". Econometrica 73, 2005 (max-t simultaneous bands).
    .. [4] S. Holm. "A simple sequentially rejective multiple test
       procedure". Scand. J. Statist. 6, 1979.

    Examples
    --------
    >>> import numpy as np
    >>> from biasamp import bootstrap, demographic_parity
    >>> rng = np.random.default_rng(0)
    >>> group = rng.integers(0, 2, 2000)
    >>> y_true = rng.integers(0, 2, 2000)
    >>> y_pred = np.where(rng.random(2000) < 0.1 + 0.1 * group, 1 - y_true, y_true)
    >>> res = bootstrap(demographic_parity, y_true, y_pred, sensitive_features=group,
    ...                 n_boot=500, random_state=0)
    >>> low, high = res.interval()
    >>> bool(low <= res.value <= high), res.methods["DP"]
    (True, 'max-t band')
    """
    from ._inference import CI_METHODS
    from ._resample import seed_sequence

    n_boot = _check_n_boot(n_boot)
    level = _check_level(level)
    if ci_method not in CI_METHODS:
        raise ValueError(f"ci_method must be one of {CI_METHODS}, got {ci_method!r}")
    if p_adjust not in _P_ADJUST:
        raise ValueError(f"p_adjust must be one of {_P_ADJUST}, got {p_adjust!r}")
    seed = seed_sequence(random_state)
    builder = _load_plans().get(metric)
    if builder is None:
        supported = sorted({getattr(f, "__name__", str(f)) for f in _load_plans()})
        raise TypeError(
            f"bootstrap supports the count-based metrics {supported}, got {getattr(metric, '__name__', metric)!r}"
        )
    plan = builder(*args, **kwargs)
    cells = plan.cells
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        stats = plan.statistics(cells.table()[None])
        fill_replicates(plan, stats, cells.replicate_tables(n_boot, seed), n_boot)
        if ci_method == "bca" or (ci_method == "auto" and any(s.regular for s in stats)):
            for s in stats:
                s.jackknife = np.full(cells.n_cells, np.nan)
            for sl, tables in cells.jackknife_tables():
                vals = plan.values(tables)
                for s in stats:
                    s.jackknife[sl] = vals[s.name]
    return summarize(plan, stats, n_boot=n_boot, level=level, ci_method=ci_method, p_adjust=p_adjust, seed=seed,
                     cell_counts=cells.counts, stacklevel=3)


def fill_replicates(plan: Any, stats: list, chunks: Any, n_boot: int) -> None:
    """Evaluate ``plan`` on chunks ``(slice, tables)`` of replicate tables and store the replicates in ``stats``."""
    values = {s.name: np.empty(n_boot) for s in stats}
    parts = {s.name: np.empty((n_boot, len(s.parts.estimate))) for s in stats if s.parts is not None}
    for sl, tables in chunks:
        for name, v in plan.values(tables).items():
            values[name][sl] = v
        for name, x in plan.parts(tables).items():
            parts[name][sl] = x
    for s in stats:
        s.replicates = values[s.name]
        if s.parts is not None:
            s.parts.replicates = parts[s.name]


def summarize(plan: Any, stats: list, *, n_boot: int, level: float, ci_method: str, p_adjust: str,
              seed: np.random.SeedSequence, cell_counts: np.ndarray | None = None,
              stacklevel: int = 2) -> BootstrapResult:
    """Intervals, tests and per-unit tables of statistics whose replicates are filled in."""
    from ._inference import interval, unit_table, zero_width_note
    from ._pvalues import adjust_pvalues, global_p_value

    test_rng = np.random.default_rng(np.random.SeedSequence(seed.entropy, spawn_key=(*seed.spawn_key, 2)))
    tests = plan.tests(test_rng) if plan.tests is not None else {}
    estimate, ci, methods, p_value, tables, n_undefined, test_methods = {}, {}, {}, {}, {}, {}, {}
    notes = list(plan.notes)
    for s in stats:
        estimate[s.name] = s.estimate
        n_undefined[s.name] = int((~np.isfinite(s.replicates)).sum())
        lo, hi, used = interval(s, ci_method, level, cell_counts)
        ci[s.name], methods[s.name] = (lo, hi), used
        if lo == hi and np.isfinite(lo):
            notes.append(zero_width_note(s))
        elif np.isfinite(s.estimate) and not lo <= s.estimate <= hi:
            notes.append(f"{s.name}: the {used} interval [{lo:.4g}, {hi:.4g}] excludes the estimate {s.estimate:.4g} "
                         "(almost every replicate lies on one side of it); ci_method='auto' gives an interval "
                         "that holds it")
        table = unit_table(s, level) if s.parts is not None else None
        if s.name in tests:
            t = tests[s.name]
            p_value[s.name] = global_p_value(t.p_value)
            test_methods[s.name] = t.method
            if table is not None:
                table["p_value"] = t.p_value
                table["p_adjusted"] = adjust_pvalues(t.p_value, method=p_adjust)
        else:
            p_value[s.name] = None
        if table is not None:
            tables[s.name] = table
    replicates = pd.DataFrame({s.name: s.replicates for s in stats})
    if any(n_undefined.values()):
        warnings.warn(
            "bootstrap: some replicates had an undefined statistic and were excluded: "
            + ", ".join(f"{k}: {v}" for k, v in n_undefined.items() if v),
            UndefinedPairWarning,
            stacklevel=stacklevel,
        )
    return BootstrapResult(estimate, ci, replicates, n_undefined, n_boot, level, ci_method, methods, p_value,
                           tables, p_adjust, test_methods, notes)


# --------------------------------------------------------------------------- #
# comparing two sets of runs
# --------------------------------------------------------------------------- #
_D_THRESHOLDS = ((2.0, "huge"), (1.2, "very large"), (0.8, "large"), (0.5, "medium"), (0.2, "small"),
                 (0.01, "very small"))


def cohens_d_label(d: float) -> str:
    r"""Sawilowsky's (2009) name of an effect size ``|d|``.

    ``|d| >= 2.0`` "huge", ``>= 1.2`` "very large", ``>= 0.8`` "large",
    ``>= 0.5`` "medium", ``>= 0.2`` "small", ``>= 0.01`` "very small", below
    0.01 "negligible" (a name chosen by biasamp; the scale starts at 0.01).

    Parameters
    ----------
    d : float
        Cohen's d (its sign is ignored).

    Returns
    -------
    str
        One of "negligible", "very small", "small", "medium", "large",
        "very large", "huge".

    Raises
    ------
    ValueError
        ``d`` is NaN.

    Notes
    -----
    For :math:`d = (m_a - m_b)/\sqrt{(s_a^2 + s_b^2)/2}` (see
    :func:`compare_runs` and :ref:`def-compare-runs`), the label is the
    largest threshold :math:`|d|` reaches.

    References
    ----------
    .. [1] S. S. Sawilowsky. "New effect size rules of thumb". Journal of Modern
       Applied Statistical Methods 8(2), 2009.

    Examples
    --------
    >>> from biasamp.stats import cohens_d_label
    >>> cohens_d_label(0.85), cohens_d_label(-2.5), cohens_d_label(0.001)
    ('large', 'huge', 'negligible')
    """
    if isinstance(d, bool) or not isinstance(d, (int, float, np.integer, np.floating)):
        raise TypeError(f"d must be a real number (Cohen's d), got {type(d).__name__} {d!r}")
    if math.isnan(d):
        raise ValueError("d is NaN: Cohen's d is undefined, so it has no label")
    for threshold, label in _D_THRESHOLDS:
        if abs(d) >= threshold:
            return label
    return "negligible"


@dataclass(frozen=True, eq=False, repr=False)
class CompareRunsResult(ResultMixin):
    r"""Result of :func:`compare_runs` (experiment ``a`` vs experiment ``b``).

    Attributes
    ----------
    alternative : {"greater", "less", "two-sided"}
        The Mann-Whitney alternative used: "greater" means ``a`` tends to be larger.
    u_statistic, u_pvalue : float
        Mann-Whitney U of ``a`` and its p-value.
    cohens_d : float
        :math:`(m_a - m_b)/\\sqrt{(s_a^2 + s_b^2)/2}` with sample SDs; ``±inf``
        when both SDs are 0 and the means differ, 0 when both are constant and equal.
    effect_size : str
        The label of ``|cohens_d|`` (see :func:`cohens_d_label`).
    levene_statistic, levene_pvalue : float or None
        Levene's test on the values divided by their mean (relative variance);
        ``None`` when it is undefined (see ``notes``).
    mean_a, mean_b, std_a, std_b, maxdiff_a, maxdiff_b : float
        Per-experiment mean, sample STDEV (ddof=1) and MaxDiff (max - min).
    n_a, n_b : int
    notes : tuple of str
        Why a test is undefined, if one is.

    Notes
    -----
    There is no single ``value``: a comparison of two experiments is three
    tests (Mann-Whitney U, Cohen's d, Levene), each with its own statistic,
    e.g. :math:`d = (m_a - m_b)/\sqrt{(s_a^2 + s_b^2)/2}`
    (:ref:`def-compare-runs`). ``to_frame()`` is one row of every scalar
    field.

    References
    ----------
    .. [1] S. Qian et al. "Are My Deep Learning Systems Fair?". NeurIPS 2021, App. B.3.

    Examples
    --------
    >>> from biasamp import compare_runs
    >>> res = compare_runs([0.20, 0.22, 0.21, 0.25, 0.19, 0.23], [0.12, 0.15, 0.11, 0.14, 0.13, 0.16])
    >>> res.alternative, res.effect_size, res.significant()["mean"]
    ('greater', 'huge', True)
    """

    alternative: str
    u_statistic: float
    u_pvalue: float
    cohens_d: float
    effect_size: str
    levene_statistic: float | None
    levene_pvalue: float | None
    mean_a: float
    mean_b: float
    std_a: float
    std_b: float
    maxdiff_a: float
    maxdiff_b: float
    n_a: int
    n_b: int
    notes: tuple = ()

    def significant(self, alpha: float = 0.05) -> dict:
        """Whether the mean and variance tests reject at level ``alpha`` (a number in (0, 1))."""
        if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not 0 < float(alpha) < 1:
            raise ValueError(f"alpha must be a number in (0, 1), got {alpha!r}")
        return {
            "mean": self.u_pvalue < alpha,
            "variance": None if self.levene_pvalue is None else self.levene_pvalue < alpha,
        }

    def __repr__(self) -> str:
        lev = "undefined" if self.levene_pvalue is None else f"W={self.levene_statistic:.4g}, p={self.levene_pvalue:.4g}"
        return (
            f"CompareRunsResult(n={self.n_a} vs {self.n_b}, mean {self.mean_a:.4g} vs {self.mean_b:.4g}\n"
            f"  Mann-Whitney U ({self.alternative}): U={self.u_statistic:g}, p={self.u_pvalue:.4g}\n"
            f"  Cohen's d = {self.cohens_d:+.4g} ({self.effect_size})\n"
            f"  Levene (relative): {lev})"
        )


def compare_runs(a: Any, b: Any, *, alternative: str | None = None) -> CompareRunsResult:
    r"""Compare one metric over the runs of two experiments (Qian et al. 2021, App. B.3).

    * **Mann-Whitney U**, one-sided: ``alternative="greater"`` tests whether
      ``a`` tends to be larger than ``b``. By default the direction follows the
      means (``"greater"`` when :math:`\bar a > \bar b`, ``"less"`` when
      smaller, ``"two-sided"`` when equal).
    * **Cohen's d** :math:`= (\bar a - \bar b) / \sqrt{(s_a^2 + s_b^2)/2}`
      with sample standard deviations (ddof=1), and its label
      (:func:`cohens_d_label`).
    * **Levene's test** (``scipy.stats.levene``, median-centred) on
      :math:`a/\bar a` and :math:`b/\bar b`: a difference in *relative*
      variance, independent of the metric's scale.

    Parameters
    ----------
    a, b : array-like of shape (n_a,), (n_b,)
        The metric in each run of the two experiments (finite, at least 2 each).
    alternative : {"greater", "less", "two-sided"}, optional
        Override the direction of the U test.

    Returns
    -------
    CompareRunsResult

    Raises
    ------
    ValueError
        Fewer than 2 values, non-finite values, or an unknown alternative.

    Notes
    -----
    Levene's test is undefined (``None``, explained in ``notes``) when a mean
    is 0 (no relative variance) or when both normalised samples are constant.

    References
    ----------
    .. [1] S. Qian et al. "Are My Deep Learning Systems Fair?". NeurIPS 2021, App. B.3.
    .. [2] S. S. Sawilowsky. "New effect size rules of thumb". JMASM 8(2), 2009.

    Examples
    --------
    >>> from biasamp.stats import compare_runs
    >>> base = [0.20, 0.22, 0.21, 0.25, 0.19, 0.23]
    >>> debiased = [0.12, 0.15, 0.11, 0.14, 0.13, 0.16]
    >>> res = compare_runs(base, debiased)
    >>> res.alternative, round(res.u_pvalue, 4), res.effect_size
    ('greater', 0.0011, 'huge')
    """
    x = _as_values(a, "a")
    y = _as_values(b, "b")
    if alternative is None:
        mx, my = x.mean(), y.mean()
        alternative = "greater" if mx > my else "less" if mx < my else "two-sided"
    elif alternative not in ("greater", "less", "two-sided"):
        raise ValueError(f"alternative must be 'greater', 'less', 'two-sided' or None, got {alternative!r}")
    u = _st.mannwhitneyu(x, y, alternative=alternative)
    # a constant sample has SD exactly 0 (the floating-point std may leave ~1e-17)
    sa = 0.0 if np.ptp(x) == 0 else float(x.std(ddof=1))
    sb = 0.0 if np.ptp(y) == 0 else float(y.std(ddof=1))
    # d is scale-free: compute it on values divided by a common power of two, so that
    # squares and differences of values near the float64 limit cannot overflow
    scale = 2.0 ** math.frexp(max(float(np.abs(x).max()), float(np.abs(y).max()), 1e-300))[1]
    xs, ys = x / scale, y / scale
    sa_s = 0.0 if sa == 0 else float(xs.std(ddof=1))
    sb_s = 0.0 if sb == 0 else float(ys.std(ddof=1))
    pooled = math.sqrt((sa_s**2 + sb_s**2) / 2)
    diff = float(xs.mean() - ys.mean())
    if pooled > 0:
        d = diff / pooled
    else:
        d = 0.0 if diff == 0 else math.copysign(math.inf, diff)
    notes = []
    lev_stat = lev_p = None
    if x.mean() == 0 or y.mean() == 0:
        notes.append("Levene undefined: a mean is 0, so values cannot be normalised by it")
    else:
        xn, yn = x / x.mean(), y / y.mean()
        if np.ptp(xn) == 0 and np.ptp(yn) == 0:
            notes.append("Levene undefined: both experiments are constant")
        else:
            with np.errstate(invalid="ignore", divide="ignore"):
                lev = _st.levene(xn, yn)
            if np.isfinite(lev.statistic):
                lev_stat, lev_p = float(lev.statistic), float(lev.pvalue)
            else:
                notes.append("Levene undefined: no spread around the medians")
    return CompareRunsResult(
        alternative, float(u.statistic), float(u.pvalue), float(d), cohens_d_label(d), lev_stat, lev_p,
        float(x.mean()), float(y.mean()), float(sa), float(sb), float(np.ptp(x)), float(np.ptp(y)),
        len(x), len(y), tuple(notes),
    )


# --------------------------------------------------------------------------- #
# summary over many runs
# --------------------------------------------------------------------------- #
@dataclass(frozen=True, eq=False, repr=False)
class RunSummary(ResultMixin):
    r"""Result of :func:`run_summary`.

    Attributes
    ----------
    overall : pandas.DataFrame
        One row per metric: ``n_runs, mean, std`` (sample, ddof=1), ``maxdiff``
        (max - min), ``ci_low, ci_high``, and ``undefined``: why the
        statistics that are NaN are undefined (fewer than two runs where the
        metric is defined), empty otherwise.
    by_class : pandas.DataFrame or None
        The same per (metric, class), over the runs where that class's value is
        defined (``n_runs`` says how many); ``None`` without per-class input.
    per_class_max : pandas.DataFrame or None
        Per metric, the largest per-class ``maxdiff`` and ``std`` over classes
        (the "Per-class" columns of Qian et al.'s Table 4).
    level : float
    method : str

    Notes
    -----
    There is no single ``value``: the summary covers every metric of the
    runs. ``to_frame()`` is ``overall`` (one row per metric), with
    :math:`\text{maxdiff} = \max_r x_r - \min_r x_r` over the runs r
    (:ref:`def-compare-runs`).

    References
    ----------
    .. [1] S. Qian et al. "Are My Deep Learning Systems Fair?". NeurIPS 2021, App. D.1.

    Examples
    --------
    >>> from biasamp import run_summary
    >>> s = run_summary([{"DP": 0.10}, {"DP": 0.14}, {"DP": 0.12}])
    >>> s.to_frame().loc["DP", ["n_runs", "mean", "maxdiff"]].round(3).tolist()
    [3.0, 0.12, 0.04]
    """

    overall: pd.DataFrame
    by_class: pd.DataFrame | None
    per_class_max: pd.DataFrame | None
    level: float
    method: str

    def to_frame(self) -> pd.DataFrame:
        """``overall``: one row per metric (``n_runs, mean, std, maxdiff, ci_low, ci_high, undefined``)."""
        return self.overall.copy()

    def __repr__(self) -> str:
        return f"RunSummary(level={self.level:g}, method={self.method!r})\n{self.overall.to_string()}"


def _summarise(frame: pd.DataFrame, level: float, method: str, random_state: Any) -> pd.DataFrame:
    rows = {}
    for col in frame.columns:
        v = frame[col].to_numpy(dtype=np.float64)
        v = v[np.isfinite(v)]
        row = {"n_runs": len(v), "mean": np.nan, "std": np.nan, "maxdiff": np.nan, "ci_low": np.nan, "ci_high": np.nan,
               "undefined": ""}
        if len(v) >= 2:
            _check_magnitude(v, f"runs[{col!r}]")
        if len(v):
            row.update(mean=float(v.mean()), maxdiff=float(np.ptp(v)))
        if len(v) >= 2:
            row["std"] = float(v.std(ddof=1))
            row["ci_low"], row["ci_high"] = confidence_interval(v, level=level, method=method, random_state=random_state)
        elif len(v) == 1:
            row["undefined"] = "one defined run: std and the interval need two"
        else:
            row["undefined"] = "no run where it is defined"
        rows[col] = row
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index.name = "metric"
    return out


def _numeric_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """A DataFrame of runs as float64 columns (one per metric); pd.NA counts as NaN (an undefined run)."""
    if not runs.columns.is_unique:
        dup = runs.columns[runs.columns.duplicated()].unique().tolist()
        raise ValueError(f"runs has duplicate column names {dup[:10]!r}; one column per metric")
    columns, bad = {}, []
    for c in runs.columns:
        col = runs[c]
        if col.dtype == object:
            vals = col.to_numpy()
            if all(v is None or isinstance(v, numbers.Real) or v is pd.NA for v in vals):
                col = pd.Series([np.nan if v is None or v is pd.NA else float(v) for v in vals], index=col.index)
        if not (pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col)):
            bad.append(c)
            continue
        columns[c] = col.to_numpy(dtype=np.float64, na_value=np.nan)
    if bad:
        raise TypeError(f"runs: column(s) {bad[:10]!r} are not numeric; one column per metric, one row per run")
    return pd.DataFrame(columns, index=runs.index, columns=runs.columns)


def run_summary(
    runs: Any, *, level: float = 0.95, method: str = "t", random_state: Any = None
) -> RunSummary:
    r"""Mean, STDEV, MaxDiff and confidence interval of each metric over runs.

    Qian et al. (2021) show that identical training runs differ widely in
    their bias; they ask for all three of the mean, the standard deviation and
    the range (MaxDiff = max - min) over runs, overall and per class.

    Parameters
    ----------
    runs : sequence or DataFrame
        One entry per run: :class:`~biasamp.fairness.FairnessResult` objects
        (overall and per-class summaries), mappings of metric name -> value,
        results with a ``.value`` (e.g. a BiasAmp result), plain numbers, or a
        DataFrame with one row per run and one column per metric. At least 2
        runs.
    level : float, default 0.95
        Confidence level.
    method : {"t", "normal", "bootstrap"}, default "t"
        Interval of the mean (see :func:`confidence_interval`).
    random_state : None, int or Generator
        Seed for ``method="bootstrap"``.

    Returns
    -------
    RunSummary
        ``.overall`` (one row per metric), ``.by_class`` (per metric and class,
        when the runs carry per-class values) and ``.per_class_max``.

    Raises
    ------
    ValueError
        Fewer than two runs, or runs of different kinds.

    Notes
    -----
    For each metric, :math:`\text{maxdiff} = \max_r x_r - \min_r x_r` and
    STDEV is the sample standard deviation (ddof=1) over the runs r
    (:ref:`def-compare-runs`). A per-class value that
    is undefined in some runs is summarised over the other runs; ``n_runs``
    says how many, and statistics needing 2 values are NaN below that.

    References
    ----------
    .. [1] S. Qian et al. "Are My Deep Learning Systems Fair?". NeurIPS 2021, App. D.1.

    Examples
    --------
    >>> from biasamp.stats import run_summary
    >>> runs = [{"DP": 0.10, "EOTP": 0.20}, {"DP": 0.14, "EOTP": 0.18}, {"DP": 0.12, "EOTP": 0.25}]
    >>> s = run_summary(runs)
    >>> s.overall["mean"].round(3).to_dict(), s.overall["maxdiff"].round(3).to_dict()
    ({'DP': 0.12, 'EOTP': 0.21}, {'DP': 0.04, 'EOTP': 0.07})
    """
    from .fairness import FairnessResult

    level = _check_level(level)
    if method not in _CI_METHODS:
        raise ValueError(f"method must be one of {_CI_METHODS}, got {method!r}")
    by_class_frame = None
    check_random_state(random_state)
    if isinstance(runs, pd.DataFrame):
        overall_frame = _numeric_runs(runs)
    else:
        if isinstance(runs, (str, bytes, Mapping)) or not isinstance(runs, (Sequence, np.ndarray, pd.Series)):
            raise TypeError(f"runs must be a sequence of runs or a DataFrame, got {type(runs).__name__}")
        runs = list(runs)
        if not runs:
            raise ValueError("runs is empty")
        if all(isinstance(r, FairnessResult) for r in runs):
            overall_frame = pd.DataFrame([r.overall for r in runs])
            by_class_frame = pd.concat(
                [r.by_class.assign(run=i).reset_index() for i, r in enumerate(runs)], ignore_index=True
            )
        elif all(isinstance(r, Mapping) for r in runs):
            overall_frame = pd.DataFrame([dict(r) for r in runs])
        elif all(hasattr(r, "value") and not isinstance(r, (Mapping, np.ndarray)) for r in runs):
            overall_frame = pd.DataFrame({"value": [float(r.value) for r in runs]})
        elif all(isinstance(r, (int, float, np.integer, np.floating)) and not isinstance(r, bool) for r in runs):
            overall_frame = pd.DataFrame({"value": np.asarray(runs, dtype=np.float64)})
        else:
            raise ValueError(
                "runs must all be of one kind: FairnessResult, mapping, result with .value, or number"
            )
    if len(overall_frame) < 2:
        raise ValueError(f"run_summary needs at least 2 runs, got {len(overall_frame)}")
    values = overall_frame.to_numpy(dtype=np.float64)
    if np.isinf(values).any():
        raise ValueError("runs contains inf values (NaN marks an undefined run; inf is not a metric value)")
    if np.isnan(values).all():
        raise ValueError("runs: every value is NaN (undefined); there is nothing to summarise")
    overall = _summarise(overall_frame, level, method, random_state)
    by_class = per_class_max = None
    if by_class_frame is not None:
        metrics = [c for c in by_class_frame.columns if c not in ("class", "run")]
        parts = []
        for cls_, sub in by_class_frame.groupby("class", sort=False):
            part = _summarise(sub[metrics], level, method, random_state)
            part["class"] = cls_
            parts.append(part.reset_index())
        by_class = pd.concat(parts, ignore_index=True).set_index(["metric", "class"]).sort_index(level=0, sort_remaining=False)
        by_class = by_class.loc[metrics]
        per_class_max = by_class.groupby(level="metric", sort=False)[["maxdiff", "std"]].max()
    return RunSummary(overall, by_class, per_class_max, level, method)
