"""The declaration of a count-based metric family, and the registry every layer reads.

A *family* is one public metric function whose value is a pure function of a
table of counts (co-occurrence BiasAmp→, BiasAmp_MALS, multi-attribute,
group fairness, differential fairness). Each family is declared once, in its
own package (``biasamp/<family>/_family.py``), as a :class:`Family`; the
registry (:mod:`biasamp._families`) lists the declarations, and every layer
that works "for every count-based metric" — :func:`biasamp.bootstrap`, the
threshold and checkpoint curves, the scikit-learn scorers, ``biasamp.dask``'s
bootstrap, the common tests — looks the family up instead of keeping a table
of its own. A new family costs one package and one registry line
(docs/architecture.md).

Vocabulary of *roles* (the label arguments a family reads): ``attr`` (the
protected attribute A, the multi-attribute paper's group g, fairness'
``sensitive_features``), ``task`` (the task labels T, the multi-attribute
paper's attributes m, fairness' ``y_true``), ``attr_pred`` / ``task_pred``
(their predictions), ``attr_train`` / ``task_train`` (training ground
truth), ``sample_weight``.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from biasamp._core.validation import Validated

if TYPE_CHECKING:  # an annotation only: the declaration module stays free of numpy
    from biasamp._engine.sweep import ThresholdSweep

__all__ = ["ROLES", "TASK_KINDS", "TRAIN_ROLES", "ClassList", "Family", "Named", "Prepass", "Registry", "Scorer",
           "StatisticSpec", "Streaming", "read_attribute", "truth_call"]

#: every label role a family can read (see the module docstring)
ROLES = ("attr", "task", "attr_pred", "task_pred", "attr_train", "task_train", "sample_weight")
#: the roles of training rows (the others are roles of test rows)
TRAIN_ROLES = ("attr_train", "task_train")
#: the kinds of task labels: a multi-label indicator matrix, one class per row, one of two classes per row
TASK_KINDS = ("multilabel", "single", "binary")


@dataclass(frozen=True)
class Scorer:
    """How a statistic becomes a scikit-learn scorer ``score(y_true, y_pred, *, <metadata>, **options)``.

    ``target``: the role ``y_true`` plays (``"task"`` or ``"attr"``); the
    estimator's ``y_pred`` plays ``target + "_pred"``. ``metadata``: the
    role requested through metadata routing, under the keyword ``request``
    (``"sensitive_features"``, ``"attr"`` or ``"task"``). ``options``: fixed
    options of the call (e.g. the one fairness metric asked for). ``switches``:
    boolean scorer options that read another statistic of the same call
    (``raw=True`` -> ``"G->M raw"``).
    """

    name: str
    target: str
    metadata: str
    request: str
    aliases: tuple[str, ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)
    switches: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class StatisticSpec:
    """One statistic of a family.

    ``name``: its name in :func:`biasamp.bootstrap`, the report and the
    curves' bootstrap (``"A->T"``, ``"DP"``); ``column``: a Python
    identifier (the curve's column, ``"a_to_t"``); ``needs``: the prediction
    roles without which it is not computed; ``read(result) -> (value,
    n_undefined)``; ``range``: the values it can take; ``regular``: a smooth
    function of the counts (percentile/BCa intervals are valid at 0), or built
    from maxima/absolute values (non-regular at 0: interval from a
    simultaneous band); ``signed``: an amplification that can be negative
    ("reduced"), not a disparity ≥ 0; ``headline``: one of the values the
    family reports first (the curves draw the headline statistics).

    How the audit's summary shows it (one row per statistic, in declaration
    order): ``label`` and ``direction`` fill its ``metric`` and ``direction``
    columns (default: the name, and none); ``reading`` says how an interval
    is read: ``"amp"`` (amplified above 0, reduced below; the default of a
    signed statistic), ``"disparity"`` (the default of an unsigned one) or
    ``"distortion"`` (an unsigned distance from the training associations).
    """

    name: str
    column: str
    needs: tuple[str, ...]
    read: Callable[[Any], tuple[float, int]]
    range: tuple[float, float]
    regular: bool
    signed: bool
    scorer: Scorer | None = None
    headline: bool = True
    label: str = ""
    direction: str = ""
    reading: str = ""

    @property
    def reading_kind(self) -> str:
        """How the report reads its interval: ``reading``, else ``"amp"`` when signed, ``"disparity"`` otherwise."""
        return self.reading or ("amp" if self.signed else "disparity")


def read_attribute(path: str) -> Callable[[Any], tuple[float, int]]:
    """``read`` of a statistic stored as ``result.<path>`` with ``.value`` and ``.n_undefined``."""

    def read(result: Any) -> tuple[float, int]:
        part = result
        for name in path.split("."):
            part = getattr(part, name)
        return float(part.value), int(getattr(part, "n_undefined", 0) or 0)

    return read


def truth_call(roles: Mapping[str, Any], options: Mapping[str, Any]) -> tuple[tuple, dict]:
    """``f(attr, task, *, attr_pred, task_pred, attr_train, task_train, sample_weight, **options)``."""
    kwargs = {k: roles[k] for k in ("attr_pred", "task_pred", "attr_train", "task_train", "sample_weight")
              if roles.get(k) is not None}
    return (roles["attr"], roles["task"]), {**kwargs, **options}


# --------------------------------------------------------------------------- #
# streamed counting (the generic accumulator, biasamp.dask, biasamp.torchmetrics)
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class ClassList:
    """A class list that an accumulator of the family fixes up front (a batch need not show every class).

    ``name``: the constructor keyword that gives it (error messages:
    ``"attr_classes"``, ``"groups"``); ``roles``: the ground-truth roles whose
    values are its classes (where :mod:`biasamp.dask` finds it when it is not
    given); ``groups``: intersectional groups (a multi-column argument gives its
    distinct rows, and at least two groups are needed).
    """

    name: str
    roles: tuple[str, ...]
    groups: bool = False


@dataclass(frozen=True)
class Prepass:
    """A first pass over the data before counting (multi-attribute: collect the candidate combinations).

    ``needed(settings)``: whether these settings need it; ``start(settings)``:
    its empty state, which adds with ``+`` (so pre-pass states of batches,
    partitions and ranks merge); ``count(settings, state, roles)``: the state
    after one more batch of label roles; ``end(settings, state)``: the settings
    with what the pre-pass fixed (then counting starts); ``reads``: the roles
    it reads (the others only select rows); ``pending``: the message when
    counting is asked for before the pre-pass ended; ``name``: what it
    collects, in a word (the streamed audit's progress bar).
    """

    needed: Callable[[Any], bool]
    start: Callable[[Any], Any]
    count: Callable[[Any, Any, Mapping[str, Any]], Any]
    end: Callable[[Any, Any], Any]
    reads: tuple[str, ...]
    pending: str
    name: str = "pre-pass"


@dataclass(frozen=True)
class Streaming:
    """How a family is counted batch by batch: the hooks of :class:`biasamp.accumulators.Accumulator`.

    Every hook is a pure function of the family's *settings* (a frozen
    :class:`biasamp._engine.state.Settings`: class lists and options) and its
    *state* (a :class:`biasamp._engine.state.CountState`: numpy tables that add
    with ``+``, and what the batches said). The generic accumulator, Dask and
    torchmetrics layers read nothing else.

    Attributes
    ----------
    classes : mapping of str to ClassList
        The class lists, by key (``"attr"``, ``"task"``).
    settings : callable
        ``settings(classes, **options) -> Settings``: validates the options
        (``TypeError``/``ValueError`` naming the argument). A named keyword
        option that the family's options dataclass declares takes no default
        here: the accumulator passes the declared default of every one the
        caller did not give (one default per option).
    start : callable
        ``start(settings) -> state``: the empty state (zero tables).
    count : callable
        ``count(settings, roles, replicate) -> (state, ReplicateRows or None)``:
        the one vectorised counting pass of a batch of test rows given by label
        role (``attr``, ``task``, ``attr_pred``, ``task_pred``,
        ``sample_weight``, ``row_ids``), as a state of its own; with
        ``replicate``, also the batch's rows for the streamed bootstrap
        (added to its hashed group tables, docs/inference.md).
    compute : callable
        ``compute(settings, state) -> result``: the functional API's result:
        the family's ``compute`` hook on the counted call the state holds
        (co-occurrence, multi-attribute), or its ``*_from_counts`` on the
        accumulated counts (the group families, whose in-memory ``counted``
        holds the prepared rows a stream does not keep).
    cells : callable
        ``cells(settings) -> (rows, columns)``: the shape of one replicate
        table of the streamed bootstrap.
    resample : callable
        ``resample(settings, state, replicates) -> (plan, table, replicate
        tables)``: the resampling plan evaluated on the state's table and the
        replicate tables (the columns the plan reads).
    count_train : callable, optional
        ``count_train(settings, roles) -> state``: one batch of training rows
        (``attr_train``, ``task_train``, ``train_sample_weight``).
    prepass : Prepass, optional
        A first pass the settings may need before counting.
    dealt_rows : callable, optional
        ``dealt_rows(settings, state) -> DealtRows or None``: the state's
        distinct rows as the streamed bootstrap deals them to its groups at
        the end (:class:`biasamp._engine.rowset.DealtRows`: table vectors,
        weights, each split's fold-0 share, the caller's keys), in place of
        tables added batch by batch (a cross-fitted state splits its rows only
        then); the accumulators and the subgroup scan deal them.
    late_replicates : callable, optional
        ``late_replicates(settings) -> bool``: whether, under these settings,
        the group tables come from ``dealt_rows`` at the end; the
        accumulator then adds none batch by batch (``count`` is called with
        ``replicate=False``) and holds no replicate tables until
        :meth:`~biasamp.accumulators.Accumulator.bootstrap`.
    widens : tuple of str
        The family's options whose streamed settings accept more than its
        function (multi-attribute: ``combinations`` may also be a list of
        combinations): the settings check them, not the declaration. Every
        other option of ``Family.options`` an accumulator takes is checked
        by the declaration (:meth:`Family.options_of`), as the function
        checks it.
    """

    classes: Mapping[str, ClassList]
    settings: Callable[..., Any]
    start: Callable[[Any], Any]
    count: Callable[[Any, Mapping[str, Any], bool], tuple[Any, Any]]
    compute: Callable[[Any, Any], Any]
    cells: Callable[[Any], tuple[int, int]]
    resample: Callable[[Any, Any, Any], tuple[Any, Any, Any]]
    count_train: Callable[[Any, Mapping[str, Any]], Any] | None = None
    prepass: Prepass | None = None
    widens: tuple[str, ...] = ()
    dealt_rows: Callable[[Any, Any], Any] | None = None
    late_replicates: Callable[[Any], bool] | None = None

    def __post_init__(self) -> None:
        if (self.dealt_rows is None) != (self.late_replicates is None):
            raise TypeError("Streaming: dealt_rows and late_replicates are declared together")

    def keeps_rows(self, settings: Any) -> bool:
        """Whether an accumulator of these settings keeps its distinct rows and deals its bootstrap's group tables
        from them at the end (``late_replicates``), adding none batch by batch."""
        return self.late_replicates is not None and bool(self.late_replicates(settings))


@dataclass(frozen=True)
class Named:
    """The named streaming forms of a family: what :mod:`biasamp.accumulators`, :mod:`biasamp.dask` and
    :mod:`biasamp.torchmetrics` generate from the declaration, or the hand-written forms that compute it.

    A generated form (``generated=True``) takes its name from here, its signature from the family's
    :class:`Streaming` class lists (positional, by :attr:`ClassList.name`), its options dataclass
    (``Family.options``, keyword-only, with their declared defaults; less ``skips``) and the streaming
    keywords, and its parameter docs from the options' declarations (``option(doc=...)``).

    Attributes
    ----------
    accumulator : str
        The class name in :mod:`biasamp.accumulators` (``""``: none).
    metric : str
        The ``torchmetrics.Metric`` class name in :mod:`biasamp.torchmetrics` (``""``: none).
    dask : bool
        Whether :mod:`biasamp.dask` has the family's function (same name as the in-memory one).
    generated : bool
        Whether the forms are generated from this declaration (else they are written by hand in those
        modules, which find their family here by the form's name).
    update : mapping of str to str
        The keywords of ``update`` (and of the Dask function) -> the label roles they give, in order;
        the first ``positional`` are positional, the others keyword-only; ``sample_weight`` is optional.
    positional : int
        How many of ``update``'s keywords are positional.
    skips : tuple of str
        The family's options the streamed forms do not take.
    returns : tuple of str
        The statistics the torchmetrics class's ``compute()`` returns (default: the headline statistics).
    fixed : mapping
        The options a hand-written form fixes for this family (``CooccurrenceAccumulator``'s
        ``metric="mals"``).
    base : str
        The named accumulator class (of :mod:`biasamp.accumulators`) a generated accumulator extends,
        whose methods it keeps (differential fairness: ``FairnessAccumulator``, the same counts).
    summary : str
        The first line of the generated docstrings (default: the family's title).
    sections : mapping of str to str
        Extra numpydoc text by form (``"accumulator"``, ``"metric"``, ``"dask"``): the definition, Notes,
        References, Examples, written in the family's package.
    """

    accumulator: str = ""
    metric: str = ""
    dask: bool = False
    generated: bool = False
    update: Mapping[str, str] = field(default_factory=dict)
    positional: int = 2
    skips: tuple[str, ...] = ()
    returns: tuple[str, ...] = ()
    fixed: Mapping[str, Any] = field(default_factory=dict)
    base: str = ""
    summary: str = ""
    sections: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Family:
    """The one declaration of a count-based metric family.

    Attributes
    ----------
    key : str
        Short identifier (``"directional"``).
    title : str
        Human name, with the paper's name of the metric.
    function : callable
        The public metric function.
    citation : str
        The paper that defines it.
    roles : tuple of str
        The label roles the function reads (:data:`ROLES`).
    statistics : tuple of StatisticSpec
        Its statistics, in report order.
    call : callable
        ``call(roles, options) -> (args, kwargs)``: the function's arguments
        for labels given by role (``None`` where absent) and options. Raises
        ``ValueError`` naming what is missing.
    count : callable
        ``count(labels, opts) -> counted``: the one counting pass of a call,
        everything its function does before the metric: the labels checked,
        their rows selected and encoded, counted (with the cross-fitting
        folds' tables where the signs are cross-fitted). ``labels``: the
        call's arguments that are not options, by parameter name (weights
        included); ``opts``: its options object. The public function is
        ``compute(count(labels, opts), opts)`` with ``opts, labels =
        Options.call_of(locals())``; :meth:`plan_of` drives the same two
        hooks, so a call and its bootstrap count alike, once.
    compute : callable
        ``compute(counted, opts) -> result``: the metric of the counts (the
        family's ``*_from_counts`` / ``*_from_folds``).
    resample : callable
        ``resample(counted, opts, result) -> Plan``: the resampling plan of the
        counted call (its cells and the statistics on replicate tables; see
        :mod:`biasamp._engine.intervals`), given its ``result``.
    aliases : mapping
        Other public functions of the family (e.g. ``demographic_parity``)
        -> the statistic names they return.
    selected : callable, optional
        ``selected(options) -> statistic names`` a call computes when an
        option selects them (fairness' ``metrics=``); default: all.
    selects : str, optional
        That option's name: an alias's bootstrap is the family's call with
        this option set to the alias's statistics.
    sweep : ThresholdSweep, optional
        How :func:`biasamp.threshold_curve` sweeps it (hard predictions at
        every threshold): the family's kernel, in its own package, and the
        options it honours (:mod:`biasamp._engine.sweep`). None: no threshold
        curve (:attr:`threshold_curve` is False).
    section : str, optional
        The key of its :func:`biasamp.audit` section.
    task_labels : {"multilabel", "single", "binary"}
        The task labels it reads: a multi-label indicator matrix (co-occurrence
        and multi-attribute families), one class per row, or a binary outcome
        (the common tests generate examples of this kind).
    stream : Streaming, optional
        How it is counted batch by batch (the accumulators, Dask,
        torchmetrics, the streamed audit).
    options : type, optional
        Its options: a frozen dataclass (``biasamp/<family>/_options.py``,
        a :class:`biasamp._core.validation.Validated`) whose fields are the
        function's keyword options with their defaults and declared
        constraints. Layers that forward options by name (the audit) read
        which options the family takes from it.
    cross_fit : bool
        Whether, without a training set, its signs (or indicators) come from
        the test rows and are cross-fitted by default (``cross_fit`` and
        ``cross_fit_random_state`` options; :mod:`biasamp._core.crossfit`).
    task_kinds : tuple of {"multilabel", "single", "binary"}
        The task labels an audit computes it on (:data:`TASK_KINDS`; a
        single-label task of two classes is ``"binary"``): differential
        fairness needs a binary outcome, the multi-attribute metrics a
        multi-label task. Default: every kind.
    stream_roles : callable, optional
        ``stream_roles(roles, train) -> roles``: the roles of a batch of test
        rows (every role a stream holds, ``row_ids`` included) that its
        accumulator counts (:meth:`biasamp.accumulators.Accumulator.update_roles`),
        ``train``: whether the stream's training rows are counted too. The
        streamed form of ``call``'s choices (BiasAmp_MALS: the test ground
        truth stands in for a missing training set). Default
        (:meth:`counted_roles`): the test roles it reads and ``row_ids``.
    audit_options : callable, optional
        ``audit_options(options, task_classes, multilabel) -> (options,
        notes)``: the options an audit applies to a call on task labels of
        these classes, and notes saying what it decided (group fairness: the
        mean over the two classes of a task that holds neither 1 nor True,
        where the function would raise). Default: the options as given.
    complete_classes : callable, optional
        ``complete_classes(classes, options) -> classes``: the class lists
        (by :attr:`Streaming.classes` key) its function infers from those the
        labels show, under these options (group fairness: a task showing one
        class completed to a binary pair). Default: as shown.
    n_boot_option : str, optional
        The audit option (a field of :class:`biasamp.report.AuditConfig`)
        that, when set, replaces ``n_boot`` for its section
        (multi-attribute: ``"n_boot_multi"``).
    named : Named, optional
        Its named streaming forms (the accumulator class, the Dask function,
        the torchmetrics class), generated from the declaration or written by hand.
    """

    key: str
    title: str
    function: Callable
    citation: str
    roles: tuple[str, ...]
    statistics: tuple[StatisticSpec, ...]
    call: Callable[[Mapping[str, Any], Mapping[str, Any]], tuple[tuple, dict]]
    count: Callable[[dict, Any], Any]
    compute: Callable[[Any, Any], Any]
    resample: Callable[[Any, Any, Any], Any]
    aliases: Mapping[Callable, tuple[str, ...]] = field(default_factory=dict)
    selected: Callable[[Mapping[str, Any]], tuple[str, ...]] | None = None
    selects: str | None = None
    sweep: ThresholdSweep | None = None
    section: str | None = None
    task_labels: str = "multilabel"
    stream: Streaming | None = None
    options: type[Validated] | None = None
    cross_fit: bool = False
    task_kinds: tuple[str, ...] = TASK_KINDS
    stream_roles: Callable[[Mapping[str, Any], bool], Mapping[str, Any]] | None = None
    audit_options: Callable[[Mapping[str, Any], Sequence, bool], tuple[dict, list[str]]] | None = None
    complete_classes: Callable[[Mapping[str, Sequence], Mapping[str, Any]], dict] | None = None
    n_boot_option: str | None = None
    named: Named | None = None

    def __post_init__(self) -> None:
        unknown = [k for k in self.task_kinds if k not in TASK_KINDS]
        if unknown or not self.task_kinds:
            raise ValueError(f"{self.key}: task_kinds must be some of {TASK_KINDS}, got {self.task_kinds!r}")
        if self.options is None:
            raise ValueError(f"{self.key}: the count hook reads an options object: declare options")
        if self.aliases and self.selects is None:
            raise ValueError(f"{self.key}: an alias is bootstrapped through the option that selects its "
                             "statistics: declare selects")

    @property
    def name(self) -> str:
        """The public function's name."""
        return self.function.__name__

    @property
    def threshold_curve(self) -> bool:
        """Whether :func:`biasamp.threshold_curve` sweeps it (it declares a ``sweep``)."""
        return self.sweep is not None

    @property
    def functions(self) -> tuple[Callable, ...]:
        """The public function and its aliases."""
        return (self.function, *self.aliases)

    def counted_roles(self, roles: Mapping[str, Any], train: bool) -> dict:
        """The roles of a batch of test rows that its accumulator counts (see ``stream_roles``).

        ``roles``: every role the batch holds (None where absent, ``row_ids``
        included); ``train``: whether training rows are counted too.
        """
        if self.stream_roles is not None:
            return dict(self.stream_roles(roles, train))
        return {r: roles.get(r) for r in (*self.roles, "row_ids") if r not in TRAIN_ROLES}

    def computes(self, roles: Iterable[str]) -> bool:
        """Whether a call reading ``roles`` computes any of its statistics (all the predictions one ``needs``)."""
        given = set(roles)
        return any(all(r in given for r in s.needs) for s in self.statistics)

    def statistic(self, name: str) -> StatisticSpec:
        """The statistic called ``name``."""
        for s in self.statistics:
            if s.name == name:
                return s
        raise KeyError(f"{self.name} has no statistic {name!r}; it has {[s.name for s in self.statistics]}")

    def statistics_of(self, function: Callable, options: Mapping[str, Any] | None = None) -> tuple[StatisticSpec, ...]:
        """The statistics a call of ``function`` (the family's function or an alias) with ``options`` computes."""
        if function is not self.function:
            return tuple(self.statistic(n) for n in self.aliases[function])
        if self.selected is not None:
            return tuple(self.statistic(n) for n in self.selected(options or {}))
        return self.statistics

    def options_of(self, kwargs: Mapping[str, Any]) -> tuple[Any, dict]:
        """The options object of a call's keywords, built and checked by the declaration, and the other keywords.

        ``self.options(**options given)``: what the public function's
        ``Options.from_call(locals())`` builds from the same keywords (the
        options not given take their declared defaults, which are the
        function's), so a bad option raises the declaration's own
        ``TypeError``/``ValueError`` on every path that takes the family's
        options, before any label is read.
        """
        if self.options is None:
            return None, dict(kwargs)
        names = set(self.options.option_names())
        return (self.options(**self.options.pick(kwargs)), {k: v for k, v in kwargs.items() if k not in names})

    def plan_of(self, function: Callable) -> Callable[..., Any]:
        """The plan builder of a call of ``function`` (the family's function or an alias) with its own arguments.

        The call is bound to the family function's signature (a wrong call
        raises ``function``'s own ``TypeError``: the call is made, and fails
        where the binding did) and split as the function splits it
        (:meth:`biasamp._core.validation.Validated.call_of`); the hooks then
        count, compute and resample it, so the counts, the result and every
        refusal are the function's. An alias is the family's call with the
        option ``selects`` set to its statistics, which the alias itself does
        not take.
        """
        only = None if function is self.function else self.aliases[function]
        return functools.partial(self._counted_plan, function, only)

    def _counted_plan(self, function: Callable, only: tuple[str, ...] | None, *args: Any, **kwargs: Any) -> Any:
        """:meth:`plan_of`'s plan: count, compute, resample."""
        assert self.options is not None  # checked at declaration
        if only is not None and self.selects in kwargs:
            raise TypeError(f"{function.__name__}() got multiple values for keyword argument {self.selects!r}")
        try:
            bound = inspect.signature(self.function).bind(*args, **kwargs)
        except TypeError as exc:
            function(*args, **kwargs)  # the function's own words: a call fails where its binding fails
            raise TypeError(f"{function.__name__}() {exc}") from None
        bound.apply_defaults()
        opts, labels = self.options.call_of(bound.arguments)
        if only is not None:
            assert self.selects is not None  # checked at declaration
            opts = opts.replace(**{self.selects: only})
        counted = self.count(labels, opts)
        result = self.compute(counted, opts)
        plan = self.resample(counted, opts, result)
        plan.result = result
        return plan


def _scorer_key(name: str) -> str:
    """Scorer names are matched ignoring case, spaces, underscores and the arrow's spelling."""
    return re.sub(r"[\s_]+", "", name.replace("→", "->")).lower()


class Registry:
    """The families, indexed by key, by public function and by statistic name."""

    def __init__(self, families: list[Family]) -> None:
        self._by_key: dict[str, Family] = {}
        self._by_function: dict[Callable, Family] = {}
        self._by_statistic: dict[str, tuple[Family, StatisticSpec]] = {}
        self._scorers: dict[str, tuple[Family, StatisticSpec]] = {}
        self._scorer_keys: dict[str, str] = {}
        for fam in families:
            self._add(fam)

    def _add(self, fam: Family) -> None:
        if fam.key in self._by_key:
            raise ValueError(f"two families declare the key {fam.key!r}")
        for f in fam.functions:
            if f in self._by_function:
                raise ValueError(f"{f.__name__} is declared by {self._by_function[f].key!r} and {fam.key!r}")
        self._by_key[fam.key] = fam
        for f in fam.functions:
            self._by_function[f] = fam
        for s in fam.statistics:
            self._by_statistic.setdefault(s.name, (fam, s))
            if s.scorer is not None:
                self._scorers[s.scorer.name] = (fam, s)
                for alias in (s.scorer.name, *s.scorer.aliases):
                    self._scorer_keys[_scorer_key(alias)] = s.scorer.name
        for f in fam.aliases:
            names = fam.aliases[f]
            scorer = fam.statistic(names[0]).scorer if len(names) == 1 else None
            if scorer is not None:
                self._scorer_keys.setdefault(_scorer_key(f.__name__), scorer.name)

    @contextmanager
    def registered(self, family: Family) -> Iterator[Family]:
        """Register ``family`` for the duration of a ``with`` block (a test's family), then remove it.

        Every layer that reads the registry (``bootstrap``, the curves, the scorers, the accumulators, Dask,
        torchmetrics, the audit) serves it inside the block; the registry is as it was after, even on error.
        Its function's source file counts as the library's for the warnings' attribution
        (:func:`biasamp.exceptions.warn_outside`: the warning points at the caller's line).
        A key, function or statistic name already declared raises ``ValueError`` (nothing is registered).
        """
        from pathlib import Path

        from biasamp.exceptions import LIBRARY_FILES

        before = (dict(self._by_key), dict(self._by_function), dict(self._by_statistic), dict(self._scorers),
                  dict(self._scorer_keys))
        source = inspect.getsourcefile(family.function)
        path = None if source is None else str(Path(source).resolve())
        added = path is not None and path not in LIBRARY_FILES
        try:
            self._add(family)
            if added:  # its warnings are attributed to its caller, as the package's are
                LIBRARY_FILES.add(path)  # type: ignore[arg-type]
            yield family
        finally:
            (self._by_key, self._by_function, self._by_statistic, self._scorers, self._scorer_keys) = before
            if added:
                LIBRARY_FILES.discard(path)

    def named(self, kind: str, name: str) -> dict[str, Mapping[str, Any]]:
        """The families whose named form ``kind`` (``"accumulator"``, ``"metric"``) is called ``name``.

        Family key -> the options the form fixes for it (:attr:`Named.fixed`), in declaration order: how a
        hand-written form finds the families it computes.
        """
        return {f.key: dict(f.named.fixed) for f in self if f.named is not None and getattr(f.named, kind) == name}

    def __iter__(self) -> Iterator[Family]:
        return iter(self._by_key.values())

    def __len__(self) -> int:
        return len(self._by_key)

    def __getitem__(self, key: str) -> Family:
        return self._by_key[key]

    @property
    def keys(self) -> tuple[str, ...]:
        """The family keys, in declaration order."""
        return tuple(self._by_key)

    def get(self, function: Any) -> Family | None:
        """The family of a public function (or one of its aliases), None if it has none."""
        try:
            return self._by_function.get(function)
        except TypeError:  # unhashable
            return None

    def of(self, function: Any, where: str) -> Family:
        """The family of ``function``, or a ``TypeError`` saying which functions ``where`` supports."""
        fam = self.get(function)
        if fam is None:
            raise TypeError(
                f"{where} supports the count-based metrics {', '.join(self.function_names())}, "
                f"got {getattr(function, '__name__', function)!r}"
            )
        return fam

    def function_names(self) -> list[str]:
        """The names of every registered function."""
        return [f.__name__ for fam in self for f in fam.functions]

    def statistic(self, name: str) -> tuple[Family, StatisticSpec]:
        """The family and declaration of a statistic name (``"A->T"``, ``"DP"``)."""
        return self._by_statistic[name]

    @property
    def scorer_names(self) -> tuple[str, ...]:
        """The canonical names of every scorer."""
        return tuple(self._scorers)

    def scorer(self, name: str) -> tuple[Family, StatisticSpec]:
        """The family and statistic of a scorer name (any spelling), ``ValueError`` if unknown."""
        canonical = self._scorer_keys.get(_scorer_key(name))
        if canonical is None:
            raise ValueError(f"unknown metric {name!r}; biasamp scorers: {', '.join(map(repr, self._scorers))} "
                             "(or pass a function)")
        return self._scorers[canonical]
