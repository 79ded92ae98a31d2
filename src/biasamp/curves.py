"""Curves of a count-based metric: across decision thresholds, and across checkpoints.

* :func:`threshold_curve`: a metric (BiasAmp→ in both directions,
  BiasAmp_MALS, the group fairness metrics) as the decision threshold on the
  model's scores moves, over a grid of thresholds or of positive rates. Each
  score column is sorted once; the counts at every grid point are cumulative
  sums along the sorted scores (never a recount per threshold), and the
  metric is evaluated on the stack of count tables by the same pure
  functions as the single-threshold metric.
* :func:`checkpoint_curve`: a metric over a sequence of prediction sets
  (training epochs, seeds), as in Hall et al. (2022).

Both return a :class:`CurveResult`: ``to_frame()`` (one row per grid point,
one column per statistic, the interval bounds beside), ``plot()`` (a
matplotlib figure) and ``to_report()`` (a :class:`~biasamp.Report` whose HTML
page holds the plot).

References
----------
.. [1] A. Wang, O. Russakovsky. "Directional Bias Amplification". ICML 2021,
   §3.2 (thresholds) and §5.3 (COMPAS).
.. [2] M. Hall, L. van der Maaten, L. Gustafson, M. Jones, A. Adcock. "A
   Systematic Study of Bias Amplification". arXiv:2201.11706, 2022.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from biasamp._core.results import ResultMixin, fmt
from biasamp._core.typing import CIMethod
from biasamp._engine.options import DEFAULT_LEVEL
from biasamp._engine.sweep import SweepInputs
from biasamp._families import REGISTRY
from biasamp._family import Family
from biasamp.exceptions import UndefinedPairWarning

__all__ = ["CurveResult", "checkpoint_curve", "threshold_curve"]


# --------------------------------------------------------------------------- #
# the result
# --------------------------------------------------------------------------- #
@dataclass(frozen=True, eq=False, repr=False)
class CurveResult(ResultMixin):
    r"""A metric along a grid: decision thresholds, positive rates, or checkpoints.

    Attributes
    ----------
    metric : str
        The metric's name (e.g. ``"bias_amp_directional"``).
    grid : {"threshold", "rate", "checkpoint"}
        What the grid holds: score thresholds (a score ``s`` is positive when
        ``s > threshold``), positive rates (each label's threshold calibrated
        to that rate on the given scores) or checkpoint labels.
    x : tuple
        The grid values, in the order given.
    values : pandas.DataFrame
        One row per grid point, one column per statistic (e.g. ``a_to_t``,
        ``t_to_a``; ``mals``; ``DP`` ... ``BA``; ``multi_mals``, ``g_to_m``,
        ``m_to_g``). NaN where a statistic is undefined at that point (see
        ``n_undefined``).
    low, high : pandas.DataFrame or None
        Interval bounds of every value (``None`` without intervals).
    statistics : tuple of str
        The statistic columns.
    n_undefined : pandas.DataFrame
        Per grid point and statistic, the pairs (or classes) left out as
        undefined (:ref:`def-undefined`).
    thresholds : pandas.DataFrame or None
        Threshold curves: the score threshold of every label (columns) at
        every grid point (rows); with ``grid="rate"``, the calibrated ones
        (``-inf`` where the rate makes every score positive, as in
        :func:`~biasamp.calibrate_thresholds`).
    level : float or None
        Confidence level of the intervals.
    ci_method : str
        How the intervals were computed ("" without intervals).
    n_boot : int or None
        Bootstrap replicates per grid point.
    notes : tuple of str

    Notes
    -----
    There is no single ``value``: a curve holds the statistics at every grid
    point, in ``values`` (one column per statistic).
    Each grid point is the metric of the hard predictions at that point: for
    a threshold :math:`\tau`, :math:`\hat T_t = \mathbb 1[s_t > \tau]`, e.g.
    for BiasAmp→ A→T

    .. math::

        \text{BiasAmp}_{A\rightarrow T}(\tau) = \frac{1}{|D|}\sum_{(a,t) \in D}
        y_{at}\Big(\frac{\#(a, s_t > \tau)}{\#a} - \frac{\#(a, t)}{\#a}\Big).

    ``to_frame()`` has the grid column (``threshold``, ``rate`` or
    ``checkpoint``; a rate grid over one score column also gets its
    ``threshold``), one column per statistic and, with intervals,
    ``<statistic>_low`` and ``<statistic>_high``.

    References
    ----------
    .. [1] A. Wang, O. Russakovsky. "Directional Bias Amplification". ICML 2021, §3.2.
    .. [2] M. Hall et al. "A Systematic Study of Bias Amplification". arXiv:2201.11706, 2022.

    Examples
    --------
    >>> import numpy as np
    >>> from biasamp import bias_amp_directional, threshold_curve
    >>> attr = np.array([0, 0, 0, 1, 1, 1])
    >>> task = np.array([1, 1, 0, 1, 0, 0])
    >>> scores = np.array([0.9, 0.6, 0.4, 0.7, 0.3, 0.2])
    >>> curve = threshold_curve(bias_amp_directional, attr, task, task_scores=scores, thresholds=[0.35, 0.65],
    ...                         attr_train=attr, task_train=task)  # the signs of these labels
    >>> curve.to_frame().round(4)
       threshold  a_to_t
    0       0.35  0.1667
    1       0.65 -0.1667
    >>> curve
    CurveResult(bias_amp_directional over 2 thresholds: a_to_t -0.1667 .. +0.1667)
    """

    metric: str
    grid: str
    x: tuple
    values: pd.DataFrame
    low: pd.DataFrame | None
    high: pd.DataFrame | None
    statistics: tuple
    n_undefined: pd.DataFrame
    thresholds: pd.DataFrame | None
    level: float | None
    ci_method: str
    n_boot: int | None
    notes: tuple = ()

    def _bounds(self) -> tuple[pd.DataFrame, pd.DataFrame] | None:
        """``(low, high)``, or None for a curve without intervals (both are given or neither)."""
        if self.low is None or self.high is None:
            return None
        return self.low, self.high

    def _interval_note(self) -> str:
        """``"95% intervals (method)"``, or "" for a curve without intervals."""
        if self._bounds() is None or self.level is None:
            return ""
        return f"{round(100 * self.level)}% intervals ({self.ci_method})"

    def to_frame(self) -> pd.DataFrame:
        """One row per grid point: the grid value, every statistic, and its interval bounds."""
        out = pd.DataFrame({self.grid: list(self.x)})
        if self.grid == "rate" and self.thresholds is not None and self.thresholds.shape[1] == 1:
            out["threshold"] = self.thresholds.iloc[:, 0].to_numpy()
        bounds = self._bounds()
        for s in self.statistics:
            out[s] = self.values[s].to_numpy()
            if bounds is not None:
                out[f"{s}_low"] = bounds[0][s].to_numpy()
                out[f"{s}_high"] = bounds[1][s].to_numpy()
        return out

    def _long(self, statistics: Sequence[str] | None = None) -> pd.DataFrame:
        """Long format for plotting: ``x, value, label`` (+ ``low, high``)."""
        stats = list(self.statistics if statistics is None else statistics)
        unknown = set(stats) - set(self.statistics)
        if unknown:
            raise ValueError(f"unknown statistics {sorted(unknown)}; the curve has {list(self.statistics)}")
        parts = []
        bounds = self._bounds()
        for s in stats:
            part = pd.DataFrame({"x": list(self.x), "value": self.values[s].to_numpy(), "label": s})
            if bounds is not None:
                part["low"], part["high"] = bounds[0][s].to_numpy(), bounds[1][s].to_numpy()
            parts.append(part)
        return pd.concat(parts, ignore_index=True)

    @property
    def x_label(self) -> str:
        return {"threshold": "decision threshold", "rate": "positive rate", "checkpoint": "checkpoint"}[self.grid]

    def plot(self, ax: Any = None, *, statistics: Sequence[str] | None = None) -> Any:
        """Draw the curve (one line per statistic, its interval as a band) with matplotlib.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; default: a new figure (matplotlib's object API, no
            pyplot state).
        statistics : sequence of str, optional
            The statistics to draw (default: all).

        Returns
        -------
        matplotlib.figure.Figure
        """
        from biasamp.report._plots import draw_lines

        if ax is None:
            try:
                from matplotlib.figure import Figure
            except ImportError:
                raise ImportError("plot() needs matplotlib: pip install matplotlib (the [plot] extra)") from None
            fig = Figure(figsize=(6.4, 3.6), layout="constrained")
            ax = fig.subplots()
        draw_lines(ax, self._long(statistics), self.x_label)
        ax.set_title(self.metric, fontsize=10)
        return ax.figure

    def to_section(self, key: str | None = None, *, title: str | None = None) -> Any:
        """This curve as a report section (``biasamp.report.Section``: table, line plot, a summary row per
        statistic)."""
        from biasamp.report._model import FigureSpec, Section, _summary_frame
        from biasamp.report._sections import _row

        for value, name in ((key, "key"), (title, "title")):
            if value is not None and (not isinstance(value, str) or not value):
                raise TypeError(f"{name} must be None or a non-empty string, got {value!r}")
        rows = []
        frame = self.to_frame()
        bounds = self._bounds()
        for s in self.statistics:
            vals = self.values[s].to_numpy(dtype=np.float64)
            if not np.isfinite(vals).any():
                continue
            i = int(np.nanargmax(np.abs(vals)))
            ci = None if bounds is None else (bounds[0][s].iloc[i], bounds[1][s].iloc[i])
            if ci is not None and not (np.isfinite(ci[0]) and np.isfinite(ci[1])):
                ci = None
            rows.append(_row(s, f"{self.grid}={self.x[i]}", vals[i], ci, self.ci_method, None,
                             note=f"largest |value| of {len(self.x)} grid points"))
        note = self._interval_note()
        caption = f"{self.metric} against the {self.x_label}" + (f"; bands: {note}" if note else "")
        title = title or f"{self.metric} across {self.grid}s"
        return Section(
            key or f"{self.grid}_curve", title, _CITATION[self.grid],
            "Each point is the metric of the hard predictions at that grid point; the summary gives, per "
            "statistic, the point of largest magnitude.",
            summary=_summary_frame(rows), tables={"curve": frame},
            figures=[FigureSpec("curve", title, "line", self._long(), caption)], notes=list(self.notes),
        )

    def to_report(self, *, title: str | None = None) -> Any:
        """A :class:`~biasamp.Report` holding this curve (``.to_html()`` embeds the plot)."""
        from biasamp._core.version import __version__
        from biasamp.report._model import Report

        section = self.to_section()
        return Report([section], {"grid": self.grid, "points": len(self.x), "metric": self.metric},
                      {"n_boot": self.n_boot, "level": self.level, "ci_method": self.ci_method},
                      title=title or section.title, version=__version__)

    def __repr__(self) -> str:
        parts = []
        for s in self.statistics:
            v = self.values[s].to_numpy(dtype=np.float64)
            ok = np.isfinite(v)
            rng = f"{fmt(float(v[ok].min()))} .. {fmt(float(v[ok].max()))}" if ok.any() else "undefined"
            parts.append(f"{s} {rng}")
        note = self._interval_note()
        ci = f", {note}" if note else ""
        return f"CurveResult({self.metric} over {len(self.x)} {self.grid}s: {'; '.join(parts)}{ci})"


_CITATION = {
    "threshold": 'A. Wang, O. Russakovsky. "Directional Bias Amplification". ICML 2021, §3.2.',
    "rate": 'A. Wang, O. Russakovsky. "Directional Bias Amplification". ICML 2021, §3.2.',
    "checkpoint": 'M. Hall et al. "A Systematic Study of Bias Amplification". arXiv:2201.11706, 2022.',
}


# --------------------------------------------------------------------------- #
# metric families: statistics, how to call the metric, how to read its result
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class _Curve:
    """A registered family as the curves use it: its statistics' columns, how to call and read it."""

    family: Family
    function: Callable
    specs: tuple  # the StatisticSpec objects of this call (an alias or metrics= restricts them)

    @property
    def name(self) -> str:
        return self.function.__name__

    @property
    def boot(self) -> dict:
        """column -> bootstrap statistic name."""
        return {s.column: s.name for s in self.specs}

    def statistics(self, preds: dict) -> tuple:
        """The columns computed when the prediction roles in ``preds`` are given (not None)."""
        return tuple(s.column for s in self.specs if all(preds.get(r) is not None for r in s.needs))

    def read(self, res: Any, statistics: tuple) -> dict:
        """``{column: (value, number of undefined pairs or classes)}`` of the columns ``statistics``."""
        return {s.column: s.read(res) for s in self.specs if s.column in statistics}

    def call(self, attr, task, preds, attr_train, task_train) -> tuple[tuple, dict]:
        roles = {"attr": attr, "task": task, **preds, "attr_train": attr_train, "task_train": task_train}
        return self.family.call(roles, {})


def _family(metric: Any, kwargs: dict, *, thresholds: bool) -> tuple[_Curve, dict]:
    """The registered family of ``metric`` and the keyword arguments left for the metric itself."""
    where = "threshold_curve" if thresholds else "checkpoint_curve"
    family = REGISTRY.get(metric)
    if family is None or (thresholds and not family.threshold_curve):
        supported = [f.__name__ for fam in REGISTRY if fam.threshold_curve or not thresholds for f in fam.functions]
        raise TypeError(f"{where} supports the count-based metrics {supported}, "
                        f"got {getattr(metric, '__name__', metric)!r}")
    kwargs = dict(kwargs)
    specs = tuple(s for s in family.statistics_of(metric, kwargs) if s.headline)
    if family.selected is not None and metric is family.function:
        kwargs["metrics"] = [s.name for s in specs]
    return _Curve(family, metric, specs), kwargs


# --------------------------------------------------------------------------- #
# shared checks and the per-point bootstrap
# --------------------------------------------------------------------------- #
def _check_boot(n_boot: Any, level: Any, ci_method: Any, random_state: Any) -> None:
    from biasamp._engine.options import BootstrapOptions
    from biasamp._engine.resample import check_random_state

    if n_boot is not None:
        BootstrapOptions(n_boot, level, ci_method, random_state)
    check_random_state(random_state)


def _intervals(family: _Curve, metric: Any, statistics: tuple, calls: list, n_boot: int, level: float,
               ci_method: CIMethod, random_state: Any,
               metric_kwargs: dict) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray, str]:
    """Bootstrap every grid point: ``(low, high, estimates, methods)``; the same seed at each point."""
    from biasamp.stats import bootstrap

    low = np.full((len(calls), len(statistics)), np.nan)
    high = np.full_like(low, np.nan)
    est = np.full_like(low, np.nan)
    methods: set = set()
    for i, (args, kw) in enumerate(calls):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedPairWarning)
            try:
                boot = bootstrap(metric, *args, n_boot=n_boot, level=level, ci_method=ci_method,
                                 random_state=random_state, **{**kw, **metric_kwargs})
            except ValueError:  # every statistic undefined at this point: no interval there
                continue
        for j, s in enumerate(statistics):
            name = family.boot[s]
            if name in boot.ci:
                low[i, j], high[i, j] = boot.ci[name]
                est[i, j] = boot.estimate[name]
                methods.add(boot.methods.get(name, ci_method))
    cols = list(statistics)
    method = f"{'/'.join(sorted(methods)) or ci_method} bootstrap ({n_boot} per point)"
    return pd.DataFrame(low, columns=cols), pd.DataFrame(high, columns=cols), est, method


# --------------------------------------------------------------------------- #
# threshold curves: the family's declared sweep (one sort per score column, biasamp._engine.sweep)
# --------------------------------------------------------------------------- #
def _warn_points(name: str, n_undefined: np.ndarray, total: int) -> None:
    bad = int((n_undefined > 0).sum())
    if bad:
        warnings.warn(
            f"{name}: at {bad} of {len(n_undefined)} grid points some pairs or classes are undefined and were "
            f"excluded (at most {int(n_undefined.max())} of {total}); see the result's n_undefined. A statistic "
            "is NaN where all are", UndefinedPairWarning, stacklevel=4)


def _points(family: _Curve, metric: Any, calls: list, statistics: tuple, metric_kwargs: dict,
            where: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The metric's function at every point (one call each): values and numbers undefined, ``(points, stats)``."""
    values = np.full((len(calls), len(statistics)), np.nan)
    n_undef = np.zeros((len(calls), len(statistics)), dtype=np.int64)
    for k, (args, kw) in enumerate(calls):
        try:
            res = metric(*args, **{**kw, **metric_kwargs})  # the caller's options win (e.g. cross_fit=False)
        except ValueError as exc:
            raise ValueError(f"{where[k]}: {exc}") from None
        got = family.read(res, statistics)
        values[k] = [got[s][0] for s in statistics]
        n_undef[k] = [got[s][1] for s in statistics]
    return values, n_undef


def _collect(results: dict, statistics: tuple, name: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    values, n_undef = {}, {}
    for s in statistics:
        value, nund, total = results[s]
        if not np.isfinite(value).any():
            raise ValueError(f"{name}: {s} is undefined at every grid point (docs/definitions.md, "
                             "'Undefined quantities')")
        _warn_points(f"{name} {s}", np.asarray(nund), total)
        values[s] = np.asarray(value, dtype=np.float64)
        n_undef[s] = np.asarray(nund, dtype=np.int64)
    return pd.DataFrame(values), pd.DataFrame(n_undef)


def threshold_curve(
    metric: Callable,
    attr: Any,
    task: Any,
    *,
    task_scores: Any = None,
    attr_scores: Any = None,
    thresholds: Any = None,
    rates: Any = None,
    attr_pred: Any = None,
    task_pred: Any = None,
    attr_train: Any = None,
    task_train: Any = None,
    metrics: Sequence[str] | None = None,
    n_boot: int | None = None,
    level: float = DEFAULT_LEVEL,
    ci_method: CIMethod = "auto",
    random_state: Any = None,
    **metric_kwargs: Any,
) -> CurveResult:
    r"""A count-based metric as the decision threshold on the model's scores moves.

    At each grid point the scores become hard predictions,
    :math:`\hat T_t = \mathbb 1[s_t > \tau]` (and likewise Â from
    ``attr_scores``), and the metric is computed on them, e.g.

    .. math::

        \text{BiasAmp}_{A\rightarrow T}(\tau) = \frac{1}{|D|}\sum_{(a,t)\in D}
        y_{at}\Big(\frac{\#(a,\ s_t > \tau)}{\#a} - \frac{\#(a,t)}{\#a}\Big).

    Parameters
    ----------
    metric : callable
        :func:`~biasamp.bias_amp_directional` (statistics ``a_to_t`` and/or
        ``t_to_a``), :func:`~biasamp.bias_amp_mals` (``mals``),
        :func:`~biasamp.fairness_metrics` (``DP`` ... ``BA``, or those in
        ``metrics``) or one of the single fairness functions.
    attr : labels of shape (n,) or (n, K_A)
        Test ground truth of the protected attribute (the
        ``sensitive_features`` of the fairness metrics).
    task : labels of shape (n,) or (n, K_T)
        Test ground truth of the task (the fairness metrics' ``y_true``).
    task_scores : array-like of shape (n,) or (n, K_T), optional
        The model's task scores (any real numbers: probabilities, logits,
        risk scores), one column per task class (DataFrame columns are matched
        by name); a 1-D score of a binary 0/1 task is the score of class 1,
        class 0 being predicted below the threshold.
    attr_scores : array-like of shape (n,) or (n, K_A), optional
        The model's attribute scores, likewise (BiasAmp→ T→A, BiasAmp_MALS).
    thresholds : array-like of float, optional
        The grid of thresholds (a score is positive when ``score >
        threshold``). Default: 21 evenly spaced values over [0, 1] for scores
        within it, else over the scores' range.
    rates : array-like of float, optional
        A grid of positive rates instead: at rate :math:`p` each scored label
        gets the threshold that makes :math:`\operatorname{round}(n\,p)` of
        its scores positive (the rule of :func:`~biasamp.calibrate_thresholds`).
    attr_pred, task_pred : labels, optional
        Hard predictions of the side that has no scores (e.g. Â for
        BiasAmp→ T→A or for BiasAmp_MALS with ``task_scores``); they are the
        same at every grid point.
    attr_train, task_train : labels, optional
        Training ground truth (the signs of BiasAmp→, the training bias of
        BiasAmp_MALS); default: the test ground truth, as the metrics do,
        with the signs cross-fitted over two folds of the test rows
        (docs/definitions.md, "No training set"). A row's fold depends on its
        predicted labels, so without a training set the curve runs the
        function at every grid point; with a training set, or with
        ``cross_fit=False`` (the plug-in signs of the test rows), one sort of
        the scores gives every point.
    metrics : sequence of str, optional
        With :func:`~biasamp.fairness_metrics`: which of the seven metrics.
    n_boot : int, optional
        Bootstrap replicates per grid point for the intervals (``None``: no
        interval): :func:`~biasamp.bootstrap` of the metric at each grid
        point, with ``level``, ``ci_method`` and ``random_state``.
    level : float, default 0.95
    ci_method : {"auto", "percentile", "basic", "bca", "band"}, default "auto"
    random_state : None, int or numpy Generator
        Seed of the bootstrap, the same at every grid point.
    **metric_kwargs
        For the fairness metrics only: ``average``, ``pos_label``,
        ``min_group_size``, ``include_small_groups``, as in
        :func:`~biasamp.fairness_metrics` (the curve's values equal that
        function on the thresholded predictions).

    Returns
    -------
    CurveResult
        ``to_frame()``: ``threshold`` (or ``rate``) and one column per
        statistic, with ``<statistic>_low``/``_high`` when ``n_boot`` is given.

    Raises
    ------
    ValueError
        Bad labels or scores (non-finite, wrong number of columns, a 1-D
        score of a non-binary label), both or neither of the grids' inputs
        wrong, no scores, scores or predictions the metric cannot use, or a
        statistic undefined at every grid point.
    TypeError
        An unsupported ``metric``, non-numeric scores or thresholds.

    Warns
    -----
    UndefinedPairWarning
        When some grid points have undefined pairs or classes (excluded there;
        counted in ``n_undefined``, NaN where a statistic has none left).

    See Also
    --------
    checkpoint_curve : the metric over a sequence of prediction sets.
    biasamp.calibrate_thresholds : one well-calibrated threshold per label.

    Notes
    -----
    **One sort.** Each score column is sorted once. The grid thresholds cut
    the sorted column into segments; the rows of each segment are summed once
    (an ``O(n)`` pass) and the counts above every cut are the cumulative sums
    of the segments from the top, so the whole grid costs one sort plus one
    pass, not one count per threshold. The metric is then evaluated on the
    stack of count tables by the same pure functions as the metric itself,
    and equals it at every grid point (tested against a recount).

    **Intervals** come from :func:`~biasamp.bootstrap` run on the hard
    predictions of each grid point (``n_boot`` replicates each, the same
    seed), so every point has the interval the metric alone would have;
    this costs ``len(grid)`` bootstraps.

    Wang & Russakovsky (§3.2) show that BiasAmp→ moves with the threshold
    and recommend calibrating it; their COMPAS experiment (§5.3) plots
    BiasAmp A→T against the risk-score threshold (``examples/compas_threshold.py``).

    References
    ----------
    .. [1] A. Wang, O. Russakovsky. "Directional Bias Amplification". ICML 2021,
       §3.2 and §5.3.
    .. [2] M. Chen, M. Wu. "Towards Threshold Invariant Fair Classification".
       UAI 2020.

    Examples
    --------
    Group 0 leans to the task in the data (2 of 3 positive, group 1: 1 of
    3). At threshold 0.5 the predictions equal the truth; a lower threshold
    adds a false positive in group 0 (the association grows: +1/6), a higher
    one a false negative there (it shrinks: -1/6).

    >>> import numpy as np
    >>> from biasamp import bias_amp_directional, threshold_curve
    >>> attr = np.array([0, 0, 0, 1, 1, 1])
    >>> task = np.array([1, 1, 0, 1, 0, 0])
    >>> scores = np.array([0.9, 0.6, 0.4, 0.7, 0.3, 0.2])
    >>> curve = threshold_curve(bias_amp_directional, attr, task, task_scores=scores,
    ...                         thresholds=[0.35, 0.5, 0.65], attr_train=attr, task_train=task)
    >>> curve.to_frame().round(4)
       threshold  a_to_t
    0       0.35  0.1667
    1       0.50  0.0000
    2       0.65 -0.1667

    A grid of positive rates instead, with 95% bootstrap intervals:

    >>> rng = np.random.default_rng(0)
    >>> attr = rng.integers(0, 2, 2000)
    >>> task = (rng.random(2000) < 0.3 + 0.3 * attr).astype(int)
    >>> scores = np.clip(0.5 * task + 0.2 * attr + rng.normal(0, 0.2, 2000), 0, 1)
    >>> curve = threshold_curve(bias_amp_directional, attr, task, task_scores=scores,
    ...                         rates=[0.3, 0.45, 0.6], n_boot=200, random_state=0)
    >>> list(curve.to_frame().columns)
    ['rate', 'threshold', 'a_to_t', 'a_to_t_low', 'a_to_t_high']
    """
    family, metric_kwargs = _family(metric, {**metric_kwargs, **({} if metrics is None else {"metrics": metrics})},
                                    thresholds=True)
    sweep = family.family.sweep
    assert sweep is not None  # _family(thresholds=True) accepts only a family that declares its sweep
    if metrics is not None and family.family.selected is None:
        selecting = [fam.name for fam in REGISTRY if fam.selected is not None]
        raise ValueError(f"metrics= selects among a family's statistics; it applies to {', '.join(selecting)} only")
    # without a training set, a family whose signs are cross-fitted takes its cross-fitting options here too
    crossfit_options = ("cross_fit", "cross_fit_random_state") if family.family.cross_fit else ()
    unknown = sorted(set(metric_kwargs) - {"metrics"} - set(sweep.options) - set(crossfit_options))
    if unknown:
        taking = [fam.name for fam in REGISTRY if fam.sweep is not None and fam.sweep.options]
        raise TypeError(f"threshold_curve got unexpected keyword arguments {unknown}: {family.name} takes "
                        f"{list(sweep.options) or 'no options'} here (options apply only to {', '.join(taking)})")
    family.family.options_of(metric_kwargs)  # the options it takes, built (and refused) as the function builds them
    if metric_kwargs.get("average", "auto") is None:
        raise ValueError("threshold_curve needs one value per threshold: average='auto', 'binary' or 'macro'")
    _check_boot(n_boot, level, ci_method, random_state)
    if task_scores is None and attr_scores is None:
        raise ValueError("give task_scores and/or attr_scores: the scores whose threshold moves")
    for scores, pred, side in ((task_scores, task_pred, "task"), (attr_scores, attr_pred, "attr")):
        if scores is not None and pred is not None:
            raise ValueError(f"give {side}_scores or {side}_pred, not both: the predictions come from the scores")
    if (attr_train is None) != (task_train is None):
        raise ValueError("give both attr_train and task_train, or neither")
    # the statistics whose prediction roles are given (scored or hard); the family's kernel sweeps them
    statistics = family.statistics({
        "task_pred": None if task_scores is None and task_pred is None else 1,
        "attr_pred": None if attr_scores is None and attr_pred is None else 1,
    })
    options = {k: v for k, v in metric_kwargs.items() if k in sweep.options}
    curve = sweep.kernel(SweepInputs(attr, task, task_scores, attr_scores, thresholds, rates, attr_pred, task_pred,
                                     attr_train, task_train, statistics, options))
    if crossfit_options and attr_train is None and metric_kwargs.get("cross_fit") is not False:
        # cross-fitted signs: a row's fold depends on its predicted labels, hence on the threshold, so the
        # one-sort sweep (plug-in signs) cannot give them; the function runs at every grid point instead
        calls = [family.call(attr, task, curve.predictions(j), None, None) for j in range(len(curve.values))]
        values, nund = _points(family, metric, calls, statistics, metric_kwargs,
                               [f"{curve.grid} {v:g}" for v in curve.values])
        total = {s: curve.results[s][2] for s in statistics}
        values_frame, n_undef = _collect({s: (values[:, j], nund[:, j], total[s]) for j, s in enumerate(statistics)},
                                         statistics, family.name)
    else:
        values_frame, n_undef = _collect(curve.results, statistics, family.name)
    thresholds_df = pd.DataFrame(curve.thresholds) if curve.thresholds else None
    low = high = None
    method = ""
    if n_boot is not None:
        calls = [family.call(attr, task, curve.predictions(j), attr_train, task_train)
                 for j in range(len(curve.values))]
        low, high, _, method = _intervals(family, metric, statistics, calls, n_boot, level, ci_method,
                                          random_state, metric_kwargs)
    return CurveResult(family.name, curve.grid, tuple(curve.values.tolist()), values_frame, low, high, statistics,
                       n_undef, thresholds_df, level if n_boot is not None else None, method, n_boot)


# --------------------------------------------------------------------------- #
# checkpoint curves
# --------------------------------------------------------------------------- #
def _sequence(preds: Any, name: str) -> list | None:
    if preds is None:
        return None
    if isinstance(preds, (str, bytes)) or not isinstance(preds, Sequence) and not hasattr(preds, "__iter__"):
        raise TypeError(f"{name} must be a sequence of prediction sets (one per checkpoint), got "
                        f"{type(preds).__name__}")
    if isinstance(preds, np.ndarray) or hasattr(preds, "to_numpy"):
        raise TypeError(f"{name} must be a list (one prediction set per checkpoint), not a single array; "
                        "wrap one prediction set in a list")
    out = list(preds)
    if not out:
        raise ValueError(f"{name} is empty: give one prediction set per checkpoint")
    return out


def checkpoint_curve(
    metric: Callable,
    attr: Any,
    task: Any,
    *,
    task_preds: Sequence | None = None,
    attr_preds: Sequence | None = None,
    checkpoints: Sequence | None = None,
    attr_train: Any = None,
    task_train: Any = None,
    n_boot: int | None = None,
    level: float = DEFAULT_LEVEL,
    ci_method: CIMethod = "auto",
    random_state: Any = None,
    **metric_kwargs: Any,
) -> CurveResult:
    r"""A count-based metric over a sequence of prediction sets: training checkpoints, seeds, models.

    For checkpoints :math:`c_1, \dots, c_K` with predictions
    :math:`(\hat A^{(k)}, \hat T^{(k)})` on the same test rows, the curve is
    :math:`k \mapsto M(A, T, \hat A^{(k)}, \hat T^{(k)})`, e.g.

    .. math::

        \text{BiasAmp}_{A\rightarrow T}(c_k) = \frac{1}{|D|}\sum_{(a,t)\in D}
        y_{at}\big(P(\hat T^{(k)}_t \mid A_a) - P(T_t \mid A_a)\big),

    with the training-set signs :math:`y_{at}` fixed across checkpoints.

    Parameters
    ----------
    metric : callable
        :func:`~biasamp.bias_amp_directional`, :func:`~biasamp.bias_amp_mals`,
        :func:`~biasamp.multi_bias_amp` (statistics ``multi_mals``,
        ``g_to_m``, ``m_to_g``: the "abs" headline values),
        :func:`~biasamp.fairness_metrics` or a single fairness function.
    attr : labels of shape (n,) or (n, K_A)
        Test ground truth of the protected attribute (the fairness metrics'
        ``sensitive_features``).
    task : labels of shape (n,) or (n, K_T)
        Test ground truth of the task (the fairness metrics' ``y_true``).
    task_preds : sequence of labels, optional
        One T̂ per checkpoint (the fairness metrics' ``y_pred``).
    attr_preds : sequence of labels, optional
        One Â per checkpoint (same length as ``task_preds`` when both given).
    checkpoints : sequence, optional
        Labels of the checkpoints (epochs, seeds, names); default ``0, 1, ...``.
    attr_train, task_train : labels, optional
        Training ground truth (fixed across checkpoints).
    n_boot : int, optional
        Bootstrap replicates per checkpoint (:func:`~biasamp.bootstrap`);
        ``None``: no interval.
    level, ci_method, random_state
        As in :func:`~biasamp.bootstrap` (the same seed at every checkpoint).
    **metric_kwargs
        Further options of ``metric`` (e.g. ``combinations=`` of
        :func:`~biasamp.multi_bias_amp`, ``metrics=`` of
        :func:`~biasamp.fairness_metrics`).

    Returns
    -------
    CurveResult
        ``grid="checkpoint"``; ``to_frame()`` has ``checkpoint`` and one
        column per statistic.

    Raises
    ------
    ValueError
        No prediction sequence, sequences or labels of different lengths,
        predictions the metric cannot use, bad labels, a ``None`` among the
        predictions, a metric undefined at a checkpoint (the message names
        it), or a statistic undefined at every checkpoint.
    TypeError
        An unsupported ``metric``, or a prediction argument that is one array
        instead of a sequence of them.

    See Also
    --------
    threshold_curve : the metric across decision thresholds.
    biasamp.compare_runs : tests between two groups of runs.

    Notes
    -----
    Each checkpoint is computed by the metric itself (one count per
    checkpoint; the prediction sets differ), or by
    :func:`~biasamp.bootstrap` when ``n_boot`` is given, whose estimate is the
    same number. Hall et al. (2022) track bias amplification over training
    this way and find it varies, and can change sign, during training.

    References
    ----------
    .. [1] M. Hall, L. van der Maaten, L. Gustafson, M. Jones, A. Adcock. "A
       Systematic Study of Bias Amplification". arXiv:2201.11706, 2022.
    .. [2] A. Wang, O. Russakovsky. "Directional Bias Amplification". ICML 2021.

    Examples
    --------
    Three checkpoints: exact, then a false positive in group 0 (which leans
    to the task: amplification), then a false negative there (reduction).

    >>> import numpy as np
    >>> from biasamp import bias_amp_directional, checkpoint_curve
    >>> attr = np.array([0, 0, 0, 1, 1, 1])
    >>> task = np.array([1, 1, 0, 1, 0, 0])
    >>> epochs = [task, np.array([1, 1, 1, 1, 0, 0]), np.array([1, 0, 0, 1, 0, 0])]
    >>> curve = checkpoint_curve(bias_amp_directional, attr, task, task_preds=epochs, checkpoints=[1, 5, 10],
    ...                          attr_train=attr, task_train=task)  # the signs of these labels, not cross-fitted
    >>> curve.to_frame().round(4)
       checkpoint  a_to_t
    0           1  0.0000
    1           5  0.1667
    2          10 -0.1667
    """
    family, metric_kwargs = _family(metric, metric_kwargs, thresholds=False)
    _check_boot(n_boot, level, ci_method, random_state)
    t_seq, a_seq = _sequence(task_preds, "task_preds"), _sequence(attr_preds, "attr_preds")
    if t_seq is None and a_seq is None:
        raise ValueError("give task_preds and/or attr_preds: one prediction set per checkpoint")
    lengths = {k: len(v) for k, v in (("task_preds", t_seq), ("attr_preds", a_seq)) if v is not None}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"one prediction set per checkpoint: {', '.join(f'{k} has {n}' for k, n in lengths.items())}")
    n = next(iter(lengths.values()))
    labels = list(range(n)) if checkpoints is None else list(checkpoints)
    if len(labels) != n:
        raise ValueError(f"checkpoints has {len(labels)} labels for {n} prediction sets")
    if (attr_train is None) != (task_train is None):
        raise ValueError("give both attr_train and task_train, or neither")
    for seq, what in ((t_seq, "task_preds"), (a_seq, "attr_preds")):
        missing = [k for k in range(n) if seq is not None and seq[k] is None]
        if missing:
            raise ValueError(f"{what}[{missing[0]}] is None: give predictions for every checkpoint (or leave "
                             f"{what} out)")
    calls = []
    for k in range(n):
        preds = {"task_pred": None if t_seq is None else t_seq[k], "attr_pred": None if a_seq is None else a_seq[k]}
        calls.append(family.call(attr, task, preds, attr_train, task_train))
    statistics = family.statistics({"task_pred": None if t_seq is None else 1,
                                    "attr_pred": None if a_seq is None else 1})
    values, n_undef = _points(family, metric, calls, statistics, metric_kwargs,
                              [f"checkpoint {label!r}" for label in labels])
    for j, s in enumerate(statistics):  # as threshold_curve: a statistic with no value anywhere is an error
        if not np.isfinite(values[:, j]).any():
            raise ValueError(f"{family.name}: {s} is undefined at every checkpoint (docs/definitions.md, "
                             "'Undefined quantities')")
    values_frame = pd.DataFrame(values, columns=list(statistics))
    low = high = None
    method = ""
    if n_boot is not None:
        low, high, _, method = _intervals(family, metric, statistics, calls, n_boot, level, ci_method,
                                          random_state, metric_kwargs)
    return CurveResult(family.name, "checkpoint", tuple(labels), values_frame, low, high, statistics,
                       pd.DataFrame(n_undef, columns=list(statistics)), None, level if n_boot is not None else None,
                       method, n_boot)
