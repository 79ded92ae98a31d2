"""The rows of a call with a test and a training set: each filtered apart, taken from an encoded label
matrix, and the lines a result prints about them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from biasamp._core.labels import LabelMatrix
from biasamp._core.rows import RowFilter, select_rows

__all__ = ["select_train_test", "take_rows"]


def _rows_lines(rows: RowFilter | None, train_rows: RowFilter | None, weighted: bool) -> list[str]:
    """Repr lines for a row filter that did something, and for weights."""
    out = []
    for what, f in (("test rows", rows), ("training rows", train_rows)):
        if f is not None and f.changed:
            out.append(f"  {what}: {f.describe()},")
    if weighted:
        out.append("  weighted rows: every count is a sum of sample weights,")
    return out


def select_train_test(test: dict, train: dict | None, *, sample_weight: Any, train_sample_weight: Any,
                      missing: str, group_args: tuple = ("attr", "attr_train")):
    """The row layer (:func:`biasamp._core.rows.select_rows`) on a test and a training set of arguments.

    The two sets have their own rows, so they are filtered separately:
    ``sample_weight`` weights the test rows, ``train_sample_weight`` the
    training rows. Returns ``(test, weights, rows, train, train_weights,
    train_rows)`` (the training part ``None`` when ``train`` is).
    """
    test, weights, rows = select_rows(test, missing=missing, group_args=group_args, sample_weight=sample_weight,
                                      group_columns=False)
    if train is None:
        if train_sample_weight is not None:
            raise ValueError("train_sample_weight weights the training rows, but attr_train/task_train were not "
                             "given (without a training set the test rows and sample_weight stand in for it)")
        return test, weights, rows, None, None, None
    train, train_weights, train_rows = select_rows(
        train, missing=missing, group_args=group_args, sample_weight=train_sample_weight,
        weight_name="train_sample_weight", group_columns=False)
    return test, weights, rows, train, train_weights, train_rows


def take_rows(m: LabelMatrix, rows: np.ndarray) -> LabelMatrix:
    """The rows ``rows`` of an encoded label matrix (same classes): :meth:`LabelMatrix.take`."""
    return m.take(rows)
