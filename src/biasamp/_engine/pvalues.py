"""Tests of "no effect" on count tables, and multiplicity adjustment.

Pure functions of small integer count arrays, vectorized over any leading axes
(one test per class, per pair, ...):

* :func:`independence_test`: is a binary outcome (e.g. "predicted as class
  k") independent of the group? G-test (likelihood-ratio chi-square) when every
  expected count is large enough, otherwise Fisher's exact test with fixed
  margins: exact for two groups, Monte-Carlo for more;
* :func:`mcnemar_exact`: exact McNemar test of a paired binary change from its
  two discordant counts;
* :func:`adjust_pvalues`: Holm or Benjamini-Hochberg adjustment of a family of
  p-values;
* :func:`global_p_value`: Holm/Bonferroni test of the global null hypothesis
  "no effect anywhere".

Counts must be integers: a table built from soft predictions (expected counts)
is not a sample of counts and these tests do not apply to it.

References
----------
.. [1] A. Agresti. *Categorical Data Analysis*, 2nd ed. Wiley, 2002. §3.2
   (likelihood-ratio statistic G²), §3.5 (exact conditional tests, Fisher's
   test and its r x c extension), §10.1 (McNemar's test).
.. [2] G. H. Freeman, J. H. Halton. "Note on an exact treatment of contingency,
   goodness of fit and other problems of significance". Biometrika 38, 1951.
.. [3] B. Phipson, G. K. Smyth. "Permutation p-values should never be zero".
   Statistical Applications in Genetics and Molecular Biology 9(1), 2010.
.. [4] S. Holm. "A simple sequentially rejective multiple test procedure".
   Scandinavian Journal of Statistics 6, 1979.
.. [5] Y. Benjamini, Y. Hochberg. "Controlling the false discovery rate".
   Journal of the Royal Statistical Society B 57, 1995.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from biasamp._core.results import ResultMixin

__all__ = [
    "TestResult",
    "adjust_pvalues",
    "global_p_value",
    "independence_test",
    "mcnemar_exact",
]

#: Two table probabilities within this relative tolerance are ties (R's
#: ``fisher.test`` uses the same ``1 + 1e-7``), in the exact and Monte-Carlo branches alike.
_REL_TIE = 1e-7
#: Number of array elements handled at once by the exact and Monte-Carlo loops (bounds memory).
_BLOCK = 1 << 20
#: numpy's hypergeometric sampler needs fewer than 10**9 items in the urn.
_MAX_MC_TOTAL = 10**9 - 1
#: Largest table total tested exactly: scipy's hypergeometric pmf costs about 0.1 ms an evaluation at 10**8
#: observations and 1 s at 10**12 (one sample weight of 10**12 made an audit run for hours).
_MAX_EXACT_TOTAL = 10**8
_ADJUST_METHODS = ("holm", "bh", "none")


@dataclass(frozen=True, eq=False)
class TestResult(ResultMixin):
    """Result of a vectorized test: one entry per table (leading axes of the input).

    Attributes
    ----------
    statistic : ndarray of float
        Test statistic (see the function that produced it); NaN where undefined.
    p_value : ndarray of float
        p-value in [0, 1]; NaN where undefined.
    method : ndarray of str
        How each p-value was obtained, e.g. ``"g-test"``, ``"fisher-exact"``,
        ``"monte-carlo"``, ``"mcnemar-exact"``, ``"degenerate"`` (nothing can
        differ, p = 1) or ``"undefined"``.
    defined : ndarray of bool
        False where the test is undefined (``statistic`` and ``p_value`` NaN).
    """

    __test__ = False  # not a pytest test class despite its name

    statistic: np.ndarray
    p_value: np.ndarray
    method: np.ndarray
    defined: np.ndarray

    def __post_init__(self) -> None:
        for name in ("statistic", "p_value", "method", "defined"):
            arr = np.array(getattr(self, name))  # own read-only copy (0-d arrays, not numpy scalars)
            arr.flags.writeable = False
            object.__setattr__(self, name, arr)

    def to_frame(self) -> pd.DataFrame:
        """One row per table (leading axes flattened in C order)."""
        return pd.DataFrame(
            {
                "statistic": self.statistic.ravel(),
                "p_value": self.p_value.ravel(),
                "method": self.method.ravel(),
                "defined": self.defined.ravel(),
            }
        )

    def __repr__(self) -> str:
        if self.p_value.ndim == 0:
            return (
                f"TestResult(statistic={float(self.statistic):.6g}, p_value={float(self.p_value):.6g}, "
                f"method={str(self.method)!r}, defined={bool(self.defined)})"
            )
        return (
            f"TestResult(shape={self.p_value.shape}, n_defined={int(self.defined.sum())},\n"
            f"  statistic={np.array2string(self.statistic, precision=4)},\n"
            f"  p_value={np.array2string(self.p_value, precision=4)},\n"
            f"  method={np.array2string(self.method)})"
        )


# --------------------------------------------------------------------------- #
# validation
# --------------------------------------------------------------------------- #
def _as_counts(value: Any, name: str) -> np.ndarray:
    """Non-negative integer counts as int64; floats within 1e-9 of an integer are accepted."""
    try:
        arr = np.asarray(value)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"{name} must be an array of counts, got {type(value).__name__}") from exc
    if arr.dtype.kind == "O":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must hold numbers (counts), got non-numeric values") from exc
    if arr.dtype.kind == "b":
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold numbers (counts), got dtype {arr.dtype}")
    if arr.dtype.kind == "f":
        if not np.isfinite(arr).all():
            raise ValueError(f"{name} contains non-finite counts (NaN or inf)")
        if (arr < 0).any():
            raise ValueError(f"{name} contains negative counts (e.g. {arr[arr < 0].flat[0]!r})")
        off = np.abs(arr - np.round(arr)) > 1e-9
        if off.any():
            raise ValueError(
                f"{name} contains non-integer counts (e.g. {arr[off].flat[0]!r}): "
                "tests need integer counts (hard predictions)"
            )
        if (arr > 2.0**53).any():
            raise ValueError(f"{name} contains counts above 2**53, which floats cannot hold exactly")
        return np.round(arr).astype(np.int64)
    if (arr < 0).any():
        raise ValueError(f"{name} contains negative counts (e.g. {arr[arr < 0].flat[0]!r})")
    return arr.astype(np.int64)


def _check_random_state(random_state: Any) -> Any:
    from biasamp._engine.resample import check_random_state

    return check_random_state(random_state)


def _check_positive_int(value: Any, name: str) -> int:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _check_min_expected(value: Any) -> float:
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or not float(value) >= 0:
        raise ValueError(f"min_expected must be a non-negative number (inf allowed), got {value!r}")
    return float(value)


def _check_pvalues(p: Any) -> np.ndarray:
    try:
        arr = np.asarray(p, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError("p must be a 1-D array of p-values (numbers in [0, 1] or NaN)") from exc
    if arr.ndim != 1:
        raise ValueError(f"p must be 1-D, got an array of shape {arr.shape}")
    bad = ~np.isnan(arr) & ~((arr >= 0) & (arr <= 1))
    if bad.any():
        raise ValueError(f"p must hold p-values in [0, 1] (or NaN), got {arr[bad][0]!r}")
    return arr


# --------------------------------------------------------------------------- #
# independence of a binary outcome and the group
# --------------------------------------------------------------------------- #
def _g_statistic(x: np.ndarray, r: np.ndarray, c1: np.ndarray, n: np.ndarray) -> np.ndarray:
    """G = 2 Σ_cells [O ln(O/E) − O + E] over (..., G) rows; empty rows add 0."""
    n_f = n.astype(np.float64)[..., None]
    r_f = r.astype(np.float64)
    e1 = r_f * c1[..., None] / n_f
    e0 = r_f * (n - c1)[..., None] / n_f
    # Σ(E − O) = 0, so this is 2 Σ O ln(O/E); each term is ≥ 0 (no cancellation in the sum)
    g = 2.0 * (special.kl_div(x, e1) + special.kl_div(r - x, e0)).sum(axis=-1)
    return np.maximum(g, 0.0)


def _fisher_two_rows(a: np.ndarray, n1: np.ndarray, n2: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Two-sided Fisher p-value of the 2 x 2 tables [[n1 − a, a], [n2 − k + a, k − a]].

    Under H0, ``a`` ~ Hypergeometric(N = n1 + n2, n1, k); p = Σ P(j) over the
    support j with P(j) ≤ P(a)(1 + 1e-7). The ragged supports of all tables are
    laid end to end and summed block by block (bincount), so memory stays bounded.
    """
    from scipy import stats  # imported where used: scipy.stats costs start-up time

    n = n1 + n2
    lo = np.maximum(0, k - n2)
    width = np.minimum(n1, k) - lo + 1
    threshold = stats.hypergeom.pmf(a, n, n1, k) * (1.0 + _REL_TIE)
    starts = np.cumsum(width) - width
    total = int(width.sum())
    p = np.zeros(a.shape[0])
    for begin in range(0, total, _BLOCK):
        e = np.arange(begin, min(total, begin + _BLOCK))
        t = np.searchsorted(starts, e, side="right") - 1
        pmf = stats.hypergeom.pmf(lo[t] + (e - starts[t]), n[t], n1[t], k[t])
        p += np.bincount(t, weights=np.where(pmf <= threshold[t], pmf, 0.0), minlength=p.shape[0])
    return np.minimum(p, 1.0)


def _canonical_tables(x: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows sorted by (total, count) in the column orientation with the smaller total.

    Permuting rows or swapping the two columns of a table gives the same
    canonical table, hence the same Monte-Carlo draws for a given seed.
    """
    n = r.sum(axis=-1)
    c1 = x.sum(axis=-1)
    base = (n + 1)[:, None]
    key1 = np.sort(r * base + x, axis=-1)
    key0 = np.sort(r * base + (r - x), axis=-1)
    first_diff = (key1 != key0).argmax(axis=-1)[:, None]
    key0_smaller = np.take_along_axis(key0, first_diff, -1)[:, 0] < np.take_along_axis(key1, first_diff, -1)[:, 0]
    use0 = (n - c1 < c1) | ((n - c1 == c1) & key0_smaller)
    keys = np.where(use0[:, None], key0, key1)
    return keys % base, keys // base


def _row_log_weight(x: np.ndarray, r: np.ndarray) -> np.ndarray:
    """ln x! + ln (r − x)!: −ln P(table) = Σ_rows of this + a constant fixed by the margins."""
    return special.gammaln(x + 1.0) + special.gammaln(r - x + 1.0)


def _monte_carlo_pvalue(x: np.ndarray, r: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Monte-Carlo Fisher-Freeman-Halton p-value of (T, G) tables (outcome-1 counts ``x``, row totals ``r``).

    Tables with the observed margins are drawn under H0 (multivariate
    hypergeometric, as sequential hypergeometric draws over the rows); a draw
    is at least as extreme as the observed table when its null probability is
    at most (1 + 1e-7) times the observed one; p = (1 + #extreme) / (1 + B).
    """
    if (r.sum(axis=-1) > _MAX_MC_TOTAL).any():
        raise ValueError(
            "table: the Monte-Carlo test (more than two groups with an expected count below min_expected) "
            f"supports at most {_MAX_MC_TOTAL} observations per table"
        )
    x, r = _canonical_tables(x, r)
    n_tables, n_rows = x.shape
    # S = −ln P(draw) + ln P(observed), built row by row from terms centred on the observed
    # row, so the observed table scores exactly 0 and row permutations of it tie exactly.
    observed = _row_log_weight(x, r)
    tolerance = np.log1p(_REL_TIE)
    remaining_rows = r.sum(axis=-1, keepdims=True) - np.cumsum(r, axis=-1)  # urn after each row
    n_extreme = np.zeros(n_tables)
    total = n_tables * n_resamples
    step = max(1, _BLOCK // n_rows)
    for begin in range(0, total, step):
        t = np.arange(begin, min(total, begin + step)) // n_resamples
        left = x.sum(axis=-1)[t]
        score = np.zeros(t.shape[0])
        for i in range(n_rows - 1):  # tiny loop over groups
            drawn = rng.hypergeometric(r[t, i], remaining_rows[t, i], left)
            left = left - drawn
            score += _row_log_weight(drawn, r[t, i]) - observed[t, i]
        score += _row_log_weight(left, r[t, -1]) - observed[t, -1]
        n_extreme += np.bincount(t, weights=score >= -tolerance, minlength=n_tables)
    return (1.0 + n_extreme) / (1.0 + n_resamples)


def independence_test(
    table: Any, *, random_state: Any = None, n_resamples: int = 9999, min_expected: float = 5.0
) -> TestResult:
    r"""Test that a binary outcome is independent of the group, for each table.

    Parameters
    ----------
    table : array-like of int, shape (..., n_groups, 2)
        Counts: rows are groups, columns are ``[outcome 0, outcome 1]`` (e.g.
        not predicted / predicted as one class). Leading axes index separate
        tables (classes, pairs, ...), each tested on its own.
    random_state : None, int or numpy Generator, default=None
        Seed of the Monte-Carlo branch (used only for tables that need it).
        ``None`` draws fresh entropy; an int or a Generator makes the result
        reproducible for the same input.
    n_resamples : int, default=9999
        Number of Monte-Carlo tables.
    min_expected : float, default=5.0
        Smallest expected count for which the chi-square approximation is used.
        ``0`` always uses the G-test, ``numpy.inf`` always the exact or
        Monte-Carlo test.

    Returns
    -------
    TestResult
        Arrays shaped like the leading axes of ``table``: ``statistic`` (G),
        ``p_value``, ``method`` and ``defined``.

    Raises
    ------
    ValueError
        If ``table`` holds negative, non-finite or non-integer counts, or its
        last dimension is not 2; if ``n_resamples`` or ``min_expected`` is
        invalid; if ``random_state`` is a negative int.
    TypeError
        If ``table`` is not numeric, or ``random_state`` is of another type.

    Notes
    -----
    Rows with total 0 (empty groups) are ignored. With row totals
    :math:`r_i`, column totals :math:`c_j`, :math:`N = \sum_i r_i` and expected
    counts :math:`E_{ij} = r_i c_j / N`, the statistic is

    .. math:: G = 2 \sum_{ij} O_{ij} \ln(O_{ij} / E_{ij}), \qquad 0 \ln 0 = 0,

    reported for every defined table whatever the method of its p-value:

    * fewer than 2 non-empty rows: undefined (``statistic`` and ``p_value``
      NaN, ``method="undefined"``);
    * a column total of 0 (no one, or everyone, has outcome 1): all rates are
      equal, ``statistic=0``, ``p_value=1``, ``method="degenerate"``;
    * every :math:`E_{ij} \geq` ``min_expected``: G-test,
      :math:`p = P(\chi^2_{k-1} \geq G)` with :math:`k` non-empty rows;
    * otherwise, Fisher's exact test conditional on both margins. Tables are
      ordered by their null probability
      :math:`P(O) = \prod_i \binom{r_i}{O_{i1}} / \binom{N}{c_1}`, and
      :math:`p = P_{H_0}(P(O^*) \leq (1 + 10^{-7}) P(O))`. With 2 non-empty rows
      it is summed exactly over the hypergeometric support (``"fisher-exact"``;
      the support has at most :math:`\min(r_1, r_2, c_0, c_1) + 1` points).
      With more rows (Freeman-Halton extension) it is estimated from
      ``n_resamples`` tables :math:`O^*` drawn with the observed margins,
      :math:`p = (1 + \#\{\text{draws at least as extreme}\}) / (1 +` ``n_resamples``
      :math:`)` (``"monte-carlo"``), a valid p-value for any ``n_resamples``.
      A table of 2 non-empty rows and more than :math:`10^8` observations
      (only sample weights make one) gets the G-test whatever its expected
      counts: the exact sum's cost grows with the total (bounded cost).
      Rows are put in a canonical order first, so permuting rows or swapping
      the two columns does not change the Monte-Carlo p-value for a given
      seed. The draws of one call come from one stream: a table's Monte-Carlo
      p-value can differ, within Monte-Carlo error, when it is tested in a
      different batch of tables.

    References
    ----------
    .. [1] A. Agresti. *Categorical Data Analysis*, 2nd ed. Wiley, 2002,
       §3.2.1 (G²), §3.5 (exact conditional tests).
    .. [2] G. H. Freeman, J. H. Halton. Biometrika 38, 1951 (r x c exact test).
    .. [3] B. Phipson, G. K. Smyth. Stat. Appl. Genet. Mol. Biol. 9(1), 2010
       (Monte-Carlo p-values (1 + b) / (1 + B)).

    Examples
    --------
    Two groups of 100 predicted positive at rates 0.30 and 0.50 (large
    counts: G-test):

    >>> from biasamp._engine.pvalues import independence_test
    >>> independence_test([[70, 30], [50, 50]])
    TestResult(statistic=8.40237, p_value=0.00374732, method='g-test', defined=True)

    Small counts use Fisher's exact test (here Fisher's "lady tasting tea"):

    >>> res = independence_test([[3, 1], [1, 3]])
    >>> str(res.method), round(float(res.p_value), 4)
    ('fisher-exact', 0.4857)

    One table per class (leading axis); three groups with small counts need
    the Monte-Carlo test; a class nobody is predicted as is degenerate:

    >>> tables = [[[9, 1], [5, 5], [2, 8]], [[10, 0], [10, 0], [10, 0]]]
    >>> res = independence_test(tables, random_state=0)
    >>> res.method.tolist()
    ['monte-carlo', 'degenerate']
    >>> res.p_value.round(2).tolist()
    [0.01, 1.0]
    """
    counts = _as_counts(table, "table")
    if counts.ndim < 2 or counts.shape[-1] != 2:
        raise ValueError(
            "table must have shape (..., n_groups, 2): rows are groups, columns [outcome 0, outcome 1]; "
            f"got shape {counts.shape}"
        )
    _check_random_state(random_state)
    n_resamples = _check_positive_int(n_resamples, "n_resamples")
    min_expected = _check_min_expected(min_expected)

    lead, n_groups = counts.shape[:-2], counts.shape[-2]
    flat = counts.reshape(math.prod(lead), n_groups, 2)
    x = flat[..., 1]
    r = flat.sum(axis=-1)
    c1 = x.sum(axis=-1)
    n = r.sum(axis=-1)
    n_rows = (r > 0).sum(axis=-1)

    defined = n_rows >= 2
    degenerate = defined & ((c1 == 0) | (c1 == n))
    statistic = np.full(flat.shape[0], np.nan)
    p_value = np.full(flat.shape[0], np.nan)
    method = np.full(flat.shape[0], "undefined", dtype="<U13")
    statistic[degenerate], p_value[degenerate], method[degenerate] = 0.0, 1.0, "degenerate"

    idx = np.flatnonzero(defined & ~degenerate)
    if idx.size:
        xr, rr, c1r, nr, kr = x[idx], r[idx], c1[idx], n[idx], n_rows[idx]
        statistic[idx] = _g_statistic(xr, rr, c1r, nr)
        e_min = rr * np.minimum(c1r, nr - c1r)[:, None] / nr[:, None].astype(np.float64)
        small = ((rr > 0) & (e_min < min_expected)).any(axis=-1)
        small &= ~((kr == 2) & (nr > _MAX_EXACT_TOTAL))  # the exact sum's cost grows with the total

        from scipy import stats

        g_test = idx[~small]
        p_value[g_test] = stats.chi2.sf(statistic[g_test], kr[~small] - 1)
        method[g_test] = "g-test"

        two = small & (kr == 2)
        if two.any():
            pair = np.argsort(rr[two] == 0, axis=-1, kind="stable")[:, :2]  # the two non-empty rows
            r_pair = np.take_along_axis(rr[two], pair, -1)
            a = np.take_along_axis(xr[two], pair[:, :1], -1)[:, 0]
            p_value[idx[two]] = _fisher_two_rows(a, r_pair[:, 0], r_pair[:, 1], c1r[two])
            method[idx[two]] = "fisher-exact"

        many = small & (kr > 2)
        if many.any():
            from biasamp._engine.resample import generator

            rng = generator(random_state)
            p_value[idx[many]] = _monte_carlo_pvalue(xr[many], rr[many], n_resamples, rng)
            method[idx[many]] = "monte-carlo"

    return TestResult(
        statistic=statistic.reshape(lead),
        p_value=p_value.reshape(lead),
        method=method.reshape(lead),
        defined=defined.reshape(lead),
    )


# --------------------------------------------------------------------------- #
# paired binary outcomes
# --------------------------------------------------------------------------- #
def mcnemar_exact(b: Any, c: Any) -> TestResult:
    r"""Exact two-sided McNemar test from the discordant counts, vectorized.

    Parameters
    ----------
    b, c : array-like of int
        Discordant counts of paired binary outcomes, e.g. within a group,
        #(true 1, predicted 0) and #(true 0, predicted 1). Broadcast together.

    Returns
    -------
    TestResult
        Arrays of the broadcast shape: ``statistic`` = :math:`\min(b, c)`,
        ``p_value``, ``method`` (``"mcnemar-exact"``, or ``"degenerate"`` where
        :math:`b + c = 0`) and ``defined`` (always True).

    Raises
    ------
    ValueError
        If ``b`` or ``c`` holds negative, non-finite or non-integer counts, or
        their shapes do not broadcast.
    TypeError
        If ``b`` or ``c`` is not numeric.

    Notes
    -----
    Under H0 (both kinds of change equally likely), conditionally on
    :math:`n = b + c`, :math:`b \sim \mathrm{Binomial}(n, 1/2)`, so

    .. math:: p = \min\left(1, 2\, F_{\mathrm{Bin}(n, 1/2)}(\min(b, c))\right),

    and :math:`p = 1` when :math:`n = 0` (no discordant pair).

    References
    ----------
    .. [1] Q. McNemar. "Note on the sampling error of the difference between
       correlated proportions or percentages". Psychometrika 12, 1947.
    .. [2] A. Agresti. *Categorical Data Analysis*, 2nd ed. Wiley, 2002, §10.1.

    Examples
    --------
    >>> from biasamp._engine.pvalues import mcnemar_exact
    >>> res = mcnemar_exact([10, 3, 0], [2, 3, 0])
    >>> res.p_value.round(4).tolist()
    [0.0386, 1.0, 1.0]
    >>> res.method.tolist()
    ['mcnemar-exact', 'mcnemar-exact', 'degenerate']
    """
    b_arr = _as_counts(b, "b")
    c_arr = _as_counts(c, "c")
    try:
        b_arr, c_arr = np.broadcast_arrays(b_arr, c_arr)
    except ValueError as exc:
        raise ValueError(f"b and c must have broadcastable shapes, got {b_arr.shape} and {c_arr.shape}") from exc
    n = b_arr + c_arr
    low = np.minimum(b_arr, c_arr)
    from scipy import stats

    tail = stats.binom.cdf(low, np.maximum(n, 1), 0.5)
    p_value = np.where(n > 0, np.minimum(1.0, 2.0 * tail), 1.0)
    method = np.where(n > 0, "mcnemar-exact", "degenerate").astype("<U13")
    return TestResult(
        statistic=low.astype(np.float64),
        p_value=np.asarray(p_value, dtype=np.float64),
        method=np.asarray(method),
        defined=np.ones(n.shape, dtype=bool),
    )


# --------------------------------------------------------------------------- #
# multiplicity
# --------------------------------------------------------------------------- #
def adjust_pvalues(p: Any, *, method: str = "holm") -> np.ndarray:
    r"""Adjust a family of p-values for multiple testing.

    Parameters
    ----------
    p : array-like of float, shape (m,)
        Raw p-values in [0, 1]; NaN entries (undefined tests) stay NaN and are
        not counted in the family size :math:`m`.
    method : {"holm", "bh", "none"}, default="holm"
        ``"holm"``: Holm's step-down adjustment (controls the family-wise error
        rate); ``"bh"``: Benjamini-Hochberg step-up adjustment (controls the
        false discovery rate under independence or positive dependence);
        ``"none"``: the raw p-values.

    Returns
    -------
    ndarray of float, shape (m,)
        Adjusted p-values, in the input order, each at least its raw p-value
        and at most 1.

    Raises
    ------
    ValueError
        If ``method`` is unknown, or ``p`` is not 1-D or holds values outside
        [0, 1] (other than NaN).
    TypeError
        If ``p`` is not numeric.

    Notes
    -----
    With the defined p-values sorted, :math:`p_{(1)} \leq \dots \leq p_{(m)}`:

    .. math::

        \tilde p^{\mathrm{Holm}}_{(i)} = \max_{j \leq i} \min\{1, (m - j + 1)\, p_{(j)}\},
        \qquad
        \tilde p^{\mathrm{BH}}_{(i)} = \min_{j \geq i} \min\{1, m\, p_{(j)} / j\}.

    Both are monotone in the sorted order; rejecting where the adjusted
    p-value is at most :math:`\alpha` is the corresponding procedure at level
    :math:`\alpha`.

    References
    ----------
    .. [1] S. Holm. "A simple sequentially rejective multiple test procedure".
       Scandinavian Journal of Statistics 6, 1979.
    .. [2] Y. Benjamini, Y. Hochberg. "Controlling the false discovery rate: a
       practical and powerful approach to multiple testing". JRSS B 57, 1995.

    Examples
    --------
    >>> import numpy as np
    >>> from biasamp._engine.pvalues import adjust_pvalues
    >>> adjust_pvalues([0.01, 0.04, 0.03, np.nan], method="holm").tolist()
    [0.03, 0.06, 0.06, nan]
    >>> adjust_pvalues([0.01, 0.04, 0.03, np.nan], method="bh").round(4).tolist()
    [0.03, 0.04, 0.04, nan]
    """
    if not isinstance(method, str) or method not in _ADJUST_METHODS:
        raise ValueError(f"method must be one of {_ADJUST_METHODS}, got {method!r}")
    arr = _check_pvalues(p)
    out = np.full(arr.shape, np.nan)
    ok = ~np.isnan(arr)
    raw = arr[ok]
    m = raw.size
    if method == "none" or m == 0:
        out[ok] = raw
        return out
    order = np.argsort(raw, kind="stable")
    sorted_p = raw[order]
    if method == "holm":
        adjusted = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * sorted_p))
    else:
        adjusted = np.minimum.accumulate((sorted_p * m / np.arange(1, m + 1))[::-1])[::-1]
    adjusted = np.minimum(np.maximum(adjusted, sorted_p), 1.0)  # guards against rounding only
    back = np.empty(m)
    back[order] = adjusted
    out[ok] = back
    return out


def global_p_value(p: Any) -> float:
    r"""p-value of the global null hypothesis "no effect in any test of the family".

    Parameters
    ----------
    p : array-like of float, shape (m,)
        Raw p-values in [0, 1]; NaN entries (undefined tests) are ignored.

    Returns
    -------
    float
        :math:`\min(1, m \min_i p_i)` over the :math:`m` defined p-values (the
        smallest Holm-adjusted p-value: Bonferroni's test of the intersection
        null); NaN when no p-value is defined.

    Raises
    ------
    ValueError
        If ``p`` is not 1-D or holds values outside [0, 1] (other than NaN).

    Notes
    -----
    Rejecting the global null when this p-value is at most :math:`\alpha`
    has level :math:`\alpha` under any dependence between the tests, and
    agrees with Holm's procedure rejecting at least one hypothesis.

    References
    ----------
    .. [1] S. Holm. Scandinavian Journal of Statistics 6, 1979.

    Examples
    --------
    >>> import numpy as np
    >>> from biasamp._engine.pvalues import global_p_value
    >>> global_p_value([0.01, 0.04, 0.03, np.nan])
    0.03
    """
    arr = _check_pvalues(p)
    ok = arr[~np.isnan(arr)]
    if ok.size == 0:
        return float("nan")
    return float(min(1.0, ok.size * ok.min()))
