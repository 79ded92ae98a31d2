"""The inputs of an audit: what every report section builder sees, and how it is prepared.

:class:`AuditInputs` holds the validated labels (predictions possibly replaced
by calibrated hard predictions, rows with missing values or zero weights
dropped); the options of :func:`biasamp.audit` are an
:class:`~biasamp.report.AuditConfig` (``biasamp.report._config``).
``_prepare`` turns the arguments of :func:`~biasamp.audit` into an
:class:`AuditInputs` (one named error for a bad argument, threshold
calibration on validation scores, the row selection of ``missing=`` and
``sample_weight=``), :func:`family_options` picks the options a family
declares, and ``_describe`` writes the :attr:`Report.inputs
<biasamp.Report.inputs>` entries. :class:`AuditInputs` is re-exported by
:mod:`biasamp.report`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from biasamp._core.batch import Batch, length
from biasamp._core.batch import to_host as _to_host
from biasamp._core.labels import to_numpy
from biasamp._core.policy_options import GroupOptions, PolicyOptions
from biasamp._core.rows import RowFilter
from biasamp.report._config import AuditOptions

__all__ = ["AuditInputs", "AuditOptions"]


def _role(role: str, doc: str) -> property:
    def get(self: Batch) -> Any:
        return self.labels.get(role)

    return property(get, doc=doc)


@dataclass(eq=False)
class AuditInputs(Batch):
    """The validated inputs every section builder sees: a :class:`~biasamp._core.batch.Batch` of the audit.

    The labels by role (``labels``; ``attr``, ``task``, ``attr_pred``,
    ``task_pred``, ``attr_train``, ``task_train`` and ``weight`` read them)
    hold what the user passed (numpy arrays, pandas objects), validated once
    and with the rows of ``missing=`` / ``sample_weight=`` selected, with
    predictions possibly replaced by calibrated hard predictions;
    ``thresholds`` holds the calibration tables (label -> threshold) by role.
    A count-based family reads the roles it declares (:meth:`family_roles`).

    A streamed audit holds only a uniform random sample of the test rows in
    the labels (``n_rows`` of the ``n`` rows counted; no training rows): the
    count-based families come as :class:`~biasamp.report.SectionResult`
    objects in ``results`` (by section key), and ``description`` holds the
    entries of :attr:`Report.inputs <biasamp.Report.inputs>` found while
    streaming (class lists, soft predictions, sizes), which the held rows
    alone would not give.
    """

    thresholds: dict = field(default_factory=dict)
    results: dict = field(default_factory=dict)
    description: dict = field(default_factory=dict)
    captions: Any = None  # biasamp.captioning.section.caption_inputs of audit(captions=...)
    features: Any = None  # audit(features=...): the subgroup scan's columns, one row per test row

    attr = _role("attr", "Test ground truth of the protected attribute.")
    task = _role("task", "Test ground truth of the task.")
    attr_pred = _role("attr_pred", "Predictions of the attribute (None when not given).")
    task_pred = _role("task_pred", "Predictions of the task (None when not given).")
    attr_train = _role("attr_train", "Training ground truth of the attribute (None when not given).")
    task_train = _role("task_train", "Training ground truth of the task (None when not given).")
    weight = _role("sample_weight", "Weights of the test rows (None when unweighted).")

    def family_roles(self, family: Any) -> dict:
        """The roles ``family`` (a ``Family``) reads, and the test ground truth: what its ``call`` takes.

        The test ground truth is always there: BiasAmp_MALS takes it as its
        training labels when none are given.
        """
        return self.roles((*family.roles, "attr", "task"))

    @property
    def has_train(self) -> bool:
        """Whether training labels were given (held, or counted by a streamed audit: ``n_train``)."""
        return (self.attr_train is not None and self.task_train is not None) or self.n_train is not None

    @property
    def n_rows(self) -> int:
        """Number of test rows held in the label attributes (``n``, except in a streamed audit)."""
        return length(self.attr)

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


def _numeric(x: Any) -> np.ndarray | None:
    """``x`` as a float array, or None when it holds non-numbers (class names)."""
    try:
        arr = np.asarray(x.to_numpy() if hasattr(x, "to_numpy") else x)
    except Exception:  # noqa: BLE001 - exotic containers: treat as non-numeric
        return None
    if arr.dtype.kind not in "biuf":
        return None
    return arr.astype(np.float64, copy=False)


# --------------------------------------------------------------------------- #
# input preparation
# --------------------------------------------------------------------------- #
def _calibrate(role: str, val_scores: Any, test_scores: Any, labels: Any) -> tuple[Any, pd.Series]:
    """Hard test predictions from scores, thresholds calibrated on validation scores (:ref:`def-calibration`)."""
    val_scores, test_scores, labels = _to_host(val_scores), _to_host(test_scores), _to_host(labels)
    check_calibration(role, val_scores, None if test_scores is None else np.ndim(test_scores), np.shape(labels))
    th = calibration_thresholds(val_scores, np.ndim(labels), truth_positives(role, labels), length(labels))
    if np.ndim(labels) == 1:
        hard = th.apply(np.asarray(test_scores, dtype=np.float64).reshape(-1, 1)).reshape(-1)
        if isinstance(test_scores, pd.Series):
            hard = pd.Series(hard, name=test_scores.name)
        return hard, th.thresholds
    hard = th.apply(test_scores)
    if isinstance(labels, pd.DataFrame):
        hard = pd.DataFrame(np.asarray(hard), columns=labels.columns)
    return hard, th.thresholds


def check_calibration(role: str, val_scores: Any, test_ndim: int | None, truth_shape: tuple[int, ...]) -> None:
    """``ValueError`` when the scores cannot be calibrated against a ground truth of ``truth_shape``.

    There must be test scores to threshold (``test_ndim`` None: none); a
    1-D (0/1) label needs 1-D validation and test scores, a multi-label one
    a score column per label. Checked before the ground truth's positives
    are counted (:func:`truth_positives`), in memory and in a streamed audit
    alike.
    """
    if test_ndim is None:
        raise ValueError(f"{role}_val_scores was given but not {role}_pred (the test scores to threshold)")
    if len(truth_shape) == 1:
        if np.ndim(val_scores) != 1 or test_ndim != 1:
            raise ValueError(f"{role}: a 1-D label needs 1-D scores (the probability of class 1) to calibrate")
        return
    width = np.shape(val_scores)[1] if np.ndim(val_scores) == 2 else 1
    if width != truth_shape[1]:
        raise ValueError(f"{role}_val_scores has {width} column(s) but {role} has {truth_shape[1]} labels: one "
                         "column of validation scores per label")


def truth_positives(role: str, labels: Any) -> np.ndarray:
    """The positives of each label of the ground truth ``labels`` that the thresholds are calibrated to.

    One count for 1-D labels, which must be 0/1 (or True/False); one per
    column of a multi-label 0/1 matrix. Counts of several parts of the rows
    add up (a streamed audit counts them batch by batch); the positive rates
    are the counts over the rows (:func:`calibration_thresholds`).

    Raises
    ------
    ValueError
        Naming ``role``: 1-D labels other than 0/1, a matrix with other
        values than 0/1, a missing value.
    """
    from biasamp._core.labels import encode_labels

    if np.ndim(labels) == 1:
        if not set(pd.unique(np.asarray(labels)).tolist()) <= {0, 1}:
            raise ValueError(f"{role}: threshold calibration needs a binary 0/1 or a multi-label {role}")
        return np.array([np.count_nonzero(np.asarray(labels, dtype=np.float64))], dtype=np.int64)
    return np.count_nonzero(encode_labels({role: labels})[role].to_dense(), axis=0).astype(np.int64)


def calibration_thresholds(val_scores: Any, truth_ndim: int, positives: np.ndarray, n: int) -> Any:
    """The thresholds (``Thresholds``) that give ``val_scores`` the positive rate
    ``positives / n`` of each label of the ground truth (:func:`~biasamp.calibrate_thresholds`);
    the scores of a 1-D label read as float64."""
    from biasamp.calibration import calibrate_thresholds

    scores = np.asarray(val_scores, dtype=np.float64) if truth_ndim == 1 else val_scores
    return calibrate_thresholds(scores, rates=np.asarray(positives, dtype=np.int64) / n)


def _prepare(attr, task, attr_pred, task_pred, attr_train, task_train, attr_val_scores, task_val_scores, *,
             sample_weight=None, missing="raise"):
    if attr is None or task is None:
        raise ValueError("audit needs the test ground truth of both the attribute (attr) and the task (task)")
    if (attr_train is None) != (task_train is None):
        raise ValueError("give both attr_train and task_train, or neither")
    # every label argument through the input layer before any section runs: a bad argument is one
    # named error, not a failure inside each section (missing values are checked after the row selection)
    batch = Batch.validated({"attr": attr, "task": task, "attr_pred": attr_pred, "task_pred": task_pred,
                             "attr_train": attr_train, "task_train": task_train},
                            checked={"attr_val_scores": attr_val_scores, "task_val_scores": task_val_scores},
                            sample_weight=sample_weight, missing=missing)
    inp = AuditInputs(batch.labels, batch.n, batch.n_train, batch.rows, batch.kept)
    _check_shared_classes(inp)
    truth = {"task": inp.task_train if inp.task_train is not None else inp.task,
             "attr": inp.attr_train if inp.attr_train is not None else inp.attr}
    if task_val_scores is not None:
        inp.labels["task_pred"], inp.thresholds["task"] = _calibrate("task", task_val_scores, inp.task_pred,
                                                                     truth["task"])
    if attr_val_scores is not None:
        inp.labels["attr_pred"], inp.thresholds["attr"] = _calibrate("attr", attr_val_scores, inp.attr_pred,
                                                                     truth["attr"])
    return inp


def _dropped_test_rows(inp: AuditInputs) -> Any:
    """The test rows' :class:`~biasamp._core.rows.RowFilter` when the row selection left rows out (``missing="drop"``,
    zero weights), else None."""
    test_rows = inp.rows[0] if inp.rows else None
    return test_rows if test_rows is not None and (test_rows.n_dropped or test_rows.n_zero_weight) else None


def _test_rows_kept(frame: pd.DataFrame, name: str, inp: AuditInputs) -> pd.DataFrame:
    """``frame`` (one row per test row given) on the test rows the row selection kept (``missing="drop"``, zero
    weights): the rows the labels hold."""
    test_rows = _dropped_test_rows(inp)
    if inp.kept is None or test_rows is None:
        return frame
    if len(frame) != test_rows.n_rows:
        raise ValueError(f"{name} has {len(frame)} rows, the test labels {test_rows.n_rows}: one row of {name} per "
                         "test row")
    return frame.iloc[inp.kept].reset_index(drop=True)


def _check_shared_classes(inp: AuditInputs) -> None:
    """``ValueError`` when a 1-D prediction has no class of its ground truth (labels "yes"/"no", predictions 0/1).

    Every section would fail on it, each with its own message; the audit says it once, naming both
    arguments and both class sets. Probabilities (non-integer floats) and 2-D indicators are left to the
    families, whose classes are columns.
    """
    from biasamp._core.labels import _as_array, canonical_order

    for role in ("attr", "task"):
        pred = inp.labels.get(f"{role}_pred")
        truths = [inp.labels[r] for r in (role, f"{role}_train") if inp.labels.get(r) is not None]
        if pred is None or np.ndim(pred) != 1 or any(np.ndim(t) != 1 for t in truths):
            continue
        predicted = _as_array(pred, f"{role}_pred")[0]
        if predicted.dtype.kind == "f" and not np.array_equal(predicted, np.round(predicted)):
            continue  # probabilities: the families read them (or say why they cannot)
        classes = pd.unique(np.concatenate([pd.unique(_as_array(t, role)[0]).astype(object) for t in truths]))
        values = pd.unique(predicted)
        if len(values) and (pd.Index(classes, dtype=object).get_indexer(values.astype(object)) < 0).all():
            shown = [canonical_order(v.tolist())[:10] for v in (classes, values)]
            raise ValueError(f"{role}_pred shares no class with {role}: {role} has the classes {shown[0]!r}, "
                             f"{role}_pred the values {shown[1]!r}; predictions must be classes of the labels (map "
                             f"them to {role}'s classes) or, for a 0/1 label, probabilities of class 1")


def _caption_inputs(captions: Any, inp: AuditInputs) -> dict | None:
    """``audit(captions=...)`` checked (``caption_inputs``); the captioning section needs every test row."""
    if captions is None:
        return None
    from biasamp.captioning.section import caption_inputs

    test_rows = _dropped_test_rows(inp)
    if test_rows is not None:
        raise ValueError(f"captions: {test_rows.describe()}, but the captioning section needs every test row; drop "
                         "those rows before the audit")
    return caption_inputs(captions, inp.n_rows)


def _feature_inputs(features: Any, inp: AuditInputs) -> Any:
    """``audit(features=...)`` checked: a DataFrame of one row per test row (the subgroup scan's columns)."""
    if features is None:
        return None
    from biasamp.subgroups._levels import feature_frame

    frame = _test_rows_kept(feature_frame(features), "features", inp)
    if len(frame) != inp.n:
        raise ValueError(f"features has {len(frame)} rows, the test labels {inp.n}: one row of features per test row")
    return frame


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


MAX_TASK_COLUMNS = 10_000
"""The most task columns of an audit: 100,000 columns of 60 rows ran for minutes in GBs and wrote nothing."""


def check_task_count(n_columns: int, examples: Sequence = ()) -> None:
    """``ValueError``, before any work, for more than :data:`MAX_TASK_COLUMNS` task columns (``examples``: names)."""
    if n_columns > MAX_TASK_COLUMNS:
        such = f" (such as {', '.join(map(repr, list(examples)[:3]))}, ...)" if len(examples) else ""
        raise ValueError(f"{n_columns:,} task columns{such} in task: an audit takes at most {MAX_TASK_COLUMNS:,}; "
                         "choose the labels to audit")


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


#: the audit's options that every count-based family applies, as the shared option groups declare them: the
#: probability policy and the small-group rule (biasamp._core.policy_options)
POLICY_OPTIONS = PolicyOptions.option_names()
GROUP_OPTIONS = GroupOptions.option_names()


def family_options(options: Mapping[str, Any], key: str) -> dict:
    """The entries of ``options`` (a mapping) that family ``key`` declares (``Family.options``), None left out.

    :meth:`AuditConfig.family_options <biasamp.report.AuditConfig.family_options>` does the same from the
    audit's configuration; this form takes options already resolved for a section (e.g. the fairness options
    after :func:`resolve_fairness_options`).
    """
    from biasamp._families import REGISTRY

    declared = REGISTRY[key].options
    names = () if declared is None else declared.option_names()
    return {k: v for k, v in options.items() if k in names and v is not None}


def resolve_fairness_options(options: dict, classes: Sequence, multilabel: bool) -> tuple[dict, list[str]]:
    """The fairness section's options as an audit (in memory or streamed) applies them, and what to note.

    The group fairness family's declared ``audit_options``
    (:func:`biasamp.fairness._family.audit_options`): with no ``pos_label``
    given and a single-label task of two classes that hold neither 1 nor True
    (``"yes"``/``"no"``), the headline is the mean over both classes
    (``average="macro"``) and a note says so, where the function itself would
    raise (docs/definitions.md, ``def-fairness``).
    """
    from biasamp.fairness._family import audit_options

    return audit_options(options, classes, multilabel)


def rows_used(inp: Mapping[str, Any]) -> str:
    """What the report's inputs say of the rows counted, in one line for every format (terminal, HTML, Markdown,
    LaTeX): the weights, and the rows the row selection dropped or grouped (the sections' notes' words); ""
    when nothing was weighted, dropped or grouped."""
    used = ["counts weighted by sample_weight"] if inp.get("weighted") else []
    for side in ("test", "train"):
        r = inp.get(f"rows_{side}")
        if r:  # RowFilter.to_dict(): the same words as the sections' notes
            used.append(f"{side} rows: {RowFilter(**r).describe()}")
    return "; ".join(used)
