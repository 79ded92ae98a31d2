"""Statistics across runs and samples (:ref:`def-statistics`).

* :func:`confidence_interval`: t, normal or percentile-bootstrap interval of a
  mean over runs;
* :func:`bootstrap`: confidence intervals of any count-based metric of
  biasamp (the group fairness metrics and the co-occurrence metrics) by
  multinomial resampling of the contingency table of distinct rows ("cells"),
  never of the raw rows, so 1,000 replicates cost milliseconds;
* :func:`compare_runs`: Mann-Whitney U (two-sided unless a direction is given), Cohen's d with its label and
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

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from biasamp._core.deprecation import normalize_call
from biasamp._core.typing import CIMethod, PAdjust
from biasamp._engine.bootstrap import (
    BootstrapResult,
    fill_replicates,
    summarize,
)
from biasamp._engine.options import DEFAULT_LEVEL, DEFAULT_N_BOOT
from biasamp._engine.runs import (  # noqa: F401
    MAX_N_BOOT,
    CompareRunsResult,
    RunSummary,
    _check_level,
    _check_n_boot,
    cohens_d_label,
    compare_runs,
    confidence_interval,
    run_summary,
)
from biasamp._families import REGISTRY
from biasamp.exceptions import UndefinedPairWarning

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

def bootstrap(
    metric: Callable,
    *args: Any,
    n_boot: int = DEFAULT_N_BOOT,
    level: float = DEFAULT_LEVEL,
    ci_method: CIMethod = "auto",
    random_state: Any = None,
    p_adjust: PAdjust = "holm",
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
    whatever :math:`n`. Where the exact resampling would draw more than
    :math:`2^{22}` replicate × cell counts (many tasks make almost every row a
    cell) on at least 32,768 rows, the rows are split once at random into
    :math:`G` equal groups (2,048, fewer for wide tables, at least 256) and a
    replicate resamples the groups: the *grouped bootstrap*, whose cost does
    not grow with the number of cells; the BCa jackknife then leaves out one
    group at a time, and a note in the result says so (docs/inference.md).
    Replicates in which a statistic is undefined are
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
    from biasamp._engine.options import BootstrapOptions
    from biasamp._engine.resample import seed_sequence

    opts = BootstrapOptions(n_boot, level, ci_method, random_state, p_adjust)  # every option checked here
    n_boot, level = opts.n_boot, opts.level
    seed = seed_sequence(random_state)
    family = REGISTRY.of(metric, "bootstrap")
    args, kwargs = normalize_call(metric, args, kwargs)  # the 0.1 spellings the metric accepts, with its warning
    plan = family.plan_of(metric)(*args, **kwargs)
    cells = plan.cells
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        stats = plan.statistics(cells.table()[None])
        scheme = cells.resampling(n_boot, seed)  # exact multinomial, or grouped when that would be costly
        fill_replicates(plan, stats, scheme.replicate_tables(), n_boot)
        if ci_method == "bca" or (ci_method == "auto" and any(s.regular for s in stats)):
            for s in stats:
                s.jackknife = np.full(len(scheme.jackknife_weights), np.nan)
            for sl, tables in scheme.jackknife_tables():
                vals = plan.values(tables)
                for s in stats:
                    s.jackknife[sl] = vals[s.name]
    note = scheme.note(cells.n)
    if note is not None:
        plan.notes = [*plan.notes, note]
    return summarize(plan, stats, n_boot=n_boot, level=level, ci_method=ci_method, p_adjust=p_adjust, seed=seed,
                     cell_counts=scheme.jackknife_weights, stacklevel=3)

