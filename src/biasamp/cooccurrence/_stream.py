"""Streamed counting of BiasAmp→ and BiasAmp_MALS: the hooks of their declarations (:class:`biasamp._family.Streaming`).

The state is the Gram table ``[1|A|Â]ᵀ [1|T|T̂]`` of the test rows (see
:class:`~biasamp.CooccurrenceCounts`), the ground-truth table ``[1|A]ᵀ [1|T]``
of the training rows, and the three-way counts ``#(a, t∧t̂)``, ``#(a∧â, t)``
of the McNemar tests, each summed over batches. Both families count the same
tables; BiasAmp→ counts the cross blocks of its two directions, BiasAmp_MALS
the block of the predictions.

Without a training set (no ``train`` counts, no ``update_train``) the signs
are cross-fitted unless ``cross_fit=False``, over every row at once: the state
keeps the distinct rows it counted (``rowset``, :class:`biasamp._engine.rowset.RowSet`),
and :func:`_folds` splits them at the end with
:func:`biasamp._core.crossfit.crossfit_splits` exactly as the function splits
all rows, one split per statistic (BiasAmp→: A→T's, then T→A's; BiasAmp_MALS:
one), so any batching gives the function's value. The streamed bootstrap's
group tables are dealt from the row set then (:func:`dealt_rows`): a
unit's left vector ``[1|A|Â]`` sits in the block of its fold, so every
replicate table holds every fold's table side by side, as the in-memory
bootstrap's cells do. A batch's replicate rows laid out on the batch's own folds
(:func:`fold_rows`) serve the subgroup scan's streamed tables.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from biasamp._core.crossfit import (
    STREAM_SPLIT_NOTE,
    crossfit_folds,
    crossfit_splits,
    fold_weights,
    stream_check_train,
    stream_cross_fit,
)
from biasamp._core.policy import (
    harden_roles,
    joined,
)
from biasamp._core.rows import RowFilter, select_rows
from biasamp._engine.crossfit_tables import fold_rows
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
    setting,
    split_seed_setting,
    sum_filters,
    table,
    train_batch,
)
from biasamp._engine.train_test_rows import take_rows
from biasamp._family import ClassList, Streaming
from biasamp.cooccurrence._counts import ATTR_ROLES, TASK_ROLES, CooccurrenceCounts, _encode_side, _layout
from biasamp.cooccurrence._metrics import (
    _DIRECTIONAL_PAIRS,
    Counted,
    DirectionalBiasAmpResult,
    Folds,
    MALSResult,
    directional_compute,
    mals_compute,
)
from biasamp.cooccurrence._options import DirectionalOptions, MALSOptions

__all__ = ["DIRECTIONAL_STREAM", "MALS_STREAM", "CooccurrenceSettings", "CooccurrenceState", "counts_of",
           "train_counts_of"]

METRICS = ("directional", "mals")
_MALS_PAIRS = frozenset({("attr", "task"), ("attr_pred", "task_pred")})
#: BiasAmp→'s splits, one per direction: the (attribute-side, task-side) roles each reads (its split is drawn from them)
_SPLITS = {"A->T": (("attr",), ("task", "task_pred")), "T->A": (("attr", "attr_pred"), ("task",))}
_NEEDS = {"A->T": "task_pred", "T->A": "attr_pred"}  # the prediction each direction needs


def _same_train(a: CooccurrenceCounts | None, b: CooccurrenceCounts | None) -> bool:
    if a is None or b is None:
        return a is b
    return bool(np.array_equal(a.gram, b.gram))


@dataclass(frozen=True, eq=False)
class CooccurrenceSettings(OptionsSettings):
    """Class lists and options of a co-occurrence accumulator (``metric``: the family, BiasAmp→ or MALS)."""

    attr_classes: tuple = setting()
    task_classes: tuple = setting()
    metric: str = setting()
    options: MALSOptions = options_setting()  # what the compute hook reads; every option derives from it
    train: CooccurrenceCounts | None = setting(label="fixed train counts", show=False, same=_same_train)
    split_seed: int = split_seed_setting()
    task_reading: TaskReading | None = reading_setting()

    @property
    def soft(self) -> str:
        """The probability policy (``soft``)."""
        return str(self.options.soft)

    @property
    def reading(self) -> TaskReading:
        """How the task is read (the batches' classes, the classes counted)."""
        return self.task_reading or TaskReading(self.task_classes, self.task_classes)

    @property
    def pairs(self) -> frozenset:
        """The (attribute role, task role) cross blocks the family reads."""
        return _DIRECTIONAL_PAIRS if self.metric == "directional" else _MALS_PAIRS

    @property
    def folds(self) -> bool:
        """Whether the batches are split in folds (no fixed training counts, ``cross_fit`` not False)."""
        return self.cross_fit is not False and self.train is None

    @property
    def n_splits(self) -> int:
        """The splits counted: one per statistic (BiasAmp→: A→T, T→A; BiasAmp_MALS: one); 0 without folds."""
        if not self.folds:
            return 0
        return len(_SPLITS) if self.metric == "directional" else 1


@dataclass(eq=False)
class CooccurrenceState(CountState):
    """The tables of a co-occurrence accumulator and what its batches said."""

    gram: np.ndarray = table()
    train_gram: np.ndarray = table()
    agree: np.ndarray = table()  # #(a, t∧t̂), #(a∧â, t): the McNemar tests
    roles: tuple | None = arguments("roles", describe=lambda r: repr(r[0] + r[1]))  # (attr roles, task roles)
    soft_roles: frozenset = meta(frozenset(), any_of)
    predictions: str = meta("hard", joined)
    weighted: bool = meta(False, any_of)
    rows: RowFilter | None = meta(None, sum_filters)
    train_rows: RowFilter | None = meta(None, sum_filters)
    # cross-fitting: the distinct rows counted, split at the end as the function splits all rows
    rowset: RowSet | None = meta(None, merge_rowsets)


# --------------------------------------------------------------------------- #
# settings and the empty state
# --------------------------------------------------------------------------- #
def _settings(metric: str, classes: Mapping[str, tuple], *, train: CooccurrenceCounts | None = None,
              missing: str, threshold: float, soft: str, min_group_size: int, include_small_groups: bool,
              cross_fit: bool | None, cross_fit_random_state: Any, binary_task: str,
              pos_label: Any) -> CooccurrenceSettings:
    """The settings of a co-occurrence accumulator: the family's options (every one given, the declared default
    where the caller gave none: :class:`biasamp.accumulators.Accumulator`) and fixed training counts ``train``.

    ``options``: the family's options object of these options (what the
    function builds from the same keywords), which its compute hook reads.
    """
    options = (DirectionalOptions if metric == "directional" else MALSOptions)(
        threshold=threshold, soft=soft, min_group_size=min_group_size, include_small_groups=include_small_groups,
        cross_fit=cross_fit, cross_fit_random_state=cross_fit_random_state, binary_task=binary_task,
        pos_label=pos_label, missing=missing)
    reading = TaskReading.of(classes["task"], binary_task, pos_label)
    attr_classes, task_classes = classes["attr"], reading.classes
    if train is not None:
        if not isinstance(train, CooccurrenceCounts):
            raise TypeError(f"train must be a CooccurrenceCounts, got {type(train).__name__}")
        if train.attr_classes != attr_classes or train.task_classes != task_classes:
            raise ValueError(
                f"train has classes {list(train.attr_classes)!r} / {list(train.task_classes)[:10]!r}, "
                f"expected attr_classes={list(attr_classes)!r}, task_classes={list(task_classes)[:10]!r}"
            )
        if not train.has("attr", "task") or ("attr", "task") in train.uncounted:
            raise ValueError("train must hold the ground-truth roles 'attr' and 'task'")
        train = train.restrict(["attr"], ["task"])
    _, seed = stream_cross_fit(options.cross_fit, cross_fit_random_state, train is not None)
    return CooccurrenceSettings(attr_classes, task_classes, metric, options, train, split_seed=seed,
                                task_reading=reading)


#: the settings of a BiasAmp→ accumulator (the options of :class:`.CooccurrenceAccumulator`)
directional_settings = functools.partial(_settings, "directional")
#: the settings of a BiasAmp_MALS accumulator (the options of :class:`.CooccurrenceAccumulator`)
mals_settings = functools.partial(_settings, "mals")


def _gram_shape(settings: CooccurrenceSettings) -> tuple[int, int]:
    """The shape of the Gram table ``[1|A|Â]ᵀ [1|T|T̂]``."""
    return 1 + 2 * len(settings.attr_classes), 1 + 2 * len(settings.task_classes)


def cells(settings: CooccurrenceSettings) -> tuple[int, int]:
    """The shape of one replicate table: the Gram table, its rows once per split and fold when cross-fitting."""
    rows, cols = _gram_shape(settings)
    return rows * max(1, 2 * settings.n_splits), cols


def start(settings: CooccurrenceSettings) -> CooccurrenceState:
    """The empty state (zero tables)."""
    ka, kt = len(settings.attr_classes), len(settings.task_classes)
    return CooccurrenceState(gram=np.zeros(_gram_shape(settings), dtype=np.float64),
                             train_gram=np.zeros((1 + ka, 1 + kt), dtype=np.float64),
                             agree=np.zeros((2, ka, kt), dtype=np.float64))


# --------------------------------------------------------------------------- #
# counting
# --------------------------------------------------------------------------- #
def _check_directional(roles: Mapping[str, Any]) -> None:
    if roles.get("attr") is None or roles.get("task") is None:
        raise ValueError("metric='directional' needs the test ground truth attr and task in every batch")
    if roles.get("attr_pred") is None and roles.get("task_pred") is None:
        raise ValueError("give task_pred (for A->T) and/or attr_pred (for T->A); neither was given")


def _check_mals(roles: Mapping[str, Any]) -> None:
    if roles.get("attr_pred") is None or roles.get("task_pred") is None:
        raise ValueError("metric='mals' needs attr_pred and task_pred in every batch")
    if (roles.get("attr") is None) != (roles.get("task") is None):
        raise ValueError("give both attr and task (test ground truth), or neither")


def _embed(target: np.ndarray, counts: CooccurrenceCounts, ka: int, kt: int) -> None:
    rows_layout = _layout(ATTR_ROLES, [ka, ka])
    cols_layout = _layout(TASK_ROLES, [kt, kt])
    rows = np.concatenate([[0]] + [np.arange(*rows_layout[r].indices(1 + 2 * ka)) for r in counts.attr_roles])
    cols = np.concatenate([[0]] + [np.arange(*cols_layout[r].indices(1 + 2 * kt)) for r in counts.task_roles])
    target[np.ix_(rows, cols)] += counts.gram


def count(settings: CooccurrenceSettings, roles: Mapping[str, Any],
          replicate: bool) -> tuple[CooccurrenceState, ReplicateRows | None]:
    """One batch of test rows: the Gram table of the roles given, the McNemar counts and the replicate rows.

    Encoded and counted exactly as by the functional API (one vectorized
    pass, float32 row blocks accumulated in float64).
    """
    (_check_directional if settings.metric == "directional" else _check_mals)(roles)
    arrays, weights, rows = select_rows(
        {"attr": roles.get("attr"), "task": roles.get("task"), "attr_pred": roles.get("attr_pred"),
         "task_pred": roles.get("task_pred"), "row_ids": roles.get("row_ids")},
        missing=settings.missing, group_args=("attr",), sample_weight=roles.get("sample_weight"),
        group_columns=False)
    a = _encode_side(arrays["attr"], arrays["attr_pred"], "attr", settings.attr_classes, True)
    t = _encode_side(arrays["task"], arrays["task_pred"], "task", settings.reading.labels, True)
    a, said_a = harden_roles(a, (("attr", "attr_pred"),), settings.soft, settings.threshold)
    t, said_t = harden_roles(t, (("task", "task_pred"),), settings.soft, settings.threshold)
    t = settings.reading.read(t)
    left = [a[r] for r in ATTR_ROLES if r in a]
    right = [t[r] for r in TASK_ROLES if r in t]
    counts = CooccurrenceCounts.from_encoded(left, right, pairs=settings.pairs, weights=weights, rows=rows)
    state = start(settings)
    ka, kt = len(settings.attr_classes), len(settings.task_classes)
    _embed(state.gram, counts, ka, kt)
    n = next(m.n_rows for m in (*left, *right))
    rowset = None
    if settings.folds:  # the distinct rows, split at the end over every row (one dataset, one number)
        _split(settings, {**a, **t}, None, check_only=True)
        rowset = RowSet.of({**a, **t}, weights, batch_keys(roles, arrays["row_ids"]))
    # the replicate rows of a batch laid out on the batch's own folds: the subgroup scan's streamed tables
    # (an accumulator's bootstrap deals the row set's units to its groups instead: dealt_rows)
    shares = _split(settings, {**a, **t}, weights) if replicate else []
    boot = _three_way(settings, state.agree, a, t, n, weights, replicate, shares)
    state = replace(state, roles=(counts.attr_roles, counts.task_roles), soft_roles=counts.soft_roles,
                    predictions=joined("hard", said_a, said_t), weighted=weights is not None, rows=rows,
                    rowset=rowset)
    if boot is None:
        return state, None
    return state, ReplicateRows(boot[0], boot[1], n, arrays["row_ids"])


def _split(settings: CooccurrenceSettings, by_role: dict, weights: np.ndarray | None, check_only: bool = False,
           units: bool = False) -> list:
    """Per split, every row of the batch's share of fold 0 (None: a split the batch does not give); [] without folds
    (``units``: the weights are a row set's multiplicities, :attr:`~biasamp._engine.rowset.RowSet.in_units`).

    The split of the functional API (:func:`biasamp._core.crossfit.crossfit_splits`),
    applied to the batch: BiasAmp→ draws one split per direction from the
    roles it reads, BiasAmp_MALS one from its four roles.
    """
    if not settings.folds:
        return []
    if settings.metric == "directional":
        if check_only:
            return []
        given = [d for d in _SPLITS if _NEEDS[d] in by_role]
        splits = crossfit_splits(by_role, [_SPLITS[d][0] + _SPLITS[d][1] for d in given],
                                 **split_keywords(weights, units),
                                 random_state=settings.split_seed)
        found = dict(zip(given, splits))
        return [found.get(d) for d in _SPLITS]
    if by_role.get("attr") is None or by_role.get("task") is None:
        if settings.cross_fit:
            raise ValueError("cross_fit=True: the indicator is cross-fitted over the test rows, so every batch needs "
                             "the test ground truth attr and task (or construct the accumulator with cross_fit=None "
                             "and give a training set)")
        return [None]  # a training set must give the indicator (compute() says so otherwise)
    if check_only:
        return []
    # unstratified, as bias_amp_mals: a share statistic's two folds must not share the groups' sizes
    return [crossfit_folds(by_role["attr"], [by_role["task"], by_role["task_pred"]], attr_pred=by_role["attr_pred"],
                           **split_keywords(weights, units),
                           random_state=settings.split_seed, stratified=False)]


def _count_folds(settings: CooccurrenceSettings, target: np.ndarray, left: list, right: list,
                 weights: np.ndarray | None, shares: list) -> None:
    """Add the Gram table of every fold of every split into ``target`` (split, fold, *gram), as the function counts
    them: each fold's rows, weighted by their share of the fold."""
    ka, kt = len(settings.attr_classes), len(settings.task_classes)
    for s, share in enumerate(shares):
        if share is None:
            continue
        for f, part in enumerate(fold_weights(share, weights)):
            idx = np.flatnonzero(part > 0)
            if idx.size == 0:
                continue
            fold = CooccurrenceCounts.from_encoded([take_rows(m, idx) for m in left],
                                                   [take_rows(m, idx) for m in right], pairs=settings.pairs,
                                                   weights=None if weights is None else part[idx])
            _embed(target[s, f], fold, ka, kt)


def _three_way(settings: CooccurrenceSettings, agree: np.ndarray, a: dict, t: dict, n: int,
               weights: np.ndarray | None, replicate: bool, shares: list) -> tuple | None:
    """Add the three-way counts (for the tests) into ``agree``; the Poisson replicate rows when ``replicate``.

    With folds (``shares``) a row's left vector sits in the block of its fold
    of every split (:func:`fold_rows`).
    """
    from scipy import sparse

    from biasamp._engine.resample import augmented, label_rows

    ka, kt = len(settings.attr_classes), len(settings.task_classes)
    idx = np.arange(n)
    rows = {r: label_rows(m, idx) for r, m in {**a, **t}.items()}
    scale = sparse.diags(weights) if weights is not None else None
    if "attr" in rows and "task" in rows:
        attr_rows = rows["attr"] if scale is None else sparse.csr_matrix(scale @ rows["attr"])
        if "task_pred" in rows:
            agree[0] += np.asarray((attr_rows.T @ rows["task"].multiply(rows["task_pred"])).todense())
        if "attr_pred" in rows:
            agree[1] += np.asarray((attr_rows.multiply(rows["attr_pred"]).T @ rows["task"]).todense())
    if not replicate:
        return None
    zero_a, zero_t = sparse.csr_matrix((n, ka)), sparse.csr_matrix((n, kt))
    left = augmented([rows.get(r, zero_a) for r in ATTR_ROLES], n)
    if settings.folds:
        left = fold_rows(left, shares, weights, missing_in_fold0=settings.metric == "mals")
    elif scale is not None:  # a row's replicate weight multiplies its sample weight
        left = sparse.csr_matrix(scale @ left)
    right = augmented([rows.get(r, zero_t) for r in TASK_ROLES], n)
    return left, right


def count_train(settings: CooccurrenceSettings, roles: Mapping[str, Any]) -> CooccurrenceState:
    """One batch of training ground truth (``attr_train``, ``task_train``): the table ``[1|A]ᵀ [1|T]``."""
    if settings.train is not None:
        raise ValueError("this accumulator was given fixed train counts; update_train() would add to them")
    stream_check_train(settings.cross_fit)
    enc_a, enc_t, weights, rows = train_batch(roles, settings.missing, settings.attr_classes, settings.reading)
    counts = CooccurrenceCounts.from_encoded([replace(enc_a, name="attr")], [replace(enc_t, name="task")],
                                             weights=weights)
    state = start(settings)
    state.train_gram += counts.gram
    return replace(state, train_rows=rows, weighted=weights is not None)


# --------------------------------------------------------------------------- #
# reading
# --------------------------------------------------------------------------- #
def counts_of(settings: CooccurrenceSettings, state: CooccurrenceState) -> CooccurrenceCounts:
    """The test count table of the roles seen."""
    if state.roles is None:
        raise ValueError("no batch was counted: call update() first")
    every = {(a, t) for a in ATTR_ROLES for t in TASK_ROLES}
    full = CooccurrenceCounts(
        settings.attr_classes, settings.task_classes, ATTR_ROLES, TASK_ROLES, state.gram.copy(),
        state.soft_roles, frozenset(every - settings.pairs), state.weighted, state.rows, state.predictions,
    )
    return full.restrict(*state.roles)


def train_counts_of(settings: CooccurrenceSettings, state: CooccurrenceState) -> tuple[CooccurrenceCounts, str]:
    """The training table the metric reads and where it came from (``"train"``/``"test"``)."""
    if settings.train is not None:
        return settings.train, "train"
    if state.train_gram[0, 0] > 0:
        return CooccurrenceCounts(
            settings.attr_classes, settings.task_classes, ("attr",), ("task",), state.train_gram.copy(),
            weighted=state.weighted, rows=state.train_rows,
        ), "train"
    test = counts_of(settings, state)
    if not test.has("attr", "task"):
        raise ValueError(
            "no training counts: pass train=, call update_train(), or give the test ground truth "
            "attr and task in update()"
        )
    return test.restrict(["attr"], ["task"]), "test"


def cross_fitted(settings: CooccurrenceSettings, state: CooccurrenceState) -> bool:
    """Whether :func:`compute_directional` / :func:`compute_mals` cross-fit: folds counted, no training rows."""
    return settings.folds and not state.train_gram[0, 0] > 0


def _folds(settings: CooccurrenceSettings, state: CooccurrenceState) -> np.ndarray:
    """The Gram table of each fold of each split ``(split, fold, *gram)``: the row set split as the function splits
    all rows (unweighted: the distinct rows with their multiplicities as units), counted once per row set."""
    def fill(tables: np.ndarray) -> None:
        assert state.rowset is not None
        roles, weights = state.rowset.rows()
        _count_folds(settings, tables, [roles[r] for r in ATTR_ROLES if r in roles],
                     [roles[r] for r in TASK_ROLES if r in roles], weights,
                     _split(settings, roles, weights, units=state.rowset.in_units))

    return fold_tables(state.rowset, (settings.n_splits, 2, *_gram_shape(settings)), fill)


def fold_counts(settings: CooccurrenceSettings, state: CooccurrenceState,
                split: int) -> tuple[CooccurrenceCounts, CooccurrenceCounts]:
    """The two folds of split ``split`` as count tables of every role (restrict them to a statistic's roles)."""
    every = {(a, t) for a in ATTR_ROLES for t in TASK_ROLES}
    folds = _folds(settings, state)
    return tuple(CooccurrenceCounts(settings.attr_classes, settings.task_classes, ATTR_ROLES, TASK_ROLES,
                                    folds[split, f].copy(), state.soft_roles, frozenset(every - settings.pairs),
                                    state.weighted, None, state.predictions)
                 for f in (0, 1))  # type: ignore[return-value]


def _given(state: CooccurrenceState) -> list[str]:
    """BiasAmp→'s directions whose prediction the batches carried."""
    assert state.roles is not None
    return [d for d in _SPLITS if _NEEDS[d] in state.roles[0] + state.roles[1]]


def counted(settings: CooccurrenceSettings, state: CooccurrenceState) -> Counted:
    """The counted call of the state: what the families' ``count`` hooks give a call of every row counted.

    The training side is the training counts (fixed, counted or the test
    ground truth standing in for them), or, cross-fitting, each statistic's
    :class:`~biasamp.cooccurrence._metrics.Folds` (BiasAmp→: one per
    direction given) with the signs of each fold's ground truth; ``test``:
    the test counts of the roles seen (BiasAmp_MALS: of the predictions). A
    stream keeps tables, not rows: no encoded matrices, weights or fold of
    every row.
    """
    test = counts_of(settings, state)
    train: Any
    train, source = train_counts_of(settings, state)
    cross_fit = cross_fitted(settings, state)
    if settings.metric == "mals":
        test = test.restrict(["attr_pred"], ["task_pred"])
    if cross_fit and settings.metric == "directional":
        train = {d: _fold_pair(settings, state, list(_SPLITS).index(d), _SPLITS[d]) for d in _given(state)}
    elif cross_fit:
        train = _fold_pair(settings, state, 0, (("attr", "attr_pred"), ("task", "task_pred")))
    return Counted(train, test, None, None, None, source, state.predictions, settings.reading.said, cross_fit)


def _fold_pair(settings: CooccurrenceSettings, state: CooccurrenceState, split: int, roles: tuple) -> Folds:
    """The two folds of split ``split`` (their tables of ``roles``, the ``(attribute, task)`` roles a statistic
    reads) and the signs of each fold's ground truth."""
    tests = tuple(c.restrict(*roles) for c in fold_counts(settings, state, split))
    return Folds(None, tests, tuple(c.restrict(["attr"], ["task"]) for c in tests))


def compute_directional(settings: CooccurrenceSettings, state: CooccurrenceState) -> DirectionalBiasAmpResult:
    """BiasAmp→ of the state: the family's compute hook
    (:func:`~biasamp.cooccurrence._metrics.directional_compute`) on its :func:`counted` call."""
    assert isinstance(settings.options, DirectionalOptions)  # the settings of metric="directional" build them
    return directional_compute(counted(settings, state), settings.options)


def compute_mals(settings: CooccurrenceSettings, state: CooccurrenceState) -> MALSResult:
    """BiasAmp_MALS of the state: the family's compute hook
    (:func:`~biasamp.cooccurrence._metrics.mals_compute`) on its :func:`counted` call."""
    return mals_compute(counted(settings, state), settings.options)


# --------------------------------------------------------------------------- #
# the streamed bootstrap
# --------------------------------------------------------------------------- #
def _blocks(settings: CooccurrenceSettings, a_roles: tuple, t_roles: tuple) -> tuple[np.ndarray, np.ndarray]:
    ka, kt = len(settings.attr_classes), len(settings.task_classes)
    rows_layout = _layout(ATTR_ROLES, [ka, ka])
    cols_layout = _layout(TASK_ROLES, [kt, kt])
    rows = np.concatenate([[0]] + [np.arange(*rows_layout[r].indices(1 + 2 * ka)) for r in a_roles])
    cols = np.concatenate([[0]] + [np.arange(*cols_layout[r].indices(1 + 2 * kt)) for r in t_roles])
    return rows, cols


def _merged(settings: CooccurrenceSettings, boot: np.ndarray, split: int) -> np.ndarray:
    """Replicate tables laid out per fold, as ordinary ones: the two folds of ``split`` added (every row)."""
    if not settings.folds:
        return boot
    w = _gram_shape(settings)[0]
    return boot[:, 2 * split * w:(2 * split + 1) * w] + boot[:, (2 * split + 1) * w:(2 * split + 2) * w]


def resample_directional(settings: CooccurrenceSettings, state: CooccurrenceState, boot: np.ndarray) -> tuple:
    """BiasAmp→'s plan on the Gram table of the roles seen and on its replicate tables.

    Cross-fitting, the tables hold the folds of each direction's split side by
    side and the plan holds the estimate's fold signs fixed in every
    replicate (as :func:`biasamp.bootstrap` does).
    """
    from biasamp.cooccurrence._metrics import correlation_sign
    from biasamp.cooccurrence._plan import directional_evaluator

    point = compute_directional(settings, state)
    test = counts_of(settings, state)
    train, _ = train_counts_of(settings, state)
    assert state.roles is not None  # compute() raised otherwise
    a_roles, t_roles = state.roles
    rows, cols = _blocks(settings, a_roles, t_roles)
    agree = {"A->T": state.agree[0], "T->A": state.agree[1]} if test.has("attr", "task") else None
    classes = (settings.attr_classes, settings.task_classes)
    given = _given(state)
    if cross_fitted(settings, state):
        w = _gram_shape(settings)[0]
        blocks = [(list(_SPLITS).index(d), f) for d in given for f in (0, 1)]
        laid = np.concatenate([(2 * s + f) * w + rows for s, f in blocks])
        full = np.concatenate([_folds(settings, state)[s, f][np.ix_(rows, cols)] for s, f in blocks])
        plan = directional_evaluator(point, classes, None, full, (a_roles, t_roles), agree, bool(state.soft_roles),
                                     folds=(len(rows), False, given))
        plan.notes.append(STREAM_SPLIT_NOTE)
        return plan, full, boot[:, laid[:, None], cols[None, :]]
    full = state.gram[np.ix_(rows, cols)]
    reps = _merged(settings, boot, list(_SPLITS).index(given[0]))[:, rows][:, :, cols]
    plan = directional_evaluator(point, classes, correlation_sign(train), full, (a_roles, t_roles), agree,
                                 bool(state.soft_roles))
    return plan, full, reps


def resample_mals(settings: CooccurrenceSettings, state: CooccurrenceState, boot: np.ndarray) -> tuple:
    """BiasAmp_MALS's plan on the predictions' Gram table and on its replicate tables (cross-fitting: both folds'
    ``[1|A|Â]ᵀ[1|T|T̂]`` side by side, the estimate's fold indicators held fixed)."""
    from biasamp._engine.pair_terms import _as_count
    from biasamp.cooccurrence._plan import mals_evaluator

    point = compute_mals(settings, state)
    train, _ = train_counts_of(settings, state)
    classes = (settings.attr_classes, settings.task_classes)
    if cross_fitted(settings, state):
        full = np.concatenate([_folds(settings, state)[0, 0], _folds(settings, state)[0, 1]])
        plan = mals_evaluator(point, classes, None, folds=_gram_shape(settings)[0],
                              group_options=settings.group_options)
        plan.notes.append(STREAM_SPLIT_NOTE)
        return plan, full, boot
    rows, cols = _blocks(settings, ("attr_pred",), ("task_pred",))
    full = state.gram[np.ix_(rows, cols)]
    reps = _merged(settings, boot, 0)[:, rows][:, :, cols]
    return mals_evaluator(point, classes, _as_count(train.cross("attr", "task"))), full, reps



def dealt_rows(settings: CooccurrenceSettings, state: CooccurrenceState) -> DealtRows | None:
    """The row set's rows as the streamed bootstrap deals them at the end (``cross_fit`` not False): the table
    vectors ``[1|A|Â]``, ``[1|T|T̂]``, the weights and each split's fold-0 share (once a training set was counted,
    no cross-fitting: every row in fold 0, the blocks are read added). None without a row set."""
    from scipy import sparse

    from biasamp._engine.resample import augmented, label_rows

    if state.rowset is None:
        return None
    roles, given, keys = state.rowset.keyed_rows()
    n = next(iter(roles.values())).n_rows
    weights = np.ones(n) if given is None else given
    idx = np.arange(n)
    ka, kt = len(settings.attr_classes), len(settings.task_classes)
    rows = {r: label_rows(m, idx) for r, m in roles.items()}
    left = augmented([rows.get(r, sparse.csr_matrix((n, ka))) for r in ATTR_ROLES], n)
    right = augmented([rows.get(r, sparse.csr_matrix((n, kt))) for r in TASK_ROLES], n)
    in_units = state.rowset.in_units
    shares = _split(settings, roles, given, units=in_units) if cross_fitted(settings, state) else \
        [weights] * settings.n_splits
    return DealtRows(left, right, weights, shares, keys, whole=not in_units)


_CLASSES = {"attr": ClassList("attr_classes", ("attr", "attr_train")),
            "task": ClassList("task_classes", ("task", "task_train"))}

DIRECTIONAL_STREAM = Streaming(
    classes=_CLASSES, settings=directional_settings, start=start, count=count, compute=compute_directional,
    cells=cells, resample=resample_directional, count_train=count_train, dealt_rows=dealt_rows,
    late_replicates=keeps_rows,
)
MALS_STREAM = Streaming(
    classes=_CLASSES, settings=mals_settings, start=start, count=count, compute=compute_mals,
    cells=cells, resample=resample_mals, count_train=count_train, dealt_rows=dealt_rows,
    late_replicates=keeps_rows,
)
