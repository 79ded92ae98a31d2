"""Machinery of the property-based fuzz of the public API (``tests/test_fuzz*.py``).

The promise under test (:ref:`def-inputs`): every public name accepts every input
kind of the input layer, gives the same answer for the same data in whatever
container, dtype, row order or class names it arrives, and rejects bad input
with a ``ValueError``/``TypeError`` whose message names the argument; no
number it returns is NaN or infinite unless the result flags it (a reason, an
``undefined`` column, an ``n_undefined`` count).

This module holds the parts the test files share:

* ``Data`` and :func:`datasets`: a small random evaluation set (test and
  train rows, ground truth, predictions, scores);
* the **input kinds**: ``NASTY`` transforms (valid inputs in unusual
  containers or dtypes, which must give the plain result) and ``INVALID``
  transforms (which must raise a named error), per argument kind;
* ``Case``: one public callable, how to build its valid arguments from a
  ``Data``, its scalar options and which invariances it promises;
* :func:`unflagged_nonfinite`, :func:`fingerprint`, :func:`headline`: what the
  assertions compare.

The table of cases itself is in ``tests/_fuzz_cases.py``.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from hypothesis import strategies as st

try:  # torch is optional: its input kinds are tested in test_fuzz_torch.py only
    import torch
except ImportError:  # pragma: no cover - exercised in the no-torch CI job
    torch = None


# --------------------------------------------------------------------------- #
# data
# --------------------------------------------------------------------------- #
@dataclass
class Data:
    """A small evaluation set: ``n`` test rows, ``m`` train rows, integer class codes."""

    n: int
    m: int
    ka: int
    kt: int
    attr: np.ndarray
    task: np.ndarray
    attr_pred: np.ndarray
    task_pred: np.ndarray
    attr_train: np.ndarray
    task_train: np.ndarray
    task_multi: np.ndarray  # n x kt indicator (multi-label)
    task_multi_pred: np.ndarray
    task_multi_train: np.ndarray  # m x kt
    scores: np.ndarray  # n x kt in [0, 1], multiples of 1/16 (exact in float16)
    values: np.ndarray  # n floats, multiples of 1/8 (exact in float16)
    values_b: np.ndarray
    seed: int

    def weights(self, rows: str = "test") -> np.ndarray:
        """Positive sample weights (0.25 to 1, exact in float16), one per test (or train) row."""
        base = np.resize(self.values if rows == "test" else self.values_b, self.n if rows == "test" else self.m)
        return 0.25 * (1 + np.abs(base * 8) % 4)


def _codes(draw: Any, n: int, k: int, cover: bool) -> np.ndarray:
    """``n`` class codes in ``[0, k)``; with ``cover`` every class appears."""
    v = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)), dtype=np.int64)
    if cover:
        v[:k] = np.arange(k)
        perm = np.array(draw(st.permutations(range(n))))
        v = v[perm]
    return v


def _indicator(draw: Any, n: int, k: int, cover: bool) -> np.ndarray:
    m = np.array(draw(st.lists(st.lists(st.integers(0, 1), min_size=k, max_size=k), min_size=n, max_size=n)),
                 dtype=np.int64)
    if cover:  # every column has a positive and a negative row
        m[0, :] = 1
        m[1, :] = 0
    return m


@st.composite
def datasets(draw: Any, min_n: int = 8, max_n: int = 14) -> Data:
    """A small evaluation set (every ground-truth class present)."""
    n = draw(st.integers(min_n, max_n))
    m = draw(st.integers(min_n, max_n))
    ka = draw(st.integers(2, 3))
    kt = draw(st.integers(2, 3))
    grid16 = st.integers(0, 16).map(lambda i: i / 16)
    return Data(
        n=n, m=m, ka=ka, kt=kt,
        attr=_codes(draw, n, ka, True), task=_codes(draw, n, kt, True),
        attr_pred=_codes(draw, n, ka, False), task_pred=_codes(draw, n, kt, False),
        attr_train=_codes(draw, m, ka, True), task_train=_codes(draw, m, kt, True),
        task_multi=_indicator(draw, n, kt, True), task_multi_pred=_indicator(draw, n, kt, False),
        task_multi_train=_indicator(draw, m, kt, True),
        scores=np.array(draw(st.lists(st.lists(grid16, min_size=kt, max_size=kt), min_size=n, max_size=n))),
        values=np.array(draw(st.lists(st.integers(-16, 16), min_size=n, max_size=n))) / 8,
        values_b=np.array(draw(st.lists(st.integers(-16, 16), min_size=n, max_size=n))) / 8,
        seed=draw(st.integers(0, 2**31 - 1)),
    )


def fixed_data(seed: int = 0, n: int = 16) -> Data:
    """A non-degenerate evaluation set from numpy's generator (for tests that need one typical input)."""
    rng = np.random.default_rng(seed)

    def cover(k: int, size: int) -> np.ndarray:
        v = rng.integers(0, k, size)
        v[:k] = np.arange(k)
        return rng.permutation(v)

    ind = lambda size: np.vstack([np.ones(3, int), np.zeros(3, int), rng.integers(0, 2, (size - 2, 3))])
    return Data(n=n, m=n, ka=2, kt=3, attr=cover(2, n), task=cover(3, n), attr_pred=cover(2, n),
                task_pred=cover(3, n), attr_train=cover(2, n), task_train=cover(3, n), task_multi=ind(n),
                task_multi_pred=ind(n), task_multi_train=ind(n), scores=rng.integers(0, 17, (n, 3)) / 16,
                values=rng.integers(-16, 17, n) / 8, values_b=rng.integers(-16, 17, n) / 8, seed=seed)


# --------------------------------------------------------------------------- #
# arguments
# --------------------------------------------------------------------------- #
@dataclass
class Arg:
    """One array argument of a case.

    ``kind`` selects the applicable input kinds: ``"labels"`` (1-D class ids),
    ``"indicator"`` (2-D 0/1), ``"values"`` (1-D floats), ``"scores"`` (2-D
    floats in [0, 1]), ``"maps"`` (non-negative maps, leading batch axis).
    ``rows`` names the row group the argument belongs to (its length must match
    the others of that group; a permutation of the group permutes them
    together); ``family`` the label family sharing one class list (relabelled
    together); ``pred`` marks a prediction (a class outside the ground truth is
    invalid for it).
    """

    value: Any
    kind: str
    rows: str | None = "test"
    family: str | None = None
    required: bool = True
    pred: bool = False
    nasty: tuple | None = None  # restrict the nasty kinds (None: all that apply)
    invalid: tuple | None = None  # restrict the invalid kinds
    custom_nasty: dict = field(default_factory=dict)  # kind "custom": name -> equivalent value
    custom_invalid: dict = field(default_factory=dict)  # kind "custom": name -> invalid value


@dataclass
class Case:
    """One public callable under fuzz.

    ``call(**arrays, **scalars)`` runs it; ``arrays(d)`` gives its array
    arguments (``Arg``), ``scalars`` its scalar options as ``name -> (valid
    value, scalar kind)``. ``order``: the result does not depend on the order
    of the rows. ``relabel``: ``family -> "any" | "monotone"`` (or a callable of
    the ``Data`` returning that mapping): renaming the classes of the family (by
    any bijection, or by one that keeps their order) leaves the headline
    numbers unchanged. ``targets``: the public names it covers.
    """

    name: str
    targets: tuple
    arrays: Callable[[Data], dict]
    call: Callable[..., Any]
    scalars: dict = field(default_factory=dict)
    order: bool = True
    relabel: Any = field(default_factory=dict)
    examples: int = 12
    headline: Callable[[Any], dict] | None = None
    allow_nonfinite: Callable[[Any, dict], bool] | None = None
    data: Callable[..., Any] = datasets
    names: dict = field(default_factory=dict)  # argument -> other words its error messages may use instead
    sweep: bool = True  # run every valid input kind on the typical data (False: too slow a callable)

    @property
    def seeded(self) -> bool:
        return "random_state" in self.scalars

    def relabel_for(self, d: Data) -> dict:
        return self.relabel(d) if callable(self.relabel) else dict(self.relabel)

    def __repr__(self) -> str:  # pytest ids
        return self.name


# --------------------------------------------------------------------------- #
# input kinds
# --------------------------------------------------------------------------- #
def _binary(v: np.ndarray) -> bool:
    return set(np.unique(np.asarray(v)).tolist()) <= {0, 1}


def _odd_index(n: int) -> np.ndarray:
    return np.arange(n)[::-1] * 3 + 7


def _readonly(v: np.ndarray) -> np.ndarray:
    v = np.array(v)
    v.flags.writeable = False
    return v


def _strided(v: np.ndarray) -> np.ndarray:
    return np.repeat(np.asarray(v), 2, axis=0)[::2]


def _with(v: np.ndarray, row: int, value: Any, dtype: Any) -> np.ndarray:
    out = np.asarray(v).astype(dtype)
    out[row % len(out)] = value
    return out


# Each transform: (name, applies(value) -> bool, transform(value, row) -> new value)
_T = Callable[[np.ndarray, int], Any]

NASTY: dict[str, dict[str, tuple[Callable[[np.ndarray], bool], _T]]] = {
    "labels": {
        "list": (lambda v: True, lambda v, r: v.tolist()),
        "tuple": (lambda v: True, lambda v, r: tuple(v.tolist())),
        "int32": (lambda v: True, lambda v, r: v.astype(np.int32)),
        "uint8": (lambda v: True, lambda v, r: v.astype(np.uint8)),
        "big-endian": (lambda v: True, lambda v, r: v.astype(">i8")),
        "float64": (lambda v: True, lambda v, r: v.astype(np.float64)),
        "float32": (lambda v: True, lambda v, r: v.astype(np.float32)),
        "float16": (lambda v: True, lambda v, r: v.astype(np.float16)),
        "object": (lambda v: True, lambda v, r: v.astype(object)),
        "bool": (_binary, lambda v, r: v.astype(bool)),
        "read-only": (lambda v: True, lambda v, r: _readonly(v)),
        "strided": (lambda v: True, lambda v, r: _strided(v)),
        "series-odd-index": (lambda v: True, lambda v, r: pd.Series(v, index=_odd_index(len(v)))),
        "series-str-index": (lambda v: True, lambda v, r: pd.Series(v, index=[f"r{i}" for i in range(len(v))])),
        "categorical": (lambda v: True, lambda v, r: pd.Series(pd.Categorical(v))),
        "categorical-unused": (lambda v: True, lambda v, r: pd.Series(pd.Categorical(v, categories=[*range(9)]))),
        "Int64": (lambda v: True, lambda v, r: pd.Series(v, dtype="Int64", index=_odd_index(len(v)))),
        "boolean": (_binary, lambda v, r: pd.Series(v.astype(bool), dtype="boolean")),
        "index": (lambda v: True, lambda v, r: pd.Index(v)),
    },
    "indicator": {
        "list": (lambda v: True, lambda v, r: v.tolist()),
        "float64": (lambda v: True, lambda v, r: v.astype(np.float64)),
        "float16": (lambda v: True, lambda v, r: v.astype(np.float16)),
        "bool": (lambda v: True, lambda v, r: v.astype(bool)),
        "uint8": (lambda v: True, lambda v, r: v.astype(np.uint8)),
        "read-only": (lambda v: True, lambda v, r: _readonly(v)),
        "fortran": (lambda v: True, lambda v, r: np.asfortranarray(v)),
        "strided": (lambda v: True, lambda v, r: _strided(v)),
        "frame": (lambda v: True, lambda v, r: pd.DataFrame(v)),
        "frame-odd-index": (lambda v: True, lambda v, r: pd.DataFrame(v, index=_odd_index(len(v)))),
        "frame-Int64": (lambda v: True, lambda v, r: pd.DataFrame(v).astype("Int64")),
        "frame-boolean": (lambda v: True, lambda v, r: pd.DataFrame(v.astype(bool)).astype("boolean")),
    },
    "values": {
        "list": (lambda v: True, lambda v, r: v.tolist()),
        "tuple": (lambda v: True, lambda v, r: tuple(v.tolist())),
        "float32": (lambda v: True, lambda v, r: v.astype(np.float32)),
        "float16": (lambda v: True, lambda v, r: v.astype(np.float16)),
        "object": (lambda v: True, lambda v, r: v.astype(object)),
        "read-only": (lambda v: True, lambda v, r: _readonly(v)),
        "strided": (lambda v: True, lambda v, r: _strided(v)),
        "series-odd-index": (lambda v: True, lambda v, r: pd.Series(v, index=_odd_index(len(v)))),
        "Float64": (lambda v: True, lambda v, r: pd.Series(v, dtype="Float64")),
    },
    "weights": {
        "list": (lambda v: True, lambda v, r: v.tolist()),
        "float32": (lambda v: True, lambda v, r: v.astype(np.float32)),
        "float16": (lambda v: True, lambda v, r: v.astype(np.float16)),
        "read-only": (lambda v: True, lambda v, r: _readonly(v)),
        "series-odd-index": (lambda v: True, lambda v, r: pd.Series(v, index=_odd_index(len(v)))),
        "Float64": (lambda v: True, lambda v, r: pd.Series(v, dtype="Float64")),
    },
    "scores": {
        "list": (lambda v: True, lambda v, r: v.tolist()),
        "float32": (lambda v: True, lambda v, r: v.astype(np.float32)),
        "float16": (lambda v: True, lambda v, r: v.astype(np.float16)),
        "read-only": (lambda v: True, lambda v, r: _readonly(v)),
        "fortran": (lambda v: True, lambda v, r: np.asfortranarray(v)),
        "frame": (lambda v: True, lambda v, r: pd.DataFrame(v)),
        "frame-odd-index": (lambda v: True, lambda v, r: pd.DataFrame(v, index=_odd_index(len(v)))),
    },
    "maps": {
        "list": (lambda v: True, lambda v, r: v.tolist()),
        "float32": (lambda v: True, lambda v, r: v.astype(np.float32)),
        "float16": (lambda v: True, lambda v, r: v.astype(np.float16)),
        "read-only": (lambda v: True, lambda v, r: _readonly(v)),
        "fortran": (lambda v: True, lambda v, r: np.asfortranarray(v)),
    },
}

if torch is not None:
    TORCH_NASTY: dict[str, dict[str, tuple[Callable, _T]]] = {
        "labels": {
            "torch-int64": (lambda v: True, lambda v, r: torch.as_tensor(v)),
            "torch-uint8": (lambda v: True, lambda v, r: torch.as_tensor(v.astype(np.uint8))),
            "torch-float16": (lambda v: True, lambda v, r: torch.as_tensor(v, dtype=torch.float16)),
            "torch-bfloat16": (lambda v: True, lambda v, r: torch.as_tensor(v, dtype=torch.bfloat16)),
            "torch-float-grad": (lambda v: True,
                                 lambda v, r: torch.tensor(v, dtype=torch.float32, requires_grad=True)),
            "torch-bool": (_binary, lambda v, r: torch.as_tensor(v.astype(bool))),
            "torch-noncontiguous": (lambda v: True, lambda v, r: torch.as_tensor(np.repeat(v, 2))[::2]),
        },
        "indicator": {
            "torch-int64": (lambda v: True, lambda v, r: torch.as_tensor(v)),
            "torch-float16": (lambda v: True, lambda v, r: torch.as_tensor(v, dtype=torch.float16)),
            "torch-float-grad": (lambda v: True,
                                 lambda v, r: torch.tensor(v, dtype=torch.float32, requires_grad=True)),
            "torch-bool": (lambda v: True, lambda v, r: torch.as_tensor(v.astype(bool))),
            "torch-transposed": (lambda v: True, lambda v, r: torch.as_tensor(np.ascontiguousarray(v.T)).T),
        },
        "values": {
            "torch-float64": (lambda v: True, lambda v, r: torch.as_tensor(v)),
            "torch-float16": (lambda v: True, lambda v, r: torch.as_tensor(v, dtype=torch.float16)),
            "torch-float-grad": (lambda v: True,
                                 lambda v, r: torch.tensor(v, dtype=torch.float32, requires_grad=True)),
        },
        "weights": {
            "torch-float64": (lambda v: True, lambda v, r: torch.as_tensor(v)),
            "torch-float-grad": (lambda v: True,
                                 lambda v, r: torch.tensor(v, dtype=torch.float32, requires_grad=True)),
        },
        "scores": {
            "torch-float32": (lambda v: True, lambda v, r: torch.as_tensor(v, dtype=torch.float32)),
            "torch-float16": (lambda v: True, lambda v, r: torch.as_tensor(v, dtype=torch.float16)),
            "torch-float-grad": (lambda v: True,
                                 lambda v, r: torch.tensor(v, dtype=torch.float32, requires_grad=True)),
        },
        "maps": {
            "torch-float16": (lambda v: True, lambda v, r: torch.as_tensor(v, dtype=torch.float16)),
        },
    }
else:  # pragma: no cover
    TORCH_NASTY = {}


def _ragged(v: np.ndarray, r: int) -> list:
    rows = [[x] if np.ndim(x) == 0 else list(x) for x in np.asarray(v).tolist()]
    rows[r % len(rows)] = rows[r % len(rows)] * 2
    return rows


def _dup_columns(v: np.ndarray, r: int) -> pd.DataFrame:
    cols = [f"c{j}" for j in range(v.shape[1])]
    cols[-1] = cols[0]
    return pd.DataFrame(v, columns=cols)


def _pd_na(v: np.ndarray, r: int) -> Any:
    s = pd.Series(np.asarray(v), dtype="Int64" if np.asarray(v).dtype.kind in "iub" else "Float64")
    s.iloc[r % len(s)] = pd.NA
    return s


def _pd_na_2d(v: np.ndarray, r: int) -> pd.DataFrame:
    f = pd.DataFrame(v).astype("Int64" if v.dtype.kind in "iub" else "Float64")
    f.iloc[r % len(f), 0] = pd.NA
    return f


_COMMON_INVALID: dict[str, tuple[Callable, _T]] = {
    "str": (lambda v: True, lambda v, r: "abc"),
    "dict": (lambda v: True, lambda v, r: {"a": np.asarray(v).tolist()}),
    "scalar": (lambda v: True, lambda v, r: 1),
    "set": (lambda v: True, lambda v, r: set(np.asarray(v).ravel().tolist())),
    "empty": (lambda v: True, lambda v, r: np.asarray(v)[:0]),
    "3-D": (lambda v: True, lambda v, r: np.asarray(v).reshape(len(v), 1, -1)),
    "complex": (lambda v: True, lambda v, r: np.asarray(v).astype(complex)),
    "ragged": (lambda v: True, _ragged),
}

INVALID: dict[str, dict[str, tuple[Callable, _T]]] = {
    "labels": {
        **_COMMON_INVALID,
        "nan": (lambda v: True, lambda v, r: _with(v, r, np.nan, float)),
        "inf": (lambda v: True, lambda v, r: _with(v, r, np.inf, float)),
        "None-element": (lambda v: True, lambda v, r: _with(v, r, None, object)),
        "pd.NA": (lambda v: True, _pd_na),
        "NaT": (lambda v: True, lambda v, r: _with(v, r, pd.NaT, object)),
    },
    "indicator": {
        **_COMMON_INVALID,
        "3-D": (lambda v: True, lambda v, r: np.asarray(v).reshape(len(v), 1, -1)),
        "nan": (lambda v: True, lambda v, r: _with(v, r, np.nan, float)),
        "inf": (lambda v: True, lambda v, r: _with(v, r, np.inf, float)),
        "None-element": (lambda v: True, lambda v, r: _with(v, r, None, object)),
        "pd.NA": (lambda v: True, _pd_na_2d),
        "duplicate-columns": (lambda v: v.shape[1] > 1, _dup_columns),
        "zero-columns": (lambda v: True, lambda v, r: np.asarray(v)[:, :0]),
        "strings": (lambda v: True, lambda v, r: np.asarray(v).astype(str)),
    },
    "values": {
        **_COMMON_INVALID,
        "nan": (lambda v: True, lambda v, r: _with(v, r, np.nan, float)),
        "inf": (lambda v: True, lambda v, r: _with(v, r, np.inf, float)),
        "-inf": (lambda v: True, lambda v, r: _with(v, r, -np.inf, float)),
        "None-element": (lambda v: True, lambda v, r: _with(v, r, None, object)),
        "pd.NA": (lambda v: True, _pd_na),
        "strings": (lambda v: True, lambda v, r: np.asarray(v).astype(str)),
    },
    "weights": {
        **{k: v for k, v in _COMMON_INVALID.items() if k != "ragged"},
        "nan": (lambda v: True, lambda v, r: _with(v, r, np.nan, float)),
        "inf": (lambda v: True, lambda v, r: _with(v, r, np.inf, float)),
        "negative": (lambda v: True, lambda v, r: _with(v, r, -1.0, float)),
        "None-element": (lambda v: True, lambda v, r: _with(v, r, None, object)),
        "pd.NA": (lambda v: True, _pd_na),
        "strings": (lambda v: True, lambda v, r: np.asarray(v).astype(str)),
        "all-zero": (lambda v: True, lambda v, r: np.zeros(len(v))),
        "2-D": (lambda v: True, lambda v, r: np.column_stack([v, v])),
    },
    "scores": {
        **_COMMON_INVALID,
        "nan": (lambda v: True, lambda v, r: _with(v, r, np.nan, float)),
        "inf": (lambda v: True, lambda v, r: _with(v, r, np.inf, float)),
        "None-element": (lambda v: True, lambda v, r: _with(v, r, None, object)),
        "pd.NA": (lambda v: True, _pd_na_2d),
        "duplicate-columns": (lambda v: v.shape[1] > 1, _dup_columns),
        "strings": (lambda v: True, lambda v, r: np.asarray(v).astype(str)),
    },
    "maps": {
        "str": (lambda v: True, lambda v, r: "abc"),
        "dict": (lambda v: True, lambda v, r: {"a": 1}),
        "empty": (lambda v: True, lambda v, r: np.asarray(v)[:0]),
        "nan": (lambda v: True, lambda v, r: _with(v, r, np.nan, float)),
        "inf": (lambda v: True, lambda v, r: _with(v, r, np.inf, float)),
        "negative": (lambda v: True, lambda v, r: _with(v, r, -1.0, float)),
        "complex": (lambda v: True, lambda v, r: np.asarray(v).astype(complex)),
        "strings": (lambda v: True, lambda v, r: np.asarray(v).astype(str)),
        "ragged": (lambda v: True, lambda v, r: [np.asarray(x).tolist() for x in v][:-1] + [[[0.5]]]),
    },
}
INVALID["labels"]["categorical-NaN"] = (lambda v: True, lambda v, r: pd.Series(pd.Categorical(
    [None if i == r % len(v) else x for i, x in enumerate(np.asarray(v).tolist())])))
NASTY["labels"]["series-duplicate-index"] = (lambda v: True, lambda v, r: pd.Series(v, index=np.zeros(len(v), int)))
NASTY["indicator"]["frame-duplicate-index"] = (
    lambda v: True, lambda v, r: pd.DataFrame(v, index=np.zeros(len(v), int)))

# polars and pyarrow columns (optional libraries: their kinds exist where they are installed).
# 1-D only here: a 2-D polars/arrow table always carries string column names, which become
# class names (the plain twin has none); tests/test_labels.py tests those names.
try:
    import polars as pl
except ImportError:  # pragma: no cover - exercised in the no-extras CI step (.ci/no_extras.sh)
    pl = None
try:
    import pyarrow as pa
except ImportError:  # pragma: no cover
    pa = None


def _nullable(v: np.ndarray, r: int) -> list:
    """``v`` as a list with a null (None) at row ``r``."""
    out = np.asarray(v).tolist()
    out[r % len(out)] = None
    return out


if pl is not None:
    for _kind in ("labels", "values", "weights"):
        NASTY[_kind]["polars-series"] = (lambda v: True, lambda v, r: pl.Series("x", v))
    NASTY["labels"]["polars-unnamed"] = (lambda v: True, lambda v, r: pl.Series(v.tolist()))
    INVALID["labels"]["polars-null"] = (lambda v: True, lambda v, r: pl.Series("x", _nullable(v, r)))
if pa is not None:
    for _kind in ("labels", "values", "weights"):
        NASTY[_kind]["arrow-array"] = (lambda v: True, lambda v, r: pa.array(v))
        NASTY[_kind]["arrow-chunked"] = (lambda v: True, lambda v, r: pa.chunked_array([v[:1], v[1:]]))
    INVALID["labels"]["arrow-null"] = (lambda v: True, lambda v, r: pa.array(_nullable(v, r)))


def invalid_kinds(case: Case, arrays: dict) -> list[tuple[str, str]]:
    """The (argument, invalid kind) pairs that apply to ``arrays``."""
    out = []
    rows: dict[str, int] = {}
    for a in arrays.values():
        if a.rows is not None:
            rows[a.rows] = rows.get(a.rows, 0) + 1
    for name, a in arrays.items():
        if a.kind == "custom":
            out += [(name, k) for k in a.custom_invalid]
            continue
        kinds = [k for k, (ok, _) in INVALID[a.kind].items() if ok(np.asarray(a.value))]
        if a.invalid is not None:
            kinds = [k for k in kinds if k in a.invalid]
        out += [(name, k) for k in kinds]
        if a.required:
            out.append((name, "None"))
        if a.rows is not None and rows[a.rows] > 1:
            out.append((name, "short"))
        if a.pred and a.kind == "labels":
            out.append((name, "unknown-class"))
        if a.pred and a.kind == "indicator":
            out.append((name, "extra-column"))
    return out


def make_invalid(a: Arg, kind: str, row: int) -> Any:
    if a.kind == "custom":
        return a.custom_invalid[kind]
    v = np.asarray(a.value)
    if kind == "None":
        return None
    if kind == "short":
        return v[:-1]
    if kind == "unknown-class":
        out = v.copy()
        out[row % len(out)] = 97
        return out
    if kind == "extra-column":
        return np.column_stack([v, np.zeros(len(v), dtype=v.dtype)])
    return INVALID[a.kind][kind][1](v, row)


def nasty_kinds(arrays: dict, table: dict | None = None) -> list[tuple[str, str]]:
    table = NASTY if table is None else table
    out = []
    for name, a in arrays.items():
        if a.kind == "custom":
            out += [(name, k) for k in a.custom_nasty if k.startswith("torch") == (table is not NASTY)]
            continue
        kinds = [k for k, (ok, _) in table.get(a.kind, {}).items() if ok(np.asarray(a.value))]
        if a.nasty is not None:
            kinds = [k for k in kinds if k in a.nasty]
        out += [(name, k) for k in kinds]
    return out


def make_nasty(a: Arg, kind: str, row: int, table: dict | None = None) -> Any:
    if a.kind == "custom":
        return a.custom_nasty[kind]
    table = NASTY if table is None else table
    return table[a.kind][kind][1](np.asarray(a.value), row)


# --------------------------------------------------------------------------- #
# scalar options
# --------------------------------------------------------------------------- #
BAD_SCALARS: dict[str, list] = {
    "seed": [1.5, -1, "seed", True, [0.5]],
    "level": [0, 1, 1.5, -0.2, float("nan"), "0.9", [0.9]],
    "n_boot": [0, 1, -5, 2.5, "10", True, float("nan"), 10**9],  # 10**9: past the one cap (MAX_N_BOOT)
    "n_iter": [0, -1, 1.5, "2", True, float("nan"), 10**9],  # past MAX_N_ITER
    "k": [-1, 1.5, "3", None, float("nan")],
    "probability": [-0.1, 1.5, float("nan"), "0.5", None],
}
NASTY_SCALARS: dict[str, Callable[[Any], Any]] = {
    "seed": lambda v: np.int64(v),
    "level": lambda v: np.float64(v),
    "n_boot": lambda v: np.int32(v),
    "n_iter": lambda v: np.int16(v),
    "k": lambda v: np.int64(v),
    "probability": lambda v: np.float64(v),
}


# --------------------------------------------------------------------------- #
# relabelling and row order
# --------------------------------------------------------------------------- #
_NAMES = ["zeta", "alpha", "mu", "beta"]  # sorted: alpha, beta, mu, zeta: a bijection that reorders


def relabel_value(a: Arg, how: str, perm: list[int]) -> Any:
    v = np.asarray(a.value)
    if a.kind == "labels":
        names = [f"c{k}" for k in range(10)] if how == "monotone" else [_NAMES[p] for p in perm]
        return np.array([names[int(x)] for x in v], dtype=object)
    if a.kind == "indicator":
        if how == "monotone":
            return pd.DataFrame(v, columns=[f"c{k}" for k in range(v.shape[1])])
        return v[:, np.argsort(perm[: v.shape[1]])]  # column j of the result is class perm^-1(j)
    raise AssertionError(f"cannot relabel an argument of kind {a.kind}")


def permute_rows(arrays: dict, perms: dict[str, np.ndarray]) -> dict:
    out = {}
    for name, a in arrays.items():
        if a.rows in perms and isinstance(a.value, pd.DataFrame):  # a custom frame (the scan's features) stays one
            out[name] = dataclasses.replace(a, value=a.value.iloc[perms[a.rows]])
        elif a.rows in perms:
            out[name] = dataclasses.replace(a, value=np.asarray(a.value)[perms[a.rows]])
        else:
            out[name] = a
    return out


# --------------------------------------------------------------------------- #
# running a case
# --------------------------------------------------------------------------- #
def run(case: Case, values: dict) -> Any:
    """Call the case with ``values`` (argument name -> value), warnings silenced except RuntimeWarning."""
    from biasamp.exceptions import SmallGroupWarning, UndefinedPairWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        warnings.simplefilter("ignore", SmallGroupWarning)
        warnings.filterwarnings("ignore", category=UserWarning)
        warnings.filterwarnings("ignore", category=FutureWarning)
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        warnings.simplefilter("error", RuntimeWarning)
        return case.call(**values)


def plain_values(case: Case, arrays: dict) -> dict:
    values = {k: a.value for k, a in arrays.items()}
    values.update({k: v for k, (v, _) in case.scalars.items()})
    return values


def outcome(case: Case, values: dict) -> tuple[str, Any]:
    """``("ok", result)`` or ``("raised", exception)``; any exception other than ValueError/TypeError escapes."""
    try:
        return "ok", run(case, values)
    except (ValueError, TypeError) as exc:
        return "raised", exc


def names_argument(exc: BaseException, name: str, also: tuple = ()) -> bool:
    return any(word in str(exc) for word in (name, *also))


# --------------------------------------------------------------------------- #
# what is compared
# --------------------------------------------------------------------------- #
def _is_dataclass_instance(obj: Any) -> bool:
    return dataclasses.is_dataclass(obj) and not isinstance(obj, type)


def _leaves(obj: Any, out: list, depth: int = 0, seen: dict | None = None) -> None:
    """Append every number of ``obj`` (depth-first, container order) to ``out``."""
    seen = {} if seen is None else seen  # id -> object (kept alive, so that an id is never reused)
    if depth > 12 or id(obj) in seen:
        return
    if isinstance(obj, (str, bytes, type(None))):
        return
    if isinstance(obj, (bool, np.bool_)):
        out.append(float(obj))
        return
    if isinstance(obj, numbers.Number):
        out.append(float(obj) if not isinstance(obj, complex) else obj)
        return
    if torch is not None and isinstance(obj, torch.Tensor):
        _leaves(obj.detach().cpu().double().numpy(), out, depth + 1, seen)
        return
    seen[id(obj)] = obj
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind in "biuf":
            out.extend(np.asarray(obj, dtype=np.float64).ravel().tolist())
        elif obj.dtype == object:
            for v in obj.ravel():
                _leaves(v, out, depth + 1, seen)
        return
    if isinstance(obj, pd.DataFrame):
        for c in obj.columns:
            _leaves(obj[c], out, depth + 1, seen)
        return
    if isinstance(obj, (pd.Series, pd.Index)):
        vals = obj.to_numpy()
        if vals.dtype.kind in "biuf":
            out.extend(vals.astype(np.float64).tolist())
        else:
            for v in vals:
                _leaves(v, out, depth + 1, seen)
        return
    if isinstance(obj, dict):
        for v in obj.values():
            _leaves(v, out, depth + 1, seen)
        return
    if isinstance(obj, (list, tuple)):
        for v in obj:
            _leaves(v, out, depth + 1, seen)
        return
    if _is_dataclass_instance(obj):
        for f in dataclasses.fields(obj):
            _leaves(getattr(obj, f.name), out, depth + 1, seen)
        return
    if hasattr(obj, "to_dict") and callable(obj.to_dict):
        _leaves(obj.to_dict(), out, depth + 1, seen)


def fingerprint(obj: Any) -> np.ndarray:
    """Every number of a result, in order (the full comparison: same data, other container)."""
    out: list = []
    _leaves(obj, out)
    return np.array(out, dtype=np.float64)


def same_numbers(a: np.ndarray, b: np.ndarray, rtol: float = 1e-9) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=rtol, atol=1e-12, equal_nan=True))


# fields that hold class or group names (which a renaming changes), not numbers of the result
_NAMING_FIELDS = ("counts", "reference_group", "combinations", "target", "protected", "x")


def _scalars_of(obj: Any, prefix: str, out: dict, depth: int = 0) -> None:
    if depth > 6 or obj is None or isinstance(obj, (str, bytes)):
        return
    if isinstance(obj, (bool, np.bool_, numbers.Real)):
        out[prefix] = float(obj)
    elif isinstance(obj, dict):
        if all(isinstance(k, str) for k in obj):
            for k, v in obj.items():
                _scalars_of(v, f"{prefix}[{k}]", out, depth + 1)
    elif isinstance(obj, tuple) and len(obj) <= 3:
        for i, v in enumerate(obj):
            _scalars_of(v, f"{prefix}[{i}]", out, depth + 1)
    elif _is_dataclass_instance(obj):
        for f in dataclasses.fields(obj):
            if f.name not in _NAMING_FIELDS and not f.name.endswith(("classes", "groups")):
                _scalars_of(getattr(obj, f.name), f"{prefix}.{f.name}", out, depth + 1)


def headline(obj: Any) -> dict:
    """The class-free numbers of a result: scalar fields, metric-keyed dicts, intervals (recursively)."""
    out: dict = {}
    _scalars_of(obj, "r", out)
    return out


def same_headline(a: dict, b: dict, rtol: float = 1e-9) -> list[str]:
    """Keys whose values differ (empty when the headlines agree)."""
    if a.keys() != b.keys():
        return sorted(set(a) ^ set(b))
    return [k for k in a if not (a[k] == b[k] or (math.isnan(a[k]) and math.isnan(b[k]))
                                 or math.isclose(a[k], b[k], rel_tol=rtol, abs_tol=1e-12))]


# --------------------------------------------------------------------------- #
# non-finite numbers and their flags
# --------------------------------------------------------------------------- #
_COUNT_COLUMNS = ("n", "support", "positives", "negatives", "predicted")


def _row_flagged(frame: pd.DataFrame, i: int, column: Any) -> bool:
    """Whether a non-finite cell is explained by its row.

    By an ``undefined`` (or ``<column>_undefined``) flag, a ``reading``/``status``
    of "undefined", a non-empty ``reason`` (the scan's subgroups out of its band),
    an empty conditioning event (a count column of 0), a standard
    deviation of fewer than two defined values, or an interval column (or the
    minimum detectable effect) where no interval was computed (empty ``ci_method``).
    """
    row = frame.iloc[i]
    for flag in ("undefined", f"{column}_undefined"):
        if flag in frame.columns and bool(row[flag]):
            return True
    for flag in ("reading", "status"):
        if flag in frame.columns and str(row[flag]).partition(":")[0] == "undefined":  # "undefined: why"
            return True
    # an interval's bounds, and its minimum detectable effect, where no interval was computed
    if (str(column).startswith("ci_") or column == "min_detectable") and "ci_method" in frame.columns \
            and not row["ci_method"]:
        return True
    if "reason" in frame.columns and isinstance(row["reason"], str) and row["reason"]:  # a row that says why
        return True
    if str(column) in ("std", "sd", "stdev"):
        for count in ("n", "n_models", "n_runs", "n_images"):
            if count in frame.columns:
                n_defined = row[count] - (row["n_undefined"] if "n_undefined" in frame.columns else 0)
                if n_defined < 2:
                    return True
    base = str(column).split("_")[0]
    if f"{base}_undefined" in frame.columns and bool(row[f"{base}_undefined"]):
        return True
    for c in frame.columns:
        name = str(c)
        if name in _COUNT_COLUMNS or (name.startswith("n_") and name != "n_undefined"):
            v = row[c]
            if isinstance(v, numbers.Real) and not isinstance(v, bool) and v == 0:
                return True
    return "n_runs" in frame.columns and row["n_runs"] < 2


def _frame_unflagged(frame: pd.DataFrame, path: str) -> list[str]:
    bad = []
    for j, c in enumerate(frame.columns):
        col = frame.iloc[:, j]
        vals = col.to_numpy()
        if vals.dtype.kind == "f":
            nonfin = ~np.isfinite(vals)
        elif vals.dtype == object:
            nonfin = np.array([isinstance(v, (float, np.floating)) and not math.isfinite(v) for v in vals], bool)
        else:
            continue
        for i in np.flatnonzero(nonfin):
            if not _row_flagged(frame, i, c):
                bad.append(f"{path}[{c!r}] row {frame.index[i]!r} = {vals[i]!r}")
    return bad


def _nonfinite_number(v: Any) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)) and not math.isfinite(v)


def _object_flag(obj: Any) -> bool:
    """Whether a result object says it is (partly) undefined."""
    for a in ("reason", "undefined_reason", "undefined"):
        v = getattr(obj, a, None)
        if isinstance(v, str) and v:
            return True
        if isinstance(v, (bool, np.bool_)) and v:
            return True
    n_und = getattr(obj, "n_undefined", None)
    for total in ("n_pairs", "n_tasks", "n_combinations"):
        n_tot = getattr(obj, total, None)
        if (isinstance(n_und, numbers.Integral) and isinstance(n_tot, numbers.Integral) and n_und >= n_tot > -1
                and (n_und > 0 or n_tot == 0)):
            return True
    return False


def unflagged_nonfinite(obj: Any, path: str = "result", depth: int = 0) -> list[str]:
    """Paths of the NaN/inf numbers in ``obj`` that nothing in the result flags."""
    from biasamp import BootstrapResult, FairnessResult, GroupMetrics, Report, Thresholds

    if depth > 10 or obj is None or isinstance(obj, (str, bytes, bool, np.bool_)):
        return []
    if isinstance(obj, numbers.Number):
        return [f"{path} = {obj!r}"] if _nonfinite_number(obj) else []
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind == "f" and not np.isfinite(obj).all():
            return [f"{path}[{np.argwhere(~np.isfinite(obj))[0].tolist()}] is non-finite"]
        return []
    if isinstance(obj, pd.DataFrame):
        return _frame_unflagged(obj, path)
    if isinstance(obj, pd.Series):
        return _frame_unflagged(obj.to_frame(), path)
    if isinstance(obj, dict):
        return [p for k, v in obj.items() for p in unflagged_nonfinite(v, f"{path}[{k!r}]", depth + 1)]
    if isinstance(obj, (list, tuple)):
        return [p for i, v in enumerate(obj) for p in unflagged_nonfinite(v, f"{path}[{i}]", depth + 1)]
    if isinstance(obj, Report):
        import json

        def no_constant(token: str) -> Any:
            raise ValueError(token)

        try:
            json.loads(obj.to_json(), parse_constant=no_constant)
        except ValueError as exc:
            return [f"{path}.to_json() holds {exc}"]
        return []
    if isinstance(obj, FairnessResult):
        return _fairness_unflagged(obj, path, depth)
    if isinstance(obj, GroupMetrics):
        return _group_metrics_unflagged(obj, path)
    if isinstance(obj, Thresholds):  # -inf: every score positive (k = N), documented
        th = obj.thresholds.to_numpy(dtype=float)
        ok = np.isfinite(th) | ((th == -np.inf) & (obj.achieved_rates.to_numpy(dtype=float) == 1.0))
        return [f"{path}.thresholds[{obj.thresholds.index[i]!r}] = {th[i]!r}" for i in np.flatnonzero(~ok)] + [
            p for f in ("target_rates", "achieved_rates")
            for p in unflagged_nonfinite(getattr(obj, f), f"{path}.{f}", depth + 1)]
    if isinstance(obj, BootstrapResult):
        return _bootstrap_unflagged(obj, path, depth)
    if type(obj).__name__ == "CurveResult":
        return _curve_unflagged(obj, path, depth)
    if type(obj).__name__ == "ScanResult":
        return _scan_unflagged(obj, path)
    if _is_dataclass_instance(obj):
        flagged = _object_flag(obj)
        bad = []
        for f in dataclasses.fields(obj):
            v = getattr(obj, f.name)
            if _nonfinite_number(v):
                if not flagged:
                    bad.append(f"{path}.{f.name} = {v!r}")
            elif f.name == "scores" and isinstance(v, np.ndarray) and hasattr(obj, "n_undefined"):
                if int(np.isnan(v).sum()) != obj.n_undefined or np.isinf(v).any():
                    bad.append(f"{path}.scores: {int(np.isnan(v).sum())} NaN but n_undefined={obj.n_undefined}")
            elif f.name in ("counts",):
                continue
            else:
                bad += unflagged_nonfinite(v, f"{path}.{f.name}", depth + 1)
        return bad
    return []


def _curve_unflagged(obj: Any, path: str, depth: int) -> list[str]:
    """A curve's NaN value is flagged by its point's ``n_undefined``; a rate grid's -inf threshold is documented.

    A rate grid's threshold is -inf where the rate makes every score positive
    (k = N), as for ``Thresholds``; a value is NaN only where its point counts
    undefined pairs or classes. Anything else non-finite is reported.
    """
    bad = []
    if obj.thresholds is not None:
        th = obj.thresholds.to_numpy(dtype=float)
        allowed = np.isfinite(th) | ((th == -np.inf) & (obj.grid == "rate"))
        bad += [f"{path}.thresholds row {i} = {th[i, j]!r}" for i, j in np.argwhere(~allowed)]
    for s in obj.values.columns:
        v = obj.values[s].to_numpy(dtype=float)
        und = obj.n_undefined[s].to_numpy()
        bad += [f"{path}.values[{s!r}] row {i} = {v[i]!r} with n_undefined 0"
                for i in np.flatnonzero(~np.isfinite(v) & (und == 0))]
    for f in ("low", "high"):
        frame = getattr(obj, f)
        if frame is not None:  # an interval is NaN where its point's value is undefined
            lo = frame.to_numpy(dtype=float)
            vals = obj.values[list(frame.columns)].to_numpy(dtype=float) if set(frame.columns) <= set(
                obj.values.columns) else np.zeros_like(lo)
            bad += [f"{path}.{f} row {i} col {j} = {lo[i, j]!r}"
                    for i, j in np.argwhere(~np.isfinite(lo) & np.isfinite(vals))]
    return bad


def _scan_unflagged(obj: Any, path: str) -> list[str]:
    """A scan: its subgroups' NaN flagged by their ``reason``; its critical value explained by a note.

    ``se`` is documented for regular statistics only (a non-regular one's
    standard errors are its parts', not the subgroup's): NaN otherwise.
    """
    frame = obj.subgroups if obj.regular else obj.subgroups.drop(columns="se")
    bad = _frame_unflagged(frame, f"{path}.subgroups")
    if not math.isfinite(obj.overall):
        bad.append(f"{path}.overall = {obj.overall!r}")
    if not math.isfinite(obj.critical_value) and not any(n.startswith("critical value") for n in obj.notes):
        bad.append(f"{path}.critical_value = {obj.critical_value!r} with no note saying why")
    return bad


def _fairness_unflagged(r: Any, path: str, depth: int) -> list[str]:
    bad = []
    reasons = getattr(r, "undefined_reasons", {}) or {}
    for k, v in r.overall.items():
        if _nonfinite_number(v) and k not in reasons:
            bad.append(f"{path}.overall[{k!r}] = {v!r} with no undefined_reasons entry")
    und = r.undefined
    for c in r.by_class.columns:
        col = r.by_class[c].to_numpy(dtype=float, na_value=np.nan)
        for i in np.flatnonzero(~np.isfinite(col)):
            cls = r.by_class.index[i]
            ok = c in und.columns and cls in und.index and bool(und.loc[cls, c])
            if not ok:
                bad.append(f"{path}.by_class[{c!r}] class {cls!r} = {col[i]!r} not marked in .undefined")
    for f in dataclasses.fields(r):
        if f.name in ("overall", "by_class", "undefined", "counts", "undefined_reasons", "n_undefined"):
            continue
        bad += unflagged_nonfinite(getattr(r, f.name), f"{path}.{f.name}", depth + 1)
    return bad


def _group_metrics_unflagged(g: Any, path: str) -> list[str]:
    """GroupMetrics: a NaN rate is flagged by its ``(group, column)`` entry in ``.undefined``."""
    bad = []
    for c in g.by_group.columns:
        col = pd.to_numeric(g.by_group[c], errors="coerce").to_numpy(dtype=float)
        for i in np.flatnonzero(~np.isfinite(col)):
            grp = g.by_group.index[i]
            if (grp, c) not in g.undefined and g.by_group[c].dtype.kind == "f":
                bad.append(f"{path}.by_group[{c!r}] group {grp!r} = {col[i]!r} not in .undefined")
    for c, v in g.overall.items():
        if _nonfinite_number(v) and ("overall", c) not in g.undefined:
            bad.append(f"{path}.overall[{c!r}] = {v!r} not in .undefined")
    return bad


def _bootstrap_unflagged(r: Any, path: str, depth: int) -> list[str]:
    bad = []
    for k, v in r.estimate.items():
        if _nonfinite_number(v):
            bad.append(f"{path}.estimate[{k!r}] = {v!r}")
    for k, (lo, hi) in r.ci.items():
        if (_nonfinite_number(lo) or _nonfinite_number(hi)) and not _nonfinite_number(r.estimate.get(k, 0.0)):
            bad.append(f"{path}.ci[{k!r}] = {(lo, hi)!r} around a finite estimate")
    for c in r.replicates.columns:
        n_nan = int(np.isnan(r.replicates[c].to_numpy(dtype=float)).sum())
        if n_nan != r.n_undefined.get(c, 0):
            bad.append(f"{path}.replicates[{c!r}] has {n_nan} NaN but n_undefined={r.n_undefined.get(c)}")
    for k, v in r.p_value.items():
        if _nonfinite_number(v):
            bad.append(f"{path}.p_value[{k!r}] = {v!r}")
    for k, t in r.tables.items():
        bad += unflagged_nonfinite(t, f"{path}.tables[{k!r}]", depth + 1)
    return bad
