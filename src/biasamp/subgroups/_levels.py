"""The levels of the scan's features: which values a condition ``feature = value`` can take.

The rule (docs/scan.md, "Features"):

* a categorical, string, object or boolean column: its values as they are,
  one level each (``"sex = female"``);
* a numeric column with at most :data:`MAX_DISTINCT` (10) distinct values: one
  level per value (``"children = 2"``);
* a numeric column with more: four bins at its quartiles (of the non-missing
  values, unweighted; repeated edges merged), closed on the left and open on
  the right except the last (``"age in [25, 37)"``, ``"age in [52, 90]"``).
  The quartiles are those of at most :data:`QUANTILE_ROWS` (65,536) of its
  non-missing values: those of the rows whose hashed positions are smallest
  (every value of a smaller column), so that a stream read once, batch by
  batch (:class:`LevelCount`), finds the levels of the column in memory;
* a missing value (None, NaN, NaT, pandas NA) is a level of its own,
  ``"missing"`` (``"age is missing"``).

The levels are fixed before counting (:func:`levels_of` on the whole column,
:class:`LevelCount` over its batches, or given), so that batches and
partitions encode a row alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from biasamp._core.labels import _as_pandas, canonical_order
from biasamp._engine.resample import _splitmix64

__all__ = ["MAX_DISTINCT", "QUANTILE_ROWS", "FeatureLevels", "LevelCount", "encode", "feature_frame", "levels_of"]

#: numeric columns with at most this many distinct values keep them as levels; others are binned
MAX_DISTINCT = 10
#: the bins of a numeric column with more distinct values: its quartiles
N_BINS = 4
#: at most this many levels per column (an identifier-like column would make the scan's tables explode)
MAX_LEVELS = 64
MISSING = "missing"
#: the quartiles of a numeric column are those of at most this many of its values (the smallest hashed positions)
QUANTILE_ROWS = 65_536
_QUANTILE_SALT = np.uint64(0x243F6A8885A308D3)


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
    """``features`` as a DataFrame (a DataFrame, a polars or pyarrow table, a mapping of columns, a 2-D array)."""
    features = _as_pandas(features)  # polars/pyarrow tables: the pandas frame with the same column names
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


def _check_values(name: str, col: pd.Series, miss: np.ndarray) -> None:
    """``TypeError``/``ValueError`` naming the column for values no level can hold: complex or infinite numbers."""
    if pd.api.types.is_complex_dtype(col.dtype):
        raise TypeError(f"features column {name!r} is complex: give real numbers (or strings)")
    if _numeric(col):
        x = np.asarray(col[~miss].to_numpy(dtype=np.float64))
        if np.isinf(x).any():
            raise ValueError(f"features column {name!r} holds an infinite value: no bin of its quartiles holds it "
                             "(replace it, or make it missing)")


def levels_of(name: str, col: pd.Series) -> FeatureLevels:
    """The levels of one column by the module's rule (its rows' positions: 0, 1, ...)."""
    return LevelCount(name).add(col, np.arange(len(col))).levels()


class LevelCount:
    """What the levels of one column need, from batches of its rows: adds over batches and partitions.

    Its distinct values (at most :data:`MAX_LEVELS` + 1 kept), whether it has
    missing values, and, for a numeric column, the values of the
    :data:`QUANTILE_ROWS` non-missing rows whose hashed positions (SplitMix64
    of the row's position) are smallest, whose quartiles cut it. The rows'
    positions key the sample, so the batches, merged in any order, give the
    levels of the whole column (:func:`levels_of`).
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.numeric: bool | None = None
        self.distinct: np.ndarray = np.empty(0, dtype=object)
        self.missing = False
        self.keys = np.empty(0, dtype=np.uint64)
        self.sample = np.empty(0, dtype=np.float64)

    def _check_kind(self, numeric: bool) -> None:
        if self.numeric is not None and self.numeric != numeric:
            raise ValueError(f"features column {self.name!r} is numeric in some rows' batches and not in others")
        self.numeric = numeric

    def _keep(self, distinct: np.ndarray, keys: np.ndarray, sample: np.ndarray) -> None:
        cap = (MAX_DISTINCT if self.numeric else MAX_LEVELS) + 1  # enough to tell more from at most
        self.distinct = distinct[:cap]
        if len(keys) > QUANTILE_ROWS:
            top = np.argpartition(keys, QUANTILE_ROWS - 1)[:QUANTILE_ROWS]
            keys, sample = keys[top], sample[top]
        self.keys, self.sample = keys, sample

    def add(self, col: pd.Series, row_ids: np.ndarray) -> LevelCount:
        """Count a batch: the column's values and their rows' positions. Returns ``self``."""
        col = pd.Series(col) if not isinstance(col, pd.Series) else col
        self._check_kind(_numeric(col))
        miss = _missing(col)
        _check_values(self.name, col, miss)
        self.missing = self.missing or bool(miss.any())
        present = col[~miss].to_numpy()
        seen = np.asarray(pd.unique(present)[: MAX_LEVELS + 1], dtype=object)
        distinct = pd.unique(np.concatenate([self.distinct, seen]))
        keys, sample = self.keys, self.sample
        if self.numeric:
            ids = np.asarray(row_ids, dtype=np.uint64)[~miss]
            keys = np.concatenate([keys, _splitmix64(ids ^ _QUANTILE_SALT)])
            sample = np.concatenate([sample, np.asarray(present, dtype=np.float64)])
        self._keep(distinct, keys, sample)
        return self

    def merge(self, other: LevelCount) -> LevelCount:
        """Add the rows another count saw (the same column, other rows). Returns ``self``."""
        if other.numeric is not None:
            self._check_kind(other.numeric)
        self.missing = self.missing or other.missing
        self._keep(pd.unique(np.concatenate([self.distinct, other.distinct])),
                   np.concatenate([self.keys, other.keys]), np.concatenate([self.sample, other.sample]))
        return self

    def levels(self) -> FeatureLevels:
        """The column's levels."""
        name = self.name
        if self.numeric:
            if len(self.distinct) > MAX_DISTINCT:
                q = np.quantile(self.sample, np.linspace(0.0, 1.0, N_BINS + 1))
                edges = tuple(float(x) for x in np.unique(q))
                labels = tuple(f"[{_fmt(edges[j])}, {_fmt(edges[j + 1])}{']' if j == len(edges) - 2 else ')'}"
                               for j in range(len(edges) - 1))
                return FeatureLevels(name, labels, edges, self.missing)
            kept = tuple(v.item() if hasattr(v, "item") else v for v in self.distinct)
            return FeatureLevels(name, tuple(canonical_order(kept)), None, self.missing)
        kept = tuple(self.distinct.tolist())
        if len(kept) > MAX_LEVELS:
            raise ValueError(f"features column {name!r} has more than {MAX_LEVELS} distinct values; the scan takes "
                             f"at most {MAX_LEVELS} levels per column (group its values, or bin it, first)")
        return FeatureLevels(name, tuple(canonical_order(kept)), None, self.missing)


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
        _check_values(lv.name, col, miss)
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
