"""Streamed counting of BiasAmp→ and BiasAmp_MALS: the hooks of their declarations (:class:`biasamp._family.Streaming`).

The state is the Gram table ``[1|A|Â]ᵀ [1|T|T̂]`` of the test rows (see
:class:`~biasamp.CooccurrenceCounts`), the ground-truth table ``[1|A]ᵀ [1|T]``
of the training rows, and the three-way counts ``#(a, t∧t̂)``, ``#(a∧â, t)``
of the McNemar tests, each summed over batches. Both families count the same
tables; BiasAmp→ counts the cross blocks of its two directions, BiasAmp_MALS
the block of the predictions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from biasamp._core.policy import (
    check_include_small_groups,
    check_min_group_size,
    check_soft,
    check_threshold,
    harden_roles,
    joined,
)
from biasamp._core.rows import RowFilter, check_missing, select_rows
from biasamp._engine.state import (
    CountState,
    ReplicateRows,
    Settings,
    any_of,
    arguments,
    meta,
    setting,
    sum_filters,
    table,
    train_batch,
)
from biasamp._family import ClassList, Streaming
from biasamp.cooccurrence._counts import ATTR_ROLES, TASK_ROLES, CooccurrenceCounts, _encode_side, _layout
from biasamp.cooccurrence._metrics import (
    _DIRECTIONAL_PAIRS,
    DirectionalBiasAmpResult,
    MALSResult,
    directional_from_counts,
    mals_from_counts,
)

__all__ = ["DIRECTIONAL_STREAM", "MALS_STREAM", "CooccurrenceSettings", "CooccurrenceState", "counts_of",
           "train_counts_of"]

METRICS = ("directional", "mals")
_MALS_PAIRS = frozenset({("attr", "task"), ("attr_pred", "task_pred")})


def _same_train(a: CooccurrenceCounts | None, b: CooccurrenceCounts | None) -> bool:
    if a is None or b is None:
        return a is b
    return bool(np.array_equal(a.gram, b.gram))


@dataclass(frozen=True, eq=False)
class CooccurrenceSettings(Settings):
    """Class lists and options of a co-occurrence accumulator (``metric``: the family, BiasAmp→ or MALS)."""

    attr_classes: tuple = setting()
    task_classes: tuple = setting()
    metric: str = setting()
    threshold: float = setting()
    soft: str = setting()
    group_options: dict = setting()
    train: CooccurrenceCounts | None = setting(label="fixed train counts", show=False, same=_same_train)
    missing: str = setting()

    @property
    def pairs(self) -> frozenset:
        """The (attribute role, task role) cross blocks the family reads."""
        return _DIRECTIONAL_PAIRS if self.metric == "directional" else _MALS_PAIRS


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


# --------------------------------------------------------------------------- #
# settings and the empty state
# --------------------------------------------------------------------------- #
def _settings(metric: str, classes: Mapping[str, tuple], *, train: CooccurrenceCounts | None = None,
              missing: str = "raise", threshold: float = 0.5, soft: str = "threshold", min_group_size: int = 30,
              include_small_groups: bool = False) -> CooccurrenceSettings:
    threshold, soft = check_threshold(threshold), check_soft(soft)
    group_options = {"min_group_size": check_min_group_size(min_group_size),
                     "include_small_groups": check_include_small_groups(include_small_groups)}
    attr_classes, task_classes = classes["attr"], classes["task"]
    missing = check_missing(missing)
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
    return CooccurrenceSettings(attr_classes, task_classes, metric, threshold, soft, group_options, train, missing)


def directional_settings(classes: Mapping[str, tuple], **options: Any) -> CooccurrenceSettings:
    """The settings of a BiasAmp→ accumulator (the options of :class:`.CooccurrenceAccumulator`)."""
    return _settings("directional", classes, **options)


def mals_settings(classes: Mapping[str, tuple], **options: Any) -> CooccurrenceSettings:
    """The settings of a BiasAmp_MALS accumulator (the options of :class:`.CooccurrenceAccumulator`)."""
    return _settings("mals", classes, **options)


def cells(settings: CooccurrenceSettings) -> tuple[int, int]:
    """The shape of the Gram table ``[1|A|Â]ᵀ [1|T|T̂]`` (and of one replicate table)."""
    return 1 + 2 * len(settings.attr_classes), 1 + 2 * len(settings.task_classes)


def start(settings: CooccurrenceSettings) -> CooccurrenceState:
    """The empty state (zero tables)."""
    ka, kt = len(settings.attr_classes), len(settings.task_classes)
    return CooccurrenceState(gram=np.zeros(cells(settings), dtype=np.float64),
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
    t = _encode_side(arrays["task"], arrays["task_pred"], "task", settings.task_classes, True)
    a, said_a = harden_roles(a, (("attr", "attr_pred"),), settings.soft, settings.threshold)
    t, said_t = harden_roles(t, (("task", "task_pred"),), settings.soft, settings.threshold)
    left = [a[r] for r in ATTR_ROLES if r in a]
    right = [t[r] for r in TASK_ROLES if r in t]
    counts = CooccurrenceCounts.from_encoded(left, right, pairs=settings.pairs, weights=weights, rows=rows)
    state = start(settings)
    ka, kt = len(settings.attr_classes), len(settings.task_classes)
    _embed(state.gram, counts, ka, kt)
    n = next(m.n_rows for m in (*left, *right))
    boot = _three_way(settings, state.agree, a, t, n, weights, replicate)
    state = replace(state, roles=(counts.attr_roles, counts.task_roles), soft_roles=counts.soft_roles,
                    predictions=joined("hard", said_a, said_t), weighted=weights is not None, rows=rows)
    if boot is None:
        return state, None
    return state, ReplicateRows(boot[0], boot[1], n, arrays["row_ids"])


def _three_way(settings: CooccurrenceSettings, agree: np.ndarray, a: dict, t: dict, n: int,
               weights: np.ndarray | None, replicate: bool) -> tuple | None:
    """Add the three-way counts (for the tests) into ``agree``; the Poisson replicate rows when ``replicate``."""
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
    if scale is not None:  # a row's replicate weight multiplies its sample weight
        left = sparse.csr_matrix(scale @ left)
    right = augmented([rows.get(r, zero_t) for r in TASK_ROLES], n)
    return left, right


def count_train(settings: CooccurrenceSettings, roles: Mapping[str, Any]) -> CooccurrenceState:
    """One batch of training ground truth (``attr_train``, ``task_train``): the table ``[1|A]ᵀ [1|T]``."""
    if settings.train is not None:
        raise ValueError("this accumulator was given fixed train counts; update_train() would add to them")
    enc_a, enc_t, weights, rows = train_batch(roles, settings.missing, settings.attr_classes, settings.task_classes)
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
        state.soft_roles, frozenset(every - settings.pairs), state.weighted, state.rows,
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


def compute_directional(settings: CooccurrenceSettings, state: CooccurrenceState) -> DirectionalBiasAmpResult:
    """BiasAmp→ of the counts (:func:`~biasamp.cooccurrence._metrics.directional_from_counts`)."""
    test = counts_of(settings, state)
    train, source = train_counts_of(settings, state)
    res = directional_from_counts(train, test, train_source=source, **settings.group_options)
    return dataclasses.replace(res, predictions=state.predictions)


def compute_mals(settings: CooccurrenceSettings, state: CooccurrenceState) -> MALSResult:
    """BiasAmp_MALS of the counts (:func:`~biasamp.cooccurrence._metrics.mals_from_counts`)."""
    test = counts_of(settings, state)
    train, _ = train_counts_of(settings, state)
    res = mals_from_counts(train, test.restrict(["attr_pred"], ["task_pred"]), **settings.group_options)
    return dataclasses.replace(res, predictions=state.predictions)


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


def resample_directional(settings: CooccurrenceSettings, state: CooccurrenceState, boot: np.ndarray) -> tuple:
    """BiasAmp→'s plan on the Gram table of the roles seen and on its replicate tables."""
    from biasamp.cooccurrence._metrics import correlation_sign
    from biasamp.cooccurrence._plan import directional_evaluator

    point = compute_directional(settings, state)
    test = counts_of(settings, state)
    train, _ = train_counts_of(settings, state)
    assert state.roles is not None  # compute() raised otherwise
    a_roles, t_roles = state.roles
    rows, cols = _blocks(settings, a_roles, t_roles)
    full = state.gram[np.ix_(rows, cols)]
    reps = boot[:, rows][:, :, cols]
    agree = {"A->T": state.agree[0], "T->A": state.agree[1]} if test.has("attr", "task") else None
    plan = directional_evaluator(point, (settings.attr_classes, settings.task_classes), correlation_sign(train),
                                 full, (a_roles, t_roles), agree, bool(state.soft_roles))
    return plan, full, reps


def resample_mals(settings: CooccurrenceSettings, state: CooccurrenceState, boot: np.ndarray) -> tuple:
    """BiasAmp_MALS's plan on the predictions' Gram table and on its replicate tables."""
    from biasamp.cooccurrence._metrics import _as_count
    from biasamp.cooccurrence._plan import mals_evaluator

    point = compute_mals(settings, state)
    train, _ = train_counts_of(settings, state)
    rows, cols = _blocks(settings, ("attr_pred",), ("task_pred",))
    full = state.gram[np.ix_(rows, cols)]
    reps = boot[:, rows][:, :, cols]
    classes = (settings.attr_classes, settings.task_classes)
    return mals_evaluator(point, classes, _as_count(train.cross("attr", "task"))), full, reps


_CLASSES = {"attr": ClassList("attr_classes", ("attr", "attr_train")),
            "task": ClassList("task_classes", ("task", "task_train"))}

DIRECTIONAL_STREAM = Streaming(
    classes=_CLASSES, settings=directional_settings, start=start, count=count, compute=compute_directional,
    cells=cells, resample=resample_directional, count_train=count_train,
)
MALS_STREAM = Streaming(
    classes=_CLASSES, settings=mals_settings, start=start, count=count, compute=compute_mals,
    cells=cells, resample=resample_mals, count_train=count_train,
)
