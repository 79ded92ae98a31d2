"""The multiset of the distinct rows a stream has counted: what makes a cross-fitted stream batch-free.

Without a training set, the cross-fitted families split the test rows in two
folds (:mod:`biasamp._core.crossfit`). That split is a function of the
*multiset* of rows (row order does not matter, and a row of integer weight w
is w repeated rows), so a stream that keeps the distinct rows it has seen,
with their multiplicities, can split all of them at the end exactly as the
function splits the rows of one call: any batching of an accumulator, merged
accumulators (ranks, Dask partitions) and the streamed audit then give the
function's value (docs/definitions.md, "One dataset, one number").

A :class:`RowSet` holds, for the label roles a family reads (encoded
:class:`~biasamp._core.labels.LabelMatrix` objects on the accumulator's class
lists), the distinct rows in a canonical order (sorted by content, never by
arrival) and each one's multiplicity. A row's sample weight is part of its
content (1 for an unweighted row), and the multiplicity counts the rows of that
content and weight: the split counts integer weights in units (a row of weight
w is w rows), a non-integer weight makes every row one unit of its own weight
(:func:`biasamp._core.crossfit.weight_units`), and :meth:`RowSet.rows` gives the
rows back in the form that reproduces either.

Memory is bounded by the number of distinct rows over the roles read: one code
(8 bytes) per single-label role, ``ceil(K/8)`` bytes per multi-label 0/1 role
of ``K`` classes (8 bytes per class for probabilities), and 16 bytes of
multiplicity and unit weight, per distinct row. An audit of one attribute and
one binary task with hard predictions holds at most ``|A|² · 4`` distinct rows
whatever the number of rows; wide multi-label rows or probabilities may be
nearly all distinct (then it grows with the rows).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from itertools import product
from typing import Any

import numpy as np

from biasamp._core.labels import LabelMatrix
from biasamp._engine.resample import canonical_ids, first_rows, key_columns

__all__ = ["DealtRows", "RowSet", "batch_keys", "deal_units", "dealt_group_tables", "dealt_units", "fold_tables",
           "keeps_rows", "laid_out", "merge_rowsets"]


def _concat(ms: list[LabelMatrix]) -> LabelMatrix:
    """Label matrices of the same role and classes, one under the other."""
    first = ms[0]
    if all(m.codes is not None for m in ms):
        return replace(first, codes=np.concatenate([m.codes for m in ms]))
    dense = np.concatenate([m.dense if m.codes is None else _one_hot(m) for m in ms])
    return replace(first, codes=None, dense=dense, soft=any(m.soft for m in ms))


def _one_hot(m: LabelMatrix) -> np.ndarray:
    out = np.zeros((m.n_rows, m.n_classes), dtype=np.uint8)
    out[np.arange(m.n_rows), m.codes] = 1
    return out


def _take(m: LabelMatrix, rows: np.ndarray) -> LabelMatrix:
    """The rows ``rows`` of ``m``, 0/1 indicators held in a byte each."""
    out = m.take(rows)
    if out.codes is None and not out.soft and out._dense().dtype != np.uint8:
        out = replace(out, dense=out._dense().astype(np.uint8))
    return out


@dataclass(frozen=True, eq=False)
class _Rows:
    """Distinct rows in canonical order (sorted by content) and their multiplicities: one level of a row set."""

    roles: Mapping[str, LabelMatrix]
    counts: np.ndarray
    unit: np.ndarray
    keys: np.ndarray | None

    @classmethod
    def distinct(cls, roles: dict, counts: np.ndarray, unit: np.ndarray, keys: np.ndarray | None) -> _Rows:
        """The distinct rows of ``roles`` (a row's content: its labels, its unit weight, its keys), counted."""
        keep = counts > 0
        if not keep.all():
            idx = np.flatnonzero(keep)
            roles, counts, unit = {r: _take(m, idx) for r, m in roles.items()}, counts[idx], unit[idx]
            keys = None if keys is None else keys[idx]
        if not len(counts):
            return cls(roles, counts, unit, keys)
        cols: list[np.ndarray] = []
        for r in sorted(roles):
            cols.extend(key_columns(roles[r]))
        cols.append(unit)
        if keys is not None:
            cols.extend(keys.T)
        ids = canonical_ids(cols)
        n_cells = int(ids.max()) + 1
        rep = first_rows(ids, n_cells)
        return cls({r: _take(m, rep) for r, m in roles.items()}, np.bincount(ids, weights=counts, minlength=n_cells),
                   unit[rep], None if keys is None else keys[rep])

    @classmethod
    def merged(cls, levels: list[_Rows]) -> _Rows:
        """The distinct rows of several levels together."""
        if len(levels) == 1:
            return levels[0]
        roles = {r: _concat([x.roles[r] for x in levels]) for r in levels[0].roles}
        keys = None if levels[0].keys is None else np.concatenate([x.keys for x in levels])
        return cls.distinct(roles, np.concatenate([x.counts for x in levels]),
                            np.concatenate([x.unit for x in levels]), keys)

    def size(self) -> int:
        """The number of distinct rows."""
        return len(self.counts)

    @property
    def nbytes(self) -> int:
        size = self.counts.nbytes + self.unit.nbytes + (0 if self.keys is None else self.keys.nbytes)
        for m in self.roles.values():
            size += (m.codes if m.codes is not None else m._dense()).nbytes
        return int(size)


class RowSet:
    """The distinct rows of the roles counted (canonical order) and their multiplicities.

    ``roles``: role -> :class:`LabelMatrix` of the distinct rows;
    ``counts``: each distinct row's multiplicity (the rows of that content and weight);
    ``unit``: each distinct row's sample weight (1.0 when unweighted);
    ``keys``: a caller's integer key columns of every distinct row ``(n_distinct, k)``, part of its content (the
    subgroup scan's feature codes), or None.

    Merging is amortised: a row set holds levels of distinct rows, each at
    most half the size of the one before, and ``a + b`` merges only the
    levels that break that rule (a binary counter's carries), so a stream of
    ``B`` batches sorts each row ``O(log B)`` times, not ``O(B)`` times. The
    levels are merged into one when the rows are read (``roles``,
    ``counts``, :meth:`rows`, ...); that one is a function of the multiset of
    rows, whatever the batching and the order of the merges.
    """

    __slots__ = ("_levels", "memo")

    def __init__(self, levels: tuple[_Rows, ...]) -> None:
        self._levels = levels
        #: what a family computed from these rows once (its fold tables), kept for the next reading
        self.memo: dict = {}

    @classmethod
    def of(cls, roles: Mapping[str, LabelMatrix], weights: np.ndarray | None, keys: np.ndarray | None = None) -> RowSet:
        """The rows of one batch (encoded roles, one sample weight per row or None, the caller's key columns)."""
        n = next(iter(roles.values())).n_rows
        unit = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
        if keys is not None:
            keys = np.asarray(keys, dtype=np.int64).reshape(n, -1)
        return cls((_Rows.distinct(dict(roles), np.ones(n), unit, keys),))

    def __getstate__(self) -> tuple:
        return self._levels, self.memo

    def __setstate__(self, state: tuple) -> None:
        self._levels, self.memo = state

    def _whole(self) -> _Rows:
        """The levels merged into one (kept: the row set reads as one level afterwards)."""
        if len(self._levels) > 1:
            self._levels = (_Rows.merged(list(self._levels)),)
        return self._levels[0]

    @property
    def roles(self) -> Mapping[str, LabelMatrix]:
        """Role -> the distinct rows' :class:`LabelMatrix`."""
        return self._whole().roles

    @property
    def counts(self) -> np.ndarray:
        """Each distinct row's multiplicity."""
        return self._whole().counts

    @property
    def unit(self) -> np.ndarray:
        """Each distinct row's sample weight (1.0 when unweighted)."""
        return self._whole().unit

    @property
    def keys(self) -> np.ndarray | None:
        """The caller's key columns of every distinct row, or None."""
        return self._whole().keys

    def __add__(self, other: RowSet) -> RowSet:
        mine, theirs = self._levels[0], other._levels[0]
        if set(mine.roles) != set(theirs.roles):
            raise ValueError(f"cannot merge the rows of roles {sorted(mine.roles)} and {sorted(theirs.roles)}: "
                             "every batch must give the same label arguments")
        if (mine.keys is None) != (theirs.keys is None) or (
                mine.keys is not None and theirs.keys is not None and mine.keys.shape[1] != theirs.keys.shape[1]):
            raise ValueError("cannot merge rows with and without the same key columns")
        levels = sorted((*self._levels, *other._levels), key=_Rows.size, reverse=True)
        while len(levels) > 1 and 2 * levels[-1].size() > levels[-2].size():  # a carry: the two smallest merged
            levels.append(_Rows.merged([levels.pop(), levels.pop()]))
            levels.sort(key=_Rows.size, reverse=True)
        return RowSet(tuple(levels))

    @property
    def n_distinct(self) -> int:
        """The number of distinct rows held."""
        return len(self.counts)

    @property
    def nbytes(self) -> int:
        """The bytes the distinct rows and their multiplicities hold (in every level: what the memory holds)."""
        return sum(x.nbytes for x in self._levels)

    def rows(self) -> tuple[dict[str, LabelMatrix], np.ndarray | None]:
        """The rows to count as the function counts all rows: ``(roles, weights)`` (:meth:`keyed_rows` without
        the keys)."""
        roles, weights, _ = self.keyed_rows()
        return roles, weights

    @property
    def in_units(self) -> bool:
        """Whether :meth:`keyed_rows` gives each distinct row once with its multiplicity as its weight (unweighted
        rows, :data:`biasamp._core.crossfit.MAX_UNITS` at most): the split's ``units``, not sample weights."""
        from biasamp._core.crossfit import MAX_UNITS

        return bool(np.all(self.unit == 1.0)) and float(self.counts.sum()) <= MAX_UNITS

    def keyed_rows(self) -> tuple[dict[str, LabelMatrix], np.ndarray | None, np.ndarray | None]:
        """The rows to count as the function counts all rows: ``(roles, weights, keys)``.

        Unweighted rows (:attr:`in_units`): a distinct row is given once, its
        multiplicity as its weight, which the split reads as units (that many
        identical rows, dealt like rows). Otherwise (sample weights, or more
        than :data:`biasamp._core.crossfit.MAX_UNITS` rows) a distinct row is
        given once per occurrence, with its own weight: a weighted row is one
        observation, which the split and the bootstrap deal whole.
        """
        if self.in_units:
            return dict(self.roles), self.counts.astype(np.float64), self.keys
        idx = np.repeat(np.arange(self.n_distinct), self.counts.astype(np.int64))
        unweighted = bool(np.all(self.unit == 1.0))  # the function's unweighted call: no weights, not ones
        return ({r: _take(m, idx) for r, m in self.roles.items()}, None if unweighted else self.unit[idx],
                None if self.keys is None else self.keys[idx])


@dataclass(frozen=True, eq=False)
class DealtRows:
    """A row set's rows as the streamed bootstrap deals them at the end: their table vectors ``left`` and
    ``right`` (sparse, one row each), ``weights``, each split's weight of every row in fold 0 (``shares``; None: a
    split not drawn) and the caller's ``keys`` (:attr:`RowSet.keys`)."""

    left: Any
    right: Any
    weights: np.ndarray
    shares: list
    keys: np.ndarray | None = None
    whole: bool = False  # rows of sample weights (each dealt whole), not units (RowSet.in_units)

    def group_tables(self, shape: tuple[int, int], n_groups: int, seed: int) -> np.ndarray:
        """The ``(G, *shape)`` group tables (:func:`dealt_group_tables`)."""
        return dealt_group_tables(self.left, self.right, self.weights, self.shares, shape, n_groups, seed,
                                  self.whole)


def split_keywords(weights: np.ndarray | None, units: bool) -> dict[str, Any]:
    """The keywords of :func:`~biasamp._core.crossfit.crossfit_splits` for a batch's ``weights``: sample weights
    (each row dealt whole), or, when ``units`` (:attr:`RowSet.in_units`), a row set's multiplicities (numbers of
    identical unweighted rows, dealt as that many rows)."""
    return {"weights": None, "units": weights} if units else {"weights": weights, "units": None}


def fold_tables(rowset: RowSet | None, shape: tuple, fill: Any) -> np.ndarray:
    """A family's fold tables ``(split, fold, *table)`` of a row set, counted once per row set (memoised):
    ``fill(tables)`` adds them into zero tables of ``shape``; zero tables without a row set (no row counted)."""
    if rowset is None:
        return np.zeros(shape)
    tables = rowset.memo.get("folds")
    if tables is None:
        tables = np.zeros(shape)
        fill(tables)
        rowset.memo["folds"] = tables
    return tables


def keeps_rows(settings: Any) -> bool:
    """Whether a cross-fitting family's state keeps its distinct rows: its settings split the rows in folds
    (``cross_fit`` not False). Its bootstrap's group tables are then dealt from them at the end
    (``Streaming.dealt_rows``), none are added batch by batch (``Streaming.late_replicates``)."""
    return bool(settings.folds)


def batch_keys(roles: Mapping[str, Any], kept: Any) -> np.ndarray | None:
    """The key columns a caller gave with a batch (``roles["row_keys"]``, ``(n, k)`` integers: the subgroup scan's
    feature codes), of the rows the row layer kept (``kept``: their positions, the ``row_ids`` the caller gave as
    ``0..n-1``); None without keys."""
    keys = roles.get("row_keys")
    if keys is None:
        return None
    if kept is None:
        raise ValueError("row_keys need row_ids: the positions 0..n-1 of the batch's rows")
    return np.asarray(keys, dtype=np.int64)[np.asarray(kept, dtype=np.int64)]


def merge_rowsets(mine: RowSet | None, theirs: RowSet | None) -> RowSet | None:
    """Two states' row sets combined (the ``meta`` combination of a count state)."""
    if mine is None:
        return theirs
    if theirs is None:
        return mine
    return mine + theirs


def deal_units(units: np.ndarray, n_groups: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every unit of every entry dealt to one of ``n_groups`` groups at random: ``(entry, group, units)`` triples.

    ``units``: whole numbers of units per entry (at most a few dozen each:
    one draw per unit). Each unit falls in each group with probability
    ``1 / n_groups``, independently, so the groups are the random groups of
    rows of the streamed bootstrap (:func:`biasamp._engine.resample.stream_groups`).
    """
    units = np.rint(np.asarray(units, dtype=np.float64)).astype(np.int64)
    entries = np.flatnonzero(units > 0)
    idx = np.repeat(entries, units[entries])
    key = idx * n_groups + rng.integers(n_groups, size=len(idx))
    uk, cnt = np.unique(key, return_counts=True)
    return uk // n_groups, uk % n_groups, cnt.astype(np.float64)


#: entries of more units than this draw their groups with one multinomial (dense tables), the others unit by unit
_MANY_UNITS = 64
#: (row, group) pairs of those entries' draws yielded at a time (their laid-out vectors are that many rows)
_DEALT_PAIRS = 1 << 15


def dealt_units(weights: np.ndarray, shares: list, n_groups: int, seed: int, whole: bool = False) -> Iterator[tuple]:
    """Every unit of every row dealt to one of ``n_groups`` groups at random, in its fold of every split.

    ``weights``: the rows' weights (a row of integer weight w is w units, a row
    of a non-integer weight one unit of that weight; ``whole``: every row one
    unit of its weight, the rows of sample weights); ``shares``: each split's
    weight of every row in fold 0 (None: a split not drawn). Of a row's
    units, those in fold 0 of a split are its first ones (the units are
    interchangeable). Yields ``(place, rows, group, weight)``: the blocks
    ``2·split + fold`` the units lie in, and per (row, group) pair the row,
    the group and the weight dealt there. Each unit falls in each group with
    probability ``1 / n_groups``, independently: the random groups of the
    streamed bootstrap. A function of the rows and ``seed`` only.
    """
    counted = (weights == np.floor(weights)) & (not whole)
    units, scale = np.where(counted, weights, 1.0), np.where(counted, 1.0, weights)
    n = len(weights)
    valid = [s for s, share in enumerate(shares) if share is not None]
    fold0 = {s: np.rint(shares[s] / scale) for s in valid}  # a share is a weight: in units
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 0xC0F1D]))
    even = np.full(n_groups, 1.0 / n_groups)
    for pattern in product((0, 1), repeat=len(valid)):  # the units in the same fold of every split
        lo, hi = np.zeros(n), units.copy()
        for s, f in zip(valid, pattern):
            if f:
                lo = np.maximum(lo, fold0[s])
            else:
                hi = np.minimum(hi, fold0[s])
        count = np.maximum(hi - lo, 0)
        place = [2 * s + f for s, f in zip(valid, pattern)]
        few = np.flatnonzero(count <= _MANY_UNITS)
        entry, group, k = deal_units(count[few], n_groups, rng)
        if len(entry):
            rows = few[entry]
            yield place, rows, group, k * scale[rows]
        many = np.flatnonzero(count > _MANY_UNITS)
        chunk = max(1, _DEALT_PAIRS // n_groups)  # (entries x groups) draws, a bounded number of pairs at a time
        for at in range(0, len(many), chunk):
            rows = many[at:at + chunk]
            draws = rng.multinomial(count[rows].astype(np.int64), even)
            r, g = np.nonzero(draws)
            yield place, rows[r], g, draws[r, g] * scale[rows[r]]


def laid_out(left: Any, rows: np.ndarray, weight: np.ndarray, place: list, n_blocks: int) -> Any:
    """The rows' ``left`` vectors times ``weight``, in the blocks ``place`` of ``n_blocks`` (zero elsewhere)."""
    from scipy import sparse

    vec = sparse.csr_matrix(sparse.diags(weight) @ left[rows])
    blocks = [vec if b in place else sparse.csr_matrix((len(rows), left.shape[1])) for b in range(n_blocks)]
    return sparse.hstack(blocks, format="csr")


def dealt_group_tables(left: Any, right: Any, weights: np.ndarray, shares: list, shape: tuple[int, int],
                       n_groups: int, seed: int, whole: bool = False) -> np.ndarray:
    """The streamed bootstrap's ``(G, *shape)`` group tables of rows split in folds only at the end.

    The rows (a row set's, :meth:`RowSet.rows`: ``left``/``right`` their
    table vectors, ``weights`` their weights, ``shares`` each split's weight
    of every row in fold 0, None for a split not drawn) cannot be added to the
    groups batch by batch, since their folds are known only once every row is
    counted. Every unit of every row is dealt to one of the ``G`` groups at
    random (:func:`dealt_units`) and adds its ``left`` vector, in the block of
    its fold of every split (``[l·w0 | l·w1]`` per split), times its
    ``right`` vector to its group's table: what a batch's rows add to theirs.
    The groups then resample as every streamed bootstrap's. A function of the
    rows and ``seed`` only, so of no batching. Memory: the tables, and a few
    hundred rows' draws at a time. ``whole``: the rows carry sample weights
    and each goes to a group whole (a resampled row carries its weight).
    """
    from scipy import sparse

    from biasamp._engine.resample import add_keyed_tables

    left, right = sparse.csr_matrix(left), sparse.csr_matrix(right)
    out = np.zeros((n_groups, *shape), dtype=np.float64)
    for place, rows, group, weight in dealt_units(weights, shares, n_groups, seed, whole):
        add_keyed_tables(out, laid_out(left, rows, weight, place, 2 * len(shares)), right[rows], group)
    return out
