"""Statistics across runs (:ref:`def-statistics`): :func:`confidence_interval`, :func:`compare_runs`
(Mann-Whitney U, Cohen's d, Levene; Qian et al. 2021, App. B.3), :func:`run_summary`, and the checks
of ``level`` and ``n_boot`` that every resampling layer shares.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from biasamp._core.labels import to_numpy
from biasamp._core.results import ResultMixin
from biasamp._engine.resample import check_random_state, generator

__all__ = ["CompareRunsResult", "RunSummary", "cohens_d_label", "compare_runs", "confidence_interval", "run_summary"]

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


def _check_ddof(ddof: Any) -> int:
    """``ddof`` as a non-negative int (0: the population SD, 1: the sample SD), else a named error."""
    if isinstance(ddof, bool) or not isinstance(ddof, numbers.Integral):
        raise TypeError(f"ddof must be a non-negative integer (0: population SD, 1: sample SD), got {ddof!r}")
    if ddof < 0:
        raise ValueError(f"ddof must be a non-negative integer (0: population SD, 1: sample SD), got {ddof}")
    return int(ddof)


def _std(v: np.ndarray, ddof: int) -> float:
    """The standard deviation with ``ddof`` (exactly 0 for constant values; NaN when ``len(v) <= ddof``)."""
    if len(v) <= ddof:
        return math.nan
    return 0.0 if np.ptp(v) == 0 else float(v.std(ddof=ddof))


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


MAX_N_ITER = 10_000
"""The most iterations any routine of attackers takes (each iteration fits its attackers anew; 10 to 100 is usual)."""


def _check_n_iter(n_iter: Any) -> int:
    """``n_iter`` (iterations of attacker fits: DPA, leakage, LIC, DBAC) as an int in [1, :data:`MAX_N_ITER`]."""
    if not isinstance(n_iter, numbers.Integral) or isinstance(n_iter, bool) or n_iter < 1:
        raise ValueError(f"n_iter must be a positive integer, got {n_iter!r}")
    if int(n_iter) > MAX_N_ITER:
        raise ValueError(f"n_iter must be at most {MAX_N_ITER:,} (every iteration fits the attackers anew; 10 to 100 "
                         f"is usual), got {int(n_iter):,}")
    return int(n_iter)


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
    from scipy import stats as _st  # imported where used: scipy.stats costs start-up time

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


def _t_quantile(level: float, df: float) -> float:
    from scipy import stats as _st  # imported where used: scipy.stats costs start-up time

    if not math.isfinite(df):
        return float(_st.norm.ppf((1 + level) / 2))
    return float(_st.t.ppf((1 + level) / 2, df))


def _t_p_value(estimate: float, se: float, df: float) -> float:
    """Two-sided p-value of "the mean is 0" from ``estimate / se`` on ``df`` degrees of freedom (1 or 0 at se 0)."""
    from scipy import stats as _st

    if se <= 0:
        return 1.0 if abs(estimate) < 1e-12 else 0.0
    z = abs(estimate) / se
    return float(2 * (_st.norm.sf(z) if not math.isfinite(df) else _st.t.sf(z, df)))


def _clip(low: float, high: float, bounds: tuple[float, float] | None) -> tuple[float, float]:
    if bounds is not None:
        low, high = max(low, bounds[0]), min(high, bounds[1])
    return float(low), float(high)


def combined_standard_error(se_data: float, df_data: float, se_iterations: float,
                            n_iter: int) -> tuple[float, float]:
    """``(se, df)`` of a mean over ``n_iter`` iterations that also varies with the data: the variances add.

    ``se = sqrt(se_data² + se_iterations²)`` with Welch-Satterthwaite degrees
    of freedom (``se_data`` estimated on ``df_data``; infinite: known), and
    ``(0, inf)`` when both are 0.
    """
    total = se_data ** 2 + se_iterations ** 2
    if total <= 0:
        return 0.0, math.inf
    if not math.isfinite(df_data):
        df = math.inf if se_iterations == 0 else total ** 2 * (n_iter - 1) / se_iterations ** 4
    else:
        df = total ** 2 / (se_data ** 4 / df_data + (se_iterations ** 4 / (n_iter - 1) if n_iter > 1 else 0.0))
    return math.sqrt(total), df


def iterations_and_data_intervals(estimate: float, per_iteration: np.ndarray, se_data: float, level: float,
                                  bounds: tuple[float, float] | None, df_data: float = math.inf) -> dict:
    r"""The intervals of a mean over randomised iterations that also varies with the data, and their p-values.

    ``estimate`` is the mean of ``per_iteration`` (one value per iteration
    of a randomised procedure: splits, seeds) and ``se_data`` the standard
    error the data (the rows, the captions) contribute, estimated on ``df_data``
    degrees of freedom. The two sources are independent, so their variances
    add:

    * ``"iterations"``: the t-interval of the iterations
      (:func:`confidence_interval`, ``se_iterations`` :math:`= s/\sqrt J`);
    * ``"data"``: :math:`\hat\theta \pm t_{\nu_d}\, se_{data}`;
    * ``"both"``: :math:`\hat\theta \pm t_{\nu}\sqrt{se_{data}^2 + s^2/J}`,
      :math:`\nu` the Welch-Satterthwaite degrees of freedom.

    Each interval is symmetric about the estimate before clipping to
    ``bounds`` (so it holds it) and comes with the two-sided p-value of the
    same t statistic (``p_<name>``): ``p < 1 - level`` exactly when the
    interval excludes 0.
    """
    j = len(per_iteration)
    s_it = float(np.std(per_iteration, ddof=1)) if j > 1 else 0.0
    se_it = s_it / math.sqrt(j)
    se, df = combined_standard_error(se_data, df_data, se_it, j)
    half = _t_quantile(level, df) * se if se > 0 else 0.0
    half_d = _t_quantile(level, df_data) * se_data
    if j > 1:  # the 0.2 numbers: the t-interval over the iterations, as confidence_interval computes it
        iterations = confidence_interval(per_iteration, level=level, method="t", bounds=bounds)
    else:
        iterations = (estimate, estimate)
    return {
        "se_iterations": se_it, "se_data": float(se_data),
        "iterations": (float(iterations[0]), float(iterations[1])),
        "data": _clip(estimate - half_d, estimate + half_d, bounds),
        "both": _clip(estimate - half, estimate + half, bounds),
        "p_iterations": _t_p_value(estimate, se_it, j - 1),
        "p_data": _t_p_value(estimate, se_data, df_data),
        "p_both": _t_p_value(estimate, se, df),
        # each interval's standard error and degrees of freedom (its minimum detectable effect)
        "se_df_iterations": (se_it, float(j - 1) if j > 1 else math.nan),
        "se_df_data": (float(se_data), float(df_data)),
        "se_df_both": (se, df),
    }


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
        The Mann-Whitney alternative used ("two-sided" unless the caller gave a
        direction): "greater" means ``a`` tends to be larger.
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
        Per-experiment mean, STDEV (the population SD, ddof=0, unless
        :func:`compare_runs` was given another ``ddof``; Cohen's d always uses
        the sample SDs) and MaxDiff (max - min).
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
    ('two-sided', 'huge', True)
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
        lev = ("undefined" if self.levene_pvalue is None
               else f"W={self.levene_statistic:.4g}, p={self.levene_pvalue:.4g}")
        return (
            f"CompareRunsResult(n={self.n_a} vs {self.n_b}, mean {self.mean_a:.4g} vs {self.mean_b:.4g}\n"
            f"  Mann-Whitney U ({self.alternative}): U={self.u_statistic:g}, p={self.u_pvalue:.4g}\n"
            f"  Cohen's d = {self.cohens_d:+.4g} ({self.effect_size})\n"
            f"  Levene (relative): {lev})"
        )


def compare_runs(a: Any, b: Any, *, alternative: str | None = "two-sided", ddof: int = 0) -> CompareRunsResult:
    r"""Compare one metric over the runs of two experiments (Qian et al. 2021, App. B.3).

    * **Mann-Whitney U**, two-sided by default (Qian et al. allow either):
      whether ``a`` and ``b`` tend to differ. A one-sided test is valid only
      when its direction is chosen before looking at the runs, so it is used
      only when the caller gives it: ``alternative="greater"`` tests whether
      ``a`` tends to be larger than ``b``, ``"less"`` whether smaller.
      (Choosing the direction from the sample means doubles the level: at a
      nominal 5% such a test rejects about 10% of the time when the two
      experiments do not differ.)
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
    alternative : {"two-sided", "greater", "less"}, default "two-sided"
        The alternative of the U test; a one-sided one only with a direction
        fixed in advance (``None`` is read as ``"two-sided"``).
    ddof : int, default 0
        Delta degrees of freedom of the reported STDEV (``std_a``,
        ``std_b``): 0, the population SD of Qian et al.'s tables; 1, the
        sample SD. Cohen's d uses the sample SDs whatever ``ddof``.

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
    ('two-sided', 0.0022, 'huge')
    >>> round(compare_runs(base, debiased, alternative="greater").u_pvalue, 4)  # direction fixed in advance
    0.0011
    """
    x = _as_values(a, "a")
    y = _as_values(b, "b")
    ddof = _check_ddof(ddof)
    if alternative is None:
        alternative = "two-sided"
    elif alternative not in ("greater", "less", "two-sided"):
        raise ValueError(f"alternative must be 'greater', 'less', 'two-sided' or None, got {alternative!r}")
    from scipy import stats as _st  # imported where used: scipy.stats costs start-up time

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
        float(x.mean()), float(y.mean()), _std(x, ddof), _std(y, ddof), float(np.ptp(x)), float(np.ptp(y)),
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
        One row per metric: ``n_runs, mean, max, min, maxdiff`` (max - min),
        ``std`` (STDEV: the population SD, ddof=0, unless another ``ddof``
        was asked), ``ci_low, ci_high``, and ``undefined``: why the
        statistics that are NaN are undefined (fewer than two runs where the
        metric is defined), empty otherwise.
    by_class : pandas.DataFrame or None
        The same per (metric, class), over the runs where that class's value is
        defined (``n_runs`` says how many); ``None`` without per-class input.
    per_class_max : pandas.DataFrame or None
        Per metric, every statistic of *the one class* with the largest
        ``maxdiff`` (the first in class order on ties), and that ``class``:
        the "Per-class" columns of Qian et al.'s tables (App. D.1, Table 4),
        which print the Mean, Max, Min, MaxDiff and STDEV of one class, not
        each statistic's own maximum over classes.
    level : float
    method : str
    ddof : int
        The delta degrees of freedom of ``std`` (0: population SD).

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
    ddof: int = 0

    def to_frame(self) -> pd.DataFrame:
        """``overall``: one row per metric (``n_runs, mean, max, min, maxdiff, std, ci_low, ci_high, undefined``)."""
        return self.overall.copy()

    def __repr__(self) -> str:
        return (f"RunSummary(level={self.level:g}, method={self.method!r}, ddof={self.ddof})\n"
                f"{self.overall.to_string()}")


def _summarise(frame: pd.DataFrame, level: float, method: str, random_state: Any, ddof: int) -> pd.DataFrame:
    rows = {}
    for col in frame.columns:
        v = frame[col].to_numpy(dtype=np.float64)
        v = v[np.isfinite(v)]
        row = {"n_runs": len(v), "mean": np.nan, "max": np.nan, "min": np.nan, "maxdiff": np.nan, "std": np.nan,
               "ci_low": np.nan, "ci_high": np.nan, "undefined": ""}
        if len(v) >= 2:
            _check_magnitude(v, f"runs[{col!r}]")
        if len(v):
            row.update(mean=float(v.mean()), max=float(v.max()), min=float(v.min()), maxdiff=float(np.ptp(v)))
        if len(v) >= 2:
            row["std"] = _std(v, ddof)
            row["ci_low"], row["ci_high"] = confidence_interval(v, level=level, method=method,
                                                                random_state=random_state)
        elif len(v) == 1:
            row["undefined"] = "one defined run: std and the interval need two"
        else:
            row["undefined"] = "no run where it is defined"
        rows[col] = row
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index.name = "metric"
    return out


def _is_per_class_result(run: Any) -> bool:
    """A result with an ``overall`` mapping and a per-class ``by_class`` table (e.g. a FairnessResult)."""
    return isinstance(getattr(run, "overall", None), Mapping) and isinstance(getattr(run, "by_class", None),
                                                                             pd.DataFrame)


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
    runs: Any, *, level: float = 0.95, method: str = "t", random_state: Any = None, ddof: int = 0
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
    ddof : int, default 0
        Delta degrees of freedom of STDEV: 0, the population SD that Qian et
        al.'s tables print (their code's ``np.std``); 1, the sample SD.

    Returns
    -------
    RunSummary
        ``.overall`` (one row per metric), ``.by_class`` (per metric and class,
        when the runs carry per-class values) and ``.per_class_max`` (per
        metric, the statistics of the class with the largest MaxDiff).

    Raises
    ------
    ValueError
        Fewer than two runs, or runs of different kinds.

    Notes
    -----
    For each metric, :math:`\text{maxdiff} = \max_r x_r - \min_r x_r` and
    STDEV is :math:`\sqrt{\sum_r (x_r - \bar x)^2 / (R - \text{ddof})}`
    over the R runs r, by default the population standard deviation
    (ddof=0), as Qian et al. print it (:ref:`def-compare-runs`). A per-class
    value that is undefined in some runs is summarised over the other runs;
    ``n_runs`` says how many, and statistics needing 2 values are NaN below
    that. The per-class columns (``per_class_max``) are those of one class,
    the one with the largest MaxDiff; MaxDiffs equal to :math:`10^{-9}`
    relative are ties (floating-point noise of equal differences), and the
    first class in order wins a tie. Measured on the authors' released
    per-run values: the paper's Table 4 and the released table of every
    metric are reproduced to the printed rounding (docs/fairness.md).

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
    level = _check_level(level)
    if method not in _CI_METHODS:
        raise ValueError(f"method must be one of {_CI_METHODS}, got {method!r}")
    ddof = _check_ddof(ddof)
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
        if all(_is_per_class_result(r) for r in runs):  # e.g. FairnessResult
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
    overall = _summarise(overall_frame, level, method, random_state, ddof)
    by_class = per_class_max = None
    if by_class_frame is not None:
        metrics = [c for c in by_class_frame.columns if c not in ("class", "run")]
        parts = []
        for cls_, sub in by_class_frame.groupby("class", sort=False):
            part = _summarise(sub[metrics], level, method, random_state, ddof)
            part["class"] = cls_
            parts.append(part.reset_index())
        by_class = (pd.concat(parts, ignore_index=True).set_index(["metric", "class"])
                    .sort_index(level=0, sort_remaining=False))
        by_class = by_class.loc[metrics]
        per_class_max = _class_of_largest_maxdiff(by_class, metrics)
    return RunSummary(overall, by_class, per_class_max, level, method, ddof)


#: MaxDiffs within this relative distance of the largest are ties (floating-point noise of equal differences)
_TIE_RTOL = 1e-9


def _class_of_largest_maxdiff(by_class: pd.DataFrame, metrics: list) -> pd.DataFrame:
    """Per metric, the ``by_class`` row of the class with the largest MaxDiff (the first on ties), with its class."""
    rows = {}
    for metric in metrics:
        part = by_class.loc[metric]
        maxdiff = part["maxdiff"].to_numpy(dtype=np.float64)
        defined = np.isfinite(maxdiff)
        if not defined.any():
            row: dict = dict.fromkeys(part.columns, np.nan)
            rows[metric] = {"class": None, **row, "n_runs": 0, "undefined": "no class where MaxDiff is defined"}
            continue
        top = maxdiff[defined].max()
        first = int(np.flatnonzero(defined & (maxdiff >= top - _TIE_RTOL * abs(top)))[0])
        rows[metric] = {"class": part.index[first], **part.iloc[first].to_dict()}
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index.name = "metric"
    return out
