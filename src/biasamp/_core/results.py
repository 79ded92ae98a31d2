"""Shared behaviour of result objects: ``to_dict``, ``to_frame`` and the notebook display."""

from __future__ import annotations

import dataclasses
import html
import math
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd


def to_builtin(value: Any) -> Any:
    """Convert numpy/pandas values (recursively) to JSON-friendly builtins."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return value.to_dict() if hasattr(value, "to_dict") else {
            f.name: to_builtin(getattr(value, f.name)) for f in dataclasses.fields(value)
        }
    if isinstance(value, pd.DataFrame):
        if not isinstance(value.index, pd.RangeIndex):  # a meaningful index (e.g. class): keep it
            value = value.reset_index()
        return [{str(k): to_builtin(v) for k, v in row.items()} for row in value.to_dict(orient="records")]
    if isinstance(value, pd.Series):
        return {str(k): to_builtin(v) for k, v in value.items()}
    if isinstance(value, dict):
        return {str(k): to_builtin(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_builtin(v) for v in value]
    if isinstance(value, np.ndarray):
        return [to_builtin(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None  # undefined entries: the result's flags say which
    return value


#: Rows of ``to_frame()`` shown by ``_repr_html_`` (first and last halves).
HTML_MAX_ROWS = 20


def _scalar_items(result: Any) -> dict:
    """The scalar fields of a dataclass result; an interval ``(low, high)`` becomes two columns."""
    row: dict = {}
    for f in dataclasses.fields(result):
        v = getattr(result, f.name)
        if isinstance(v, np.generic):
            v = v.item()
        if v is None or isinstance(v, (bool, int, float, str)):
            row[f.name] = v
        elif (isinstance(v, tuple) and len(v) == 2
              and all(isinstance(x, (int, float, np.number)) for x in v)):
            row[f"{f.name}_low"], row[f"{f.name}_high"] = float(v[0]), float(v[1])
    return row


class ResultMixin:
    """What every biasamp result offers, on top of its own fields and ``repr``.

    * ``to_dict()``: every field as JSON-friendly builtins (tables become
      lists of records, NaN becomes ``None``; the result's flags say why).
    * ``to_frame()``: the result as a :class:`pandas.DataFrame`, the rows its
      headline is computed from (per pair, per class, per iteration...). A
      result class overrides it where that needs more than its only table;
      without any table it is one row of the scalar fields.
    * ``_repr_html_()``: the notebook display, the ``repr`` headline above
      ``to_frame()`` (at most :data:`HTML_MAX_ROWS` rows shown).
    """

    if TYPE_CHECKING:  # every result is a dataclass that mixes this class in
        __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]

    def to_dict(self) -> dict:
        """Every field as JSON-friendly builtins (``json.dumps`` accepts the result)."""
        return {f.name: to_builtin(getattr(self, f.name)) for f in dataclasses.fields(self)}

    def to_frame(self) -> pd.DataFrame:
        """The result as a DataFrame: a copy of its only table, else one row of its scalar fields."""
        tables = [getattr(self, f.name) for f in dataclasses.fields(self)
                  if isinstance(getattr(self, f.name), pd.DataFrame)]
        if len(tables) == 1:
            return tables[0].copy()
        return pd.DataFrame([_scalar_items(self)])

    def _repr_html_(self) -> str:
        return result_html(repr(self), self.to_frame())


def result_html(headline: str, frame: pd.DataFrame) -> str:
    """A result's notebook display: the escaped ``headline`` above ``frame`` (rows elided past the limit)."""
    table = frame.to_html(max_rows=HTML_MAX_ROWS, border=0, classes="biasamp-table", na_rep="undefined")
    return f'<div class="biasamp-result"><pre>{html.escape(headline)}</pre>{table}</div>'


def fmt(value: float | None, digits: int = 4) -> str:
    """Format a metric value for a repr line (see :func:`signed`)."""
    return "None" if value is None else signed(value, digits)


#: values closer to 0 than this are printed as 0: every metric is a fraction (or a log-ratio) built from
#: counts, and a nonzero value this small is the rounding error of an exact 0
EXACT_ZERO = 1e-12


def as_read(value: Any) -> float:
    """``value`` as a reading sees it: within :data:`EXACT_ZERO` (1e-12) of 0 it is 0 (NaN stays NaN).

    Every reading (amplified, reduced, disparity, no evidence, ...) and every
    "does the interval exclude 0" is made on values passed through this, so a
    bound of ``2.8e-17`` (the rounding error of an exact 0) reads as 0, as it
    prints (:func:`signed`).
    """
    v = float(value)
    return 0.0 if abs(v) < EXACT_ZERO else v


def interval_side(low: Any, high: Any) -> int:
    """``+1`` when the interval ``[low, high]`` lies above 0, ``-1`` below 0, ``0`` when it holds 0 or is missing.

    The bounds are read with :func:`as_read`: an interval excludes 0 exactly
    when ``as_read(low) > 0`` or ``as_read(high) < 0``.
    """
    if low is None or high is None:
        return 0
    lo, hi = as_read(low), as_read(high)
    if math.isnan(lo) or math.isnan(hi):
        return 0
    return 1 if lo > 0 else -1 if hi < 0 else 0


def signed(value: float, digits: int = 4) -> str:
    """``+0.1234``; a nonzero value that would print as ``+0.0000`` in scientific notation (``+3.2e-06``).

    A reader must never see an interval ``[+0.0000, ...]`` read as lying above 0
    without the digits that show it. A value within ``EXACT_ZERO`` (1e-12) of 0 is
    floating-point rounding of an exact 0 (a sum of terms that cancel) and prints
    as ``+0.0000``, never as ``-2.2e-20``.
    """
    v = float(value)
    if abs(v) < EXACT_ZERO:
        v = 0.0
    if v != 0 and math.isfinite(v) and abs(v) < 0.5 * 10.0 ** -digits:
        return f"{v:+.1e}"
    return f"{v:+.{digits}f}"


def top_rows(table: pd.DataFrame, column: str, k: int) -> pd.DataFrame:
    """The ``k`` rows not flagged ``undefined`` with the largest ``|table[column]|`` (stable on ties)."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"k must be a whole number of rows, got {type(k).__name__} {k!r}")
    if k < 0:
        raise ValueError(f"k must be >= 0 (the number of rows to show), got {k}")
    defined = table[~table["undefined"]]
    order = defined[column].abs().sort_values(ascending=False, kind="stable").index
    return defined.loc[order[:k]]
