"""What a streamed count holds: settings that must agree, and a state whose tables add.

An accumulator (:mod:`biasamp.accumulators`) of a registered family holds two
objects that the family declares in its own package (``<family>/_stream.py``,
see :class:`biasamp._family.Streaming`):

* its **settings**, a frozen :class:`Settings` dataclass: the class lists and
  options fixed at construction. Two accumulators merge only when their
  settings agree (:meth:`Settings.check_mergeable`, field by field, in
  declaration order, naming the first that differs);
* its **count state**, a :class:`CountState` dataclass: numpy tables that add
  (fields declared with :func:`table`) and what the batches said, which
  combines (fields declared with :func:`meta`: flags, row filters, the
  description of the predictions; one field declared with :func:`arguments`:
  which label arguments the batches carried, equal in every batch). ``a + b``
  adds the tables and combines the rest; an empty state (the family's
  ``start``) is the identity.

The generic code (the accumulator, ``sync``, the torchmetrics states, Dask)
reads the fields only through these declarations, so a family adds a table by
declaring one more :func:`table` field: nothing else changes.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from biasamp._core.labels import check_consistent_length, encode_labels
from biasamp._core.rows import add_filters, select_rows

__all__ = [
    "CountState",
    "ReplicateRows",
    "Settings",
    "TaskReading",
    "any_of",
    "arguments",
    "meta",
    "same_value",
    "setting",
    "sum_filters",
    "table",
]


# --------------------------------------------------------------------------- #
# field declarations
# --------------------------------------------------------------------------- #
def table() -> Any:
    """A count table of a :class:`CountState`: a numpy array that adds (``a + b``)."""
    return field(metadata={"table": True})


def meta(default: Any, combine: Callable[[Any, Any], Any]) -> Any:
    """A field of a :class:`CountState` that two states combine with ``combine(mine, theirs)``."""
    return field(default=default, metadata={"combine": combine})


def arguments(what: str, describe: Callable[[Any], str] = repr) -> Any:
    """The field of a :class:`CountState` saying which label arguments its batches carried (None: no batch).

    Every batch must carry the same arguments: two states combine only when
    this field is equal or one of them is None. ``what`` names it in
    messages, ``describe`` writes a value.
    """
    return field(default=None, metadata={"arguments": what, "describe": describe})


def setting(*, label: str | None = None, show: bool = True,
            same: Callable[[Any, Any], bool] | None = None, derived_from: tuple[str, ...] = ()) -> Any:
    """A field of a :class:`Settings`: ``label`` names it in messages (default: its name), ``show`` whether
    its two values are printed, ``same(a, b)`` how they are compared (default: :func:`same_value`);
    ``derived_from``: the options it is built from (compared through it, not one by one: the seed a random
    generator drew, the reading of a binary task), for :func:`options_setting`."""
    return field(metadata={"label": label, "show": show, "same": same, "derived_from": derived_from})


def options_setting() -> Any:
    """The field of a :class:`Settings` holding the family's options object (a ``Validated`` dataclass): the
    settings derive what they read from it, and two settings merge only when every option is the same, compared
    option by option and named in the message (those another field is ``derived_from`` compared through it)."""
    return field(metadata={"options": True})


def split_seed_setting() -> Any:
    """The field of a :class:`Settings` holding the seed of the cross-fitted split, drawn once from
    ``cross_fit_random_state`` (an int, or a ``Generator``'s draw): that option is compared through it."""
    return setting(label="cross_fit_random_state (the seed of the split)", derived_from=("cross_fit_random_state",))


def reading_setting() -> Any:
    """The field of a :class:`Settings` holding how a binary task is read (:class:`TaskReading`), from the task
    classes, ``binary_task`` and ``pos_label``: those options are compared through it."""
    return setting(label="binary_task (how a binary task is read)", derived_from=("binary_task", "pos_label"))


def same_value(a: Any, b: Any) -> bool:
    """Equality of two setting values, arrays compared element-wise."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.array_equal(a, b)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    return bool(a == b)


def sum_filters(mine: Any, theirs: Any) -> Any:
    """Row filters of two states: their sum, where one that has seen nothing (None) is the identity."""
    if mine is None:
        return theirs
    if theirs is None:
        return mine
    return add_filters(mine, theirs)


any_of: Callable[[Any, Any], Any] = operator.or_
"""Combine flags (``soft``, ``weighted``) or sets (``soft_roles``): either side's."""


# --------------------------------------------------------------------------- #
# settings
# --------------------------------------------------------------------------- #
@dataclass(frozen=True, eq=False)
class Settings:
    """Base of a family's settings: class lists and options, fixed at construction."""

    def check_mergeable(self, other: Settings) -> None:
        """Raise ``ValueError`` naming the first setting (an option of the options object: the option) on which
        ``self`` and ``other`` differ."""
        derived = {name for f in fields(self) for name in f.metadata.get("derived_from", ())}
        for f in fields(self):
            mine, theirs = getattr(self, f.name), getattr(other, f.name)
            if f.metadata.get("options"):
                for name in type(mine).option_names():
                    a, b = getattr(mine, name), getattr(theirs, name)
                    if name not in derived and not same_value(a, b):
                        raise ValueError(f"cannot merge accumulators with different {name}: {a!r} vs {b!r}")
                continue
            same = f.metadata.get("same") or same_value
            if not same(mine, theirs):
                label = f.metadata.get("label") or f.name
                values = f": {mine!r} vs {theirs!r}" if f.metadata.get("show", True) else ""
                raise ValueError(f"cannot merge accumulators with different {label}{values}")


class OptionsSettings(Settings):
    """Base of the settings that hold their family's options object (an :func:`options_setting` field named
    ``options``): what the policies read from it, as properties (not copies)."""

    options: Any

    @property
    def threshold(self) -> float:
        """The probability threshold (``threshold``)."""
        return float(self.options.threshold)

    @property
    def group_options(self) -> dict:
        """The small-group rule, as the ``*_from_counts`` keywords."""
        return {"min_group_size": int(self.options.min_group_size),
                "include_small_groups": bool(self.options.include_small_groups)}

    @property
    def missing(self) -> str:
        """What a missing value does (``missing``)."""
        return str(self.options.missing)

    @property
    def cross_fit(self) -> bool | None:
        """``cross_fit`` as given (None: whether a training set arrives is known only at ``compute``)."""
        return None if self.options.cross_fit is None else bool(self.options.cross_fit)


# --------------------------------------------------------------------------- #
# count state
# --------------------------------------------------------------------------- #
@dataclass(eq=False)
class CountState:
    """Base of a family's count state: tables that add, and what the batches said.

    Subclasses are dataclasses whose fields are declared with :func:`table`,
    :func:`meta` and (at most one) :func:`arguments`.
    """

    @classmethod
    def table_names(cls) -> tuple[str, ...]:
        """The names of the count tables, in declaration order."""
        return _layout(cls)[0]

    def tables(self) -> dict[str, np.ndarray]:
        """The count tables by name."""
        return {name: getattr(self, name) for name in self.table_names()}

    def with_tables(self, tables: dict[str, Any]) -> Any:
        """This state with other tables (the rest kept)."""
        return dataclasses.replace(self, **tables)

    def shell(self) -> Any:
        """This state without its tables (what ``torch.distributed`` gathers before reducing the tables)."""
        return self.with_tables(dict.fromkeys(self.table_names()))

    def zeroed(self) -> Any:
        """This state with zero tables of the same shapes (the rest kept)."""
        return self.with_tables({k: np.zeros_like(v) for k, v in self.tables().items()})

    def _combined(self, other: CountState) -> dict[str, Any]:
        """The metadata of both states combined, by field (``ValueError`` where they conflict)."""
        if type(other) is not type(self):
            raise TypeError(f"cannot combine a {type(self).__name__} with a {type(other).__name__}")
        out = {}
        for name, what, combine in _layout(type(self))[1]:
            mine, theirs = getattr(self, name), getattr(other, name)
            out[name] = _combine_arguments(mine, theirs, what) if what is not None else combine(mine, theirs)
        return out

    def combine_meta(self, other: CountState) -> Any:
        """This state's tables with the metadata of both states combined (``ValueError`` where they conflict)."""
        return dataclasses.replace(self, **self._combined(other))

    def __add__(self, other: Any) -> Any:
        if type(other) is not type(self):
            return NotImplemented
        out = self.combine_meta(other)
        return out.with_tables({k: v + getattr(other, k) for k, v in self.tables().items()})

    def add_(self, other: CountState) -> Any:
        """``self + other`` in place (the running state of one accumulator, whose tables no one else holds)."""
        for name, value in self._combined(other).items():  # first: a conflict leaves self as it was
            setattr(self, name, value)
        for name in self.table_names():
            mine, theirs = getattr(self, name), getattr(other, name)
            if isinstance(mine, np.ndarray) and mine.shape == np.shape(theirs):
                mine += theirs
            else:
                setattr(self, name, mine + theirs)
        return self

    def check_batch(self, batch: CountState) -> None:
        """The rule "every batch carries the same arguments": ``ValueError`` if ``batch`` carried others."""
        for name, what, _ in _layout(type(self))[1]:
            if what is None:
                continue
            mine, theirs = getattr(self, name), getattr(batch, name)
            if mine is not None and theirs is not None and mine != theirs:
                describe = _describe(type(self), name)
                raise ValueError(
                    f"this batch gives {what} {describe(theirs)}, earlier batches "
                    f"{describe(mine)}: every batch must carry the same arguments"
                )


_LAYOUTS: dict[type, tuple[tuple[str, ...], tuple[tuple[str, str | None, Any], ...]]] = {}


def _layout(cls: type) -> tuple[tuple[str, ...], tuple[tuple[str, str | None, Any], ...]]:
    """A state class's table names, and its other fields as ``(name, arguments label or None, combine)``."""
    if cls not in _LAYOUTS:
        tables = tuple(f.name for f in fields(cls) if f.metadata.get("table"))
        others = tuple((f.name, f.metadata.get("arguments"), f.metadata.get("combine"))
                       for f in fields(cls) if not f.metadata.get("table"))
        _LAYOUTS[cls] = (tables, others)
    return _LAYOUTS[cls]


def _describe(cls: type, name: str) -> Callable[[Any], str]:
    return next(f.metadata["describe"] for f in fields(cls) if f.name == name)


def _combine_arguments(mine: Any, theirs: Any, what: str) -> Any:
    """Arguments carried by two states: equal, or one of them has seen nothing (None)."""
    if mine is None:
        return theirs
    if theirs is None or theirs == mine:
        return mine
    raise ValueError(
        f"cannot merge accumulators that counted different {what}: {mine!r} vs {theirs!r} "
        "(every batch must carry the same arguments)"
    )


@dataclass(frozen=True)
class ReplicateRows:
    """A batch's rows for the streamed bootstrap: row ``i`` adds ``left[i]ᵀ right[i]`` to its hashed group's table.

    ``left`` (weighted by the sample weights) and ``right`` are sparse
    ``(n, cells)`` matrices; ``row_ids`` the ids of the rows the row layer
    kept (None: the running row numbers).
    """

    left: Any
    right: Any
    n: int
    row_ids: Any = None


@dataclass(frozen=True)
class TaskReading:
    """How an accumulator reads its task by the rule for a binary task (:ref:`def-binary-task`).

    ``labels``: the classes the batches hold (encoded on them); ``classes``:
    the classes counted (the positive class alone, or ``labels``);
    ``index``: the positive class's index among ``labels`` (None: every
    class); ``said``: the result's ``binary_task``.
    """

    labels: tuple
    classes: tuple
    index: int | None = None
    said: str | None = None

    @classmethod
    def of(cls, task_classes: Any, binary_task: str = "positive", pos_label: Any = None) -> TaskReading:
        """The reading of a task of classes ``task_classes`` (an accumulator's class list), checked."""
        from biasamp._core.labels import LabelMatrix, describe_reading, positive_class
        from biasamp._core.policy_options import BINARY_TASK
        from biasamp._core.validation import check

        binary_task = check("binary_task", binary_task, BINARY_TASK)
        labels = tuple(task_classes)
        if len(labels) != 2:  # a class list of one class is an indicator's column: read as it is
            return cls(labels, labels, None, None)
        index = positive_class(LabelMatrix("task_classes", labels, codes=np.zeros(0, dtype=np.intp)), "positive",
                               pos_label)
        said = describe_reading(labels, index, binary_task, pos_label)
        if index is None or binary_task == "both":
            return cls(labels, labels, None, said)
        positive = labels[index] if index < len(labels) else (1 if pos_label is None else pos_label)
        return cls(labels, (positive,), index, said)

    def read(self, encoded: Mapping[str, Any]) -> dict:
        """Every matrix of ``encoded`` (encoded on ``labels``) read as ``classes``."""
        from biasamp._core.labels import read_binary_task

        out = type(encoded)(encoded) if isinstance(encoded, dict) else dict(encoded)
        if self.index is None:
            return out
        for role, m in list(out.items()):
            if m.codes is None and not role.endswith("_pred"):
                raise ValueError(
                    f"{role}: the task classes {list(self.labels)!r} are read as a binary task's positive class "
                    f"{self.classes[0]!r} (binary_task='positive'), but this batch's {role} is an indicator matrix "
                    "of both columns: pass binary_task='both' to count every column")
            out[role] = read_binary_task(m, self.index, self.classes[0])
        return out


def train_batch(roles: Any, missing: str, attr_classes: Any, task_classes: Any) -> tuple[Any, Any, Any, Any]:
    """A batch of training ground truth (``attr_train``, ``task_train``, ``train_sample_weight`` of ``roles``):
    its rows selected (``missing``, zero weights) and encoded on the fixed class lists.

    ``task_classes`` may be a :class:`TaskReading` (the task's classes read by
    the rule for a binary task). Returns ``(attr, task, weights, rows)``: the two encoded label matrices, the
    weights of the kept rows (None when unweighted) and the row filter (what was dropped). The counting of every
    family that takes a training set (``count_train`` of its streaming declaration) starts here.
    """
    attr, task = roles.get("attr_train"), roles.get("task_train")
    if attr is None or task is None:
        raise ValueError("update_train needs both attr and task (training ground truth)")
    arrays, weights, rows = select_rows({"attr": attr, "task": task}, missing=missing, group_args=("attr",),
                                        sample_weight=roles.get("train_sample_weight"), group_columns=False)
    enc_a = encode_labels({"attr_train": arrays["attr"]}, classes=attr_classes)["attr_train"]
    if isinstance(task_classes, TaskReading):  # encoded on the labels, read by the rule for a binary task
        enc_t = task_classes.read({"task_train": encode_labels({"task_train": arrays["task"]},
                                                               classes=task_classes.labels)["task_train"]})["task_train"]
    else:
        enc_t = encode_labels({"task_train": arrays["task"]}, classes=task_classes)["task_train"]
    check_consistent_length(attr_train=enc_a, task_train=enc_t)
    return enc_a, enc_t, weights, rows
