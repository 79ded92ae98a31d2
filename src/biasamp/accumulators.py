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
(1e-12). Cross-fitted signs (BiasAmp→, BiasAmp_MALS and the multi-attribute
metrics without a training set) are drawn over every row, not per batch: such
an accumulator keeps the distinct rows it counted and splits them at
``compute()`` as the function splits all the rows, so any batching, merge
order or number of ranks gives the function's value (memory: the distinct
rows; docs/definitions.md, "No training set").

One class does the work for every registered family: :class:`Accumulator`,
built from the family's declaration (``biasamp._family.Streaming``: its
settings, its empty count state, its counting pass, the function of the
counts, the streamed bootstrap's plan and an optional pre-pass). The named
classes are that accumulator with the family fixed and the keyword names of
the functional API:

* :class:`CooccurrenceAccumulator`: BiasAmp→ (both directions) or
  BiasAmp_MALS, from :class:`~biasamp.CooccurrenceCounts` tables;
* :class:`FairnessAccumulator`: the seven group fairness metrics, from
  :class:`~biasamp.ConfusionCounts`; :class:`DifferentialAccumulator`:
  differential-fairness bias amplification from the same counts;
* :class:`MultiAttributeAccumulator`: Multi_MALS and Multi→, from
  :class:`~biasamp.MultiAttributeCounts`. The combinations M must be known
  before counting: fix them (one pass), or run two passes (``collect()``
  the training task-label sets, ``freeze()``, then ``update()``).

Conventions shared by all:

* **Class lists are fixed up front** (a batch need not show every class).
  An ``int`` ``k`` is shorthand for the classes ``0..k-1`` (the default
  names of indicator-matrix columns). A label outside the list raises
  ``ValueError`` naming the argument.
* **Every batch carries the same arguments**: the first ``update()`` fixes
  which predictions are counted; a later batch with other arguments raises
  (and leaves the counts as they were).
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
import inspect
import numbers
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from biasamp._core.deprecation import renamed_arguments
from biasamp._engine.group_state import confusion as _confusion
from biasamp._engine.options import DEFAULT_LEVEL
from biasamp._engine.state import ReplicateRows
from biasamp._families import REGISTRY
from biasamp.cooccurrence import DirectionalBiasAmpResult, MALSResult
from biasamp.cooccurrence._counts import CooccurrenceCounts
from biasamp.cooccurrence._stream import counts_of as _cooc_counts
from biasamp.cooccurrence._stream import train_counts_of as _cooc_train_counts
from biasamp.exceptions import UndefinedPairWarning
from biasamp.fairness import METRICS, ConfusionCounts, FairnessResult
from biasamp.multiattribute import MultiAttributeCounts, MultiBiasAmpResult
from biasamp.multiattribute._stream import counts_of as _multi_counts
from biasamp.multiattribute._stream import fixed_of as _fixed_of

if TYPE_CHECKING:
    from biasamp._family import Family, Streaming

__all__ = ["Accumulator", "CooccurrenceAccumulator", "DifferentialAccumulator", "FairnessAccumulator",
           "MultiAttributeAccumulator", "accumulator_for"]

#: the roles of a batch of training rows, and of test rows (see biasamp._family)
_TRAIN_ROLES = ("attr_train", "task_train")
_TEST_ROLES = ("attr", "task", "attr_pred", "task_pred")


# --------------------------------------------------------------------------- #
# the generic accumulator
# --------------------------------------------------------------------------- #
def accumulator_for(key: str) -> type[Accumulator]:
    """The accumulator class of the registered family ``key``.

    The named class that declares the family (``families``; a class the
    declaration says is generated, ``Family.named``, is generated on demand),
    else the generic :class:`Accumulator`; ``accumulator_for(key).for_family(key,
    classes, **options)`` builds one. ``KeyError`` for a family that is not
    registered or declares no streamed counting.
    """
    _declaration(key)
    found = [c for c in _subclasses(Accumulator) if key in c.__dict__.get("families", {})
             and c.__dict__.get("declaration", REGISTRY[key]) is REGISTRY[key]]
    if found:
        return found[0]
    named = REGISTRY[key].named
    if named is not None and named.generated and named.accumulator:  # a family registered later (a plug-in)
        return named_accumulator(REGISTRY[key])
    return Accumulator


def _declared_defaults(settings: Any, declared: Any, given: Mapping[str, Any]) -> dict[str, Any]:
    """The declared defaults (``declared``: the family's options object) of the named keyword options of the
    ``settings`` function that the call did not give."""
    if declared is None:
        return {}
    names = set(type(declared).option_names())
    return {name: getattr(declared, name) for name, p in inspect.signature(settings).parameters.items()
            if p.kind is inspect.Parameter.KEYWORD_ONLY and name in names and name not in given}


def _settings_take(key: str) -> set[str]:
    """The options an accumulator of family ``key`` takes: its settings' keywords, and, where they take the rest
    as they come (``**options``), the family's declared options less those its streamed forms skip
    (``Named.skips``)."""
    family = REGISTRY[key]
    params = inspect.signature(_declaration(key).settings).parameters
    takes = {k for k, p in params.items() if p.kind is p.KEYWORD_ONLY}
    if any(p.kind is p.VAR_KEYWORD for p in params.values()) and family.options is not None:
        takes |= set(family.options.option_names()) - set(family.named.skips if family.named is not None else ())
    return takes


def _declaration(key: Any) -> Streaming:
    try:
        stream = REGISTRY[key].stream
    except (KeyError, TypeError):
        raise KeyError(f"no accumulator declares the family {key!r}; the registered families are "
                       f"{list(REGISTRY.keys)}") from None
    if stream is None:
        raise KeyError(f"no accumulator declares the family {key!r}: it declares no streamed counting")
    return stream


def _subclasses(cls: type) -> list:
    out: list[type] = []
    subs: list[type] = cls.__subclasses__()
    for sub in subs:
        out += [sub, *_subclasses(sub)]
    return out


#: The most classes an int ``k`` may name (``0..k-1``): every class is a row or column of the count tables.
MAX_CLASSES = 1_000_000
#: The most float64 cells the count tables of an accumulator take, its bootstrap's group tables included
#: (2 GiB): checked before they are allocated.
MAX_TABLE_CELLS = 2**28


def _class_list(value: Any, name: str) -> tuple:
    """A fixed class list: a sequence of names, or an int ``k`` for ``0..k-1`` (at most :data:`MAX_CLASSES`)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        if value < 1:
            raise ValueError(f"{name} must be a positive number of classes or a list of class names, got {value}")
        if int(value) > MAX_CLASSES:
            raise ValueError(f"{name} must be at most {MAX_CLASSES:,} classes (an int k names 0..k-1, each a row "
                             f"or column of the count tables), got {int(value):,}")
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


class Accumulator:
    r"""The streaming accumulator of any registered count-based family, built from its declaration.

    An accumulator holds the family's *settings* (class lists and options,
    fixed at construction) and its *count state*: tables that add, and what
    the batches said. With :math:`C(B)` the count table of a batch :math:`B`,

    .. math::

        C(B_1 \cup \dots \cup B_k) = \sum_{i=1}^k C(B_i), \qquad
        \text{metric} = f\Big(\sum_i C(B_i)\Big)

    so :meth:`update_roles` per batch, :meth:`merge` across processes and
    :meth:`sync` across ranks all give the metric of every row counted; the
    pure function :math:`f` is the family's ``*_from_counts``. Everything
    here reads only the family's declaration
    (``biasamp._family.Streaming``); the named classes
    (:class:`CooccurrenceAccumulator`, ...) fix the family and keep the
    keyword names of the functional API.

    Parameters
    ----------
    family : str
        The key of a registered family (``"directional"``, ``"mals"``,
        ``"multi"``, ``"fairness"``, ``"differential"``).
    classes : mapping of str to sequence or int
        The class lists the family declares, by key: ``"attr"`` (the
        protected attribute; fairness' groups) and ``"task"`` (the task; the
        outcome classes). An int ``k`` means ``0..k-1``.
    n_boot : int, default 0
        Replicates of the streamed bootstrap (0: none). With ``n_boot > 0``
        the accumulator keeps hashed group tables (1,000; fewer, at least 256, for wide tables) alongside the counts
        (``bootstrap()``).
    random_state : int, optional
        Seed of the streamed bootstrap (the rows' groups and the replicates).
    stream : int, default 0
        Identifier of this stream (a rank or partition), part of every row's
        default id (which fixes its bootstrap group).
    **options
        The family's options (those of its named class, e.g. ``missing``,
        ``threshold``, ``metrics``, ``combinations``).

    Attributes
    ----------
    settings : Settings
        The family's validated settings; its fields also read as attributes
        of the accumulator (``acc.attr_classes``).
    state : CountState or None
        The count tables and what the batches said (None during a pre-pass);
        its fields also read as attributes (``acc.gram``).

    See Also
    --------
    accumulator_for : the class of a family.
    biasamp.bootstrap : the in-memory intervals the streamed bootstrap approximates.

    Notes
    -----
    A batch is given by label role (``attr``, ``task``, ``attr_pred``,
    ``task_pred``, ``sample_weight``, ``row_ids``; training rows:
    ``attr_train``, ``task_train``, ``train_sample_weight``) to
    :meth:`update_roles`. A family with a pre-pass (multi-attribute: the
    candidate combinations) first sees every batch through :meth:`prepass`,
    then :meth:`end_prepass`. For hard labels every count is an exact integer,
    so the batching and the merge order change nothing.

    References
    ----------
    .. [1] N. Chamandy, O. Muralidharan, A. Najmi, S. Naidu. "Estimating
       uncertainty for massive data streams". Google technical report, 2012
       (the streamed Poisson bootstrap, of which the hashed-group bootstrap
       of :meth:`bootstrap` is the grouped form).

    Examples
    --------
    The group fairness family, in two batches, equals the function:

    >>> import numpy as np
    >>> from biasamp import fairness_metrics
    >>> from biasamp.accumulators import Accumulator
    >>> y_true = np.repeat(["sport", "cook", "sport", "cook"], 100)
    >>> y_pred = np.repeat(["sport", "cook"] * 4, [80, 20, 10, 90, 60, 40, 70, 30])
    >>> gender = np.repeat(["female", "male"], 200)
    >>> acc = Accumulator("fairness", {"task": ["cook", "sport"], "attr": ["female", "male"]}, average="macro")
    >>> for rows in (slice(0, 150), slice(150, 400)):
    ...     _ = acc.update_roles({"task": y_true[rows], "task_pred": y_pred[rows], "attr": gender[rows]})
    >>> acc.compute().overall == fairness_metrics(y_true, y_pred, sensitive_features=gender, average="macro").overall
    True
    """

    #: the registered families a named class counts: family key -> its fixed constructor options
    families: dict = {}
    n_boot: int = 0
    boot: Any = None
    boot_seed: int | None = None
    test_seed: Any = None  # the SeedSequence of random_state: the Monte-Carlo tests' draws, as biasamp.bootstrap's
    settings: Any = None
    state: Any = None
    collected: Any = None

    def __init__(self, family: str, classes: Mapping[str, Any], *, n_boot: int = 0, random_state: Any = None,
                 stream: int = 0, **options: Any) -> None:
        decl = _declaration(family)
        if not isinstance(classes, Mapping):
            raise TypeError(f"classes must be a mapping of class-list key ({', '.join(map(repr, decl.classes))}) "
                            f"to class list, got {type(classes).__name__}")
        self.key = family
        self.weight_total: dict[str, float] = {}  # the weights counted so far, by role (at most 2**53 each)
        lists = {k: _class_list(classes.get(k), c.name) for k, c in decl.classes.items()}
        # the family's options it takes, built by the declaration: refused as the function refuses them
        declared, _ = REGISTRY[family].options_of({k: v for k, v in options.items() if k not in decl.widens})
        unknown = sorted(set(options) - _settings_take(family))
        if unknown:
            raise TypeError(f"{type(self).__name__} got unexpected options {unknown!r}; it takes "
                            f"{sorted(_settings_take(family))!r}")
        # refuses an option the accumulator does not take; an option not given takes the declared default (one
        # default per option: the settings' named options have none of their own)
        self.settings = decl.settings(lists, **_declared_defaults(decl.settings, declared, options), **options)
        self._init_bootstrap(n_boot, random_state, stream)
        if decl.prepass is not None and decl.prepass.needed(self.settings):
            self.collected = decl.prepass.start(self.settings)
        else:
            self._start_counting()

    @property
    def _declared(self) -> Streaming:
        """The family's declaration of streamed counting."""
        return _declaration(self.key)

    def __getattr__(self, name: str) -> Any:
        # the fields of the settings and of the state read as attributes (acc.attr_classes, acc.gram)
        if name.startswith("__") or name in ("key", "settings", "state", "collected"):
            raise AttributeError(name)
        for part in (self.settings, self.state, self.collected):
            if part is not None and hasattr(part, name):
                return getattr(part, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _start_counting(self) -> None:
        from biasamp._engine.resample import stream_group_count

        decl = self._declared
        cells = decl.cells(self.settings)
        width = int(np.prod(cells, dtype=np.int64))
        tables = width * (1 + (stream_group_count(cells) if self.n_boot else 0))
        if tables > MAX_TABLE_CELLS:
            raise ValueError(
                f"the count tables of {cells[0]:,} x {int(np.prod(cells[1:], dtype=np.int64)):,} cells"
                + (f", with the bootstrap's {stream_group_count(cells):,} group tables," if self.n_boot else "")
                + f" would hold {tables:,} float64 cells, more than {MAX_TABLE_CELLS:,} (2 GiB): give fewer classes "
                "or groups" + (", or n_boot=0" if self.n_boot else ""))
        self.state, self.collected = decl.start(self.settings), None
        self.boot = np.zeros((stream_group_count(cells), *cells), dtype=np.float64) if self._batch_replicates else None

    @property
    def _batch_replicates(self) -> bool:
        """Whether the bootstrap's group tables are added batch by batch (``n_boot`` > 0 and the family does not
        deal them from its state at the end: :attr:`biasamp._family.Streaming.late_replicates`)."""
        return bool(self.n_boot) and not self._declared.keeps_rows(self.settings)

    @property
    def phase(self) -> str:
        """``"collect"`` during the family's pre-pass, else ``"count"``."""
        return "collect" if self.state is None else "count"

    def _check_counting(self) -> None:
        if self.state is None:
            prepass = self._declared.prepass
            raise ValueError(prepass.pending if prepass is not None else "the pre-pass is not over")

    # ------------------------------------------------- the family protocol (by label role)
    @classmethod
    def family_key(cls) -> str:
        """The family of a named class that counts one (its ``families``, read from the declarations)."""
        if len(cls.families) != 1:
            raise TypeError(f"{cls.__name__} counts the families {list(cls.families)}, not one")
        return next(iter(cls.families))

    @classmethod
    def for_family(cls, key: str, classes: Mapping[str, Any], **options: Any) -> Accumulator:
        """An accumulator of family ``key`` for the class lists ``classes`` (``{"attr": ..., "task": ...}``)."""
        out = cls.__new__(cls)
        Accumulator.__init__(out, key, classes, **options)
        return out

    def prepass(self, roles: Mapping[str, Any]) -> Accumulator:
        """The family's first pass over a batch given by label role (none: nothing to do); returns ``self``."""
        if self.phase == "collect":
            self.collected = self._declared.prepass.count(self.settings, self.collected, roles)  # type: ignore[union-attr]
        return self

    def end_prepass(self) -> Accumulator:
        """Close the first pass (the settings take what it fixed; counting starts); returns ``self``."""
        if self.phase == "collect":
            self.settings = self._declared.prepass.end(self.settings, self.collected)  # type: ignore[union-attr]
            self._start_counting()
        return self

    def update_roles(self, roles: Mapping[str, Any]) -> Accumulator:
        """Count one batch given by label role; returns ``self``.

        Training roles (``attr_train``, ``task_train``,
        ``train_sample_weight``) are counted as training rows, the test roles
        (``attr``, ``task``, ``*_pred``, ``sample_weight``, ``row_ids``) as
        test rows; a batch may hold either or both.
        """
        has_train = any(roles.get(r) is not None for r in _TRAIN_ROLES)
        if has_train:
            self._count_train(roles)
        if not has_train or any(roles.get(r) is not None for r in _TEST_ROLES):
            self._count(roles)
        return self

    def _count(self, roles: Mapping[str, Any]) -> Accumulator:
        """Count a batch of test rows: the family's counting pass, then ``state + batch``."""
        self._check_counting()
        batch, rows = self._declared.count(self.settings, roles, self._batch_replicates)
        self.state.check_batch(batch)  # every batch carries the same arguments
        totals = self._weight_totals(roles, ("sample_weight",))
        if rows is not None:
            self._boot_update(rows)
        self.state.add_(batch)
        self.weight_total.update(totals)
        return self

    def _count_train(self, roles: Mapping[str, Any]) -> Accumulator:
        """Count a batch of training rows."""
        self._check_counting()
        count_train = self._declared.count_train
        if count_train is None:
            raise ValueError(f"the family {self.key!r} counts no training rows")
        batch = count_train(self.settings, roles)
        totals = self._weight_totals(roles, ("train_sample_weight",))
        self.state.add_(batch)
        self.weight_total.update(totals)
        return self

    def _weight_totals(self, roles: Mapping[str, Any], names: tuple[str, ...],
                       other: Accumulator | None = None) -> dict[str, float]:
        """The running totals of the weights ``names`` once a batch's ``roles`` (or ``other``'s totals) are added,
        each checked against 2**53 (``ValueError``): the bound holds for the sum of every batch, not for one."""
        from biasamp._core.labels import to_numpy
        from biasamp._core.rows import check_weight_total

        mine = getattr(self, "weight_total", {})
        theirs = getattr(other, "weight_total", {}) if other is not None else {
            name: float(np.sum(to_numpy(roles[name], name), dtype=np.float64))
            for name in names if roles.get(name) is not None}
        where = " over the accumulators merged" if other is not None else " over the batches counted"
        return {name: check_weight_total(mine.get(name, 0.0) + total, name, where) for name, total in theirs.items()}

    def compute(self) -> Any:
        """The functional API's result of the counts so far."""
        self._check_counting()
        return self._declared.compute(self.settings, self.state)

    def reset(self) -> Accumulator:
        """Zero the counts (the settings, e.g. fixed training counts or combinations, are kept); returns ``self``."""
        decl = self._declared
        if self.phase == "collect":
            self.collected = decl.prepass.start(self.settings)  # type: ignore[union-attr]
        else:
            self._start_counting()
        self.rows_seen = 0
        self.weight_total = {}
        return self

    # ------------------------------------------------------------ bootstrap
    def _init_bootstrap(self, n_boot: int, random_state: Any, stream: int) -> None:
        from biasamp._engine.resample import check_random_state, seed_int, seed_sequence

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
        # one draw from random_state: the seed of the tests (biasamp.bootstrap's for the same random_state), and the
        # hashed groups' seed taken from it
        self.test_seed = seed_sequence(random_state) if self.n_boot else None
        self.boot_seed = seed_int(self.test_seed) if self.test_seed is not None else None
        self.stream = int(stream)
        self.rows_seen = 0

    def _boot_update(self, rows: ReplicateRows) -> None:
        """Add one batch's rows to the hashed group tables ``boot`` ``(G, cells...)``.

        Every row goes to one of ``G`` groups by a hash of (row id, seed) only
        and adds its table contribution to that group's table
        (:func:`biasamp._engine.resample.add_group_tables`), so the group
        tables of batches, partitions and ranks add like the count tables and
        do not depend on the batching.
        """
        from biasamp._engine.resample import add_group_tables

        n_rows = rows.n
        if rows.row_ids is None:
            ids = (np.uint64(self.stream) << np.uint64(40)) + np.arange(
                self.rows_seen, self.rows_seen + n_rows, dtype=np.uint64)
        else:
            ids = np.asarray(rows.row_ids)
            if ids.ndim != 1 or len(ids) != n_rows or ids.dtype.kind not in "iu" or (ids < 0).any():
                raise ValueError(f"row_ids must be {n_rows} non-negative integers (one per row of the batch)")
            ids = ids.astype(np.uint64)
        assert self.boot_seed is not None  # set with n_boot > 0 by _init_bootstrap
        if not (self.boot.flags.writeable and self.boot.flags.c_contiguous):
            self.boot = np.array(self.boot, dtype=np.float64)
        add_group_tables(self.boot, rows.left, rows.right, ids, self.boot_seed)
        self.rows_seen += n_rows

    def bootstrap(self, *, level: float = DEFAULT_LEVEL, ci_method: str = "auto", p_adjust: str = "holm") -> Any:
        r"""Intervals and tests of the accumulated metric: the grouped bootstrap of the hashed group tables.

        Needs ``n_boot > 0`` at construction. Every counted row is in one of
        :math:`G` = 1,000 groups (a hash of its id and the seed), whose tables
        :math:`T_g` add over batches, merges and ranks. With :math:`G'` the
        non-empty groups, replicate :math:`b` draws :math:`G'` of them with
        replacement, :math:`T^{*}_b = \sum_g m_{bg} T_g` with
        :math:`m_b \sim \mathrm{Mult}(G', 1/G')`, exactly the grouped
        bootstrap of :func:`biasamp.bootstrap` on large data: a group's
        multiplicity is Binomial(:math:`G'`, :math:`1/G'`) :math:`\approx`
        Poisson(1), so with few rows per group this is the row-level Poisson
        bootstrap (Chamandy et al. 2012) and with many the cluster bootstrap of
        random groups (docs/inference.md). ``ci_method`` as in
        :func:`biasamp.bootstrap`; ``"bca"`` takes its acceleration from the
        delete-one-group jackknife. ``"auto"`` uses the max-t band for the
        max/min/absolute-value statistics and the percentile interval for the
        smooth ones (no jackknife pass).

        Returns
        -------
        BootstrapResult
        """
        from biasamp._engine.bootstrap import fill_replicates, summarize
        from biasamp._engine.options import check_ci_method, check_p_adjust
        from biasamp._engine.resample import _group_jackknife, _group_replicates
        from biasamp._engine.runs import _check_level

        if not self.n_boot:
            raise ValueError("this accumulator keeps no replicates: construct it with n_boot >= 2")
        level = _check_level(level)
        check_ci_method(ci_method)
        check_p_adjust(p_adjust)
        self._check_counting()
        assert self.boot_seed is not None  # set with n_boot > 0 by _init_bootstrap
        if self._batch_replicates:
            boot = np.asarray(self.boot, dtype=np.float64)
        else:  # the state's rows (a cross-fitted state's are split at the end), dealt to the groups now
            from biasamp._engine.resample import stream_group_count

            deal = self._declared.dealt_rows
            assert deal is not None  # declared with late_replicates
            dealt = deal(self.settings, self.state)
            if dealt is None:
                raise ValueError("no row has been counted: there is nothing to resample")
            cells = self._declared.cells(self.settings)
            boot = dealt.group_tables(cells, stream_group_count(cells), self.boot_seed)
        kept = np.flatnonzero(boot.reshape(len(boot), -1).any(axis=1))  # the non-empty groups, in group order
        seed = np.random.SeedSequence(self.boot_seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedPairWarning)
            # the family's selection of the table entries its plan reads, applied to every group table
            plan, full, groups = self._declared.resample(self.settings, self.state,
                                                         boot if len(kept) == len(boot) else boot[kept])
            del boot
            if not len(kept):
                raise ValueError("no row has been counted: there is nothing to resample")
            groups = np.asarray(groups, dtype=np.float64)
            shape = groups.shape[1:]
            groups = np.ascontiguousarray(groups.reshape(len(kept), -1))
            stats = plan.statistics(full[None])
            fill_replicates(plan, stats, _group_replicates(groups, shape, self.n_boot, seed), self.n_boot)
            if ci_method == "bca":
                for s in stats:
                    s.jackknife = np.full(len(kept), np.nan)
                for sl, tables in _group_jackknife(groups, shape):
                    values = plan.values(tables)
                    for s in stats:
                        s.jackknife[sl] = values[s.name]
        return summarize(plan, stats, n_boot=self.n_boot, level=level, ci_method=ci_method, p_adjust=p_adjust,
                         seed=seed, cell_counts=np.ones(len(kept)) if ci_method == "bca" else None, stacklevel=3,
                         test_seed=self.test_seed)

    # ---------------------------------------------------------- tables, merge
    def _tables(self) -> dict[str, Any]:
        """The tables that add, by name (the state's, and the replicate tables ``boot``); none during a pre-pass."""
        if self.state is None:
            return {}
        out = dict(self.state.tables())
        if self._batch_replicates:
            out["boot"] = self.boot
        return out

    def _table_names(self) -> tuple[str, ...]:
        return tuple(self._tables())

    def _set_tables(self, tables: Mapping[str, Any]) -> None:
        """Replace the tables named in ``tables`` (the metadata is kept)."""
        own = {k: v for k, v in tables.items() if k != "boot"}
        if own:
            self.state = self.state.with_tables(own)
        if "boot" in tables:
            self.boot = tables["boot"]

    def _zero_tables(self) -> None:
        """Zero every table in place of the current ones (the metadata, e.g. the roles seen, is kept)."""
        if self.state is not None:
            self.state = self.state.zeroed()
        if self.n_boot and self.boot is not None:
            self.boot = np.zeros_like(self.boot)

    def _merge_meta(self, other: Accumulator) -> None:
        """Check that ``other`` may merge into ``self`` and combine everything but the tables (in place)."""
        if type(other) is not type(self):
            raise TypeError(f"cannot merge a {type(self).__name__} with a {type(other).__name__}")
        if (self.n_boot, self.boot_seed) != (other.n_boot, other.boot_seed):
            raise ValueError("cannot merge accumulators with different n_boot or random_state (bootstrap seeds)")
        if self.key != other.key and type(self.settings) is not type(other.settings):
            raise ValueError(f"cannot merge accumulators of different families: {self.key!r} vs {other.key!r}")
        self.settings.check_mergeable(other.settings)
        if self.phase != other.phase:
            raise ValueError(f"cannot merge accumulators with different phase: {self.phase!r} vs {other.phase!r}")
        totals = self._weight_totals({}, (), other)
        if self.phase == "collect":
            self.collected = self.collected + other.collected
        else:
            self.state = self.state.combine_meta(other.state)
        self.weight_total = {**getattr(self, "weight_total", {}), **totals}

    def merge(self, other: Accumulator) -> Accumulator:
        """Add the counts of ``other`` into this accumulator (in place) and return it.

        Both must be of the same type with the same class lists and settings;
        ``other`` is left unchanged. Use ``a + b`` for a new accumulator.
        """
        self._merge_meta(other)
        mine, theirs = self._tables(), other._tables()
        self._set_tables({name: table + theirs[name] for name, table in mine.items()})
        return self

    def __add__(self, other: Any) -> Accumulator:
        if type(other) is not type(self):
            return NotImplemented
        return self.copy().merge(other)

    def __radd__(self, other: Any) -> Accumulator:
        if isinstance(other, int) and other == 0:  # lets sum() work
            return self.copy()
        return NotImplemented

    def copy(self) -> Accumulator:
        """An independent copy (tables included)."""
        return copy.deepcopy(self)

    def _shell(self) -> Accumulator:
        """This accumulator's metadata without its tables (what :meth:`sync` gathers)."""
        out = copy.copy(self)
        if out.state is not None:
            out.state = out.state.shell()
        out.boot = None
        return copy.deepcopy(out)

    def sync(self, group: Any = None) -> Accumulator:
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

    def __repr__(self) -> str:
        tables = ", ".join(self.state.table_names()) if self.state is not None else "none yet (pre-pass)"
        return f"{type(self).__name__}({self.key!r}, {self.phase}: tables {tables}, n_boot={self.n_boot})"


def declared_options(kind: str, own: tuple[str, ...] = ()) -> Any:
    """Decorator of a hand-written named form: it takes every option of its families, as their declarations say.

    Its families are those whose ``Named`` names it (``kind``: ``"accumulator"``, ``"metric"``, or ``"dask"``:
    a function named as the family's); the options it takes are those every one of them declares, less each
    one's ``Named.skips`` and the form's ``own`` (the options it writes and documents itself, e.g. the
    multi-attribute ``combinations``). The form writes none of them: its ``**options`` (a torchmetrics class:
    its ``**kwargs``) receives them, and

    * its signature (a class: its ``__init__``'s) shows them in place of ``**options``, keyword-only, with
      their declared defaults and annotations, in the order of the family function's signature (a
      torchmetrics class keeps ``**kwargs`` after them: torchmetrics' own keywords);
    * its docstring's ``{options}`` line becomes their parameter docs (``option(doc=...)``);
    * ``declared_options`` lists their names (what the form passes on; an option not given takes its
      declared default where the family's settings are built: one default per option).

    A form that names one of them in its own signature is refused (its default would be a second one).
    """

    def deco(obj: Any) -> Any:
        families = [f for f in REGISTRY if f.named is not None and f.options is not None and (
            f.name == obj.__name__ and f.named.dask if kind == "dask" else getattr(f.named, kind) == obj.__name__)]
        if not families:
            raise ValueError(f"no family declares {obj.__name__} as its {kind}")
        taken = [n for n in families[0].options.option_names()  # type: ignore[union-attr]
                 if n not in own and all(n in f.options.option_names() and n not in f.named.skips  # type: ignore
                                         for f in families)]
        in_function = list(inspect.signature(families[0].function).parameters)  # the function's order
        names = tuple(sorted(taken, key=lambda n: in_function.index(n) if n in in_function else len(in_function)))
        target = obj.__dict__["__init__"] if isinstance(obj, type) else obj
        written = inspect.signature(target)
        params = list(written.parameters.values())
        rest = [p for p in params if p.kind is inspect.Parameter.VAR_KEYWORD]
        twice = [p.name for p in params if p.name in names]
        if not rest or twice:
            raise TypeError(f"{obj.__name__} must take its declared options through **options, not by name "
                            f"({', '.join(twice) or 'it has no **options'})")
        declared = {p.name: p for p in families[0].options.parameters()}  # type: ignore[union-attr]
        options = [declared[n] for n in names]
        shown = [p for p in params if p not in rest] + options + (rest if kind == "metric" else [])
        target.__signature__ = written.replace(parameters=shown)
        doc = obj.__doc__ or ""
        at = doc.index("{options}")
        indent = doc[doc.rindex("\n", 0, at) + 1:at]
        entries = "\n".join(families[0].options.parameter_docs(only=(n,)) for n in names)  # type: ignore[union-attr]
        obj.__doc__ = doc.replace("{options}", entries.replace("\n", "\n" + indent), 1)
        obj.declared_options = names
        obj.own_options = own  # the options it documents itself
        return obj

    return deco


# --------------------------------------------------------------------------- #
# co-occurrence
# --------------------------------------------------------------------------- #
@declared_options("accumulator")
class CooccurrenceAccumulator(Accumulator):
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
        Replicates of the streamed bootstrap (0: none). With ``n_boot > 0``
        the accumulator keeps hashed group tables (1,000; fewer, at least 256, for wide tables) alongside the counts
        (``bootstrap()``).
    random_state : int, optional
        Seed of the streamed bootstrap (the rows' groups and the replicates).
    stream : int, default 0
        Identifier of this stream (a rank or partition), part of every row's
        default id (which fixes its bootstrap group).
    {options}

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
    The options are the functional API's (:func:`~biasamp.bias_amp_directional`):
    ``missing="group"`` makes a missing ``attr`` its own class ``"missing"``,
    which must then be in ``attr_classes``, and the rows dropped and grouped are
    summed over batches; ``threshold`` and ``soft`` are applied per batch, and
    ``compute()``'s result says which reading was used. Without a training set
    (no ``train``, no :meth:`update_train`) the signs ``y_at`` (BiasAmp_MALS:
    the indicator) are cross-fitted unless ``cross_fit=False``; ``True`` refuses
    a training set; a ``Generator`` as ``cross_fit_random_state`` draws one seed
    at construction, and accumulators merge only with the same seed.

    Per batch the arguments are encoded and counted exactly as by the
    functional API (one vectorized pass, float32 row blocks accumulated in
    float64), and the tables are added: for hard labels every entry is an
    exact integer, so the result does not depend on the batching, the merge
    order or the number of ranks. Soft predictions give expected counts,
    equal up to floating-point rounding. Cross-fitted signs (no training
    set) are drawn over every row too: the accumulator keeps the distinct
    rows it counted and splits them at the end as the function splits all
    rows (memory: the distinct rows, :ref:`def-no-train`), so any batching
    and merge order give the function's value.

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

    families = REGISTRY.named("accumulator", "CooccurrenceAccumulator")

    def __init__(self, attr_classes: Sequence | int, task_classes: Sequence | int, *, metric: str = "directional",
                 train: CooccurrenceCounts | None = None, n_boot: int = 0, random_state: Any = None, stream: int = 0,
                 **options: Any) -> None:
        if not isinstance(metric, str) or metric not in self.families:
            raise ValueError(f"metric must be one of {tuple(self.families)}, got {metric!r}")
        super().__init__(metric, {"attr": attr_classes, "task": task_classes}, n_boot=n_boot,
                         random_state=random_state, stream=stream, train=train, **options)

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
        self._count({"attr": attr, "task": task, "attr_pred": attr_pred, "task_pred": task_pred,
                     "row_ids": row_ids, "sample_weight": sample_weight})
        return self

    def update_train(self, attr: Any, task: Any, *, sample_weight: Any = None) -> CooccurrenceAccumulator:
        """Count one batch of the *training* ground truth (for ``y_at`` / ``b_train``); returns ``self``.

        Parameters
        ----------
        attr, task : labels
            Training ground truth of A and T.
        sample_weight : array-like of shape (n,), optional
            One non-negative weight per training row (:ref:`def-weights`).
        """
        self._count_train({"attr_train": attr, "task_train": task, "train_sample_weight": sample_weight})
        return self

    @property
    def n(self) -> float:
        """Number of test rows counted."""
        return float(self.state.gram[0, 0])

    @property
    def n_train(self) -> float:
        """Number of training rows counted by :meth:`update_train` (or in ``train``)."""
        train = self.settings.train
        return train.n if train is not None else float(self.state.train_gram[0, 0])

    def counts(self) -> CooccurrenceCounts:
        """The test count table of the roles seen (a :class:`~biasamp.CooccurrenceCounts`)."""
        return _cooc_counts(self.settings, self.state)

    def train_counts(self) -> tuple[CooccurrenceCounts, str]:
        """The training table used by :meth:`compute` and where it came from (``"train"``/``"test"``)."""
        return _cooc_train_counts(self.settings, self.state)

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
        return super().compute()

    def reset(self) -> CooccurrenceAccumulator:
        """Zero the tables (fixed ``train`` counts are kept); returns ``self``."""
        super().reset()
        return self

    def __repr__(self) -> str:
        roles = None if self.state.roles is None else list(self.state.roles[0] + self.state.roles[1])
        return (
            f"CooccurrenceAccumulator(metric={self.settings.metric!r}, n={self.n:g}, n_train={self.n_train:g}, "
            f"{len(self.settings.attr_classes)} attribute classes, {len(self.settings.task_classes)} task classes, "
            f"roles={roles!r})"
        )


# --------------------------------------------------------------------------- #
# fairness
# --------------------------------------------------------------------------- #
@declared_options("accumulator", own=("metrics",))
class FairnessAccumulator(Accumulator):
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
        Replicates of the streamed bootstrap (0: none). With ``n_boot > 0``
        the accumulator keeps hashed group tables (1,000; fewer, at least 256, for wide tables) alongside the counts
        (``bootstrap()``).
    random_state : int, optional
        Seed of the streamed bootstrap (the rows' groups and the replicates).
    stream : int, default 0
        Identifier of this stream (a rank or partition), part of every row's
        default id (which fixes its bootstrap group).
    {options}

    See Also
    --------
    biasamp.fairness_metrics : the functional form.
    biasamp.ConfusionCounts : the count table.

    Notes
    -----
    The options are those of :func:`~biasamp.fairness_metrics`: ``threshold``
    and ``soft`` are applied at ``update``, the others at ``compute``. Hard
    predictions give integer counts (exact in any batching and merge order);
    probabilities give expected counts, equal to rounding.

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

    families = REGISTRY.named("accumulator", "FairnessAccumulator")

    def __init__(self, classes: Sequence | int, groups: Sequence | int, *,
                 metrics: Sequence[str] = METRICS, n_boot: int = 0, random_state: Any = None,
                 stream: int = 0, **options: Any) -> None:
        super().__init__(self.family_key(), {"task": classes, "attr": groups}, metrics=metrics, n_boot=n_boot,
                         random_state=random_state, stream=stream, **options)

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
        self._count({"task": y_true, "task_pred": y_pred, "attr": sensitive_features,
                     "sample_weight": sample_weight, "row_ids": row_ids})
        return self

    @property
    def n_total(self) -> int:
        """Number of rows counted."""
        return int(self.state.n.sum())

    def counts(self) -> ConfusionCounts:
        """The accumulated :class:`~biasamp.ConfusionCounts`."""
        return _confusion(self.settings, self.state)

    def compute(self) -> FairnessResult:
        """The fairness metrics of every row counted (a :class:`~biasamp.FairnessResult`).

        Raises
        ------
        ValueError
            Nothing counted, fewer than two non-empty groups, or a metric
            undefined for every class.
        """
        return super().compute()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(n={self.n_total}, {len(self.settings.classes)} classes, "
            f"{len(self.settings.groups)} groups, soft={self.state.soft})"
        )


# --------------------------------------------------------------------------- #
# multi-attribute
# --------------------------------------------------------------------------- #
@declared_options("accumulator", own=("combinations",))
class MultiAttributeAccumulator(Accumulator):
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
        The combination set: a mode (two passes) or a fixed list (one pass;
        ``min_size``/``max_size`` are ignored for it, ``min_support`` applies
        to it at :meth:`compute`, on the training counts).
    n_boot : int, default 0
        Replicates of the streamed bootstrap (0: none). With ``n_boot > 0``
        the accumulator keeps hashed group tables (1,000; fewer, at least 256, for wide tables) alongside the counts
        (``bootstrap()``).
    random_state : int, optional
        Seed of the streamed bootstrap (the rows' groups and the replicates).
    stream : int, default 0
        Identifier of this stream (a rank or partition), part of every row's
        default id (which fixes its bootstrap group).
    {options}

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
    is a sum of weights. ``missing="group"`` makes a missing 1-D ``attr``
    its own class ``"missing"`` (which must then be in ``attr_classes``;
    :ref:`def-missing`). Without a training set the signs and Multi_MALS's
    indicator are cross-fitted (``cross_fit``, ``cross_fit_random_state``, as
    in :class:`CooccurrenceAccumulator`: the distinct rows counted are split
    at the end, so any batching gives the function's value).

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
    ...     _ = acc.update_train(attr[rows], task[rows])  # the constructed data are the training set
    >>> res = acc.compute()
    >>> round(res.mals.value, 4), round(res.g_to_m.value, 4), res.m_to_g.value
    (0.0833, 0.0625, 0.0)

    Without a training set the signs are cross-fitted over two folds of all
    the rows counted (``cross_fit=None``, see :class:`CooccurrenceAccumulator`);
    ``cross_fit=False`` reads them from every test row (the plug-in).
    """

    families = REGISTRY.named("accumulator", "MultiAttributeAccumulator")

    @renamed_arguments("0.2.0", {"group_classes": "attr_classes", "attr_classes": "task_classes"})
    def __init__(self, attr_classes: Sequence | int, task_classes: Sequence | int, *,
                 combinations: str | Sequence[Sequence] = "observed", n_boot: int = 0, random_state: Any = None,
                 stream: int = 0, **options: Any) -> None:
        super().__init__(self.family_key(), {"attr": attr_classes, "task": task_classes}, n_boot=n_boot,
                         random_state=random_state, stream=stream, combinations=combinations, **options)

    @property
    def combinations(self) -> tuple:
        """The candidate combinations M (tuples of task names), once fixed."""
        return self.settings.combinations

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
                f"({'given' if self.settings.mode == 'given' else 'freeze() was called'})"
            )
        self.prepass({"task": task, "sample_weight": sample_weight})
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
        self.end_prepass()
        return self.settings.combinations

    # --------------------------------------------------------------- pass 2
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
        self._count_train({"attr_train": attr, "task_train": task, "train_sample_weight": sample_weight})
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
        self._count({"attr": attr, "task": task, "attr_pred": attr_pred, "task_pred": task_pred,
                     "row_ids": row_ids, "sample_weight": sample_weight})
        return self

    # ----------------------------------------------------------------- read
    def counts(self) -> tuple[MultiAttributeCounts, dict, str]:
        """The count table of the kept combinations, the selection record and the train source.

        Applies the filters of the functional API: combinations with fewer
        than ``min_support`` training rows, or never contained in a test
        ground-truth row, are removed.
        """
        self._check_counting()
        return _multi_counts(self.settings, self.state)

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
        return super().compute()

    def reset(self) -> MultiAttributeAccumulator:
        """Zero the counts (pass 1: the collected sets; pass 2: the tables, M is kept); returns ``self``."""
        super().reset()
        return self

    def __repr__(self) -> str:
        s = self.settings
        if self.phase == "collect":
            state = f"pass 1: {self.collected.n_collected} rows, {len(self.collected.set_weights)} distinct task sets"
        else:
            state = (f"{len(_fixed_of(s)[1])} combinations, n_train={int(self.state.n_train)}, "
                     f"n_test={int(self.state.n_test)}")
        return (
            f"MultiAttributeAccumulator(combinations={s.mode!r}, {len(s.attr_classes)} attr classes, "
            f"{len(s.task_classes)} task classes; {state})"
        )


# --------------------------------------------------------------------------- #
# the named forms generated from a declaration
# --------------------------------------------------------------------------- #
#: what a label role is, in the words of a generated ``update``'s parameter docs
ROLE_DOCS = {
    "attr": "Test ground truth of the protected attribute (its group).",
    "task": "Test ground truth of the task.",
    "attr_pred": "Predictions of the protected attribute (hard or probabilities).",
    "task_pred": "Predictions of the task (hard, or probabilities).",
    "sample_weight": "One non-negative weight per row (:ref:`def-weights`).",
    "row_ids": "With ``n_boot > 0``: a unique id per row, which fixes its bootstrap weights.",
}

#: the streaming keywords of every accumulator, after the family's options
_STREAMING = (
    inspect.Parameter("n_boot", inspect.Parameter.KEYWORD_ONLY, default=0, annotation="int"),
    inspect.Parameter("random_state", inspect.Parameter.KEYWORD_ONLY, default=None, annotation="Any"),
    inspect.Parameter("stream", inspect.Parameter.KEYWORD_ONLY, default=0, annotation="int"),
)
_STREAMING_DOCS = """n_boot : int, default 0
    Replicates of the streamed bootstrap (0: none; :meth:`~biasamp.accumulators.Accumulator.bootstrap`).
random_state : int, optional
    Seed of the streamed bootstrap (the rows' groups and the replicates).
stream : int, default 0
    Identifier of this stream (a rank or partition), part of every row's default id."""


def class_list_docs(family: Family) -> str:
    """The numpydoc entries of a family's class lists (the positional arguments of its named forms)."""
    assert family.stream is not None
    out = []
    for c in family.stream.classes.values():
        what = ("The groups (tuples for intersectional groups of several columns)" if c.groups
                else f"The classes of {' / '.join(f'``{r}``' for r in c.roles)}")
        out.append(f"{c.name} : sequence or int\n    {what}; an int ``k`` means ``0..k-1``.")
    return "\n".join(out)


def named_signature(family: Family, before: list[inspect.Parameter], after: tuple[inspect.Parameter, ...] = (),
                    classes: str = "positional") -> inspect.Signature:
    """The signature of a named form of ``family``: ``before``, its options (keyword-only, declared defaults,
    less ``Named.skips``), ``after``. ``classes``: its class lists come first and positional, or (``"keyword"``)
    after the options, keyword-only and ``None`` by default (found in a pass, :mod:`biasamp.dask`)."""
    assert family.stream is not None and family.named is not None
    lists = [inspect.Parameter(c.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation="Sequence | int")
             for c in family.stream.classes.values()]
    options = family.options.parameters(family.named.skips) if family.options is not None else []
    if classes == "positional":
        return inspect.Signature([*lists, *before, *options, *after])
    keyword = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY, default=None, annotation="Sequence | None")
               for p in lists]
    return inspect.Signature([*before, *options, *keyword, *after])


def named_doc(family: Family, kind: str, first: str, last: str) -> str:
    """The docstring of a named form: summary, Parameters (``first``, the options from their declarations,
    ``last``) and the family's own sections for this ``kind`` (``Named.sections``)."""
    assert family.named is not None
    options = family.options.parameter_docs(family.named.skips) if family.options is not None else ""
    head = family.named.summary or family.title
    body = "\n".join(p for p in (first, options, last) if p)
    return (f"{head}\n\nParameters\n----------\n{body}\n\n{family.named.sections.get(kind, '').strip()}\n"
            .replace("\n\n\n", "\n\n"))


def update_parameters(family: Family, *, row_ids: bool = True) -> list[inspect.Parameter]:
    """``update``'s parameters: the keywords of ``Named.update`` (the first ``positional`` positional;
    ``sample_weight`` optional), then ``row_ids``."""
    assert family.named is not None
    out = []
    for i, name in enumerate(family.named.update):
        optional = family.named.update[name] == "sample_weight"
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD if i < family.named.positional else \
            inspect.Parameter.KEYWORD_ONLY
        out.append(inspect.Parameter(name, kind, default=None if optional else inspect.Parameter.empty))
    if row_ids:
        out.append(inspect.Parameter("row_ids", inspect.Parameter.KEYWORD_ONLY, default=None))
    return out


def bind(signature: inspect.Signature, name: str, args: tuple, kwargs: dict) -> inspect.BoundArguments:
    """``signature.bind(*args, **kwargs)``, whose ``TypeError`` names the form as Python's own do."""
    try:
        return signature.bind(*args, **kwargs)
    except TypeError as exc:
        raise TypeError(f"{name}() {exc}") from None


def named_accumulator(family: Family) -> type[Accumulator]:
    """The named accumulator class of ``family``, generated from its declaration (``Family.named``).

    Its constructor takes the class lists (positional, by their declared names), the family's options
    (keyword-only, with their declared defaults) and the streaming keywords; ``update`` names the label roles
    as ``Named.update`` says; its docstring is assembled from the options' declarations. A class named in
    ``Named.base`` is extended (its methods kept).
    """
    named, stream = family.named, family.stream
    if named is None or stream is None or not named.accumulator:
        raise ValueError(f"{family.key!r} declares no named accumulator (Family.named.accumulator)")
    key, lists = family.key, {k: c.name for k, c in stream.classes.items()}
    base = next((c for c in _subclasses(Accumulator) if c.__name__ == named.base), None) if named.base else None
    if named.base and base is None:
        raise ValueError(f"{family.key!r}: no accumulator class {named.base!r} to extend")
    signature = named_signature(family, [], _STREAMING)

    def __init__(self: Accumulator, *args: Any, **kwargs: Any) -> None:
        given = dict(bind(signature, named.accumulator, args, kwargs).arguments)
        classes = {k: given.pop(name) for k, name in lists.items()}
        streaming = {p.name: given.pop(p.name, p.default) for p in _STREAMING}
        Accumulator.__init__(self, key, classes, **streaming, **given)

    __init__.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD), *signature.parameters.values()])
    namespace: dict[str, Any] = {"__init__": __init__, "families": {key: {}}, "declaration": family,
                                 "__module__": __name__,
                                 "__qualname__": named.accumulator,
                                 "__doc__": named_doc(family, "accumulator", class_list_docs(family),
                                                      _STREAMING_DOCS)}
    if base is None:
        namespace["update"] = _named_update(family)
    return type(named.accumulator, (base or Accumulator,), namespace)


def _named_update(family: Family) -> Any:
    """A generated ``update``: its keywords (``Named.update``) to the label roles, counted as one batch."""
    assert family.named is not None
    roles = {**family.named.update, "row_ids": "row_ids"}
    signature = inspect.Signature(update_parameters(family))

    def update(self: Accumulator, *args: Any, **kwargs: Any) -> Accumulator:
        bound = bind(signature, "update", args, kwargs)
        bound.apply_defaults()
        self._count({roles[name]: value for name, value in bound.arguments.items()})
        return self

    update.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD), *signature.parameters.values()])
    update.__doc__ = "Count one batch of test rows; returns ``self``.\n\nParameters\n----------\n" + "\n".join(
        f"{name} : labels\n    {ROLE_DOCS.get(role, role)}" for name, role in roles.items())
    return update


#: the named accumulators generated from the declarations (``Named.generated``), by class name
GENERATED: dict[str, type[Accumulator]] = {
    f.named.accumulator: named_accumulator(f) for f in REGISTRY
    if f.named is not None and f.named.generated and f.named.accumulator}
DifferentialAccumulator = GENERATED["DifferentialAccumulator"]
