"""Per-group counting shared by the families that compare groups: group fairness and differential fairness.

Below the families (no family imports another family's private names): the
sensitive features become one group code per row (intersectional groups for
several columns), the labels one class list, and one vectorized pass gives the
one-vs-rest confusion counts per (group, class), :class:`ConfusionCounts`
(``n_g``, ``P_gk``, ``(TP+FP)_gk``, ``TP_gk``), with the rates by group
(:func:`group_table`). :func:`prepare` is everything a family does to its
labels before counting (rows, thresholding, the headline classes), and
:func:`cells` the distinct rows its bootstrap resamples. The streamed form
(the count state) is :mod:`biasamp._engine.group_state`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from biasamp._core.labels import (
    LabelMatrix,
    _as_pandas,
    _fmt_rows,
    _missing_mask_1d,
    check_consistent_length,
    encode_labels,
    factorize,
    to_numpy,
)
from biasamp._core.policy import SOFT_CHOICES, check_threshold, class_index, harden_maybe
from biasamp._core.policy_options import BINARY_TASK, DEFAULT_THRESHOLD
from biasamp._core.rows import select_rows
from biasamp._core.validation import check
from biasamp._engine.resample import Cells, augmented, cells_of, label_rows

__all__ = [
    "AVERAGES",
    "LABEL_OPTIONS",
    "ConfusionCounts",
    "CountsReading",
    "Prepared",
    "binary_average",
    "cells",
    "complete_one_class",
    "count",
    "counts_of",
    "encode_groups",
    "fairness_call",
    "group_table",
    "headline_of",
    "infer_classes",
    "prepare",
    "ratio",
    "split",
]

#: ``average``: the positive class's value, the mean over classes, per class (None), or the one that fits the task
AVERAGES = ("auto", "binary", "macro", None)
#: the options a batch's counting reads (:func:`prepare`): how probabilities become counts, rows with a missing value
LABEL_OPTIONS = ("threshold", "soft", "missing")


_BLOCK_BYTES = 4 << 20


# --------------------------------------------------------------------------- #
# sensitive features -> group codes
# --------------------------------------------------------------------------- #
def _feature_columns(sensitive_features: Any) -> tuple[list[np.ndarray], list]:
    """Split ``sensitive_features`` into 1-D columns and their names."""
    sf = sensitive_features
    name = "sensitive_features"
    if sf is None:
        raise TypeError("sensitive_features is None; expected a 1-D array-like or a DataFrame")
    if isinstance(sf, (str, bytes, set, frozenset)) or np.isscalar(sf):
        raise TypeError(f"sensitive_features must be array-like or a DataFrame, got {type(sf).__name__}")
    try:
        sf = _as_pandas(sf)  # polars/pyarrow: their column names are the feature names
    except TypeError as exc:
        raise TypeError(f"{name}: {exc}") from None
    if isinstance(sf, Mapping):
        if not sf:
            raise ValueError("sensitive_features is an empty mapping; give at least one column")
        cols = {k: to_numpy(v, f"sensitive_features[{k!r}]") for k, v in sf.items()}
        for k, v in cols.items():
            if v.ndim != 1:
                raise ValueError(f"sensitive_features[{k!r}] must be a 1-D column, got shape {v.shape}")
        return list(cols.values()), list(cols)
    if isinstance(sf, pd.DataFrame):
        if sf.shape[1] == 0:
            raise ValueError("sensitive_features is a DataFrame with no columns")
        return [to_numpy(sf.iloc[:, j], name) for j in range(sf.shape[1])], list(sf.columns)
    if isinstance(sf, pd.Series):
        return [to_numpy(sf, name)], [sf.name if sf.name is not None else "sensitive_feature"]
    arr = to_numpy(sf, name)
    if arr.ndim == 1:
        return [arr], ["sensitive_feature"]
    if arr.ndim == 2:
        if arr.shape[1] == 0:
            raise ValueError(f"sensitive_features has no column (shape {arr.shape}); give at least one feature")
        return [arr[:, j] for j in range(arr.shape[1])], [f"sensitive_feature_{j}" for j in range(arr.shape[1])]
    raise ValueError(f"sensitive_features must be 1-D or 2-D (one column per feature), got {arr.ndim}-D")


def encode_groups(
    sensitive_features: Any, n_rows: int, groups: Sequence | None = None
) -> tuple[np.ndarray, tuple, tuple]:
    """Group code per row, the group names and the feature names.

    Several columns give intersectional groups: the distinct observed value
    combinations (as fairlearn does), named by tuples, in sorted order.
    """
    columns, names = _feature_columns(sensitive_features)
    for col, name in zip(columns, names):
        if len(col) != n_rows:
            raise ValueError(f"sensitive_features has {len(col)} rows but the labels have {n_rows}")
        missing = _missing_mask_1d(col)
        if missing is not None:
            raise ValueError(
                f"sensitive_features column {name!r} contains NaN/inf/missing values (rows "
                f"{_fmt_rows(np.flatnonzero(missing))}); a group "
                "must be a finite value or a name")
    if groups is not None:
        groups = tuple(groups)
        if not any(isinstance(g, (bool, np.bool_)) for g in np.ravel(np.asarray(groups, dtype=object))):
            # a boolean column against 0/1 groups: True is the group 1 (as labels are, docs/definitions.md)
            columns = [np.asarray(c).astype(np.int64) if np.asarray(c).dtype.kind == "b" else c for c in columns]
        if len(columns) == 1:
            codes = pd.Index(list(groups)).get_indexer(columns[0])
        else:
            codes = pd.MultiIndex.from_tuples(list(groups)).get_indexer(pd.MultiIndex.from_arrays(columns))
        if (codes < 0).any():
            first = int(np.flatnonzero(codes < 0)[0])
            value = tuple(c[first] for c in columns) if len(columns) > 1 else columns[0][first]
            raise ValueError(f"sensitive_features holds a group {value!r} not among the known groups")
        return codes.astype(np.intp, copy=False), groups, tuple(names)
    codes, uniques = _factorize(columns[0])
    values = [uniques]
    level_codes = [codes]
    for col in columns[1:]:
        c, u = _factorize(col)
        level_codes.append(c)
        values.append(u)
    if len(columns) == 1:
        return codes, tuple(uniques.tolist()), tuple(names)
    combined = level_codes[0].astype(np.int64)
    for c, u in zip(level_codes[1:], values[1:]):
        # keep the combined id below n_rows * |u|: refactorize after every column
        combined, _ = pd.factorize(combined * len(u) + c, sort=True)
        combined = combined.astype(np.int64)
    # name each combined id by its first row's values
    first_row = np.full(combined.max() + 1, -1, dtype=np.int64)
    first_row[combined[::-1]] = np.arange(len(combined) - 1, -1, -1)
    per_level = [v[lc[first_row]].tolist() for v, lc in zip(values, level_codes)]
    group_names = tuple(zip(*per_level))
    return combined.astype(np.intp), group_names, tuple(names)


def _factorize(col: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return factorize(col)  # groups in canonical order: never dependent on the rows' order


# --------------------------------------------------------------------------- #
# counts
# --------------------------------------------------------------------------- #
def infer_classes(y_true: Any) -> list | None:
    """Sorted classes of a numeric 1-D ground truth, fast (same rule as :mod:`biasamp.labels`)."""
    if isinstance(y_true, pd.Series):
        arr = y_true.to_numpy()
    elif isinstance(y_true, np.ndarray):
        arr = y_true
    else:
        return None
    if arr.ndim != 1 or arr.dtype.kind not in "iub" or len(arr) == 0:
        return None
    # booleans are the classes 0 and 1 (as in biasamp.labels); any byte order is read natively
    arr = arr.astype(np.int64) if arr.dtype.kind == "b" else arr.astype(arr.dtype.newbyteorder("="), copy=False)
    return sorted(pd.unique(arr).tolist())


def _is_int_label(c: Any) -> bool:
    return isinstance(c, (int, np.integer, bool, np.bool_))


def complete_one_class(present: Any, pos_label: Any) -> list | None:
    """The two classes of a binary task whose ground truth shows only ``present``, or None.

    ``pos_label`` names the positive class: when it is another label of the
    same kind (both integers/booleans, or both strings), the task's classes are
    ``{present, pos_label}``; 0/1 (and boolean) labels with ``pos_label`` 0 or 1
    are the classes 0 and 1. Any other case (e.g. integers 3 and 7) cannot be
    completed: the caller passes ``classes=``.
    """
    if _is_int_label(present) and _is_int_label(pos_label):
        return [0, 1] if int(present) in (0, 1) and int(pos_label) in (0, 1) else None
    if isinstance(present, str) and isinstance(pos_label, str) and present != pos_label:
        return sorted([present, pos_label])
    return None


def _encode_targets(y_true: Any, y_pred: Any, classes: Sequence | None,
                    pos_label: Any = None, complete: bool = False) -> tuple[LabelMatrix, LabelMatrix]:
    """Encode both label arrays on one class list.

    With ``complete`` (and no ``classes``), a single-label ground truth that
    shows one class only is read as a binary task whose other class comes from
    ``pos_label`` (:func:`complete_one_class`), as fairlearn reads ``pos_label``:
    the positive class's rates are then 0 (never predicted) or undefined (never
    in the ground truth), never the other class's.
    """
    given = classes is not None
    if classes is None:
        classes = infer_classes(y_true)
        if complete and classes is not None and len(classes) == 1:
            classes = complete_one_class(classes[0], pos_label) or classes
    try:
        enc = encode_labels({"y_true": y_true}, {"y_pred": y_pred}, allow_soft=True, classes=classes)
    except ValueError:
        if given or not complete or classes is not None:
            raise
        # a one-class ground truth (names) with the other class predicted: complete it from pos_label
        alone = encode_labels({"y_true": y_true})["y_true"]
        if alone.codes is None or alone.n_classes != 1 or complete_one_class(alone.classes[0], pos_label) is None:
            raise
        enc = encode_labels({"y_true": y_true}, {"y_pred": y_pred}, allow_soft=True,
                            classes=complete_one_class(alone.classes[0], pos_label))
    if "y_pred" not in enc:
        raise TypeError("y_pred is None; expected predictions")
    yt = enc["y_true"]
    if complete and not given and yt.codes is not None and yt.n_classes == 1:
        two = complete_one_class(yt.classes[0], pos_label)
        if two is not None:
            enc = encode_labels({"y_true": y_true}, {"y_pred": y_pred}, allow_soft=True, classes=two)
    check_consistent_length(y_true=enc["y_true"], y_pred=enc["y_pred"])
    return enc["y_true"], enc["y_pred"]


def count(gcodes: np.ndarray, n_groups: int, yt: LabelMatrix, yp: LabelMatrix, weights: np.ndarray | None = None):
    """(n_g, P_gk, (TP+FP)_gk, TP_gk) in one vectorized pass over the rows.

    With ``weights`` every count is the sum of its rows' weights (float64);
    without, hard labels give integer counts.
    """
    k = yt.n_classes
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    n_g = np.bincount(gcodes, weights=w, minlength=n_groups)
    n_g = n_g.astype(np.int64) if w is None else n_g
    if yt.codes is not None and yp.codes is not None:
        if n_groups * k * k <= max(4 * len(gcodes), 1 << 20):
            # the full per-group K x K confusion matrix from one bincount
            joint = np.bincount((gcodes * k + yt.codes) * k + yp.codes, weights=w, minlength=n_groups * k * k)
            joint = joint.reshape(n_groups, k, k)
            return n_g, joint.sum(axis=2), joint.sum(axis=1), np.diagonal(joint, axis1=1, axis2=2).copy()
        gt = gcodes * k + yt.codes
        size = n_groups * k
        pos: np.ndarray = np.bincount(gt, weights=w, minlength=size).reshape(n_groups, k)
        pred: np.ndarray = np.bincount(gcodes * k + yp.codes, weights=w, minlength=size).reshape(n_groups, k)
        hit = yt.codes == yp.codes
        tp: np.ndarray = np.bincount(gt[hit], weights=None if w is None else w[hit],
                                     minlength=size).reshape(n_groups, k)
        return n_g, pos, pred, tp
    # indicator / probability matrices: sparse (weighted) group one-hot times row blocks
    soft = yp.soft
    dtype = np.float64 if (soft or w is not None) else np.float32
    n = len(gcodes)
    rows = max(1024, min(n, _BLOCK_BYTES // (np.dtype(dtype).itemsize * max(k, 1) * 3)))
    acc = np.zeros((n_groups, 3 * k), dtype=np.float64)
    buf = np.empty((rows, 3 * k), dtype=dtype)
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        b = stop - start
        blk = buf[:b]
        yt.block(start, stop, blk[:, :k])
        yp.block(start, stop, blk[:, k:2 * k])
        np.multiply(blk[:, :k], blk[:, k:2 * k], out=blk[:, 2 * k:])
        vals = np.ones(b, dtype=dtype) if w is None else w[start:stop].astype(dtype)
        onehot = sparse.csr_matrix((vals, (gcodes[start:stop], np.arange(b))), shape=(n_groups, b))
        acc += onehot @ blk
    pos, pred, tp = acc[:, :k], acc[:, k:2 * k], acc[:, 2 * k:]
    if w is not None:
        return n_g, pos, pred, tp
    pos = np.rint(pos).astype(np.int64)
    if not soft:
        pred, tp = np.rint(pred).astype(np.int64), np.rint(tp).astype(np.int64)
    return n_g, pos, pred, tp


@dataclass(frozen=True, eq=False)
class ConfusionCounts:
    r"""One-vs-rest confusion counts per (group, class): the input of every fairness metric.

    Build it with :meth:`from_labels`; combine batches with ``+`` or
    :meth:`update`. All seven metrics are pure functions of it
    (:func:`~biasamp.fairness_from_counts`).

    Attributes
    ----------
    classes : tuple
        Class names (columns).
    groups : tuple
        Group names (rows); tuples for intersectional groups.
    n : ndarray of shape (n_groups,)
        Instances per group, :math:`n_g`.
    positives : ndarray of shape (n_groups, n_classes)
        :math:`P_{gk}`: instances of group g whose ground truth has class k.
    predicted : ndarray of shape (n_groups, n_classes)
        :math:`(TP+FP)_{gk}`: instances of group g predicted as class k.
    true_positives : ndarray of shape (n_groups, n_classes)
        :math:`TP_{gk}`.
    feature_names : tuple
        Names of the sensitive-feature columns the groups come from.
    soft : bool
        True when the predictions were probabilities (``predicted`` and
        ``true_positives`` are then expected counts).

    Notes
    -----
    Every fairness metric is a function of these counts alone: per group g and
    class k, :math:`PPR_{gk} = \text{predicted}_{gk}/n_g`,
    :math:`TPR_{gk} = TP_{gk}/P_{gk}` and
    :math:`FPR_{gk} = (\text{predicted}_{gk} - TP_{gk})/(n_g - P_{gk})`.
    Counts of disjoint batches add (``a + b``), so data can be counted in
    pieces; soft predictions give expected counts (:ref:`def-inputs`).

    References
    ----------
    .. [1] S. Qian et al. "Are My Deep Learning Systems Fair? An Empirical
       Study of Fixed-Seed Training". NeurIPS 2021, Appendix A.

    Examples
    --------
    >>> import numpy as np
    >>> y_true = np.repeat(["sport", "cook", "sport", "cook"], 100)
    >>> y_pred = np.repeat(["sport", "cook"] * 4, [80, 20, 10, 90, 60, 40, 70, 30])
    >>> gender = np.repeat(["female", "male"], 200)
    >>> from biasamp import ConfusionCounts, fairness_from_counts
    >>> whole = ConfusionCounts.from_labels(y_true, y_pred, sensitive_features=gender)
    >>> kw = dict(classes=whole.classes, groups=whole.groups)
    >>> halves = [ConfusionCounts.from_labels(y_true[r], y_pred[r], sensitive_features=gender[r], **kw)
    ...           for r in (slice(0, 150), slice(150, 400))]
    >>> (halves[0] + halves[1]).n.tolist(), whole.n.tolist()
    ([200, 200], [200, 200])
    >>> round(fairness_from_counts(halves[0] + halves[1], average="macro").overall["DP"], 3)
    0.2
    """

    classes: tuple
    groups: tuple
    n: np.ndarray
    positives: np.ndarray
    predicted: np.ndarray
    true_positives: np.ndarray
    feature_names: tuple = ("sensitive_feature",)
    soft: bool = False
    multilabel: bool = False
    predictions: str = "hard"

    @classmethod
    def from_labels(
        cls,
        y_true: Any,
        y_pred: Any,
        *,
        sensitive_features: Any,
        classes: Sequence | None = None,
        groups: Sequence | None = None,
        threshold: float = DEFAULT_THRESHOLD,
        soft: str = "threshold",
        pos_label: Any = 1,
    ) -> ConfusionCounts:
        """Count one batch of labels in a single vectorized pass.

        Parameters
        ----------
        y_true : labels of shape (n,) or (n, K)
            Ground truth (class ids/names, or an indicator matrix; :ref:`def-inputs`).
        y_pred : labels of the same kind
            Predictions: hard, or probabilities (thresholded, or expected
            counts with ``soft="expected"``; as in :func:`~biasamp.fairness_metrics`).
        sensitive_features : array-like of shape (n,), DataFrame or (n, m) array
            Group membership; several columns give intersectional groups.
        classes, groups : sequence, optional
            Fix the class and group lists (to count batches that may not show
            every class or group). Unknown labels or groups raise ``ValueError``.
        threshold, soft, pos_label : optional
            How probabilities become predictions (:func:`~biasamp.fairness_metrics`).
        """
        return counts_of(prepare(y_true, y_pred, sensitive_features, pos_label=pos_label, threshold=threshold,
                                   soft=soft, classes=classes, groups=groups, batch=True))

    def update(self, y_true: Any, y_pred: Any, *, sensitive_features: Any) -> ConfusionCounts:
        """Return these counts plus one more batch (classes and groups fixed to this table's)."""
        other = type(self).from_labels(
            y_true, y_pred, sensitive_features=sensitive_features, classes=self.classes, groups=self.groups
        )
        return self + other

    def __add__(self, other: ConfusionCounts) -> ConfusionCounts:
        if not isinstance(other, ConfusionCounts):
            return NotImplemented
        for what in ("classes", "groups"):
            if getattr(self, what) != getattr(other, what):
                raise ValueError(
                    f"cannot add counts with different {what}: {getattr(self, what)!r} vs {getattr(other, what)!r}"
                )
        return ConfusionCounts(
            self.classes, self.groups, self.n + other.n, self.positives + other.positives,
            self.predicted + other.predicted, self.true_positives + other.true_positives,
            self.feature_names, self.soft or other.soft, self.multilabel or other.multilabel, self.predictions,
        )

    def restrict_groups(self, keep: Any) -> ConfusionCounts:
        """The table of the groups where ``keep`` (a boolean mask over the groups) is True.

        Equal to counting only those groups' rows: every count is per group.
        """
        keep = np.asarray(keep, dtype=bool)
        if keep.shape != (len(self.groups),):
            raise ValueError(f"keep must be a boolean mask over the {len(self.groups)} groups, got shape {keep.shape}")
        return ConfusionCounts(
            self.classes, tuple(g for g, k in zip(self.groups, keep) if k), self.n[keep], self.positives[keep],
            self.predicted[keep], self.true_positives[keep], self.feature_names, self.soft, self.multilabel,
            self.predictions,
        )

    def __radd__(self, other: Any) -> ConfusionCounts:
        if isinstance(other, int) and other == 0:  # lets sum() work
            return self
        return NotImplemented

    @property
    def negatives(self) -> np.ndarray:
        """:math:`N_{gk} = n_g - P_{gk}`."""
        return self.n[:, None] - self.positives

    @property
    def false_positives(self) -> np.ndarray:
        """:math:`FP_{gk} = (TP+FP)_{gk} - TP_{gk}`."""
        return self.predicted - self.true_positives

    @property
    def n_total(self) -> float:
        return float(self.n.sum())

    def to_frame(self) -> pd.DataFrame:
        """Long table, one row per (class, group), with counts and rates (NaN where undefined)."""
        return group_table(self)

    def __repr__(self) -> str:
        cls_ = list(self.classes)[:8]
        grp = list(self.groups)[:8]
        return (
            f"ConfusionCounts(n={self.n_total:g}, classes={cls_!r}{'...' if len(self.classes) > 8 else ''}, "
            f"groups={grp!r}{'...' if len(self.groups) > 8 else ''})"
        )


def ratio(num: np.ndarray, den: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``num / den`` where ``den > 0`` (NaN elsewhere), and the mask ``den > 0``."""
    ok = den > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(ok, num / np.where(ok, den, 1), np.nan)
    return r, ok


#: why the rates of a (class, group) row are undefined, by the empty events (no member, no positive, no negative,
#: no positive prediction) as the bits 8, 1, 2, 4 of a code
_ROW_REASONS = np.array(["; ".join(why for bit, why in ((1, "TPR, FNR: no positive in the group"),
                                                        (2, "FPR: no negative in the group"),
                                                        (4, "precision: no positive prediction in the group"))
                                   if code & bit) if code < 8 else "no member in the group" for code in range(16)],
                        dtype=object)


def group_table(counts: ConfusionCounts) -> pd.DataFrame:
    """The rates by group: one row per (class, group), counts and rates (NaN where undefined, with the reason)."""
    g, k = len(counts.groups), len(counts.classes)
    n = np.broadcast_to(np.asarray(counts.n)[:, None], (g, k))  # counts stay integers
    nf = n.astype(np.float64)
    ppr, has = ratio(counts.predicted, nf)
    tpr, ok_tp = ratio(counts.true_positives, counts.positives)
    fpr, ok_fp = ratio(counts.false_positives, counts.negatives)
    precision, ok_pp = ratio(counts.true_positives, counts.predicted)
    base_rate, _ = ratio(counts.positives, nf)
    fnr, _ = ratio(counts.positives - counts.true_positives, counts.positives)
    accuracy, _ = ratio(counts.true_positives + counts.negatives - counts.false_positives, nf)
    why = _ROW_REASONS[(~ok_tp) * 1 + (~ok_fp) * 2 + (~ok_pp) * 4 + (~has) * 8]
    group_col = np.empty(g * k, dtype=object)
    group_col[:] = [counts.groups[i] for i in np.tile(np.arange(g), k)]
    frame = {
        "class": np.repeat(np.array(counts.classes, dtype=object), g),
        "group": group_col,
    }
    cols = {
        "n": n, "positives": counts.positives, "negatives": counts.negatives,
        "predicted_positive": counts.predicted, "true_positives": counts.true_positives,
        "false_positives": counts.false_positives, "base_rate": base_rate, "ppr": ppr, "tpr": tpr, "fpr": fpr,
        "fnr": fnr, "precision": precision, "accuracy": accuracy,
        "tpr_undefined": ~ok_tp, "fpr_undefined": ~ok_fp, "precision_undefined": ~ok_pp, "undefined_reason": why,
    }
    frame.update({name: np.asarray(v).T.ravel() for name, v in cols.items()})
    return pd.DataFrame(frame)


def binary_average(binary_task: Any, average: Any) -> Any:
    """``average`` under the rule for a binary task (:ref:`def-binary-task`), checked.

    ``binary_task="positive"`` (the default) leaves ``average`` as given:
    ``"auto"`` reads the positive class of a binary task. ``"both"`` reads
    both classes, the ``"macro"`` convention of Qian et al.: ``"auto"``
    becomes ``"macro"``, ``"macro"`` and None stay, ``"binary"`` (one class)
    contradicts it and raises ``ValueError``.
    """
    binary_task = check("binary_task", binary_task, BINARY_TASK)
    if binary_task == "positive":
        return average
    if average == "binary":
        raise ValueError("binary_task='both' reads both classes of a binary task, but average='binary' reports the "
                         "positive class alone: pass one of them (average='macro' is binary_task='both')")
    return "macro" if average == "auto" else average


def headline_of(classes: tuple, multilabel: bool, average: Any, pos_label: Any) -> tuple[str, Any, tuple[int, ...]]:
    """``(average, pos_label or None, indices of the headline classes)``."""
    if average not in AVERAGES:
        raise ValueError(f"average must be one of {AVERAGES}, got {average!r}")
    k = len(classes)
    if average == "auto" and k == 1 and not multilabel:
        raise ValueError(
            f"y_true holds a single class {classes[0]!r}, so average='auto' cannot tell a binary task from a "
            f"one-class one: pass classes= (every class of the task, e.g. both classes of a binary task), "
            f"pos_label= the class that never occurs, or average='macro' to report the class {classes[0]!r} itself")
    if average == "auto":
        average = "binary" if (not multilabel and k == 2) else "macro"
    if average is None:
        return "none", None, tuple(range(k))
    if average == "macro":
        return "macro", None, tuple(range(k))
    if multilabel:
        raise ValueError(
            f"average='binary' needs a single-label task with two classes, but y_true is a multi-label "
            f"indicator matrix of {k} labels; use average='macro' (mean over labels) or None")
    if k != 2:
        raise ValueError(
            f"average='binary' needs two classes, but y_true/y_pred have {k}: {list(classes)[:20]!r}; use "
            "average='macro' or None")
    idx = class_index(classes, pos_label)
    if idx is None:
        raise ValueError(
            f"pos_label={pos_label!r} is not a class of y_true/y_pred {list(classes)!r}: pass pos_label= one "
            "of them (the class whose rates the binary metrics report), or average='macro' for the mean "
            "over both classes")
    return "binary", classes[idx], (idx,)


@dataclass(frozen=True, eq=False)
class Prepared:
    """Labels after the row selection, the thresholding and the group encoding."""

    yt: LabelMatrix
    yp: LabelMatrix
    gcodes: np.ndarray
    groups: tuple
    feature_names: tuple
    weights: np.ndarray | None
    average: str
    pos_label: Any
    headline: tuple
    predictions: str
    rows: Any

    @property
    def weighted(self) -> bool:
        """Whether the rows carry weights (every count a weighted count)."""
        return self.weights is not None


@dataclass(frozen=True)
class CountsReading:
    """What a family's ``compute`` hook reads of a call's prepared labels, for a count table alone (a table given
    to ``*_from_counts``, or the tables of a stream): the headline read from the table's classes, as
    :func:`prepare` reads it from the labels, and what the counting said of the rows.

    Attributes
    ----------
    average : str
        ``"binary"``, ``"macro"`` or ``"none"``.
    pos_label : object or None
        The positive class of a binary average.
    headline : tuple of int
        The indices of the headline classes.
    rows : RowFilter or None
        The rows the counting dropped or regrouped (summed over a stream's batches).
    weighted : bool
        Whether the counts are weighted counts (``sample_weight`` given).
    """

    average: str
    pos_label: Any
    headline: tuple
    rows: Any = None
    weighted: bool = False

    @classmethod
    def of(cls, counts: ConfusionCounts, *, average: Any, pos_label: Any, binary_task: str = "positive",
           rows: Any = None, weighted: bool = False) -> CountsReading:
        """The reading of ``counts`` under the options ``average``, ``pos_label`` and ``binary_task``."""
        average = binary_average(binary_task, average)
        return cls(*headline_of(counts.classes, counts.multilabel, average, pos_label), rows, weighted)


def prepare(y_true: Any, y_pred: Any, sensitive_features: Any, *, average: Any = "auto", pos_label: Any = 1,
             threshold: float = DEFAULT_THRESHOLD, soft: str = "threshold", sample_weight: Any = None,
             missing: str = "raise", classes: Sequence | None = None, groups: Sequence | None = None,
             batch: bool = False, binary_task: str = "positive") -> Prepared:
    """Everything :func:`~biasamp.fairness_metrics` and its bootstrap do before counting, in one place."""
    average = binary_average(binary_task, average)
    if soft not in SOFT_CHOICES:
        raise ValueError(f"soft must be one of {SOFT_CHOICES}, got {soft!r}")
    threshold = check_threshold(threshold)
    columns, names = _feature_columns(sensitive_features)  # validates its type, naming the argument
    if isinstance(sensitive_features, Mapping) or (missing != "raise" and not isinstance(
            sensitive_features, (pd.Series, pd.DataFrame)) and len(columns) > 1):
        sensitive_features = pd.DataFrame(dict(zip(names, columns)))
    arrays, weights, row_filter = select_rows(
        {"y_true": y_true, "y_pred": y_pred, "sensitive_features": sensitive_features},
        missing=missing, group_args=("sensitive_features",), sample_weight=sample_weight)
    y_true, y_pred, sensitive_features = arrays["y_true"], arrays["y_pred"], arrays["sensitive_features"]
    # nothing to report when no row was dropped or weighted out
    rows = None if row_filter.missing == "raise" and not row_filter.n_zero_weight else row_filter
    yt, yp = _encode_targets(y_true, y_pred, classes, pos_label, complete=not batch)
    gcodes, group_names, feature_names = encode_groups(sensitive_features, yt.n_rows, groups)
    if not batch and len(group_names) < 2:
        raise ValueError(
            f"sensitive_features has a single group {group_names[0]!r}; group fairness metrics "
            "compare at least two groups"
        )
    user_pos_label = pos_label
    if batch:  # counts of a batch: the headline is chosen when the metrics are computed
        yt, yp, predictions = harden_maybe(yt, yp, soft, threshold, pos_label)
        return Prepared(yt, yp, gcodes, group_names, feature_names, weights, "none", None,
                         tuple(range(yt.n_classes)), predictions, rows)
    average, pos_label, headline = headline_of(yt.classes, yt.codes is None, average, pos_label)
    yt, yp, predictions = harden_maybe(yt, yp, soft, threshold, user_pos_label)
    return Prepared(yt, yp, gcodes, group_names, feature_names, weights, average, pos_label, headline,
                     predictions, rows)




def counts_of(prep: Prepared) -> ConfusionCounts:
    n_g, pos, pred, tp = count(prep.gcodes, len(prep.groups), prep.yt, prep.yp, prep.weights)
    return ConfusionCounts(prep.yt.classes, prep.groups, n_g, pos, pred, tp, prep.feature_names, prep.yp.soft,
                           prep.yt.codes is None, prep.predictions)


def fairness_call(roles: Mapping[str, Any], options: Mapping[str, Any]) -> tuple[tuple, dict]:
    """``f(y_true=task, y_pred=task_pred, *, sensitive_features=attr, sample_weight, **options)``: the call of a
    family over per-group confusion counts given its labels by role (``Family.call``)."""
    if roles.get("task_pred") is None:
        raise ValueError("the fairness metrics need the task predictions (task_preds / task_scores)")
    if roles.get("attr_pred") is not None:
        raise ValueError("the fairness metrics take no attribute predictions (attr_preds / attr_scores)")
    kwargs = {"sensitive_features": roles["attr"]}
    if roles.get("sample_weight") is not None:
        kwargs["sample_weight"] = roles["sample_weight"]
    return (roles["task"], roles["task_pred"]), {**kwargs, **options}


# --------------------------------------------------------------------------- #
# the distinct rows a bootstrap resamples, and the layout of a replicate table
# --------------------------------------------------------------------------- #
def cells(prep: Any, groups: tuple) -> tuple[Cells, tuple, tuple, bool]:
    """Cells of the prepared labels, on the rows of ``groups`` (the headline's: small groups excluded)."""
    yt, yp, gcodes, w = prep.yt, prep.yp, prep.gcodes, prep.weights
    index = np.array([groups.index(g) if g in groups else -1 for g in prep.groups], dtype=np.intp)
    codes = index[gcodes]
    if (codes < 0).any():
        rows = np.flatnonzero(codes >= 0)
        yt, yp, codes = yt.take(rows), yp.take(rows), codes[rows]
        w = None if w is None else w[rows]
    n_groups = len(groups)
    # a row's weight is part of its cell: a resampled row carries its weight (docs/definitions.md, def-weights)
    rep, counts = cells_of([yt, yp], extra=[codes], weights=w)
    t_rows, p_rows = label_rows(yt, rep), label_rows(yp, rep)
    left = sparse.csr_matrix((np.ones(len(rep)), (np.arange(len(rep)), codes[rep])), shape=(len(rep), n_groups))
    right = augmented([t_rows, p_rows, t_rows.multiply(p_rows)], len(rep))
    return Cells(left, right, counts, weights=None if w is None else w[rep]), yt.classes, groups, bool(yp.soft)


def split(tables: np.ndarray, k: int):
    """A replicate table ``[n | P_k | (TP+FP)_k | TP_k]`` as its four parts (last axis)."""
    return tables[..., 0], tables[..., 1:1 + k], tables[..., 1 + k:1 + 2 * k], tables[..., 1 + 2 * k:]

