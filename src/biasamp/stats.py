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
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse, stats as _st

from ._results import ResultMixin, fmt
from .counts import CooccurrenceCounts
from .exceptions import UndefinedPairWarning
from .labels import LabelMatrix, _from_tensor

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
def _as_values(values: Any, name: str, min_size: int = 2) -> np.ndarray:
    if values is None or isinstance(values, (str, bytes)) or np.isscalar(values):
        raise TypeError(f"{name} must be a 1-D array-like of numbers, got {type(values).__name__}")
    if isinstance(values, (pd.Series, pd.DataFrame)):
        values = values.to_numpy()
    else:
        values = _from_tensor(values)
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must hold numbers") from None
    if arr.ndim != 1:
        arr = arr.squeeze()
        if arr.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {np.shape(values)}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or inf values")
    if len(arr) < min_size:
        raise ValueError(f"{name} needs at least {min_size} values, got {len(arr)}")
    return arr


def _check_level(level: float) -> float:
    if not isinstance(level, (int, float, np.floating)) or not 0 < float(level) < 1:
        raise ValueError(f"level must be a number in (0, 1), got {level!r}")
    return float(level)


def _check_n_boot(n_boot: int) -> int:
    if not isinstance(n_boot, (int, np.integer)) or isinstance(n_boot, bool) or n_boot < 2:
        raise ValueError(f"n_boot must be an integer >= 2, got {n_boot!r}")
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
        rng = np.random.default_rng(random_state)
        means = np.empty(n_boot)
        chunk = max(1, 10_000_000 // n)
        for start in range(0, n_boot, chunk):
            stop = min(n_boot, start + chunk)
            means[start:stop] = x[rng.integers(0, n, size=(stop - start, n))].mean(axis=1)
        low, high = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    low, high = float(low), float(high)
    if bounds is not None:
        lo_b, hi_b = bounds
        low, high = min(max(low, lo_b), hi_b), min(max(high, lo_b), hi_b)
    return low, high


# --------------------------------------------------------------------------- #
# cells: the contingency table of distinct rows, resampled multinomially
# --------------------------------------------------------------------------- #
def _key_columns(m: LabelMatrix) -> list[np.ndarray]:
    """1-D columns that identify a row of one label matrix (bit-packed when 0/1)."""
    if m.codes is not None:
        return [m.codes]
    dense = m.dense
    if not m.soft:
        packed = np.packbits(dense.astype(bool, copy=False), axis=1)
        pad = (-packed.shape[1]) % 8
        if pad:
            packed = np.concatenate([packed, np.zeros((packed.shape[0], pad), dtype=np.uint8)], axis=1)
        words = np.ascontiguousarray(packed).view(np.uint64)
        return [words[:, j] for j in range(words.shape[1])]
    return [dense[:, j] for j in range(dense.shape[1])]


def _row_ids(columns: Sequence[np.ndarray]) -> np.ndarray:
    """An id per row, equal for equal rows (sequential factorization, no overflow)."""
    ids, uniq = pd.factorize(columns[0])
    ids = ids.astype(np.int64)
    for col in columns[1:]:
        codes, u = pd.factorize(col)
        ids, _ = pd.factorize(ids * len(u) + codes)
        ids = ids.astype(np.int64)
    return ids


def _cells_of(parts: Sequence[LabelMatrix | np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(representative row index, count) of every distinct row of ``parts``."""
    columns: list[np.ndarray] = []
    for p in parts:
        columns.extend(_key_columns(p) if isinstance(p, LabelMatrix) else [p])
    ids = _row_ids(columns)
    counts = np.bincount(ids)
    rep = np.empty(len(counts), dtype=np.int64)
    rep[ids[::-1]] = np.arange(len(ids) - 1, -1, -1)
    return rep, counts


def _rows(m: LabelMatrix, idx: np.ndarray) -> np.ndarray:
    """Rows ``idx`` of a label matrix as floats."""
    if m.codes is not None:
        out = np.zeros((len(idx), m.n_classes))
        out[np.arange(len(idx)), m.codes[idx]] = 1.0
        return out
    return np.asarray(m.dense[idx], dtype=np.float64)


@dataclass(frozen=True, eq=False)
class _Cells:
    """Distinct rows with their counts; replicate tables are ``Lᵀ diag(w) R``."""

    left: np.ndarray   # (C, wl)
    right: np.ndarray  # (C, wr)
    counts: np.ndarray  # (C,)

    @property
    def n(self) -> int:
        return int(self.counts.sum())

    def design(self) -> sparse.csr_matrix:
        """Row-wise Kronecker product: row c is vec(L_c ⊗ R_c), shape (C, wl*wr)."""
        left = sparse.csr_matrix(self.left)
        right = sparse.csr_matrix(self.right)
        wl, wr = self.left.shape[1], self.right.shape[1]
        a = sparse.kron(left, sparse.csr_matrix(np.ones((1, wr))), format="csr")
        b = sparse.kron(sparse.csr_matrix(np.ones((1, wl))), right, format="csr")
        return a.multiply(b).tocsr()

    def grams(self, weights: np.ndarray, design: sparse.csr_matrix | None = None) -> np.ndarray:
        """(B, wl, wr) tables for replicate cell counts ``weights`` (B, C)."""
        design = self.design() if design is None else design
        flat = np.asarray((design.T @ np.asarray(weights, dtype=np.float64).T).T)
        return flat.reshape(len(weights), self.left.shape[1], self.right.shape[1])

    def replicates(self, n_boot: int, rng: np.random.Generator) -> "np.ndarray":
        """Yield chunks of replicate grams (multinomial resampling of the cells)."""
        design = self.design()
        p = self.counts / self.counts.sum()
        chunk = max(1, min(n_boot, 4_000_000 // max(len(p), 1)))
        for start in range(0, n_boot, chunk):
            b = min(chunk, n_boot - start)
            yield self.grams(rng.multinomial(self.n, p, size=b), design)


def _fairness_cells(y_true: Any, y_pred: Any, sensitive_features: Any):
    from .fairness import _encode_groups, _encode_targets

    yt, yp = _encode_targets(y_true, y_pred, None)
    gcodes, groups, _ = _encode_groups(sensitive_features, yt.n_rows)
    n_groups, k = len(groups), yt.n_classes
    if yt.codes is not None and yp.codes is not None and n_groups * k * k <= max(4 * yt.n_rows, 1 << 20):
        joint = np.bincount((gcodes * k + yt.codes) * k + yp.codes, minlength=n_groups * k * k)
        cells = np.flatnonzero(joint)
        counts = joint[cells]
        g, t, p = cells // (k * k), (cells // k) % k, cells % k
        eye = np.eye(k)
        t_rows, p_rows = eye[t], eye[p]
    else:
        rep, counts = _cells_of([gcodes, yt, yp])
        g = gcodes[rep]
        t_rows, p_rows = _rows(yt, rep), _rows(yp, rep)
    left = np.eye(n_groups)[g]
    right = np.column_stack([np.ones(len(counts)), t_rows, p_rows, t_rows * p_rows])
    return _Cells(left, right, counts), yt.classes, groups


def _cooccurrence_cells(left: Sequence[LabelMatrix], right: Sequence[LabelMatrix]) -> _Cells:
    rep, counts = _cells_of([*left, *right])
    lrows = np.column_stack([np.ones(len(rep))] + [_rows(m, rep) for m in left])
    rrows = np.column_stack([np.ones(len(rep))] + [_rows(m, rep) for m in right])
    return _Cells(lrows, rrows, counts)


# --------------------------------------------------------------------------- #
# bootstrap
# --------------------------------------------------------------------------- #
@dataclass(frozen=True, eq=False, repr=False)
class BootstrapResult(ResultMixin):
    """Result of :func:`bootstrap`.

    Attributes
    ----------
    estimate : dict of str -> float
        The metric(s) on the full data.
    ci : dict of str -> (float, float)
        Confidence interval per statistic (see ``ci_method``).
    replicates : pandas.DataFrame
        One row per replicate, one column per statistic; NaN exactly where the
        statistic was undefined in that replicate (counted in ``n_undefined``).
    n_undefined : dict of str -> int
        Replicates in which the statistic was undefined; they are excluded from
        the percentiles.
    n_boot : int
    level : float
    ci_method : {"percentile", "basic"}
    """

    estimate: dict
    ci: dict
    replicates: pd.DataFrame
    n_undefined: dict
    n_boot: int
    level: float
    ci_method: str = "percentile"

    def _only(self) -> str:
        if len(self.estimate) != 1:
            raise ValueError(f"several statistics {list(self.estimate)}; name one")
        return next(iter(self.estimate))

    @property
    def value(self) -> float:
        """The estimate, when there is a single statistic."""
        return self.estimate[self._only()]

    def interval(self, statistic: str | None = None) -> tuple[float, float]:
        """``(low, high)`` of one statistic (optional when there is only one)."""
        return self.ci[statistic if statistic is not None else self._only()]

    def __repr__(self) -> str:
        lines = [f"BootstrapResult(n_boot={self.n_boot}, level={self.level:g}, {self.ci_method})"]
        for name, est in self.estimate.items():
            lo, hi = self.ci[name]
            extra = f", {self.n_undefined[name]} undefined replicates" if self.n_undefined[name] else ""
            lines.append(f"  {name:<6}= {fmt(est)}  CI [{fmt(lo)}, {fmt(hi)}]{extra}")
        return "\n".join(lines)


def _fairness_bootstrap(func, args, kwargs, n_boot, rng):
    from .fairness import METRICS, metric_arrays, _aggregate, _check_metrics

    names = dict(_fairness_functions())
    y_true, y_pred = _two_args(func, args, kwargs, ("y_true", "y_pred"))
    if "sensitive_features" not in kwargs:
        raise TypeError(f"{func.__name__} needs the keyword argument sensitive_features")
    sensitive_features = kwargs.pop("sensitive_features")
    metrics = _check_metrics(kwargs.pop("metrics", METRICS)) if names[func] is None else (names[func],)
    if kwargs:
        raise TypeError(f"unexpected keyword arguments for {func.__name__}: {sorted(kwargs)}")
    full = func(y_true, y_pred, sensitive_features=sensitive_features, **({"metrics": metrics} if names[func] is None else {}))
    estimate = dict(full.overall) if names[func] is None else {metrics[0]: float(full)}
    cells, classes, _ = _fairness_cells(y_true, y_pred, sensitive_features)
    k = len(classes)
    out = []
    for grams in cells.replicates(n_boot, rng):
        n = grams[:, :, 0]
        arrays = metric_arrays(
            n, grams[:, :, 1:1 + k], grams[:, :, 1 + k:1 + 2 * k], grams[:, :, 1 + 2 * k:], metrics
        )
        enough = (n > 0).sum(axis=1) >= 2
        cols = {}
        for m, (v, d) in arrays.items():
            mean, _ = _aggregate(v, d)
            cols[m] = np.where(enough, mean, np.nan)
        out.append(pd.DataFrame(cols))
    return estimate, pd.concat(out, ignore_index=True)


def _two_args(func, args, kwargs, names):
    values = list(args)
    for name in names[len(values):]:
        if name not in kwargs:
            raise TypeError(f"{func.__name__} needs {name}")
        values.append(kwargs.pop(name))
    if len(values) != len(names):
        raise TypeError(f"{func.__name__} takes {len(names)} positional label arguments, got {len(args)}")
    return values


def _cooccurrence_replicates(cells, template, n_boot, rng, value_of) -> list:
    """``value_of(counts)`` for every bootstrap replicate of a co-occurrence table.

    ``template`` (a :class:`~biasamp.CooccurrenceCounts`) gives the classes and
    roles of the replicate tables; a replicate in which every pair is
    undefined yields ``None``.
    """
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        for grams in cells.replicates(n_boot, rng):
            for gram in grams:
                rep = CooccurrenceCounts(template.attr_classes, template.task_classes, template.attr_roles,
                                         template.task_roles, gram, template.soft_roles)
                try:
                    rows.append(value_of(rep))
                except ValueError:  # every pair undefined in this replicate
                    rows.append(None)
    return rows


def _directional_bootstrap(func, args, kwargs, n_boot, rng):
    from .cooccurrence import _count_directional, directional_from_counts

    attr, task = _two_args(func, args, kwargs, ("attr", "task"))
    attr_pred, task_pred = kwargs.pop("attr_pred", None), kwargs.pop("task_pred", None)
    attr_train, task_train = kwargs.pop("attr_train", None), kwargs.pop("task_train", None)
    if kwargs:
        raise TypeError(f"unexpected keyword arguments for bias_amp_directional: {sorted(kwargs)}")
    # without a training set, y_at stays fixed from the full (un-resampled) test ground truth
    train, test, (left, right), _ = _count_directional(attr, task, attr_pred, task_pred, attr_train, task_train)

    def values(counts):
        res = directional_from_counts(train, counts)
        return {d.direction: d.value for d in (res.a_to_t, res.t_to_a) if d is not None}

    estimate = values(test)
    rows = _cooccurrence_replicates(_cooccurrence_cells(left, right), test, n_boot, rng, values)
    return estimate, pd.DataFrame([r or {} for r in rows], columns=list(estimate), dtype=np.float64)


def _mals_bootstrap(func, args, kwargs, n_boot, rng):
    from .cooccurrence import _count_mals, mals_from_counts

    names = ("attr_train", "task_train", "attr_pred", "task_pred")
    values = list(args) + [kwargs.pop(k) for k in names[len(args):] if k in kwargs]
    if len(values) != 4 or kwargs:
        raise TypeError("bias_amp_mals takes attr_train, task_train, attr_pred, task_pred")
    train, pred, (left, right) = _count_mals(*values)
    estimate = {"MALS": mals_from_counts(train, pred).value}
    rows = _cooccurrence_replicates(
        _cooccurrence_cells(left, right), pred, n_boot, rng, lambda counts: mals_from_counts(train, counts).value
    )
    return estimate, pd.DataFrame({"MALS": np.array([np.nan if r is None else r for r in rows], dtype=np.float64)})


def _fairness_functions():
    from . import fairness as f

    return [
        (f.fairness_metrics, None),
        (f.demographic_parity, "DP"),
        (f.normalized_disparate_impact, "DI"),
        (f.statistical_parity_subgroup_fairness, "SPSF"),
        (f.false_positive_subgroup_fairness, "FPSF"),
        (f.equalized_odds_false_positive, "EOFP"),
        (f.equalized_odds_true_positive, "EOTP"),
        (f.group_bias_amplification, "BA"),
    ]


def bootstrap(
    metric: Callable,
    *args: Any,
    n_boot: int = 1000,
    level: float = 0.95,
    random_state: Any = None,
    ci_method: str = "percentile",
    **kwargs: Any,
) -> BootstrapResult:
    r"""Percentile bootstrap confidence interval of a count-based metric over test instances.

    ``bootstrap(metric, *args, **kwargs)`` computes ``metric(*args, **kwargs)``
    and resamples its evaluation set ``n_boot`` times. Rows are not copied:
    the distinct rows ("cells": combinations of group/attribute, task, and
    their predictions) are counted once, each replicate draws cell counts
    :math:`c^* \sim \mathrm{Multinomial}(n, c/n)` (exactly a resample of
    :math:`n` rows with replacement), and its count table is
    :math:`L^\top \operatorname{diag}(c^*) R` with :math:`L, R` the cells'
    augmented label rows. The metric is recomputed from each replicate table.

    Supported ``metric`` functions and their statistics:

    * :func:`~biasamp.fairness.fairness_metrics` (every requested metric) and
      the single fairness metrics (``"DP"``, ..., ``"BA"``), vectorized over
      replicates;
    * :func:`~biasamp.bias_amp_directional` (``"A->T"``, ``"T->A"``): the test
      table is resampled, the signs :math:`y_{at}` stay those of the training
      ground truth (or of the full test ground truth when no training set is
      given);
    * :func:`~biasamp.bias_amp_mals` (``"MALS"``): the prediction table is
      resampled, the training statistics stay fixed.

    Parameters
    ----------
    metric : callable
        One of the functions above.
    *args, **kwargs
        Exactly the arguments ``metric`` takes.
    n_boot : int, default 1000
        Number of replicates.
    level : float, default 0.95
        Confidence level of the percentile interval.
    random_state : None, int or numpy Generator
        Seed; the same seed gives the same replicates.
    ci_method : {"percentile", "basic"}, default "percentile"
        ``"percentile"``: the replicates' quantiles :math:`(q_{lo}, q_{hi})`.
        ``"basic"`` (reverse percentile): :math:`(2\hat\theta - q_{hi},
        2\hat\theta - q_{lo})`, clipped to the metric's range ([0, 1] for
        the fairness metrics, [-1, 1] for BiasAmp); it corrects the upward
        bias of ``max - min`` statistics (DP, EOTP, ...) whose true value is
        near 0, where the percentile interval can exclude the estimate.

    Returns
    -------
    BootstrapResult
        ``.estimate``, ``.ci`` (statistic -> (low, high)), ``.replicates`` and
        ``.n_undefined``; ``.value`` and ``.interval()`` for one statistic.

    Raises
    ------
    TypeError
        An unsupported ``metric`` or wrong arguments for it.
    ValueError
        Bad labels, or a statistic undefined in every replicate.

    Notes
    -----
    A replicate in which a statistic is undefined (e.g. a group drawn empty)
    is excluded from that statistic's percentiles and counted in
    ``n_undefined``. The cost is one pass to find the cells, then
    :math:`O(n_{boot} \cdot \mathrm{nnz})` for the tables, where nnz is the
    number of non-zeros of the cells' table rows: with single-label inputs the
    number of cells is at most the product of the class counts, whatever
    :math:`n`. Soft predictions are resampled correctly but every row may be
    its own cell.

    References
    ----------
    .. [1] B. Efron, R. Tibshirani. "An Introduction to the Bootstrap".
       Chapman & Hall, 1993 (percentile interval).

    Examples
    --------
    >>> import numpy as np
    >>> from biasamp.fairness import demographic_parity
    >>> from biasamp.stats import bootstrap
    >>> rng = np.random.default_rng(0)
    >>> group = rng.integers(0, 2, 2000)
    >>> y_true = rng.integers(0, 2, 2000)
    >>> y_pred = np.where(rng.random(2000) < 0.1 + 0.1 * group, 1 - y_true, y_true)
    >>> res = bootstrap(demographic_parity, y_true, y_pred, sensitive_features=group,
    ...                 n_boot=500, random_state=0)
    >>> low, high = res.interval()
    >>> bool(low < res.value < high)
    True
    """
    from .cooccurrence import bias_amp_directional, bias_amp_mals

    n_boot = _check_n_boot(n_boot)
    level = _check_level(level)
    rng = np.random.default_rng(random_state)
    kwargs = dict(kwargs)
    fair = dict(_fairness_functions())
    if ci_method not in ("percentile", "basic"):
        raise ValueError(f"ci_method must be 'percentile' or 'basic', got {ci_method!r}")
    if metric in fair:
        bounds = (0.0, 1.0)
        estimate, reps = _fairness_bootstrap(metric, args, kwargs, n_boot, rng)
    elif metric is bias_amp_directional:
        bounds = (-1.0, 1.0)
        estimate, reps = _directional_bootstrap(metric, args, kwargs, n_boot, rng)
    elif metric is bias_amp_mals:
        bounds = (-1.0, 1.0)
        estimate, reps = _mals_bootstrap(metric, args, kwargs, n_boot, rng)
    else:
        supported = [f.__name__ for f in fair] + ["bias_amp_directional", "bias_amp_mals"]
        raise TypeError(
            f"bootstrap supports the count-based metrics {supported}, got {getattr(metric, '__name__', metric)!r}"
        )
    ci, n_undefined = {}, {}
    q = [(1 - level) / 2, (1 + level) / 2]
    for name in estimate:
        col = reps[name].to_numpy(dtype=np.float64)
        ok = np.isfinite(col)
        n_undefined[name] = int((~ok).sum())
        if not ok.any():
            raise ValueError(f"{name} is undefined in every bootstrap replicate")
        low, high = np.quantile(col[ok], q)
        if ci_method == "basic":
            est = estimate[name]
            low, high = min(max(2 * est - high, bounds[0]), bounds[1]), min(max(2 * est - low, bounds[0]), bounds[1])
        ci[name] = (float(low), float(high))
    if any(n_undefined.values()):
        warnings.warn(
            "bootstrap: some replicates had an undefined statistic and were excluded: "
            + ", ".join(f"{k}: {v}" for k, v in n_undefined.items() if v),
            UndefinedPairWarning,
            stacklevel=2,
        )
    return BootstrapResult(estimate, ci, reps, n_undefined, n_boot, level, ci_method)


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
    if math.isnan(d):
        raise ValueError("d is NaN")
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
        """Whether the mean and variance tests reject at level ``alpha``."""
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
    pooled = math.sqrt((sa**2 + sb**2) / 2)
    diff = float(x.mean() - y.mean())
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
        (max - min), ``ci_low, ci_high``.
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
        """``overall``: one row per metric (``n_runs, mean, std, maxdiff, ci_low, ci_high``)."""
        return self.overall.copy()

    def __repr__(self) -> str:
        return f"RunSummary(level={self.level:g}, method={self.method!r})\n{self.overall.to_string()}"


def _summarise(frame: pd.DataFrame, level: float, method: str, random_state: Any) -> pd.DataFrame:
    rows = {}
    for col in frame.columns:
        v = frame[col].to_numpy(dtype=np.float64)
        v = v[np.isfinite(v)]
        row = {"n_runs": len(v), "mean": np.nan, "std": np.nan, "maxdiff": np.nan, "ci_low": np.nan, "ci_high": np.nan}
        if len(v):
            row.update(mean=float(v.mean()), maxdiff=float(np.ptp(v)))
        if len(v) >= 2:
            row["std"] = float(v.std(ddof=1))
            row["ci_low"], row["ci_high"] = confidence_interval(v, level=level, method=method, random_state=random_state)
        rows[col] = row
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index.name = "metric"
    return out


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
    if isinstance(runs, pd.DataFrame):
        overall_frame = runs.astype(np.float64)
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
