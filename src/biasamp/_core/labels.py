"""Input layer: turn any label argument into a validated indicator matrix.

Every public metric of biasamp funnels its label arguments through this module,
so that validation lives in one place (the scikit-learn ``_check_targets``
habit). The conventions are those of :ref:`def-inputs`:

* a **1-D** argument holds class ids or names (single-label). It is encoded
  against the classes seen in the ground truth of *train and test together*;
  a binary 1-D label therefore becomes two classes, ``0`` and ``1``; the
  families then read a binary *task* as its positive class
  (:func:`positive_class`, :ref:`def-binary-task`) unless asked for both.
  Whole-number floats are integers (``0.``/``1.`` are the classes 0 and 1).
* a **2-D** argument is an ``N x K`` indicator matrix (multi-label, or
  one-hot). DataFrames (pandas, polars) and pyarrow Tables keep their column
  names as class names; plain arrays get ``0..K-1``.
* predictions have the classes of their ground truth. Hard predictions are
  0/1; soft predictions (probabilities in ``[0, 1]``) are accepted where a
  metric allows them. A 1-D float prediction of a binary ``{0, 1}`` label is
  read as ``P(class 1)``.
* pandas Series/DataFrames, polars Series/DataFrames, pyarrow
  Tables/RecordBatches/ChunkedArrays/Arrays, lists, tuples, numpy arrays and
  torch tensors (on any device; moved to CPU) are accepted. polars and pyarrow
  objects are read as the pandas object with the same names and values
  (``_as_pandas``); torch, polars and pyarrow are never imported here.

Bad input raises ``ValueError``/``TypeError`` naming the argument and the
problem.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["BINARY_TASK_CHOICES", "LabelMatrix", "EncodedLabels", "encode_labels", "check_consistent_length",
           "positive_class", "describe_reading", "read_binary_task", "read_task_roles"]

#: ``binary_task``: a binary task read as its positive class, or as both its classes (one-hot)
BINARY_TASK_CHOICES = ("positive", "both")


@dataclass(frozen=True, eq=False)
class LabelMatrix:
    """A validated ``N x K`` label matrix over named classes.

    Stored compactly: either ``codes`` (1-D integer class index per row, for
    single-label input) or ``dense`` (an ``N x K`` array of 0/1 or of
    probabilities). Use :meth:`block` to materialise rows as floats.

    Attributes
    ----------
    name : str
        The argument name it came from (used in error messages).
    classes : tuple
        Class names, one per column.
    codes : ndarray of int or None
        Class index per row (single-label input).
    dense : ndarray or None
        ``N x K`` indicator or probability matrix.
    soft : bool
        True when ``dense`` holds probabilities that are not all 0/1.
    """

    name: str
    classes: tuple
    codes: np.ndarray | None = None
    dense: np.ndarray | None = None
    soft: bool = False

    def _dense(self) -> np.ndarray:
        if self.dense is None:  # an encoded label holds codes or a dense matrix
            raise ValueError(f"{self.name}: the encoded labels hold neither codes nor a matrix")
        return self.dense

    @property
    def n_rows(self) -> int:
        return len(self.codes) if self.codes is not None else self._dense().shape[0]

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    def take(self, rows: np.ndarray) -> LabelMatrix:
        """The rows ``rows`` (positions) of these labels, on the same classes."""
        if self.codes is not None:
            return replace(self, codes=self.codes[rows])
        return replace(self, dense=self._dense()[rows])

    def block(self, start: int, stop: int, out: np.ndarray) -> None:
        """Write rows ``start:stop`` as floats into ``out`` (shape ``(stop-start, K)``)."""
        if self.codes is not None:
            out[...] = 0
            out[np.arange(stop - start), self.codes[start:stop]] = 1
        else:
            out[...] = self._dense()[start:stop]

    def to_dense(self, dtype: Any = np.float64) -> np.ndarray:
        """Return the full ``N x K`` matrix (allocates; for small data and tests)."""
        out = np.empty((self.n_rows, self.n_classes), dtype=dtype)
        self.block(0, self.n_rows, out)
        return out


# --------------------------------------------------------------------------- #
# raw conversion
# --------------------------------------------------------------------------- #
def _is_torch_tensor(x: Any) -> bool:
    """Whether ``x`` is a torch tensor (checked without importing torch)."""
    return type(x).__module__.startswith("torch") and hasattr(x, "detach")


def _from_tensor(x: Any) -> Any:
    """A torch tensor as a numpy array on the CPU; anything else unchanged.

    Half-precision tensors (``float16``, ``bfloat16``, which numpy lacks or
    pandas cannot index) are widened to float32 first; ``requires_grad``
    tensors are detached.
    """
    if not _is_torch_tensor(x):
        return x
    t = x.detach().cpu()
    if t.is_floating_point() and t.element_size() < 4:
        t = t.float()
    if t.is_complex():
        raise TypeError(f"complex tensors are not supported (dtype {t.dtype})")
    return t.numpy()


def _arrow_to_numpy(col: Any) -> np.ndarray:
    """A pyarrow Array/ChunkedArray as numpy: nulls become NaN (numbers) or None (other types)."""
    return np.asarray(col.to_numpy(zero_copy_only=False))


def _as_pandas(x: Any) -> Any:
    """A polars or pyarrow table or column as the pandas object with the same names; anything else unchanged.

    * polars ``DataFrame``, pyarrow ``Table`` and ``RecordBatch``: a pandas
      ``DataFrame`` with the same column names (in order, duplicates kept so
      that the input layer can name them), one numpy column each;
    * polars ``Series``: a pandas ``Series`` with the same ``name``;
    * pyarrow ``Array`` and ``ChunkedArray`` (which carry no name): a numpy array.

    Missing values (polars/arrow nulls) become NaN or None, which the input
    layer then reports as missing. The objects are recognised by the module of
    their type, so neither polars nor pyarrow is imported here (both are
    optional); a polars ``LazyFrame`` must be collected first.
    """
    mod = type(x).__module__ or ""
    kind = type(x).__name__
    if mod.startswith("polars"):
        if kind == "DataFrame":
            cols = {i: x.to_series(i).to_numpy() for i in range(x.width)}
            frame = pd.DataFrame(cols, index=pd.RangeIndex(x.height))
            frame.columns = list(x.columns)
            return frame
        if kind == "Series":
            return pd.Series(x.to_numpy(), name=x.name if x.name != "" else None)  # polars: "" when unnamed
        if kind == "LazyFrame":
            raise TypeError("a polars LazyFrame holds no rows yet: call .collect() first")
        return x
    if mod.startswith("pyarrow"):
        if kind in ("Table", "RecordBatch"):
            cols = {i: _arrow_to_numpy(x.column(i)) for i in range(x.num_columns)}
            frame = pd.DataFrame(cols, index=pd.RangeIndex(x.num_rows))
            frame.columns = list(x.column_names)
            return frame
        if kind == "ChunkedArray" or (kind.endswith("Array") and hasattr(x, "null_count")):
            return _arrow_to_numpy(x)
    return x


def to_numpy(x: Any, name: str) -> np.ndarray:
    """Any array-like argument (list, tuple, numpy, pandas, torch) as a numpy array, or a named error.

    The one conversion every public function uses for its array arguments:
    ``None``, strings, mappings and sets raise ``TypeError``; ragged nested
    sequences raise ``ValueError``; both name the argument. torch tensors
    are detached and moved to the CPU; half-precision floats (numpy or
    torch ``float16``, torch ``bfloat16``) are widened to float64, which
    holds them exactly (pandas cannot index ``float16``); non-native byte
    order (big-endian data) is converted to the machine's; complex numbers
    raise ``TypeError``.
    """
    if x is None:
        raise TypeError(f"{name} is None; expected an array-like (list, numpy array, pandas object or tensor)")
    if isinstance(x, (str, bytes, Mapping, set, frozenset)) or np.isscalar(x):
        raise TypeError(
            f"{name} must be array-like (list, numpy array, pandas Series/DataFrame or torch tensor), "
            f"got {type(x).__name__}"
        )
    try:
        x = _as_pandas(x)
    except TypeError as exc:
        raise TypeError(f"{name}: {exc}") from None
    if isinstance(x, (pd.DataFrame, pd.Series, pd.Index)):
        arr = x.to_numpy()
    elif _is_torch_tensor(x):
        try:
            arr = _from_tensor(x)
        except TypeError as exc:
            raise TypeError(f"{name}: {exc}") from None
    else:
        try:
            arr = np.asarray(x)
        except (ValueError, TypeError) as exc:  # ragged nested lists
            raise ValueError(f"{name} could not be converted to an array (ragged or mixed nesting?): {exc}") from None
    if arr.dtype == np.float16:
        arr = arr.astype(np.float64)
    if not arr.dtype.isnative:  # big-endian data on a little-endian machine (or the reverse): pandas refuses it
        arr = arr.astype(arr.dtype.newbyteorder("="))
    if arr.dtype.kind == "c":
        raise TypeError(f"{name} must hold real numbers or class names, got dtype {arr.dtype}")
    if arr.dtype == object and arr.ndim >= 1 and arr.size and any(
            isinstance(v, (list, np.ndarray)) for v in arr.flat[:1000]):
        raise ValueError(f"{name} could not be converted to an array: it holds nested sequences of unequal "
                         "length (ragged)")
    return arr


def _as_array(x: Any, name: str) -> tuple[np.ndarray, list | None]:
    """Convert to a numpy array; return (array, column names or None)."""
    columns = None
    try:
        x = _as_pandas(x)  # polars/pyarrow tables: their column names are the class names
    except TypeError as exc:
        raise TypeError(f"{name}: {exc}") from None
    if isinstance(x, pd.DataFrame):
        columns = list(x.columns)
        dup = pd.Index(columns)[pd.Index(columns).duplicated()].unique().tolist()
        if dup:
            raise ValueError(f"{name} has duplicate column names {dup[:10]!r}; every class needs its own name")
    arr = to_numpy(x, name)
    if arr.ndim == 0:
        raise TypeError(f"{name} must be array-like, got a scalar")
    if arr.ndim > 2:
        raise ValueError(f"{name} must be 1-D (class labels) or 2-D (indicator matrix), got {arr.ndim}-D")
    if arr.ndim == 1:
        arr = _integral_floats_as_ints(_bools_as_ints(arr))
    if arr.shape[0] == 0:
        raise ValueError(f"{name} is empty (0 rows)")
    if arr.ndim == 2 and arr.shape[1] == 0:
        raise ValueError(f"{name} has 0 columns")
    if arr.ndim == 2 and arr.dtype == object:
        missing = pd.isna(arr)
        if missing.any():
            rows = np.flatnonzero(missing.any(axis=1))
            raise ValueError(f"{name} contains NaN/None/missing values (rows {_fmt_rows(rows)})")
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{name} is a 2-D matrix with non-numeric entries") from None
    if arr.ndim == 2 and not (arr.dtype == bool or np.issubdtype(arr.dtype, np.number)):
        raise TypeError(f"{name} is a 2-D matrix of dtype {arr.dtype}; expected numbers or booleans")
    return arr, columns


def _bools_as_ints(arr: np.ndarray) -> np.ndarray:
    """1-D boolean labels as the classes 0 and 1 (so that ``True`` and ``1`` are one class).

    numpy ``bool``, pandas ``boolean`` (an object array once converted) and
    object arrays mixing booleans with other labels: ``False``/``True`` become
    ``0``/``1``, whatever else is there (a missing value) stays.
    """
    if arr.dtype == bool:
        return arr.astype(np.int64)
    if arr.dtype != object or arr.size == 0:
        return arr
    is_bool = np.fromiter((isinstance(v, (bool, np.bool_)) for v in arr), dtype=bool, count=len(arr))
    if not is_bool.any():
        return arr
    if is_bool.all():
        return arr.astype(np.int64)
    out = arr.copy()
    out[is_bool] = [int(v) for v in arr[is_bool]]
    return out


#: the largest float magnitude whose integers are all exact (a float label beyond it is not a class id)
_EXACT_FLOAT = 2.0 ** 53


def _integral_floats_as_ints(arr: np.ndarray) -> np.ndarray:
    """1-D float labels whose values are all whole numbers as integers (``0.``/``1.`` are the classes 0 and 1).

    A ground truth stored as float (``np.zeros(n)``, a float tensor, a pandas
    column that went through NaN) is read exactly as the same labels stored
    as integers: the same classes, so a one-class float ground truth is a
    binary task just as ``np.zeros(n, dtype=int)`` is. Arrays with a missing
    (NaN/inf) or a fractional value (probabilities) are left as they are.
    """
    if arr.dtype.kind != "f" or arr.size == 0:
        return arr
    with np.errstate(invalid="ignore"):
        if not (np.isfinite(arr).all() and np.abs(arr).max() <= _EXACT_FLOAT and np.array_equal(arr, np.round(arr))):
            return arr
    return arr.astype(np.int64)


def check_features(x: Any, name: str = "X") -> np.ndarray:
    """An attacker's input (or a weight vector): a non-empty 2-D array of finite numbers or booleans.

    A 1-D input is one feature column. Raises ``TypeError`` / ``ValueError``
    naming ``name``.
    """
    arr = to_numpy(x, name)
    if arr.ndim == 0:
        raise TypeError(f"{name} must be array-like, got a scalar")
    if arr.ndim > 2:
        raise ValueError(f"{name} must be 1-D or 2-D (rows x features), got {arr.ndim}-D")
    if arr.dtype == object:
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must hold numbers or booleans (it holds other objects)") from None
    if not (arr.dtype == bool or np.issubdtype(arr.dtype, np.number)):
        raise TypeError(f"{name} must hold numbers or booleans, got dtype {arr.dtype}")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} is empty (0 rows)")
    arr = arr.reshape(len(arr), -1)
    if arr.shape[1] == 0:
        raise ValueError(f"{name} has 0 columns")
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        rows = np.flatnonzero(~np.isfinite(arr).all(axis=1))
        raise ValueError(f"{name} contains NaN or inf values (rows {_fmt_rows(rows)})")
    return arr


def _missing_mask_1d(arr: np.ndarray) -> np.ndarray | None:
    """Boolean mask of NaN/None/inf entries in a 1-D array, or None if there are none."""
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr)
    elif arr.dtype == object:
        bad = pd.isna(arr) | np.array([isinstance(v, (float, np.floating)) and np.isinf(v) for v in arr], dtype=bool)
    else:
        return None
    return bad if bad.any() else None


def _check_finite(arr: np.ndarray, name: str) -> None:
    if arr.ndim == 1:
        bad = _missing_mask_1d(arr)
        if bad is not None:
            rows = np.flatnonzero(bad)
            raise ValueError(f"{name} contains NaN/inf/missing values (rows {_fmt_rows(rows)})")
    elif arr.dtype.kind == "f" and not np.isfinite(arr).all():
        rows = np.flatnonzero(~np.isfinite(arr).all(axis=1))
        raise ValueError(f"{name} contains NaN or inf values (rows {_fmt_rows(rows)})")


#: Added to every row number a message names: the rows before the part of the data being read (a Dask
#: partition rerun on the driver to tell its error, :func:`row_offset`), so that a message names the row of the
#: whole data; 0 otherwise.
_ROW_OFFSET: contextvars.ContextVar[int] = contextvars.ContextVar("biasamp_row_offset", default=0)


@contextlib.contextmanager
def row_offset(offset: int) -> Iterator[None]:
    """Within the block, messages name row ``r`` of the data read as row ``offset + r``."""
    token = _ROW_OFFSET.set(int(offset))
    try:
        yield
    finally:
        _ROW_OFFSET.reset(token)


def _fmt_rows(rows: np.ndarray, limit: int = 5) -> str:
    offset = _ROW_OFFSET.get()
    shown = ", ".join(str(int(r) + offset) for r in rows[:limit])
    return shown + (f", ... ({len(rows)} in all)" if len(rows) > limit else "")


def _is_binary_matrix(arr: np.ndarray) -> bool:
    if arr.dtype == bool:
        return True
    if arr.dtype.kind == "u":
        return int(arr.max()) <= 1
    if arr.dtype.kind == "i":
        return int(arr.min()) >= 0 and int(arr.max()) <= 1
    return bool(((arr == 0) | (arr == 1)).all())


def _canonical_argsort(values: list) -> list:
    """Positions of ``values`` in :func:`canonical_order`."""
    idx = range(len(values))
    try:
        return sorted(idx, key=values.__getitem__)
    except TypeError:
        pass
    try:
        return sorted(idx, key=lambda i: (type(values[i]).__name__, values[i]))
    except TypeError:
        return sorted(idx, key=lambda i: (type(values[i]).__name__, repr(values[i])))


def canonical_order(values: Sequence) -> list:
    """Distinct values in an order that depends on the values only, never on the rows' order.

    Sorted when the values compare; labels of mixed types (``"a"`` and ``1``)
    are sorted by type name, then by value (or by ``repr`` when values of one
    type do not compare).
    """
    values = list(values)
    return [values[i] for i in _canonical_argsort(values)]


def _sorted_classes(values: np.ndarray) -> list:
    return canonical_order(pd.unique(values).tolist())


def factorize(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, uniques)`` of a 1-D array, the uniques in :func:`canonical_order`."""
    try:
        codes, uniques = pd.factorize(values, sort=True)
    except TypeError:  # values of types that do not compare with each other
        codes, uniques = pd.factorize(values, sort=False)
        uniq = list(uniques)
        order = _canonical_argsort(uniq)
        remap = np.empty(len(uniq), dtype=np.intp)
        remap[order] = np.arange(len(uniq))
        codes = np.where(codes >= 0, remap[codes], codes)
        uniques = np.empty(len(uniq), dtype=object)
        uniques[:] = [uniq[i] for i in order]
    return np.asarray(codes, dtype=np.intp), np.asarray(uniques, dtype=object)


def _int_like(classes: Sequence) -> bool:
    return all(isinstance(c, (int, np.integer)) and not isinstance(c, (bool, np.bool_)) for c in classes)


def _dense_range(lo: int, hi: int, n: int) -> bool:
    """Whether a lookup table over ``[lo, hi]`` is cheap compared with ``n`` values."""
    return hi - lo <= 4 * n + 1024


def _int_classes(arrays: Sequence[np.ndarray]) -> list:
    """Sorted distinct values of integer arrays (fast path: a presence table, no sort)."""
    lo = min(int(a.min()) for a in arrays)
    hi = max(int(a.max()) for a in arrays)
    if not _dense_range(lo, hi, sum(len(a) for a in arrays)):
        return np.unique(np.concatenate(arrays)).tolist()
    present = np.zeros(hi - lo + 1, dtype=bool)
    for a in arrays:
        present[a - lo] = True
    return (np.flatnonzero(present) + lo).tolist()


def _codes_for(values: np.ndarray, classes: Sequence, name: str, what: str) -> np.ndarray:
    """Map 1-D values to indices into ``classes``; unknown values raise."""
    codes = None
    if values.dtype.kind in "iu" and _int_like(classes):  # fast path: a lookup table
        cls = np.asarray(classes, dtype=np.int64)
        lo, hi = int(cls.min()), int(cls.max())
        vmin, vmax = int(values.min()), int(values.max())
        if _dense_range(lo, hi, len(values)) and lo <= vmin and vmax <= hi:
            if np.array_equal(cls, np.arange(len(cls))):
                codes = values.astype(np.intp, copy=False)  # the ids are the codes
            else:
                lut = np.full(hi - lo + 1, -1, dtype=np.intp)
                lut[cls - lo] = np.arange(len(cls))
                codes = lut[values - lo]
    if codes is None:
        codes = pd.Index(list(classes)).get_indexer(values)
    if (codes < 0).any():
        unknown = _sorted_classes(np.asarray(values)[codes < 0])
        raise ValueError(
            f"{name} contains {what} {unknown[:10]!r} not present in the ground truth "
            f"(known classes: {list(classes)[:20]!r})"
        )
    return codes.astype(np.intp, copy=False)


# --------------------------------------------------------------------------- #
# public encoder
# --------------------------------------------------------------------------- #
class EncodedLabels(dict):
    """What :func:`encode_labels` returns: argument name -> LabelMatrix, for the arguments given.

    Looking up an argument that was not given (``None``) raises a
    ``TypeError`` naming it, never a bare ``KeyError``: a caller that needs an
    argument reports its absence by name without checking first.
    """

    def __missing__(self, key: str) -> LabelMatrix:
        raise TypeError(f"{key} is None; expected labels (a list, numpy array, pandas object or tensor)")


def check_consistent_length(**arrays: LabelMatrix | None) -> int:
    """Check that the given (already encoded) label matrices have equal row counts.

    Returns the common number of rows. ``None`` entries are skipped.
    """
    present = {k: v for k, v in arrays.items() if v is not None}
    lengths = {k: v.n_rows for k, v in present.items()}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{k} has {n}" for k, n in lengths.items())
        raise ValueError(f"length mismatch: {desc} rows")
    return next(iter(lengths.values()))


def encode_labels(
    truths: Mapping[str, Any],
    preds: Mapping[str, Any] | None = None,
    *,
    allow_soft: bool = False,
    classes: Sequence | None = None,
) -> dict[str, LabelMatrix]:
    """Encode the ground truths and predictions of one label family.

    All arguments describe the same label family (e.g. the protected attribute
    in train, test and predictions), so they share one class list.

    Parameters
    ----------
    truths : mapping of argument name -> labels
        Ground-truth arguments (``None`` values are skipped). At least one is
        required. 1-D truths define the classes (sorted union of the values
        seen); 2-D truths must all have the same width.
    preds : mapping of argument name -> labels, optional
        Predictions of the same family. 1-D predictions are class labels (or,
        for a binary ``{0, 1}`` family, probabilities of class 1); 2-D ones
        must have one column per class.
    allow_soft : bool, default False
        Whether predictions may be probabilities in ``[0, 1]``.
    classes : sequence, optional
        Fix the class list instead of inferring it (used when data arrives in
        batches). Labels outside it raise ``ValueError``.

    Returns
    -------
    EncodedLabels
        A dict of argument name -> LabelMatrix, only for the arguments that
        were not ``None`` (looking up another raises a ``TypeError`` naming it).
    """
    preds = dict(preds or {})
    if classes is not None:
        # booleans are the classes 0 and 1, as in 1-D labels (see _bools_as_ints)
        classes = [int(c) if isinstance(c, (bool, np.bool_)) else c for c in classes]
        dup = pd.Index(classes)[pd.Index(classes).duplicated()].unique().tolist() if classes else []
        if dup:
            raise ValueError(f"the class list {classes[:20]!r} has duplicates {dup[:10]!r}")
    raw_truths = {k: _as_array(v, k) for k, v in truths.items() if v is not None}
    if not raw_truths:
        if classes is None:
            raise ValueError(
                f"no ground truth given among {list(truths) or list(preds)}: pass the ground truth "
                "or the class list, so that predictions can be encoded"
            )
        return EncodedLabels({
            name: _encode_prediction(value, name, tuple(classes), allow_soft)
            for name, value in preds.items() if value is not None
        })
    for name, (arr, _) in raw_truths.items():
        _check_finite(arr, name)
    ndims = {name: arr.ndim for name, (arr, _) in raw_truths.items()}
    if len(set(ndims.values())) > 1:
        desc = ", ".join(f"{k} is {d}-D" for k, d in ndims.items())
        raise ValueError(f"ground truths of one label family must all be 1-D or all 2-D: {desc}")

    out: dict[str, LabelMatrix] = EncodedLabels()
    if next(iter(ndims.values())) == 1:
        arrays = [arr for arr, _ in raw_truths.values()]
        if classes is not None:
            class_list = list(classes)
        elif all(arr.dtype.kind in "iu" for arr in arrays):
            class_list = _int_classes(arrays)
        else:
            class_list = _sorted_classes(np.concatenate([arr.astype(object) for arr in arrays]))
        for name, (arr, _) in raw_truths.items():
            if arr.dtype.kind == "f" and not np.array_equal(arr, np.round(arr)):
                raise ValueError(
                    f"{name} is 1-D with non-integer float values; 1-D ground truth holds class "
                    "labels (use a 2-D indicator matrix for multi-label data)"
                )
            out[name] = LabelMatrix(name, tuple(class_list), codes=_codes_for(arr, class_list, name, "labels"))
    else:
        widths = {name: arr.shape[1] for name, (arr, _) in raw_truths.items()}
        if len(set(widths.values())) > 1:
            desc = ", ".join(f"{k} has {w}" for k, w in widths.items())
            raise ValueError(f"ground-truth indicator matrices must have the same number of columns: {desc}")
        first_cols = next((cols for _, cols in raw_truths.values() if cols is not None), None)
        width = next(iter(widths.values()))
        class_list = list(classes) if classes is not None else (
            list(first_cols) if first_cols is not None else list(range(width))
        )
        if len(class_list) != width:
            raise ValueError(f"expected {len(class_list)} columns (classes {class_list!r}), got {width}")
        for name, (arr, cols) in raw_truths.items():
            arr = _align_columns(arr, cols, class_list, name)
            if not _is_binary_matrix(arr):
                raise ValueError(f"{name} is a 2-D ground-truth matrix with values other than 0/1")
            out[name] = LabelMatrix(name, tuple(class_list), dense=arr)

    for name, value in preds.items():
        if value is None:
            continue
        out[name] = _encode_prediction(value, name, tuple(class_list), allow_soft)
    return out


def _align_columns(arr: np.ndarray, cols: list | None, class_list: list, name: str) -> np.ndarray:
    """Reorder DataFrame columns to ``class_list`` when they carry the same names."""
    if cols is None or cols == class_list:
        return arr
    if set(cols) == set(class_list) and len(cols) == len(class_list):
        order = [cols.index(c) for c in class_list]
        return arr[:, order]
    if all(isinstance(c, (int, np.integer)) for c in cols) and list(cols) == list(range(len(cols))):
        return arr  # default RangeIndex columns: positional
    raise ValueError(f"{name} has columns {cols!r} that do not match the classes {class_list!r}")


def _encode_prediction(value: Any, name: str, classes: tuple, allow_soft: bool) -> LabelMatrix:
    arr, cols = _as_array(value, name)
    _check_finite(arr, name)
    k = len(classes)
    if arr.ndim == 1:
        is_float = arr.dtype.kind == "f"
        if is_float and not np.array_equal(arr, np.round(arr)):
            if set(classes) != {0, 1}:
                raise ValueError(
                    f"{name} is 1-D with non-integer values; 1-D probabilities are only understood "
                    f"for a binary {{0, 1}} label, but the classes are {list(classes)!r}. Pass an "
                    f"N x {k} probability matrix instead"
                )
            if not allow_soft:
                raise ValueError(f"{name} holds probabilities, but this metric needs hard 0/1 predictions")
            if arr.min() < 0 or arr.max() > 1:
                raise ValueError(f"{name} holds probabilities outside [0, 1]")
            p1 = arr.astype(np.float64)
            dense = np.column_stack([1.0 - p1, p1]) if classes == (0, 1) else np.column_stack([p1, 1.0 - p1])
            return LabelMatrix(name, classes, dense=dense, soft=True)
        codes = _codes_for(arr, classes, name, "predicted classes")
        return LabelMatrix(name, classes, codes=codes)
    if arr.shape[1] != k:
        raise ValueError(
            f"{name} has {arr.shape[1]} columns but its ground truth has {k} classes {list(classes)[:20]!r}"
        )
    arr = _align_columns(arr, cols, list(classes), name)
    if _is_binary_matrix(arr):
        return LabelMatrix(name, classes, dense=arr)
    if not allow_soft:
        raise ValueError(f"{name} has values other than 0/1, but this metric needs hard 0/1 predictions")
    if arr.min() < 0 or arr.max() > 1:
        raise ValueError(f"{name} holds probabilities outside [0, 1] (min {arr.min():g}, max {arr.max():g})")
    return LabelMatrix(name, classes, dense=arr, soft=True)


# --------------------------------------------------------------------------- #
# one rule for a binary task
# --------------------------------------------------------------------------- #
def class_index(classes: tuple, pos_label: Any) -> int | None:
    """Index of ``pos_label`` among ``classes`` (1 == True, never "1" == 1), None if absent."""
    for i, c in enumerate(classes):
        if c is pos_label or (type(c) is not str and type(pos_label) is not str and c == pos_label) or (
                isinstance(c, str) and isinstance(pos_label, str) and c == pos_label):
            return i
    return None


def positive_class(m: LabelMatrix, binary_task: str = "positive", pos_label: Any = None) -> int | None:
    """The class a single-label binary task is read as, by the rule of :ref:`def-binary-task`; None: read as it is.

    Read as its positive class (``binary_task="positive"``, the default) is a
    1-D (single-label) task whose classes are 0 and 1 (integers, booleans or
    whole floats; a task showing one of them only is the same binary task)
    or, when ``pos_label`` is given, any 1-D task of at most two classes
    (``pos_label`` one of them, or the one class it does not show).
    ``binary_task="both"`` reads every class (the one-hot reading), as does
    an indicator matrix, which already says which classes it holds.

    Returns the index of the positive class among ``m.classes`` (``m.n_classes``
    when the positive class is not among them: a one-class task whose
    positive class never occurs), or None. Raises ``ValueError`` for a
    ``pos_label`` that cannot be the positive class of the task.
    """
    if binary_task == "both" or m.codes is None:
        return None
    if pos_label is None:
        if m.n_classes > 2 or not all(_is_zero_or_one(c) for c in m.classes):
            return None
        pos_label = 1
    elif m.n_classes > 2:
        raise ValueError(f"pos_label={pos_label!r} names the positive class of a binary task, but the task has "
                         f"{m.n_classes} classes {list(m.classes)[:20]!r}; leave pos_label=None")
    index = class_index(m.classes, pos_label)
    if index is not None:
        return index
    if m.n_classes == 1:  # the positive class never occurs: its column is all zeros
        return 1
    raise ValueError(f"pos_label={pos_label!r} is not a class of the task {list(m.classes)!r}: pass one of them "
                     "(the positive class), or binary_task='both' to read both classes")


def _is_zero_or_one(c: Any) -> bool:
    return isinstance(c, (int, np.integer, bool, np.bool_, float, np.floating)) and c in (0, 1)


def read_binary_task(m: LabelMatrix, index: int | None, positive: Any = 1) -> LabelMatrix:
    """``m`` read as its positive class ``index`` (:func:`positive_class`): an ``N x 1`` indicator; None: ``m``.

    Hard labels give the 0/1 column of the positive class (all zeros when
    ``index`` is ``m.n_classes``, a class the labels never show), probabilities
    their positive column; the one class is named ``positive`` (the class
    itself when it is among ``m.classes``).
    """
    if index is None:
        return m
    name = m.classes[index] if index < m.n_classes else positive
    if m.codes is not None:
        column = (m.codes == index).astype(np.int8)[:, None]
        return LabelMatrix(m.name, (name,), dense=column)
    dense = m._dense()
    column = dense[:, [index]] if index < m.n_classes else np.zeros((len(dense), 1), dtype=dense.dtype)
    return LabelMatrix(m.name, (name,), dense=column, soft=m.soft)


def read_task_roles(encoded: Mapping[str, LabelMatrix], truth: str, binary_task: str = "positive",
                    pos_label: Any = None) -> tuple[dict[str, LabelMatrix], str | None]:
    """Every role of one encoded task (truths and predictions) read by the rule for a binary task.

    ``truth`` names the ground-truth role whose classes decide (all roles of
    one family share them). Returns a mapping of the same kind, each matrix
    read as its positive class (:func:`read_binary_task`) or unchanged, and
    what was read (:func:`describe_reading`).
    """
    out = type(encoded)(encoded) if isinstance(encoded, dict) else dict(encoded)
    like = out.get(truth)
    if like is None:
        return out, None
    index = positive_class(like, "positive", pos_label)
    said = describe_reading(like.classes, index, binary_task, pos_label)
    if binary_task == "both" or index is None:
        return out, said
    for role, m in list(out.items()):
        out[role] = read_binary_task(m, index, 1 if pos_label is None else pos_label)
    return out, said


def describe_reading(classes: Sequence, index: int | None, binary_task: str, pos_label: Any = None) -> str | None:
    """What the rule for a binary task read (a result's ``binary_task``): None when the task is not binary.

    ``"positive class 1"`` (the positive class alone) or ``"both classes 0, 1"``
    (the one-hot reading, ``binary_task="both"``).
    """
    if index is None:
        return None
    if binary_task == "both":
        return "both classes " + ", ".join(map(repr, classes))
    return f"positive class {classes[index] if index < len(classes) else (1 if pos_label is None else pos_label)!r}"
