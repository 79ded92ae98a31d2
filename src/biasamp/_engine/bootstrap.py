"""Bootstrap results: intervals, tests and per-unit tables of a metric's replicate statistics
(:class:`BootstrapResult`, built by :func:`summarize` from replicates filled by :func:`fill_replicates`)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from biasamp._core.results import ResultMixin, fmt
from biasamp.exceptions import UndefinedPairWarning

__all__ = ["REPLICATES_WARNING", "BootstrapResult", "fill_replicates", "summarize"]

#: how the warning about undefined replicates begins (the audit tells it from the point estimate's warnings)
REPLICATES_WARNING = "bootstrap: some replicates had an undefined statistic and were excluded"

# --------------------------------------------------------------------------- #
# bootstrap over the count tables
# --------------------------------------------------------------------------- #



@dataclass(frozen=True, eq=False, repr=False)
class BootstrapResult(ResultMixin):
    r"""Result of :func:`bootstrap`: intervals and tests of no effect of a count-based metric.

    There is no single ``value`` when the metric has several statistics (e.g.
    ``"A->T"`` and ``"T->A"``): read ``estimate[name]``, ``ci[name]`` and
    ``p_value[name]``; with one statistic ``value`` and :meth:`interval` give
    it directly.

    One inference per statistic: ``p_value`` is the inversion of ``ci``
    (``p_value < 1 - level`` exactly when the interval excludes 0), from the
    same replicates; the tests of no effect on the counts (exact McNemar per
    pair, G-test per class) are the per-unit ``tables`` and their global
    ``p_global``.

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
    p_value : dict of str -> float
        The p-value of each statistic's interval: the smallest ``alpha`` at
        which the ``1 - alpha`` interval of the same method, from the same
        replicates, excludes 0 (``biasamp._engine.inference.interval_p_value``),
        so ``p_value < 1 - level`` exactly when ``ci`` excludes 0 (its bounds
        read with 1e-12 as 0). 0 when every interval, even the one of level 1,
        excludes 0 (the bootstrap cannot tell p-values below about
        ``1 / n_boot`` apart); None for an undefined statistic (no interval).
        (Before 0.4 this was the global test now in ``p_global``.)
    p_global : dict of str -> float or None
        The test of no effect on the counts, where one exists: the global null
        "no class / no pair has an effect", i.e. the smallest adjusted
        per-unit p-value of ``tables`` (``p_adjust="holm"``: Holm's, which is
        Bonferroni's test of the global null; ``"bh"``: Benjamini-Hochberg's,
        which is Simes' test). None where the statistic has no test. It tests
        another null than the interval (single units, not the statistic), so
        it may disagree with ``ci``.
    se : dict of str -> float
        Bootstrap standard error the interval rests on (the replicates'
        standard deviation; for the max-t band, the band's larger excursion
        from the estimate per unit of its critical value).
    min_detectable : dict of str -> float
        Minimum detectable effect: the smallest true ``|effect|`` whose
        interval would exclude 0 with probability 0.8,
        ``(z_{1-alpha/2} + z_{0.8}) * se`` (the band's critical value in
        place of ``z_{1-alpha/2}`` for the max-t band).
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
    ``[ci_low, ci_high]``. The global test ``p_global`` is
    :math:`\min_u p^{adj}_u` with the adjustment of ``p_adjust``: Holm's
    (Bonferroni's test of the global null, valid under any dependence) or
    Benjamini-Hochberg's (Simes' test, valid under independence or positive
    dependence of the unit tests).

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
    p_global: dict = field(default_factory=dict)
    se: dict = field(default_factory=dict)
    min_detectable: dict = field(default_factory=dict)

    def _only(self) -> str | None:
        return next(iter(self.estimate)) if len(self.estimate) == 1 else None

    @property
    def value(self) -> float:
        """The estimate, when there is a single statistic (else ``AttributeError``: see ``estimate``)."""
        name = self._only()
        if name is None:
            raise AttributeError(f"several statistics {list(self.estimate)}: read .estimate[name]")
        return self.estimate[name]

    @property
    def result(self) -> Any:
        """The metric's own result on the full data (what ``metric(*args, **kwargs)`` returns), or None.

        :func:`biasamp.bootstrap` counts the labels once for both: the estimate
        and the result come from the same count table.
        """
        return getattr(self, "_result", None)

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
        """One row per statistic: estimate, interval, method, p-value, MDE, global test, undefined replicates."""
        rows = []
        for name, est in self.estimate.items():
            lo, hi = self.ci[name]
            rows.append({
                "statistic": name, "estimate": est, "ci_low": lo, "ci_high": hi,
                "method": self.methods.get(name), "p_value": self.p_value.get(name),
                "min_detectable": self.min_detectable.get(name), "p_global": self.p_global.get(name),
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
            mde = self.min_detectable.get(name)
            extra += f"  MDE={mde:.3g}" if mde is not None and np.isfinite(mde) else ""
            if self.n_undefined.get(name):
                extra += f", {self.n_undefined[name]} undefined replicates"
            width = max(len(k) for k in self.estimate)
            lines.append(f"  {name:<{width}} = {fmt(est)}  CI [{fmt(lo)}, {fmt(hi)}] ({self.methods.get(name)}){extra}")
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)


#: The most replicate values a bootstrap keeps (``n_boot`` x the parts of every statistic: 2 GiB of float64),
#: checked before any replicate is drawn (differential fairness over 2,500 groups with 100,000 replicates had
#: asked for 15 GiB)
MAX_REPLICATE_CELLS = 2**28


def fill_replicates(plan: Any, stats: list, chunks: Any, n_boot: int) -> None:
    """Evaluate ``plan`` on chunks ``(slice, tables)`` of replicate tables and store the replicates in ``stats``.

    ``ValueError`` before the first chunk when the replicates of the parts
    would hold more than :data:`MAX_REPLICATE_CELLS` values.
    """
    values = {s.name: np.empty(n_boot) for s in stats}
    shape = {s.name: (n_boot, len(s.parts.estimate)) for s in stats if s.parts is not None}
    width = sum(w for _, w in shape.values()) + len(values)
    if n_boot * width > MAX_REPLICATE_CELLS:
        raise ValueError(f"n_boot={n_boot:,}: the bootstrap would keep n_boot x {width:,} values per replicate (the "
                         f"parts of its statistics) = {n_boot * width:,} float64 values, more than "
                         f"{MAX_REPLICATE_CELLS:,} (2 GiB); lower n_boot (at most "
                         f"{max(2, MAX_REPLICATE_CELLS // width):,} here) or count fewer groups/classes")
    parts: dict = {}
    # statistics whose parts are one array in every chunk (e.g. Multi→'s "abs" and "raw" of one Δ) share storage
    alias: dict = {}
    for sl, tables in chunks:
        owner_of: dict = {}
        for name, x in plan.parts(tables).items():
            if name not in shape:
                continue
            owner = owner_of.setdefault(id(x), name)
            if name not in parts:  # the first chunk
                if owner != name:
                    alias[name] = owner
                    parts[name] = parts[owner]
                else:
                    parts[name] = np.empty(shape[name])
            elif name in alias and alias[name] != owner:
                parts[name] = parts[name].copy()  # no longer the same array: its own storage from here on
                del alias[name]
            if name not in alias:
                parts[name][sl] = x
        for name, v in plan.values(tables).items():
            values[name][sl] = v
    for s in stats:
        s.replicates = values[s.name]
        if s.parts is not None:
            s.parts.replicates = parts[s.name]


def summarize(plan: Any, stats: list, *, n_boot: int, level: float, ci_method: str, p_adjust: str,
              seed: np.random.SeedSequence, cell_counts: np.ndarray | None = None,
              stacklevel: int = 2, test_seed: np.random.SeedSequence | None = None) -> BootstrapResult:
    """Intervals, tests and per-unit tables of statistics whose replicates are filled in (``test_seed``: the seed
    of the Monte-Carlo tests' draws, ``seed`` by default; a stream passes its ``random_state``'s, so that its tests
    draw as :func:`biasamp.bootstrap`'s for the same ``random_state``)."""
    from biasamp._engine.intervals import filled, inference, unit_table, zero_width_note
    from biasamp._engine.pvalues import adjust_pvalues, global_p_value

    source = seed if test_seed is None else test_seed
    test_rng = np.random.default_rng(np.random.SeedSequence(source.entropy, spawn_key=(*source.spawn_key, 2)))
    tests = plan.tests(test_rng) if plan.tests is not None else {}
    estimate, ci, methods, tables, n_undefined, test_methods = {}, {}, {}, {}, {}, {}
    p_value: dict[str, float | None] = {}
    p_global: dict[str, float | None] = {}
    se: dict[str, float] = {}
    mde: dict[str, float] = {}
    notes = list(plan.notes)
    for s in stats:
        estimate[s.name] = s.estimate
        n_undefined[s.name] = int((~np.isfinite(filled(s.replicates, s.name))).sum())
        inf, used = inference(s, ci_method, level, cell_counts)
        lo, hi = inf.low, inf.high
        ci[s.name], methods[s.name] = (lo, hi), used
        # an undefined statistic (NaN estimate, no interval) has no p-value: None, never a silent NaN
        p_value[s.name] = inf.p_value if np.isfinite(inf.p_value) else None
        se[s.name], mde[s.name] = inf.se, inf.min_detectable
        if lo == hi and np.isfinite(lo):
            notes.append(zero_width_note(s))
        elif np.isfinite(s.estimate) and not lo <= s.estimate <= hi:
            notes.append(f"{s.name}: the {used} interval [{lo:.4g}, {hi:.4g}] excludes the estimate {s.estimate:.4g} "
                         "(almost every replicate lies on one side of it); ci_method='auto' gives an interval "
                         "that holds it")
        table = unit_table(s, level) if s.parts is not None else None
        if s.name in tests:
            t = tests[s.name]
            # the test of the global null (no unit has an effect): the smallest adjusted per-unit
            # p-value, Holm's (= Bonferroni's test) or, with "bh", Benjamini-Hochberg's (= Simes' test)
            adjusted = adjust_pvalues(t.p_value, method=p_adjust)
            p_global[s.name] = global_p_value(t.p_value) if p_adjust == "holm" else (
                float(np.nanmin(adjusted)) if np.isfinite(adjusted).any() else float("nan"))
            test_methods[s.name] = t.method
            if table is not None:
                table["p_value"] = t.p_value
                table["p_adjusted"] = adjusted
        else:
            p_global[s.name] = None
        if table is not None:
            tables[s.name] = table
    replicates = pd.DataFrame({s.name: filled(s.replicates, s.name) for s in stats})
    if any(n_undefined.values()):
        warnings.warn(
            REPLICATES_WARNING + ": "
            + ", ".join(f"{k}: {v}" for k, v in n_undefined.items() if v),
            UndefinedPairWarning,
            stacklevel=stacklevel,
        )
    out = BootstrapResult(estimate, ci, replicates, n_undefined, n_boot, level, ci_method, methods, p_value,
                          tables, p_adjust, test_methods, notes, p_global, se, mde)
    object.__setattr__(out, "_result", getattr(plan, "result", None))
    return out

