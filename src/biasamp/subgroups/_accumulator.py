"""The subgroup scan as a generic driver over a family's streaming declaration.

One counting pass: every batch of test rows is counted once by the family's
``count`` hook (:class:`biasamp._family.Streaming`), which gives the family's
state (the population's tables, which add) and every row's table
contribution ``left[i]ᵀ right[i]`` (the replicate rows of the streamed
bootstrap). The scan adds each row's contribution to the table of its *atom*
(the cell of its levels on one tuple of ``max_order`` features) and its
bootstrap group (a hash of the row id and the seed,
:func:`biasamp._engine.resample.stream_groups`), one ``bincount`` of the rows'
table entries per tuple of features. A subgroup's table is the sum of its
atoms' (an order-1 subgroup: the atoms of a tuple holding its feature), and
its replicate tables the same sums of the
replicates of the group tables: one grouped bootstrap for every subgroup at
once, so their joint distribution gives the max-t band (:mod:`._band`).

What a subgroup's statistic means: the family's resampling plan of the whole
population (its ``resample`` hook) evaluated on the subgroup's table. What
the plan fixes stays the population's: the signs y and bias_train of a
training set (or, without one, the cross-fitted fold signs of the whole test
set: a row's sign comes from the other fold of the *population*, never from
rows of its own fold), the indicators, the combination set M, the small
classes left out. docs/scan.md says why.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from biasamp._core.crossfit import STREAM_SPLIT_NOTE
from biasamp._core.labels import _sorted_classes
from biasamp._engine.options import DEFAULT_LEVEL, DEFAULT_N_BOOT
from biasamp._engine.resample import (
    _group_replicates,
    check_random_state,
    seed_int,
    stream_groups,
)
from biasamp._families import REGISTRY
from biasamp._family import TRAIN_ROLES, Family, StatisticSpec
from biasamp.accumulators import Accumulator
from biasamp.exceptions import BiasampWarning
from biasamp.subgroups._band import max_t, replicate_se
from biasamp.subgroups._levels import FeatureLevels, encode, feature_frame, rule_notes
from biasamp.subgroups._result import ScanResult

__all__ = ["ScanAccumulator", "find_classes", "n_rows", "statistic_of"]

#: group tables of the scan's bootstrap, at most ...
SCAN_GROUPS = 1000
#: ... fewer when (atoms x groups x table) would pass this many bytes, never fewer than _MIN_SCAN_GROUPS
_SCAN_BYTES = 512 << 20
_MIN_SCAN_GROUPS = 100
_TEST_ROLES = ("attr", "task", "attr_pred", "task_pred", "sample_weight")


def statistic_of(statistic: Any, name: str = "statistic") -> tuple[Family, StatisticSpec]:
    """The family and declaration of a registered count statistic (``ValueError`` naming ``name`` otherwise)."""
    names = [s.name for fam in REGISTRY if fam.stream is not None for s in fam.statistics]
    if not isinstance(statistic, str) or statistic not in names:
        raise ValueError(f"{name} must be one of the registered count statistics {names}, got {statistic!r}")
    fam, spec = REGISTRY.statistic(statistic)
    return fam, spec


def _values_of(name: str, x: Any) -> tuple[np.ndarray | None, list | None]:
    """(1-D values, None) or (None, column names) of the label argument ``name``."""
    if isinstance(x, pd.DataFrame):
        return None, list(x.columns)
    try:
        arr = x.to_numpy() if isinstance(x, pd.Series) else np.asarray(x)
    except ValueError as exc:  # ragged rows
        raise ValueError(f"{name} must hold one label (or one row of indicators) per row: {exc}") from None
    if arr.ndim == 0:  # a scalar, a mapping, a set: no rows
        raise TypeError(f"{name} must be array-like, one label per row, got {type(x).__name__}")
    if arr.ndim == 2:
        return None, list(range(arr.shape[1]))
    return arr.ravel(), None


def find_classes(fam: Family, roles: Mapping[str, Any]) -> dict[str, list]:
    """The family's class lists (:attr:`biasamp._family.Streaming.classes`) from the label arguments given by role.

    1-D labels: their distinct values over the roles the list reads (test and
    training truth together, in canonical order); a 2-D indicator: its columns.
    """
    assert fam.stream is not None
    out = {}
    for key, spec in fam.stream.classes.items():
        given = [r for r in spec.roles if roles.get(r) is not None]
        if not given:
            raise ValueError(f"{fam.title} needs {' or '.join(spec.roles)} to find its classes ({spec.name})")
        values, columns = zip(*(_values_of(r, roles[r]) for r in given))
        wide = next((c for c in columns if c is not None), None)
        if wide is not None:
            out[key] = wide
            continue
        flat = pd.Series(np.concatenate([np.asarray(v, dtype=object) for v in values]))
        out[key] = _sorted_classes(flat[flat.notna()].to_numpy())
    return out


def n_rows(name: str, x: Any) -> int:
    """The rows of a label argument (``TypeError`` naming it for a scalar or anything without a length)."""
    try:
        if isinstance(x, (str, bytes)):
            raise TypeError
        return len(x)
    except TypeError:
        raise TypeError(f"{name} must be array-like, one entry per row, got {type(x).__name__}") from None


def _group_count(n_atoms: int, cells: tuple[int, int]) -> int:
    width = 8 * n_atoms * int(np.prod(cells))
    groups = int(min(SCAN_GROUPS, _SCAN_BYTES // max(width, 1)))
    if groups < _MIN_SCAN_GROUPS:
        raise ValueError(f"the scan would keep {n_atoms:,} cells of features x {_MIN_SCAN_GROUPS} bootstrap groups "
                         f"of tables of {int(np.prod(cells)):,} counts, over {_SCAN_BYTES >> 20} MB: lower "
                         "max_order, scan fewer features or group the levels of the features with many")
    return groups


class ScanAccumulator:
    """The subgroup scan counted batch by batch: its tables add over batches, merges and Dask partitions.

    :func:`biasamp.scan` is one batch of it; feed it batches (``update``,
    ``update_train``), merge accumulators of other partitions (``merge``,
    ``+``), then ask for the :class:`~biasamp.ScanResult` (``result``). The levels of
    the features are fixed up front (every batch encodes a row alike).

    Parameters
    ----------
    statistic : str
        A registered count statistic (``"A->T"``, ``"DP"``, ``"MALS"``, ...).
    classes : mapping
        The family's class lists (``{"attr": [...], "task": [...]}``).
    levels : sequence of FeatureLevels
        The levels of the features, one per column in order
        (:func:`biasamp.subgroups.feature_levels`).
    max_order : int, default 2
        Conditions per subgroup at most.
    n_boot : int, default 1000
        Bootstrap replicates of the band.
    random_state : int, numpy Generator or None
        Seed of the bootstrap (the rows' groups and the replicates).
    train : bool, default False
        Whether training rows will be counted (``update_train``).
    stream : int, default 0
        Stream number for the rows' default ids (rows without ``row_ids`` get
        ``stream·2⁴⁰ + running number``).
    **options
        The family's options (``threshold``, ``soft``, ``cross_fit``, ...).

    Notes
    -----
    Row :math:`i` of a batch adds its table contribution
    :math:`l_i^\\top r_i` (the family's replicate rows) to the table of
    (atom, group), where the atom is its cell on each tuple of ``max_order``
    features and the group :math:`g_i = h(\\text{row id}_i, \\text{seed})`
    (a hash of the row id and the seed), so batches, merges and
    Dask partitions give the tables of the one-shot scan. A family that
    keeps its distinct rows (cross-fitting without a training set) keeps them
    with their features instead, splits them once when the scan is asked for
    and deals every unit of every row to a random group in its fold: the scan
    of any batching is the one-shot scan.

    References
    ----------
    .. [1] N. Chamandy, O. Muralidharan, A. Najmi, S. Naidu. "Estimating
       uncertainty for massive data streams". Google, 2012 (the Poisson
       bootstrap of streamed rows).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from biasamp import ScanAccumulator
    >>> from biasamp.subgroups import feature_levels
    >>> rng = np.random.default_rng(0)
    >>> feats = pd.DataFrame({"site": rng.choice(["a", "b"], 1000)})
    >>> a, t = rng.integers(0, 2, 1000), rng.integers(0, 2, 1000)
    >>> acc = ScanAccumulator("DP", {"attr": [0, 1], "task": [0, 1]}, feature_levels(feats), n_boot=50,
    ...                       random_state=0)
    >>> for rows in np.array_split(np.arange(1000), 4):
    ...     _ = acc.update(feats.iloc[rows], {"attr": a[rows], "task": t[rows], "task_pred": t[rows]})
    >>> acc.result().subgroups.shape[0]
    2
    """

    #: where each Dask partition's rows start (their global positions: :func:`biasamp.dask.scan` sets it)
    partition_starts: tuple = ()

    def __init__(self, statistic: str, classes: Mapping[str, Any], levels: Sequence[FeatureLevels], *,
                 max_order: int = 2, n_boot: int = DEFAULT_N_BOOT, random_state: Any = None, train: bool = False,
                 stream: int = 0, **options: Any) -> None:
        fam, spec = statistic_of(statistic)
        self.statistic, self.fam_key = statistic, fam.key
        if isinstance(max_order, bool) or not isinstance(max_order, (int, np.integer)) or max_order < 1:
            raise ValueError(f"max_order must be a positive integer, got {max_order!r}")
        if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or not 20 <= n_boot <= 100_000:
            raise ValueError(f"n_boot must be an integer in [20, 100000], got {n_boot!r}")
        check_random_state(random_state)
        levels = tuple(levels)
        if not levels or not all(isinstance(lv, FeatureLevels) for lv in levels):
            raise TypeError("levels must be a non-empty sequence of FeatureLevels (one per feature)")
        self.levels, self.max_order, self.n_boot = levels, int(max_order), int(n_boot)
        self.seed = seed_int(random_state)
        self.train, self.stream, self.rows_seen, self.batches = bool(train), int(stream), 0, 0
        self.family = Accumulator.for_family(fam.key, classes, **options)
        self.options = dict(options)
        order = min(self.max_order, len(levels))
        self.tuples = list(itertools.combinations(range(len(levels)), order))
        sizes = [int(np.prod([levels[f].n_levels for f in t])) for t in self.tuples]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.boot: np.ndarray | None = None
        self.sizes = np.zeros((int(self.offsets[-1]), 0), dtype=np.float64)  # (atoms, groups) once counting starts
        if self.family.phase == "count":
            self._start()

    @property
    def _fam(self) -> Family:
        return REGISTRY[self.fam_key]

    @property
    def n_atoms(self) -> int:
        """The cells of the tuples of features (the atoms every subgroup's table is a sum of)."""
        return int(self.offsets[-1])

    def _start(self) -> None:
        cells = self._fam.stream.cells(self.family.settings)  # type: ignore[union-attr]
        self.n_groups = _group_count(self.n_atoms, cells)
        self.cells = tuple(cells)
        self.sizes = np.zeros((self.n_atoms, self.n_groups), dtype=np.float64)

    # ------------------------------------------------------------------ counting
    @property
    def phase(self) -> str:
        """``"collect"`` during the family's pre-pass (multi-attribute combinations), else ``"count"``."""
        return self.family.phase

    def prepass(self, roles: Mapping[str, Any]) -> ScanAccumulator:
        """The family's first pass over a batch given by label role; returns ``self``."""
        self.family.prepass(roles)
        return self

    def end_prepass(self) -> ScanAccumulator:
        """Close the family's first pass; counting starts. Returns ``self``."""
        if self.family.phase == "collect":
            self.family.end_prepass()
            self._start()
        return self

    def update_train(self, roles: Mapping[str, Any]) -> ScanAccumulator:
        """Count a batch of training rows (``attr_train``, ``task_train``, ``train_sample_weight``); returns ``self``.

        Families that read no training set (group and differential fairness)
        ignore them.
        """
        if self._fam.stream.count_train is not None:  # type: ignore[union-attr]
            self.family.update_roles({r: roles.get(r) for r in (*TRAIN_ROLES, "train_sample_weight")})
        return self

    def update(self, features: Any, roles: Mapping[str, Any], row_ids: Any = None) -> ScanAccumulator:
        """Count a batch of test rows: their features and their labels by role; returns ``self``.

        ``roles``: ``attr``, ``task``, ``attr_pred``, ``task_pred``,
        ``sample_weight``. ``row_ids`` (optional): one non-negative integer id
        per row, which places it in its bootstrap group (default: the running
        row number of this accumulator's stream). A family that keeps its
        distinct rows (cross-fitting without a training set) deals its rows to
        the groups at random when the scan is asked for, and reads no id.
        """
        self.family._check_counting()
        frame = feature_frame(features)
        n = len(frame)
        codes = encode(frame, self.levels)
        given = {r: roles.get(r) for r in _TEST_ROLES}
        for r, x in given.items():
            if x is not None and n_rows(r, x) != n:
                raise ValueError(f"{r} has {len(x)} rows, features {n}: one row of features per row of labels")
        if row_ids is None:
            ids = (np.uint64(self.stream) << np.uint64(40)) + np.arange(self.rows_seen, self.rows_seen + n,
                                                                        dtype=np.uint64)
        else:
            ids = np.asarray(row_ids)
            if ids.shape != (n,) or ids.dtype.kind not in "iu" or (ids < 0).any():
                raise ValueError(f"row_ids must be {n} non-negative integers (one per row of the batch)")
            ids = ids.astype(np.uint64)
        fam = self._fam
        counted = fam.counted_roles({**given, "row_ids": np.arange(n)}, self.train)
        decl = fam.stream
        assert decl is not None
        if self._late:  # the family keeps its distinct rows, with their features: dealt to the tables at the end
            state, _ = decl.count(self.family.settings, {**counted, "row_keys": codes}, False)
            self.family.state.check_batch(state)
            self.family.state.add_(state)
            self.rows_seen += n
            self.batches += 1
            return self
        if self.boot is None:  # allocated with the first batch (an empty template travels light)
            self.boot = np.zeros((self.n_atoms * self.n_groups, *self.cells), dtype=np.float64)
        state, rows = decl.count(self.family.settings, counted, True)
        kept = np.asarray(rows.row_ids if rows.row_ids is not None else np.arange(rows.n), dtype=np.int64)
        if len(kept) != rows.n:  # pragma: no cover - a family that drops rows without their ids
            raise RuntimeError(f"{fam.key}: the counting pass kept {rows.n} rows but returned {len(kept)} ids")
        self.family.state.check_batch(state)
        codes = codes[kept]
        weight = given.get("sample_weight")
        w = None if weight is None else np.asarray(pd.Series(np.asarray(weight)).to_numpy(np.float64))[kept]
        group = stream_groups(ids[kept], self.n_groups, self.seed)
        self._add(self.boot, self.sizes, rows.left, rows.right, codes, group, w)
        self.family.state.add_(state)
        self.rows_seen += n
        self.batches += 1
        return self

    @property
    def _late(self) -> bool:
        """Whether the family keeps its distinct rows (cross-fitting, no training set: split at the end) and the
        (atom, group) tables are dealt from them when the scan is asked for (:meth:`_dealt`), not added batch by
        batch. With training rows (``train``) a row's folds are never read (their blocks are added): batch by
        batch, each row in the group its id hashes to."""
        return not self.train and self._fam.stream.keeps_rows(self.family.settings)  # type: ignore[union-attr]

    def _dealt(self) -> tuple[np.ndarray, np.ndarray]:
        """The (atom, group) tables and sizes of a family that keeps its distinct rows: every unit of every
        distinct row (its features among its content) dealt to a random group, in its fold of every split of
        all the rows (:func:`biasamp._engine.rowset.dealt_units`), and added to the table of its atom of every
        tuple of features in that group, as a batch's rows add theirs: one split of every row, whatever the
        batching (the function's)."""
        from biasamp._engine.rowset import dealt_units, laid_out

        decl = self._fam.stream
        assert decl is not None and decl.dealt_rows is not None
        dealt = decl.dealt_rows(self.family.settings, self.family.state)
        if dealt is None or dealt.keys is None:
            raise ValueError("no row has been counted: there is nothing to scan")
        g = self.n_groups
        boot = np.zeros((self.n_atoms * g, *self.cells), dtype=np.float64)
        sizes = np.zeros((self.n_atoms, g), dtype=np.float64)
        left, right = sparse.csr_matrix(dealt.left), sparse.csr_matrix(dealt.right)
        for place, rows, group, weight in dealt_units(dealt.weights, dealt.shares, g, self.seed):
            self._add(boot, sizes, laid_out(left, rows, weight, place, 2 * len(dealt.shares)), right[rows],
                      dealt.keys[rows], group, weight)
        return boot, sizes

    def _add(self, boot: np.ndarray, sizes: np.ndarray, left: Any, right: Any, codes: np.ndarray, group: np.ndarray,
             weight: np.ndarray | None) -> None:
        """Add rows (their table vectors, feature codes, groups and weights) to the (atom, group) tables and sizes.

        Each row's table entries are listed once (:func:`_row_entries`); each tuple's (atom, group) tables are one
        ``bincount`` of them, keyed by the row's atom of the tuple and its group.
        """
        row, cell, value = _row_entries(left, right, self.cells)
        width = int(np.prod(self.cells))
        flat = boot.reshape(-1)
        for t, start, stop in zip(self.tuples, self.offsets[:-1], self.offsets[1:]):
            atom = np.zeros(len(group), dtype=np.int64)
            for f in t:
                atom = atom * self.levels[f].n_levels + codes[:, f]
            key = atom * self.n_groups + group  # within the tuple's block of (atom, group) tables
            block = slice(int(start) * self.n_groups * width, int(stop) * self.n_groups * width)
            entry = key[row]  # every entry's place in the tuple's block: its table, then its cell (in place)
            entry *= width
            entry += cell
            flat[block] += np.bincount(entry, weights=value, minlength=block.stop - block.start)
            del entry
            key += int(start) * self.n_groups
            sizes += np.bincount(key, weights=weight, minlength=sizes.size).reshape(sizes.shape)

    # ------------------------------------------------------------------ merging
    def _check_mergeable(self, other: ScanAccumulator) -> None:
        if not isinstance(other, ScanAccumulator):
            raise TypeError(f"cannot merge a ScanAccumulator with a {type(other).__name__}")
        for name in ("statistic", "levels", "max_order", "n_boot", "seed", "train"):
            if getattr(self, name) != getattr(other, name):
                raise ValueError(f"cannot merge scans with different {name}: {getattr(self, name)!r} vs "
                                 f"{getattr(other, name)!r}")

    def merge(self, other: ScanAccumulator) -> ScanAccumulator:
        """Add another scan's counts (same statistic, levels, options and seed) into this one; returns ``self``."""
        self._check_mergeable(other)
        if self.phase != other.phase:
            raise ValueError("cannot merge a scan in its pre-pass with one counting")
        self.family.merge(other.family)
        if other.boot is not None:
            if self.boot is None:
                self.boot = other.boot.copy()
            else:
                self.boot += other.boot
        self.sizes += other.sizes
        self.rows_seen += other.rows_seen
        self.batches += other.batches
        return self

    def copy(self) -> ScanAccumulator:
        """An independent copy."""
        out = ScanAccumulator.__new__(ScanAccumulator)
        out.__dict__.update(self.__dict__)
        out.family = self.family.copy()
        out.boot = None if self.boot is None else self.boot.copy()
        out.sizes = self.sizes.copy()
        return out

    def __add__(self, other: Any) -> ScanAccumulator:
        if not isinstance(other, ScanAccumulator):
            return NotImplemented
        return self.copy().merge(other)

    def __repr__(self) -> str:
        return (f"ScanAccumulator({self.statistic!r}, features={[lv.name for lv in self.levels]}, "
                f"max_order={self.max_order}, atoms={self.n_atoms:,}, phase={self.phase!r})")

    # ------------------------------------------------------------------ the scan
    def _subgroups(self) -> tuple[sparse.csr_matrix, list[str], list[int], list[tuple]]:
        """Every candidate subgroup as a sum of atoms: membership (S, atoms), rules, orders, conditions."""
        rows: list[int] = []
        cols: list[int] = []
        rules: list[str] = []
        orders: list[int] = []
        conds: list[tuple] = []
        order = len(self.tuples[0])
        for j in range(1, order + 1):
            for subset in itertools.combinations(range(len(self.levels)), j):
                k = next(i for i, t in enumerate(self.tuples) if set(subset) <= set(t))
                t, offset = self.tuples[k], int(self.offsets[k])
                dims = [self.levels[f].n_levels for f in t]
                grid = np.indices(dims).reshape(len(t), -1)  # every atom of the tuple, in mixed-radix order
                pos = [t.index(f) for f in subset]
                for combo in itertools.product(*(range(self.levels[f].n_levels) for f in subset)):
                    match = np.all(grid[pos] == np.asarray(combo)[:, None], axis=0)
                    atoms = offset + np.flatnonzero(match)
                    rows.extend([len(rules)] * len(atoms))
                    cols.extend(atoms.tolist())
                    cond = tuple((self.levels[f].name, self.levels[f].level(c)) for f, c in zip(subset, combo))
                    rules.append(" & ".join(self.levels[f].condition(c) for f, c in zip(subset, combo)))
                    orders.append(j)
                    conds.append(cond)
        member = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(rules), self.n_atoms))
        return member, rules, orders, conds

    def result(self, *, level: float = DEFAULT_LEVEL, min_group_size: float = 100) -> ScanResult:
        """The scan: every subgroup of at least ``min_group_size`` rows (weighted), with adjusted intervals.

        Returns
        -------
        ScanResult
        """
        from biasamp._engine.runs import _check_level

        level = _check_level(level)
        if isinstance(min_group_size, bool) or not isinstance(min_group_size, (int, float, np.integer,
                                                                               np.floating)) \
                or not np.isfinite(min_group_size) or min_group_size < 1:
            raise ValueError(f"min_group_size must be a number >= 1, got {min_group_size!r}")
        self.family._check_counting()
        fam, spec = statistic_of(self.statistic)
        decl = fam.stream
        assert decl is not None
        late = self._late
        if late:
            boot, self_sizes = self._dealt()
        elif self.boot is None:
            raise ValueError("no row has been counted: there is nothing to scan")
        else:
            boot, self_sizes = self.boot, self.sizes
        g = self.n_groups
        cells = boot.shape[1:]
        boot = boot.reshape(self.n_atoms, g, -1)
        kept = np.flatnonzero(boot.any(axis=(0, 2)))
        if not len(kept):
            raise ValueError("no row has been counted: there is nothing to scan")
        flat = np.ascontiguousarray(boot[:, kept].reshape(self.n_atoms * len(kept), *cells))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BiasampWarning)
            plan, full, sel = decl.resample(self.family.settings, self.family.state, flat)
            plan.statistics(np.asarray(full, dtype=np.float64)[None])  # what the plan fixes from the estimate
            with np.errstate(all="ignore"):
                overall = float(plan.values(np.asarray(full, dtype=np.float64)[None]).get(spec.name,
                                                                                        np.array([np.nan]))[0])
        if not np.isfinite(overall):
            why = "; ".join(n for n in plan.notes if spec.name in n) or "its every pair or group is undefined"
            raise ValueError(f"{spec.name} is undefined on the whole population, nothing to scan: {why}")
        sel = np.asarray(sel, dtype=np.float64)
        shape = sel.shape[1:]
        width = int(np.prod(shape))
        atom_groups = sel.reshape(self.n_atoms, len(kept), width)
        member, rules, orders, conds = self._subgroups()
        sizes = member @ self_sizes.sum(axis=1)
        keep = np.flatnonzero(sizes >= min_group_size)
        member = member[keep]
        dense = member.toarray()
        group_sizes = np.asarray(member @ self_sizes[:, kept]).T  # (G, S): each subgroup's rows in each group
        tables = (member @ atom_groups.sum(axis=1)).reshape(len(keep), *shape)
        groups = np.ascontiguousarray(atom_groups.transpose(1, 0, 2).reshape(len(kept), self.n_atoms * width))
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", BiasampWarning)
            units = _Units(plan, spec, tables)
            dev = units.jackknife(dense, atom_groups, tables)
            se = _floored(np.sqrt((len(kept) - 1) / len(kept) * ((dev - dev.mean(axis=0)) ** 2).sum(axis=0)),
                          units.se_floor)
            z = np.empty((self.n_boot, len(units.estimate)))
            for at, chunk, counts in _group_replicates(groups, (self.n_atoms, width), self.n_boot,
                                                       np.random.SeedSequence(self.seed), with_counts=True):
                sub = np.einsum("sa,baw->bsw", dense, chunk).reshape(-1, *shape)
                rep = units.of(sub).reshape(len(chunk), -1)
                rse = _floored(replicate_se(counts, dev, group_sizes, units.owner), units.se_floor)
                z[at] = np.abs(rep - units.estimate) / rse
            band = max_t(units.estimate, se, z, units.owner, len(keep), level)
            frame = units.frame(band, level, spec.range)
        frame.insert(0, "rule", [rules[i] for i in keep])
        frame.insert(1, "order", [orders[i] for i in keep])
        frame.insert(2, "n", sizes[keep])
        frame["conditions"] = [conds[i] for i in keep]
        # a family that keeps its rows splits every row once, the function's split whatever the batching: the
        # scan is the one-shot scan, with its notes
        notes = rule_notes(self.levels) + [n for n in plan.notes if n != STREAM_SPLIT_NOTE]
        notes += _band_notes(band.critical, level)
        return ScanResult.build(frame, statistic=spec.name, family=fam.title, level=level, n_boot=self.n_boot,
                                critical_value=band.critical, overall=overall, max_order=self.max_order,
                                min_group_size=float(min_group_size), n_candidates=len(rules),
                                n_groups=len(kept), regular=spec.regular, notes=notes)


def _row_entries(left: Any, right: Any, cells: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The entries of every row's table ``left[i]ᵀ right[i]``: (row, cell of the flattened table, value).

    The rows' tables are the same for every tuple of features; listed once,
    each tuple's (atom, group) tables are one ``bincount`` of them (the rows'
    entries keyed by their tables), in place of one sparse product per tuple.
    """
    wl, wr = cells
    left = sparse.csr_matrix(left, dtype=np.float64)
    right = sparse.csr_matrix(right, dtype=np.float64)
    n = left.shape[0]
    if left.shape != (n, wl) or right.shape != (n, wr):
        raise ValueError(f"a batch of {n} rows needs left ({n}, {wl}) and right ({n}, {wr}), got {left.shape} and "
                         f"{right.shape}")
    # the entries outnumber the rows (about 4 a row): their indices kept narrow where they fit
    small = np.int32 if max(n, left.nnz * wr, right.nnz * wl) < 2**31 else np.int64  # bounds every index
    n_left, n_right = np.diff(left.indptr).astype(small), np.diff(right.indptr).astype(small)
    row_of_left = np.repeat(np.arange(n, dtype=small), n_left)
    pairs = n_right[row_of_left]  # every left entry meets each right entry of its row
    each = np.repeat(np.arange(len(row_of_left), dtype=small), pairs)
    first = np.cumsum(pairs, dtype=small) - pairs  # where each left entry's pairs start
    at = np.arange(len(each), dtype=small)
    at -= first[each]
    at += right.indptr[:-1].astype(small)[row_of_left[each]]
    cell = left.indices[each].astype(small) * wr + right.indices[at].astype(small)
    return row_of_left[each], cell, left.data[each] * right.data[at]


def _band_notes(critical: float, level: float) -> list[str]:
    """Why the band's critical value is not a finite number, when it is not (else nothing)."""
    if np.isnan(critical):
        return ["critical value undefined: no subgroup is in the band (each is undefined or has no bootstrap "
                "variation), so no adjusted interval or p-value is given"]
    if np.isinf(critical):
        return [f"critical value infinite: in more than {1 - level:.0%} of the replicates a subgroup's value moved "
                "while its replicate standard error was 0 (too few rows per subgroup for the bootstrap-t), so every "
                "adjusted interval is the statistic's whole range"]
    return []


def _floored(se: np.ndarray, floor: np.ndarray | None) -> np.ndarray:
    """Standard errors at least the family's floor (:attr:`biasamp._engine.intervals.Parts.se_floor`; NaN: none)."""
    return se if floor is None else np.fmax(se, floor)


#: memory target of one chunk of the scan's leave-one-group-out tables
_JACKKNIFE_BYTES = 32 << 20


class _Units:
    """A statistic's units on stacks of subgroup tables: itself (regular) or its signed parts (non-regular)."""

    def __init__(self, plan: Any, spec: StatisticSpec, tables: np.ndarray) -> None:
        self.plan, self.spec = plan, spec
        n = len(tables)
        self.value = self._values(tables)
        self.parts: list = []
        if spec.regular:
            self.estimate, self.owner, self.se_floor = self.value, np.arange(n), None
            return
        est = self.of(tables)
        j = est.shape[1] // max(n, 1) if n else 0
        self.n_parts = j
        self.estimate = est.reshape(-1)
        self.owner = np.repeat(np.arange(n), j)
        floors = []
        for s in range(n):  # the subgroup's Parts: how the statistic is built from its parts (units, aggregate)
            stat = next((x for x in plan.statistics(tables[s:s + 1]) if x.name == spec.name), None)
            self.parts.append(None if stat is None else stat.parts)
            floor = None if stat is None or stat.parts is None else stat.parts.se_floor
            floors.append(np.full(j, np.nan) if floor is None else np.asarray(floor, dtype=np.float64))
        self.se_floor = np.concatenate(floors) if floors else None

    def jackknife(self, dense: np.ndarray, atom_groups: np.ndarray, tables: np.ndarray) -> np.ndarray:
        """``θ_(g) − θ`` of every unit with bootstrap group ``g`` left out, ``(G, U)`` (0 where undefined).

        ``dense`` ``(S, atoms)``: the subgroups' atoms; ``atom_groups``
        ``(atoms, G, W)``: the tables of every atom and group; ``tables``
        ``(S, ...)``: the subgroups' tables.
        """
        n_groups = atom_groups.shape[1]
        flat = tables.reshape(len(tables), -1)
        step = max(1, _JACKKNIFE_BYTES // (8 * max(flat.size, 1)))
        out = np.empty((n_groups, len(self.estimate)))
        for a in range(0, n_groups, step):
            b = min(n_groups, a + step)
            left_out = flat[None] - np.einsum("sa,agw->gsw", dense, atom_groups[:, a:b])
            out[a:b] = self.of(left_out.reshape(-1, *tables.shape[1:])).reshape(b - a, -1)
        out -= self.estimate
        out[~np.isfinite(out)] = 0.0
        return out

    def _values(self, tables: np.ndarray) -> np.ndarray:
        out = self.plan.values(tables)
        return np.asarray(out.get(self.spec.name, np.full(len(tables), np.nan)), dtype=np.float64)

    def of(self, tables: np.ndarray) -> np.ndarray:
        """The units of a stack of tables: ``(n,)`` values, or ``(1, n·J)`` parts laid out subgroup by subgroup."""
        if self.spec.regular:
            return self._values(tables)
        parts = self.plan.parts(tables).get(self.spec.name)
        if parts is None:
            return np.full((1, 0), np.nan)
        return np.asarray(parts, dtype=np.float64).reshape(1, -1)

    def frame(self, band: Any, level: float, rng: tuple[float, float]) -> pd.DataFrame:
        """Per subgroup: estimate, adjusted and unadjusted intervals and p-values, and why one was not scanned."""
        n = len(self.value)
        lo, hi = np.full(n, np.nan), np.full(n, np.nan)
        lo_u, hi_u = np.full(n, np.nan), np.full(n, np.nan)
        se_sub = np.full(n, np.nan)
        for s in np.flatnonzero(band.scanned):
            if self.spec.regular:
                se = band.se[s]
                se_sub[s] = se
                lo[s], hi[s] = self.value[s] - band.critical * se, self.value[s] + band.critical * se
                c = band.critical_each[s]
                lo_u[s], hi_u[s] = self.value[s] - c * se, self.value[s] + c * se
                continue
            parts = self.parts[s]
            sl = slice(s * self.n_parts, (s + 1) * self.n_parts)
            est, se = self.estimate[sl], band.se[sl]
            if parts is None:
                continue
            for c, (a, b) in ((band.critical, (lo, hi)), (band.critical_each[s], (lo_u, hi_u))):
                x, y = parts.bound(np.where(np.isfinite(est), est - c * se, np.nan),
                                   np.where(np.isfinite(est), est + c * se, np.nan))
                a[s], b[s] = x, y
        lo, hi = np.clip(lo, *rng), np.clip(hi, *rng)
        lo_u, hi_u = np.clip(lo_u, *rng), np.clip(hi_u, *rng)
        # an interval holds its estimate (the clipped band around a value in range does; a bound derived from
        # parts may not when the estimate's own units are undefined in the band: widen to the estimate)
        with np.errstate(invalid="ignore"):
            lo, hi = np.fmin(lo, self.value), np.fmax(hi, self.value)
            lo_u, hi_u = np.fmin(lo_u, self.value), np.fmax(hi_u, self.value)
        scanned = band.scanned & np.isfinite(lo) & np.isfinite(hi)
        reason = np.where(~np.isfinite(self.value), f"{self.spec.name} is undefined on this subgroup (a class, "
                          "group or pair it needs has no member or no positive in it)",
                          np.where(scanned, "", "no bootstrap variation (standard error 0): not in the band"))
        nan = ~scanned
        return pd.DataFrame({
            "estimate": self.value,
            "se": np.where(nan, np.nan, se_sub) if self.spec.regular else np.nan,
            "ci_low": np.where(nan, np.nan, lo), "ci_high": np.where(nan, np.nan, hi),
            "p_value": np.where(nan, np.nan, band.p_adjusted),
            "ci_low_unadjusted": np.where(nan, np.nan, lo_u), "ci_high_unadjusted": np.where(nan, np.nan, hi_u),
            "p_value_unadjusted": np.where(nan, np.nan, band.p_unadjusted),
            "t": np.where(nan, np.nan, band.t),
            "scanned": scanned, "reason": reason,
        })
