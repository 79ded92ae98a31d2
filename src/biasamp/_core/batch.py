"""A batch of label arguments by role, validated once by the input layer.

The audit takes up to a dozen label arguments (``attr``, ``task``, their
predictions, training labels, weights, and other roles such as captions). They
are checked here once, before any metric runs — each through the label layer
(:func:`biasamp._core.labels._as_array`: its kind, its shape, no NaN), every
test argument one row per test instance, the training arguments among
themselves — and the rows that ``missing=`` and ``sample_weight=`` select are
chosen once (:func:`biasamp._core.rows.select_rows`), for the test and the
training rows each. What remains is a :class:`Batch`: the labels by role, on
the host (numpy arrays, pandas objects with their names), and what the row
selection did.

Every count-based family then reads the roles it declares
(``Family.roles``) from the batch and encodes them by its own class-inference
rule (e.g. BiasAmp→'s classes are those of the test and training ground truth
together, the fairness metrics' those of the test data): the batch holds the
validated labels, not one encoding.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from biasamp._core.labels import _as_array, _as_pandas, _check_finite, _from_tensor

__all__ = ["TEST_ROLES", "TRAIN_ROLES", "Batch", "length", "to_host"]

#: the label roles with one row per test instance (and the weight of each test row: ``sample_weight``)
TEST_ROLES = ("attr", "task", "attr_pred", "task_pred")
#: the training ground truth, with one row per training instance
TRAIN_ROLES = ("attr_train", "task_train")


def length(x: Any) -> int:
    """Rows of labels ``x``."""
    return len(x) if hasattr(x, "__len__") else int(np.shape(x)[0])


def to_host(x: Any) -> Any:
    """Lists become arrays and torch tensors numpy arrays; pandas pass unchanged, numpy in native byte order.

    polars and pyarrow tables and columns become the pandas objects with the same names (``_as_pandas``).
    """
    x = _as_pandas(x)
    if isinstance(x, np.ndarray) and not x.dtype.isnative:
        return x.astype(x.dtype.newbyteorder("="))
    if x is None or isinstance(x, (pd.Series, pd.DataFrame, np.ndarray)):
        return x
    return np.asarray(_from_tensor(x))


#: the key under which the test rows' positions go through the row selection (:meth:`Batch.validated`)
_POSITIONS = "row position"


@dataclass(eq=False)
class Batch:
    """Label arguments by role, validated once (see the module docstring).

    Attributes
    ----------
    labels : dict of str -> labels or None
        By role (``"attr"``, ``"task"``, ``"attr_pred"``, ``"task_pred"``,
        ``"attr_train"``, ``"task_train"``, ``"sample_weight"``, and any
        other role given, such as captions), on the host; None where absent.
        The test roles hold the test rows kept by the row selection, and
        ``"sample_weight"`` their weights.
    n : int
        Test rows (after the row selection).
    n_train : int, optional
        Training rows, None without a training set.
    rows : tuple of RowFilter or None
        What the row selection did to the test and to the training rows.
    kept : ndarray of int or None
        The positions, among the test rows given, of the test rows kept
        (None: every row), so that an argument of one row per test row that
        is not a label (the subgroup scan's features, captions) takes the
        same rows.
    """

    labels: dict = field(default_factory=dict)
    n: int = 0
    n_train: int | None = None
    rows: Any = None
    kept: Any = None

    def get(self, role: str) -> Any:
        """The labels of ``role`` (None when absent)."""
        return self.labels.get(role)

    def roles(self, wanted: Iterable[str]) -> dict:
        """``{role: labels}`` for the ``wanted`` roles (None where absent): a family's ``call`` takes it."""
        return {r: self.labels.get(r) for r in dict.fromkeys(wanted)}

    @classmethod
    def validated(cls, labels: Mapping[str, Any], *, sample_weight: Any = None, missing: str = "raise",
                  checked: Mapping[str, Any] | None = None, test_roles: Sequence[str] = TEST_ROLES,
                  train_roles: Sequence[str] = TRAIN_ROLES, group_roles: Sequence[str] = ("attr",)) -> Batch:
        """Check every label argument once and select the rows; one named error for a bad argument.

        Parameters
        ----------
        labels : mapping of role -> labels or None
            The label arguments. ``test_roles`` have one row per test
            instance (the first one sets the count), ``train_roles`` one per
            training instance; other roles are checked and held as given.
        sample_weight : array-like of shape (n,), optional
            Weights of the test rows (:ref:`def-weights`).
        missing : {"raise", "drop", "group"}
            Rows with a missing value (:ref:`def-missing`): raise naming the
            argument, or select the rows (test and training rows each).
        checked : mapping of name -> array-like, optional
            Arguments that are checked the same way (their kind, no missing
            value) but not held (e.g. validation scores).
        group_roles : sequence of str
            The roles whose missing values become a group with
            ``missing="group"`` (the protected attribute and its training
            labels).
        """
        from biasamp._core.rows import select_rows

        labels = dict(labels)
        present = {k: v for k, v in labels.items() if v is not None}
        for name, x in (*present.items(), *((checked or {}).items())):
            if x is None:
                continue
            arr = _as_array(x, name)[0]
            if missing == "raise" or name in (checked or {}):
                _check_finite(arr, name)
        labels = {k: to_host(v) for k, v in labels.items()}
        test = [r for r in test_roles if labels.get(r) is not None]
        n = length(labels[test[0]]) if test else 0
        for name in test[1:]:
            if length(labels[name]) != n:
                raise ValueError(f"{name} has {length(labels[name])} rows but {test[0]} has {n}: every test argument "
                                 "needs one row per test instance")
        rows: tuple[Any, Any] = (None, None)
        weight = positions = None
        if missing != "raise" or sample_weight is not None:
            given = {k: labels.get(k) for k in test_roles}
            if test:  # the rows' positions ride along the selection
                given[_POSITIONS] = np.arange(n)
            kept, weight, test_rows = select_rows(given, missing=missing,
                                                  group_args=[r for r in group_roles if r in test_roles],
                                                  sample_weight=sample_weight)
            positions = kept.pop(_POSITIONS, None)
            labels.update(kept)
            train_rows = None
            train = [r for r in train_roles if labels.get(r) is not None]
            if train:
                kept, _, train_rows = select_rows({k: labels.get(k) for k in train_roles}, missing=missing,
                                                  group_args=[f"{r}_train" for r in group_roles
                                                              if f"{r}_train" in train_roles])
                labels.update(kept)
            rows = (test_rows, train_rows)
            for name in (*test_roles, *train_roles):
                if labels.get(name) is not None:
                    _check_finite(_as_array(labels[name], name)[0], name)
        if test:
            n = length(labels[test[0]])
        train = [r for r in train_roles if labels.get(r) is not None]
        n_train = None
        if train:
            n_train = length(labels[train[0]])
            for name in train[1:]:
                if length(labels[name]) != n_train:
                    raise ValueError(f"{name} has {length(labels[name])} rows but {train[0]} has {n_train}")
        labels["sample_weight"] = weight
        return cls(labels, n, n_train, rows, positions)
