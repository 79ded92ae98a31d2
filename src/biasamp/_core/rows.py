"""Row selection shared by every count-based metric: sample weights and missing values.

Every count-based family of biasamp (group fairness, BiasAmp→, BiasAmp_MALS,
Multi_MALS / Multi→) passes its row-aligned arguments through
:func:`select_rows` before encoding them, so that the rules of
:ref:`def-weights` and :ref:`def-missing` live in one place:

* ``sample_weight`` (:func:`check_sample_weight`): one finite, non-negative
  weight per row, not all zero. Every count then becomes a sum of weights.
  Rows of weight 0 are dropped *before* encoding: they contribute nothing to
  any count, so they must neither define a class nor become a bootstrap cell.
* ``missing``: ``"raise"`` (the default) leaves the arguments alone, and the
  encoders of :mod:`biasamp.labels` raise ``ValueError`` naming the argument
  and the first offending rows; ``"drop"`` drops every row with a missing
  value (NaN, None, ``pd.NA``) in any argument; ``"group"`` makes a missing
  value of a *protected attribute* (the arguments named in ``group_args``)
  its own class ``"missing"`` (missing values elsewhere still raise).
* :class:`RowFilter` records what happened (the choice, the rows seen, how
  many were dropped, grouped or had weight 0); results carry it and show it
  when something happened. Filters of batches or partitions add.

The selection is a boolean mask applied once to every argument (pandas
objects keep their names and index), so the rows that remain keep their
order and the label layer sees ordinary, complete arguments.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from biasamp._core.labels import _as_pandas, _fmt_rows, to_numpy

__all__ = ["MISSING_CHOICES", "MISSING_GROUP", "RowFilter", "check_missing", "check_sample_weight",
           "check_weight_total", "select_rows"]

MISSING_CHOICES = ("raise", "drop", "group")
#: The largest total weight: float64 holds every whole count up to 2**53.
MAX_TOTAL_WEIGHT = float(2**53)
#: The class a missing protected-attribute value becomes with ``missing="group"``.
MISSING_GROUP = "missing"


@dataclass(frozen=True)
class RowFilter:
    """What happened to the rows before counting.

    Attributes
    ----------
    missing : {"raise", "drop", "group"}
        The ``missing=`` choice.
    n_rows : int
        Rows given.
    n_dropped : int
        Rows dropped for a missing value (``missing="drop"``).
    n_grouped : int
        Rows whose protected attribute was missing and became the class
        ``"missing"`` (``missing="group"``).
    n_zero_weight : int
        Rows dropped because their ``sample_weight`` was 0.
    """

    missing: str
    n_rows: int
    n_dropped: int = 0
    n_grouped: int = 0
    n_zero_weight: int = 0

    @property
    def n_used(self) -> int:
        """Rows counted (given minus dropped minus zero-weight)."""
        return self.n_rows - self.n_dropped - self.n_zero_weight

    @property
    def changed(self) -> bool:
        """Whether any row was dropped or regrouped (what a repr should mention)."""
        return bool(self.n_dropped or self.n_grouped or self.n_zero_weight)

    def to_dict(self) -> dict:
        return {"missing": self.missing, "n_rows": self.n_rows, "n_dropped": self.n_dropped,
                "n_grouped": self.n_grouped, "n_zero_weight": self.n_zero_weight}

    def describe(self) -> str:
        """One line in plain words (``"all N rows used"`` when nothing happened)."""
        parts = []
        if self.n_dropped:
            parts.append(f"{self.n_dropped} rows with a missing value dropped (missing='drop')")
        if self.n_grouped:
            parts.append(f"{self.n_grouped} rows with a missing group put in the group 'missing'")
        if self.n_zero_weight:
            parts.append(f"{self.n_zero_weight} zero-weight rows dropped")
        return "; ".join(parts) or f"all {self.n_rows} rows used"

    def __add__(self, other: Any) -> RowFilter:
        """The filter of two disjoint row sets (batches, partitions) counted with the same choice."""
        if not isinstance(other, RowFilter):
            return NotImplemented
        if other.missing != self.missing:
            raise ValueError(f"cannot add row filters with different missing= choices: {self.missing!r} vs "
                             f"{other.missing!r}")
        return RowFilter(self.missing, self.n_rows + other.n_rows, self.n_dropped + other.n_dropped,
                         self.n_grouped + other.n_grouped, self.n_zero_weight + other.n_zero_weight)


def add_filters(a: RowFilter | None, b: RowFilter | None) -> RowFilter | None:
    """``a + b`` where either may be unknown (``None``: a hand-built table); unknown wins."""
    if a is None or b is None:
        return None
    return a + b


def check_missing(missing: Any) -> str:
    """Validate a ``missing=`` argument."""
    if not isinstance(missing, str) or missing not in MISSING_CHOICES:
        raise ValueError(f"missing must be one of {MISSING_CHOICES}, got {missing!r}")
    return missing


def check_sample_weight(sample_weight: Any, n_rows: int, name: str = "sample_weight") -> np.ndarray | None:
    """``sample_weight`` as float64: 1-D, one per row, finite, non-negative, not all zero (``None`` stays None).

    Raises ``TypeError`` (not numbers) or ``ValueError`` (shape, NaN/inf,
    negative, all zero, a total above 2**53 where float64 sums of weights
    stop being exact and then overflow) naming ``name`` and the first
    offending rows.
    """
    if sample_weight is None:
        return None
    w = to_numpy(sample_weight, name)
    if w.ndim != 1 or len(w) != n_rows:
        raise ValueError(f"{name} must be 1-D with one weight per row ({n_rows} rows), got shape {w.shape}")
    if w.dtype == object:
        if pd.isna(w).any():
            raise ValueError(f"{name} contains NaN/None/missing weights (rows {_fmt_rows(np.flatnonzero(pd.isna(w)))})")
        try:
            w = w.astype(np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must hold numbers, got non-numeric objects") from None
    if w.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold numbers, got dtype {w.dtype}")
    w = w.astype(np.float64)
    bad = ~np.isfinite(w)
    if bad.any():
        raise ValueError(f"{name} contains NaN or inf weights (rows {_fmt_rows(np.flatnonzero(bad))})")
    if (w < 0).any():
        raise ValueError(f"{name} must be non-negative, got negative weights (rows {_fmt_rows(np.flatnonzero(w < 0))})")
    if n_rows and not (w > 0).any():
        raise ValueError(f"{name} is zero for every row: nothing would be counted")
    with np.errstate(over="ignore"):
        check_weight_total(float(np.sum(w)), name)
    return w


def check_weight_total(total: float, name: str = "sample_weight", where: str = "") -> float:
    """``total`` when it is at most :data:`MAX_TOTAL_WEIGHT` (2**53), else a ``ValueError`` naming ``name``.

    ``where`` says what was summed when it is more than one call's weights
    (the batches of an accumulator, the partitions of a Dask collection).
    """
    if not total <= MAX_TOTAL_WEIGHT:
        raise ValueError(
            f"{name} sums to {total:.3g}{where}, more than 2**53 (about 9.0e15): float64 counts lose whole units "
            f"beyond it (and overflow near 1e308), so rates, intervals and tests would be silently wrong; rescale "
            f"the weights (e.g. divide by their mean)")
    return total


def _n_rows(x: Any) -> int | None:
    """Number of rows of an array-like, or None when it is not one (the encoders name the problem)."""
    if type(x).__module__.startswith(("polars", "pyarrow")) and hasattr(x, "__len__"):
        return len(x)
    if isinstance(x, (pd.DataFrame, pd.Series)):
        return len(x)
    shape = getattr(x, "shape", None)
    if shape is not None:
        return int(shape[0]) if len(shape) else None
    if isinstance(x, (list, tuple)):
        return len(x)
    return None


def _as_rows(x: Any, name: str) -> Any:
    """pandas objects as they are (their names are class names); anything else via :func:`to_numpy`."""
    x = _as_pandas(x)  # polars/pyarrow: the pandas object with the same names
    if isinstance(x, (pd.DataFrame, pd.Series)):
        return x
    return to_numpy(x, name)


def _missing_rows(x: Any) -> np.ndarray:
    """Rows of ``x`` holding a missing value (NaN, None, pd.NA) anywhere."""
    if isinstance(x, pd.DataFrame):
        return x.isna().to_numpy().any(axis=1)
    if isinstance(x, pd.Series):
        return x.isna().to_numpy()
    if x.ndim == 0:
        return np.zeros(0, dtype=bool)
    if x.dtype.kind in "biuSU":
        return np.zeros(len(x), dtype=bool)
    if x.dtype.kind == "f":
        nan = np.isnan(x)
        return nan if x.ndim == 1 else nan.reshape(len(x), -1).any(axis=1)
    return pd.isna(pd.DataFrame(x.reshape(len(x), -1))).to_numpy().any(axis=1)


def _take(x: Any, keep: np.ndarray) -> Any:
    if isinstance(x, (pd.DataFrame, pd.Series)):
        return x.iloc[np.flatnonzero(keep)]
    return x[keep]


def _refuse_real_missing(present: np.ndarray, name: str) -> None:
    """ValueError when a real group is already called ``"missing"``: grouping would merge the missing rows into it."""
    if present.dtype == object and bool((pd.Series(present, dtype=object) == MISSING_GROUP).any()):
        raise ValueError(
            f"missing='group' would merge the rows with a missing {name} into the real group {MISSING_GROUP!r} "
            f"of {name}; rename that group, or use missing='drop'")


def _grouped(x: Any, mask: np.ndarray, name: str, columns: bool) -> Any:
    """``x`` with its missing entries replaced by the class ``"missing"``."""
    if isinstance(x, pd.DataFrame) or (not isinstance(x, pd.Series) and x.ndim == 2):
        if not columns:
            raise ValueError(
                f"missing='group' makes a missing value of a 1-D label its own class 'missing', but {name} is "
                "2-D (an indicator matrix has no place for it): use missing='drop', or pass one label per row")
        frame = x if isinstance(x, pd.DataFrame) else pd.DataFrame(x)
        for c in frame.columns:
            col = frame[c]
            if col.isna().any():
                _refuse_real_missing(col[~col.isna()].to_numpy(), f"{name}[{c!r}]")
        out = frame.astype(object).where(~frame.isna(), MISSING_GROUP)
        return out if isinstance(x, pd.DataFrame) else out.to_numpy()
    values = x.to_numpy() if isinstance(x, pd.Series) else x
    present = values[~mask]
    _refuse_real_missing(present, name)
    if values.dtype.kind == "f" and present.size and np.array_equal(present, np.round(present)) \
            and np.abs(present).max() < 2**53:
        present = present.astype(np.int64)  # 0.0/1.0 beside NaN: the classes are the integers
    out = np.empty(len(values), dtype=object)
    out[~mask] = list(present.tolist()) if present.dtype != object else list(present)
    out[mask] = MISSING_GROUP
    return pd.Series(out, index=x.index, name=x.name) if isinstance(x, pd.Series) else out


def select_rows(arrays: Mapping[str, Any], *, missing: str = "raise", group_args: Sequence[str] = (),
                sample_weight: Any = None, weight_name: str = "sample_weight",
                group_columns: bool = True) -> tuple[dict[str, Any], np.ndarray | None, RowFilter]:
    """Apply ``missing=`` and ``sample_weight=`` to row-aligned arguments.

    Parameters
    ----------
    arrays : mapping of argument name -> array-like or None
        Arguments with one entry per row (``None`` entries are passed through).
    missing : {"raise", "drop", "group"}, default "raise"
        See the module docstring.
    group_args : sequence of str
        The arguments whose missing values become the class ``"missing"``
        with ``missing="group"`` (the protected attribute).
    sample_weight : array-like of shape (n,), optional
        One non-negative weight per row.
    weight_name : str, default "sample_weight"
        The weights' argument name, for messages.
    group_columns : bool, default True
        With ``missing="group"``, whether a 2-D argument of ``group_args`` is
        grouped column by column (several sensitive features) or refused
        (an indicator matrix, where a "missing" class has no column).

    Returns
    -------
    arrays : dict
        The arguments restricted to the rows kept (pandas objects stay
        pandas; other array-likes become numpy arrays).
    weights : ndarray of float64 or None
        The weights of the rows kept.
    rows : RowFilter
    """
    missing = check_missing(missing)
    present = {k: v for k, v in arrays.items() if v is not None}
    lengths = {k: n for k, n in ((k, _n_rows(v)) for k, v in present.items()) if n is not None}
    n = max(lengths.values(), default=0)
    if missing == "raise" and sample_weight is None:  # nothing to do: the encoders check every argument
        return dict(arrays), None, RowFilter(missing, n)
    for k, n_k in lengths.items():
        if n_k == 0:
            raise ValueError(f"{k} is empty (0 rows)")
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{k} has {m}" for k, m in lengths.items())
        raise ValueError(f"length mismatch: {desc} rows")
    w = check_sample_weight(sample_weight, n, weight_name)
    out = dict(arrays)
    keep = np.ones(n, dtype=bool)
    n_grouped = 0
    if missing != "raise":
        for k, v in present.items():
            v = _as_rows(v, k)
            out[k] = v
            m = _missing_rows(v)
            if not m.any():
                continue
            if missing == "group" and k in group_args:
                out[k] = _grouped(v, m, k, group_columns)
                n_grouped += int(m.sum())
            elif missing == "drop":
                keep &= ~m
    n_dropped = int((~keep).sum())
    n_zero = 0
    if w is not None:
        zero = (w == 0) & keep
        n_zero = int(zero.sum())
        keep &= ~zero
    if n and not keep.any():
        raise ValueError(
            f"no row left to count: missing='drop' dropped {n_dropped} of the {n} rows (each has a missing value "
            f"in one of {sorted(present)}) and {n_zero} more have {weight_name} 0")
    if not keep.all():
        out = {k: (_take(_as_rows(v, k), keep) if v is not None else None) for k, v in out.items()}
        w = w[keep] if w is not None else None
    return out, w, RowFilter(missing, n, n_dropped, n_grouped, n_zero)
