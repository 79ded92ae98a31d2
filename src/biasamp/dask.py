"""biasamp on Dask: the count-based metrics of Dask arrays and DataFrames, and DPA on a cluster.

Every co-occurrence, multi-attribute and fairness metric is a pure function of
count tables that add ("counts first"), so it runs on Dask as a
map-reduce: each partition is counted by a streaming accumulator of
:mod:`biasamp.accumulators` (map), the accumulators are merged in a tree of
fan-in ``split_every`` (reduce), and the metric is computed once from the
total. Only count tables travel between workers, never rows. The functions
below take the arguments of their in-memory counterparts, as Dask arrays or
Dask DataFrames/Series, and return the same result types with the same
values (bit-identical for hard labels; to rounding for probabilities).

They run on whatever scheduler is active: the local threaded scheduler by
default, or a ``dask.distributed.Client`` once one exists.

* :func:`bias_amp_directional`, :func:`bias_amp_mals` (:ref:`def-directional`, :ref:`def-mals`);
* :func:`fairness_metrics` (:ref:`def-fairness`);
* :func:`multi_bias_amp` (:ref:`def-multi`): two passes over the data, one to collect
  the candidate combinations (distinct training task sets and their
  multiplicities), one to count them;
* :func:`scan` (docs/scan.md): the subgroup scan, its tables counted per partition and added;
* :func:`dpa`, :func:`leakage_amplification` (:ref:`def-predictability`): the in-memory
  functions with their iterations dispatched to a Dask cluster through
  joblib's ``"dask"`` backend; per-iteration seeds are fixed before dispatch,
  so results equal the local run for the same ``random_state``.

Inputs. Every argument of one call (train arguments apart) must be split into
the same row partitions: Dask arrays chunked along rows (2-D arrays are
rechunked to one chunk across columns; arrays with different row chunks are
rechunked to the first one's), DataFrames and Series with the same number of
partitions (e.g. columns of one DataFrame). Partition lengths are checked
when counted. Class lists not given are found by one extra pass over the
ground-truth columns (distinct values per partition, merged): the same
classes the in-memory function infers. ``sample_weight`` (partitioned like the
test arguments), ``train_sample_weight`` (like the training arguments) and
``missing`` work as in memory (:ref:`def-weights`, :ref:`def-missing`): the
row layer is row-local, so every partition applies it to its own rows, and
the class discovery sees the rows it keeps.

This module needs the ``[dask]`` extra (``dask[array,dataframe]``,
``distributed``); ``import biasamp`` never imports it, and Dask is imported
only when one of these functions is called.
"""

from __future__ import annotations

import contextvars
import copy
import inspect
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from biasamp._core.deprecation import keyword_only_since, old_positional_order, renamed_arguments
from biasamp._core.labels import _sorted_classes
from biasamp._core.rows import check_missing, select_rows
from biasamp._engine.options import DEFAULT_LEVEL, DEFAULT_N_BOOT
from biasamp._families import REGISTRY
from biasamp.accumulators import (
    _declaration,
    accumulator_for,
    bind,
    declared_options,
    named_doc,
    named_signature,
    update_parameters,
)
from biasamp.cooccurrence import DirectionalBiasAmpResult, MALSResult
from biasamp.fairness import METRICS, FairnessResult
from biasamp.multiattribute._metrics import _MULTI_RENAMES, MultiBiasAmpResult

if TYPE_CHECKING:
    from biasamp._family import Family

__all__ = [
    "bias_amp_directional",
    "bias_amp_mals",
    "bootstrap",
    "df_bias_amplification",
    "dpa",
    "fairness_metrics",
    "function_for",
    "leakage_amplification",
    "multi_bias_amp",
    "scan",
    "partitions",
    "tree_merge",
]


# --------------------------------------------------------------------------- #
# partitions and reduction
# --------------------------------------------------------------------------- #
def _require_dask():
    try:
        import dask
        import dask.array  # noqa: F401
    except ImportError as exc:  # pragma: no cover - exercised without the extra
        raise ImportError(
            "biasamp.dask needs Dask: pip install 'biasamp[dask]' (dask[array,dataframe], distributed)"
        ) from exc


def _kind(x: Any) -> str | None:
    """``"array"``, ``"frame"`` (DataFrame/Series) or None for a non-Dask object."""
    import dask.array as da

    if isinstance(x, da.Array):
        return "array"
    try:
        import dask.dataframe as dd
    except ImportError:  # pragma: no cover - dask without the dataframe extra
        return None
    if isinstance(x, (dd.DataFrame, dd.Series)):
        return "frame"
    return None


def partitions(**arguments: Any) -> dict[str, list]:
    """Split aligned Dask arguments into lists of per-partition ``Delayed`` objects.

    ``None`` arguments are skipped. All given arguments must have the same
    number of row partitions (DataFrames: prefer one ``map_partitions`` over
    them all, as the metric functions do, since the optimizer may fuse the
    partitions of a narrow column selection); Dask arrays whose row chunks differ are
    rechunked to the first array's chunks, and 2-D arrays to a single chunk
    across columns.

    Parameters
    ----------
    **arguments : dask.array.Array, dask.dataframe.DataFrame or Series
        Named label arguments (the names appear in error messages).

    Returns
    -------
    dict of name -> list of dask.delayed.Delayed
        One entry per partition, in row order.

    Raises
    ------
    TypeError
        An argument that is not a Dask collection.
    ValueError
        A >2-D array, arrays of different lengths, arguments with different
        numbers of partitions, or row chunks that cannot be aligned (unknown
        chunk sizes).
    """
    given = {k: v for k, v in arguments.items() if v is not None}
    _check_kinds(given)
    ref_chunks = ref_name = None
    out: dict[str, list] = {}
    for name, x in given.items():
        if _kind(x) == "array":
            if x.ndim == 2 and len(x.chunks[1]) > 1:
                x = x.rechunk({1: -1})
            if ref_chunks is None:
                ref_chunks, ref_name = x.chunks[0], name
            elif x.chunks[0] != ref_chunks:
                n_ref, n_x = sum(ref_chunks), sum(x.chunks[0])
                if not (np.isnan(n_ref) or np.isnan(n_x)) and n_ref != n_x:
                    raise ValueError(f"length mismatch: {ref_name} has {int(n_ref)}, {name} has {int(n_x)} rows")
                if any(np.isnan(c) for c in (*ref_chunks, *x.chunks[0])):
                    raise ValueError(f"{name} has row chunks {x.chunks[0]} that cannot be aligned with {ref_chunks}")
                x = x.rechunk({0: ref_chunks})
            parts = x.to_delayed().ravel().tolist()
        else:
            parts = list(x.to_delayed())
        out[name] = parts
    lengths = {name: len(p) for name, p in out.items()}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{k} has {n}" for k, n in lengths.items())
        raise ValueError(f"arguments must be split into the same row partitions: {desc} partitions")
    return out


def _merge_all(*accs):
    accs = [a.iloc[0] if isinstance(a, pd.Series) else a for a in accs]
    out = accs[0].copy()
    for acc in accs[1:]:
        out.merge(acc)
    return out


def tree_merge(parts: Sequence, split_every: int = 8):
    """Merge ``Delayed`` accumulators in a tree of fan-in ``split_every``; returns one ``Delayed``.

    Parameters
    ----------
    parts : sequence of dask.delayed.Delayed
        Accumulators (any of :mod:`biasamp.accumulators`), one per partition.
    split_every : int, default 8
        How many accumulators one task merges.

    Returns
    -------
    dask.delayed.Delayed
        The merged accumulator; ``.compute()`` it (on any scheduler).
    """
    import dask

    if isinstance(split_every, bool) or not isinstance(split_every, (int, np.integer)) or split_every < 2:
        raise ValueError(f"split_every must be an integer >= 2, got {split_every!r}")
    level = list(parts)
    if not level:
        raise ValueError("nothing to merge: no partition")
    if len(level) == 1:
        return dask.delayed(_merge_all, pure=True)(level[0])
    while len(level) > 1:
        level = [dask.delayed(_merge_all, pure=True)(*level[i: i + split_every])
                 for i in range(0, len(level), split_every)]
    return level[0]


def _in_stream(template, number: int):
    """A copy of ``template`` whose bootstrap row ids are those of partition ``number``."""
    out = template.copy()
    out.stream = int(number)
    return out


def _frame_task(func, template, names, *parts, partition_info=None):
    """One partition of aligned DataFrames/Series -> a one-element object Series holding its accumulator."""
    number = partition_info["number"] if partition_info else 0
    # built from a list: assigning a dict (a partition's distinct values) to an element would store it as a Series
    return pd.Series([func(_in_stream(template, number), **dict(zip(names, parts)))], dtype=object)


# The streamed bootstrap of :func:`bootstrap`: while it runs, the metric functions
# below build accumulators with replicate tables and return the merged accumulator.
_BOOT: contextvars.ContextVar = contextvars.ContextVar("biasamp_dask_bootstrap", default=None)


def _boot_options() -> dict:
    opts = _BOOT.get()
    return {} if opts is None else {"n_boot": opts["n_boot"], "random_state": opts["random_state"]}


def _finish(acc):
    return acc if _BOOT.get() is not None else acc.compute()


def _check_kinds(arguments: dict[str, Any]) -> dict[str, str]:
    """``"array"``/``"frame"`` per non-None argument; TypeError for non-Dask objects or a mix of kinds."""
    _require_dask()
    kinds: dict[str, str] = {}
    for name, x in arguments.items():
        if x is None:
            continue
        kind = _kind(x)
        if kind is None:
            raise TypeError(
                f"{name} must be a dask array or a dask DataFrame/Series, got {type(x).__name__} "
                "(use the functions of biasamp itself for in-memory data)"
            )
        kinds[name] = kind
        if kinds[name] == "array" and x.ndim not in (1, 2):
            raise ValueError(f"{name} must be 1-D or 2-D, got a {x.ndim}-D dask array")
    if len(set(kinds.values())) > 1:
        raise TypeError(
            "mix of dask arrays and dask DataFrames/Series "
            f"({', '.join(f'{k}: {v}' for k, v in kinds.items())}): pass all of one kind, e.g. with "
            "dask.dataframe.from_dask_array or .to_dask_array(lengths=True)"
        )
    return kinds


class _PartitionError(Exception):
    """The error of one partition's task, carried to the driver (:func:`_computed`) to be told with global rows."""

    def __init__(self, number: int, names: tuple, error: Exception) -> None:
        super().__init__(number, names, error)
        self.number, self.names, self.error = number, names, error


class _Located:
    """``func(template, **parts)`` whose ValueError/TypeError becomes a :class:`_PartitionError` (partition, set)."""

    def __init__(self, func: Any, names: tuple) -> None:
        self.func, self.names = func, names

    def __call__(self, template: Any, **parts: Any) -> Any:
        try:
            return self.func(template, **parts)
        except (ValueError, TypeError) as exc:
            raise _PartitionError(int(template.stream), self.names, exc) from None


def _count_partitions(func, template, arguments: dict[str, Any], sets: dict | None = None) -> list:
    """``func(template.copy(), **partition)`` for every row partition of the arguments, as ``Delayed``.

    Dask arrays go through :func:`partitions` (rechunked to common row chunks);
    DataFrames/Series through one ``dask.dataframe.map_partitions`` over all
    of them, so that columns of one dataset are read once and stay aligned
    (the optimizer may fuse partitions of narrow column selections). A
    partition's ValueError/TypeError reaches :func:`_computed` with its
    partition, which tells it with the rows counted over every partition;
    ``sets`` (by the argument names) records what :func:`_computed` needs.
    """
    import dask

    given = {k: v for k, v in arguments.items() if v is not None}
    kinds = _check_kinds(given)
    names = tuple(given)
    if sets is not None:
        sets[names] = (func, template, given)
    located = _Located(func, names)
    if "array" in kinds.values():
        parts = partitions(**given)
        tmpl = dask.delayed(template, pure=True)
        n = len(next(iter(parts.values())))
        return [dask.delayed(located, pure=True)(dask.delayed(_in_stream, pure=True)(tmpl, i),
                                                 **{k: parts[k][i] for k in parts}) for i in range(n)]
    import dask.dataframe as dd

    nparts = {k: x.npartitions for k, x in given.items()}
    if len(set(nparts.values())) > 1:
        desc = ", ".join(f"{k} has {n}" for k, n in nparts.items())
        raise ValueError(f"arguments must be split into the same row partitions: {desc} partitions")
    out = dd.map_partitions(_frame_task, located, template, names, *given.values(),
                            meta=pd.Series([], dtype=object), align_dataframes=False, enforce_metadata=False)
    return list(out.to_delayed())


def _computed(sets: dict, *objs: Any) -> tuple:
    """``dask.compute(*objs)``; a partition's error is raised as it is, its row numbers counted from the first
    row of the first partition (the rows before the partition added), as the in-memory function names them."""
    import dask

    try:
        return dask.compute(*objs)
    except _PartitionError as exc:
        raise _globally(exc, *sets[exc.names]) from None


def _globally(exc: _PartitionError, func: Any, template: Any, given: dict[str, Any]) -> Exception:
    """The error of partition ``exc.number`` again, from a rerun of its task with the rows before it as offset."""
    import dask

    from biasamp._core.labels import row_offset

    i = exc.number
    first = next(iter(given.values()))
    if _kind(first) == "array":
        parts = partitions(**given)
        data = dict(zip(parts, dask.compute(*(parts[k][i] for k in parts))))
        before = sum(len(p) for p in dask.compute(*parts[next(iter(parts))][:i]))
    else:
        data = dict(zip(given, dask.compute(*(x.get_partition(i) for x in given.values()))))
        before = int(first.partitions[:i].map_partitions(len).compute().sum()) if i else 0
    with row_offset(before):
        try:
            func(_in_stream(template, i), **data)
        except (ValueError, TypeError) as again:
            return again
    return exc.error  # pragma: no cover - the task failed in the worker only


# --------------------------------------------------------------------------- #
# class discovery (one pass over the ground-truth columns)
# --------------------------------------------------------------------------- #
def _unique(part: Any) -> np.ndarray:
    arr = part.to_numpy() if isinstance(part, (pd.Series, pd.DataFrame)) else np.asarray(part)
    return pd.unique(arr.ravel()) if arr.ndim == 1 else np.empty(0)


def _unique_rows(part: Any) -> list:
    frame = part if isinstance(part, pd.DataFrame) else pd.DataFrame(np.asarray(part))
    return list(frame.drop_duplicates().itertuples(index=False, name=None))


def _width_classes(x: Any) -> list | None:
    """Class names of a 2-D argument without reading it (DataFrame columns, or ``0..K-1``), else None."""
    if _kind(x) == "frame":
        import dask.dataframe as dd

        return list(x.columns) if isinstance(x, dd.DataFrame) else None
    if x.ndim == 2:
        if np.isnan(x.shape[1]):
            raise ValueError("a 2-D dask array with an unknown number of columns cannot be encoded")
        return list(range(int(x.shape[1])))
    return None


def _classes_from_uniques(uniques: Sequence[np.ndarray]) -> list:
    """The class list :func:`biasamp.labels.encode_labels` infers from 1-D truths with these values."""
    arrays = [np.asarray(u) for u in uniques if len(u)]
    if arrays and all(a.dtype.kind in "iu" for a in arrays):
        return sorted({int(v) for a in arrays for v in a.tolist()})
    if not arrays:
        return []
    return _sorted_classes(np.concatenate([a.astype(object) for a in arrays]))


def _discover(requests: dict[str, tuple[str, list[Any]]]) -> dict[str, list | None]:
    """Find class lists in one Dask pass.

    ``requests`` maps a key to ``(how, collections)``: ``how="labels"`` gives
    the classes of label arguments (2-D: column names; 1-D: sorted distinct
    values), ``how="rows"`` the sorted distinct rows of a multi-column
    argument.
    """
    import dask

    out: dict[str, list | None] = {}  # None: a 2-D argument whose width names no class
    pending: dict[str, tuple[str, list]] = {}
    for key, (how, xs) in requests.items():
        xs = [x for x in xs if x is not None]
        if how == "labels":
            if any(x.ndim == 2 for x in xs):  # indicator matrices: DataFrame columns first, else 0..K-1
                frames = [x for x in xs if _kind(x) == "frame"]
                out[key] = next((c for c in map(_width_classes, frames + xs) if c is not None), None)
                continue
            delayed = [dask.delayed(_unique, pure=True)(p) for x in xs for p in _flat_parts(x)]
        else:
            delayed = [dask.delayed(_unique_rows, pure=True)(p) for x in xs for p in _flat_parts(x)]
        pending[key] = (how, delayed)
    if pending:
        computed = dask.compute({k: d for k, (_, d) in pending.items()})[0]
        for key, (how, _) in pending.items():
            if how == "labels":
                out[key] = _classes_from_uniques(computed[key])
            else:
                out[key] = _sorted_rows(computed[key])
    return out


def _sorted_rows(parts: list[list]) -> list:
    """The distinct rows of the partitions' row lists, sorted (values that do not compare: order of appearance)."""
    seen = list(dict.fromkeys(row for part in parts for row in part))
    try:
        return sorted(seen)
    except TypeError:
        return seen


class _RowSelector:
    """What :func:`_selected_uniques` needs per partition (a picklable stand-in for an accumulator template)."""

    def __init__(self, missing: str, labels: dict[str, str], weight: str | None, rows: frozenset = frozenset()) -> None:
        self.missing, self.labels, self.weight, self.stream = missing, labels, weight, 0
        self.rows = rows  # the group arguments: their distinct rows, each column's missing value its own

    def copy(self) -> _RowSelector:
        return copy.copy(self)  # its own partition number (``stream``)


def _selected_uniques(selector: _RowSelector, **parts: Any) -> dict[str, np.ndarray | list]:
    """Distinct values of the 1-D label arguments of one partition, on the rows the row layer keeps (of a group
    argument of several columns: its distinct rows, a list of tuples)."""
    weights = parts.pop(selector.weight, None) if selector.weight else None
    kept, _, _ = select_rows(parts, missing=selector.missing, sample_weight=weights,
                             group_args=tuple(k for k in parts if k in ("attr", "attr_train")),
                             group_columns=bool(selector.rows), weight_name=selector.weight or "sample_weight")
    return {key: _unique_rows(kept[name]) if key in selector.rows and np.ndim(kept[name]) == 2 else _unique(kept[name])
            for name, key in selector.labels.items() if kept.get(name) is not None}


def _discover_selected(groups: list[tuple[dict[str, Any], str | None]], labels: dict[str, str],
                       missing: str, rows: frozenset = frozenset()) -> dict[str, list | None]:
    """Classes of the 1-D label arguments after the row layer (weights, ``missing``), in one Dask pass.

    ``groups`` holds the row-aligned argument sets (test, training) with the
    name of their weights; ``labels`` maps an argument name to the class
    list it feeds (``"attr"`` or ``"task"``). 2-D arguments give their
    columns, as in :func:`_discover`, but for the group lists named in
    ``rows``: their distinct rows, where a column's missing value is dropped or
    its own ``"missing"`` as the row layer reads it (the group families).
    """

    out: dict[str, list | None] = {}  # None: a 2-D argument whose width names no class
    for key in set(labels.values()) - rows:
        xs = [args[n] for args, _ in groups for n, k in labels.items() if k == key and args.get(n) is not None]
        if any(x.ndim == 2 for x in xs):  # indicator matrices: DataFrame columns first, else 0..K-1
            frames = [x for x in xs if _kind(x) == "frame"]
            out[key] = next((c for c in map(_width_classes, frames + xs) if c is not None), None)
    delayed: list = []
    sets: dict = {}
    for args, weight in groups:
        mine = {n: k for n, k in labels.items() if k not in out and args.get(n) is not None}
        if mine:
            delayed += _count_partitions(_selected_uniques, _RowSelector(missing, mine, weight, rows), args, sets)
    uniques: dict[str, list] = {}
    for part in (_computed(sets, delayed)[0] if delayed else []):
        part = part.iloc[0] if isinstance(part, pd.Series) else part  # a DataFrame partition's one-element Series
        for key, values in part.items():
            uniques.setdefault(key, []).append(values)
    out.update({key: _sorted_rows(values) if values and isinstance(values[0], list) else _classes_from_uniques(values)
                for key, values in uniques.items()})
    return out


def _flat_parts(x: Any) -> list:
    parts = x.to_delayed()
    return parts.ravel().tolist() if hasattr(parts, "ravel") else list(parts)


def _groups_request(sensitive_features: Any) -> tuple[str, list]:
    """How to discover the groups of ``sensitive_features`` (one column: labels; several: rows)."""
    import dask.dataframe as dd

    if isinstance(sensitive_features, dd.DataFrame):
        if len(sensitive_features.columns) == 1:
            return "labels", [sensitive_features[sensitive_features.columns[0]]]
        return "rows", [sensitive_features]
    if _kind(sensitive_features) == "array" and sensitive_features.ndim == 2:
        return "rows", [sensitive_features]
    return "labels", [sensitive_features]


# --------------------------------------------------------------------------- #
# the generic body: any registered family, from its declaration
# --------------------------------------------------------------------------- #
_TRAIN = ("attr_train", "task_train")
_WEIGHTS = ("sample_weight", "train_sample_weight")


class _RoleCounter:
    """One partition's count: the accumulator's ``method`` on the partition's arguments, given by label role."""

    def __init__(self, method: str, roles: dict[str, str]) -> None:
        self.method, self.roles = method, roles

    def __call__(self, template: Any, **parts: Any) -> Any:
        acc = template.copy()  # the template task is shared (pure) by the partitions of every argument set
        getattr(acc, self.method)({self.roles[name]: part for name, part in parts.items()})
        return acc


def _count_set(method: str, template: Any, arguments: dict[str, tuple[str, Any]], sets: dict) -> list:
    """``template.<method>(roles)`` on every row partition of one argument set, as ``Delayed`` (``sets``: as
    :func:`_count_partitions`)."""
    roles = {name: role for name, (role, _) in arguments.items()}
    return _count_partitions(_RoleCounter(method, roles), template, {n: x for n, (_, x) in arguments.items()}, sets)


def _require(**arguments: Any) -> None:
    """TypeError for a required Dask argument given as None."""
    for name, x in arguments.items():
        if x is None:
            raise TypeError(f"{name} is None; expected a dask array or a dask DataFrame/Series")


def _roles(**arguments: Any) -> dict[str, tuple[str, Any]]:
    """Arguments named by their label role (the co-occurrence and multi-attribute functions)."""
    return {name: (name, x) for name, x in arguments.items()}


def _find_classes(decl: Any, test: dict, train: dict, classes: dict[str, Any], missing: str) -> dict[str, Any]:
    """The class lists not given, found in one Dask pass over the roles the family declares for them."""
    out = dict(classes)
    need = {k: c for k, c in decl.classes.items() if out.get(k) is None}
    by_role = dict((*test.values(), *train.values()))
    if need:
        filtered = missing != "raise" or any(r in _WEIGHTS for r in by_role)
        if filtered:  # the classes of the rows the row layer keeps
            labels = {r: k for k, c in need.items() for r in c.roles}
            sets: list[tuple[dict[str, Any], str | None]] = [(dict(test.values()), "sample_weight")]
            if train:
                sets.append((dict(train.values()), "train_sample_weight"))
            out.update(_discover_selected(sets, labels, missing, frozenset(k for k, c in need.items() if c.groups)))
        else:
            requests = {}
            for k, c in need.items():
                xs = [by_role.get(r) for r in c.roles]
                requests[k] = _groups_request(xs[0]) if c.groups else ("labels", xs)
            out.update(_discover(requests))
    for k, c in decl.classes.items():
        if c.groups and len(out[k]) < 2:
            raise ValueError(f"sensitive_features has a single group {out[k][0]!r}; group fairness metrics compare "
                             "at least two groups")
    return out


def _declared(name: str) -> str:
    """The family whose function is called ``name`` and declares a Dask form (``Named.dask``)."""
    (key,) = [f.key for f in REGISTRY if f.name == name and f.named is not None and f.named.dask]
    return key


def _check_options(name: str, options: dict[str, Any]) -> dict[str, Any]:
    """The options a hand-written function of this module received through ``**options``, checked before any
    partition is read: a keyword it does not take is Python's ``TypeError``, a bad value the declaration's own
    error (as the in-memory function raises it)."""
    form = globals()[name]
    unknown = sorted(set(options) - set(form.declared_options))
    if unknown:
        raise TypeError(f"{name}() got an unexpected keyword argument {unknown[0]!r}")
    REGISTRY[_declared(name)].options_of(options)
    return options


def _family_on_dask(key: str, arguments: dict[str, tuple[str, Any]], classes: dict[str, Any],
                    options: dict[str, Any], split_every: int) -> Any:
    """The registered family ``key`` on Dask collections: the one body of every function above.

    ``arguments`` maps an argument name (used in messages) to its label role
    and its Dask collection (or None); ``classes`` the family's class-list
    keys to the lists given (None: found in one pass); ``options`` are the
    accumulator's. Every partition is counted by an accumulator of the family
    (the training partitions too), the accumulators are merged in a tree, and
    the metric is computed once; a family with a pre-pass (the multi-attribute
    combinations) first runs it the same way over the training rows (else the
    test rows) and ends it on the merged pre-pass.
    """

    decl = _declaration(key)
    missing = check_missing(options.get("missing", "raise"))
    given = {name: (role, x) for name, (role, x) in arguments.items() if x is not None}
    train = {n: rx for n, rx in given.items() if rx[0] in (*_TRAIN, "train_sample_weight")}
    test = {n: rx for n, rx in given.items() if n not in train}
    has_train = [r for r, _ in train.values() if r in _TRAIN]
    if len(has_train) == 1:
        raise ValueError("give both attr_train and task_train, or neither")
    if train and not has_train:
        raise ValueError("train_sample_weight weights the training rows, but attr_train/task_train were not "
                         "given (without a training set the test rows and sample_weight stand in for it)")
    _check_kinds({n: x for n, (_, x) in test.items()}), _check_kinds({n: x for n, (_, x) in train.items()})
    found = _find_classes(decl, test, train, classes, missing)
    template: Any = accumulator_for(key).for_family(key, found, **options, **_boot_options())
    if decl.prepass is not None and template.phase == "collect":  # the pre-pass, over the training rows if any
        source = train or test
        if missing == "raise" and not any(r in _WEIGHTS for r, _ in source.values()):
            source = {n: rx for n, rx in source.items() if rx[0] in decl.prepass.reads}  # only what it reads
        sets: dict = {}
        (template,) = _computed(sets, tree_merge(_count_set("prepass", template, source, sets), split_every))
        template.end_prepass()
    sets = {}
    parts = _count_set("update_roles", template, test, sets)
    if train:
        parts += _count_set("update_roles", template, train, sets)
    (acc,) = _computed(sets, tree_merge(parts, split_every))
    return _finish(acc)


# --------------------------------------------------------------------------- #
# co-occurrence
# --------------------------------------------------------------------------- #
@declared_options("dask")
def bias_amp_directional(
    attr: Any,
    task: Any,
    *,
    attr_pred: Any = None,
    task_pred: Any = None,
    attr_train: Any = None,
    task_train: Any = None,
    attr_classes: Sequence | None = None,
    task_classes: Sequence | None = None,
    split_every: int = 8,
    sample_weight: Any = None,
    train_sample_weight: Any = None,
    **options: Any,
) -> DirectionalBiasAmpResult:
    r"""Directional bias amplification BiasAmp→ of Dask collections (Wang & Russakovsky 2021).

    .. math::

        \text{BiasAmp}_{\rightarrow} = \frac{1}{|\mathcal{A}||\mathcal{T}|}
            \sum_{a, t} y_{at}\,\Delta_{at}

    exactly as :func:`biasamp.bias_amp_directional`, computed by counting
    every partition and merging the count tables in a tree.

    Parameters
    ----------
    attr, task : dask array or dask DataFrame/Series
        Test ground truth of A and T, split into the same row partitions.
    attr_pred, task_pred : dask collection, optional
        Predictions (hard or probabilities), partitioned like ``attr``.
    attr_train, task_train : dask collection, optional
        Training ground truth (give both or neither), partitioned like each
        other (not necessarily like the test set). Without them the signs are
        cross-fitted unless ``cross_fit=False``, over one split of all the
        rows (the in-memory function's, whatever the partitioning).
    attr_classes, task_classes : sequence, optional
        Class lists; when omitted they are found by one pass over the
        ground truth (the classes the in-memory function infers).
    split_every : int, default 8
        Fan-in of the merge tree.
    sample_weight : dask collection, optional
        One non-negative weight per test row, partitioned like ``attr``
        (:ref:`def-weights`).
    train_sample_weight : dask collection, optional
        One weight per training row, partitioned like ``attr_train``.
    {options}

    Returns
    -------
    DirectionalBiasAmpResult
        Identical to the in-memory result.

    Raises
    ------
    TypeError
        A non-Dask argument.
    ValueError
        Misaligned partitions, bad labels (see :mod:`biasamp.labels`), no
        predictions, or every pair undefined.

    See Also
    --------
    biasamp.bias_amp_directional : the in-memory function and the definitions.
    biasamp.accumulators.CooccurrenceAccumulator : the per-partition counter.

    References
    ----------
    .. [1] A. Wang, O. Russakovsky. "Directional Bias Amplification". ICML 2021, Eq. 2.

    Examples
    --------
    >>> import numpy as np, pytest
    >>> da = pytest.importorskip("dask.array")  # the [dask] extra
    >>> import biasamp, biasamp.dask
    >>> attr = np.repeat([1, 2], [90, 30])
    >>> task = np.concatenate([np.repeat([0, 1], [60, 30]), np.repeat([0, 1], [10, 20])])
    >>> task_pred = (attr == 2).astype(int)
    >>> res = biasamp.dask.bias_amp_directional(
    ...     da.from_array(attr, chunks=40), da.from_array(task, chunks=40),
    ...     task_pred=da.from_array(task_pred, chunks=40))
    >>> round(res.a_to_t.value, 4)
    0.3333
    """
    return _family_on_dask(
        _declared("bias_amp_directional"),
        _roles(attr=attr, task=task, attr_pred=attr_pred, task_pred=task_pred, attr_train=attr_train,
               task_train=task_train, sample_weight=sample_weight, train_sample_weight=train_sample_weight),
        {"attr": attr_classes, "task": task_classes}, _check_options("bias_amp_directional", options), split_every)


@declared_options("dask")
@old_positional_order("0.3.0", "0.4.0", ("attr_train", "task_train", "attr_pred", "task_pred"), fill=(None, None))
def bias_amp_mals(
    attr: Any = None,
    task: Any = None,
    *,
    attr_pred: Any,
    task_pred: Any,
    attr_train: Any = None,
    task_train: Any = None,
    attr_classes: Sequence | None = None,
    task_classes: Sequence | None = None,
    split_every: int = 8,
    sample_weight: Any = None,
    train_sample_weight: Any = None,
    **options: Any,
) -> MALSResult:
    r"""BiasAmp_MALS of Dask collections (Zhao et al. 2017).

    .. math::

        \text{BiasAmp}_{\text{MALS}} = \frac{1}{|\mathcal{T}|} \sum_{a, t}
            \mathbb{1}\Big[b_{\text{train}}(a,t) > \tfrac{1}{|\mathcal{A}|}\Big]
            \big(b_{\text{pred}}(a,t) - b_{\text{train}}(a,t)\big)

    exactly as :func:`biasamp.bias_amp_mals`.

    Parameters
    ----------
    attr, task : dask collection, optional
        Test ground truth, partitioned like the predictions: without a
        training set it stands in for one (as in :func:`biasamp.bias_amp_mals`).
    attr_pred, task_pred : dask collection
        Test predictions, in the same row partitions (as each other).
    attr_train, task_train : dask collection, optional
        Training ground truth, in the same row partitions. Without it
        (``attr``/``task`` stand in for it, weighted by ``sample_weight``)
        the indicator is cross-fitted unless ``cross_fit=False``, over one
        split of all the rows (the in-memory function's, whatever the
        partitioning).
    attr_classes, task_classes : sequence, optional
        Class lists; found by one pass over the ground truth when omitted.
    split_every : int, default 8
        Fan-in of the merge tree.
    sample_weight : dask collection, optional
        One weight per test row (the rows of the predictions), partitioned
        like ``attr_pred`` (:ref:`def-weights`).
    train_sample_weight : dask collection, optional
        One weight per training row, partitioned like ``attr_train``.
    {options}

    Returns
    -------
    MALSResult

    See Also
    --------
    biasamp.bias_amp_mals : the in-memory function and the definitions.

    References
    ----------
    .. [1] J. Zhao et al. "Men Also Like Shopping". EMNLP 2017.

    Examples
    --------
    >>> import numpy as np, pytest
    >>> da = pytest.importorskip("dask.array")  # the [dask] extra
    >>> import biasamp.dask
    >>> attr = da.from_array(np.array([0, 0, 0, 0, 1, 0, 1]), chunks=3)
    >>> task = da.from_array(np.array([[1], [1], [1], [1], [1], [0], [0]]), chunks=3)
    >>> task_pred = da.from_array(np.array([[1], [1], [1], [1], [0], [0], [0]]), chunks=3)
    >>> round(biasamp.dask.bias_amp_mals(attr_pred=attr, task_pred=task_pred, attr_train=attr,
    ...                                  task_train=task).value, 4)
    0.2
    """
    from biasamp.cooccurrence._metrics import mals_cross_fit

    _check_options("bias_amp_mals", options)
    no_train = attr_train is None
    if mals_cross_fit(attr, task, attr_train, task_train, train_sample_weight, options.get("cross_fit")):
        # the test rows stand in for the training rows, and are split
        arguments = {"attr_train": ("attr", attr), "task_train": ("task", task),
                     **_roles(attr_pred=attr_pred, task_pred=task_pred, sample_weight=sample_weight)}
        options["cross_fit"] = True
    else:
        if no_train:  # the plug-in: the test rows, with their weights, are the training rows
            attr_train, task_train, train_sample_weight = attr, task, sample_weight
        arguments = _roles(attr_train=attr_train, task_train=task_train, attr_pred=attr_pred, task_pred=task_pred,
                           sample_weight=sample_weight, train_sample_weight=train_sample_weight)
        options["cross_fit"] = False  # (None: a training set, as bias_amp_mals reads it)
    return _family_on_dask(_declared("bias_amp_mals"), arguments, {"attr": attr_classes, "task": task_classes},
                           options, split_every)


# --------------------------------------------------------------------------- #
# fairness
# --------------------------------------------------------------------------- #
@declared_options("dask", own=("metrics",))
def fairness_metrics(
    y_true: Any,
    y_pred: Any,
    *,
    sensitive_features: Any,
    metrics: Sequence[str] = METRICS,
    classes: Sequence | None = None,
    groups: Sequence | None = None,
    split_every: int = 8,
    sample_weight: Any = None,
    **options: Any,
) -> FairnessResult:
    r"""The seven group fairness metrics of Qian et al. (2021) on Dask collections.

    Per class (one-vs-rest) and group, :math:`PPR_g = (TP+FP)_g/n_g`,
    :math:`TPR_g = TP_g/P_g`, :math:`FPR_g = FP_g/N_g`; e.g.

    .. math::

        \mathrm{DP} = \max_g PPR_g - \min_g PPR_g

    for the positive class of a binary task or averaged over classes, exactly as
    :func:`biasamp.fairness_metrics`.

    Parameters
    ----------
    y_true, y_pred : dask collection
        Ground truth and predictions, in the same row partitions.
    sensitive_features : dask array, Series or DataFrame
        Group of every row (several DataFrame columns: intersectional groups).
    metrics : sequence of str, default all seven
        The metrics computed.
    classes, groups : sequence, optional
        Found by one pass over ``y_true`` and ``sensitive_features`` when omitted.
    split_every : int, default 8
        Fan-in of the merge tree.
    sample_weight : dask collection, optional
        Non-negative weight of every row, in the same partitions.
    {options}

    Returns
    -------
    FairnessResult

    See Also
    --------
    biasamp.fairness_metrics : the in-memory function and the definitions.
    biasamp.accumulators.FairnessAccumulator : the per-partition counter.

    References
    ----------
    .. [1] S. Qian et al. "Are My Deep Learning Systems Fair? An Empirical
       Study of Fixed-Seed Training". NeurIPS 2021, Appendix A.

    Examples
    --------
    >>> import numpy as np, pytest
    >>> da = pytest.importorskip("dask.array")  # the [dask] extra
    >>> import biasamp.dask
    >>> y_true = np.repeat(["sport", "cook", "sport", "cook"], 100)
    >>> y_pred = np.repeat(["sport", "cook"] * 4, [80, 20, 10, 90, 60, 40, 70, 30])
    >>> gender = np.repeat(["female", "male"], 200)
    >>> res = biasamp.dask.fairness_metrics(da.from_array(y_true, chunks=150), da.from_array(y_pred, chunks=150),
    ...                                     sensitive_features=da.from_array(gender, chunks=150), average="macro")
    >>> round(100 * res.overall["BA"], 1)
    10.1
    """
    _require(y_true=y_true, y_pred=y_pred, sensitive_features=sensitive_features)
    return _family_on_dask(
        _declared("fairness_metrics"), _fairness_roles(y_true, y_pred, sensitive_features, sample_weight),
        {"task": classes, "attr": groups}, {"metrics": metrics, **_check_options("fairness_metrics", options)},
        split_every)


def _fairness_roles(y_true: Any, y_pred: Any, sensitive_features: Any, sample_weight: Any) -> dict:
    """The fairness functions' arguments by label role."""
    return {"y_true": ("task", y_true), "y_pred": ("task_pred", y_pred),
            "sensitive_features": ("attr", sensitive_features), "sample_weight": ("sample_weight", sample_weight)}


# --------------------------------------------------------------------------- #
# multi-attribute
# --------------------------------------------------------------------------- #
@declared_options("dask", own=("combinations",))
@renamed_arguments("0.2.0", {**_MULTI_RENAMES, "group_classes": "attr_classes", "attr_classes": "task_classes"})
def multi_bias_amp(
    attr: Any,
    task: Any,
    *,
    attr_pred: Any = None,
    task_pred: Any = None,
    attr_train: Any = None,
    task_train: Any = None,
    combinations: str | Sequence[Sequence] = "observed",
    attr_classes: Sequence | None = None,
    task_classes: Sequence | None = None,
    split_every: int = 8,
    sample_weight: Any = None,
    train_sample_weight: Any = None,
    **options: Any,
) -> MultiBiasAmpResult:
    r"""Multi_MALS and Multi→ (Zhao, Andrews & Xiang 2023) of Dask collections.

    .. math::

        b(m, g) = \frac{\#(m \subseteq S,\, g)}{\#(m \subseteq S)}, \qquad
        \text{Multi}_{\text{MALS}} = \frac{1}{|M|} \sum_{g, m} |\Delta_{gm}|

    exactly as :func:`biasamp.multi_bias_amp` (g: a class of ``attr``, the
    paper's group; m: a combination of ``task`` labels, the paper's
    attributes). With ``combinations`` ``"observed"`` or ``"all"`` the data is
    read twice: pass 1 collects the distinct training task sets with their
    multiplicities (merged in a tree), the combinations M are chosen from
    them, pass 2 counts M. With a list of combinations, one pass.

    Parameters
    ----------
    attr, task : dask collection
        Test ground truth (one-hot protected attribute, multi-hot task
        labels), in the same row partitions.
    attr_pred, task_pred : dask collection, optional
        Hard predictions, partitioned like ``attr``.
    attr_train, task_train : dask collection, optional
        Training ground truth (both or neither). Without it ``y_gm`` and
        Multi_MALS's indicator are cross-fitted unless ``cross_fit=False``,
        over one split of all the rows (the in-memory function's, whatever
        the partitioning).
    combinations : {"observed", "all"} or list of tuples, default "observed"
        The candidate task combinations (a list: fixed), as in
        :func:`biasamp.multi_bias_amp`.
    attr_classes, task_classes : sequence, optional
        Found by one pass over the ground truth when omitted.
    split_every : int, default 8
        Fan-in of the merge trees.
    sample_weight : dask collection, optional
        One weight per test row, partitioned like ``attr`` (:ref:`def-weights`).
    train_sample_weight : dask collection, optional
        One weight per training row, partitioned like ``attr_train``.
    {options}

    Returns
    -------
    MultiBiasAmpResult

    See Also
    --------
    biasamp.multi_bias_amp : the in-memory function and the definitions.
    biasamp.accumulators.MultiAttributeAccumulator : the per-partition counter.

    References
    ----------
    .. [1] D. Zhao, J. T. A. Andrews, A. Xiang. "Men Also Do Laundry:
       Multi-Attribute Bias Amplification". ICML 2023, Eq. 1-3.

    Examples
    --------
    >>> import numpy as np, pytest
    >>> da = pytest.importorskip("dask.array")  # the [dask] extra
    >>> import biasamp.dask
    >>> attr = da.from_array(np.array([0, 0, 0, 0, 1, 1, 1, 1]), chunks=3)
    >>> task = da.from_array(np.array([[1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1],
    ...                                [1, 1, 0], [1, 1, 0], [0, 0, 1], [0, 0, 0]]), chunks=3)
    >>> res = biasamp.dask.multi_bias_amp(attr, task, task_pred=task)
    >>> res.combinations, res.g_to_m.value
    (((0,), (1,), (2,), (0, 1)), 0.0)
    """
    options = {**_check_options("multi_bias_amp", options), "combinations": combinations}
    return _family_on_dask(
        _declared("multi_bias_amp"),
        _roles(attr=attr, task=task, attr_pred=attr_pred, task_pred=task_pred, attr_train=attr_train,
               task_train=task_train, sample_weight=sample_weight, train_sample_weight=train_sample_weight),
        {"attr": attr_classes, "task": task_classes}, options, split_every)


def bootstrap(metric: Any, *args: Any, n_boot: int = DEFAULT_N_BOOT, level: float = DEFAULT_LEVEL,
              ci_method: str = "auto",
              random_state: Any = None, p_adjust: str = "holm", **kwargs: Any):
    r"""Intervals and tests of no effect of a count-based metric on Dask collections (grouped Poisson bootstrap).

    The Dask counterpart of :func:`biasamp.bootstrap`. The multinomial
    bootstrap needs every distinct row of the evaluation set in one place;
    here every partition instead puts each of its rows in one of 1,000 groups
    by a hash of (partition, row, seed), counts the group tables alongside its
    count tables, the group tables are summed by the same tree reduction, and
    the replicates resample the groups (the accumulators'
    :meth:`~biasamp.accumulators.Accumulator.bootstrap`). The training
    statistics stay fixed, as in :func:`biasamp.bootstrap`.

    Parameters
    ----------
    metric : callable
        :func:`bias_amp_directional`, :func:`bias_amp_mals`,
        :func:`fairness_metrics` or :func:`multi_bias_amp` of this module (or
        the functions of the same name of :mod:`biasamp`).
    *args, **kwargs
        The metric's arguments (Dask collections).
    n_boot : int, default 1000
        Replicates (at least 2).
    level : float, default 0.95
    ci_method : {"auto", "percentile", "basic", "bca", "band"}, default "auto"
        As in :func:`biasamp.bootstrap` (``"bca"``: acceleration from the
        delete-one-group jackknife); ``"auto"`` uses the percentile interval
        for the smooth statistics, the max-t band for the others.
    random_state : None, int or numpy Generator
        Seed (give an int for results reproducible across runs).
    p_adjust : {"holm", "bh"}, default "holm"

    Returns
    -------
    BootstrapResult

    Raises
    ------
    TypeError
        An unsupported metric.
    ValueError
        Bad arguments (as the metric and :func:`biasamp.bootstrap` raise).

    Notes
    -----
    The Poisson bootstrap (Hanley & MacGibbon 2006; Chamandy et al. 2012)
    replaces the multinomial counts :math:`c^* \sim \mathrm{Mult}(n, 1/n)`
    by independent :math:`w_i \sim \mathrm{Poisson}(1)`; the two agree as
    :math:`n` grows. Here it is grouped: a group's multiplicity is
    :math:`\mathrm{Binomial}(G', 1/G') \approx \mathrm{Poisson}(1)` over the
    :math:`G'` non-empty groups, shared by the group's rows
    (docs/inference.md). Results depend on the partitioning (the row ids are
    partition-local), not on the scheduler or the number of workers.

    References
    ----------
    .. [1] N. Chamandy, O. Muralidharan, A. Najmi, S. Naidu. "Estimating
       uncertainty for massive data streams". Google technical report, 2012.

    Examples
    --------
    >>> import numpy as np, pytest
    >>> da = pytest.importorskip("dask.array")  # the [dask] extra
    >>> import biasamp.dask
    >>> rng = np.random.default_rng(0)
    >>> g, y = rng.integers(0, 2, 2000), rng.integers(0, 2, 2000)
    >>> res = biasamp.dask.bootstrap(biasamp.dask.fairness_metrics, da.from_array(y, chunks=500),
    ...                              da.from_array(y, chunks=500), sensitive_features=da.from_array(g, chunks=500),
    ...                              n_boot=200, random_state=0)
    >>> low, high = res.ci["DP"]
    >>> bool(low <= res.estimate["DP"] <= high), res.methods["DP"]
    (True, 'max-t band')
    """
    from biasamp._engine.options import BootstrapOptions

    # this module's Dask form of each registered family's function: the function of the same name
    own = {fam.name: globals()[fam.name] for fam in REGISTRY if fam.stream is not None and fam.name in globals()}
    family = REGISTRY.get(metric)
    func = own.get(family.name) if family is not None and metric is family.function else \
        next((f for f in own.values() if f is metric), None)
    if func is None:
        raise TypeError(
            f"biasamp.dask.bootstrap supports {', '.join(own)}, got {getattr(metric, '__name__', metric)!r}"
        )
    n_boot = BootstrapOptions(n_boot, level, ci_method, random_state, p_adjust).n_boot  # every option checked here
    if random_state is None:
        random_state = int(np.random.SeedSequence().generate_state(1)[0])  # one seed for every partition
    token = _BOOT.set({"n_boot": n_boot, "random_state": random_state})
    try:
        acc: Any = func(*args, **kwargs)  # with _BOOT set, the functions return their accumulators (_finish)
    finally:
        _BOOT.reset(token)
    return acc.bootstrap(level=level, ci_method=ci_method, p_adjust=p_adjust)


# --------------------------------------------------------------------------- #
# predictability: joblib's dask backend
# --------------------------------------------------------------------------- #
def _on_dask(func, args, kwargs):
    _require_dask()
    try:
        from distributed import get_client
    except ImportError as exc:  # pragma: no cover
        raise ImportError("running DPA iterations on Dask needs distributed: pip install 'biasamp[dask]'") from exc
    try:
        get_client()
    except ValueError:
        raise ValueError(
            "joblib's dask backend needs a dask.distributed Client: create one first, e.g. "
            "Client(LocalCluster()) or Client('scheduler-address')"
        ) from None
    import joblib

    config = getattr(joblib, "parallel_config", None) or joblib.parallel_backend
    kwargs = dict(kwargs)
    if kwargs.get("n_jobs") in (None, 1):
        kwargs["n_jobs"] = -1
    with config(backend="dask"):
        return func(*args, **kwargs)


def dpa(attr: Any, task: Any, **kwargs: Any):
    r"""DPA (Tokas, Nair & Kerner 2025) with its iterations run on a Dask cluster.

    .. math::

        \mathrm{DPA} = \frac{\Psi_M - \Psi_D}{\Psi_M + \Psi_D}

    :func:`biasamp.dpa` inside ``joblib.parallel_config(backend="dask")``:
    the ``n_iter`` attacker fits are dispatched to the workers of the active
    ``dask.distributed.Client``. The seeds of every iteration are drawn from
    ``random_state`` before dispatch, so the result equals the local run.

    Parameters
    ----------
    attr, task : labels (in memory)
        As in :func:`biasamp.dpa` (the attackers need every row; compute Dask
        collections first).
    **kwargs
        Every keyword of :func:`biasamp.dpa`. ``n_jobs`` defaults to ``-1``
        (all workers).

    Returns
    -------
    DPAResult

    Raises
    ------
    ValueError
        No ``dask.distributed.Client`` is active.

    See Also
    --------
    biasamp.dpa : the definitions.

    References
    ----------
    .. [1] B. Tokas, R. Nair, H. Kerner. "DPA: A one-stop metric to measure
       bias amplification in classification datasets". NeurIPS 2025, Eq. 1-6.

    Examples
    --------
    >>> import pytest
    >>> distributed = pytest.importorskip("distributed")  # the [dask] extra
    >>> import biasamp, biasamp.dask
    >>> from biasamp.datasets import make_amplification_demo
    >>> d = make_amplification_demo()
    >>> kw = dict(attr_pred=d.attr_pred, task_pred=d.task_pred, attacker="tabular", n_iter=4, random_state=0)
    >>> with distributed.Client(processes=False, n_workers=1, dashboard_address=None):  # doctest: +SKIP
    ...     on_dask = biasamp.dask.dpa(d.attr, d.task, **kw)
    >>> on_dask.a_to_t.value == biasamp.dpa(d.attr, d.task, **kw).a_to_t.value  # doctest: +SKIP
    True
    """
    from biasamp.predictability._metrics import dpa as _dpa

    return _on_dask(_dpa, (attr, task), kwargs)


@keyword_only_since("0.2.0", "task_pred")
def leakage_amplification(attr: Any, task: Any, *, task_pred: Any, **kwargs: Any):
    r"""Leakage amplification LA (Wang et al. 2019) with its iterations run on a Dask cluster.

    .. math::

        \mathrm{LA} = \lambda_M - \lambda_D

    :func:`biasamp.leakage_amplification` inside
    ``joblib.parallel_config(backend="dask")``; identical to the local run
    for the same ``random_state``.

    Parameters
    ----------
    attr, task : labels (in memory)
        As in :func:`biasamp.leakage_amplification`.
    task_pred : labels (in memory), keyword-only
        The model's task predictions, as in :func:`biasamp.leakage_amplification`.
    **kwargs
        Every keyword of :func:`biasamp.leakage_amplification`; ``n_jobs``
        defaults to ``-1``.

    Returns
    -------
    LeakageResult

    Raises
    ------
    ValueError
        No ``dask.distributed.Client`` is active.

    See Also
    --------
    biasamp.leakage_amplification : the definitions.

    References
    ----------
    .. [1] T. Wang et al. "Balanced Datasets Are Not Enough". ICCV 2019.

    Examples
    --------
    >>> import pytest
    >>> distributed = pytest.importorskip("distributed")  # the [dask] extra
    >>> import biasamp.dask
    >>> with distributed.Client(processes=False, n_workers=1, dashboard_address=None):  # doctest: +SKIP
    ...     res = biasamp.dask.leakage_amplification([0, 1] * 50, [0, 1] * 50, task_pred=[0, 1] * 50,
    ...                                              attacker="tabular", n_iter=3, random_state=0)
    """
    from biasamp.predictability._metrics import leakage_amplification as _la

    return _on_dask(_la, (attr, task), dict(kwargs, task_pred=task_pred))


# --------------------------------------------------------------------------- #
# the subgroup scan
# --------------------------------------------------------------------------- #
def _scan_part(acc: Any, **parts: Any) -> Any:
    """One partition of test rows into a copy of the scan's template (row ids: the rows' global positions)."""
    features = parts.pop("features")
    start = acc.partition_starts[acc.stream]
    rows = np.arange(start, start + len(features), dtype=np.int64)
    return acc.update(features, parts, row_ids=rows)


def _scan_train(acc: Any, **parts: Any) -> Any:
    return acc.update_train(parts)


def _scan_prepass(acc: Any, **parts: Any) -> Any:
    return acc.prepass(parts)


def scan(attr: Any, task: Any, *, features: Any, attr_pred: Any = None, task_pred: Any = None,
         attr_train: Any = None, task_train: Any = None, statistic: str = "A->T", max_order: int = 2,
         min_group_size: float = 100, level: float = DEFAULT_LEVEL, n_boot: int = DEFAULT_N_BOOT,
         random_state: Any = None,
         sample_weight: Any = None, train_sample_weight: Any = None, levels: Any = None,
         classes: dict | None = None, split_every: int = 8, **options: Any) -> Any:
    """The subgroup scan (:func:`biasamp.scan`) of Dask DataFrames/Series: the same result as in memory.

    Every partition is counted by a :class:`biasamp.ScanAccumulator`
    (its rows' bootstrap groups hashed from their global positions, so the
    groups are those of the in-memory scan), the accumulators are merged in a
    tree, and the band is computed once. The features' levels are fixed
    first: given (``levels``), or found by the in-memory rule on the feature
    columns (brought to the client, one pass); the family's class lists
    likewise (``classes``, or one pass over the ground truth).

    Parameters
    ----------
    attr, task, attr_pred, task_pred, attr_train, task_train, sample_weight, train_sample_weight
        As :func:`biasamp.scan`, as Dask Series (or DataFrames for
        multi-label tasks) partitioned like ``features``.
    features : dask.dataframe.DataFrame
        The columns whose values define the subgroups.
    statistic, max_order, min_group_size, level, n_boot, random_state, levels, **options
        As :func:`biasamp.scan`.
    classes : dict, optional
        The family's class lists (``{"attr": [...], "task": [...]}``).
    split_every : int, default 8
        Fan-in of the merge tree.

    Returns
    -------
    biasamp.ScanResult
    """
    import dask

    from biasamp.subgroups import ScanAccumulator, feature_levels
    from biasamp.subgroups._accumulator import statistic_of

    fam, spec = statistic_of(statistic)
    decl = _declaration(fam.key)
    test = {"attr": attr, "task": task, "attr_pred": attr_pred, "task_pred": task_pred,
            "sample_weight": sample_weight}
    train = {"attr_train": attr_train, "task_train": task_train, "train_sample_weight": train_sample_weight}
    missing = [r for r in spec.needs if test.get(r) is None]
    if missing:
        raise ValueError(f"statistic {statistic!r} needs {' and '.join(missing)}")
    if (attr_train is None) != (task_train is None):
        raise ValueError("give both attr_train and task_train, or neither")
    _check_kinds({"features": features, **test, **train})
    if levels is None:
        levels = feature_levels(features.compute())
    found = _find_classes(decl, {r: (r, x) for r, x in test.items() if x is not None},
                          {r: (r, x) for r, x in train.items() if x is not None}, dict(classes or {}),
                          check_missing(options.get("missing", "raise")))
    counts_train = attr_train is not None and decl.count_train is not None
    template = ScanAccumulator(statistic, found, levels, max_order=max_order, n_boot=n_boot,
                               random_state=random_state, train=counts_train, **options)
    lengths = features.map_partitions(len).compute()
    template.partition_starts = tuple(int(x) for x in np.concatenate([[0], np.cumsum(np.asarray(lengths))]))
    if template.phase == "collect":
        source = train if attr_train is not None else test
        (template,) = dask.compute(tree_merge(_count_partitions(_scan_prepass, template, source), split_every))
        template.end_prepass()
    parts = _count_partitions(_scan_part, template, {"features": features, **test})
    if counts_train:
        parts += _count_partitions(_scan_train, template, train)
    (acc,) = dask.compute(tree_merge(parts, split_every))
    return acc.result(level=level, min_group_size=min_group_size)


# --------------------------------------------------------------------------- #
# the functions generated from a declaration
# --------------------------------------------------------------------------- #
_SPLIT_EVERY = inspect.Parameter("split_every", inspect.Parameter.KEYWORD_ONLY, default=8, annotation="int")


def named_dask(family: Family) -> Callable[..., Any]:
    """The Dask form of ``family``'s function, generated from its declaration (``Family.named``).

    Its arguments: the label keywords of ``Named.update`` (Dask collections, in the same row partitions),
    the family's options (keyword-only, with their declared defaults), the class lists (keyword-only; found
    in one pass over the data when omitted) and ``split_every``; its docstring is assembled from the options'
    declarations. Every partition is counted by the family's accumulator, the accumulators are merged in a
    tree (:func:`_family_on_dask`).
    """
    named, stream = family.named, family.stream
    if named is None or stream is None or not named.dask:
        raise ValueError(f"{family.key!r} declares no Dask function (Family.named.dask)")
    key, lists = family.key, {k: c.name for k, c in stream.classes.items()}
    roles = dict(named.update)
    signature = named_signature(family, update_parameters(family, row_ids=False), (_SPLIT_EVERY,),
                                classes="keyword")

    def function(*args: Any, **kwargs: Any) -> Any:
        given = dict(bind(signature, family.name, args, kwargs).arguments)
        labels = {name: (role, given.pop(name, None)) for name, role in roles.items()}
        _require(**{name: x for name, (role, x) in labels.items() if role != "sample_weight"})
        classes = {k: given.pop(name, None) for k, name in lists.items()}
        split_every = given.pop("split_every", _SPLIT_EVERY.default)
        return _family_on_dask(key, labels, classes, given, split_every)

    function.__signature__ = signature  # type: ignore[attr-defined]
    function.declaration = family  # type: ignore[attr-defined]
    function.__name__ = function.__qualname__ = family.name
    function.__module__ = __name__
    labels = "\n".join(f"{name} : dask collection{', optional' if role == 'sample_weight' else ''}\n"
                        f"    The ``{role}`` role, in the same row partitions as the others."
                        for name, role in roles.items())
    found = "\n".join(f"{c.name} : sequence, optional\n    Found by one pass over the data when omitted."
                       for c in stream.classes.values())
    function.__doc__ = named_doc(family, "dask", labels, f"{found}\n{_SPLIT_EVERY.name} : int, default 8\n"
                                 "    Fan-in of the merge tree.")
    return function


def function_for(key: str) -> Callable[..., Any]:
    """The Dask form of the registered family ``key``'s function: this module's function of that name, or the
    one its declaration says is generated (``Family.named``; generated on demand for a family registered later).

    ``KeyError`` for a family that has no Dask form.
    """
    family = REGISTRY[key]
    if family.named is None or not family.named.dask:
        raise KeyError(f"the family {key!r} declares no Dask function (Family.named.dask)")
    mine = globals().get(family.name)
    if mine is not None and (not family.named.generated or getattr(mine, "declaration", None) is family):
        return mine
    return named_dask(family)


#: the Dask functions generated from the declarations (``Named.generated``), by name
GENERATED: dict[str, Callable[..., Any]] = {
    f.name: named_dask(f) for f in REGISTRY if f.named is not None and f.named.generated and f.named.dask}
df_bias_amplification = GENERATED["df_bias_amplification"]
