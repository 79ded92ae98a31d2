"""Type aliases of the public API: array-like label arguments and the string options.

Annotations only (biasamp checks every argument at run time and names it in
its ``ValueError``/``TypeError``); type checkers and IDEs read them. The
string options are ``Literal`` types whose values are the tuples the
functions validate against (``MISSING_CHOICES``, ``CI_METHODS``, ...).
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

import numpy.typing as npt
import pandas as pd

__all__ = [
    "Labels", "Weights", "Missing", "CIMethod", "PAdjust", "Average", "Soft", "BinaryTask", "Combinations", "Support",
    "AttrPredRule",
]


class DataFrameLike(Protocol):
    """A dataframe of another library (polars, pyarrow, ...): the dataframe interchange protocol."""

    def __dataframe__(self, nan_as_null: bool = ..., allow_copy: bool = ...) -> Any: ...


#: A label argument: a 1-D array of classes, or a 2-D indicator/probability matrix (one column per
#: class). numpy arrays, lists, pandas Series/DataFrames, and anything numpy converts (torch
#: tensors, polars Series) or that speaks the dataframe interchange protocol (polars, pyarrow).
Labels = npt.ArrayLike | pd.Series | pd.DataFrame | DataFrameLike
#: Sample weights: one non-negative finite number per row.
Weights = npt.ArrayLike | pd.Series

#: ``missing=``: raise on missing labels, drop their rows, or keep them as a class of their own.
Missing = Literal["raise", "drop", "group"]
#: ``ci_method=`` of the bootstrap.
CIMethod = Literal["auto", "percentile", "basic", "bca", "band"]
#: ``p_adjust=``: Holm's or Benjamini-Hochberg's adjustment of the per-unit p-values.
PAdjust = Literal["holm", "bh"]
#: ``average=`` of the fairness metrics (None: one value per class).
Average = Literal["auto", "binary", "macro"] | None
#: ``soft=``: how probabilities are read (thresholded, or expected counts).
Soft = Literal["threshold", "expected"]
#: ``binary_task``: a binary task read as its positive class, or as both classes (the one-hot reading)
BinaryTask = Literal["positive", "both"]
#: ``combinations=`` of the multi-attribute metrics (or an explicit list of combinations).
Combinations = Literal["observed", "all"]
#: ``support=`` of the multi-attribute metrics.
Support = Literal["containment", "exact"]
#: ``attr_pred_rule=`` of the multi-attribute metrics.
AttrPredRule = Literal["one_hot", "argmax"]
