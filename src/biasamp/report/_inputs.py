"""The inputs of an audit: what every report section builder sees, and how it is prepared.

:class:`AuditInputs` holds the validated labels (predictions possibly replaced
by calibrated hard predictions, rows with missing values or zero weights
dropped) and :class:`AuditOptions` the options of :func:`biasamp.audit`.
``_prepare`` turns the arguments of :func:`~biasamp.audit` into an
:class:`AuditInputs` (one named error for a bad argument, threshold
calibration on validation scores, the row selection of ``missing=`` and
``sample_weight=``), ``_fairness_options`` checks the fairness options before
any work, and ``_describe`` writes the :attr:`Report.inputs
<biasamp.Report.inputs>` entries. Both types are re-exported by
:mod:`biasamp.report`.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from biasamp._core.labels import _as_array, _as_pandas, _check_finite, _from_tensor, to_numpy
from biasamp._core.results import to_builtin

__all__ = ["AuditInputs", "AuditOptions"]


@dataclass(eq=False)
class AuditInputs:
    """The validated inputs every section builder sees.

    Label attributes hold what the user passed (numpy arrays, pandas objects)
    with predictions possibly replaced by calibrated hard predictions;
    ``thresholds`` holds the calibration tables (label -> threshold) by role.

    A streamed audit holds only a uniform random sample of the test rows in
    the label attributes (``n_rows`` of the ``n`` rows counted; no training
    rows): the count-based families come as
    :class:`~biasamp.report.SectionResult` objects in ``results`` (by section
    key), and ``description`` holds the entries of :attr:`Report.inputs
    <biasamp.Report.inputs>` found while streaming (class lists, soft
    predictions, sizes), which the held rows alone would not give.
    """

    attr: Any
    task: Any
    attr_pred: Any = None
    task_pred: Any = None
    attr_train: Any = None
    task_train: Any = None
    n: int = 0
    n_train: int | None = None
    thresholds: dict = field(default_factory=dict)
    results: dict = field(default_factory=dict)
    description: dict = field(default_factory=dict)
    weight: Any = None
    rows: Any = None
    captions: Any = None  # biasamp.captioning.section.caption_inputs of audit(captions=...)

    @property
    def has_train(self) -> bool:
        """Whether training labels were given (held, or counted by a streamed audit: ``n_train``)."""
        return (self.attr_train is not None and self.task_train is not None) or self.n_train is not None

    @property
    def n_rows(self) -> int:
        """Number of test rows held in the label attributes (``n``, except in a streamed audit)."""
        return _length(self.attr)

    @property
    def task_is_multilabel(self) -> bool:
        """True for a 2-D task with at least two label columns."""
        return np.ndim(self.task) == 2 and np.shape(self.task)[1] >= 2

    def is_soft(self, role: str) -> bool:
        """Whether the prediction ``role`` ("attr_pred" / "task_pred") holds probabilities."""
        x = getattr(self, role)
        if x is None:
            return False
        arr = _numeric(x)
        return arr is not None and bool(np.any((arr != 0) & (arr != 1)))


@dataclass(eq=False)
class AuditOptions:
    """Options of :func:`~biasamp.audit` passed to every section builder (see :func:`~biasamp.audit`)."""

    n_boot: int = 1000
    n_boot_multi: int | None = None
    level: float = 0.95
    ci_method: str = "auto"
    random_state: int | None = 0
    attacker: Any = "auto"
    dpa_quality: str = "inv_ce"
    leakage_quality: str = "accuracy"
    n_iter: int = 10
    combinations: str = "observed"
    min_size: int = 1
    max_size: int | None = None
    min_support: int = 10  # the audit's default (docs/report.md): readable top-combination charts
    top_k: int = 10
    progress: bool = False
    fairness: dict = field(default_factory=dict)
    missing: str = "raise"

    def seed(self, key: str) -> int | None:
        """A seed for section ``key``, derived from ``random_state`` (None stays None)."""
        if self.random_state is None:
            return None
        ss = np.random.SeedSequence([int(self.random_state), zlib.crc32(key.encode())])
        return int(ss.generate_state(1)[0])

    def to_dict(self) -> dict:
        out = {k: to_builtin(v) for k, v in self.__dict__.items() if k != "progress"}
        if not isinstance(out["attacker"], (str, type(None))):
            out["attacker"] = type(self.attacker).__name__
        return out


def _numeric(x: Any) -> np.ndarray | None:
    """``x`` as a float array, or None when it holds non-numbers (class names)."""
    try:
        arr = np.asarray(x.to_numpy() if hasattr(x, "to_numpy") else x)
    except Exception:  # noqa: BLE001 - exotic containers: treat as non-numeric
        return None
    if arr.dtype.kind not in "biuf":
        return None
    return arr.astype(np.float64, copy=False)


def _length(x: Any) -> int:
    return len(x) if hasattr(x, "__len__") else int(np.shape(x)[0])


def _to_host(x: Any) -> Any:
    """Lists become arrays and torch tensors numpy arrays; pandas pass unchanged, numpy in native byte order.

    polars and pyarrow tables and columns become the pandas objects with the same names (``_as_pandas``).
    """
    x = _as_pandas(x)
    if isinstance(x, np.ndarray) and not x.dtype.isnative:
        return x.astype(x.dtype.newbyteorder("="))
    if x is None or isinstance(x, (pd.Series, pd.DataFrame, np.ndarray)):
        return x
    return np.asarray(_from_tensor(x))


# --------------------------------------------------------------------------- #
# input preparation
# --------------------------------------------------------------------------- #
def _calibrate(role: str, val_scores: Any, test_scores: Any, labels: Any) -> tuple[Any, pd.Series]:
    """Hard test predictions from scores, thresholds calibrated on validation scores (:ref:`def-calibration`)."""
    from biasamp.calibration import calibrate_thresholds

    if test_scores is None:
        raise ValueError(f"{role}_val_scores was given but not {role}_pred (the test scores to threshold)")
    val_scores, test_scores, labels = _to_host(val_scores), _to_host(test_scores), _to_host(labels)
    if np.ndim(labels) == 1:
        if np.ndim(val_scores) != 1 or np.ndim(test_scores) != 1:
            raise ValueError(f"{role}: a 1-D label needs 1-D scores (the probability of class 1) to calibrate")
        values = set(pd.unique(np.asarray(labels)).tolist())
        if not values <= {0, 1}:
            raise ValueError(f"{role}: threshold calibration needs a binary 0/1 or a multi-label {role}")
        lab = np.asarray(labels, dtype=np.float64)
        th = calibrate_thresholds(np.asarray(val_scores, dtype=np.float64), rates=[lab.mean()])
        hard = th.apply(np.asarray(test_scores, dtype=np.float64).reshape(-1, 1)).reshape(-1)
        if isinstance(test_scores, pd.Series):
            hard = pd.Series(hard, name=test_scores.name)
        return hard, th.thresholds
    th = calibrate_thresholds(val_scores, val_labels=labels)
    hard = th.apply(test_scores)
    if isinstance(labels, pd.DataFrame):
        hard = pd.DataFrame(np.asarray(hard), columns=labels.columns)
    return hard, th.thresholds


def _prepare(attr, task, attr_pred, task_pred, attr_train, task_train, attr_val_scores, task_val_scores, *,
             sample_weight=None, missing="raise"):
    from biasamp._core.rows import select_rows

    if attr is None or task is None:
        raise ValueError("audit needs the test ground truth of both the attribute (attr) and the task (task)")
    if (attr_train is None) != (task_train is None):
        raise ValueError("give both attr_train and task_train, or neither")
    labels = {"attr": attr, "task": task, "attr_pred": attr_pred, "task_pred": task_pred,
              "attr_train": attr_train, "task_train": task_train}
    # every label argument through the input layer before any section runs: a bad argument is one
    # named error, not a failure inside each section (missing values are checked after the row selection)
    for name, x in (*labels.items(), ("attr_val_scores", attr_val_scores), ("task_val_scores", task_val_scores)):
        if x is not None:
            arr = _as_array(x, name)[0]
            if missing == "raise" or name.endswith("val_scores"):
                _check_finite(arr, name)
    labels = {k: _to_host(v) for k, v in labels.items()}
    n = _length(labels["attr"])
    for name in ("task", "attr_pred", "task_pred"):
        x = labels[name]
        if x is not None and _length(x) != n:
            raise ValueError(f"{name} has {_length(x)} rows but attr has {n}: every test argument needs one row "
                             "per test instance")
    # rows: missing values and zero weights, test and training rows each on their own
    rows = (None, None)
    if missing != "raise" or sample_weight is not None:
        test, weight, test_rows = select_rows({k: labels[k] for k in ("attr", "task", "attr_pred", "task_pred")},
                                              missing=missing, group_args=("attr",), sample_weight=sample_weight)
        labels.update(test)
        train_rows = None
        if labels["attr_train"] is not None:
            train, _, train_rows = select_rows({k: labels[k] for k in ("attr_train", "task_train")},
                                               missing=missing, group_args=("attr_train",))
            labels.update(train)
        rows = (test_rows, train_rows)
        for name, x in labels.items():
            if x is not None:
                _check_finite(_as_array(x, name)[0], name)
    else:
        weight = None
    attr, task, attr_pred, task_pred, attr_train, task_train = labels.values()
    n = _length(attr)
    n_train = None
    if attr_train is not None:
        n_train = _length(attr_train)
        if _length(task_train) != n_train:
            raise ValueError(f"task_train has {_length(task_train)} rows but attr_train has {n_train}")
    thresholds = {}
    if task_val_scores is not None:
        task_pred, thresholds["task"] = _calibrate("task", task_val_scores, task_pred,
                                                   task_train if task_train is not None else task)
    if attr_val_scores is not None:
        attr_pred, thresholds["attr"] = _calibrate("attr", attr_val_scores, attr_pred,
                                                   attr_train if attr_train is not None else attr)
    return AuditInputs(attr, task, attr_pred, task_pred, attr_train, task_train, n, n_train, thresholds,
                       weight=weight, rows=rows)


def _caption_inputs(captions: Any, inp: AuditInputs) -> dict | None:
    """``audit(captions=...)`` checked (``caption_inputs``); the captioning section needs every test row."""
    if captions is None:
        return None
    from biasamp.captioning.section import caption_inputs

    test_rows = inp.rows[0] if inp.rows else None
    if test_rows is not None and (test_rows.n_dropped or test_rows.n_zero_weight):
        raise ValueError(f"captions: {test_rows.describe()}, but the captioning section needs every test row; drop "
                         "those rows before the audit")
    return caption_inputs(captions, inp.n)


def _classes(x: Any) -> list:
    if isinstance(x, pd.DataFrame):
        return [str(c) for c in x.columns]
    if np.ndim(x) == 2:
        return [str(i) for i in range(np.shape(x)[1])]
    return [str(c) for c in sorted(pd.unique(np.asarray(x)).tolist(), key=str)]


def _describe(inp: AuditInputs, names: dict) -> dict:
    """The ``Report.inputs`` entries (a streamed audit gives them in ``inp.description``)."""
    if inp.description:
        return dict(inp.description)
    return {
        "n_test": inp.n,
        "n_train": inp.n_train,
        "train_source": "train" if inp.has_train else "test",
        "attribute": names.get("attr") or (getattr(inp.attr, "name", None) or "attr"),
        "attribute_classes": _classes(inp.attr),
        "task": names.get("task") or (getattr(inp.task, "name", None) or "task"),
        "task_classes": _classes(inp.task),
        "task_kind": "multi-label" if np.ndim(inp.task) == 2 else "single-label",
        "attr_pred": None if inp.attr_pred is None else ("soft" if inp.is_soft("attr_pred") else "hard"),
        "task_pred": None if inp.task_pred is None else ("soft" if inp.is_soft("task_pred") else "hard"),
        "calibrated": sorted(inp.thresholds),
        **_rows_entries(inp),
    }


def level_size_warning(attr: Any, name: str, min_group_size: int) -> str | None:
    """A warning when attribute ``name`` has few rows per level (median level size below ``min_group_size``).

    ``None`` for a 2-D (multi-label) attribute, fewer than 3 levels, or levels of
    ``min_group_size`` rows or more at the median. Said before the audit runs: such an
    attribute (an identifier, a postcode) makes every per-group table long and
    every group's rate rest on a handful of rows.
    """
    if attr is None or np.ndim(attr) != 1 or not min_group_size:
        return None
    values = np.asarray(to_numpy(attr, "attr"))
    if values.dtype.kind == "O":
        values = values.astype(str)
    _, counts = np.unique(values, return_counts=True)
    median = float(np.median(counts)) if counts.size else 0.0
    if counts.size < 3 or median >= min_group_size:
        return None
    return (f"attribute {name!r} has few rows per level: {counts.size:,} levels over {counts.sum():,} rows, "
            f"median {median:g} rows per level (below min_group_size={min_group_size}); each group's rates rest "
            "on a handful of rows (groups below min_group_size are flagged), intervals are wide and the per-group "
            "tables are long. Is it an identifier? Group rare levels together or use a coarser attribute")


def _rows_entries(inp: AuditInputs) -> dict:
    """Rows dropped or regrouped before the audit (missing values, zero weights), for ``Report.inputs``."""
    out = {"weighted": True} if inp.weight is not None else {}
    if inp.rows is None:
        return out
    for side, rows in zip(("test", "train"), inp.rows):
        if rows is not None and rows.changed:
            out[f"rows_{side}"] = rows.to_dict()
    return out


def _rows_notes(inp: AuditInputs) -> list[str]:
    """The same in words, for every section's notes."""
    out = []
    for side, rows in zip(("test", "training"), inp.rows or ()):
        if rows is not None and rows.changed:
            out.append(f"{side} rows: {rows.describe()} (of {rows.n_rows:,})")
    return out


#: the audit's options that every count-based family applies: the probability policy and the small-group rule
POLICY_OPTIONS = ("threshold", "soft")
GROUP_OPTIONS = ("min_group_size", "include_small_groups")


def family_options(options: dict, names: tuple) -> dict:
    """The audit options ``names`` that were given (the fairness options hold them for every family)."""
    return {k: options[k] for k in names if k in options}


def resolve_fairness_options(options: dict, classes: Sequence, multilabel: bool) -> tuple[dict, list[str]]:
    """The fairness section's options as an audit (in memory or streamed) applies them, and what to note.

    With no ``pos_label`` given and a single-label task of two classes that
    hold neither 1 nor True (``"yes"``/``"no"``), the headline is the mean over
    both classes (``average="macro"``) and a note says so, where the function
    itself would raise (docs/definitions.md, ``def-fairness``).
    """
    from biasamp.fairness._metrics import _complete_one_class

    out = {k: (tuple(v) if k == "tolerance" else v) for k, v in options.items()}
    notes = []
    if out.get("average", "auto") == "auto" and not multilabel and len(classes) == 1 \
            and _complete_one_class(classes[0], out.get("pos_label", 1)) is None:
        out["average"] = "macro"
        notes.append(f"The task shows a single class {classes[0]!r}: the headline is that class's value; pass "
                     "pos_label (--pos-label) naming the class that never occurs to report it instead")
    if "pos_label" not in out and out.get("average", "auto") == "auto" and not multilabel and len(classes) == 2 \
            and not any(not isinstance(c, str) and c == 1 for c in classes):
        out["average"] = "macro"
        notes.append("The task's two classes include neither 1 nor True: the headline is the mean over both "
                     "classes; pass pos_label (--pos-label) to report one class")
    return out, notes


def _fairness_options(**options: Any) -> dict:
    """The fairness section's options, checked now (one named error before any work)."""
    from biasamp.fairness._groups import check_tolerance
    from biasamp.fairness._metrics import (
        AVERAGES,
        SOFT_CHOICES,
        _check_min_group_size,
        _check_threshold,
    )

    if options["average"] not in AVERAGES or options["average"] is None:
        raise ValueError(f"average must be 'auto', 'binary' or 'macro' in an audit, got {options['average']!r}")
    if options["soft"] not in SOFT_CHOICES:
        raise ValueError(f"soft must be one of {SOFT_CHOICES}, got {options['soft']!r}")
    _check_threshold(options["threshold"])
    _check_min_group_size(options["min_group_size"])
    check_tolerance(options["tolerance"])
    if not isinstance(options["include_small_groups"], (bool, np.bool_)):
        raise TypeError(f"include_small_groups must be True or False, got {options['include_small_groups']!r}")
    if options["pos_label"] is None:
        del options["pos_label"]
    if isinstance(options["tolerance"], tuple):
        options["tolerance"] = list(options["tolerance"])
    return options
