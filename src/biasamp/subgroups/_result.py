"""The result of a subgroup scan: one row per subgroup, sorted by adjusted evidence."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from biasamp._core.results import ResultMixin

__all__ = ["ScanResult"]

#: the columns of :attr:`ScanResult.subgroups`, in order
COLUMNS = ("rule", "order", "n", "estimate", "ci_low", "ci_high", "p_value", "flagged", "ci_low_unadjusted",
           "ci_high_unadjusted", "p_value_unadjusted", "se", "t", "scanned", "reason", "conditions")


@dataclass(frozen=True)
class ScanResult(ResultMixin):
    """Where a statistic lives: every subgroup scanned, with intervals adjusted for the selection.

    There is no single ``value``: the statistic of every row is ``overall``,
    and each subgroup's is a row of ``subgroups``.

    Attributes
    ----------
    subgroups : pandas.DataFrame
        One row per subgroup of at least ``min_group_size`` rows, sorted by
        adjusted evidence (adjusted p-value, then ``t``; subgroups out of the
        band last): ``rule`` (``"age in [25, 37) & sex = female"``),
        ``order`` (its number of conditions), ``n`` (rows, weighted),
        ``estimate``, ``ci_low`` / ``ci_high`` (the simultaneous interval,
        adjusted for every subgroup scanned), ``p_value`` (adjusted),
        ``flagged`` (the adjusted interval excludes 0), the
        ``*_unadjusted`` interval and p-value of the subgroup alone (not
        adjusted for the selection: do not read the top subgroups by them),
        ``se`` (regular statistics: the delete-one-group jackknife standard error), ``t``
        (its largest ``|unit| / SE``), ``scanned`` (in the band) and
        ``reason`` (why not), ``conditions`` (the (feature, level) pairs).
    statistic, family : str
        The statistic scanned and its family.
    level : float
        The simultaneous coverage of the adjusted intervals.
    overall : float
        The statistic on every row.
    critical_value : float
        The max-t band's critical value ``c``.

    Notes
    -----
    The adjusted intervals hold every subgroup's value at once with
    probability ``level``: :math:`\\hat\\theta_s \\pm c\\,\\widehat{SE}_s`
    with :math:`c` the level-quantile of the largest studentised deviation
    over every subgroup (:func:`biasamp.scan`). Read the top subgroups by
    them, not by the unadjusted columns.

    References
    ----------
    .. [1] J. Cherian, E. Candès. "Statistical inference for fairness
       auditing". 2023.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import biasamp
    >>> rng = np.random.default_rng(1)
    >>> feats = pd.DataFrame({"site": rng.choice(["a", "b"], 2000)})
    >>> a, t = rng.integers(0, 2, 2000), rng.integers(0, 2, 2000)
    >>> res = biasamp.scan(a, t, task_pred=t, features=feats, n_boot=50, random_state=0)
    >>> list(res.subgroups.columns[:7])
    ['rule', 'order', 'n', 'estimate', 'ci_low', 'ci_high', 'p_value']
    """

    subgroups: pd.DataFrame
    statistic: str
    family: str
    level: float
    n_boot: int
    critical_value: float
    overall: float
    max_order: int
    min_group_size: float
    n_candidates: int
    n_groups: int
    regular: bool
    notes: list = field(default_factory=list)

    @classmethod
    def build(cls, frame: pd.DataFrame, **fields: Any) -> ScanResult:
        """The result of an unsorted per-subgroup frame (the scan's last step)."""
        frame = frame.copy()
        frame["flagged"] = frame["scanned"] & ((frame["ci_low"] > 0) | (frame["ci_high"] < 0))
        key = pd.DataFrame({"p": frame["p_value"].fillna(np.inf), "t": -frame["t"].fillna(-np.inf),
                            "o": frame["order"], "r": frame["rule"]})
        order = key.sort_values(["p", "t", "o", "r"], kind="mergesort").index
        frame = frame.loc[order, list(COLUMNS)].reset_index(drop=True)
        return cls(frame, **fields)

    @property
    def n_scanned(self) -> int:
        """Subgroups in the band (a defined statistic that varies over the replicates)."""
        return int(self.subgroups["scanned"].sum())

    @property
    def n_flagged(self) -> int:
        """Subgroups whose adjusted interval excludes 0."""
        return int(self.subgroups["flagged"].sum())

    def top(self, k: int = 10) -> pd.DataFrame:
        """The ``k`` subgroups with the most adjusted evidence (the first ``k`` rows of ``subgroups``)."""
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"k must be a positive integer, got {k!r}")
        return self.subgroups.head(int(k)).reset_index(drop=True)

    def to_frame(self) -> pd.DataFrame:
        """``subgroups`` (a copy), with the statistic and the level as attributes (``.attrs``)."""
        out = self.subgroups.copy()
        out.attrs.update(statistic=self.statistic, level=self.level, critical_value=self.critical_value)
        return out

    def to_dict(self) -> dict:
        """A JSON-ready dict: the settings, the overall value and every subgroup (NaN as None)."""

        def clean(v: Any) -> Any:
            if isinstance(v, (float, np.floating)):
                return None if not math.isfinite(float(v)) else float(v)
            if isinstance(v, (np.integer,)):
                return int(v)
            if isinstance(v, np.bool_):
                return bool(v)
            if isinstance(v, tuple):
                return [clean(x) for x in v]
            return v

        rows = [{k: clean(v) for k, v in row.items()} for row in self.subgroups.to_dict(orient="records")]
        return {
            "statistic": self.statistic, "family": self.family, "level": self.level, "n_boot": self.n_boot,
            "critical_value": clean(self.critical_value), "overall": clean(self.overall),
            "max_order": self.max_order, "min_group_size": self.min_group_size,
            "n_candidates": self.n_candidates, "n_scanned": self.n_scanned, "n_flagged": self.n_flagged,
            "notes": list(self.notes), "subgroups": rows,
        }

    def __repr__(self) -> str:
        head = (f"ScanResult({self.statistic}: {self.n_scanned} of {len(self.subgroups)} subgroups in a "
                f"{self.level:.0%} simultaneous band (c = {self.critical_value:.3g}), {self.n_flagged} flagged; "
                f"overall {self.overall:+.4f})")
        top = self.top(min(5, max(1, len(self.subgroups)))) if len(self.subgroups) else self.subgroups
        lines = [head]
        for _, r in top.iterrows():
            ci = f"[{r.ci_low:+.4f}, {r.ci_high:+.4f}]" if r.scanned else r.reason
            lines.append(f"  {r.rule}: {r.estimate:+.4f} {ci} p_adj={r.p_value:.3g} n={r.n:,.0f}"
                         if r.scanned else f"  {r.rule}: {ci}")
        return "\n".join(lines)

    def plot(self, k: int = 15, ax: Any = None) -> Any:
        """A forest plot of the top ``k`` subgroups: estimates, adjusted and unadjusted intervals (matplotlib).

        Returns the matplotlib Axes (a new figure's when ``ax`` is None).
        """
        try:
            from matplotlib.figure import Figure
        except ImportError as exc:  # pragma: no cover - matplotlib is the [plot] extra
            raise ImportError("ScanResult.plot needs matplotlib (pip install 'biasamp[plot]')") from exc
        top = self.top(k)
        top = top[top["scanned"]].iloc[::-1]
        if ax is None:
            fig = Figure(figsize=(8, 0.45 * max(len(top), 3) + 1.2))
            ax = fig.add_subplot()
        y = np.arange(len(top))
        ax.hlines(y, top["ci_low_unadjusted"], top["ci_high_unadjusted"], color="#7f8c8d", lw=4, alpha=0.5,
                  label="unadjusted")
        colors = np.where(top["flagged"], "#c0392b", "#2e86c1")
        ax.hlines(y, top["ci_low"], top["ci_high"], colors=colors, lw=1.5, label=f"adjusted ({self.level:.0%})")
        ax.scatter(top["estimate"], y, color=colors, zorder=3)
        ax.axvline(0.0, color="black", lw=0.8)
        ax.set_yticks(y)
        ax.set_yticklabels([r if len(r) <= 48 else r[:47] + "…" for r in top["rule"]])
        ax.set_xlabel(self.statistic)
        ax.set_title(f"{self.statistic} by subgroup (top {len(top)}): simultaneous {self.level:.0%} intervals")
        ax.legend(loc="best", fontsize="small")
        return ax
