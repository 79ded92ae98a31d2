"""The levels of the scan's features: which values a condition ``feature = value`` can take.

The rule (docs/scan.md, "Features"):

* a categorical, string, object or boolean column: its values as they are,
  one level each (``"sex = female"``);
* a numeric column with at most :data:`MAX_DISTINCT` (10) distinct values: one
  level per value (``"children = 2"``);
* a numeric column with more: four bins at its quartiles (of the non-missing
  values, unweighted; repeated edges merged), closed on the left and open on
  the right except the last (``"age in [25, 37)"``, ``"age in [52, 90]"``);
* a missing value (None, NaN, NaT, pandas NA) is a level of its own,
  ``"missing"`` (``"age is missing"``).

The levels are fixed before counting (:func:`levels_of` on the whole column,
or given), so that batches and partitions encode a row alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from biasamp._core.labels import canonical_order

__all__ = ["MAX_DISTINCT", "FeatureLevels", "encode", "feature_frame", "levels_of"]

#: numeric columns with at most this many distinct values keep them as levels; others are binned
MAX_DISTINCT = 10
#: the bins of a numeric column with more distinct values: its quartiles
N_BINS = 4
#: at most this many levels per column (an identifier-like column would make the scan's tables explode)
MAX_LEVELS = 64
MISSING = "missing"


def _fmt(x: float) -> str:
    return f"{x:.4g}"


@dataclass(frozen=True)
class FeatureLevels:
    """The levels of one feature: its values (``edges`` None) or the edges of its bins, and whether it has missing.

    ``values``: the level values in order (bins: their labels); ``edges``:
    the bin edges ``e0 < e1 < ... < ek`` (level ``j`` is ``[e_j, e_{j+1})``,
    the last closed); ``missing``: a last level ``"missing"``.
    """

    name: str
    values: tuple
    edges: tuple | None = None
    missing: bool = False

    @property
    def n_levels(self) -> int:
        """The number of levels, ``"missing"`` included."""
        return len(self.values) + int(self.missing)

    def condition(self, j: int) -> str:
        """The condition of level ``j`` in words (``"age in [25, 37)"``, ``"sex = female"``)."""
        if j == len(self.values):
            return f"{self.name} is missing"
        if self.edges is not None:
            lo, hi = self.edges[j], self.edges[j + 1]
            close = "]" if j == len(self.values) - 1 else ")"
            return f"{self.name} in [{_fmt(lo)}, {_fmt(hi)}{close}"
        return f"{self.name} = {self.values[j]}"

    def level(self, j: int) -> Any:
        """The value of level ``j`` (a bin's label, or ``"missing"``)."""
        return MISSING if j == len(self.values) else self.values[j]


def feature_frame(features: Any) -> pd.DataFrame:
    """``features`` as a DataFrame (a DataFrame, a mapping of columns, or anything ``pd.DataFrame`` accepts)."""
    if isinstance(features, pd.DataFrame):
        frame = features
    else:
        if features is None or isinstance(features, (str, bytes)) or np.ndim(features) == 1 and not \
                isinstance(features, Mapping):
            raise TypeError("features must be a DataFrame (or DataFrame-like: a mapping of column name to values, "
                            f"a 2-D array), got {type(features).__name__}")
        try:
            frame = pd.DataFrame(features)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"features must be a DataFrame or DataFrame-like, got {type(features).__name__}: "
                            f"{exc}") from None
    if frame.shape[1] == 0:
        raise ValueError("features has no column: give at least one column to scan")
    names = [str(c) for c in frame.columns]
    if len(set(names)) != len(names):
        raise ValueError(f"features has repeated column names: {names}")
    return frame


def _missing(col: pd.Series) -> np.ndarray:
    return np.asarray(col.isna().to_numpy(), dtype=bool)


def _numeric(col: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(col.dtype) and not pd.api.types.is_bool_dtype(col.dtype)


def levels_of(name: str, col: pd.Series) -> FeatureLevels:
    """The levels of one column by the module's rule."""
    miss = _missing(col)
    present = col[~miss]
    if _numeric(col):
        values = np.asarray(present.to_numpy(), dtype=np.float64)
        distinct = np.unique(values)
        if len(distinct) > MAX_DISTINCT:
            q = np.quantile(values, np.linspace(0.0, 1.0, N_BINS + 1))
            edges = tuple(float(x) for x in np.unique(q))
            labels = tuple(f"[{_fmt(edges[j])}, {_fmt(edges[j + 1])}{']' if j == len(edges) - 2 else ')'}"
                           for j in range(len(edges) - 1))
            return FeatureLevels(name, labels, edges, bool(miss.any()))
        kept = tuple(v.item() if hasattr(v, "item") else v for v in pd.unique(present.to_numpy()))
        return FeatureLevels(name, tuple(canonical_order(kept)), None, bool(miss.any()))
    kept = tuple(pd.unique(present.to_numpy()).tolist())
    if len(kept) > MAX_LEVELS:
        raise ValueError(f"features column {name!r} has {len(kept)} distinct values; the scan takes at most "
                         f"{MAX_LEVELS} levels per column (group its values, or bin it, first)")
    return FeatureLevels(name, tuple(canonical_order(kept)), None, bool(miss.any()))


def check_levels(levels: Sequence[FeatureLevels], frame: pd.DataFrame) -> None:
    """``ValueError`` unless ``levels`` name the columns of ``frame``, in order."""
    names = [str(c) for c in frame.columns]
    if [lv.name for lv in levels] != names:
        raise ValueError(f"features has the columns {names}, the scan's levels are of {[lv.name for lv in levels]}")


def encode(frame: pd.DataFrame, levels: Sequence[FeatureLevels]) -> np.ndarray:
    """Level code of every row and feature, ``(n, F)`` int64 (``ValueError`` naming a value with no level)."""
    check_levels(levels, frame)
    out = np.empty((len(frame), len(levels)), dtype=np.int64)
    for j, lv in enumerate(levels):
        col = frame.iloc[:, j]
        miss = _missing(col)
        code = np.full(len(col), len(lv.values), dtype=np.int64)
        if lv.edges is not None:
            if not _numeric(col) and not miss.all():
                raise ValueError(f"features column {lv.name!r} is binned, but holds non-numeric values")
            x = np.asarray(col.to_numpy(dtype=np.float64, na_value=np.nan))[~miss]
            inner = np.asarray(lv.edges[1:-1], dtype=np.float64)
            code[~miss] = np.searchsorted(inner, x, side="right")
        else:
            lookup = pd.Index(list(lv.values))
            found = lookup.get_indexer(col[~miss].to_numpy())
            if (found < 0).any():
                bad = col[~miss].to_numpy()[found < 0][0]
                raise ValueError(f"features column {lv.name!r} holds {bad!r}, which is none of its levels "
                                 f"{list(lv.values)[:10]!r}")
            code[~miss] = found
        if miss.any() and not lv.missing:
            raise ValueError(f"features column {lv.name!r} has missing values, but its levels have no 'missing'")
        out[:, j] = code
    return out


def rule_notes(levels: Sequence[FeatureLevels]) -> list[str]:
    """Sentences saying how each binned or missing-holding column was read."""
    notes = []
    for lv in levels:
        if lv.edges is not None:
            notes.append(f"{lv.name}: more than {MAX_DISTINCT} distinct values, binned at its quartiles "
                         f"({', '.join(map(_fmt, lv.edges))})")
        if lv.missing:
            notes.append(f"{lv.name}: missing values are a level of their own ('{lv.name} is missing')")
    return notes
