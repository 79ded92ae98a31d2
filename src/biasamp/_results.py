"""Shared behaviour of result objects: readable repr and ``to_dict``."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

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


class ResultMixin:
    """``to_dict()`` over dataclass fields; tables become lists of records."""

    def to_dict(self) -> dict:
        return {f.name: to_builtin(getattr(self, f.name)) for f in dataclasses.fields(self)}


def fmt(value: float | None, digits: int = 4) -> str:
    """Format a metric value for a repr line."""
    return "None" if value is None else f"{value:+.{digits}f}"


def top_rows(table: pd.DataFrame, column: str, k: int) -> pd.DataFrame:
    """The ``k`` rows not flagged ``undefined`` with the largest ``|table[column]|`` (stable on ties)."""
    defined = table[~table["undefined"]]
    order = defined[column].abs().sort_values(ascending=False, kind="stable").index
    return defined.loc[order[:k]]
