"""Streaming accumulators: ``update`` / ``merge`` / ``compute`` for the count-based families.

Every co-occurrence, multi-attribute and fairness metric of biasamp is a pure
function of small count tables that add ("counts first"). The
accumulators below hold those tables and nothing else, so that data can be
counted batch by batch (``update()``), on several processes or Dask
partitions (``merge()``, ``a + b``), or on several ``torch.distributed``
ranks (``sync()``), and the metric is computed once at the end
(``compute()``). The results are the result types of the functional API, and
equal to it: for hard labels the counts are exact integers (sums of 0/1 in
float64 or int64), so one shot, k batches and any merge order give
bit-identical results; soft predictions (expected counts) agree to rounding
(1e-12).

* :class:`CooccurrenceAccumulator`: BiasAmp→ (both directions) or
  BiasAmp_MALS, from :class:`~biasamp.CooccurrenceCounts` tables;
* :class:`FairnessAccumulator`: the seven group fairness metrics, from
  :class:`~biasamp.ConfusionCounts`;
* :class:`MultiAttributeAccumulator`: Multi_MALS and Multi→, from
  :class:`~biasamp.MultiAttributeCounts`. The combinations M must be known
  before counting: fix them (one pass), or run two passes (``collect()``
  the training task-label sets, ``freeze()``, then ``update()``).

Conventions shared by all three:

* **Class lists are fixed up front** (a batch need not show every class).
  An ``int`` ``k`` is shorthand for the classes ``0..k-1`` (the default
  names of indicator-matrix columns). A label outside the list raises
  ``ValueError`` naming the argument.
* **Every batch carries the same arguments**: the first ``update()`` fixes
  which predictions are counted; a later batch with other arguments raises.
* ``merge(other)`` adds ``other``'s tables into ``self`` **in place** and
  returns ``self``; ``a + b`` returns a new accumulator and leaves both
  unchanged. An accumulator that has seen no batch is the identity.
* The state is a few numpy arrays: accumulators pickle, deep-copy and travel
  between processes (joblib, Dask, ``multiprocessing``) by default.
* ``sync()`` returns a new accumulator holding the sum over all
  ``torch.distributed`` ranks (an all-reduce of the tables); without an
  initialised process group it returns a copy. torch is imported only there.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import numbers
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from biasamp._core.deprecation import renamed_arguments
from biasamp._core.labels import check_consistent_length, encode_labels, to_numpy
from biasamp._core.policy import (
    check_include_small_groups,
    check_min_group_size,
    check_soft,
    check_threshold,
    harden_roles,
    joined,
)
from biasamp._core.rows import add_filters, check_missing, select_rows
from biasamp.cooccurrence._counts import (
    ATTR_ROLES,
    TASK_ROLES,
    CooccurrenceCounts,
    _encode_side,
    _layout,
)
from biasamp.cooccurrence._metrics import (
    _DIRECTIONAL_PAIRS,
    DirectionalBiasAmpResult,
    MALSResult,
    directional_from_counts,
    mals_from_counts,
)
from biasamp.exceptions import UndefinedPairWarning

if TYPE_CHECKING:
    from typing_extensions import Self

    from biasamp._core.rows import RowFilter
from biasamp.fairness._metrics import (
    METRICS,
    ConfusionCounts,
    FairnessResult,
    _check_metrics,
    fairness_from_counts,
)
from biasamp.multiattribute._metrics import (
    _CHUNK_BYTES,
    _MODES,
    MultiAttributeCounts,
    MultiBiasAmpResult,
    _check_int,
    _column_bitsets,
    _containment,
    _counts_by_group,
    _frequent_sets,
    _group_codes,
    _group_totals,
    _Grouping,
    _label_blocks,
    _padded,
    _sized_combinations,
    multi_from_counts,
)

__all__ = ["CooccurrenceAccumulator", "DifferentialAccumulator", "FairnessAccumulator", "MultiAttributeAccumulator"]


# --------------------------------------------------------------------------- #
# shared machinery
# --------------------------------------------------------------------------- #

def accumulator_for(key: str) -> type:
    """The accumulator class of the registered family ``key`` (the subclass that declares it)."""
    found = [c for c in _subclasses(_Accumulator) if key in c.__dict__.get("families", {})]
    if not found:
        raise KeyError(f"no accumulator declares the family {key!r}")
    return found[0]


def _subclasses(cls: type) -> list:
    out: list[type] = []
    subs: list[type] = cls.__subclasses__()
    for sub in subs:
        out += [sub, *_subclasses(sub)]
    return out


def _class_list(value: Any, name: str) -> tuple:
    """A fixed class list: a sequence of names, or an int ``k`` for ``0..k-1``."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        if value < 1:
            raise ValueError(f"{name} must be a positive number of classes or a list of class names, got {value}")
        return tuple(range(int(value)))
    if value is None:
        raise TypeError(
            f"{name} is required: accumulators count batches that may not show every class, so the "
            "class list is fixed up front (a list of names, or an int k for 0..k-1)"
        )
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise TypeError(f"{name} must be a list of class names or an int, got {type(value).__name__}")
    out = tuple(v.item() if isinstance(v, np.generic) else v for v in value)
    if not out:
        raise ValueError(f"{name} is empty")
    if len(set(out)) != len(out):
        raise ValueError(f"{name} has duplicate entries: {list(out)[:20]!r}")
    return out


class _Accumulator:
    """Base: tables named in ``_TABLES`` add; everything else is metadata.

    With ``n_boot > 0`` an accumulator also holds ``boot``: ``n_boot``
    replicate tables of a Poisson bootstrap. Every row gets, in every
    replicate, a Poisson(1) weight that is a function of (row id, replicate,
    seed) only, so replicate tables of batches, partitions and ranks add like
    the count tables (:func:`biasamp._engine.resample.poisson_weights`).
    """

    _TABLES: tuple[str, ...] = ()
    n_boot: int = 0
    boot: Any = None
    boot_seed: int | None = None
    #: RowFilter sums of the test and training batches (None before the first batch)
    rows: RowFilter | None = None
    train_rows: RowFilter | None = None
    #: the registered families this class accumulates: family key -> its fixed constructor options
    families: dict = {}

    # ------------------------------------------------- the family protocol (by label role)
    @classmethod
    def for_family(cls, key: str, classes: dict, **options: Any) -> _Accumulator:  # pragma: no cover - abstract
        """An accumulator of family ``key`` for the class lists ``classes`` (``{"attr": ..., "task": ...}``)."""
        raise NotImplementedError

    def prepass(self, roles: dict) -> _Accumulator:
        """A family's first pass over a batch given by label role (default: none)."""
        return self

    def end_prepass(self) -> _Accumulator:
        """Close the first pass (default: nothing to close)."""
        return self

    def update_roles(self, roles: dict) -> _Accumulator:  # pragma: no cover - abstract
        """Count one batch given by label role (``attr``, ``task``, ``*_pred``, ``*_train``, ``sample_weight``)."""
        raise NotImplementedError

    def compute(self) -> Any:  # pragma: no cover - abstract
        """The functional API's result of the counts so far."""
        raise NotImplementedError

    def reset(self) -> _Accumulator:  # pragma: no cover - abstract
        """Zero the counts; returns ``self``."""
        raise NotImplementedError

    def _init_bootstrap(self, n_boot: int, random_state: Any, stream: int) -> None:
        from biasamp._engine.resample import check_random_state, seed_int

        check_random_state(random_state)  # also without a bootstrap: a bad seed is a bad argument

        if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 0 or n_boot == 1:
            raise ValueError(f"n_boot must be 0 (no intervals) or an integer >= 2, got {n_boot!r}")
        from biasamp._engine.runs import MAX_N_BOOT

        if n_boot > MAX_N_BOOT:
            raise ValueError(f"n_boot must be at most {MAX_N_BOOT:,} (the replicates are kept in memory), got "
                             f"{n_boot:,}")
        if isinstance(stream, bool) or not isinstance(stream, (int, np.integer)) or not 0 <= stream < 2**23:
            raise ValueError(f"stream must be an integer in [0, 2**23), got {stream!r}")
        self.n_boot = int(n_boot)
        self.boot_seed = seed_int(random_state) if self.n_boot else None
        self.stream = int(stream)
        self.rows_seen = 0

    def _boot_update(self, left: Any, right: Any, n_rows: int, row_ids: Any) -> None:
        """Add the Poisson replicate tables of one batch (rows ``left``/``right``, sparse)."""
        if not self.n_boot:
            return
        from biasamp._engine.resample import poisson_tables

        if row_ids is None:
            ids = (np.uint64(self.stream) << np.uint64(40)) + np.arange(
                self.rows_seen, self.rows_seen + n_rows, dtype=np.uint64)
        else:
            ids = np.asarray(row_ids)
            if ids.ndim != 1 or len(ids) != n_rows or ids.dtype.kind not in "iu" or (ids < 0).any():
                raise ValueError(f"row_ids must be {n_rows} non-negative integers (one per row of the batch)")
            ids = ids.astype(np.uint64)
        assert self.boot_seed is not None  # set with n_boot > 0 by _init_bootstrap
        self.boot = self.boot + poisson_tables(left, right, ids, self.n_boot, self.boot_seed)
        self.rows_seen += n_rows

    def bootstrap(self, *, level: float = 0.95, ci_method: str = "auto", p_adjust: str = "holm") -> Any:
        """Intervals and tests of the accumulated metric from the Poisson replicate tables.

        Needs ``n_boot > 0`` at construction. ``ci_method`` as in
        :func:`biasamp.bootstrap`, except ``"bca"`` (it needs the distinct rows,
        which a stream does not keep): ``"auto"`` uses the max-t band for the
        max/min/absolute-value statistics and the percentile interval for the
        smooth ones.

        Returns
        -------
        BootstrapResult
        """
        from biasamp._engine.bootstrap import fill_replicates, summarize
        from biasamp._engine.options import check_ci_method, check_p_adjust
        from biasamp._engine.runs import _check_level

        if not self.n_boot:
            raise ValueError("this accumulator keeps no replicates: construct it with n_boot >= 2")
        level = _check_level(level)
        check_ci_method(ci_method)
        check_p_adjust(p_adjust)
        if ci_method == "bca":
            raise ValueError("ci_method='bca' needs the distinct rows (the jackknife), which a stream does not keep")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedPairWarning)
            plan, full, reps = self._boot_plan()
            stats = plan.statistics(full[None])
            fill_replicates(plan, stats, [(slice(0, self.n_boot), reps)], self.n_boot)
        return summarize(plan, stats, n_boot=self.n_boot, level=level, ci_method=ci_method, p_adjust=p_adjust,
                         seed=np.random.SeedSequence(self.boot_seed), stacklevel=3)

    def _boot_plan(self):  # pragma: no cover - abstract
        raise NotImplementedError

    # subclasses implement _merge_meta(other): check compatibility, then combine flags in place
    def _merge_meta(self, other: Self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _table_names(self) -> tuple[str, ...]:
        return self._TABLES + (("boot",) if self.n_boot else ())

    def merge(self, other: _Accumulator) -> _Accumulator:
        """Add the counts of ``other`` into this accumulator (in place) and return it.

        Both must be of the same type with the same class lists and settings;
        ``other`` is left unchanged. Use ``a + b`` for a new accumulator.
        """
        if type(other) is not type(self):
            raise TypeError(f"cannot merge a {type(self).__name__} with a {type(other).__name__}")
        if (self.n_boot, getattr(self, "boot_seed", None)) != (other.n_boot, getattr(other, "boot_seed", None)):
            raise ValueError("cannot merge accumulators with different n_boot or random_state (bootstrap seeds)")
        self._merge_meta(other)
        for name in self._table_names():
            setattr(self, name, getattr(self, name) + getattr(other, name))
        return self

    def __add__(self, other: Any) -> _Accumulator:
        if type(other) is not type(self):
            return NotImplemented
        return self.copy().merge(other)

    def __radd__(self, other: Any) -> _Accumulator:
        if isinstance(other, int) and other == 0:  # lets sum() work
            return self.copy()
        return NotImplemented

    def copy(self) -> _Accumulator:
        """An independent copy (tables included)."""
        return copy.deepcopy(self)

    def _shell(self) -> _Accumulator:
        """This accumulator's metadata without its tables (what :meth:`sync` gathers)."""
        out = copy.copy(self)
        for name in self._table_names():
            setattr(out, name, None)
        return copy.deepcopy(out)

    def sync(self, group: Any = None) -> _Accumulator:
        """A new accumulator holding the counts of every ``torch.distributed`` rank.

        When a default process group is initialised, the metadata (roles seen,
        soft flags) is gathered and checked, and every count table is
        all-reduced (summed) over the ranks of ``group`` (default: the world);
        every rank must call :meth:`sync`. Without an initialised process group
        this returns a copy. This accumulator is left unchanged, so calling
        ``sync()`` twice never double-counts.

        Parameters
        ----------
        group : torch.distributed.ProcessGroup, optional
            The ranks to reduce over.

        Returns
        -------
        accumulator of the same type
        """
        from biasamp._engine.torch_dist import sync_accumulator

        return sync_accumulator(self, group=group)


def _sum_filters(mine, theirs):
    """Row filters of two accumulators: their sum, where one that has seen nothing (None) is the identity."""
    if mine is None:
        return theirs
    if theirs is None:
        return mine
    return add_filters(mine, theirs)


def _combine_roles(mine, theirs, what: str):
    """Roles seen by two accumulators: equal, or one of them has seen nothing (None)."""
    if mine is None:
        return theirs
    if theirs is None or theirs == mine:
        return mine
    raise ValueError(
        f"cannot merge accumulators that counted different {what}: {mine!r} vs {theirs!r} "
        "(every batch must carry the same arguments)"
    )


# --------------------------------------------------------------------------- #
# co-occurrence
# --------------------------------------------------------------------------- #
_COOC_METRICS = ("directional", "mals")
_MALS_PAIRS = frozenset({("attr", "task"), ("attr_pred", "task_pred")})


class CooccurrenceAccumulator(_Accumulator):
    r"""Streaming BiasAmp→ (both directions) or BiasAmp_MALS.

    Holds the Gram table ``[1|A|Â]ᵀ [1|T|T̂]`` of the test set (see
    :class:`~biasamp.CooccurrenceCounts`) and, optionally, the ground-truth
    table of a training set, both summed over batches.

    .. math::

        \text{BiasAmp}_{\rightarrow} = \frac{1}{|\mathcal{A}||\mathcal{T}|}
            \sum_{a,t} y_{at}\,\Delta_{at}, \qquad
        \text{BiasAmp}_{\text{MALS}} = \frac{1}{|\mathcal{T}|}\sum_{a,t}
            \mathbb{1}\big[b_{\text{train}}(a,t) > \tfrac{1}{|\mathcal{A}|}\big]
            \big(b_{\text{pred}}(a,t) - b_{\text{train}}(a,t)\big)

    with the definitions of :func:`~biasamp.bias_amp_directional` and
    :func:`~biasamp.bias_amp_mals`.

    Parameters
    ----------
    attr_classes, task_classes : sequence or int
        Class lists of the protected attribute A and of the task T (an int
        ``k`` means ``0..k-1``, the default names of indicator columns). Pass
        the classes the functional API would infer (the sorted union of the
        ground-truth labels) to get identical results.
    metric : {"directional", "mals"}, default "directional"
        What :meth:`compute` returns: a
        :class:`~biasamp.DirectionalBiasAmpResult` or a
        :class:`~biasamp.MALSResult`. Only the cross counts that metric reads
        are counted.
    train : CooccurrenceCounts, optional
        Fixed counts of the training ground truth (roles ``attr``, ``task``),
        e.g. from :meth:`CooccurrenceCounts.from_labels`. It is not summed by
        :meth:`merge` or :meth:`sync` (both sides must hold the same table).
        Alternatively stream the training set with :meth:`update_train`.
        Without either, the test ground truth is used for the training
        statistics (``train_source="test"``, as in the functional API).
    n_boot : int, default 0
        Poisson bootstrap replicates kept alongside the counts (0: none).
    random_state : int, optional
        Seed of the Poisson bootstrap weights.
    stream : int, default 0
        Identifier of this stream (a rank or partition), part of every row's
        bootstrap seed.
    missing : {"raise", "drop", "group"}, default "raise"
        Rows with a missing value in a batch: raise, drop them, or make a
        missing ``attr`` its own class ``"missing"`` (which must then be in
        ``attr_classes``) (:ref:`def-missing`). The rows dropped and grouped
        are summed over batches and reported by :meth:`compute`.
    threshold : float, default 0.5
        Probabilities given as predictions are predicted when they exceed it
        (:ref:`def-probabilities`); ``compute()``'s result says so.
    soft : {"threshold", "expected"}, default "threshold"
        ``"expected"``: probabilities count as expected counts instead.
    min_group_size, include_small_groups : int, bool
        Small attribute classes (fewer weighted test members) are left out of
        BiasAmp→'s means, as :func:`~biasamp.bias_amp_directional` does.

    Attributes
    ----------
    gram : ndarray of float64, shape (1 + 2 K_A, 1 + 2 K_T)
        The summed test table (blocks of roles never given stay zero).
    train_gram : ndarray of float64, shape (1 + K_A, 1 + K_T)
        The summed training table of :meth:`update_train`.

    See Also
    --------
    biasamp.bias_amp_directional, biasamp.bias_amp_mals : the functional forms.
    biasamp.CooccurrenceCounts : the count table.

    Notes
    -----
    Per batch the arguments are encoded and counted exactly as by the
    functional API (one vectorized pass, float32 row blocks accumulated in
    float64), and the tables are added: for hard labels every entry is an
    exact integer, so the result does not depend on the batching, the merge
    order or the number of ranks. Soft predictions give expected counts,
    equal up to floating-point rounding.

    References
    ----------
    .. [1] A. Wang, O. Russakovsky. "Directional Bias Amplification". ICML 2021, Eq. 2.
    .. [2] J. Zhao et al. "Men Also Like Shopping". EMNLP 2017.

    Examples
    --------
    The "shortcoming 2" example of Wang & Russakovsky, in three batches:

    >>> import numpy as np
    >>> from biasamp.accumulators import CooccurrenceAccumulator
    >>> attr = np.repeat([1, 2], [90, 30])
    >>> task = np.concatenate([np.repeat([0, 1], [60, 30]), np.repeat([0, 1], [10, 20])])
    >>> task_pred = (attr == 2).astype(int)
    >>> acc = CooccurrenceAccumulator([1, 2], [0, 1])
    >>> for rows in np.array_split(np.arange(120), 3):
    ...     _ = acc.update(attr[rows], task[rows], task_pred=task_pred[rows], attr_pred=attr[rows])
    >>> res = acc.compute()
    >>> round(res.a_to_t.value, 4), res.t_to_a.value, res.train_source
    (0.3333, 0.0, 'test')
    """

    _TABLES = ("gram", "train_gram", "agree")

    def __init__(
        self,
        attr_classes: Sequence | int,
        task_classes: Sequence | int,
        *,
        metric: str = "directional",
        train: CooccurrenceCounts | None = None,
        n_boot: int = 0,
        random_state: Any = None,
        stream: int = 0,
        missing: str = "raise",
        threshold: float = 0.5,
        soft: str = "threshold",
        min_group_size: int = 30,
        include_small_groups: bool = False,
    ) -> None:
        self.threshold, self.soft = check_threshold(threshold), check_soft(soft)
        self.group_options: dict[str, Any] = {"min_group_size": check_min_group_size(min_group_size),
                                              "include_small_groups": check_include_small_groups(include_small_groups)}
        self.predictions = "hard"
        self.attr_classes = _class_list(attr_classes, "attr_classes")
        self.task_classes = _class_list(task_classes, "task_classes")
        self.missing = check_missing(missing)
        self.rows = self.train_rows = None  # RowFilter sums of the test and training batches
        self.weighted = False
        if not isinstance(metric, str) or metric not in _COOC_METRICS:
            raise ValueError(f"metric must be one of {_COOC_METRICS}, got {metric!r}")
        self.metric = metric
        self.pairs = _DIRECTIONAL_PAIRS if metric == "directional" else _MALS_PAIRS
        if train is not None:
            if not isinstance(train, CooccurrenceCounts):
                raise TypeError(f"train must be a CooccurrenceCounts, got {type(train).__name__}")
            if train.attr_classes != self.attr_classes or train.task_classes != self.task_classes:
                raise ValueError(
                    f"train has classes {list(train.attr_classes)!r} / {list(train.task_classes)[:10]!r}, "
                    f"expected attr_classes={list(self.attr_classes)!r}, task_classes={list(self.task_classes)[:10]!r}"
                )
            if not train.has("attr", "task") or ("attr", "task") in train.uncounted:
                raise ValueError("train must hold the ground-truth roles 'attr' and 'task'")
            train = train.restrict(["attr"], ["task"])
        self.train = train
        ka, kt = len(self.attr_classes), len(self.task_classes)
        self.gram = np.zeros((1 + 2 * ka, 1 + 2 * kt), dtype=np.float64)
        self.train_gram = np.zeros((1 + ka, 1 + kt), dtype=np.float64)
        self.agree = np.zeros((2, ka, kt), dtype=np.float64)  # #(a, t∧t̂), #(a∧â, t): the McNemar tests
        self.roles: tuple | None = None  # (attr roles, task roles) fixed by the first batch
        self.soft_roles: frozenset = frozenset()
        self._init_bootstrap(n_boot, random_state, stream)
        if self.n_boot:
            self.boot = np.zeros((self.n_boot, 1 + 2 * ka, 1 + 2 * kt), dtype=np.float64)

    families = {"directional": {}, "mals": {"metric": "mals"}}

    @classmethod
    def for_family(cls, key: str, classes: dict, **options: Any) -> CooccurrenceAccumulator:
        return cls(classes["attr"], classes["task"], **cls.families[key], **options)

    def update_roles(self, roles: dict) -> CooccurrenceAccumulator:
        if roles.get("attr_train") is not None:
            self.update_train(roles["attr_train"], roles["task_train"], sample_weight=roles.get("train_sample_weight"))
        return self.update(roles["attr"], roles["task"], attr_pred=roles.get("attr_pred"),
                           task_pred=roles.get("task_pred"), sample_weight=roles.get("sample_weight"))

    # ---------------------------------------------------------------- update
    def _embed(self, target: np.ndarray, counts: CooccurrenceCounts) -> None:
        ka, kt = len(self.attr_classes), len(self.task_classes)
        rows_layout = _layout(ATTR_ROLES, [ka, ka])
        cols_layout = _layout(TASK_ROLES, [kt, kt])
        rows = np.concatenate([[0]] + [np.arange(*rows_layout[r].indices(1 + 2 * ka)) for r in counts.attr_roles])
        cols = np.concatenate([[0]] + [np.arange(*cols_layout[r].indices(1 + 2 * kt)) for r in counts.task_roles])
        target[np.ix_(rows, cols)] += counts.gram

    def update(self, attr: Any = None, task: Any = None, *, attr_pred: Any = None,
               task_pred: Any = None, row_ids: Any = None, sample_weight: Any = None) -> CooccurrenceAccumulator:
        """Count one batch of test rows; returns ``self``.

        Parameters
        ----------
        attr, task : labels
            Test ground truth of A and T (any input kind of :ref:`def-inputs`, torch
            tensors included). Required for ``metric="directional"``; for
            ``"mals"`` optional (give both or neither: they stand in for the
            training set when none is given).
        attr_pred, task_pred : labels, optional
            Predictions Â and T̂ (hard or probabilities). ``"directional"``
            needs at least one (T̂ for A→T, Â for T→A); ``"mals"`` needs both.
        row_ids : array-like of int, optional
            With ``n_boot > 0``: a unique id per row (e.g. the dataset index),
            which fixes the row's bootstrap weights. Default: ``stream`` and
            the running row number of this accumulator.
        sample_weight : array-like of shape (n,), optional
            One non-negative weight per row: every count becomes a sum of
            weights, rows of weight 0 are dropped (:ref:`def-weights`).

        Every batch must carry the same arguments.
        """
        if self.metric == "directional":
            if attr is None or task is None:
                raise ValueError("metric='directional' needs the test ground truth attr and task in every batch")
            if attr_pred is None and task_pred is None:
                raise ValueError("give task_pred (for A->T) and/or attr_pred (for T->A); neither was given")
        else:
            if attr_pred is None or task_pred is None:
                raise ValueError("metric='mals' needs attr_pred and task_pred in every batch")
            if (attr is None) != (task is None):
                raise ValueError("give both attr and task (test ground truth), or neither")
        arrays, weights, rows = select_rows(
            {"attr": attr, "task": task, "attr_pred": attr_pred, "task_pred": task_pred, "row_ids": row_ids},
            missing=self.missing, group_args=("attr",), sample_weight=sample_weight, group_columns=False)
        a = _encode_side(arrays["attr"], arrays["attr_pred"], "attr", self.attr_classes, True)
        t = _encode_side(arrays["task"], arrays["task_pred"], "task", self.task_classes, True)
        a, said_a = harden_roles(a, (("attr", "attr_pred"),), self.soft, self.threshold)
        t, said_t = harden_roles(t, (("task", "task_pred"),), self.soft, self.threshold)
        self.predictions = joined(self.predictions, said_a, said_t)
        left = [a[r] for r in ATTR_ROLES if r in a]
        right = [t[r] for r in TASK_ROLES if r in t]
        counts = CooccurrenceCounts.from_encoded(left, right, pairs=self.pairs, weights=weights, rows=rows)
        roles = (counts.attr_roles, counts.task_roles)
        if self.roles is not None and roles != self.roles:
            raise ValueError(
                f"this batch holds the roles {roles[0] + roles[1]!r}, earlier batches "
                f"{self.roles[0] + self.roles[1]!r}: every batch must carry the same arguments"
            )
        self._embed(self.gram, counts)
        n = next(m.n_rows for m in (*left, *right))
        self._rows_update(a, t, n, arrays["row_ids"], weights)
        self.roles = roles
        self.soft_roles = self.soft_roles | counts.soft_roles
        self.rows = rows if self.rows is None else self.rows + rows
        self.weighted = self.weighted or weights is not None
        return self

    def _rows_update(self, a: dict, t: dict, n: int, row_ids: Any, weights: np.ndarray | None = None) -> None:
        """Three-way counts (for the tests) and Poisson replicate tables of one batch (rows weighted by ``weights``)."""
        from scipy import sparse

        from biasamp._engine.resample import augmented, label_rows

        ka, kt = len(self.attr_classes), len(self.task_classes)
        idx = np.arange(n)
        rows = {r: label_rows(m, idx) for r, m in {**a, **t}.items()}
        scale = sparse.diags(weights) if weights is not None else None
        if "attr" in rows and "task" in rows:
            attr_rows = rows["attr"] if scale is None else sparse.csr_matrix(scale @ rows["attr"])
            if "task_pred" in rows:
                self.agree[0] += np.asarray((attr_rows.T @ rows["task"].multiply(rows["task_pred"])).todense())
            if "attr_pred" in rows:
                self.agree[1] += np.asarray((attr_rows.multiply(rows["attr_pred"]).T @ rows["task"]).todense())
        if self.n_boot:
            zero_a, zero_t = sparse.csr_matrix((n, ka)), sparse.csr_matrix((n, kt))
            left = augmented([rows.get(r, zero_a) for r in ATTR_ROLES], n)
            if scale is not None:  # a row's replicate weight multiplies its sample weight
                left = sparse.csr_matrix(scale @ left)
            right = augmented([rows.get(r, zero_t) for r in TASK_ROLES], n)
            self._boot_update(left, right, n, row_ids)

    def _boot_plan(self):
        from biasamp.cooccurrence._metrics import _as_count, correlation_sign
        from biasamp.cooccurrence._plan import directional_evaluator, mals_evaluator

        point = self.compute()
        test = self.counts()
        train, _ = self.train_counts()
        ka, kt = len(self.attr_classes), len(self.task_classes)
        rows_layout = _layout(ATTR_ROLES, [ka, ka])
        cols_layout = _layout(TASK_ROLES, [kt, kt])
        if self.metric == "directional":
            a_roles, t_roles = self.roles
        else:
            a_roles, t_roles = ("attr_pred",), ("task_pred",)
        rows = np.concatenate([[0]] + [np.arange(*rows_layout[r].indices(1 + 2 * ka)) for r in a_roles])
        cols = np.concatenate([[0]] + [np.arange(*cols_layout[r].indices(1 + 2 * kt)) for r in t_roles])
        full = self.gram[np.ix_(rows, cols)]
        reps = self.boot[:, rows][:, :, cols]
        classes = (self.attr_classes, self.task_classes)
        if self.metric == "mals":
            return mals_evaluator(point, classes, _as_count(train.cross("attr", "task"))), full, reps
        agree = {"A->T": self.agree[0], "T->A": self.agree[1]} if test.has("attr", "task") else None
        plan = directional_evaluator(point, classes, correlation_sign(train), full, (a_roles, t_roles), agree,
                                     bool(self.soft_roles))
        return plan, full, reps

    def update_train(self, attr: Any, task: Any, *, sample_weight: Any = None) -> CooccurrenceAccumulator:
        """Count one batch of the *training* ground truth (for ``y_at`` / ``b_train``); returns ``self``.

        Parameters
        ----------
        attr, task : labels
            Training ground truth of A and T.
        sample_weight : array-like of shape (n,), optional
            One non-negative weight per training row (:ref:`def-weights`).
        """
        if self.train is not None:
            raise ValueError("this accumulator was given fixed train counts; update_train() would add to them")
        if attr is None or task is None:
            raise ValueError("update_train needs both attr and task (training ground truth)")
        arrays, weights, rows = select_rows({"attr": attr, "task": task}, missing=self.missing, group_args=("attr",),
                                            sample_weight=sample_weight, group_columns=False)
        enc_a = encode_labels({"attr_train": arrays["attr"]}, classes=self.attr_classes)["attr_train"]
        enc_t = encode_labels({"task_train": arrays["task"]}, classes=self.task_classes)["task_train"]
        check_consistent_length(attr_train=enc_a, task_train=enc_t)
        counts = CooccurrenceCounts.from_encoded([replace(enc_a, name="attr")], [replace(enc_t, name="task")],
                                                 weights=weights)
        self.train_gram += counts.gram
        self.train_rows = rows if self.train_rows is None else self.train_rows + rows
        self.weighted = self.weighted or weights is not None
        return self

    # ----------------------------------------------------------------- merge
    def _merge_meta(self, other: CooccurrenceAccumulator) -> None:
        for what in ("attr_classes", "task_classes", "metric", "threshold", "soft", "group_options"):
            if getattr(self, what) != getattr(other, what):
                raise ValueError(
                    f"cannot merge accumulators with different {what}: "
                    f"{getattr(self, what)!r} vs {getattr(other, what)!r}"
                )
        if (self.train is None) != (other.train is None) or (
            self.train is not None and other.train is not None and not np.array_equal(self.train.gram, other.train.gram)
        ):
            raise ValueError("cannot merge accumulators with different fixed train counts")
        if self.missing != other.missing:
            raise ValueError(f"cannot merge accumulators with different missing: {self.missing!r} vs {other.missing!r}")
        roles = _combine_roles(self.roles, other.roles, "roles")
        self.roles = roles
        self.soft_roles = self.soft_roles | other.soft_roles
        self.predictions = joined(self.predictions, other.predictions)
        self.weighted = self.weighted or other.weighted
        self.rows = _sum_filters(self.rows, other.rows)
        self.train_rows = _sum_filters(self.train_rows, other.train_rows)

    # ------------------------------------------------------------------ read
    @property
    def n(self) -> float:
        """Number of test rows counted."""
        return float(self.gram[0, 0])

    @property
    def n_train(self) -> float:
        """Number of training rows counted by :meth:`update_train` (or in ``train``)."""
        return self.train.n if self.train is not None else float(self.train_gram[0, 0])

    def counts(self) -> CooccurrenceCounts:
        """The test count table of the roles seen (a :class:`~biasamp.CooccurrenceCounts`)."""
        if self.roles is None:
            raise ValueError("no batch was counted: call update() first")
        every = {(a, t) for a in ATTR_ROLES for t in TASK_ROLES}
        full = CooccurrenceCounts(
            self.attr_classes, self.task_classes, ATTR_ROLES, TASK_ROLES, self.gram.copy(),
            self.soft_roles, frozenset(every - self.pairs), self.weighted, self.rows,
        )
        return full.restrict(*self.roles)

    def train_counts(self) -> tuple[CooccurrenceCounts, str]:
        """The training table used by :meth:`compute` and where it came from (``"train"``/``"test"``)."""
        if self.train is not None:
            return self.train, "train"
        if self.train_gram[0, 0] > 0:
            return CooccurrenceCounts(
                self.attr_classes, self.task_classes, ("attr",), ("task",), self.train_gram.copy(),
                weighted=self.weighted, rows=self.train_rows,
            ), "train"
        test = self.counts()
        if not test.has("attr", "task"):
            raise ValueError(
                "no training counts: pass train=, call update_train(), or give the test ground truth "
                "attr and task in update()"
            )
        return test.restrict(["attr"], ["task"]), "test"

    def compute(self) -> DirectionalBiasAmpResult | MALSResult:
        """The metric from the accumulated tables.

        Returns
        -------
        DirectionalBiasAmpResult or MALSResult
            As returned by :func:`~biasamp.bias_amp_directional` /
            :func:`~biasamp.bias_amp_mals` on all the rows counted.

        Raises
        ------
        ValueError
            Nothing counted, no training statistics (MALS without a training
            set or test ground truth), or every pair undefined.
        """
        test = self.counts()
        train, source = self.train_counts()
        res: DirectionalBiasAmpResult | MALSResult
        if self.metric == "directional":
            res = directional_from_counts(train, test, train_source=source, **self.group_options)
        else:
            res = mals_from_counts(train, test.restrict(["attr_pred"], ["task_pred"]), **self.group_options)
        return dataclasses.replace(res, predictions=self.predictions)

    def reset(self) -> CooccurrenceAccumulator:
        """Zero the tables (fixed ``train`` counts are kept); returns ``self``."""
        self.gram[...] = 0
        self.train_gram[...] = 0
        self.agree[...] = 0
        if self.n_boot:
            self.boot[...] = 0
            self.rows_seen = 0
        self.roles, self.soft_roles = None, frozenset()
        self.rows = self.train_rows = None
        self.weighted = False
        self.predictions = "hard"
        return self

    def __repr__(self) -> str:
        roles = None if self.roles is None else list(self.roles[0] + self.roles[1])
        return (
            f"CooccurrenceAccumulator(metric={self.metric!r}, n={self.n:g}, n_train={self.n_train:g}, "
            f"{len(self.attr_classes)} attribute classes, {len(self.task_classes)} task classes, roles={roles!r})"
        )


# --------------------------------------------------------------------------- #
# fairness
# --------------------------------------------------------------------------- #
class FairnessAccumulator(_Accumulator):
    r"""Streaming group fairness metrics of Qian et al. (2021): DP, DI, SPSF, FPSF, EOFP, EOTP, BA.

    Holds the one-vs-rest confusion counts per (group, class) of
    :class:`~biasamp.ConfusionCounts`, summed over batches. With
    :math:`PPR_g = (TP+FP)_g/n_g`, :math:`TPR_g = TP_g/P_g`,
    :math:`FPR_g = FP_g/N_g`, e.g.

    .. math::

        \mathrm{DP} = \max_g PPR_g - \min_g PPR_g, \qquad
        \mathrm{EOTP} = \max_g TPR_g - \min_g TPR_g

    per class, then the positive class's value or the mean over classes (see
    :func:`~biasamp.fairness_metrics`).

    Parameters
    ----------
    classes : sequence or int
        Class list of the target (an int ``k`` means ``0..k-1``).
    groups : sequence or int
        Group list (tuples for intersectional groups of several sensitive
        feature columns, in the order :func:`~biasamp.fairness_metrics` sorts
        them).
    metrics : sequence of str, default all seven
        What :meth:`compute` reports.
    n_boot : int, default 0
        Poisson bootstrap replicates kept alongside the counts (0: none).
    random_state : int, optional
        Seed of the Poisson bootstrap weights.
    stream : int, default 0
        Identifier of this stream (a rank or partition), part of every row's
        bootstrap seed.
    **options
        Options of :func:`~biasamp.fairness_metrics`: ``threshold`` and
        ``soft`` (how probabilities are counted, at ``update``), and
        ``average``, ``pos_label``, ``min_group_size``,
        ``include_small_groups``, ``reference_group``, ``tolerance`` (at
        ``compute``).

    See Also
    --------
    biasamp.fairness_metrics : the functional form.
    biasamp.ConfusionCounts : the count table.

    Notes
    -----
    Hard predictions give integer counts (exact in any batching and merge
    order); probabilities give expected counts, equal to rounding.

    References
    ----------
    .. [1] S. Qian et al. "Are My Deep Learning Systems Fair? An Empirical
       Study of Fixed-Seed Training". NeurIPS 2021, Appendix A.

    Examples
    --------
    The running example of Qian et al. (Table 3), one batch per gender:

    >>> import numpy as np
    >>> from biasamp.accumulators import FairnessAccumulator
    >>> y_true = np.repeat(["sport", "cook", "sport", "cook"], 100)
    >>> y_pred = np.repeat(["sport", "cook"] * 4, [80, 20, 10, 90, 60, 40, 70, 30])
    >>> gender = np.repeat(["female", "male"], 200)
    >>> acc = FairnessAccumulator(["cook", "sport"], ["female", "male"], average="macro")
    >>> _ = acc.update(y_true[:200], y_pred[:200], sensitive_features=gender[:200])
    >>> _ = acc.update(y_true[200:], y_pred[200:], sensitive_features=gender[200:])
    >>> {k: round(100 * v, 1) for k, v in acc.compute().overall.items()}
    {'DP': 20.0, 'DI': 33.6, 'SPSF': 10.0, 'FPSF': 20.0, 'EOFP': 40.0, 'EOTP': 40.0, 'BA': 10.1}
    """

    _TABLES = ("n", "positives", "predicted", "true_positives")

    def __init__(self, classes: Sequence | int, groups: Sequence | int, *,
                 metrics: Sequence[str] = METRICS, n_boot: int = 0, random_state: Any = None,
                 stream: int = 0, **options: Any) -> None:
        from biasamp.fairness._metrics import _FROM_COUNTS_OPTIONS, _LABEL_OPTIONS

        unknown = set(options) - set(_FROM_COUNTS_OPTIONS) - set(_LABEL_OPTIONS)
        if unknown:
            raise TypeError(f"FairnessAccumulator got unexpected options {sorted(unknown)!r}; it takes "
                            f"{sorted(_FROM_COUNTS_OPTIONS + _LABEL_OPTIONS)!r}")
        self.options = {k: v for k, v in options.items() if k in _FROM_COUNTS_OPTIONS}
        self.label_options = {k: v for k, v in options.items() if k in _LABEL_OPTIONS}
        self.multilabel = False
        self.predictions = "hard"
        self.classes = _class_list(classes, "classes")
        self.groups = _class_list(groups, "groups")
        self.metrics = _check_metrics(metrics)
        g, k = len(self.groups), len(self.classes)
        self.n = np.zeros(g, dtype=np.float64)
        self.positives = np.zeros((g, k), dtype=np.float64)
        self.predicted = np.zeros((g, k), dtype=np.float64)
        self.true_positives = np.zeros((g, k), dtype=np.float64)
        self.soft = False
        self.weighted = False
        self.feature_names: tuple | None = None
        self._init_bootstrap(n_boot, random_state, stream)
        if self.n_boot:
            self.boot = np.zeros((self.n_boot, g, 1 + 3 * k), dtype=np.float64)

    families = {"fairness": {}}

    @classmethod
    def for_family(cls, key: str, classes: dict, **options: Any) -> FairnessAccumulator:
        return cls(classes["task"], classes["attr"], **cls.families[key], **options)

    def update_roles(self, roles: dict) -> FairnessAccumulator:
        return self.update(roles["task"], roles["task_pred"], sensitive_features=roles["attr"],
                           sample_weight=roles.get("sample_weight"))

    def update(self, y_true: Any, y_pred: Any, *, sensitive_features: Any,
               sample_weight: Any = None, row_ids: Any = None) -> FairnessAccumulator:
        """Count one batch; returns ``self``.

        Parameters
        ----------
        y_true : labels of shape (n,) or (n, K)
            Ground truth (any input kind of :ref:`def-inputs`).
        y_pred : labels of the same kind
            Predictions (hard, or probabilities: expected counts).
        sensitive_features : array-like of shape (n,), DataFrame or (n, m) array
            Group of every row; must be among ``groups``.
        sample_weight : array-like of shape (n,), optional
            Non-negative weights: every count becomes a weighted count
            (:ref:`def-weights`); zero-weight rows are dropped.
        row_ids : array-like of int, optional
            With ``n_boot > 0``: a unique id per row, which fixes its
            bootstrap weights (default: ``stream`` and the running row number).
        """
        from biasamp.fairness._metrics import _count, _prepare

        prep = _prepare(y_true, y_pred, sensitive_features, classes=self.classes, groups=self.groups, batch=True,
                        sample_weight=sample_weight, **self.label_options)
        if row_ids is not None and prep.rows is not None and prep.rows.n_zero_weight:
            row_ids = np.asarray(to_numpy(row_ids, "row_ids"))[to_numpy(sample_weight, "sample_weight") > 0]
        yt, yp, gcodes, w = prep.yt, prep.yp, prep.gcodes, prep.weights
        group_names, feature_names = prep.groups, prep.feature_names
        n_g, pos, pred, tp = _count(gcodes, len(group_names), yt, yp, w)
        c = ConfusionCounts(yt.classes, group_names, n_g, pos, pred, tp, feature_names, yp.soft)
        self.multilabel, self.predictions = yt.codes is None, prep.predictions
        if self.n_boot:
            from scipy import sparse

            from biasamp._engine.resample import augmented, label_rows

            n, idx = yt.n_rows, np.arange(yt.n_rows)
            trows, prows = label_rows(yt, idx), label_rows(yp, idx)
            vals = np.ones(n) if w is None else w
            left = sparse.csr_matrix((vals, (idx, gcodes)), shape=(n, len(self.groups)))
            self._boot_update(left, augmented([trows, prows, trows.multiply(prows)], n), n, row_ids)
        if self.feature_names is not None and c.feature_names != self.feature_names:
            raise ValueError(
                f"sensitive_features has columns {list(c.feature_names)!r}, earlier batches "
                f"{list(self.feature_names)!r}"
            )
        self.n += c.n
        self.positives += c.positives
        self.predicted += c.predicted
        self.true_positives += c.true_positives
        self.soft = self.soft or c.soft
        self.weighted = self.weighted or w is not None
        self.feature_names = c.feature_names
        return self

    def _merge_meta(self, other: FairnessAccumulator) -> None:
        for what in ("classes", "groups", "metrics", "options", "label_options"):
            if getattr(self, what) != getattr(other, what):
                raise ValueError(
                    f"cannot merge accumulators with different {what}: "
                    f"{getattr(self, what)!r} vs {getattr(other, what)!r}"
                )
        self.feature_names = _combine_roles(self.feature_names, other.feature_names, "sensitive feature columns")
        self.soft = self.soft or other.soft
        self.weighted = self.weighted or other.weighted
        self.multilabel = self.multilabel or other.multilabel

    @property
    def n_total(self) -> int:
        """Number of rows counted."""
        return int(self.n.sum())

    def counts(self) -> ConfusionCounts:
        """The accumulated :class:`~biasamp.ConfusionCounts`."""
        n, pos = self.n.copy(), self.positives.copy()
        pred, tp = self.predicted.copy(), self.true_positives.copy()
        if not self.weighted:
            n, pos = np.rint(n).astype(np.int64), np.rint(pos).astype(np.int64)
            if not self.soft:
                pred, tp = np.rint(pred).astype(np.int64), np.rint(tp).astype(np.int64)
        return ConfusionCounts(
            self.classes, self.groups, n, pos, pred, tp,
            self.feature_names or ("sensitive_feature",), self.soft, self.multilabel, self.predictions,
        )

    def compute(self) -> FairnessResult:
        """The fairness metrics of every row counted (a :class:`~biasamp.FairnessResult`).

        Raises
        ------
        ValueError
            Nothing counted, fewer than two non-empty groups, or a metric
            undefined for every class.
        """
        if self.n_total == 0:
            raise ValueError("no batch was counted: call update() first")
        return fairness_from_counts(self.counts(), metrics=self.metrics, **self.options)

    def _boot_plan(self):
        from biasamp.fairness._plan import fairness_evaluator

        point = self.compute()
        full = np.column_stack([self.n, self.positives, self.predicted, self.true_positives]).astype(np.float64)
        return fairness_evaluator(point, full, self.metrics, self.soft), full, self.boot

    def reset(self) -> FairnessAccumulator:
        """Zero the tables; returns ``self``."""
        for name in self._table_names():
            getattr(self, name)[...] = 0
        self.soft, self.weighted, self.feature_names = False, False, None
        self.rows_seen = 0
        return self

    def __repr__(self) -> str:
        return (
            f"FairnessAccumulator(n={self.n_total}, {len(self.classes)} classes, "
            f"{len(self.groups)} groups, soft={self.soft})"
        )


class DifferentialAccumulator(FairnessAccumulator):
    r"""Streaming differential-fairness bias amplification (Foulds et al. 2020).

    The counts are the group fairness family's (:class:`FairnessAccumulator`:
    per group, its size and the positives of the labels and of the
    predictions), so batches, :meth:`merge`, :meth:`sync`, Dask partitions and
    the streamed bootstrap work alike; :meth:`compute` turns them into
    :math:`\varepsilon_{\text{pred}} - \varepsilon_{\text{true}}` with

    .. math::

        \tilde P(y \mid s) = \frac{N_{y,s} + c/2}{N_s + c}, \qquad
        \varepsilon = \max_y \Big[\max_s \log \tilde P(y \mid s) - \min_s \log \tilde P(y \mid s)\Big]

    (see :func:`~biasamp.df_bias_amplification`).

    Parameters
    ----------
    classes : sequence or int
        The two outcome classes.
    groups : sequence or int
        Group list (tuples for intersectional groups).
    concentration : float, default 1.0
        Total Dirichlet concentration :math:`c` > 0.
    pos_label : object, default 1
        The outcome y = 1.
    n_boot, random_state, stream : as :class:`FairnessAccumulator`
    threshold, soft : as :func:`~biasamp.df_bias_amplification`

    Notes
    -----
    The same counts serve :class:`FairnessAccumulator`; an accumulator of
    either kind only merges with its own kind.

    References
    ----------
    .. [1] J. R. Foulds, R. Islam, K. N. Keya, S. Pan. "An Intersectional
       Definition of Fairness". ICDE 2020.

    Examples
    --------
    >>> from biasamp.accumulators import DifferentialAccumulator
    >>> acc = DifferentialAccumulator([0, 1], ["a", "b"])
    >>> acc.update([1, 1, 0, 0], [1, 1, 1, 0], sensitive_features=["a"] * 4)
    DifferentialAccumulator(n=4, 2 classes, 2 groups, soft=False)
    >>> acc.update([1, 1, 0, 0], [1, 0, 0, 0], sensitive_features=["b"] * 4)
    DifferentialAccumulator(n=8, 2 classes, 2 groups, soft=False)
    >>> round(acc.compute().value, 4)  # log(.7 / .3), as df_bias_amplification
    0.8473
    """

    def __init__(self, classes: Sequence | int, groups: Sequence | int, *, concentration: float = 1.0,
                 pos_label: Any = 1, n_boot: int = 0, random_state: Any = None, stream: int = 0,
                 **options: Any) -> None:
        from biasamp.differential._metrics import _check_concentration
        from biasamp.fairness._metrics import _LABEL_OPTIONS

        group_options: dict[str, Any] = {k: options.pop(k) for k in ("min_group_size", "include_small_groups")
                                         if k in options}
        unknown = set(options) - set(_LABEL_OPTIONS)
        if unknown:
            raise TypeError(f"DifferentialAccumulator got unexpected options {sorted(unknown)!r}; it takes "
                            f"concentration, pos_label, min_group_size, include_small_groups and "
                            f"{sorted(_LABEL_OPTIONS)!r}")
        super().__init__(classes, groups, n_boot=n_boot, random_state=random_state, stream=stream, **options)
        self.concentration = _check_concentration(concentration)
        self.options = {"pos_label": pos_label, "concentration": self.concentration, **group_options}

    families = {"differential": {}}

    def compute(self) -> Any:
        """The :class:`~biasamp.DFBiasAmpResult` of every row counted."""
        from biasamp.differential._metrics import df_from_counts

        if self.n_total == 0:
            raise ValueError("no batch was counted: call update() first")
        return df_from_counts(self.counts(), **self.options)

    def _boot_plan(self):
        from biasamp.differential._plan import df_evaluator, kept_groups

        point = self.compute()
        full = np.column_stack([self.n, self.positives, self.predicted, self.true_positives]).astype(np.float64)
        k = list(self.classes).index(point.pos_label)
        return df_evaluator(point, k, kept_groups(self.groups, self.n, point), self.concentration), full, self.boot

    def __repr__(self) -> str:
        return super().__repr__().replace("FairnessAccumulator", "DifferentialAccumulator", 1)


# --------------------------------------------------------------------------- #
# multi-attribute
# --------------------------------------------------------------------------- #
_MULTI_TABLES = (
    "n_train", "train_attr", "train_joint", "n_test", "test_attr", "test_joint",
    "pred_attr", "joint_g_mhat", "joint_ghat_m", "joint_ghat_mhat",
)


def _distinct_rows(packed: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of a ``(n, bytes)`` uint8 matrix with their summed weights (float64)."""
    if packed.shape[0] == 0:
        return packed, np.asarray(weights, dtype=np.float64)
    width = packed.shape[1]
    keys = np.ascontiguousarray(packed).view(f"V{width}").ravel()
    uniq, inverse = np.unique(keys, return_inverse=True)
    summed = np.bincount(inverse.ravel(), weights=weights, minlength=len(uniq))
    return uniq.view(np.uint8).reshape(len(uniq), width), summed.astype(np.float64)


def _weighted_support(colbits: np.ndarray, weights: np.ndarray, n_rows: int,
                      idx: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """``Σ_d w_d [m ⊆ S_d]`` for each combination, over weighted distinct sets ``S_d``."""
    out = np.zeros(len(sizes), dtype=np.float64)
    step = max(1, _CHUNK_BYTES // max(n_rows, 1))
    for start in range(0, len(sizes), step):
        sl = slice(start, min(len(sizes), start + step))
        bits = _containment(colbits, idx[sl], sizes[sl])
        member = np.unpackbits(bits.view(np.uint8), axis=1, count=n_rows, bitorder="little")
        out[sl] = member.astype(np.float64) @ weights
    return out


def _weighted_frequent_sets(colbits, weights, n_rows, min_size, max_size, min_support, max_combinations):
    """Apriori over weighted distinct attribute sets (``_frequent_sets`` with weighted supports)."""
    support = functools.partial(_weighted_support, colbits, weights, n_rows)
    return _frequent_sets(colbits, min_size, max_size, min_support, max_combinations, support=support)


class MultiAttributeAccumulator(_Accumulator):
    r"""Streaming multi-attribute bias amplification: Multi_MALS, Multi G→M and M→G.

    The metrics (Zhao, Andrews & Xiang 2023; see
    :func:`~biasamp.multi_bias_amp` for the definitions) are functions of
    containment counts ``#(g, m ⊆ S)`` of a *fixed* set M of combinations of
    task labels, which add over batches once M is known. As everywhere in
    biasamp, ``attr`` is the protected attribute (the paper's group g) and
    ``task`` the task labels (the paper's attributes, combined into m):

    .. math::

        b(m, g) = \frac{\#(m \subseteq S,\, g)}{\#(m \subseteq S)}, \qquad
        \text{Multi}_{\text{MALS}} = \frac{1}{|M|} \sum_{g, m} |\Delta_{gm}| .

    Two ways to fix M:

    * **one pass**: ``combinations=`` a list of combinations (each a tuple of
      task names); :meth:`update` counts right away.
    * **two passes**, ``combinations="observed"`` or ``"all"`` (the modes of
      :func:`~biasamp.multi_bias_amp`): pass 1 calls :meth:`collect` on the
      training task labels (the test ground truth when there is no
      training set) and gathers the distinct task sets with their
      multiplicities, a mergeable summary from which the candidates and their
      supports follow exactly; :meth:`freeze` chooses M; pass 2 calls
      :meth:`update_train` / :meth:`update`.

    As in the functional API, combinations not contained in any test (and
    training) ground-truth row are dropped at :meth:`compute` and reported in
    ``result.selection``.

    Parameters
    ----------
    attr_classes : sequence or int
        Classes of the protected attribute (the paper's groups G; one-hot).
    task_classes : sequence or int
        Task labels (the paper's attributes; multi-label).
    combinations : {"observed", "all"} or sequence of sequences, default "observed"
        The combination set: a mode (two passes) or a fixed list (one pass).
    min_size, max_size, min_support, max_combinations : int
        As in :func:`~biasamp.multi_bias_amp` (``min_size``/``max_size`` are
        ignored for a fixed list; ``min_support`` applies to it at
        :meth:`compute`, on the training counts).
    n_boot : int, default 0
        Poisson bootstrap replicates kept alongside the counts (0: none).
    random_state : int, optional
        Seed of the Poisson bootstrap weights.
    stream : int, default 0
        Identifier of this stream (a rank or partition), part of every row's
        bootstrap seed.
    missing : {"raise", "drop", "group"}, default "raise"
        Rows with a missing value in a batch: raise, drop them, or make a
        missing 1-D ``attr`` its own class ``"missing"`` (which must then be
        in ``attr_classes``) (:ref:`def-missing`).
    threshold : float, default 0.5
        Probabilities given as predictions are predicted when they exceed it
        (:ref:`def-probabilities`).
    min_group_size, include_small_groups : int, bool
        Small groups are left out of the headlines, as
        :func:`~biasamp.multi_bias_amp` does.

    See Also
    --------
    biasamp.multi_bias_amp : the functional form, with the definitions.
    biasamp.MultiAttributeCounts : the count table.

    Notes
    -----
    Memory: pass 1 keeps one row per *distinct* training task set (not
    per instance); pass 2 keeps ``O(|G|·|M|)`` counts. Unweighted counts are
    exact integers (held in float64, exact below 2**53), so any batching and
    merge order gives identical results; with ``sample_weight`` every count
    is a sum of weights.

    References
    ----------
    .. [1] D. Zhao, J. T. A. Andrews, A. Xiang. "Men Also Do Laundry:
       Multi-Attribute Bias Amplification". ICML 2023, Eq. 1-3.

    Examples
    --------
    The example of :func:`~biasamp.multi_bias_amp`, in two passes over two
    batches each:

    >>> import numpy as np
    >>> from biasamp.accumulators import MultiAttributeAccumulator
    >>> attr = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    >>> task = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1],
    ...                  [1, 1, 0], [1, 1, 0], [0, 0, 1], [0, 0, 0]])
    >>> task_pred = np.array([[1, 0, 0], [0, 1, 0], [1, 0, 0], [0, 0, 1],
    ...                       [1, 1, 0], [1, 1, 0], [0, 0, 1], [0, 0, 0]])
    >>> acc = MultiAttributeAccumulator([0, 1], ["a", "b", "c"])
    >>> for rows in (slice(0, 4), slice(4, 8)):
    ...     _ = acc.collect(task[rows])
    >>> acc.freeze()
    (('a',), ('b',), ('c',), ('a', 'b'))
    >>> for rows in (slice(0, 4), slice(4, 8)):
    ...     _ = acc.update(attr[rows], task[rows], attr_pred=attr[rows], task_pred=task_pred[rows])
    >>> res = acc.compute()
    >>> round(res.mals.value, 4), round(res.g_to_m.value, 4), res.m_to_g.value
    (0.0833, 0.0625, 0.0)
    """

    # the second pass's tables (_MULTI_TABLES): None while collecting, allocated by _start_counting
    n_train: np.ndarray
    train_attr: np.ndarray
    train_joint: np.ndarray
    n_test: np.ndarray
    test_attr: np.ndarray
    test_joint: np.ndarray
    pred_attr: np.ndarray
    joint_g_mhat: np.ndarray
    joint_ghat_m: np.ndarray
    joint_ghat_mhat: np.ndarray

    @renamed_arguments("0.2.0", {"group_classes": "attr_classes", "attr_classes": "task_classes"})
    def __init__(
        self,
        attr_classes: Sequence | int,
        task_classes: Sequence | int,
        *,
        combinations: str | Sequence[Sequence] = "observed",
        min_size: int = 1,
        max_size: int | None = None,
        min_support: int = 1,
        max_combinations: int = 200_000,
        n_boot: int = 0,
        random_state: Any = None,
        stream: int = 0,
        missing: str = "raise",
        threshold: float = 0.5,
        min_group_size: int = 30,
        include_small_groups: bool = False,
    ) -> None:
        self.threshold = check_threshold(threshold)
        self.group_options: dict[str, Any] = {"min_group_size": check_min_group_size(min_group_size),
                                              "include_small_groups": check_include_small_groups(include_small_groups)}
        self._init_bootstrap(n_boot, random_state, stream)
        self.missing = check_missing(missing)
        self.rows = self.train_rows = None  # RowFilter sums of the test and training batches (pass 2)
        self.weighted = False
        self.attr_classes = _class_list(attr_classes, "attr_classes")
        self.task_classes = _class_list(task_classes, "task_classes")
        self.min_size = _check_int(min_size, "min_size", 1)
        max_size = _check_int(max_size, "max_size", 1, allow_none=True)
        self.min_support = _check_int(min_support, "min_support", 1)
        self.max_combinations = _check_int(max_combinations, "max_combinations", 1)
        if max_size is not None and max_size < self.min_size:
            raise ValueError(f"max_size ({max_size}) must be >= min_size ({self.min_size})")
        self.max_size = len(self.task_classes) if max_size is None else max_size
        self.roles: tuple | None = None  # (has attr_pred, has task_pred), fixed by the first test batch
        self._idx: np.ndarray | None = None  # the fixed combinations (padded indices, sizes): _start_counting
        self._sizes: np.ndarray | None = None
        for name in _MULTI_TABLES:
            setattr(self, name, None)
        if isinstance(combinations, str):
            if combinations not in _MODES:
                raise ValueError(
                    f"combinations must be one of {_MODES} or a list of combinations, got {combinations!r}"
                )
            self.mode = combinations
            self.phase = "collect"
            # pass 1: the distinct task sets (bit-packed rows) and their summed weights; None with given combinations
            self.sets: np.ndarray | None = np.zeros((0, (len(self.task_classes) + 7) // 8), dtype=np.uint8)
            self.set_weights: np.ndarray | None = np.zeros(0, dtype=np.float64)
            self.n_collected = 0
            self._frozen_selection: dict | None = None
        else:
            self.mode = "given"
            self.sets = self.set_weights = None
            self.n_collected = 0
            idx, sizes = self._given(combinations)
            self._frozen_selection = {"n_candidates": len(sizes), "removed_min_support": 0}
            self._start_counting(idx, sizes)

    # ---------------------------------------------------------------- setup
    def _given(self, combinations: Any) -> tuple[np.ndarray, np.ndarray]:
        if isinstance(combinations, (bytes, dict)) or not isinstance(combinations, Iterable):
            raise TypeError(
                f"combinations must be 'observed', 'all' or a list of combinations, got {type(combinations).__name__}"
            )
        lookup = {c: i for i, c in enumerate(self.task_classes)}
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
                                 f"(task_classes: {list(self.task_classes)[:20]!r})")
            if not combo or len(set(combo)) != len(combo):
                raise ValueError(f"combination {combo!r} must be non-empty without repeated task labels")
            row = np.zeros(len(self.task_classes), dtype=bool)
            row[[lookup[c] for c in combo]] = True
            member.append(row)
        if not member:
            raise ValueError("combinations is an empty list")
        matrix = np.array(member)
        _, first = np.unique(matrix, axis=0, return_index=True)
        if len(first) != len(matrix):
            raise ValueError("combinations holds the same combination twice")
        return _padded(matrix)

    def _collected(self) -> tuple[np.ndarray, np.ndarray]:
        """``(sets, set_weights)`` of pass 1 (only while collecting)."""
        if self.sets is None or self.set_weights is None:
            raise ValueError("the combinations were given: there is no first pass (collect) to count")
        return self.sets, self.set_weights

    def _fixed(self) -> tuple[np.ndarray, np.ndarray]:
        """``(idx, sizes)`` of the fixed combinations (the second pass counts them)."""
        if self._idx is None or self._sizes is None:
            raise ValueError("the combinations are not fixed yet: call freeze() after collect()")
        return self._idx, self._sizes

    def _start_counting(self, idx: np.ndarray, sizes: np.ndarray) -> None:
        self._idx, self._sizes = idx, sizes
        g, k = len(self.attr_classes), len(sizes)
        # float64 tables: exact for integer counts below 2**53, and sums of sample weights
        for name in ("n_train", "n_test"):
            setattr(self, name, np.zeros((), dtype=np.float64))
        for name in ("train_attr", "test_attr", "pred_attr"):
            setattr(self, name, np.zeros(g, dtype=np.float64))
        for name in ("train_joint", "test_joint", "joint_g_mhat", "joint_ghat_m", "joint_ghat_mhat"):
            setattr(self, name, np.zeros((g, k), dtype=np.float64))
        if self.n_boot:  # replicate tables [1|G|Ĝ]ᵀ[1|M(S)|M(Ŝ)]
            self.boot = np.zeros((self.n_boot, 1 + 2 * g, 1 + 2 * k), dtype=np.float64)
        self.phase = "count"

    @property
    def combinations(self) -> tuple:
        """The candidate combinations M (tuples of task names), once fixed."""
        idx, sizes = self._fixed()
        names = self.task_classes
        return tuple(tuple(names[j] for j in row[:s]) for row, s in zip(idx.tolist(), sizes.tolist()))

    def _table_names(self) -> tuple[str, ...]:
        if self.phase == "collect":
            return ()
        return _MULTI_TABLES + (("boot",) if self.n_boot else ())

    # --------------------------------------------------------------- pass 1
    @renamed_arguments("0.2.0", {"attrs": "task"})
    def collect(self, task: Any, *, sample_weight: Any = None) -> MultiAttributeAccumulator:
        """Pass 1: gather the distinct task sets of a batch of training rows; returns ``self``.

        Parameters
        ----------
        task : labels of shape (n, K) or (n,)
            Training task labels (hard; the test ground truth when no
            training set will be given).
        sample_weight : array-like of shape (n,), optional
            Weights of the rows: a set's multiplicity (its support) is then
            a sum of weights, as :meth:`update_train` will count it.
        """
        if self.phase != "collect":
            raise ValueError(
                "collect() belongs to pass 1, but the combinations are already fixed "
                f"({'given' if self.mode == 'given' else 'freeze() was called'})"
            )
        arrays, row_weights, _ = select_rows({"task": task}, missing=self.missing, sample_weight=sample_weight)
        m = encode_labels({"task": arrays["task"]}, classes=self.task_classes)["task"]
        get = _label_blocks(m)
        n = m.n_rows
        row_weights = np.ones(n) if row_weights is None else row_weights
        step = max(1, _CHUNK_BYTES // max(len(self.task_classes), 1))
        sets, set_weights = self._collected()
        parts = [sets]
        weights = [set_weights]
        for start in range(0, n, step):
            packed = np.packbits(get(start, min(n, start + step)), axis=1, bitorder="little")
            d, w = _distinct_rows(packed, row_weights[start:start + len(packed)])
            parts.append(d)
            weights.append(w)
        self.sets, self.set_weights = _distinct_rows(np.concatenate(parts), np.concatenate(weights).astype(np.float64))
        self.n_collected += n
        return self

    def freeze(self) -> tuple:
        """End pass 1: choose the combinations M from the collected sets; returns them.

        ``"observed"``: the distinct collected sets with size in
        ``[min_size, max_size]``; ``"all"``: every combination of size in range
        contained in at least ``min_support`` collected rows (Apriori, never
        2^|A|). In both, combinations contained in fewer than ``min_support``
        rows are removed. Merge (or :meth:`sync`) the pass-1 accumulators of
        every worker *before* freezing, so that all workers count the same M.
        """
        if self.phase != "collect":
            raise ValueError("freeze() was already called (or the combinations were given)")
        if self.n_collected == 0:
            raise ValueError("nothing was collected: call collect() on the training task labels first")
        a = len(self.task_classes)
        sets, set_weights = self._collected()
        member = np.unpackbits(sets, axis=1, count=a, bitorder="little").astype(bool)
        n_d = len(member)
        colbits = _column_bitsets(lambda s, e: member[s:e], n_d, a)
        if self.mode == "observed":
            idx, sz = _sized_combinations(member, self.min_size, self.max_size)
        else:
            idx, sz = _weighted_frequent_sets(colbits, set_weights, n_d, self.min_size, self.max_size,
                                              self.min_support, self.max_combinations)
        n_candidates = len(sz)
        support = _weighted_support(colbits, set_weights, n_d, idx, sz)
        keep = support >= self.min_support
        if not keep.any():
            raise ValueError(
                f"min_support={self.min_support} removed all {n_candidates} candidate combinations "
                f"(combinations={self.mode!r}): none is contained in that many training instances"
            )
        self._frozen_selection = {"n_candidates": n_candidates, "removed_min_support": int((~keep).sum())}
        self._start_counting(idx[keep], sz[keep])
        self.sets, self.set_weights = sets[:0], set_weights[:0]  # pass 1 is over: keep the state small
        return self.combinations

    # --------------------------------------------------------------- pass 2
    def _check_counting(self) -> None:
        if self.phase != "count":
            raise ValueError("the combinations are not fixed yet: call collect() on every batch, then freeze()")

    def _bits(self, m) -> np.ndarray:
        return _column_bitsets(_label_blocks(m), m.n_rows, len(self.task_classes))

    families = {"multi": {}}

    @classmethod
    def for_family(cls, key: str, classes: dict, **options: Any) -> MultiAttributeAccumulator:
        return cls(classes["attr"], classes["task"], **cls.families[key], **options)

    def prepass(self, roles: dict) -> MultiAttributeAccumulator:
        """Pass 1: collect the candidate combinations (of the training rows when given, else the test rows)."""
        if self.phase != "collect":
            return self
        if roles.get("task_train") is not None:
            return self.collect(roles["task_train"], sample_weight=roles.get("train_sample_weight"))
        return self.collect(roles["task"], sample_weight=roles.get("sample_weight"))

    def end_prepass(self) -> MultiAttributeAccumulator:
        if self.phase == "collect":
            self.freeze()
        return self

    def update_roles(self, roles: dict) -> MultiAttributeAccumulator:
        if roles.get("attr_train") is not None:
            self.update_train(roles["attr_train"], roles["task_train"], sample_weight=roles.get("train_sample_weight"))
        return self.update(roles["attr"], roles["task"], attr_pred=roles.get("attr_pred"),
                           task_pred=roles.get("task_pred"), sample_weight=roles.get("sample_weight"))

    @renamed_arguments("0.2.0", {"group": "attr", "attrs": "task"})
    def update_train(self, attr: Any, task: Any, *, sample_weight: Any = None) -> MultiAttributeAccumulator:
        """Pass 2: count a batch of training ground truth (for ``b_train`` and ``y_gm``); returns ``self``.

        Parameters
        ----------
        attr : labels of shape (n,) or (n, G)
            Training ground truth of the protected attribute (one-hot).
        task : labels of shape (n, K)
            Training ground truth of the task labels (multi-hot).
        sample_weight : array-like of shape (n,), optional
            One non-negative weight per training row (:ref:`def-weights`).
        """
        self._check_counting()
        if attr is None or task is None:
            raise ValueError("update_train needs both attr and task (training ground truth)")
        arrays, weights, rows = select_rows({"attr": attr, "task": task}, missing=self.missing, group_args=("attr",),
                                            sample_weight=sample_weight, group_columns=False)
        g = encode_labels({"attr_train": arrays["attr"]}, classes=self.attr_classes)["attr_train"]
        a = encode_labels({"task_train": arrays["task"]}, classes=self.task_classes)["task_train"]
        check_consistent_length(attr_train=g, task_train=a)
        codes = _group_codes(g)
        ng = len(self.attr_classes)
        (joint,) = _counts_by_group(self._bits(a), [codes], ng, weights, *self._fixed())
        self.n_train = self.n_train + (a.n_rows if weights is None else weights.sum())
        self.train_attr += _group_totals(codes, ng, weights)
        self.train_joint += joint
        self.train_rows = rows if self.train_rows is None else self.train_rows + rows
        self.weighted = self.weighted or weights is not None
        return self

    @renamed_arguments("0.2.0", {"group": "attr", "attrs": "task", "group_pred": "attr_pred",
                                 "attrs_pred": "task_pred"})
    def update(self, attr: Any, task: Any, *, attr_pred: Any = None,
               task_pred: Any = None, row_ids: Any = None, sample_weight: Any = None) -> MultiAttributeAccumulator:
        """Pass 2 (or the only pass): count a batch of test rows; returns ``self``.

        Parameters
        ----------
        attr : labels of shape (n,) or (n, G)
            Test ground truth of the protected attribute (one-hot; the
            paper's group g).
        task : labels of shape (n, K)
            Test ground truth of the task labels (multi-hot; the paper's
            attributes).
        attr_pred, task_pred : labels, optional
            Hard predictions (at least one; both for Multi_MALS). Every batch
            must carry the same arguments.
        row_ids : array-like of int, optional
            With ``n_boot > 0``: a unique id per row, which fixes its
            bootstrap weights (default: ``stream`` and the running row number).
        sample_weight : array-like of shape (n,), optional
            One non-negative weight per row: every count becomes a sum of
            weights, rows of weight 0 are dropped (:ref:`def-weights`).
        """
        self._check_counting()
        if attr is None or task is None:
            raise ValueError("update needs the test ground truth attr and task")
        if attr_pred is None and task_pred is None:
            raise ValueError(
                "give task_pred (for Multi G->M), attr_pred (for Multi M->G) or both (also for "
                "Multi_MALS); neither was given"
            )
        roles = (attr_pred is not None, task_pred is not None)
        if self.roles is not None and roles != self.roles:
            raise ValueError(
                f"this batch gives attr_pred={roles[0]}, task_pred={roles[1]}, earlier batches "
                f"attr_pred={self.roles[0]}, task_pred={self.roles[1]}: every batch must carry the same arguments"
            )
        arrays, weights, rows = select_rows(
            {"attr": attr, "task": task, "attr_pred": attr_pred, "task_pred": task_pred, "row_ids": row_ids},
            missing=self.missing, group_args=("attr",), sample_weight=sample_weight, group_columns=False)
        row_ids = arrays["row_ids"]
        g = encode_labels({"attr": arrays["attr"]}, {"attr_pred": arrays["attr_pred"]}, classes=self.attr_classes,
                          allow_soft=True)
        a = encode_labels({"task": arrays["task"]}, {"task_pred": arrays["task_pred"]}, classes=self.task_classes,
                          allow_soft=True)
        g, _ = harden_roles(g, (("attr", "attr_pred"),), "threshold", self.threshold)
        a, _ = harden_roles(a, (("task", "task_pred"),), "threshold", self.threshold)
        n = check_consistent_length(attr=g["attr"], task=a["task"], attr_pred=g.get("attr_pred"),
                                    task_pred=a.get("task_pred"))
        ng = len(self.attr_classes)
        codes = {name: _group_codes(m) for name, m in g.items()}
        groups = _Grouping([codes["attr"]] + ([codes["attr_pred"]] if "attr_pred" in codes else []), ng, weights)
        test_counts = groups.counts(self._bits(a["task"]), *self._fixed())
        self.test_joint += test_counts[0]
        if "attr_pred" in codes:
            self.joint_ghat_m += test_counts[1]
            self.pred_attr += _group_totals(codes["attr_pred"], ng, weights)
        if "task_pred" in a:
            pred_counts = groups.counts(self._bits(a["task_pred"]), *self._fixed())
            self.joint_g_mhat += pred_counts[0]
            if "attr_pred" in codes:
                self.joint_ghat_mhat += pred_counts[1]
        self.n_test = self.n_test + (n if weights is None else weights.sum())
        self.test_attr += _group_totals(codes["attr"], ng, weights)
        self.roles = roles
        self.rows = rows if self.rows is None else self.rows + rows
        self.weighted = self.weighted or weights is not None
        if self.n_boot:
            from scipy import sparse

            from biasamp._engine.resample import augmented, label_rows
            from biasamp.multiattribute._plan import containment_rows

            idx, combos = np.arange(n), self.combinations

            def onehot(name):
                if name not in codes:
                    return sparse.csr_matrix((n, ng))
                return sparse.csr_matrix((np.ones(n), (idx, codes[name])), shape=(n, ng))

            def contained(name):
                if name not in a:
                    return sparse.csr_matrix((n, len(combos)))
                return containment_rows(label_rows(a[name], idx), self.task_classes, combos)

            left = augmented([onehot("attr"), onehot("attr_pred")], n)
            if weights is not None:  # a row's replicate weight multiplies its sample weight
                left = sparse.csr_matrix(sparse.diags(weights) @ left)
            self._boot_update(left, augmented([contained("task"), contained("task_pred")], n), n, row_ids)
        return self

    def _boot_plan(self):
        from biasamp.multiattribute._plan import multi_evaluator

        point = self.compute()
        frozen = {c: j for j, c in enumerate(self.combinations)}
        kept = np.array([frozen[c] for c in point.combinations], dtype=np.int64)
        g, k = len(self.attr_classes), len(self.combinations)
        cols = np.concatenate([[0], 1 + kept, 1 + k + kept])
        full = np.zeros((1 + 2 * g, 1 + 2 * k))
        full[0, 0] = self.n_test
        full[1:1 + g, 0], full[1 + g:, 0] = self.test_attr, self.pred_attr
        full[1:1 + g, 1:1 + k], full[1:1 + g, 1 + k:] = self.test_joint, self.joint_g_mhat
        full[1 + g:, 1:1 + k], full[1 + g:, 1 + k:] = self.joint_ghat_m, self.joint_ghat_mhat
        return multi_evaluator(point), full[:, cols], self.boot[:, :, cols]

    # ---------------------------------------------------------------- merge
    def _merge_meta(self, other: MultiAttributeAccumulator) -> None:
        for what in ("attr_classes", "task_classes", "mode", "min_size", "max_size", "min_support",
                     "max_combinations", "phase", "group_options"):
            if getattr(self, what) != getattr(other, what):
                raise ValueError(
                    f"cannot merge accumulators with different {what}: "
                    f"{getattr(self, what)!r} vs {getattr(other, what)!r}"
                )
        if self.missing != other.missing:
            raise ValueError(f"cannot merge accumulators with different missing: {self.missing!r} vs {other.missing!r}")
        if self.phase == "collect":
            (s_sets, s_weights), (o_sets, o_weights) = self._collected(), other._collected()
            sets, weights = _distinct_rows(np.concatenate([s_sets, o_sets]),
                                           np.concatenate([s_weights, o_weights]).astype(np.float64))
            self.sets, self.set_weights = sets, weights
            self.n_collected += other.n_collected
            return
        (s_idx, s_sizes), (o_idx, o_sizes) = self._fixed(), other._fixed()
        if (not np.array_equal(s_idx, o_idx) or not np.array_equal(s_sizes, o_sizes)
                or self._frozen_selection != other._frozen_selection):
            raise ValueError(
                "cannot merge accumulators with different combinations (freeze each from the merged pass 1)"
            )
        self.roles = _combine_roles(self.roles, other.roles, "predictions (attr_pred, task_pred)")
        self.weighted = self.weighted or other.weighted
        self.rows = _sum_filters(self.rows, other.rows)
        self.train_rows = _sum_filters(self.train_rows, other.train_rows)

    # ----------------------------------------------------------------- read
    def counts(self) -> tuple[MultiAttributeCounts, dict, str]:
        """The count table of the kept combinations, the selection record and the train source.

        Applies the filters of the functional API: combinations with fewer
        than ``min_support`` training rows, or never contained in a test
        ground-truth row, are removed.
        """
        self._check_counting()
        if self.roles is None or self.rows is None:
            raise ValueError("no test batch was counted: call update() first")
        weighted = self.weighted
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
        if self.train_rows is not None:
            source, train_rows = "train", self.train_rows
            n_train, train_attr, train_joint = total(self.n_train), table(self.train_attr), table(self.train_joint)
        else:
            source, train_rows = "test", self.rows
            n_train, train_attr, train_joint = total(self.n_test), table(self.test_attr), table(self.test_joint)
        if self._frozen_selection is None:
            raise ValueError("the combinations are not fixed yet: call freeze() after collect()")
        sel = dict(self._frozen_selection)
        keep = train_joint.sum(axis=0) >= self.min_support
        sel["removed_min_support"] += int((~keep).sum())
        if not keep.any():
            raise ValueError(
                f"min_support={self.min_support} removed all {len(keep)} candidate combinations "
                f"(combinations={self.mode!r}): none is contained in that many training instances"
            )
        in_test = self.test_joint.sum(axis=0) > 0
        sel["removed_not_in_test"] = int((keep & ~in_test).sum())
        keep &= in_test
        if not keep.any():
            raise ValueError(
                f"none of the {int((train_joint.sum(axis=0) >= self.min_support).sum())} candidate "
                f"combinations (combinations={self.mode!r}) occurs in the test ground truth (task): "
                "the test filter removed them all"
            )
        has_gp, has_ap = self.roles
        combos = tuple(c for c, k in zip(self.combinations, keep) if k)
        counts = MultiAttributeCounts(
            attr_classes=self.attr_classes,
            task_classes=self.task_classes,
            combinations=combos,
            n_train=n_train,
            train_attr=train_attr,
            train_joint=train_joint[:, keep],
            n_test=total(self.n_test),
            test_attr=table(self.test_attr),
            test_joint=table(self.test_joint)[:, keep],
            pred_attr=table(self.pred_attr) if has_gp else None,
            joint_g_mhat=table(self.joint_g_mhat)[:, keep] if has_ap else None,
            joint_ghat_m=table(self.joint_ghat_m)[:, keep] if has_gp else None,
            joint_ghat_mhat=table(self.joint_ghat_mhat)[:, keep] if has_gp and has_ap else None,
            weighted=weighted,
            rows=self.rows,
            train_rows=train_rows,
        )
        _, sizes = self._fixed()
        selection = {
            "mode": self.mode,
            "min_size": self.min_size if self.mode != "given" else int(sizes.min()),
            "max_size": self.max_size if self.mode != "given" else int(sizes.max()),
            "min_support": self.min_support,
            "support": "containment",
            "n_candidates": sel["n_candidates"],
            "removed_min_support": sel["removed_min_support"],
            "removed_not_in_test": sel["removed_not_in_test"],
        }
        return counts, selection, source

    def compute(self) -> MultiBiasAmpResult:
        """Multi_MALS, Multi G→M and Multi M→G of every row counted.

        Returns
        -------
        MultiBiasAmpResult
            As returned by :func:`~biasamp.multi_bias_amp` on all the rows.

        Raises
        ------
        ValueError
            Combinations not fixed, nothing counted, no combination surviving
            the filters, or every pair undefined.
        """
        counts, selection, source = self.counts()
        return multi_from_counts(counts, selection=selection, train_source=source, **self.group_options)

    def reset(self) -> MultiAttributeAccumulator:
        """Zero the counts (pass 1: the collected sets; pass 2: the tables, M is kept); returns ``self``."""
        if self.phase == "collect":
            sets, set_weights = self._collected()
            self.sets, self.set_weights = sets[:0], set_weights[:0]
            self.n_collected = 0
        else:
            for name in _MULTI_TABLES:
                setattr(self, name, np.zeros_like(getattr(self, name)))
            if self.n_boot:
                self.boot[...] = 0
                self.rows_seen = 0
            self.roles = None
            self.rows = self.train_rows = None
            self.weighted = False
        return self

    def __repr__(self) -> str:
        if self.phase == "collect":
            state = f"pass 1: {self.n_collected} rows, {len(self._collected()[1])} distinct task sets"
        else:
            state = f"{len(self._fixed()[1])} combinations, n_train={int(self.n_train)}, n_test={int(self.n_test)}"
        return (
            f"MultiAttributeAccumulator(combinations={self.mode!r}, {len(self.attr_classes)} attr classes, "
            f"{len(self.task_classes)} task classes; {state})"
        )
