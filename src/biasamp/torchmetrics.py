"""torchmetrics classes for the count-based metrics (the ``[torchmetrics]`` extra).

Every co-occurrence, multi-attribute and group fairness metric of biasamp is a
pure function of small count tables that add. The classes below are
:class:`torchmetrics.Metric` subclasses whose *states are those tables*: each
table of the wrapped accumulator of :mod:`biasamp.accumulators` (its
``_tables()``) is registered with ``add_state(..., dist_reduce_fx="sum")``
as a float64 tensor named ``<family key>_<table>``. So everything torchmetrics
does with states works unchanged: DDP / Lightning synchronisation (the tables
are summed over the ranks), ``reset``, ``merge_state``, ``MetricCollection``
(with compute groups), ``forward`` and ``self.log``.

No counting happens here. ``update`` runs the accumulator's own ``update`` on
the batch (on the CPU, torch tensors accepted), adds the batch's tables into
the states and zeroes the accumulator's tables again; ``compute`` copies the
(synchronised) states back into an accumulator and calls its ``compute``. The
accumulator's metadata (the roles counted, soft flags, fixed training counts)
stays with the metric; when the states were synchronised over
``torch.distributed`` ranks, the metadata of every rank is gathered and checked
exactly as :meth:`~biasamp.accumulators.Accumulator.merge` does, so a rank
that counted other arguments raises the same ``ValueError`` on every rank.

Two ways to read a metric:

* ``compute()`` returns the headline as a float64 tensor (a dict of them for
  several statistics), what ``self.log``, ``MetricCollection`` and loggers
  expect; it equals the functional API's value bit for bit (hard labels; soft
  predictions to rounding, 1e-12). The statistics are the family's declared
  ones (:mod:`biasamp._family`), read from the result as the bootstrap and
  the curves read them.
* ``result()`` returns the functional API's full result object
  (:class:`~biasamp.DirectionalBiasAmpResult`, :class:`~biasamp.MALSResult`,
  :class:`~biasamp.MultiBiasAmpResult`, :class:`~biasamp.FairnessResult`,
  :class:`~biasamp.DFBiasAmpResult`) with the per-pair / per-class tables,
  synchronised the same way. (torchmetrics only lets tensors and plain
  collections out of ``compute()``.)

One class does the work for every registered family:
:class:`AccumulatorMetric`, which wraps any accumulator
(:func:`metric_for` finds the class of a family). The named classes fix the
family and keep the keyword names of the functional API:
:class:`BiasAmpDirectional` (BiasAmp→, Wang & Russakovsky 2021),
:class:`BiasAmpMALS` (Zhao et al. 2017), :class:`MultiBiasAmp` (Multi_MALS and
Multi→, Zhao, Andrews & Xiang 2023), :class:`GroupFairness` (DP, DI, SPSF,
FPSF, EOFP, EOTP, BA of Qian et al. 2021) and :class:`DifferentialFairness`
(Foulds et al. 2020). ``from_accumulator`` wraps an accumulator configured
elsewhere (e.g. a multi-attribute accumulator whose combinations were chosen
in a first pass).
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

try:
    import torch
    from torchmetrics import Metric
    from torchmetrics.utilities.exceptions import TorchMetricsUserError
except ImportError as exc:  # pragma: no cover - exercised only where torchmetrics is absent
    raise ImportError(
        "biasamp.torchmetrics needs torch and torchmetrics: install PyTorch (https://pytorch.org/get-started; "
        "on a machine without CUDA, its CPU build), then pip install \"torchmetrics>=1.0\" "
        "(or pip install \"biasamp[torchmetrics]\")"
    ) from exc

from biasamp._families import REGISTRY
from biasamp._family import Family
from biasamp.accumulators import (
    Accumulator,
    CooccurrenceAccumulator,
    FairnessAccumulator,
    MultiAttributeAccumulator,
    _declaration,
    accumulator_for,
    bind,
    class_list_docs,
    declared_options,
    named_doc,
    named_signature,
    update_parameters,
)
from biasamp.cooccurrence._counts import CooccurrenceCounts
from biasamp.fairness import METRICS

__all__ = ["AccumulatorMetric", "BiasAmpDirectional", "BiasAmpMALS", "DifferentialFairness", "GroupFairness",
           "MultiBiasAmp", "metric_for"]


def metric_for(key: str) -> type:
    """The ``torchmetrics.Metric`` class of the registered family ``key``.

    Its named class (``family = key``; a class the declaration says is generated, ``Family.named``, is
    generated on demand), else the generic :class:`AccumulatorMetric`.
    """
    try:
        _declaration(key)
    except KeyError:
        raise KeyError(f"no torchmetrics class computes the family {key!r}") from None
    stack = list(_AccumulatorMetric.__subclasses__())
    while stack:
        cls = stack.pop(0)
        if cls.__dict__.get("family") == key and cls is not AccumulatorMetric \
                and cls.__dict__.get("declaration", REGISTRY[key]) is REGISTRY[key]:
            return cls
        stack += cls.__subclasses__()
    named = REGISTRY[key].named
    if named is not None and named.generated and named.metric:  # a family registered later (a plug-in)
        return named_metric(REGISTRY[key])
    return AccumulatorMetric


def _declared(name: str) -> str:
    """The family whose declaration names ``name`` its torchmetrics class (``Named.metric``)."""
    (key,) = REGISTRY.named("metric", name)
    return key


def _check_choice(value: Any, name: str, choices: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {value!r}")
    return value


#: a number per metric that keeps its distinct rows (see ``_AccumulatorMetric.__init__``)
_INSTANCES = itertools.count(1)


class _AccumulatorMetric(Metric):
    """The generic body: a ``torchmetrics.Metric`` whose states are the count tables of an accumulator.

    Subclasses fix ``family`` and take their own options in ``_set_options``
    (which chooses the statistics :meth:`compute` returns).
    """

    is_differentiable = False
    higher_is_better: bool | None = None
    full_state_update = False
    #: the registered family a named class computes (None: the wrapped accumulator's)
    family: str | None = None

    def __init__(self, accumulator: Accumulator, **kwargs: Any) -> None:
        names = set(inspect.signature(self._set_options).parameters)
        options = {k: kwargs.pop(k) for k in list(kwargs) if k in names}
        super().__init__(**kwargs)
        self._check_accumulator(accumulator)
        # this process's settings and metadata (roles, soft flags); its tables are zero between batches
        # (annotated here, not in the class body: torch.jit.script reads the class annotations of a Metric)
        self._acc: Any = accumulator.copy()
        self._prefix = accumulator.key + "_"
        self._tables: dict[str, tuple[tuple, np.dtype]] = {}
        for table, value in accumulator._tables().items():
            arr = np.asarray(value)
            name = self._prefix + table
            if hasattr(self, name):
                raise ValueError(f"the table {table!r} would shadow the attribute {name!r} of {type(self).__name__}")
            self._tables[table] = (arr.shape, arr.dtype)
            self.add_state(name, default=torch.zeros(arr.shape, dtype=torch.float64), dist_reduce_fx="sum")
        if accumulator._declared.keeps_rows(accumulator.settings):
            # the metadata holds the distinct rows counted (cross-fitting, split at compute): a torchmetrics compute
            # group (MetricCollection updates its first member only) would leave the other members' rows behind,
            # so a state of a value of its own keeps every such metric in a group of its own (the value is unread)
            self.add_state(self._prefix + "own_rows", default=torch.tensor(float(next(_INSTANCES)),
                                                                           dtype=torch.float64), dist_reduce_fx="max")
        self._result: Any = None
        self._keep_batch = False
        self._batch: Accumulator | None = None
        self._in_forward = False
        self._set_options(**options)

    # ------------------------------------------------------------------ setup
    #: the family options a hand-written class takes through ``**kwargs`` (``declared_options`` sets them)
    declared_options: tuple[str, ...] = ()

    @classmethod
    def _declared_options(cls, kwargs: dict[str, Any]) -> dict[str, Any]:
        """The family options among a hand-written class's keywords, taken out of them (the rest are
        torchmetrics' own)."""
        return {k: kwargs.pop(k) for k in cls.declared_options if k in kwargs}

    @classmethod
    def from_accumulator(cls, accumulator: Accumulator, **kwargs: Any) -> _AccumulatorMetric:
        """A metric counting with the settings of ``accumulator`` (which must not have counted yet).

        Use it for settings the constructor does not take, e.g. a
        :class:`~biasamp.accumulators.MultiAttributeAccumulator` whose
        combinations were chosen from the training set in a first pass
        (``collect``, ``sync``, ``freeze``).

        Parameters
        ----------
        accumulator : accumulator of :mod:`biasamp.accumulators`
            Its class lists and settings are copied; its tables must be zero.
        **kwargs
            The class's own options (e.g. ``direction``) and torchmetrics'
            keyword arguments (``sync_on_compute``, ``process_group``, ...).
        """
        self = cls.__new__(cls)
        _AccumulatorMetric.__init__(self, accumulator, **kwargs)
        return self

    def _set_options(self) -> None:
        """Choose the statistics :meth:`compute` returns (default: the family's headline statistics)."""
        family = REGISTRY[self._acc.key]
        names = tuple(s.name for s in family.statistics if s.headline)
        self._choose(names, single=len(names) == 1, asked=f"statistics={names!r}")

    def _choose(self, names: tuple, single: bool, asked: str) -> None:
        """Return the statistics ``names`` (one tensor if ``single``); ``asked``: the option, for messages."""
        self._statistics = names
        self._single = single
        self._asked = asked

    def _check_accumulator(self, acc: Any) -> None:
        family, cls = type(self).family, type(self).__name__
        if family is not None:
            expected = accumulator_for(family)
            if not isinstance(acc, Accumulator) or (acc.key != family and not isinstance(acc, expected)):
                raise TypeError(f"{cls} wraps a {expected.__name__}, got {type(acc).__name__}")
            if acc.key != family:
                raise ValueError(f"{cls} needs a {type(acc).__name__} of the family {family!r} (metric={family!r}), "
                                 f"got metric={acc.key!r}")
        elif not isinstance(acc, Accumulator):
            raise TypeError(f"{cls} wraps an accumulator of biasamp.accumulators, got {type(acc).__name__}")
        acc._check_counting()  # a family's pre-pass must be over: the tables' shapes are fixed
        counted = [t for t, v in acc._tables().items() if np.any(np.asarray(v) != 0)]
        if counted:
            raise ValueError(
                f"the accumulator has already counted (tables {counted}); a metric takes its settings, not its "
                "counts: pass one that has not counted yet, or call its reset() first"
            )

    # ---------------------------------------------------------------- counting
    def update(self, *args: Any, **roles: Any) -> None:
        """Count one batch given by label role, as keywords (see :meth:`.Accumulator.update_roles`)."""
        if args:
            raise TypeError("give the batch by label role, as keywords (attr=..., task=..., task_pred=...)")
        self._count("update_roles", roles)

    def _count(self, method: str, *args: Any, **kwargs: Any) -> None:
        """Run the accumulator's ``method`` on one batch and add its tables into the states."""
        acc = self._acc
        if getattr(acc, "n_boot", 0) and not getattr(self, "_stream_set", False):
            from biasamp._engine.torch_dist import is_distributed

            if is_distributed():  # distinct bootstrap row ids on every rank
                import torch.distributed as dist

                acc.stream = dist.get_rank(self.process_group)
            self._stream_set = True
        try:
            getattr(acc, method)(*args, **kwargs)
            held = getattr(self, "_held", None)
            if held is not None:  # forward: the batch was counted alone; it must carry the earlier batches' arguments
                held.check_batch(acc.state)
            for table, value in acc._tables().items():
                state = getattr(self, self._prefix + table)
                batch = torch.from_numpy(np.asarray(value, dtype=np.float64))
                state.add_(batch.to(state.device))
            if self._keep_batch:
                self._batch = acc.copy()
        finally:
            acc._zero_tables()

    def bootstrap(self, **kwargs: Any) -> Any:
        """Intervals and tests from the bootstrap's hashed group tables (a metric built from an accumulator with
        ``n_boot > 0``, see :meth:`from_accumulator`); keyword arguments as in the accumulators' ``bootstrap``.
        """
        return self._counted().bootstrap(**kwargs)

    def _counted(self) -> Accumulator:
        """An accumulator holding the states (synchronised, if they are) and the metadata of every rank."""
        acc = self._acc._shell()
        if self._is_synced:  # the states hold every rank's counts: gather the ranks' metadata too
            import torch.distributed as dist

            shells: list = [None] * dist.get_world_size(self.process_group)
            dist.all_gather_object(shells, acc, group=self.process_group)
            acc = shells[0]
            for other in shells[1:]:
                acc._merge_meta(other)  # the same ValueError on every rank, after the collective
        tables = {}
        for table, (_, dtype) in self._tables.items():
            values = getattr(self, self._prefix + table).detach().cpu().numpy()
            if np.issubdtype(dtype, np.integer):
                values = np.rint(values)
            tables[table] = values.astype(dtype)
        acc._set_tables(tables)
        return acc

    def compute(self) -> Any:
        """The headline value(s) over every batch counted (and every rank, in a distributed run).

        Returns
        -------
        torch.Tensor (float64, 0-d), or dict of them
            See the class; :meth:`result` has the full result object.

        Raises
        ------
        ValueError
            Nothing counted, ranks or batches that counted different
            arguments, or a value undefined (as the functional API).
        """
        self._result = self._counted().compute()
        return self._headline(self._result)

    def result(self) -> Any:
        """The functional API's full result over every batch (and rank): the same synchronisation as :meth:`compute`."""
        self.compute()
        return self._result

    def _headline(self, result: Any) -> Any:
        """The chosen statistics of ``result``, read as the family declares them."""
        family = REGISTRY[self._acc.key]
        values = {}
        for name in self._statistics:
            spec = family.statistic(name)
            try:
                values[name] = self._tensor(spec.read(result)[0])
            except (AttributeError, KeyError, TypeError):  # a statistic of predictions no batch gave
                raise ValueError(f"{self._asked} needs {' and '.join(spec.needs)} in update(); the batches did not "
                                 "give it") from None
        return values[self._statistics[0]] if self._single else values

    def _tensor(self, value: float) -> torch.Tensor:
        return torch.tensor(value, dtype=torch.float64, device=self.device)

    # ---------------------------------------------------- torchmetrics plumbing
    @torch.jit.unused
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Count the batch (as :meth:`update`) and return the headline of this batch alone.

        The batch value uses the batch's own test counts (and the fixed
        ``train`` counts, if any; counts of ``update_train`` are not included).
        It raises where the metric is undefined on the batch (e.g. a batch
        showing one group only): in a training loop prefer ``update`` per batch
        and ``compute`` per epoch. The batch is counted on a state of its own
        (its own distinct rows, so a cross-fitted batch value is the function
        on the batch), whose metadata then joins the earlier batches'.
        """
        if self._is_synced and not self.dist_sync_on_step:
            raise TorchMetricsUserError(
                "The Metric shouldn't be synced when performing ``forward``. HINT: Did you forget to call ``unsync`` ?."
            )
        acc = self._acc
        acc._check_counting()
        held, acc.state = acc.state, acc._declared.start(acc.settings)
        self._held, counted = held, False
        try:
            value = self._forward_batch(*args, **kwargs)
            counted = True
            return value
        finally:
            self._held = None
            acc.state = held.combine_meta(acc.state) if counted else held

    def _forward_batch(self, *args: Any, **kwargs: Any) -> Any:
        """Count the batch into the states and return its headline (the accumulator's state holds the batch)."""
        if self.dist_sync_on_step:  # torchmetrics' path, the batch value synchronised over the ranks
            self._in_forward = True
            try:
                return super().forward(*args, **kwargs)
            finally:
                self._in_forward = False
        self._keep_batch = True
        try:
            self.update(*args, **kwargs)
        finally:
            self._keep_batch = False
        batch, self._batch = self._batch, None
        assert batch is not None  # update() kept it (_keep_batch)
        self._forward_cache = self._headline(batch.compute())
        return self._forward_cache

    def reset(self) -> None:
        """Zero the counts and forget the roles and flags seen (fixed ``train`` counts and combinations are kept)."""
        super().reset()
        if not self._in_forward:
            self._acc.reset()
        else:  # Metric.forward counts the batch twice, resetting in between: the second count alone is the batch's
            # (the metadata of earlier batches is held by forward and joins it at the end)
            self._acc.state = self._acc._declared.start(self._acc.settings)
        self._result = None

    def merge_state(self, incoming_state: Any) -> None:
        """Add another metric's counts (and roles seen) into this one; a dict of states adds the counts only."""
        if isinstance(incoming_state, Metric):
            if type(incoming_state) is not type(self):
                raise ValueError(
                    f"Expected incoming state to be an instance of {type(self).__name__} but got {type(incoming_state)}"
                )
            self._acc._merge_meta(incoming_state._acc)
        super().merge_state(incoming_state)

    def extra_repr(self) -> str:
        return f"family={self._acc.key!r}, statistics={list(self._statistics)!r}"


class AccumulatorMetric(_AccumulatorMetric):
    r"""A ``torchmetrics.Metric`` whose states are the count tables of any biasamp accumulator.

    With :math:`C(B)` the count table of a batch :math:`B` and :math:`f` the
    family's pure function of the counts,

    .. math::

        \text{compute}() = f\Big(\sum_{\text{ranks}} \sum_{\text{batches}} C(B)\Big)

    so the tables are states reduced by summation (``dist_reduce_fx="sum"``).
    The statistics :meth:`compute` returns are the family's declared ones.

    Parameters
    ----------
    accumulator : Accumulator
        An accumulator of :mod:`biasamp.accumulators` that has not counted
        yet (its class lists and settings are copied).
    statistics : str or sequence of str, optional
        The family's statistics :meth:`compute` returns (one: a 0-d tensor;
        several: a dict name -> tensor). Default: its headline statistics.
    **kwargs
        torchmetrics' keyword arguments (``sync_on_compute``,
        ``process_group``, ``dist_sync_on_step``, ...).

    See Also
    --------
    metric_for : the class of a family.
    biasamp.accumulators.Accumulator : the framework-free streaming form.

    Notes
    -----
    The state names are ``<family key>_<table>``, so metrics counting
    different tables never share a ``MetricCollection`` compute group, and
    metrics of one family with the same settings do.

    References
    ----------
    .. [1] torchmetrics: "Implementing a Metric", states reduced by ``dist_reduce_fx``.

    Examples
    --------
    >>> import pytest
    >>> _ = pytest.importorskip("torchmetrics")
    >>> from biasamp.accumulators import Accumulator
    >>> from biasamp.torchmetrics import AccumulatorMetric
    >>> metric = AccumulatorMetric(Accumulator("differential", {"task": [0, 1], "attr": ["a", "b"]}),
    ...                            statistics="DF amplification")
    >>> metric.update(task=[1, 1, 0, 0, 1, 1, 0, 0], task_pred=[1, 1, 1, 0, 1, 0, 0, 0], attr=list("aaaabbbb"))
    >>> round(float(metric.compute()), 4)
    0.8473
    """

    def _set_options(self, statistics: str | Sequence[str] | None = None) -> None:
        """Choose the statistics :meth:`compute` returns (default: the family's headline statistics)."""
        if statistics is None:
            super()._set_options()
            return
        family = REGISTRY[self._acc.key]
        names = (statistics,) if isinstance(statistics, str) else tuple(statistics)
        for name in names:
            family.statistic(name)  # KeyError naming the family's statistics
        self._choose(names, single=len(names) == 1, asked=f"statistics={names!r}")


# --------------------------------------------------------------------------- #
# co-occurrence
# --------------------------------------------------------------------------- #
@declared_options("metric")
class BiasAmpDirectional(_AccumulatorMetric):
    r"""Directional bias amplification BiasAmp→ (Wang & Russakovsky 2021) as a torchmetrics ``Metric``.

    .. math::

        \text{BiasAmp}_{\rightarrow} = \frac{1}{|\mathcal{A}||\mathcal{T}|}
            \sum_{a,t} y_{at}\,\Delta_{at}

    with, for A→T, :math:`\Delta_{at} = P(\hat T_t = 1 | A_a = 1) - P(T_t = 1 | A_a = 1)`
    and for T→A :math:`\Delta_{at} = P(\hat A_a = 1 | T_t = 1) - P(A_a = 1 | T_t = 1)`
    (see :func:`~biasamp.bias_amp_directional`). The states are the tables of
    a :class:`~biasamp.accumulators.CooccurrenceAccumulator`.

    Parameters
    ----------
    attr_classes, task_classes : sequence or int
        Class lists of the protected attribute A and of the task T (an int
        ``k`` means ``0..k-1``), fixed up front because a batch need not show
        every class. Pass the classes the functional API would infer (the
        sorted union of the ground-truth labels) for identical results.
    direction : {"A->T", "T->A"}, default "A->T"
        Which direction :meth:`compute` returns (A→T needs ``task_pred``, T→A
        ``attr_pred``); :meth:`result` has both when both were given. Two
        metrics that differ only in ``direction`` share their states in a
        ``MetricCollection`` (one count).
    train : CooccurrenceCounts, optional
        Fixed training counts for the signs ``y_at``; or stream the training
        set with :meth:`update_train`; without either the test ground truth
        is used (``train_source="test"``), as in the functional API, and the
        signs are cross-fitted over one split of all the rows counted unless
        ``cross_fit=False`` (see
        :class:`~biasamp.accumulators.CooccurrenceAccumulator`).
    n_boot : int, default 0
        Replicates of the streamed bootstrap (0: none; :meth:`bootstrap`).
    random_state : int, optional
        Seed of the streamed bootstrap.
    {options}
    **kwargs
        torchmetrics' keyword arguments (``sync_on_compute``,
        ``process_group``, ``dist_sync_on_step``, ...).

    See Also
    --------
    biasamp.bias_amp_directional : the functional form.
    biasamp.accumulators.CooccurrenceAccumulator : the framework-free streaming form.

    Notes
    -----
    ``compute()`` returns a 0-d float64 tensor equal to
    ``bias_amp_directional(...).a_to_t.value`` (or ``.t_to_a.value``) on all
    the rows counted, on any number of batches and ranks: for hard labels
    every count is an exact integer, so the value is bit-identical. Without
    a training set the signs are cross-fitted (``cross_fit``,
    ``cross_fit_random_state``, as in
    :class:`~biasamp.accumulators.CooccurrenceAccumulator`) over one split
    of all the rows counted, on every batch and rank: the metric keeps the
    distinct rows and splits them at ``compute()``, so the value is the
    function's whatever the batching; ``cross_fit=False`` is the plug-in.

    References
    ----------
    .. [1] A. Wang, O. Russakovsky. "Directional Bias Amplification". ICML 2021, Eq. 2.

    Examples
    --------
    The "shortcoming 2" example of Wang & Russakovsky, in three batches of tensors:

    >>> import torch
    >>> from biasamp.torchmetrics import BiasAmpDirectional
    >>> attr = torch.repeat_interleave(torch.tensor([1, 2]), torch.tensor([90, 30]))
    >>> task = torch.cat([torch.repeat_interleave(torch.tensor([0, 1]), torch.tensor([60, 30])),
    ...                   torch.repeat_interleave(torch.tensor([0, 1]), torch.tensor([10, 20]))])
    >>> task_pred = (attr == 2).long()
    >>> metric = BiasAmpDirectional([1, 2], [0, 1])
    >>> for rows in torch.arange(120).chunk(3):
    ...     metric.update(attr[rows], task[rows], task_pred=task_pred[rows])
    >>> metric.compute()
    tensor(0.3333, dtype=torch.float64)
    >>> metric.result().a_to_t.n_pairs  # the binary task's positive class, with each group
    2
    """

    family = _declared("BiasAmpDirectional")  # the registered family it computes

    def __init__(self, attr_classes: Sequence | int, task_classes: Sequence | int, *, direction: str = "A->T",
                 train: CooccurrenceCounts | None = None, n_boot: int = 0, random_state: Any = None,
                 **kwargs: Any) -> None:
        options = self._declared_options(kwargs)
        super().__init__(CooccurrenceAccumulator(attr_classes, task_classes, metric=self.family, train=train,
                                                 n_boot=n_boot, random_state=random_state, **options),
                         direction=direction, **kwargs)

    def _set_options(self, direction: str = "A->T") -> None:
        self.direction = _check_choice(direction, "direction", ("A->T", "T->A"))
        self._choose((direction,), single=True, asked=f"direction={direction!r}")

    def update(self, attr: Any, task: Any, *, attr_pred: Any = None, task_pred: Any = None) -> None:
        """Count one batch of test rows (as :meth:`CooccurrenceAccumulator.update`); tensors on any device."""
        self._count("update", attr, task, attr_pred=attr_pred, task_pred=task_pred)

    def update_train(self, attr: Any, task: Any) -> None:
        """Count one batch of the *training* ground truth (for the signs ``y_at``)."""
        self._computed = None
        self._count("update_train", attr, task)

    def extra_repr(self) -> str:
        acc = self._acc
        return f"attr_classes={list(acc.attr_classes)!r}, task_classes={list(acc.task_classes)!r}, " \
               f"direction={self.direction!r}"


@declared_options("metric")
class BiasAmpMALS(_AccumulatorMetric):
    r"""BiasAmp_MALS (Zhao et al. 2017) as a torchmetrics ``Metric``.

    .. math::

        \text{BiasAmp}_{\text{MALS}} = \frac{1}{|\mathcal{T}|}\sum_{a,t}
            \mathbb{1}\big[b_{\text{train}}(a,t) > \tfrac{1}{|\mathcal{A}|}\big]
            \big(b_{\text{pred}}(a,t) - b_{\text{train}}(a,t)\big)

    (see :func:`~biasamp.bias_amp_mals`). The states are the tables of a
    :class:`~biasamp.accumulators.CooccurrenceAccumulator` with
    ``metric="mals"``.

    Parameters
    ----------
    attr_classes, task_classes : sequence or int
        Class lists of A and T (an int ``k`` means ``0..k-1``).
    train : CooccurrenceCounts, optional
        Fixed training counts for ``b_train``; or stream them with
        :meth:`update_train`, or give the test ground truth in :meth:`update`
        (the indicator is then cross-fitted over one split of all the rows
        counted unless ``cross_fit=False``).
    n_boot : int, default 0
        Replicates of the streamed bootstrap (0: none; :meth:`bootstrap`).
    random_state : int, optional
        Seed of the streamed bootstrap.
    {options}
    **kwargs
        torchmetrics' keyword arguments.

    See Also
    --------
    biasamp.bias_amp_mals : the functional form.

    References
    ----------
    .. [1] J. Zhao et al. "Men Also Like Shopping: Reducing Gender Bias
       Amplification using Corpus-level Constraints". EMNLP 2017.

    Examples
    --------
    In training, 3 of the 4 rows of task 1 have attribute 0 and 3 of the 4
    rows of task 0 attribute 1 (``b_train = 3/4``); the predictions make both
    biases 1, so BiasAmp_MALS = ((1 - 3/4) + (1 - 3/4)) / 2:

    >>> import torch
    >>> from biasamp.torchmetrics import BiasAmpMALS
    >>> attr = torch.tensor([0, 0, 0, 0, 1, 1, 1, 1])
    >>> task = torch.tensor([1, 1, 1, 0, 1, 0, 0, 0])
    >>> metric = BiasAmpMALS(2, 2)
    >>> metric.update_train(attr, task)
    >>> metric.update(attr_pred=attr, task_pred=torch.tensor([1, 1, 1, 1, 0, 0, 0, 0]))
    >>> metric.compute()
    tensor(0.2500, dtype=torch.float64)
    """

    family = _declared("BiasAmpMALS")  # the registered family it computes

    def __init__(self, attr_classes: Sequence | int, task_classes: Sequence | int, *,
                 train: CooccurrenceCounts | None = None, n_boot: int = 0, random_state: Any = None,
                 **kwargs: Any) -> None:
        options = self._declared_options(kwargs)
        super().__init__(CooccurrenceAccumulator(attr_classes, task_classes, metric=self.family, train=train,
                                                 n_boot=n_boot, random_state=random_state, **options), **kwargs)

    def _set_options(self) -> None:
        self._choose(("MALS",), single=True, asked="BiasAmp_MALS")

    def update(self, attr: Any = None, task: Any = None, *, attr_pred: Any, task_pred: Any) -> None:
        """Count one batch of predictions (and, optionally, its test ground truth)."""
        self._count("update", attr, task, attr_pred=attr_pred, task_pred=task_pred)

    def update_train(self, attr: Any, task: Any) -> None:
        """Count one batch of the *training* ground truth (for ``b_train``)."""
        self._computed = None
        self._count("update_train", attr, task)

    def extra_repr(self) -> str:
        acc = self._acc
        return f"attr_classes={list(acc.attr_classes)!r}, task_classes={list(acc.task_classes)!r}"


# --------------------------------------------------------------------------- #
# multi-attribute
# --------------------------------------------------------------------------- #
#: the metric= choices and the statistics they read
_MULTI_STATISTICS = {"Multi_MALS": "Multi_MALS", "Multi_G->M": "G->M", "Multi_M->G": "M->G"}


@declared_options("metric", own=("combinations",))
class MultiBiasAmp(_AccumulatorMetric):
    r"""Multi-attribute bias amplification Multi_MALS / Multi→ (Zhao, Andrews & Xiang 2023) as a ``Metric``.

    .. math::

        \text{Multi}_{\text{MALS}} = \frac{1}{|M|} \sum_{g, m} |\Delta_{gm}|

    over a fixed set M of combinations of task labels (see
    :func:`~biasamp.multi_bias_amp`). The states are the tables of a
    :class:`~biasamp.accumulators.MultiAttributeAccumulator`, whose shapes
    depend on M: M is given here, or chosen from the training set in a first
    pass with the accumulator (``collect`` on every batch, ``sync``,
    ``freeze``) and handed over with :meth:`from_accumulator`.

    Parameters
    ----------
    attr_classes : sequence or int
        Classes of the protected attribute (the paper's groups; one-hot).
    task_classes : sequence or int
        Task labels (the paper's attributes; multi-label).
    combinations : sequence of sequences
        The combinations M, each a tuple of task names.
    metric : {"Multi_MALS", "Multi_G->M", "Multi_M->G"}, default "Multi_MALS"
        Which metric :meth:`compute` returns (Multi_MALS needs ``attr_pred``
        and ``task_pred``, G→M ``task_pred``, M→G ``attr_pred``).
    raw : bool, default False
        Return the signed version (``.raw``) instead of the headline of
        absolute differences (``.value``).
    n_boot : int, default 0
        Replicates of the streamed bootstrap (0: none; :meth:`bootstrap`).
    random_state : int, optional
        Seed of the streamed bootstrap.
    {options}
    **kwargs
        torchmetrics' keyword arguments.

    See Also
    --------
    biasamp.multi_bias_amp : the functional form.

    References
    ----------
    .. [1] D. Zhao, J. T. A. Andrews, A. Xiang. "Men Also Do Laundry:
       Multi-Attribute Bias Amplification". ICML 2023, Eq. 1-3.

    Examples
    --------
    >>> import torch
    >>> from biasamp.torchmetrics import MultiBiasAmp
    >>> attr = torch.tensor([0, 0, 0, 0, 1, 1, 1, 1])
    >>> task = torch.tensor([[1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1],
    ...                      [1, 1, 0], [1, 1, 0], [0, 0, 1], [0, 0, 0]])
    >>> task_pred = torch.tensor([[1, 0, 0], [0, 1, 0], [1, 0, 0], [0, 0, 1],
    ...                           [1, 1, 0], [1, 1, 0], [0, 0, 1], [0, 0, 0]])
    >>> metric = MultiBiasAmp([0, 1], ["a", "b", "c"], combinations=[("a",), ("b",), ("c",), ("a", "b")],
    ...                       cross_fit=False)  # the constructed example: signs from every row
    >>> metric.update(attr, task, attr_pred=attr, task_pred=task_pred)
    >>> metric.compute()
    tensor(0.0833, dtype=torch.float64)
    """

    family = _declared("MultiBiasAmp")  # the registered family it computes

    def __init__(self, attr_classes: Sequence | int, task_classes: Sequence | int, *,
                 combinations: Sequence[Sequence], metric: str = "Multi_MALS", raw: bool = False, n_boot: int = 0,
                 random_state: Any = None, **kwargs: Any) -> None:
        options = self._declared_options(kwargs)
        if isinstance(combinations, str):
            raise ValueError(
                f"combinations={combinations!r} needs a first pass over the training set: choose M with a "
                "MultiAttributeAccumulator (collect() on every batch, sync(), freeze()) and wrap it with "
                "MultiBiasAmp.from_accumulator(acc), or give the combinations as a list of tuples"
            )
        acc = MultiAttributeAccumulator(attr_classes, task_classes, combinations=combinations, n_boot=n_boot,
                                        random_state=random_state, **options)
        super().__init__(acc, metric=metric, raw=raw, **kwargs)

    def _set_options(self, metric: str = "Multi_MALS", raw: bool = False) -> None:
        self.metric = _check_choice(metric, "metric", tuple(_MULTI_STATISTICS))
        if not isinstance(raw, bool):
            raise TypeError(f"raw must be a bool, got {type(raw).__name__}")
        self.raw = raw
        statistic = _MULTI_STATISTICS[metric] + (" raw" if raw else "")
        self._choose((statistic,), single=True, asked=f"metric={metric!r}")

    def update(self, attr: Any, task: Any, *, attr_pred: Any = None, task_pred: Any = None) -> None:
        """Count one batch of test rows (as :meth:`MultiAttributeAccumulator.update`)."""
        self._count("update", attr, task, attr_pred=attr_pred, task_pred=task_pred)

    def update_train(self, attr: Any, task: Any) -> None:
        """Count one batch of the *training* ground truth (for ``b_train`` and ``y_gm``)."""
        self._computed = None
        self._count("update_train", attr, task)

    def extra_repr(self) -> str:
        return f"{len(self._acc.combinations)} combinations, metric={self.metric!r}, raw={self.raw}"


# --------------------------------------------------------------------------- #
# group fairness
# --------------------------------------------------------------------------- #
@declared_options("metric", own=("metrics",))
class GroupFairness(_AccumulatorMetric):
    r"""The group fairness metrics of Qian et al. (2021) as a torchmetrics ``Metric``.

    DP, DI, SPSF, FPSF, EOFP, EOTP and BA, per class (one-vs-rest) and
    averaged over classes (see :func:`~biasamp.fairness_metrics`), e.g.

    .. math::

        \mathrm{DP} = \max_g PPR_g - \min_g PPR_g, \qquad
        \mathrm{EOTP} = \max_g TPR_g - \min_g TPR_g .

    The states are the tables of a
    :class:`~biasamp.accumulators.FairnessAccumulator`. Metrics that differ
    only in ``metrics`` share their states in a ``MetricCollection``.

    Parameters
    ----------
    classes : sequence or int
        Class list of the target (an int ``k`` means ``0..k-1``).
    groups : sequence or int
        Group list (tuples for intersectional groups).
    metrics : str or sequence of str, default all seven
        One name: :meth:`compute` returns its overall value as a 0-d
        tensor; several: a dict name -> tensor.
    n_boot : int, default 0
        Replicates of the streamed bootstrap (0: none; :meth:`bootstrap`).
    random_state : int, optional
        Seed of the streamed bootstrap.
    {options}
    **kwargs
        torchmetrics' keyword arguments.

    See Also
    --------
    biasamp.fairness_metrics : the functional form.

    References
    ----------
    .. [1] S. Qian et al. "Are My Deep Learning Systems Fair? An Empirical
       Study of Fixed-Seed Training". NeurIPS 2021, Appendix A.

    Examples
    --------
    The running example of Qian et al. (Table 3):

    >>> import numpy as np
    >>> from biasamp.torchmetrics import GroupFairness
    >>> y_true = np.repeat(["sport", "cook", "sport", "cook"], 100)
    >>> y_pred = np.repeat(["sport", "cook"] * 4, [80, 20, 10, 90, 60, 40, 70, 30])
    >>> gender = np.repeat(["female", "male"], 200)
    >>> metric = GroupFairness(["cook", "sport"], ["female", "male"], metrics="EOTP", average="macro")
    >>> metric.update(y_true, y_pred, sensitive_features=gender)
    >>> metric.compute()
    tensor(0.4000, dtype=torch.float64)
    """

    higher_is_better = False
    family = _declared("GroupFairness")  # the registered family it computes

    def __init__(self, classes: Sequence | int, groups: Sequence | int, *,
                 metrics: str | Sequence[str] = METRICS, n_boot: int = 0, random_state: Any = None,
                 **kwargs: Any) -> None:
        options = self._declared_options(kwargs)
        super().__init__(FairnessAccumulator(classes, groups, metrics=metrics, n_boot=n_boot,
                                             random_state=random_state, **options),
                         single=isinstance(metrics, str), **kwargs)

    def _set_options(self, single: bool = False) -> None:
        self._choose(tuple(self._acc.metrics), single=single, asked=f"metrics={list(self._acc.metrics)!r}")

    def update(self, y_true: Any, y_pred: Any, *, sensitive_features: Any, sample_weight: Any = None) -> None:
        """Count one batch (as :meth:`FairnessAccumulator.update`)."""
        self._count("update", y_true, y_pred, sensitive_features=sensitive_features, sample_weight=sample_weight)

    def extra_repr(self) -> str:
        acc = self._acc
        return f"{len(acc.classes)} classes, groups={list(acc.groups)!r}, metrics={list(acc.metrics)!r}"



# --------------------------------------------------------------------------- #
# the named classes generated from a declaration
# --------------------------------------------------------------------------- #
_BOOT = (inspect.Parameter("n_boot", inspect.Parameter.KEYWORD_ONLY, default=0, annotation="int"),
         inspect.Parameter("random_state", inspect.Parameter.KEYWORD_ONLY, default=None, annotation="Any"))
_BOOT_DOCS = """n_boot : int, default 0
    Replicates of the streamed bootstrap (0: none; :meth:`bootstrap`).
random_state : int, optional
    Seed of the streamed bootstrap.
**kwargs
    torchmetrics' keyword arguments (``sync_on_compute``, ``process_group``, ...)."""


def named_metric(family: Family) -> type[_AccumulatorMetric]:
    """The named ``torchmetrics.Metric`` class of ``family``, generated from its declaration (``Family.named``).

    Its constructor takes what the family's named accumulator takes (class lists, the options with their
    declared defaults, ``n_boot``, ``random_state``) and torchmetrics' keyword arguments; ``update`` names the
    label roles as ``Named.update`` says; ``compute()`` returns ``Named.returns`` (default: the headline
    statistics); its docstring is assembled from the options' declarations.
    """
    named, stream = family.named, family.stream
    if named is None or stream is None or not named.metric:
        raise ValueError(f"{family.key!r} declares no named torchmetrics class (Family.named.metric)")
    key, lists = family.key, {k: c.name for k, c in stream.classes.items()}
    returns = named.returns or tuple(s.name for s in family.statistics if s.headline)
    signature = named_signature(family, [], _BOOT)
    roles = dict(named.update)
    update_signature = inspect.Signature(update_parameters(family, row_ids=False))

    def __init__(self: _AccumulatorMetric, *args: Any, **kwargs: Any) -> None:
        torch_kwargs = {k: kwargs.pop(k) for k in list(kwargs) if k not in signature.parameters}
        given = dict(bind(signature, named.metric, args, kwargs).arguments)
        classes = {k: given.pop(name) for k, name in lists.items()}
        _AccumulatorMetric.__init__(self, accumulator_for(key).for_family(key, classes, **given), **torch_kwargs)

    def _set_options(self: _AccumulatorMetric) -> None:
        self._choose(returns, single=len(returns) == 1, asked=", ".join(returns))

    def update(self: _AccumulatorMetric, *args: Any, **kwargs: Any) -> None:
        bound = bind(update_signature, "update", args, kwargs)
        bound.apply_defaults()
        self._count("update_roles", {roles[name]: value for name, value in bound.arguments.items()})

    this = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    __init__.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [this, *signature.parameters.values(), inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD)])
    update.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [this, *update_signature.parameters.values()])
    update.__doc__ = f"Count one batch (as :meth:`biasamp.accumulators.{named.accumulator or 'Accumulator'}.update`)."
    namespace = {"__init__": __init__, "_set_options": _set_options, "update": update, "family": key,
                 "declaration": family,
                 "higher_is_better": False, "__module__": __name__, "__qualname__": named.metric,
                 "__doc__": named_doc(family, "metric", class_list_docs(family), _BOOT_DOCS)}
    return type(named.metric, (_AccumulatorMetric,), namespace)


#: the named torchmetrics classes generated from the declarations (``Named.generated``), by class name
GENERATED: dict[str, type[_AccumulatorMetric]] = {
    f.named.metric: named_metric(f) for f in REGISTRY if f.named is not None and f.named.generated and f.named.metric}
DifferentialFairness = GENERATED["DifferentialFairness"]
