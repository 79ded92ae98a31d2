"""Streamed counting of Multi_MALS and Multi→: the hooks of the family's declaration (``Streaming``).

The metrics are functions of containment counts ``#(g, m ⊆ S)`` of a *fixed*
set M of combinations of task labels, which add over batches once M is
known. M is given, or chosen by the declared pre-pass
(:class:`biasamp._family.Prepass`): it collects the distinct training task
sets with their multiplicities (a summary that merges exactly), and its end
(``freeze``) chooses M from them as :func:`~biasamp.multi_bias_amp` does.

Without a training set (no ``update_train``) the signs ``y_gm`` and Multi_MALS's
indicator are cross-fitted unless ``cross_fit=False``, over every row at once:
the state keeps the distinct rows it counted (``rowset``), and :func:`_folds`
splits them at the end with :func:`biasamp._core.crossfit.crossfit_splits`, one
split per metric (Multi_MALS, G→M, M→G: the roles each reads), into the table
``[1|G|Ĝ]ᵀ [1|M(S)|M(Ŝ)]`` of each fold of each split, as the function does:
any batching gives the function's value. The streamed bootstrap's group tables
are dealt from the row set at the end (:func:`dealt_rows`, a unit's left
vector ``[1|G|Ĝ]`` in the block of its fold).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from biasamp._core.crossfit import (
    STREAM_SPLIT_NOTE,
    crossfit_splits,
    fold_weights,
    stream_check_train,
    stream_cross_fit,
)
from biasamp._core.labels import check_consistent_length, encode_labels
from biasamp._core.policy import (
    harden_roles,
    joined,
)
from biasamp._core.rows import RowFilter, select_rows
from biasamp._engine.rowset import DealtRows, RowSet, batch_keys, fold_tables, keeps_rows, merge_rowsets, split_keywords
from biasamp._engine.state import (
    CountState,
    OptionsSettings,
    ReplicateRows,
    TaskReading,
    any_of,
    arguments,
    meta,
    options_setting,
    reading_setting,
    same_value,
    setting,
    split_seed_setting,
    sum_filters,
    table,
    train_batch,
)
from biasamp._engine.train_test_rows import take_rows
from biasamp._family import ClassList, Prepass, Streaming
from biasamp.multiattribute._metrics import (
    _CHUNK_BYTES,
    _MODES,
    MultiAttributeCounts,
    MultiBiasAmpResult,
    _column_bitsets,
    _containment,
    _Counted,
    _counts_by_group,
    _frequent_sets,
    _group_codes,
    _group_totals,
    _Grouping,
    _label_blocks,
    _padded,
    _sized_combinations,
    multi_compute,
)
from biasamp.multiattribute._options import MultiOptions

__all__ = ["MULTI_STREAM", "MultiCollected", "MultiSettings", "MultiState", "combinations_of", "counts_of",
           "distinct_rows"]

PENDING = "the combinations are not fixed yet: call collect() on every batch, then freeze()"
#: the metrics' splits, in the order of their fold tables (:func:`_folds`): the prediction roles each reads
_SPLITS = {"Multi_MALS": ("attr_pred", "task_pred"), "G->M": ("task_pred",), "M->G": ("attr_pred",)}


def _same_fixed(a: tuple | None, b: tuple | None) -> bool:
    if a is None or b is None:
        return a is b
    return bool(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]))


@dataclass(frozen=True, eq=False)
class MultiSettings(OptionsSettings):
    """Class lists and options of a multi-attribute accumulator; ``fixed``: the combinations M once fixed
    (padded task-column indices and sizes), ``frozen_selection``: what choosing them removed."""

    attr_classes: tuple = setting()
    task_classes: tuple = setting()
    mode: str = setting()  # how M is chosen: "observed", "all" (the options' ``combinations``) or "given" (a list)
    options: MultiOptions = options_setting()  # what the compute hook reads; every option derives from it
    fixed: tuple | None = setting(label="combinations (freeze each from the merged pass 1)", show=False,
                                  same=_same_fixed)
    frozen_selection: dict | None = setting(label="combinations (freeze each from the merged pass 1)", show=False,
                                            same=same_value)
    split_seed: int = split_seed_setting()
    task_reading: TaskReading | None = reading_setting()

    @property
    def min_size(self) -> int:
        """The smallest combination size (``min_size``)."""
        return self.options.sizes()[0]

    @property
    def max_size(self) -> int:
        """The largest combination size (``max_size``; None: the number of task classes)."""
        size = self.options.sizes()[1]
        return len(self.task_classes) if size is None else size

    @property
    def min_support(self) -> int:
        """The training rows a combination must be contained in (``min_support``)."""
        return self.options.sizes()[2]

    @property
    def max_combinations(self) -> int:
        """The most candidate combinations (``max_combinations``)."""
        return self.options.sizes()[3]

    @property
    def reading(self) -> TaskReading:
        """How the task is read (the batches' classes, the classes counted)."""
        return self.task_reading or TaskReading(self.task_classes, self.task_classes)

    def encode_task(self, truths: Mapping[str, Any], preds: Mapping[str, Any] | None = None) -> dict:
        """A batch's task labels encoded on the batches' classes and read by the rule for a binary task."""
        return self.reading.read(encode_labels(truths, preds, classes=self.reading.labels, allow_soft=True))

    @property
    def folds(self) -> bool:
        """Whether the batches are split in folds (``cross_fit`` not False; a training set may still arrive)."""
        return self.cross_fit is not False

    @property
    def n_splits(self) -> int:
        """The splits counted, one per metric (Multi_MALS, G→M, M→G); 0 without folds."""
        return len(_SPLITS) if self.folds else 0

    @property
    def combinations(self) -> tuple:
        """The combinations M (tuples of task names), once fixed."""
        idx, sizes = fixed_of(self)
        names = self.task_classes
        return tuple(tuple(names[j] for j in row[:s]) for row, s in zip(idx.tolist(), sizes.tolist()))


def fixed_of(settings: MultiSettings) -> tuple[np.ndarray, np.ndarray]:
    """``(idx, sizes)`` of the fixed combinations (the counting pass counts them)."""
    if settings.fixed is None:
        raise ValueError("the combinations are not fixed yet: call freeze() after collect()")
    return settings.fixed


def combinations_of(settings: MultiSettings) -> tuple:
    """The combinations M (tuples of task names)."""
    return settings.combinations


@dataclass(eq=False)
class MultiState(CountState):
    """The containment counts of the fixed combinations (pass 2) and what the batches said."""

    n_train: np.ndarray = table()
    train_attr: np.ndarray = table()
    train_joint: np.ndarray = table()
    n_test: np.ndarray = table()
    test_attr: np.ndarray = table()
    test_joint: np.ndarray = table()
    pred_attr: np.ndarray = table()
    joint_g_mhat: np.ndarray = table()
    joint_ghat_m: np.ndarray = table()
    joint_ghat_mhat: np.ndarray = table()
    roles: tuple | None = arguments("predictions (attr_pred, task_pred)",
                                    describe=lambda r: f"attr_pred={r[0]}, task_pred={r[1]}")
    weighted: bool = meta(False, any_of)
    predictions: str = meta("hard", joined)
    rows: RowFilter | None = meta(None, sum_filters)
    train_rows: RowFilter | None = meta(None, sum_filters)
    # cross-fitting: the distinct rows counted, split at the end as the function splits all rows
    rowset: RowSet | None = meta(None, merge_rowsets)


# --------------------------------------------------------------------------- #
# settings
# --------------------------------------------------------------------------- #
def multi_settings(classes: Mapping[str, tuple], *, combinations: str | Sequence[Sequence], min_size: int,
                   max_size: int | None, min_support: int, max_combinations: int, missing: str, threshold: float,
                   min_group_size: int, include_small_groups: bool, cross_fit: bool | None,
                   cross_fit_random_state: Any, binary_task: str, pos_label: Any) -> MultiSettings:
    """The settings of a multi-attribute accumulator (the options of :class:`.MultiAttributeAccumulator`): every
    option given, the declared default where the caller gave none (:class:`biasamp.accumulators.Accumulator`).

    ``options``: the family's options object of these options (what the
    function builds from the same keywords), which its compute hook reads;
    ``combinations`` given as a list of combinations, which the function does
    not take, is held by the settings (``fixed``), the options object keeping
    the declared ``combinations`` (as the accumulator's own check builds it).
    """
    options = MultiOptions(**({"combinations": combinations} if isinstance(combinations, str) else {}),
                           min_size=min_size, max_size=max_size, min_support=min_support,
                           max_combinations=max_combinations, missing=missing, threshold=threshold,
                           min_group_size=min_group_size, include_small_groups=include_small_groups,
                           cross_fit=cross_fit, cross_fit_random_state=cross_fit_random_state,
                           binary_task=binary_task, pos_label=pos_label)
    reading = TaskReading.of(classes["task"], binary_task, pos_label)
    attr_classes, task_classes = classes["attr"], reading.classes
    fixed, selection = None, None
    if isinstance(combinations, str):
        if combinations not in _MODES:
            raise ValueError(f"combinations must be one of {_MODES} or a list of combinations, got {combinations!r}")
        mode = combinations
    else:
        mode = "given"
        named: set = set()
        if isinstance(combinations, Iterable) and not isinstance(combinations, (bytes, dict)):
            combinations = list(combinations)  # read twice (an iterator once)
            try:
                named = {c for combo in combinations for c in combo}
            except TypeError:  # not combinations of labels: _given names the problem
                named = set()
        if reading.index is not None and any(c in reading.labels and c not in task_classes for c in named):
            raise ValueError(f"combinations name the task class(es) {sorted(named - set(task_classes))!r}, but the "
                             f"task classes {list(reading.labels)!r} are read as a binary task's positive class "
                             f"{task_classes[0]!r} (binary_task='positive'): pass binary_task='both' to count every "
                             "column (e.g. a two-column indicator)")
        fixed = _given(combinations, task_classes)
        selection = {"n_candidates": len(fixed[1]), "removed_min_support": 0}
    _, seed = stream_cross_fit(options.cross_fit, cross_fit_random_state, False)
    return MultiSettings(attr_classes, task_classes, mode, options, fixed, selection, seed, reading)


def _given(combinations: Any, task_classes: tuple) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(combinations, (bytes, dict)) or not isinstance(combinations, Iterable):
        raise TypeError(
            f"combinations must be 'observed', 'all' or a list of combinations, got {type(combinations).__name__}"
        )
    lookup = {c: i for i, c in enumerate(task_classes)}
    member = []
    for combo in combinations:
        if isinstance(combo, (str, bytes)) or not isinstance(combo, Iterable):
            raise TypeError(
                f"each combination must be a tuple of task names, got {combo!r} "
                "(write a single attribute as a 1-tuple, e.g. ('a',))"
            )
        combo = tuple(combo)
        unknown = [c for c in combo if c not in lookup]
        if unknown:
            raise ValueError(f"combination {combo!r} names unknown task labels {unknown!r} "
                             f"(task_classes: {list(task_classes)[:20]!r})")
        if not combo or len(set(combo)) != len(combo):
            raise ValueError(f"combination {combo!r} must be non-empty without repeated task labels")
        row = np.zeros(len(task_classes), dtype=bool)
        row[[lookup[c] for c in combo]] = True
        member.append(row)
    if not member:
        raise ValueError("combinations is an empty list")
    matrix = np.array(member)
    _, first = np.unique(matrix, axis=0, return_index=True)
    if len(first) != len(matrix):
        raise ValueError("combinations holds the same combination twice")
    return _padded(matrix)


# --------------------------------------------------------------------------- #
# the pre-pass: collect the distinct task sets, then freeze M
# --------------------------------------------------------------------------- #
def distinct_rows(packed: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of a ``(n, bytes)`` uint8 matrix with their summed weights (float64)."""
    if packed.shape[0] == 0:
        return packed, np.asarray(weights, dtype=np.float64)
    width = packed.shape[1]
    keys = np.ascontiguousarray(packed).view(f"V{width}").ravel()
    uniq, inverse = np.unique(keys, return_inverse=True)
    summed = np.bincount(inverse.ravel(), weights=weights, minlength=len(uniq))
    return uniq.view(np.uint8).reshape(len(uniq), width), summed.astype(np.float64)


@dataclass(eq=False)
class MultiCollected:
    """Pass 1: the distinct task sets (bit-packed rows) with their summed weights; ``+`` merges them exactly."""

    sets: np.ndarray
    set_weights: np.ndarray
    n_collected: int = 0

    def __add__(self, other: Any) -> MultiCollected:
        if not isinstance(other, MultiCollected):
            return NotImplemented
        sets, weights = distinct_rows(np.concatenate([self.sets, other.sets]),
                                      np.concatenate([self.set_weights, other.set_weights]).astype(np.float64))
        return MultiCollected(sets, weights, self.n_collected + other.n_collected)


def _needed(settings: MultiSettings) -> bool:
    return settings.fixed is None


def _collect_start(settings: MultiSettings) -> MultiCollected:
    return MultiCollected(np.zeros((0, (len(settings.task_classes) + 7) // 8), dtype=np.uint8),
                          np.zeros(0, dtype=np.float64))


_TRAIN_SET = ("attr_train", "task_train")
_TEST_SET = ("attr", "task", "attr_pred", "task_pred")


def collect(settings: MultiSettings, collected: MultiCollected, roles: Mapping[str, Any]) -> MultiCollected:
    """Pass 1 over a batch: the task sets of its training rows (``task_train``), else of its test rows (``task``).

    The row layer (``missing``, the weights) applies to every argument of the
    set given, so that a row dropped by the counting pass is not collected.
    """
    train = roles.get("task_train") is not None
    names = _TRAIN_SET if train else _TEST_SET
    weight = "train_sample_weight" if train else "sample_weight"
    given = {k: roles[k] for k in names if roles.get(k) is not None}
    kept, row_weights, _ = select_rows(given, missing=settings.missing, sample_weight=roles.get(weight),
                                       weight_name=weight, group_args=("attr", "attr_train"), group_columns=False)
    task = kept["task_train" if train else "task"]
    m = settings.encode_task({"task": task})["task"]
    get = _label_blocks(m)
    n = m.n_rows
    row_weights = np.ones(n) if row_weights is None else row_weights
    step = max(1, _CHUNK_BYTES // max(len(settings.task_classes), 1))
    parts = [collected.sets]
    weights = [collected.set_weights]
    for begin in range(0, n, step):
        packed = np.packbits(get(begin, min(n, begin + step)), axis=1, bitorder="little")
        d, w = distinct_rows(packed, row_weights[begin:begin + len(packed)])
        parts.append(d)
        weights.append(w)
    sets, set_weights = distinct_rows(np.concatenate(parts), np.concatenate(weights).astype(np.float64))
    return MultiCollected(sets, set_weights, collected.n_collected + n)


def _weighted_support(colbits: np.ndarray, weights: np.ndarray, n_rows: int,
                      idx: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """``Σ_d w_d [m ⊆ S_d]`` for each combination, over weighted distinct sets ``S_d``."""
    out = np.zeros(len(sizes), dtype=np.float64)
    step = max(1, _CHUNK_BYTES // max(n_rows, 1))
    for begin in range(0, len(sizes), step):
        sl = slice(begin, min(len(sizes), begin + step))
        bits = _containment(colbits, idx[sl], sizes[sl])
        member = np.unpackbits(bits.view(np.uint8), axis=1, count=n_rows, bitorder="little")
        out[sl] = member.astype(np.float64) @ weights
    return out


def _weighted_frequent_sets(colbits, weights, n_rows, min_size, max_size, min_support, max_combinations):
    """Apriori over weighted distinct attribute sets (``_frequent_sets`` with weighted supports)."""
    support = functools.partial(_weighted_support, colbits, weights, n_rows)
    return _frequent_sets(colbits, min_size, max_size, min_support, max_combinations, support=support)


def freeze(settings: MultiSettings, collected: MultiCollected) -> MultiSettings:
    """End of pass 1: the settings with the combinations M chosen from the collected sets.

    ``"observed"``: the distinct collected sets with size in
    ``[min_size, max_size]``; ``"all"``: every combination of size in range
    contained in at least ``min_support`` collected rows (Apriori, never
    2^|A|). In both, combinations contained in fewer than ``min_support`` rows
    are removed.
    """
    if collected.n_collected == 0:
        raise ValueError("nothing was collected: call collect() on the training task labels first")
    a = len(settings.task_classes)
    member = np.unpackbits(collected.sets, axis=1, count=a, bitorder="little").astype(bool)
    n_d = len(member)
    colbits = _column_bitsets(lambda s, e: member[s:e], n_d, a)
    if settings.mode == "observed":
        idx, sz = _sized_combinations(member, settings.min_size, settings.max_size)
    else:
        idx, sz = _weighted_frequent_sets(colbits, collected.set_weights, n_d, settings.min_size, settings.max_size,
                                          settings.min_support, settings.max_combinations)
    n_candidates = len(sz)
    support = _weighted_support(colbits, collected.set_weights, n_d, idx, sz)
    keep = support >= settings.min_support
    if not keep.any():
        raise ValueError(
            f"min_support={settings.min_support} removed all {n_candidates} candidate combinations "
            f"(combinations={settings.mode!r}): none is contained in that many training instances"
        )
    selection = {"n_candidates": n_candidates, "removed_min_support": int((~keep).sum())}
    return replace(settings, fixed=(idx[keep], sz[keep]), frozen_selection=selection)


# --------------------------------------------------------------------------- #
# pass 2: counting
# --------------------------------------------------------------------------- #
def _table_shape(settings: MultiSettings) -> tuple[int, int]:
    """The shape of the table ``[1|G|Ĝ]ᵀ [1|M(S)|M(Ŝ)]``."""
    return 1 + 2 * len(settings.attr_classes), 1 + 2 * len(fixed_of(settings)[1])


def cells(settings: MultiSettings) -> tuple[int, int]:
    """The replicate tables ``[1|G|Ĝ]ᵀ [1|M(S)|M(Ŝ)]``, their rows once per split and fold when cross-fitting."""
    rows, cols = _table_shape(settings)
    return rows * max(1, 2 * settings.n_splits), cols


def start(settings: MultiSettings) -> MultiState:
    """The empty state of the fixed combinations (float64 tables: exact for integer counts below 2**53)."""
    g, k = len(settings.attr_classes), len(fixed_of(settings)[1])
    return MultiState(
        n_train=np.zeros((), dtype=np.float64), train_attr=np.zeros(g, dtype=np.float64),
        train_joint=np.zeros((g, k), dtype=np.float64), n_test=np.zeros((), dtype=np.float64),
        test_attr=np.zeros(g, dtype=np.float64), test_joint=np.zeros((g, k), dtype=np.float64),
        pred_attr=np.zeros(g, dtype=np.float64), joint_g_mhat=np.zeros((g, k), dtype=np.float64),
        joint_ghat_m=np.zeros((g, k), dtype=np.float64), joint_ghat_mhat=np.zeros((g, k), dtype=np.float64),
    )


def _bits(settings: MultiSettings, m: Any) -> np.ndarray:
    return _column_bitsets(_label_blocks(m), m.n_rows, len(settings.task_classes))


def count_train(settings: MultiSettings, roles: Mapping[str, Any]) -> MultiState:
    """A batch of training ground truth: ``b_train`` and ``y_gm``'s counts."""
    stream_check_train(settings.cross_fit)
    g, a, weights, rows = train_batch(roles, settings.missing, settings.attr_classes, settings.reading)
    codes = _group_codes(g)
    ng = len(settings.attr_classes)
    (joint,) = _counts_by_group(_bits(settings, a), [codes], ng, weights, *fixed_of(settings))
    state = start(settings)
    state.n_train = state.n_train + (a.n_rows if weights is None else weights.sum())
    state.train_attr += _group_totals(codes, ng, weights)
    state.train_joint += joint
    return replace(state, train_rows=rows, weighted=weights is not None)


def count(settings: MultiSettings, roles: Mapping[str, Any],
          replicate: bool) -> tuple[MultiState, ReplicateRows | None]:
    """A batch of test rows: the containment counts of M by group, of the predictions too."""
    attr, task, attr_pred, task_pred = (roles.get(k) for k in ("attr", "task", "attr_pred", "task_pred"))
    if attr is None or task is None:
        raise ValueError("update needs the test ground truth attr and task")
    if attr_pred is None and task_pred is None:
        raise ValueError(
            "give task_pred (for Multi G->M), attr_pred (for Multi M->G) or both (also for "
            "Multi_MALS); neither was given"
        )
    arrays, weights, rows = select_rows(
        {"attr": attr, "task": task, "attr_pred": attr_pred, "task_pred": task_pred, "row_ids": roles.get("row_ids")},
        missing=settings.missing, group_args=("attr",), sample_weight=roles.get("sample_weight"),
        group_columns=False)
    g = encode_labels({"attr": arrays["attr"]}, {"attr_pred": arrays["attr_pred"]}, classes=settings.attr_classes,
                      allow_soft=True)
    a = encode_labels({"task": arrays["task"]}, {"task_pred": arrays["task_pred"]}, classes=settings.reading.labels,
                      allow_soft=True)
    g, said_g = harden_roles(g, (("attr", "attr_pred"),), "threshold", settings.threshold)
    a, said_a = harden_roles(a, (("task", "task_pred"),), "threshold", settings.threshold)
    a = settings.reading.read(a)
    n = check_consistent_length(attr=g["attr"], task=a["task"], attr_pred=g.get("attr_pred"),
                                task_pred=a.get("task_pred"))
    ng = len(settings.attr_classes)
    fixed = fixed_of(settings)
    codes = {name: _group_codes(m) for name, m in g.items()}
    table = _count_table(settings, g, a, codes, weights, n)
    state = start(settings)
    state.test_joint += table[1:1 + ng, 1:1 + len(fixed[1])]
    state.pred_attr += table[1 + ng:, 0]
    state.joint_ghat_m += table[1 + ng:, 1:1 + len(fixed[1])]
    state.joint_g_mhat += table[1:1 + ng, 1 + len(fixed[1]):]
    state.joint_ghat_mhat += table[1 + ng:, 1 + len(fixed[1]):]
    state.n_test = state.n_test + table[0, 0]
    state.test_attr += table[1:1 + ng, 0]
    # split at the end, over every row
    rowset = RowSet.of({**g, **a}, weights, batch_keys(roles, arrays["row_ids"])) if settings.folds else None
    state = replace(state, roles=(attr_pred is not None, task_pred is not None), rows=rows,
                    weighted=weights is not None, predictions=joined(said_g, said_a), rowset=rowset)
    if not replicate:
        return state, None
    from scipy import sparse

    left, right = _table_rows(settings, g, a, codes, n)
    if settings.folds:  # a row's left vector in the block of its fold of every split of the batch (weighted by its
        # share): the subgroup scan's streamed tables, and the training set's (the blocks are then added);
        # an accumulator's cross-fitted bootstrap deals the row set's units instead (dealt_rows)
        from biasamp._engine.crossfit_tables import fold_rows

        left = fold_rows(left, _split(settings, g, a, weights), weights, missing_in_fold0=False)
    elif weights is not None:  # a row's replicate weight multiplies its sample weight
        left = sparse.csr_matrix(sparse.diags(weights) @ left)
    return state, ReplicateRows(left, right, n, arrays["row_ids"])


def _table_rows(settings: MultiSettings, g: dict, a: dict, codes: dict, n: int) -> tuple[Any, Any]:
    """Every row's table vectors: ``[1 | group | predicted group]`` and ``[1 | M contained in T | in T̂]``."""
    from scipy import sparse

    from biasamp._engine.resample import augmented, label_rows
    from biasamp.multiattribute._plan import containment_rows

    idx, combos, ng = np.arange(n), settings.combinations, len(settings.attr_classes)

    def onehot(name):
        if name not in codes:
            return sparse.csr_matrix((n, ng))
        return sparse.csr_matrix((np.ones(n), (idx, codes[name])), shape=(n, ng))

    def contained(name):
        if name not in a:
            return sparse.csr_matrix((n, len(combos)))
        return containment_rows(label_rows(a[name], idx), settings.task_classes, combos)

    left = augmented([onehot("attr"), onehot("attr_pred")], n)
    return left, augmented([contained("task"), contained("task_pred")], n)


def _split_rows(state: MultiState) -> tuple[dict, dict, np.ndarray | None, np.ndarray | None]:
    """The row set's rows as the group and task roles, their weights and their keys."""
    assert state.rowset is not None
    roles, weights, keys = state.rowset.keyed_rows()
    return ({k: m for k, m in roles.items() if k in ("attr", "attr_pred")},
            {k: m for k, m in roles.items() if k in ("task", "task_pred")}, weights, keys)


def _folds(settings: MultiSettings, state: MultiState) -> np.ndarray:
    """Each split's fold tables ``(split, fold, *table)``: the row set split as :func:`~biasamp.multi_bias_amp`
    splits all rows (unweighted: the distinct rows with their multiplicities as units), counted once."""
    def fill(tables: np.ndarray) -> None:
        g, a, weights, _ = _split_rows(state)
        codes = {name: _group_codes(m) for name, m in g.items()}
        assert state.rowset is not None
        for s, share in enumerate(_split(settings, g, a, weights, state.rowset.in_units)):
            if share is None:
                continue
            for f, part in enumerate(fold_weights(share, weights)):
                idx = np.flatnonzero(part > 0)
                if idx.size:
                    tables[s, f] += _count_table(settings, {k: take_rows(m, idx) for k, m in g.items()},
                                                 {k: take_rows(m, idx) for k, m in a.items()},
                                                 {k: c[idx] for k, c in codes.items()}, part[idx], len(idx))

    return fold_tables(state.rowset, (settings.n_splits, 2, *_table_shape(settings)), fill)



def dealt_rows(settings: MultiSettings, state: MultiState) -> DealtRows | None:
    """The row set's rows as the streamed bootstrap deals them at the end (``cross_fit`` not False): the table
    vectors ``[1|G|Ĝ]``, ``[1|M(S)|M(Ŝ)]``, the weights and each metric's fold-0 share (once a training set was
    counted: every row in fold 0, the blocks are read added). None without a row set."""
    if state.rowset is None:
        return None
    g, a, given, keys = _split_rows(state)
    n = g["attr"].n_rows
    weights = np.ones(n) if given is None else given
    codes = {name: _group_codes(m) for name, m in g.items()}
    left, right = _table_rows(settings, g, a, codes, n)
    in_units = state.rowset.in_units
    shares = _split(settings, g, a, given, in_units) if cross_fitted(settings, state) else [weights] * settings.n_splits
    return DealtRows(left, right, weights, shares, keys, whole=not in_units)


def _count_table(settings: MultiSettings, g: dict, a: dict, codes: dict, weights: np.ndarray | None,
                 n: int) -> np.ndarray:
    """``[1|G|Ĝ]ᵀ [1|M(S)|M(Ŝ)]`` of some rows (row 0 holds ``n`` only): the containment counts by group."""
    ng, fixed = len(settings.attr_classes), fixed_of(settings)
    k = len(fixed[1])
    out = np.zeros(_table_shape(settings))
    groups = _Grouping([codes["attr"]] + ([codes["attr_pred"]] if "attr_pred" in codes else []), ng, weights)
    test_counts = groups.counts(_bits(settings, a["task"]), *fixed)
    out[1:1 + ng, 1:1 + k] += test_counts[0]
    if "attr_pred" in codes:
        out[1 + ng:, 1:1 + k] += test_counts[1]
        out[1 + ng:, 0] += _group_totals(codes["attr_pred"], ng, weights)
    if "task_pred" in a:
        pred_counts = groups.counts(_bits(settings, a["task_pred"]), *fixed)
        out[1:1 + ng, 1 + k:] += pred_counts[0]
        if "attr_pred" in codes:
            out[1 + ng:, 1 + k:] += pred_counts[1]
    out[0, 0] = n if weights is None else weights.sum()
    out[1:1 + ng, 0] += _group_totals(codes["attr"], ng, weights)
    return out


def _split(settings: MultiSettings, g: dict, a: dict, weights: np.ndarray | None, units: bool = False) -> list:
    """Per metric (:data:`_SPLITS`), every row of the batch's share of fold 0 (None: a metric the batch cannot
    give); [] without folds. The split of :func:`~biasamp.multi_bias_amp`, applied to the batch (``units``: the
    weights are a row set's multiplicities, :attr:`~biasamp._engine.rowset.RowSet.in_units`)."""
    if not settings.folds:
        return []
    by_role = {"attr": g["attr"], "task": a["task"],
               **{r: m for r, m in (*g.items(), *a.items()) if r in ("attr_pred", "task_pred")}}
    keys = [key for key, roles in _SPLITS.items() if all(r in by_role for r in roles)]
    splits = crossfit_splits(by_role, [("attr", "task", *_SPLITS[key]) for key in keys],
                             **split_keywords(weights, units),
                             random_state=settings.split_seed, stratified=[key != "Multi_MALS" for key in keys])
    found = dict(zip(keys, splits))
    return [found.get(key) for key in _SPLITS]


# --------------------------------------------------------------------------- #
# reading
# --------------------------------------------------------------------------- #
def counts_of(settings: MultiSettings, state: MultiState) -> tuple[MultiAttributeCounts, dict, str]:
    """The count table of the kept combinations, the selection record and the train source.

    Applies the filters of the functional API: combinations with fewer than
    ``min_support`` training rows, or never contained in a test ground-truth
    row, are removed.
    """
    if state.roles is None or state.rows is None:
        raise ValueError("no test batch was counted: call update() first")
    weighted = state.weighted
    if weighted:
        def table(x):
            return x.copy()

        def total(x):
            return float(x)
    else:  # exact integer counts held in float64
        def table(x):
            return np.rint(x).astype(np.int64)

        def total(x):
            return int(round(float(x)))
    if state.train_rows is not None:
        source, train_rows = "train", state.train_rows
        n_train, train_attr, train_joint = total(state.n_train), table(state.train_attr), table(state.train_joint)
    else:
        source, train_rows = "test", state.rows
        n_train, train_attr, train_joint = total(state.n_test), table(state.test_attr), table(state.test_joint)
    if settings.frozen_selection is None:
        raise ValueError("the combinations are not fixed yet: call freeze() after collect()")
    sel = dict(settings.frozen_selection)
    keep = train_joint.sum(axis=0) >= settings.min_support
    sel["removed_min_support"] += int((~keep).sum())
    if not keep.any():
        raise ValueError(
            f"min_support={settings.min_support} removed all {len(keep)} candidate combinations "
            f"(combinations={settings.mode!r}): none is contained in that many training instances"
        )
    in_test = state.test_joint.sum(axis=0) > 0
    sel["removed_not_in_test"] = int((keep & ~in_test).sum())
    keep &= in_test
    if not keep.any():
        raise ValueError(
            f"none of the {int((train_joint.sum(axis=0) >= settings.min_support).sum())} candidate "
            f"combinations (combinations={settings.mode!r}) occurs in the test ground truth (task): "
            "the test filter removed them all"
        )
    has_gp, has_ap = state.roles
    combos = tuple(c for c, k in zip(settings.combinations, keep) if k)
    counts = MultiAttributeCounts(
        attr_classes=settings.attr_classes,
        task_classes=settings.task_classes,
        combinations=combos,
        n_train=n_train,
        train_attr=train_attr,
        train_joint=train_joint[:, keep],
        n_test=total(state.n_test),
        test_attr=table(state.test_attr),
        test_joint=table(state.test_joint)[:, keep],
        pred_attr=table(state.pred_attr) if has_gp else None,
        joint_g_mhat=table(state.joint_g_mhat)[:, keep] if has_ap else None,
        joint_ghat_m=table(state.joint_ghat_m)[:, keep] if has_gp else None,
        joint_ghat_mhat=table(state.joint_ghat_mhat)[:, keep] if has_gp and has_ap else None,
        weighted=weighted,
        rows=state.rows,
        train_rows=train_rows,
    )
    _, sizes = fixed_of(settings)
    selection = {
        "mode": settings.mode,
        "min_size": settings.min_size if settings.mode != "given" else int(sizes.min()),
        "max_size": settings.max_size if settings.mode != "given" else int(sizes.max()),
        "min_support": settings.min_support,
        "support": "containment",
        "n_candidates": sel["n_candidates"],
        "removed_min_support": sel["removed_min_support"],
        "removed_not_in_test": sel["removed_not_in_test"],
    }
    return counts, selection, source


def cross_fitted(settings: MultiSettings, state: MultiState) -> bool:
    """Whether :func:`compute` cross-fits: folds counted and no training rows."""
    return settings.folds and state.train_rows is None


def _kept(settings: MultiSettings, counts: MultiAttributeCounts) -> np.ndarray:
    """The positions among the fixed combinations of the combinations ``counts`` kept."""
    frozen = {c: j for j, c in enumerate(settings.combinations)}
    return np.array([frozen[c] for c in counts.combinations], dtype=np.int64)


def _metrics_given(state: MultiState) -> list[str]:
    """The metrics whose predictions the batches carried, in the order of :data:`_SPLITS`."""
    assert state.roles is not None
    has = {"attr_pred": state.roles[0], "task_pred": state.roles[1]}
    return [key for key, roles in _SPLITS.items() if all(has[r] for r in roles)]


def fold_counts(settings: MultiSettings, state: MultiState, counts: MultiAttributeCounts,
                key: str) -> tuple[MultiAttributeCounts, MultiAttributeCounts]:
    """The two folds of metric ``key``'s split as count tables of the combinations of ``counts`` (the training
    side of a fold is its own test ground truth, as :func:`~biasamp.multi_bias_amp` counts them)."""
    g, k = len(settings.attr_classes), len(fixed_of(settings)[1])
    kept = _kept(settings, counts)
    has_gp, has_ap = state.roles if state.roles is not None else (False, False)
    out = []
    for f in (0, 1):
        t = _folds(settings, state)[list(_SPLITS).index(key), f]
        if counts.weighted:
            def table(x):
                return np.array(x, dtype=np.float64)
            total = float(t[0, 0])
        else:
            def table(x):
                return np.rint(x).astype(np.int64)
            total = int(round(float(t[0, 0])))
        attr, joint = table(t[1:1 + g, 0]), table(t[1:1 + g, 1 + kept])
        out.append(MultiAttributeCounts(
            attr_classes=settings.attr_classes, task_classes=settings.task_classes,
            combinations=counts.combinations, n_train=total, train_attr=attr, train_joint=joint, n_test=total,
            test_attr=attr, test_joint=joint, pred_attr=table(t[1 + g:, 0]) if has_gp else None,
            joint_g_mhat=table(t[1:1 + g, 1 + k + kept]) if has_ap else None,
            joint_ghat_m=table(t[1 + g:, 1 + kept]) if has_gp else None,
            joint_ghat_mhat=table(t[1 + g:, 1 + k + kept]) if has_gp and has_ap else None,
            weighted=counts.weighted, rows=state.rows, train_rows=state.rows,
        ))
    return out[0], out[1]


def counted(settings: MultiSettings, state: MultiState) -> _Counted:
    """The counted call of the state: what the family's ``count`` hook gives a call of every row counted.

    The count table of the kept combinations, the selection record, the
    train source and, cross-fitting, each given metric's two folds. A stream
    keeps tables, not rows (no prepared labels, no fold of every row); what
    the probability policy did is the batches' (``predictions``).
    """
    counts, selection, source = counts_of(settings, state)
    folds = None
    if cross_fitted(settings, state):
        folds = {key: (None, *fold_counts(settings, state, counts, key)) for key in _metrics_given(state)}
    return _Counted(None, counts, selection, folds, source, state.predictions, settings.reading.said)


def compute(settings: MultiSettings, state: MultiState) -> MultiBiasAmpResult:
    """Multi_MALS, Multi G→M and Multi M→G of the state: the family's compute hook
    (:func:`~biasamp.multiattribute._metrics.multi_compute`) on its :func:`counted` call."""
    return multi_compute(counted(settings, state), settings.options)


def resample(settings: MultiSettings, state: MultiState, boot: np.ndarray) -> tuple:
    """The multi-attribute plan on the table ``[1|G|Ĝ]ᵀ [1|M(S)|M(Ŝ)]`` of the kept combinations and its replicates.

    Cross-fitting, the tables hold the folds of each metric's split side by
    side (the plan holds the estimate's fold signs and indicators fixed, as
    :func:`biasamp.bootstrap` does); otherwise replicate tables laid out per
    fold are added back into ordinary ones.
    """
    from biasamp.multiattribute._plan import multi_evaluator

    point = compute(settings, state)
    kept = _kept(settings, point.counts)
    g, k = len(settings.attr_classes), len(fixed_of(settings)[1])
    w = 1 + 2 * g
    cols = np.concatenate([[0], 1 + kept, 1 + k + kept])
    given = _metrics_given(state)
    if cross_fitted(settings, state):
        blocks = [(list(_SPLITS).index(key), f) for key in given for f in (0, 1)]
        laid = np.concatenate([(2 * s + f) * w + np.arange(w) for s, f in blocks])
        full = np.concatenate([_folds(settings, state)[s, f][:, cols] for s, f in blocks])
        plan = multi_evaluator(point, folds=(w, given), group_options=settings.group_options)
        plan.notes.append(STREAM_SPLIT_NOTE)
        return plan, full, boot[:, laid[:, None], cols[None, :]]
    full = np.zeros((1 + 2 * g, 1 + 2 * k))
    full[0, 0] = state.n_test
    full[1:1 + g, 0], full[1 + g:, 0] = state.test_attr, state.pred_attr
    full[1:1 + g, 1:1 + k], full[1:1 + g, 1 + k:] = state.test_joint, state.joint_g_mhat
    full[1 + g:, 1:1 + k], full[1 + g:, 1 + k:] = state.joint_ghat_m, state.joint_ghat_mhat
    if settings.folds:  # every row is in one of the two folds of any split given
        s = list(_SPLITS).index(given[0])
        boot = boot[:, 2 * s * w:(2 * s + 1) * w] + boot[:, (2 * s + 1) * w:(2 * s + 2) * w]
    return multi_evaluator(point), full[:, cols], boot[:, :, cols]


MULTI_STREAM = Streaming(
    classes={"attr": ClassList("attr_classes", ("attr", "attr_train")),
             "task": ClassList("task_classes", ("task", "task_train"))},
    settings=multi_settings, start=start, count=count, compute=compute, cells=cells, resample=resample,
    count_train=count_train, dealt_rows=dealt_rows, late_replicates=keeps_rows,
    prepass=Prepass(needed=_needed, start=_collect_start, count=collect, end=freeze, reads=("task", "task_train"),
                    pending=PENDING, name="combinations"),
    widens=("combinations",),
)
