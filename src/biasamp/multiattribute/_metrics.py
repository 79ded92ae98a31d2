"""Multi-attribute bias amplification: Multi_MALS and Multi→ (G→M, M→G).

Zhao, Andrews & Xiang (2023) extend BiasAmp_MALS and BiasAmp→ from single
attributes to *combinations* of attributes. Vocabulary: as everywhere in
biasamp, ``attr`` is the protected attribute and ``task`` the task labels.
The paper calls them the other way round: its **group** g is our ``attr``
(one-hot, e.g. gender) and its **attributes** are our ``task`` columns
(multi-label, e.g. COCO objects); M is a set of combinations m of task
labels. An instance with task set S *contains* m iff m ⊆ S; every count below
is a containment count. The formulas keep the paper's letters g and m.

Counts first: :class:`MultiAttributeCounts` holds, for every kept
combination, the few integer tables the three metrics need, and
:func:`multi_from_counts` is a pure function of it. The counting pass packs
every label column into 64-bit words (one bitset per attribute and per group
over the instances); the containment bitset of a combination is the AND of its
attributes' bitsets and a joint count is a popcount, so the cost is
O(N·Σ|m|/64) word operations, vectorized over combinations, with no Python
loop over instances and no per-combination pass over the rows.

Sample weights (:ref:`def-weights`) make every count a sum of weights. Small
integer weights are counted exactly with the same popcounts, one bit plane of
the weights at a time (``w = Σ_b 2^b [bit b of w]``); other weights unpack
the containment bits of a few combinations at a time and multiply them with
the weighted group indicators (one matrix product).

References
----------
.. [1] D. Zhao, J. T. A. Andrews, A. Xiang. "Men Also Do Laundry:
   Multi-Attribute Bias Amplification". ICML 2023,
   Eq. 1-3.
.. [2] J. Zhao et al. "Men Also Like Shopping". EMNLP 2017.
.. [3] A. Wang, O. Russakovsky. "Directional Bias Amplification". ICML 2021.
"""

from __future__ import annotations

import dataclasses
import functools
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from biasamp._core.crossfit import check_cross_fit, crossfit_splits, describe, fold_weights
from biasamp._core.deprecation import renamed_arguments
from biasamp._core.labels import (
    LabelMatrix,
    _align_columns,
    _as_array,
    _check_finite,
    _fmt_rows,
    check_consistent_length,
    encode_labels,
    read_task_roles,
)
from biasamp._core.policy import (
    check_include_small_groups,
    check_min_group_size,
    check_soft,
    check_threshold,
    harden_roles,
    joined,
    small_groups,
    warn_small_groups,
)
from biasamp._core.policy_options import DEFAULT_MIN_GROUP_SIZE, DEFAULT_THRESHOLD
from biasamp._core.results import ResultMixin, fmt, top_rows
from biasamp._core.rows import RowFilter, add_filters
from biasamp._core.typing import AttrPredRule, BinaryTask, Combinations, Labels, Missing, Soft, Support, Weights
from biasamp._engine.pair_terms import _as_count, _greater, crossfit_mean, fold_keep, mals_crossfit_arrays, sign_of
from biasamp._engine.train_test_rows import _rows_lines, select_train_test, take_rows
from biasamp._engine.undefined import _all_undefined_error, _warn_undefined, _warn_undefined_statistics
from biasamp.multiattribute._options import _MODES as _MODES  # read by _stream
from biasamp.multiattribute._options import MultiOptions

__all__ = [
    "MultiAttributeCounts",
    "MultiBiasAmpResult",
    "MultiMetricResult",
    "multi_bias_amp",
    "multi_from_counts",
]

_CHUNK_BYTES = 8 << 20  # working-set target of one vectorized step


# --------------------------------------------------------------------------- #
# bitsets
# --------------------------------------------------------------------------- #
if hasattr(np, "bitwise_count"):  # numpy >= 2.0

    def _popcount(x: np.ndarray) -> np.ndarray:
        """Number of set bits along the last axis (int64)."""
        return np.bitwise_count(x).sum(axis=-1, dtype=np.int64)

else:  # pragma: no cover - numpy < 2
    _BYTE_COUNTS = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)

    def _popcount(x: np.ndarray) -> np.ndarray:
        x = np.ascontiguousarray(x)
        return _BYTE_COUNTS[x.view(np.uint8)].sum(axis=-1, dtype=np.int64)


def _n_words(n: int) -> int:
    return (n + 63) // 64


def _column_bitsets(get_block, n: int, k: int) -> np.ndarray:
    """``(k, words)`` uint64 bitsets of the columns of an ``n x k`` boolean matrix.

    ``get_block(start, stop)`` returns rows ``start:stop`` as a boolean array;
    rows are packed in blocks (a multiple of 64 rows) so that no full-size
    copy of the input is made. Bit ``i`` of a column's bitset is row ``i``.
    """
    words = _n_words(n)
    out = np.zeros((k, words * 8), dtype=np.uint8)
    rows = max(64, (_CHUNK_BYTES // max(k, 1)) // 64 * 64)
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        packed = np.packbits(get_block(start, stop), axis=0, bitorder="little")
        out[:, start // 8 : start // 8 + packed.shape[0]] = packed.T
    return out.view(np.uint64)


def _label_blocks(m: LabelMatrix):
    """Row-block reader of a hard 0/1 label matrix as booleans."""
    if m.codes is not None:
        k, codes = m.n_classes, m.codes

        def get(start: int, stop: int) -> np.ndarray:
            block = np.zeros((stop - start, k), dtype=bool)
            block[np.arange(stop - start), codes[start:stop]] = True
            return block

    else:
        dense = m._dense()

        def get(start: int, stop: int) -> np.ndarray:
            return dense[start:stop] != 0

    return get


def _code_bitsets(codes: np.ndarray, k: int) -> np.ndarray:
    """``(k, words)`` bitsets of the one-hot matrix of class indices ``codes``."""
    classes = np.arange(k)
    return _column_bitsets(lambda s, e: codes[s:e, None] == classes[None, :], len(codes), k)


def _containment(colbits: np.ndarray, idx: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """``(K, words)`` bitsets of the instances containing each combination.

    ``idx`` holds each combination's attribute columns, left-aligned and padded
    (``K x L``); ``sizes`` its lengths. One vectorized AND per position.
    """
    bits = colbits[idx[:, 0]]
    for j in range(1, idx.shape[1]):
        sel = np.flatnonzero(sizes > j)
        if sel.size == len(sizes):
            bits &= colbits[idx[:, j]]
        elif sel.size:
            bits[sel] &= colbits[idx[sel, j]]
    return bits


def _chunks(n_items: int, words: int):
    step = max(1, _CHUNK_BYTES // (8 * max(words, 1)))
    for start in range(0, n_items, step):
        yield slice(start, min(n_items, start + step))


def _joint_counts(colbits: np.ndarray, groupbits: Sequence[np.ndarray], idx, sizes) -> list[np.ndarray]:
    """For each group bitset table ``(G, words)``: the ``G x K`` counts #(g, m ⊆ S).

    Group tables are one-hot (every row in exactly one group), so the last
    group's count is the total minus the others: one popcount saved per table.
    """
    k = len(sizes)
    out = [np.zeros((gb.shape[0], k), dtype=np.int64) for gb in groupbits]
    for sl in _chunks(k, colbits.shape[1]):
        bits = _containment(colbits, idx[sl], sizes[sl])
        total = _popcount(bits)
        for res, gb in zip(out, groupbits):
            rest = total.copy()
            for g in range(gb.shape[0] - 1):
                res[g, sl] = _popcount(bits & gb[g])
                rest -= res[g, sl]
            res[-1, sl] = rest
    return out


def _column_joint_counts(colbits: np.ndarray, member: np.ndarray, weights: np.ndarray | None, idx: np.ndarray,
                        sizes: np.ndarray) -> np.ndarray:
    """``G x K`` counts ``Σ_i w_i [m ⊆ S_i][member_ig]`` for a 0/1 membership matrix (a row in any number of groups).

    Unweighted: popcounts of the containment bitsets ANDed with each column's
    bitset (int64). Weighted: the containment bits of a few combinations,
    unpacked, times the weighted membership (float64).
    """
    n, n_groups = member.shape
    k = len(sizes)
    if weights is None:
        groupbits = _column_bitsets(lambda s, e: member[s:e], n, n_groups)
        out = np.zeros((n_groups, k), dtype=np.int64)
        for sl in _chunks(k, colbits.shape[1]):
            bits = _containment(colbits, idx[sl], sizes[sl])
            for g in range(n_groups):
                out[g, sl] = _popcount(bits & groupbits[g])
        return out
    weighted = member * np.asarray(weights, dtype=np.float64)[:, None]
    out = np.zeros((n_groups, k), dtype=np.float64)
    step = max(1, (4 * _CHUNK_BYTES) // (8 * max(n, 1)))
    for start in range(0, k, step):
        sl = slice(start, min(k, start + step))
        bits = _containment(colbits, idx[sl], sizes[sl])
        rows = np.unpackbits(bits.view(np.uint8), axis=1, count=n, bitorder="little").astype(np.float64)
        out[:, sl] = (rows @ weighted).T
    return out


_MAX_PLANES = 16  # integer weights below 2**16 are counted by bit planes


def _weight_planes(weights: np.ndarray) -> np.ndarray | None:
    """``(n, B)`` bit planes of small integer weights (``w = Σ_b 2^b planes[:, b]``), else None."""
    r = np.rint(weights)
    if not np.array_equal(r, weights) or r.max() >= 2**_MAX_PLANES:
        return None
    wi = r.astype(np.int64)
    bits = max(1, int(wi.max()).bit_length())
    return ((wi[:, None] >> np.arange(bits)[None, :]) & 1).astype(bool)


class _Grouping:
    """Group codes ready for :meth:`counts`: their bitsets, or, with sample weights, what the weighted sums need.

    Built once per set of rows and reused for every table counted on them
    (true and predicted tasks).
    """

    def __init__(self, codes_list: Sequence[np.ndarray], n_groups: int, weights: np.ndarray | None = None) -> None:
        self.n_groups, self.n_tables, self.weights = n_groups, len(codes_list), weights
        # exactly one of these is set: bitsets (no weights), bit planes (small integer weights), weighted one-hot
        self.bits: list[np.ndarray] | None = None
        self.planes: list[np.ndarray] | None = None
        self.onehot: np.ndarray | None = None
        if weights is None:
            self.bits = [_code_bitsets(c, n_groups) for c in codes_list]
            return
        planes = _weight_planes(weights)
        if planes is not None:  # bitsets of (group, bit plane of the weight)
            n, n_planes, groups = len(weights), planes.shape[1], np.arange(n_groups)
            self.n_planes = n_planes
            self.planes = [
                _column_bitsets(lambda s, e, c=codes: ((c[s:e, None] == groups[None, :])[:, :, None]
                                                       & planes[s:e, None, :]).reshape(e - s, -1),
                                n, n_groups * n_planes)
                for codes in codes_list
            ]
            return
        rows = np.arange(len(weights))
        self.onehot = np.zeros((len(weights), n_groups * len(codes_list)))  # (n, tables x groups): w_i [g_i = g]
        for r, codes in enumerate(codes_list):
            self.onehot[rows, r * n_groups + codes] = weights

    def counts(self, colbits: np.ndarray, idx: np.ndarray, sizes: np.ndarray) -> list[np.ndarray]:
        """``#(g, m ⊆ S)`` per codes array: popcounts (int64), or sums of weights (float64)."""
        if self.bits is not None:
            return _joint_counts(colbits, self.bits, idx, sizes)
        k, g = len(sizes), self.n_groups
        out = [np.zeros((g, k), dtype=np.float64) for _ in range(self.n_tables)]
        if self.planes is not None:  # small integer weights: exact popcounts per bit plane, scaled by 2^b
            scale = 2.0 ** np.arange(self.n_planes)
            for sl in _chunks(k, colbits.shape[1]):
                bits = _containment(colbits, idx[sl], sizes[sl])
                for res, table in zip(out, self.planes):
                    for j in range(table.shape[0]):
                        group, plane = divmod(j, self.n_planes)
                        res[group, sl] += _popcount(bits & table[j]) * scale[plane]
            return out
        assert self.onehot is not None  # the weights are neither absent nor small integers (__init__)
        n = self.onehot.shape[0]  # other weights: unpack a few combinations' bits, one product (BLAS)
        step = max(1, (4 * _CHUNK_BYTES) // (8 * max(n, 1)))
        for start in range(0, k, step):
            sl = slice(start, min(k, start + step))
            bits = _containment(colbits, idx[sl], sizes[sl])
            member = np.unpackbits(bits.view(np.uint8), axis=1, count=n, bitorder="little").astype(np.float64)
            prod = member @ self.onehot  # (combinations, tables x groups)
            for r, res in enumerate(out):
                res[:, sl] = prod[:, r * g:(r + 1) * g].T
        return out


def _weighted_joint_counts(colbits: np.ndarray, codes_list: Sequence[np.ndarray], n_groups: int,
                           weights: np.ndarray, idx: np.ndarray, sizes: np.ndarray) -> list[np.ndarray]:
    """For each array of group codes: the ``G x K`` weighted counts ``Σ_i w_i [m ⊆ S_i][g_i = g]`` (float64).

    Small integer weights: popcounts of the containment bitsets ANDed with
    the bitsets of (group, bit plane of the weight), scaled by ``2^b``
    (exact). Other weights: the containment bits of a few combinations are
    unpacked and multiplied with the weighted one-hot of the groups.
    """
    return _Grouping(codes_list, n_groups, weights).counts(colbits, idx, sizes)


def _counts_by_group(colbits: np.ndarray, codes_list: Sequence[np.ndarray], n_groups: int,
                     weights: np.ndarray | None, idx: np.ndarray, sizes: np.ndarray) -> list[np.ndarray]:
    """``#(g, m ⊆ S)`` for each array of group codes: popcounts (int64), or weighted sums (float64)."""
    return _Grouping(codes_list, n_groups, weights).counts(colbits, idx, sizes)


def _group_totals(codes: np.ndarray, n_groups: int, weights: np.ndarray | None) -> np.ndarray:
    """``#g`` (int64), or the total weight of every group (float64)."""
    if weights is None:
        return np.bincount(codes, minlength=n_groups).astype(np.int64)
    return np.bincount(codes, weights=weights, minlength=n_groups).astype(np.float64)


# --------------------------------------------------------------------------- #
# candidate combinations
# --------------------------------------------------------------------------- #
def _padded(sets: Sequence[np.ndarray] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Boolean ``K x A`` membership matrix -> (padded index array, sizes)."""
    member = np.asarray(sets, dtype=bool)
    sizes = member.sum(axis=1).astype(np.int64)
    width = max(1, int(sizes.max()) if len(sizes) else 1)
    idx = np.zeros((len(sizes), width), dtype=np.intp)
    rows, cols = np.nonzero(member)
    pos = np.arange(len(rows)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    idx[rows, pos] = cols
    return idx, sizes


def _canonical_order(idx: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Order combinations by size, then lexicographically by attribute index."""
    keys = [idx[:, j] for j in range(idx.shape[1] - 1, -1, -1)] + [sizes]
    return np.lexsort(keys)


def _observed_sets(train: LabelMatrix, min_size: int, max_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct exact attribute sets of the training rows with size in range."""
    n, a = train.n_rows, train.n_classes
    get = _label_blocks(train)
    words = _n_words(a)
    rows = np.zeros((n, words * 8), dtype=np.uint8)  # each row's set as `words` uint64
    step = max(1, _CHUNK_BYTES // max(a, 1))
    for start in range(0, n, step):
        stop = min(n, start + step)
        packed = np.packbits(get(start, stop), axis=1, bitorder="little")
        rows[start:stop, : packed.shape[1]] = packed
    keys = rows.view(np.uint64)
    if words == 1:
        distinct = np.unique(keys[:, 0])[:, None]
    else:  # lexsort the words (much faster than np.unique(axis=0) on void rows)
        order = np.lexsort(keys.T[::-1])
        sorted_keys = keys[order]
        new = np.ones(n, dtype=bool)
        new[1:] = (sorted_keys[1:] != sorted_keys[:-1]).any(axis=1)
        distinct = sorted_keys[new]
    distinct_bytes = np.ascontiguousarray(distinct).view(np.uint8)
    member = np.unpackbits(distinct_bytes, axis=1, count=a, bitorder="little").astype(bool)
    return _sized_combinations(member, min_size, max_size)


def _sized_combinations(member: np.ndarray, min_size: int, max_size: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct attribute sets (rows of ``member``) with size in range, in canonical order."""
    sizes = member.sum(axis=1)
    keep = (sizes >= min_size) & (sizes <= max_size)
    if not keep.any():
        raise ValueError(
            f"combinations='observed': no training instance has an attribute set of size within "
            f"[min_size={min_size}, max_size={max_size}] (the training sets have sizes "
            f"{int(sizes.min())}..{int(sizes.max())})"
        )
    idx, sz = _padded(member[keep])
    order = _canonical_order(idx, sz)
    return idx[order], sz[order]


def _row_support(colbits: np.ndarray, idx: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Number of rows containing each combination: popcounts of ANDed column bitsets."""
    out = np.empty(len(sizes), dtype=np.int64)
    for sl in _chunks(len(sizes), colbits.shape[1]):
        out[sl] = _popcount(_containment(colbits, idx[sl], sizes[sl]))
    return out


def _frequent_sets(
    colbits: np.ndarray,
    min_size: int,
    max_size: int,
    min_support: int,
    max_combinations: int,
    support: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Apriori: every attribute set of size in range contained in ≥ ``min_support`` rows.

    Level k+1 candidates join two frequent k-sets that share their first k−1
    attributes; a candidate with an infrequent k-subset is pruned. Never
    enumerates all 2^|A| sets. ``support(idx, sizes)`` gives the support of
    each candidate (default: :func:`_row_support`, rows are the bitset
    columns; the streaming accumulator passes a weighted one).
    """
    if support is None:
        support = functools.partial(_row_support, colbits)
    a = colbits.shape[0]
    singles = np.arange(a)[:, None]
    level = singles[support(singles, np.ones(a, dtype=np.int64)) >= min_support]  # frequent 1-sets, lexicographic
    found: list[np.ndarray] = []
    total = 0
    k = 1
    while True:
        if k >= min_size and len(level):
            found.append(level)
            total += len(level)
            if total > max_combinations:
                raise ValueError(
                    f"combinations='all' found more than max_combinations={max_combinations} "
                    f"combinations with min_support={min_support} (at size {k}); raise min_support, "
                    "lower max_size, or raise max_combinations"
                )
        if k >= max_size or len(level) < 2:
            break
        # the guard fires on the count, before the candidates are allocated (20k attributes: 2e8 pairs, 1.5 GiB)
        cand = _join_level(level, limit=20 * max_combinations if k == 1 else _MAX_CANDIDATE_CELLS // (k + 1),
                           what=f"combinations='all': more than {{}} candidate combinations of size {k + 1} with "
                                f"min_support={min_support}; raise min_support or lower max_size")
        if len(cand) and k >= 2:
            cand = _prune(cand, level, a)
        if len(cand) > 20 * max_combinations:
            raise ValueError(
                f"combinations='all': {len(cand)} candidate combinations of size {k + 1} with "
                f"min_support={min_support}; raise min_support or lower max_size"
            )
        level = cand[support(cand, np.full(len(cand), k + 1)) >= min_support]
        k += 1
    if not found:
        raise ValueError(
            f"combinations='all': no combination of size within [min_size={min_size}, "
            f"max_size={max_size}] is contained in at least min_support={min_support} training instances"
        )
    width = max(f.shape[1] for f in found)
    idx = np.zeros((total, width), dtype=np.intp)
    sizes = np.empty(total, dtype=np.int64)
    pos = 0
    for f in found:
        idx[pos : pos + len(f), : f.shape[1]] = f
        sizes[pos : pos + len(f)] = f.shape[1]
        pos += len(f)
    return idx, sizes


_MAX_CANDIDATE_CELLS = 1 << 27
"""Most attribute indices of the candidates of one Apriori level before pruning (1 GiB of intp)."""


def _join_level(level: np.ndarray, limit: int | None = None, what: str = "") -> np.ndarray:
    """Candidates of size k+1 from lexicographically sorted frequent k-sets (prefix join).

    Every set is paired with each later set of its prefix group; fully
    vectorized, and the candidates come out in lexicographic order. More than
    ``limit`` candidates: ``ValueError(what.format(limit))`` before any is
    allocated.
    """
    n, k = level.shape
    if k == 1:
        group_end = np.full(n, n)
    else:
        prefix = level[:, :-1]
        new = np.ones(n, dtype=bool)
        new[1:] = (prefix[1:] != prefix[:-1]).any(axis=1)
        starts = np.flatnonzero(new)
        ends = np.append(starts[1:], n)
        group_end = np.repeat(ends, ends - starts)
    partners = group_end - np.arange(n) - 1
    total = int(partners.sum())
    if limit is not None and total > limit:
        raise ValueError(what.format(f"{limit:,}") + f" ({total:,} candidates)")
    if total == 0:
        return np.empty((0, k + 1), dtype=np.intp)
    left = np.repeat(np.arange(n), partners)
    right = left + 1 + (np.arange(total) - np.repeat(np.cumsum(partners) - partners, partners))
    return np.column_stack([level[left], level[right, -1]])


def _prune(cand: np.ndarray, level: np.ndarray, n_attrs: int) -> np.ndarray:
    """Drop candidates with a k-subset that is not frequent (the Apriori property)."""
    k = level.shape[1]
    if float(n_attrs) ** k >= 2.0**62:  # codes would overflow: skip the (optional) pruning
        return cand
    base = np.int64(n_attrs) ** np.arange(k - 1, -1, -1, dtype=np.int64)
    known = np.sort(level.astype(np.int64) @ base)
    ok = np.ones(len(cand), dtype=bool)
    for drop in range(k - 1):  # dropping either of the last two gives a joined parent
        sub = np.delete(cand, drop, axis=1).astype(np.int64) @ base
        pos = np.searchsorted(known, sub)
        ok &= (pos < len(known)) & (known[np.minimum(pos, len(known) - 1)] == sub)
    return cand[ok]


# --------------------------------------------------------------------------- #
# count table
# --------------------------------------------------------------------------- #
@dataclass(frozen=True, eq=False)
class MultiAttributeCounts:
    r"""Containment counts of a fixed set of attribute combinations.

    Every array is indexed ``[attr class, combination]`` (``G x M``, the
    paper's g and m) or by attr class. All entries are exact integer counts. Tables with the same classes,
    combinations and roles add (``a + b``), so data split in batches or
    partitions can be counted separately once the combinations are fixed.

    Attributes
    ----------
    attr_classes, task_classes : tuple
        Class names of the protected attribute (the paper's groups G) and of
        the task labels (the paper's attributes).
    combinations : tuple of tuple
        The combinations M, each a tuple of task names (sorted by task index).
    n_train, train_attr, train_joint : int or float, ndarray, ndarray
        Training ground truth: rows, #g, and #(g, m ⊆ S).
    n_test, test_attr, test_joint : int or float, ndarray, ndarray
        Test ground truth: rows, #g, and #(g, m ⊆ S).
    pred_attr : ndarray or None
        #ĝ on the test set (when ``attr_pred`` was given).
    joint_g_mhat : ndarray or None
        #(g, m ⊆ Ŝ): true attr, predicted tasks (for G→M).
    joint_ghat_m : ndarray or None
        #(ĝ, m ⊆ S): predicted attr, true tasks (for M→G).
    joint_ghat_mhat : ndarray or None
        #(ĝ, m ⊆ Ŝ): both predicted (for Multi_MALS).
    weighted : bool, default False
        Whether the rows were weighted (``sample_weight``): every count is
        then a sum of weights, ``n_train``/``n_test`` may be non-integers.
    rows, train_rows : RowFilter or None
        What the row layer did to the test and the training rows before
        counting (``missing=``, rows dropped, grouped, zero weights);
        ``None`` for a hand-built table.

    Notes
    -----
    Every multi-attribute metric is a function of these counts alone, e.g. the
    bias score :math:`b(m, g) = \#(m \subseteq S, g) / \sum_{g'} \#(m \subseteq S, g')`
    is ``train_joint / train_joint.sum(axis=0)`` (:ref:`def-multi`).

    References
    ----------
    .. [1] D. Zhao, J. T. A. Andrews, A. Xiang. "Men Also Do Laundry:
       Multi-Attribute Bias Amplification". ICML 2023, Eq. 1-3.

    Examples
    --------
    >>> import pandas as pd
    >>> from biasamp import multi_bias_amp
    >>> attr = [0, 0, 0, 0, 1, 1, 1, 1]
    >>> task = pd.DataFrame([[1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1],
    ...                      [1, 1, 0], [1, 1, 0], [0, 0, 1], [0, 0, 0]], columns=list("abc"))
    >>> task_pred = task.assign(b=[0, 1, 0, 0, 1, 1, 0, 0])
    >>> counts = multi_bias_amp(attr, task, task_pred=task_pred).counts
    >>> counts.combinations
    (('a',), ('b',), ('c',), ('a', 'b'))
    >>> counts.train_joint.tolist()  # #(g, m ⊆ S), rows g = 0, 1
    [[2, 2, 1, 1], [2, 2, 1, 2]]
    """

    attr_classes: tuple
    task_classes: tuple
    combinations: tuple
    n_train: int | float
    train_attr: np.ndarray
    train_joint: np.ndarray
    n_test: int | float
    test_attr: np.ndarray
    test_joint: np.ndarray
    pred_attr: np.ndarray | None = None
    joint_g_mhat: np.ndarray | None = None
    joint_ghat_m: np.ndarray | None = None
    joint_ghat_mhat: np.ndarray | None = None
    weighted: bool = False
    rows: RowFilter | None = None
    train_rows: RowFilter | None = None

    _ARRAYS = ("train_attr", "train_joint", "test_attr", "test_joint",
               "pred_attr", "joint_g_mhat", "joint_ghat_m", "joint_ghat_mhat")

    def __post_init__(self) -> None:
        """Check that a (possibly hand-built) table is consistent; every error names the field."""
        for what in ("attr_classes", "task_classes", "combinations"):
            value = getattr(self, what)
            if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
                raise TypeError(f"MultiAttributeCounts: {what} must be a tuple, got {type(value).__name__}")
            object.__setattr__(self, what, tuple(tuple(c) if what == "combinations" else c for c in value))
            if len(set(map(repr, getattr(self, what)))) != len(value):
                raise ValueError(f"MultiAttributeCounts: {what} has duplicates")
        known = set(map(repr, self.task_classes))
        for c in self.combinations:
            if not c or any(repr(name) not in known for name in c):
                raise ValueError(f"MultiAttributeCounts: combination {c!r} is empty or names a task outside "
                                 f"task_classes {list(self.task_classes)[:20]!r}")
        ng, nm = len(self.attr_classes), len(self.combinations)
        for what in ("n_train", "n_test"):
            v = getattr(self, what)
            if self.weighted and isinstance(v, numbers.Real) and not isinstance(v, bool):
                total = np.asarray(v)  # numbers.Real declares no comparison with int nor a numpy conversion
                if not (np.isfinite(total) and total >= 0):
                    raise ValueError(f"MultiAttributeCounts: {what} must be a finite non-negative total weight, "
                                     f"got {v!r}")
            elif isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 0:
                raise TypeError(f"MultiAttributeCounts: {what} must be a non-negative integer (a real number "
                                f"with weighted=True), got {v!r}")
        for what in self._ARRAYS:
            v = getattr(self, what)
            if v is None:
                if what in ("train_attr", "train_joint", "test_attr", "test_joint"):
                    raise TypeError(f"MultiAttributeCounts: {what} is required")
                continue
            arr = np.asarray(v)
            shape = (ng,) if what.endswith("_attr") else (ng, nm)
            if arr.shape != shape:
                raise ValueError(f"MultiAttributeCounts: {what} has shape {arr.shape}, expected {shape} "
                                 "(attr classes x combinations)")
            if arr.dtype.kind not in "biuf" or (arr.dtype.kind == "f" and not np.isfinite(arr).all()) \
                    or (arr < 0).any():
                raise ValueError(f"MultiAttributeCounts: {what} must hold finite non-negative counts")
            object.__setattr__(self, what, arr)
        for prefix, n in (("train", self.n_train), ("test", self.n_test)):
            attr, joint = getattr(self, f"{prefix}_attr"), getattr(self, f"{prefix}_joint")
            if _greater(_as_count(attr.sum()), _as_count(n)):
                raise ValueError(f"MultiAttributeCounts: {prefix}_attr sums to {attr.sum()} > n_{prefix} = {n}")
            if _greater(_as_count(joint), _as_count(attr)[:, None]).any():
                raise ValueError(f"MultiAttributeCounts: {prefix}_joint exceeds {prefix}_attr (a count #(g, m) "
                                 "cannot exceed #g)")

    @property
    def sizes(self) -> np.ndarray:
        """``|m|`` of every combination."""
        return np.array([len(m) for m in self.combinations], dtype=np.int64)

    def __add__(self, other: MultiAttributeCounts) -> MultiAttributeCounts:
        if not isinstance(other, MultiAttributeCounts):
            return NotImplemented
        for what in ("attr_classes", "task_classes", "combinations"):
            if getattr(self, what) != getattr(other, what):
                raise ValueError(f"cannot add multi-attribute counts with different {what}")
        optional: dict[str, np.ndarray | None] = {}
        for name in self._ARRAYS[4:]:  # the prediction tables; the four ground-truth ones are required
            x, y = getattr(self, name), getattr(other, name)
            if (x is None) != (y is None):
                raise ValueError(f"cannot add multi-attribute counts: only one of them has {name}")
            optional[name] = None if x is None else x + y
        return MultiAttributeCounts(
            self.attr_classes, self.task_classes, self.combinations,
            n_train=self.n_train + other.n_train, n_test=self.n_test + other.n_test,
            train_attr=self.train_attr + other.train_attr, train_joint=self.train_joint + other.train_joint,
            test_attr=self.test_attr + other.test_attr, test_joint=self.test_joint + other.test_joint, **optional,
            weighted=self.weighted or other.weighted, rows=add_filters(self.rows, other.rows),
            train_rows=add_filters(self.train_rows, other.train_rows),
        )

    def __repr__(self) -> str:
        roles = [r for r in ("joint_g_mhat", "joint_ghat_m", "joint_ghat_mhat") if getattr(self, r) is not None]
        extra = ", weighted" if self.weighted else ""
        return (
            f"MultiAttributeCounts(n_train={self.n_train:g}, n_test={self.n_test:g}, "
            f"attr_classes={list(self.attr_classes)!r}, {len(self.task_classes)} task classes, "
            f"{len(self.combinations)} combinations, predicted roles={roles!r}{extra})"
        )


# --------------------------------------------------------------------------- #
# results
# --------------------------------------------------------------------------- #
@dataclass(frozen=True, eq=False, repr=False)
class MultiMetricResult(ResultMixin):
    r"""One multi-attribute metric: Multi_MALS, Multi G→M or Multi M→G.

    Attributes
    ----------
    metric : {"Multi_MALS", "Multi_G->M", "Multi_M->G"}
    value : float
        The paper's headline, from absolute differences: ``(1/|M|) Σ |Δ_gm|``
        for Multi_MALS, the mean of ``|Δ_gm|`` over defined pairs for Multi→.
    raw : float
        The signed version: ``(1/|M|) Σ Δ_gm`` for Multi_MALS, the mean of
        ``y_gm Δ_gm`` for Multi→ (equal to BiasAmp_MALS / BiasAmp→ when M holds
        exactly the single attributes).
    variance : float
        Population variance (ddof=0) of ``Δ_gm`` over the defined pairs.
    table : pandas.DataFrame
        One row per (attr class g, combination m), see :func:`multi_bias_amp`.
    n_combinations : int
        ``|M|``.
    n_pairs : int
        Defined (attr class, combination) pairs the mean/variance run over.
    n_undefined : int
        Pairs left out because a term was undefined (:ref:`def-undefined`).
    undefined : bool
        True when every pair is undefined: the metric is then undefined,
        ``value``/``raw``/``variance`` are NaN and ``reason`` says why; the
        other metrics of the call are still returned.
    reason : str or None
        Why the metric is undefined (``None`` when it is defined).

    Notes
    -----
    Multi_MALS: :math:`\text{value} = \frac{1}{|M|}\sum_{g,m}|\Delta_{gm}|`
    with :math:`\Delta_{gm} = \mathbb 1[b_\text{train}(m,g) > 1/|G|]
    (b_\text{pred}(m,g) - b_\text{train}(m,g))`; Multi→: the mean of
    :math:`|\Delta_{gm}|` over the defined pairs (:ref:`def-multi`).
    ``to_frame()`` is ``table``.

    References
    ----------
    .. [1] D. Zhao, J. T. A. Andrews, A. Xiang. "Men Also Do Laundry:
       Multi-Attribute Bias Amplification". ICML 2023, Eq. 1-3.

    Examples
    --------
    >>> import pandas as pd
    >>> from biasamp import multi_bias_amp
    >>> attr = [0, 0, 0, 0, 1, 1, 1, 1]
    >>> task = pd.DataFrame([[1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1],
    ...                      [1, 1, 0], [1, 1, 0], [0, 0, 1], [0, 0, 0]], columns=list("abc"))
    >>> task_pred = task.assign(b=[0, 1, 0, 0, 1, 1, 0, 0])
    >>> g_to_m = multi_bias_amp(attr, task, task_pred=task_pred, attr_train=attr, task_train=task).g_to_m
    >>> g_to_m
    Multi_G->M = +0.0625 (raw +0.0312, variance 0.01172; 4 combinations)
    >>> g_to_m.top(2)[["attr", "combination", "delta"]]
      attr combination  delta
    1    0        (b,)  -0.25
    3    0      (a, b)  -0.25
    """

    metric: str
    value: float
    raw: float
    variance: float
    table: pd.DataFrame
    n_combinations: int
    n_pairs: int
    n_undefined: int
    undefined: bool = False
    reason: str | None = None

    @property
    def _delta_column(self) -> str:
        return "contribution" if self.metric == "Multi_MALS" else "delta"

    def top(self, k: int = 10) -> pd.DataFrame:
        """The ``k`` defined (attr class, combination) rows with the largest ``|Δ_gm|``.

        ``Δ_gm`` is ``contribution`` (indicator x change of bias score) for
        Multi_MALS and ``delta`` for Multi→: the terms of ``value``.
        """
        return top_rows(self.table, self._delta_column, k)

    def by_size(self) -> pd.DataFrame:
        """``value`` (mean ``|Δ|``) and ``raw`` restricted to each combination size ``|m|``."""
        t = self.table[~self.table["undefined"]]
        d = t[self._delta_column]
        signed = d if self.metric == "Multi_MALS" else t["contribution"]
        frame = pd.DataFrame({"size": t["size"], "abs": d.abs(), "raw": signed, "combination": t["combination"]})
        grouped = frame.groupby("size")
        if self.metric == "Multi_MALS":  # normalised by the number of combinations of that size
            n_comb = grouped["combination"].nunique()
            out = pd.DataFrame({"value": grouped["abs"].sum() / n_comb, "raw": grouped["raw"].sum() / n_comb})
        else:
            out = pd.DataFrame({"value": grouped["abs"].mean(), "raw": grouped["raw"].mean()})
        out["n_combinations"] = grouped["combination"].nunique()
        return out

    def __repr__(self) -> str:
        if self.undefined:
            return f"{self.metric} = undefined: {self.reason}"
        extra = f", {self.n_undefined} undefined" if self.n_undefined else ""
        return (
            f"{self.metric} = {fmt(self.value)} (raw {fmt(self.raw)}, variance {self.variance:.4g}; "
            f"{self.n_combinations} combinations{extra})"
        )


@dataclass(frozen=True, eq=False, repr=False)
class MultiBiasAmpResult(ResultMixin):
    r"""Result of :func:`multi_bias_amp`.

    Attributes
    ----------
    mals, g_to_m, m_to_g : MultiMetricResult or None
        Multi_MALS, Multi G→M and Multi M→G; ``None`` where the predictions
        they need were not given.
    combinations : tuple of tuple
        The kept combinations M (tuples of task names).
    selection : dict
        How M was chosen: ``mode``, ``min_size``, ``max_size``,
        ``min_support``, ``support``, ``n_candidates`` and how many candidates each filter
        removed (``removed_min_support``, ``removed_not_in_test``).
    train_source : {"train", "test"}
        Where the training statistics came from (the test ground truth when
        no training set was given).
    counts : MultiAttributeCounts
        The count table every metric was computed from.
    rows, train_rows : RowFilter or None
        What happened to the test and the training rows before counting (the
        ``missing=`` choice, rows given, dropped, grouped or of weight 0).
    weighted : bool
        Whether sample weights were given (every count is a sum of weights).
    predictions : str
        What the probability policy did to the predictions.
    small_groups : tuple
        Groups left out of the headlines (fewer than ``min_group_size`` test
        members).
    cross_fit : bool
        Whether the signs ``y_gm`` and Multi_MALS's indicator were
        cross-fitted over two folds of the test rows (no training set;
        docs/definitions.md, "No training set"). Multi→'s ``raw`` is then the
        mean of the cross-fitted ``y·Δ`` (its ``value`` and ``variance``, which
        use no sign, stay on every row); Multi_MALS's ``Δ_gm`` is the
        cross-fitted ``contribution`` (the mean of the two ways
        ``indicator_fold0 · (b_pred − b_train)`` on fold 1 and
        ``indicator_fold1 · (b_pred − b_train)`` on fold 0), and its value,
        raw and variance come from it. The tables add ``y_fold0``,
        ``y_fold1`` (Multi→) or
        ``indicator_fold0``, ``indicator_fold1`` (Multi_MALS).

    Notes
    -----
    There is no single ``value``: the paper defines three metrics
    (Multi_MALS, and Multi→ in the two directions G→M and M→G), each with
    its own ``.value``, e.g.
    :math:`\text{Multi}_\text{MALS} = \frac{1}{|M|}\sum_{g,m}|\Delta_{gm}|`
    (:ref:`def-multi`). ``to_frame()`` stacks their tables.

    References
    ----------
    .. [1] D. Zhao, J. T. A. Andrews, A. Xiang. "Men Also Do Laundry:
       Multi-Attribute Bias Amplification". ICML 2023, Eq. 1-3.

    Examples
    --------
    >>> import pandas as pd
    >>> from biasamp import multi_bias_amp
    >>> attr = [0, 0, 0, 0, 1, 1, 1, 1]
    >>> task = pd.DataFrame([[1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1],
    ...                      [1, 1, 0], [1, 1, 0], [0, 0, 1], [0, 0, 0]], columns=list("abc"))
    >>> task_pred = task.assign(b=[0, 1, 0, 0, 1, 1, 0, 0])
    >>> res = multi_bias_amp(attr, task, attr_pred=attr, task_pred=task_pred, attr_train=attr, task_train=task)
    >>> round(res.mals.value, 4), round(res.g_to_m.value, 4), round(res.m_to_g.value, 4)
    (0.0833, 0.0625, 0.0)
    >>> sorted(res.to_frame()["metric"].unique())
    ['Multi_G->M', 'Multi_M->G', 'Multi_MALS']
    """

    mals: MultiMetricResult | None
    g_to_m: MultiMetricResult | None
    m_to_g: MultiMetricResult | None
    combinations: tuple
    selection: dict
    train_source: str
    counts: MultiAttributeCounts
    rows: RowFilter | None = None
    train_rows: RowFilter | None = None
    weighted: bool = False
    predictions: str = "hard"
    small_groups: tuple = ()  # groups left out of the headlines (fewer than min_group_size)
    cross_fit: bool = False
    binary_task: str | None = None  # how a binary task was read (None: not binary), as DirectionalBiasAmpResult's

    @property
    def undefined_reasons(self) -> dict:
        """Metrics undefined for every pair, with the reason."""
        return {r.metric: r.reason for r in (self.mals, self.g_to_m, self.m_to_g) if r is not None and r.undefined}

    def to_frame(self) -> pd.DataFrame:
        """The three per-(attr class, combination) tables stacked, with a ``metric`` column.

        ``frame.attrs["undefined_reasons"]`` names the undefined metrics.
        """
        parts = [r.table.assign(metric=r.metric) for r in (self.mals, self.g_to_m, self.m_to_g) if r is not None]
        frame = pd.concat(parts, ignore_index=True)
        frame.attrs["undefined_reasons"] = self.undefined_reasons
        return frame

    def to_dict(self) -> dict:
        out = super().to_dict()
        out.pop("counts")  # the tables already hold every count
        return out

    def __repr__(self) -> str:
        lines = ["MultiBiasAmpResult("]
        for r in (self.mals, self.g_to_m, self.m_to_g):
            if r is not None:
                lines.append(f"  {r!r},")
        lines += _rows_lines(self.rows, self.train_rows, self.weighted)
        if self.binary_task is not None:
            lines.append(f"  binary task: {self.binary_task},")
        s = self.selection
        lines.append(
            f"  combinations={s['mode']!r}: {len(self.combinations)} kept of {s['n_candidates']} candidates, "
            f"sizes {s['min_size']}..{s['max_size']}, min_support={s['min_support']}; "
            f"training statistics from: {self.train_source} ground truth"
            + ("" if self.train_source == "train" else f", {describe(self.cross_fit, 'test')}") + ")"
        )
        return "\n".join(lines)


# --------------------------------------------------------------------------- #
# pure functions of the count table
# --------------------------------------------------------------------------- #
def _frame(counts: MultiAttributeCounts, **columns: np.ndarray) -> pd.DataFrame:
    ng, nm = len(counts.attr_classes), len(counts.combinations)
    combos = np.empty(nm, dtype=object)
    combos[:] = list(counts.combinations)
    index = {
        "attr": np.repeat(np.array(counts.attr_classes, dtype=object), nm),
        "combination": np.tile(combos, ng),
        "size": np.tile(counts.sizes, ng),
    }
    data = {k: np.broadcast_to(v, (ng, nm)).ravel() for k, v in columns.items()}
    return pd.DataFrame({**index, **data})


def _mals(counts: MultiAttributeCounts, small: np.ndarray, left_out: np.ndarray) -> MultiMetricResult:
    n_groups, n_comb = len(counts.attr_classes), len(counts.combinations)
    joint = _as_count(counts.train_joint)
    col = joint.sum(axis=0)  # #(m ⊆ S) in train: > 0 for every kept m
    indicator = _greater(n_groups * joint, col[None, :])  # bias_train > 1/|G|, exactly in integers
    pp = counts.joint_ghat_mhat
    assert pp is not None  # the callers compute Multi_MALS only from a table with #(ĝ, m ⊆ Ŝ)
    pcol = pp.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        bias_train = joint / col[None, :]
        bias_pred = np.where(pcol[None, :] > 0, pp / pcol[None, :], np.nan)
    delta = bias_pred - bias_train
    undefined = indicator & (pcol[None, :] <= 0)
    contribution = np.where(indicator, delta, 0.0)
    contribution = np.where(undefined, np.nan, contribution)
    n_undefined = int(undefined.sum())
    reason = _MULTI_UNDEFINED["Multi_MALS"] if n_undefined == undefined.size else None
    _warn_undefined(n_undefined, undefined.size, "Multi_MALS")
    out = np.broadcast_to(left_out[:, None], undefined.shape)  # small groups: in the table, out of the headline
    defined = contribution[~undefined & ~out]
    table = _frame(
        counts, bias_train=bias_train, bias_pred=bias_pred, indicator=indicator, delta=delta,
        contribution=contribution, n_train=joint, n_train_comb=col[None, :], n_pred=pp,
        n_pred_comb=pcol[None, :], small=np.broadcast_to(small[:, None], undefined.shape), undefined=undefined,
    )
    if reason is not None:
        return MultiMetricResult("Multi_MALS", np.nan, np.nan, np.nan, table, n_comb, 0, n_undefined, True, reason)
    return MultiMetricResult(
        "Multi_MALS", float(np.abs(defined).sum() / n_comb), float(defined.sum() / n_comb),
        float(defined.var()), table, n_comb, int(defined.size), n_undefined,
    )


_MULTI_UNDEFINED = {
    "Multi_MALS": "every indicator-1 pair's combination is never predicted, so no b_pred(m, g) is defined",
    "G->M": "no attr class has a test member, so P(m | g) conditions on an empty event for every pair",
    "M->G": "no combination occurs in the test ground truth, so P(g | m) conditions on an empty event for every pair",
}


def _directional(counts: MultiAttributeCounts, direction: str, y: np.ndarray, small: np.ndarray,
                 left_out: np.ndarray) -> MultiMetricResult:
    both = counts.test_joint
    n_attr = counts.test_attr[:, None]
    n_comb = both.sum(axis=0)[None, :]
    if direction == "G->M":
        support = np.broadcast_to(n_attr, both.shape)
        predicted = counts.joint_g_mhat
    else:
        support = np.broadcast_to(n_comb, both.shape)
        predicted = counts.joint_ghat_m
    assert predicted is not None  # a direction is computed only from a table with its predictions
    undefined = support <= 0
    with np.errstate(invalid="ignore", divide="ignore"):
        p_true = np.where(undefined, np.nan, both / support)
        p_pred = np.where(undefined, np.nan, predicted / support)
    delta = p_pred - p_true
    contribution = y * delta + 0.0  # + 0.0 turns the -0.0 of y = -1 into 0.0
    n_undefined = int(undefined.sum())
    reason = _MULTI_UNDEFINED[direction] if n_undefined == undefined.size else None
    _warn_undefined(n_undefined, undefined.size, f"Multi_{direction}")
    out = np.broadcast_to(left_out[:, None], undefined.shape)  # small groups: in the table, out of the headline
    d, c = delta[~undefined & ~out], contribution[~undefined & ~out]
    table = _frame(
        counts, y=y, p_true=p_true, p_pred=p_pred, delta=delta, contribution=contribution,
        n_attr=n_attr, n_comb=n_comb, n_both=both, n_predicted=predicted,
        small=np.broadcast_to(small[:, None], undefined.shape), undefined=undefined,
    )
    if reason is not None:
        return MultiMetricResult(f"Multi_{direction}", np.nan, np.nan, np.nan, table, len(counts.combinations), 0,
                                 n_undefined, True, reason)
    return MultiMetricResult(
        f"Multi_{direction}", float(np.abs(d).mean()), float(c.mean()), float(d.var()),
        table, len(counts.combinations), int(d.size), n_undefined,
    )


def _train_sign(counts: MultiAttributeCounts) -> np.ndarray:
    """``y_gm = sign(n·#(g,m) − #g·#m)`` on the training counts (exact; :ref:`def-multi`)."""
    return sign_of(counts.n_train, counts.train_joint, counts.train_attr, counts.train_joint.sum(axis=0))


def _require_observed(counts: MultiAttributeCounts, *, split: bool) -> None:
    """``ValueError`` unless every combination of ``counts`` occurs in its training and test ground truth.

    ``split``: the counts of two folds of the test rows (their training side is their test side), so the
    message names the ground truth without saying which.
    """
    for part in ("train_joint", "test_joint"):
        absent = np.flatnonzero(np.asarray(getattr(counts, part)).sum(axis=0) <= 0)
        if not absent.size:
            continue
        names = [counts.combinations[i] for i in absent[:5]]
        if split:
            raise ValueError(f"counts.{part}: every combination of the count table must occur in the ground truth, "
                             f"but {absent.size} never do (e.g. {names!r})")
        where = "training" if part == "train_joint" else "test"
        raise ValueError(
            f"counts.{part}: every combination of the count table must occur in the {where} ground truth, "
            f"but {absent.size} never do{'es' if absent.size == 1 else ''} (e.g. {names!r})")


def _signs_and_groups(counts: MultiAttributeCounts, min_group_size: int,
                      include_small_groups: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The training signs ``y`` and the small-group rule on the test groups: ``(y, small, left_out)``, warned."""
    y = _train_sign(counts)
    n_groups = np.asarray(counts.test_attr, dtype=np.float64)
    small, left_out = small_groups(n_groups, check_min_group_size(min_group_size),
                                   check_include_small_groups(include_small_groups))
    warn_small_groups(small, left_out, counts.attr_classes, n_groups, min_group_size, include_small_groups,
                      "multi-attribute bias amplification")
    return y, small, left_out


def multi_from_counts(counts: MultiAttributeCounts, *, selection: dict | None = None,
                      train_source: str = "train", min_group_size: int = DEFAULT_MIN_GROUP_SIZE,
                      include_small_groups: bool = False) -> MultiBiasAmpResult:
    r"""Multi_MALS, Multi G→M and Multi M→G from a count table.

    Parameters
    ----------
    counts : MultiAttributeCounts
        Containment counts of the kept combinations. Every combination must
        occur in the training and the test ground truth.
    selection : dict, optional
        Recorded in the result (how the combinations were chosen).
    train_source : str, default "train"
        Recorded in the result.
    min_group_size, include_small_groups : int, bool
        Groups with fewer (weighted) test members (``counts.test_attr``) are
        small: their pairs stay in the tables, flagged ``small``, and out of
        every headline (:ref:`def-small-groups`).

    Returns
    -------
    MultiBiasAmpResult
        A metric whose predicted counts are absent is ``None``.

    Raises
    ------
    ValueError
        A table without combinations, a combination absent from the training
        or the test ground truth, no predicted counts, or every metric given
        undefined (every pair undefined).

    See Also
    --------
    multi_bias_amp : the same from labels, with the definitions.

    Notes
    -----
    The definitions of :func:`multi_bias_amp` (:ref:`def-multi`), computed
    from the containment counts alone, e.g.
    :math:`b(m, g) = \#(m \subseteq S, g) / \sum_{g'} \#(m \subseteq S, g')`.

    References
    ----------
    .. [1] D. Zhao, J. T. A. Andrews, A. Xiang. "Men Also Do Laundry:
       Multi-Attribute Bias Amplification". ICML 2023, Eq. 1-3.

    Examples
    --------
    Counts of two batches add; the metrics are rates, so doubling every
    count changes nothing.

    >>> from biasamp import multi_bias_amp, multi_from_counts
    >>> res = multi_bias_amp([0, 0, 1, 1], [[1, 1], [1, 0], [1, 1], [0, 1]],
    ...                      task_pred=[[1, 0], [1, 0], [1, 1], [1, 1]])
    >>> res.counts.test_joint.tolist()  # #(g, m) for m = {0}, {1}, {0, 1}
    [[2, 1, 1], [1, 2, 1]]
    >>> multi_from_counts(res.counts + res.counts).g_to_m.value == res.g_to_m.value
    True
    """
    if not isinstance(counts, MultiAttributeCounts):
        raise TypeError(f"counts must be a MultiAttributeCounts, got {type(counts).__name__}")
    if not counts.combinations:
        raise ValueError("counts holds no combination: the count table needs at least one kept combination")
    _require_observed(counts, split=False)
    y, small, left_out = _signs_and_groups(counts, min_group_size, include_small_groups)
    mals = _mals(counts, small, left_out) if counts.joint_ghat_mhat is not None else None
    g_to_m = _directional(counts, "G->M", y, small, left_out) if counts.joint_g_mhat is not None else None
    m_to_g = _directional(counts, "M->G", y, small, left_out) if counts.joint_ghat_m is not None else None
    return _assembled(counts, mals, g_to_m, m_to_g, selection, train_source, left_out)


def _assembled(counts: MultiAttributeCounts, mals: Any, g_to_m: Any, m_to_g: Any, selection: dict | None,
               train_source: str, left_out: np.ndarray, cross_fit: bool = False) -> MultiBiasAmpResult:
    """The result from its three metrics (None where not computed): the all-undefined error, the warnings and the
    selection record shared by the plug-in and the cross-fitted paths."""
    if mals is None and g_to_m is None and m_to_g is None:
        raise ValueError("the count table holds no predicted counts")
    given = [r for r in (mals, g_to_m, m_to_g) if r is not None]
    if all(r.undefined for r in given):
        raise _all_undefined_error([(r.metric, len(r.table), r.reason) for r in given])
    _warn_undefined_statistics({r.metric: r.reason for r in given if r.undefined})
    sel = dict(selection) if selection else {
        "mode": "given", "min_size": int(counts.sizes.min()), "max_size": int(counts.sizes.max()),
        "min_support": None, "n_candidates": len(counts.combinations),
        "removed_min_support": 0, "removed_not_in_test": 0,
    }
    return MultiBiasAmpResult(mals, g_to_m, m_to_g, counts.combinations, sel, train_source, counts, counts.rows,
                              counts.train_rows if train_source == "train" else None, counts.weighted,
                              small_groups=tuple(c for c, e in zip(counts.attr_classes, left_out) if e),
                              cross_fit=cross_fit)


# --------------------------------------------------------------------------- #
# cross-fitted signs (no training set)
# --------------------------------------------------------------------------- #
def _change(counts: MultiAttributeCounts, direction: str):
    """``(both, support, predicted, p_true, p_pred, delta, undefined)`` of Multi→ on one table (NaN: undefined)."""
    both = counts.test_joint
    if direction == "G->M":
        support = np.broadcast_to(counts.test_attr[:, None], both.shape)
        predicted = counts.joint_g_mhat
    else:
        support = np.broadcast_to(both.sum(axis=0)[None, :], both.shape)
        predicted = counts.joint_ghat_m
    undefined = support <= 0
    with np.errstate(invalid="ignore", divide="ignore"):
        p_true = np.where(undefined, np.nan, both / np.where(undefined, 1, support))
        p_pred = np.where(undefined, np.nan, predicted / np.where(undefined, 1, support))
    return both, support, predicted, p_true, p_pred, p_pred - p_true, undefined


def _directional_crossfit(counts: MultiAttributeCounts, folds: tuple, direction: str, y: np.ndarray, signs: tuple,
                          small: np.ndarray, left_out: np.ndarray) -> MultiMetricResult:
    """Multi→ with cross-fitted signs: ``raw`` from the folds, ``value`` and ``variance`` (no sign) from every row."""
    both, support, predicted, p_true, p_pred, delta, undefined = _change(counts, direction)
    *_, d0, u0 = _change(folds[0], direction)
    *_, d1, u1 = _change(folds[1], direction)
    contribution, undefined_cf = crossfit_mean(signs[0] * d1, signs[1] * d0, u1, u0)
    undefined = undefined | undefined_cf  # the same pairs: a pair with a member on every row has one in a fold
    n_undefined = int(undefined.sum())
    reason = _MULTI_UNDEFINED[direction] if n_undefined == undefined.size else None
    _warn_undefined(n_undefined, undefined.size, f"Multi_{direction}")
    out = np.broadcast_to(left_out[:, None], undefined.shape)
    d, c = delta[~undefined & ~out], contribution[~undefined & ~out]
    table = _frame(
        counts, y=y, p_true=p_true, p_pred=p_pred, delta=delta, contribution=contribution,
        y_fold0=signs[0], y_fold1=signs[1],
        n_attr=counts.test_attr[:, None], n_comb=both.sum(axis=0)[None, :], n_both=both, n_predicted=predicted,
        small=np.broadcast_to(small[:, None], undefined.shape), undefined=undefined,
    )
    if reason is not None:
        return MultiMetricResult(f"Multi_{direction}", np.nan, np.nan, np.nan, table, len(counts.combinations), 0,
                                 n_undefined, True, reason)
    return MultiMetricResult(f"Multi_{direction}", float(np.abs(d).mean()), float(c.mean()), float(d.var()),
                             table, len(counts.combinations), int(d.size), n_undefined)


def _mals_crossfit(counts: MultiAttributeCounts, folds: tuple, small: np.ndarray,
                   keep: tuple) -> MultiMetricResult:
    """Multi_MALS with a cross-fitted indicator: Δ̃_gm is the mean of the ways, value/raw/variance from it.

    ``keep`` = the groups each way counts (:func:`fold_keep`, on each fold's group sizes); a group counted by
    neither way is out of the headline, its pairs in the table."""
    n_groups, n_comb = len(counts.attr_classes), len(counts.combinations)
    joint = _as_count(counts.train_joint)
    col = joint.sum(axis=0)
    indicator = _greater(n_groups * joint, col[None, :])
    pp = counts.joint_ghat_mhat
    assert pp is not None  # the callers compute Multi_MALS only from a table with #(ĝ, m ⊆ Ŝ)
    pcol = pp.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        bias_train = joint / col[None, :]
        bias_pred = np.where(pcol[None, :] > 0, pp / np.where(pcol > 0, pcol, 1)[None, :], np.nan)
    i0, i1, contribution, undefined, _ = mals_crossfit_arrays(
        _as_count(folds[0].train_joint), _as_count(folds[1].train_joint), folds[0].joint_ghat_mhat,
        folds[1].joint_ghat_mhat, keep=(keep[0][:, None], keep[1][:, None]))
    n_undefined = int(undefined.sum())
    reason = _MULTI_UNDEFINED_CROSSFIT if n_undefined == undefined.size else None
    _warn_undefined(n_undefined, undefined.size, "Multi_MALS")
    out = np.broadcast_to((~keep[0] & ~keep[1])[:, None], undefined.shape)
    defined = contribution[~undefined & ~out]
    table = _frame(
        counts, bias_train=bias_train, bias_pred=bias_pred, indicator=indicator, delta=bias_pred - bias_train,
        contribution=contribution, indicator_fold0=i0, indicator_fold1=i1, n_train=joint,
        n_train_comb=col[None, :], n_pred=pp, n_pred_comb=pcol[None, :],
        small=np.broadcast_to(small[:, None], undefined.shape),
        small_fold0=np.broadcast_to(~keep[0][:, None], out.shape),
        small_fold1=np.broadcast_to(~keep[1][:, None], out.shape), undefined=undefined,
    )
    if reason is not None:
        return MultiMetricResult("Multi_MALS", np.nan, np.nan, np.nan, table, n_comb, 0, n_undefined, True, reason)
    return MultiMetricResult("Multi_MALS", float(np.abs(defined).sum() / n_comb), float(defined.sum() / n_comb),
                             float(defined.var()), table, n_comb, int(defined.size), n_undefined)


_MULTI_UNDEFINED_CROSSFIT = ("no (group, combination) pair has a defined term in either fold (an indicator-1 pair "
                             "needs its combination predicted in the other fold)")


_METRIC_ROLES = {"Multi_MALS": ("attr_pred", "task_pred"), "G->M": ("task_pred",), "M->G": ("attr_pred",)}


def multi_from_folds(folds: dict, *, counts: MultiAttributeCounts | None = None, selection: dict | None = None,
                     min_group_size: int = DEFAULT_MIN_GROUP_SIZE,
                     include_small_groups: bool = False) -> MultiBiasAmpResult:
    r"""Multi_MALS and Multi→ with cross-fitted signs, from the count tables of two folds of the test rows.

    Without a training set the "training" counts of each fold are its own
    test ground truth. For each way f ∈ {0, 1}, the signs
    :math:`y^{(f)}_{gm}` (and Multi_MALS's indicator) come from fold f and
    :math:`\Delta^{(1-f)}_{gm}` from the other fold; a pair's cross-fitted
    term is the mean of its defined ways (docs/definitions.md, "No training
    set"). Multi→: ``raw`` is the mean of :math:`\tfrac12(y^{(0)}\Delta^{(1)} +
    y^{(1)}\Delta^{(0)})`, while ``value`` (mean :math:`|\Delta|`) and
    ``variance``, which use no sign, are computed on every row. Multi_MALS:
    :math:`\tilde\Delta_{gm} = \tfrac12\sum_f \mathbb 1[b^{(f)}_\text{train} > 1/|G|]
    (b_\text{pred} - b_\text{train})^{(1-f)}`, and its value, raw and variance
    come from :math:`\tilde\Delta`.

    Parameters
    ----------
    folds : dict
        ``{"Multi_MALS": (fold0, fold1), "G->M": (...), "M->G": (...)}`` (a
        metric without predictions may be absent): each metric's two folds of
        the test rows, as :class:`MultiAttributeCounts` of the same
        combinations (training side = the fold's test ground truth). Each
        metric has its own split, drawn from the rows it reads (Multi_MALS:
        both predictions, G→M: ``task_pred``, M→G: ``attr_pred``), so that
        G→M equals BiasAmp→ A→T when M holds the single labels; a layer that
        splits once may pass the same folds for every metric.
    counts : MultiAttributeCounts, optional
        The counts of every row (default: the sum of the first metric's
        folds); its combinations must all occur in the test ground truth.
    selection : dict, optional
        Recorded in the result.
    min_group_size, include_small_groups : int, bool
        The small-group rule, on every row (:ref:`def-small-groups`).

    Returns
    -------
    MultiBiasAmpResult
        With ``train_source="test"`` and ``cross_fit=True``.
    """
    if not isinstance(folds, dict) or not folds or set(folds) - set(_METRIC_ROLES):
        raise ValueError(f"folds must map some of {list(_METRIC_ROLES)} to two count tables, got {folds!r}")
    for key, pair in folds.items():
        if len(pair) != 2 or not all(isinstance(f, MultiAttributeCounts) for f in pair):
            raise TypeError(f"folds[{key!r}] must be two MultiAttributeCounts (fold 0, fold 1)")
    if counts is None:
        first = next(iter(folds.values()))
        counts = first[0] + first[1]
    _require_observed(counts, split=True)
    y, small, left_out = _signs_and_groups(counts, min_group_size, include_small_groups)

    def signs(pair):
        return _train_sign(pair[0]), _train_sign(pair[1])

    mals = _mals_crossfit(counts, folds["Multi_MALS"], small,
                          fold_keep([np.asarray(f.test_attr) for f in folds["Multi_MALS"]], min_group_size,
                                    include_small_groups)) \
        if counts.joint_ghat_mhat is not None and "Multi_MALS" in folds else None
    g_to_m = _directional_crossfit(counts, folds["G->M"], "G->M", y, signs(folds["G->M"]), small, left_out) \
        if counts.joint_g_mhat is not None and "G->M" in folds else None
    m_to_g = _directional_crossfit(counts, folds["M->G"], "M->G", y, signs(folds["M->G"]), small, left_out) \
        if counts.joint_ghat_m is not None and "M->G" in folds else None
    return _assembled(counts, mals, g_to_m, m_to_g, selection, "test", left_out, cross_fit=True)


def _combination_index(counts: MultiAttributeCounts) -> tuple[np.ndarray, np.ndarray]:
    """The kept combinations as (padded task-index array, sizes), in the table's order."""
    position = {name: j for j, name in enumerate(counts.task_classes)}
    member = np.zeros((len(counts.combinations), len(counts.task_classes)), dtype=bool)
    for i, m in enumerate(counts.combinations):  # one row per combination (|M|, not rows)
        member[i, [position[name] for name in m]] = True
    return _padded(member)


def _subset(prep: _Prepared, rows: np.ndarray, roles: tuple, weights: np.ndarray | None = None) -> _Prepared:
    """The prepared test rows ``rows`` with the prediction ``roles`` only (no training set: the training side is
    the same rows), weighted by ``weights`` (a fold's share of each row's weight) when given."""
    w = weights if weights is not None else (None if prep.weights is None else prep.weights[rows])
    keep = {"attr", "task", *roles}
    columns = None if prep.attr_pred_columns is None or "attr_pred" not in roles else prep.attr_pred_columns[rows]
    return _Prepared({k: take_rows(m, rows) for k, m in prep.g.items() if k in keep},
                     {k: take_rows(m, rows) for k, m in prep.a.items() if k in keep},
                     {k: c[rows] for k, c in prep.codes.items() if k in keep}, w, w, prep.rows, None, "test", columns,
                     prep.predictions)


def _count_fixed(prep: _Prepared, idx: np.ndarray, sizes: np.ndarray,
                 counts: MultiAttributeCounts) -> MultiAttributeCounts:
    """The counts of the combinations ``idx``/``sizes`` on the rows of ``prep`` (no training set), like ``counts``."""
    g, a, codes, w = prep.g, prep.a, prep.codes, prep.weights
    n_groups, n_tasks, n = g["attr"].n_classes, a["task"].n_classes, g["attr"].n_rows
    weighted = counts.weighted
    bits = _column_bitsets(_label_blocks(a["task"]), n, n_tasks)
    grouping = _Grouping([codes["attr"]] + ([codes["attr_pred"]] if "attr_pred" in codes else []), n_groups, w)
    test_counts = grouping.counts(bits, idx, sizes)
    if prep.attr_pred_columns is not None:
        test_counts[1] = _column_joint_counts(bits, prep.attr_pred_columns, w, idx, sizes)
    g_mhat = ghat_mhat = None
    if "task_pred" in a:
        pred_counts = grouping.counts(_column_bitsets(_label_blocks(a["task_pred"]), n, n_tasks), idx, sizes)
        g_mhat = pred_counts[0]
        ghat_mhat = pred_counts[1] if "attr_pred" in codes else None
    def as_float(x: np.ndarray) -> np.ndarray:
        return np.asarray(x, dtype=np.float64) if weighted else x

    total = float(w.sum()) if w is not None else (float(n) if weighted else int(n))
    attr_totals = as_float(_group_totals(codes["attr"], n_groups, w))
    return MultiAttributeCounts(
        counts.attr_classes, counts.task_classes, counts.combinations,
        n_train=total, train_attr=attr_totals, train_joint=as_float(test_counts[0]),
        n_test=total, test_attr=attr_totals, test_joint=as_float(test_counts[0]),
        pred_attr=as_float(_group_totals(codes["attr_pred"], n_groups, w)) if "attr_pred" in codes else None,
        joint_g_mhat=None if g_mhat is None else as_float(g_mhat),
        joint_ghat_m=as_float(test_counts[1]) if "attr_pred" in codes else None,
        joint_ghat_mhat=None if ghat_mhat is None else as_float(ghat_mhat), weighted=weighted, rows=prep.rows,
        train_rows=prep.rows,
    )


def _count_folds(prep: _Prepared, counts: MultiAttributeCounts, random_state: Any) -> dict:
    """Per metric: the rows it reads split in two folds, and the kept combinations counted on each.

    Returns ``{metric: (every row's share of fold 0, fold 0 counts, fold 1 counts)}`` for
    the metrics whose predictions were given (Multi_MALS: both, G→M:
    ``task_pred``, M→G: ``attr_pred``).
    """
    idx, sizes = _combination_index(counts)
    by_role = {"attr": prep.g["attr"], "task": prep.a["task"], **{r: m for r, m in (*prep.g.items(), *prep.a.items())
                                                                  if r in ("attr_pred", "task_pred")}}
    keys = [key for key, roles in _METRIC_ROLES.items() if all(r in by_role for r in roles)]
    # Multi_MALS reads shares of groups: its folds are not stratified by group (see crossfit_splits)
    splits = crossfit_splits(by_role, [("attr", "task", *_METRIC_ROLES[key]) for key in keys], weights=prep.weights,
                             random_state=random_state, stratified=[key != "Multi_MALS" for key in keys])
    out = {}
    for key, of_rows in zip(keys, splits):
        folds = []
        for share in fold_weights(of_rows, prep.weights):
            rows = np.flatnonzero(share > 0)
            folds.append(_count_fixed(_subset(prep, rows, _METRIC_ROLES[key], None if prep.weights is None
                                              else share[rows]), idx, sizes, counts))
        out[key] = (of_rows, *folds)
    return out


# --------------------------------------------------------------------------- #
# input checking
# --------------------------------------------------------------------------- #
def _group_codes(m: LabelMatrix) -> np.ndarray:
    """Class index per row of an ``attr`` label (the paper's group), which must be one-hot."""
    if m.codes is not None:
        return m.codes
    dense = m._dense()
    per_row = np.count_nonzero(dense, axis=1)
    bad = np.flatnonzero(per_row != 1)
    if bad.size:
        counts = sorted({int(c) for c in per_row[bad]})
        raise ValueError(
            f"{m.name} must be one-hot (exactly one class per row), but rows {_fmt_rows(bad)} have "
            f"{' or '.join(map(str, counts))} classes"
        )
    return np.argmax(dense, axis=1).astype(np.intp)


def _argmax_attr_pred(attr: Any, attr_train: Any, attr_pred: Any) -> Any:
    """``attr_pred_rule="argmax"``: a 2-D ``attr_pred`` (scores, or 0/1 rows that are not one-hot) as one-hot rows.

    Each row's group is the column of its largest entry, the first on ties
    (``numpy.argmax``, as the multi-attribute authors' code); a 1-D
    ``attr_pred`` (one class per row) is returned unchanged.
    """
    if attr_pred is None:
        return None
    arr, cols = _as_array(attr_pred, "attr_pred")
    if arr.ndim == 1:
        return attr_pred
    _check_finite(arr, "attr_pred")
    if arr.dtype != bool and not np.issubdtype(arr.dtype, np.number):
        raise TypeError(f"attr_pred must hold numbers (scores or 0/1) for attr_pred_rule='argmax', got {arr.dtype}")
    classes = list(encode_labels({"attr": attr, "attr_train": attr_train})["attr"].classes)
    if arr.shape[1] != len(classes):
        raise ValueError(f"attr_pred has {arr.shape[1]} columns but attr has {len(classes)} classes {classes[:20]!r}")
    arr = _align_columns(arr, cols, classes, "attr_pred")
    return np.eye(len(classes), dtype=np.int8)[np.argmax(arr, axis=1)]


def _thresholded_attr_columns(attr_pred: Any) -> np.ndarray | None:
    """``attr_pred_rule="argmax"``: the 0/1 group columns the authors' M→G counts, one by one (None for 1-D).

    Probabilities and 0/1 rows (values in [0, 1]) are thresholded at 0.5
    (``p > 0.5``, the authors' uncalibrated ``np.round``); scores outside
    [0, 1] are read as logits (``s > 0``, i.e. ``sigmoid(s) > 0.5``). A row may
    then be in no column or in several: the authors' M→G counts it in each.
    """
    if attr_pred is None:
        return None
    arr = np.asarray(attr_pred)
    if arr.ndim != 2:
        return None
    arr = arr.astype(np.float64)
    cut = 0.5 if (arr.min(initial=0.0) >= 0 and arr.max(initial=0.0) <= 1) else 0.0
    return arr > cut


def _check_sizes(min_size: Any, max_size: Any, min_support: Any,
                 max_combinations: Any) -> tuple[int, int | None, int, int]:
    """The combination sizes checked by their declaration (:class:`MultiOptions`), as ints."""
    return MultiOptions(min_size=min_size, max_size=max_size, min_support=min_support,
                        max_combinations=max_combinations).sizes()


# --------------------------------------------------------------------------- #
# label-level API
# --------------------------------------------------------------------------- #
# 0.1 spellings (the paper's names), accepted until 0.3.0 with a FutureWarning
_MULTI_RENAMES = {"group": "attr", "attrs": "task", "group_pred": "attr_pred", "attrs_pred": "task_pred",
                  "group_train": "attr_train", "attrs_train": "task_train"}


@renamed_arguments("0.2.0", _MULTI_RENAMES)
def multi_bias_amp(
    attr: Labels,
    task: Labels,
    *,
    attr_pred: Labels | None = None,
    task_pred: Labels | None = None,
    attr_train: Labels | None = None,
    task_train: Labels | None = None,
    combinations: Combinations = "observed",
    min_size: int = 1,
    max_size: int | None = None,
    min_support: int = 1,
    max_combinations: int = 200_000,
    support: Support = "containment",
    attr_pred_rule: AttrPredRule = "one_hot",
    sample_weight: Weights | None = None,
    train_sample_weight: Weights | None = None,
    missing: Missing = "raise",
    threshold: float = DEFAULT_THRESHOLD,
    soft: Soft = "threshold",
    min_group_size: int = DEFAULT_MIN_GROUP_SIZE,
    include_small_groups: bool = False,
    cross_fit: bool | None = None,
    cross_fit_random_state: Any = None,
    binary_task: BinaryTask = "positive",
    pos_label: Any = None,
) -> MultiBiasAmpResult:
    r"""Multi-attribute bias amplification Multi_MALS and Multi→ (Zhao, Andrews & Xiang 2023).

    Vocabulary: ``attr`` is the protected attribute, the paper's **group**
    :math:`g \in G` (one-hot); ``task`` holds the task labels, the paper's
    **attributes** (multi-hot), whose combinations :math:`m \in M` are
    counted by containment (an instance with task set :math:`S` counts for
    every :math:`m \subseteq S`):

    .. math::

        b(m, g) = \frac{\#(m \subseteq S,\, g)}{\#(m \subseteq S)}, \qquad
        \text{Multi}_{\text{MALS}} = \frac{1}{|M|} \sum_{g, m} |\Delta_{gm}|,\quad
        \Delta_{gm} = \mathbb{1}\big[b_{\text{train}}(m,g) > \tfrac{1}{|G|}\big]
            \big(b_{\text{pred}}(m,g) - b_{\text{train}}(m,g)\big)

    with :math:`b_{\text{train}}` on the training ground truth and
    :math:`b_{\text{pred}}` on the test predictions (``task_pred`` and
    ``attr_pred``), and

    .. math::

        \text{Multi}_{\rightarrow} = \frac{1}{|G||M|} \sum_{g, m} |\Delta_{gm}|,
        \qquad y_{gm} = \operatorname{sign}\big(P_{\text{train}}(g, m) -
            P_{\text{train}}(g) P_{\text{train}}(m)\big)

    * G→M (attr → task combinations):
      :math:`\Delta_{gm} = P(\hat m \subseteq \hat S \mid g) - P(m \subseteq S \mid g)`
    * M→G (task combinations → attr):
      :math:`\Delta_{gm} = P(\hat g \mid m \subseteq S) - P(g \mid m \subseteq S)`

    both on the test set, with the test ground truth as the baseline.

    Parameters
    ----------
    attr : labels of shape (n,) or (n, G)
        Test ground truth of the protected attribute (the paper's group g):
        class ids/names, or a one-hot matrix.
    task : labels of shape (n, K) or (n,)
        Test ground truth of the task labels (the paper's attributes, whose
        combinations are m): a multi-hot indicator matrix (a 1-D argument is
        single-label: every instance has exactly one task label).
    attr_pred : labels, optional
        Predicted protected attribute (hard, one-hot; with
        ``attr_pred_rule="argmax"`` also scores or 0/1 rows with zero or
        several classes). Needed for Multi_MALS and M→G.
    task_pred : labels, optional
        Predicted task labels (hard 0/1). Needed for Multi_MALS and G→M.
    attr_train, task_train : labels, optional
        Training ground truth (give both or neither). When neither is given
        the test ground truth is used and ``train_source="test"`` is recorded.
    combinations : {"observed", "all"}, default "observed"
        Candidate combinations. ``"observed"``: the distinct exact task sets
        of the training instances (what the authors' code does). ``"all"``:
        every combination contained in at least ``min_support`` training
        instances (the paper's text), mined level by level like a
        frequent-itemset miner. In both, only sizes within
        ``[min_size, max_size]`` are kept, and only combinations occurring
        (with some attr class) in both the training and the test ground truth.
    min_size, max_size : int, default 1 and None (no limit)
        Bounds on ``|m|``.
    min_support : int, default 1
        Minimum number of training instances containing ``m`` (applied in
        both modes; see ``support``).
    max_combinations : int, default 200000
        ``"all"`` raises ``ValueError`` rather than mining more combinations
        than this (their number can grow exponentially with ``max_size``).
    support : {"containment", "exact"}, default "containment"
        How ``min_support`` counts, with ``combinations="observed"``.
        ``"containment"``: training instances whose task set *contains* m;
        a combination then also needs one test instance containing it.
        ``"exact"`` (the authors' code): training instances whose task set
        *is* m, and at least ``min_support`` test instances containing m
        (the authors' ``thresh`` is ``min_support - 1``: they require more
        than ``thresh``).
    attr_pred_rule : {"one_hot", "argmax"}, default "one_hot"
        ``"one_hot"``: ``attr_pred`` must hold exactly one class per row
        (``ValueError`` otherwise). ``"argmax"`` (the authors' code): a 2-D
        ``attr_pred`` of scores, probabilities or 0/1 rows is read, for
        Multi_MALS, as the class of its largest entry, the first on ties (so
        a row with no class goes to the first class), and, for M→G, as its
        thresholded columns counted one by one (probabilities at 0.5, scores
        outside [0, 1] at 0; a row in two groups counts in both;
        :doc:`/protocol_group_predictions`).
    sample_weight : array-like of shape (n,), optional
        One non-negative weight per test row: every test count (and, without
        a training set, every training count) becomes a sum of weights; rows
        of weight 0 are dropped (:ref:`def-weights`). Supports
        (``min_support``) are then sums of weights too.
    train_sample_weight : array-like of shape (n_train,), optional
        Weights of the training rows (needs ``attr_train``/``task_train``).
    missing : {"raise", "drop", "group"}, default "raise"
        Rows with a missing value: raise ``ValueError`` naming the argument
        and the rows; drop them (test and training rows separately); or, for
        a 1-D ``attr``/``attr_train``, make a missing attribute its own class
        ``"missing"`` (:ref:`def-missing`). Recorded in ``.rows`` /
        ``.train_rows``.
    threshold : float, default 0.5
        Probabilities given as predictions are predicted when they exceed it
        (per label; the argmax for the protected attribute's class
        probabilities) (:ref:`def-probabilities`); ``.predictions`` says so.
    soft : {"threshold"}, default "threshold"
        ``"expected"`` raises: containment of a combination in expected rates
        is not defined.
    min_group_size : int, default 30
        Groups with fewer (weighted) test members are small: their pairs stay
        in the tables (flagged ``small``) but out of every headline, with a
        ``SmallGroupWarning``, unless ``include_small_groups`` or fewer than
        two larger groups would remain (:ref:`def-small-groups`).
    include_small_groups : bool, default False
        Keep the small groups' pairs in the headlines.
    cross_fit : bool or None, default None
        How the signs ``y_gm`` and Multi_MALS's indicator are estimated
        without a training set. ``None``: cross-fit exactly when no training
        set is given: the test rows are split in two folds (stratified by
        group), the signs/indicators of one fold are applied to the Δ of the
        other, both ways, and a pair's term is the mean of the two ways (see
        Notes). ``False``: the plug-in (signs from every test row, applied to
        the same rows; biased toward "reduced"). ``True`` with a training set
        raises ``ValueError``. The combinations M are chosen on every row either
        way.
    cross_fit_random_state : None, int or numpy Generator, default None
        The seed of the split (``None``: a fixed split, seed 0, so the same
        data give the same value).
    binary_task : {"positive", "both"}, default "positive"
        How a binary task is read (:ref:`def-binary-task`): a 1-D task of
        classes 0 and 1 is its positive class alone (one attribute m, as an
        ``N x 1`` indicator), or ``"both"`` classes (two attributes, the
        one-hot reading). ``.binary_task`` says which.
    pos_label : object, optional
        The positive class of a binary task (default: 1/True for a 0/1 task).

    Returns
    -------
    MultiBiasAmpResult
        ``.mals``, ``.g_to_m``, ``.m_to_g`` (each ``.value`` = mean ``|Δ|``,
        ``.raw``, ``.variance``, ``.table``, ``.top(k)``; ``None`` where the
        needed predictions were not given), ``.combinations`` and
        ``.selection``. The tables have one row per (g, m) pair: ``attr``
        (the class g of the protected attribute), ``combination`` (m, a tuple
        of task names), ``size`` and, for Multi_MALS, ``bias_train,
        bias_pred, indicator, delta (= bias_pred − bias_train), contribution
        (= Δ_gm), n_train, n_train_comb, n_pred, n_pred_comb, undefined``; for
        Multi→, ``y, p_true, p_pred, delta (= Δ_gm), contribution (= y·Δ_gm),
        n_attr, n_comb, n_both, n_predicted, undefined`` (test supports).
        A metric whose every pair is undefined has ``undefined=True``, NaN
        values and a ``reason``; the other metrics are still returned.
        ``.rows``/``.train_rows`` record the row layer (``missing=``, weights).

    Raises
    ------
    ValueError
        Bad labels (see :mod:`biasamp.labels`); an ``attr`` matrix whose rows
        do not hold exactly one class (the rows are named); soft predictions
        (``attr_pred`` with ``attr_pred_rule="argmax"`` excepted);
        only one of ``attr_train``/``task_train``; no predictions; bad
        ``min_size``/``max_size``/``min_support``; an unknown ``support`` or
        ``attr_pred_rule``, or ``support="exact"`` with
        ``combinations="all"``; no combination surviving
        the filters (the message names the filter); bad weights (the message
        names the argument); an unknown ``missing``; every metric asked for
        undefined.
    TypeError
        Non-integer size or support bounds, or non-array labels.

    Warns
    -----
    UndefinedPairWarning
        Multi_MALS: an indicator-1 pair whose combination is never predicted
        (no ``b_pred``). G→M: an attr class without test members. Such pairs
        are excluded from the mean and the variance and flagged in ``.table``.
    FutureWarning
        A 0.1 argument name (``group``, ``attrs``, ``group_pred``,
        ``attrs_pred``, ``group_train``, ``attrs_train``); they are accepted
        until 0.3.0.

    Notes
    -----
    Decisions where the paper and its code leave room:

    * ``value`` is the paper's headline (absolute differences); ``raw`` uses
      signed ``Δ_gm`` (Multi_MALS) or ``y_gm Δ_gm`` (Multi→), which reduces to
      BiasAmp_MALS / BiasAmp→ when M is exactly the single task labels.
      Multi_MALS divides by ``|M|``, Multi→ averages over the defined
      ``|G||M|`` pairs.
    * The indicator compares with ``1/|G|``, strictly and exactly in integers
      (the authors' code uses ``1/(|G|−1)``, a bug that zeroes the metric for
      two groups).
    * ``variance`` is the population variance (ddof=0) of ``Δ_gm`` over the
      defined pairs (Multi_MALS: indicator-0 zeros included).
    * ``y_gm`` is the exact sign of ``n·#(g,m) − #g·#m`` on the training
      counts; Multi→ uses the *test* ground truth as the baseline of
      :math:`\Delta` (the authors' code; the paper prints a train baseline).
    * ``attr`` must be one-hot in every row, predictions included (predict
      exactly one class per instance). Predictions must be hard:
      containment of a soft prediction is not defined by the paper.
    * ``min_support`` counts containment (instances whose set contains m),
      in both modes; in ``"observed"`` mode too, so that the two modes agree
      on the combinations they share. ``support="exact"`` reproduces the
      authors' selection (:doc:`/protocol_min_support`).
    * ``attr`` must be one-hot; ``attr_pred`` too unless
      ``attr_pred_rule="argmax"`` (:doc:`/protocol_group_predictions`): an
      argmax silently assigns a group to rows that have none or several,
      so it is opt-in.
    * The empty set is never a combination (``min_size >= 1``).
    * Values are fractions, not percentages (the paper scales by 100).
    * Without a training set the signs and indicators are cross-fitted by
      default (:ref:`def-no-train`): Multi→'s ``raw`` is the mean of
      :math:`\tfrac12(y^{(0)}_{gm}\Delta^{(1)}_{gm} + y^{(1)}_{gm}\Delta^{(0)}_{gm})`
      over two folds of the test rows (``value`` and ``variance`` use no sign:
      every row), and Multi_MALS's :math:`\Delta_{gm}` is the mean over the
      folds of :math:`\mathbb 1[b^{(f)}_{\text{train}} > 1/|G|]\,
      (b_{\text{pred}} - b_{\text{train}})^{(1-f)}`.

    References
    ----------
    .. [1] D. Zhao, J. T. A. Andrews, A. Xiang. "Men Also Do Laundry:
       Multi-Attribute Bias Amplification". ICML 2023, Eq. 1-3.

    Examples
    --------
    Two classes of the protected attribute, task labels a, b, c. Alone, a and
    b are balanced between the classes, but the pair {a, b} is 2/3 class 1,
    and the model predicts the pair only for class 1: single-label
    BiasAmp_MALS is 0, Multi_MALS is not.

    >>> import pandas as pd
    >>> from biasamp import multi_bias_amp
    >>> attr = [0, 0, 0, 0, 1, 1, 1, 1]
    >>> task = pd.DataFrame([[1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1],
    ...                      [1, 1, 0], [1, 1, 0], [0, 0, 1], [0, 0, 0]], columns=list("abc"))
    >>> task_pred = pd.DataFrame([[1, 0, 0], [0, 1, 0], [1, 0, 0], [0, 0, 1],
    ...                           [1, 1, 0], [1, 1, 0], [0, 0, 1], [0, 0, 0]], columns=list("abc"))
    >>> res = multi_bias_amp(attr, task, attr_pred=attr, task_pred=task_pred,
    ...                      attr_train=attr, task_train=task)  # the constructed data are the training set
    >>> res.combinations
    (('a',), ('b',), ('c',), ('a', 'b'))
    >>> round(res.mals.value, 4), round(res.g_to_m.value, 4), res.m_to_g.value
    (0.0833, 0.0625, 0.0)
    >>> res.mals.top(1)[["attr", "combination", "bias_train", "bias_pred"]]
      attr combination  bias_train  bias_pred
    7    1      (a, b)    0.666667        1.0
    """
    opts, labels = MultiOptions.call_of(locals())  # the declared options, checked; the labels (and ``soft``)
    return multi_compute(multi_count(labels, opts), opts)


@dataclass(frozen=True, eq=False)
class _Counted:
    """A counted call of :func:`multi_bias_amp` (what :func:`multi_count` returns).

    Attributes
    ----------
    prep : _Prepared or None
        The labels after the row layer and the encoding (None for a stream's
        counts, which keep tables, not rows).
    counts : MultiAttributeCounts
        The counts of the kept combinations on every row.
    selection : dict
        How the combinations were chosen (``MultiBiasAmpResult.selection``).
    folds : dict or None
        Cross-fitted signs (no training set): ``{metric: (every row's share
        of fold 0, fold 0 counts, fold 1 counts)}`` (:func:`_count_folds`;
        a stream's folds hold None for the rows' shares); None for the
        plug-in or a training set.
    source : str
        Where the training counts come from, ``"train"`` or ``"test"``.
    predictions : str
        What the probability policy did to the predictions.
    binary_task : str or None
        How a binary task was read.
    """

    prep: _Prepared | None
    counts: MultiAttributeCounts
    selection: dict
    folds: dict | None
    source: str
    predictions: str
    binary_task: str | None


def multi_count(labels: dict, opts: MultiOptions) -> _Counted:
    """The counting pass of a call (the family's ``count`` hook): the labels prepared, the combinations counted.

    Everything :func:`multi_bias_amp` does before the metric: the
    cross-fitting decision (``cross_fit``, refused with a training set), the
    labels checked, their rows selected (``missing``, weights) and encoded,
    the combinations chosen and counted (:class:`MultiAttributeCounts`) and,
    when the signs are cross-fitted, each metric's split of the test rows in
    two folds and the kept combinations counted on each.

    Parameters
    ----------
    labels : dict
        The call's arguments that are not options, by name: ``attr``,
        ``task``, ``attr_pred``, ``task_pred``, ``attr_train``,
        ``task_train``, ``sample_weight``, ``train_sample_weight`` and
        ``soft`` (the probability policy, not an option of this family:
        ``"expected"`` is refused).
    opts : MultiOptions
        The call's options.

    Returns
    -------
    _Counted
        What :func:`multi_compute` and the bootstrap's resampling read.
    """
    has_train = labels["attr_train"] is not None or labels["task_train"] is not None
    cross_fit = check_cross_fit(opts.cross_fit, has_train)
    min_size, max_size, min_support, max_combinations = opts.sizes()
    prep = _prepare(labels["attr"], labels["task"], labels["attr_pred"], labels["task_pred"], labels["attr_train"],
                    labels["task_train"], attr_pred_rule=opts.attr_pred_rule, sample_weight=labels["sample_weight"],
                    train_sample_weight=labels["train_sample_weight"], missing=opts.missing,
                    threshold=opts.threshold, soft=labels["soft"],  # soft: not declared (only "threshold")
                    binary_task=opts.binary_task, pos_label=opts.pos_label)
    counts, selection = _count(prep, mode=opts.combinations, min_size=min_size, max_size=max_size,
                               min_support=min_support, max_combinations=max_combinations, support=opts.support)
    folds = _count_folds(prep, counts, opts.cross_fit_random_state) if cross_fit else None
    return _Counted(prep, counts, selection, folds, prep.source, prep.predictions, prep.binary_task)


def multi_compute(counted: _Counted, opts: MultiOptions) -> MultiBiasAmpResult:
    """The result of a counted call (the family's ``compute`` hook).

    :func:`multi_from_folds` of the folds' counts when the signs are
    cross-fitted, else :func:`multi_from_counts`, with the small-group
    options, and the probability policy and the binary-task reading recorded.

    Parameters
    ----------
    counted : _Counted
        The counted call (:func:`multi_count`).
    opts : MultiOptions
        The call's options.

    Returns
    -------
    MultiBiasAmpResult
        What :func:`multi_bias_amp` returns.
    """
    counts, selection = counted.counts, counted.selection
    if counted.folds is not None:
        folds = {key: (f0, f1) for key, (_, f0, f1) in counted.folds.items()}
        result = multi_from_folds(folds, counts=counts, selection=selection, min_group_size=opts.min_group_size,
                                  include_small_groups=opts.include_small_groups)
    else:
        result = multi_from_counts(counts, selection=selection, train_source=counted.source,
                                   min_group_size=opts.min_group_size, include_small_groups=opts.include_small_groups)
    return dataclasses.replace(result, predictions=counted.predictions, binary_task=counted.binary_task)


@dataclass(frozen=True, eq=False)
class _Prepared:
    """The arguments of :func:`multi_bias_amp` after the row layer and the encoding."""

    g: dict  # encoded attr, attr_pred, attr_train
    a: dict  # encoded task, task_pred, task_train
    codes: dict  # class index per row of every attr role
    weights: np.ndarray | None  # of the test rows
    train_weights: np.ndarray | None  # of the training rows (the test weights when there is no training set)
    rows: RowFilter
    train_rows: RowFilter | None
    source: str
    attr_pred_columns: np.ndarray | None = None  # attr_pred_rule="argmax": thresholded group columns (for M->G)
    predictions: str = "hard"  # what the probability policy did
    binary_task: str | None = None  # how a binary task was read

    @property
    def train_codes(self) -> np.ndarray:
        return self.codes["attr_train"] if self.source == "train" else self.codes["attr"]

    @property
    def train_task(self) -> LabelMatrix:
        return self.a["task_train"] if self.source == "train" else self.a["task"]


def _prepare(attr, task, attr_pred, task_pred, attr_train, task_train, *, attr_pred_rule="one_hot",
             sample_weight=None, train_sample_weight=None, missing="raise", threshold=DEFAULT_THRESHOLD,
             soft="threshold", binary_task="positive", pos_label=None) -> _Prepared:
    """Validate, select the rows of (``missing``, weights) and encode the labels of :func:`multi_bias_amp`.

    Probabilities given as predictions follow the library's policy (:mod:`biasamp._core.policy`):
    thresholded at ``threshold``; ``soft="expected"`` is refused, since containment of a
    combination in an expected rate is not defined.
    """
    threshold, soft = check_threshold(threshold), check_soft(soft)
    if (attr_train is None) != (task_train is None):
        raise ValueError("give both attr_train and task_train, or neither")
    if attr_pred is None and task_pred is None:
        raise ValueError(
            "give task_pred (for Multi G->M), attr_pred (for Multi M->G) or both (also for "
            "Multi_MALS); neither was given"
        )
    te, w, rows, tr, tw, train_rows = select_train_test(
        {"attr": attr, "task": task, "attr_pred": attr_pred, "task_pred": task_pred},
        None if attr_train is None else {"attr_train": attr_train, "task_train": task_train},
        sample_weight=sample_weight, train_sample_weight=train_sample_weight, missing=missing)
    tr = tr or {"attr_train": None, "task_train": None}
    attr_pred = te["attr_pred"]
    columns = None
    if attr_pred_rule == "argmax":
        attr_pred = _argmax_attr_pred(te["attr"], tr["attr_train"], attr_pred)
        if attr_pred is not None and np.ndim(attr_pred) == 2:
            # the one-hot rows (for Multi_MALS) and the thresholded columns (for M->G), same column order
            raw, cols = _as_array(te["attr_pred"], "attr_pred")
            classes = list(encode_labels({"attr": te["attr"], "attr_train": tr["attr_train"]})["attr"].classes)
            columns = _thresholded_attr_columns(_align_columns(raw, cols, classes, "attr_pred"))
    g = encode_labels({"attr": te["attr"], "attr_train": tr["attr_train"]}, {"attr_pred": attr_pred},
                      allow_soft=True)
    a = encode_labels({"task": te["task"], "task_train": tr["task_train"]}, {"task_pred": te["task_pred"]},
                      allow_soft=True)
    if soft == "expected" and any(m.soft for m in (*g.values(), *a.values())):
        raise ValueError("soft='expected' is not defined for the multi-attribute metrics (containment of a "
                         "combination in expected rates is not defined): use soft='threshold' or hard predictions")
    g, said_g = harden_roles(g, (("attr", "attr_pred"),), soft, threshold)
    a, said_a = harden_roles(a, (("task", "task_pred"),), soft, threshold)
    a, reading = read_task_roles(a, "task", binary_task, pos_label)
    check_consistent_length(attr=g["attr"], task=a["task"], attr_pred=g.get("attr_pred"),
                            task_pred=a.get("task_pred"))
    source = "test"
    if attr_train is not None:
        check_consistent_length(attr_train=g["attr_train"], task_train=a["task_train"])
        source = "train"
    codes = {name: _group_codes(m) for name, m in g.items()}
    return _Prepared(g, a, codes, w, tw if source == "train" else w, rows, train_rows, source, columns,
                     joined(said_g, said_a), reading)


def _count(prep: _Prepared, *, mode: str, min_size: int, max_size: int | None, min_support: int,
           max_combinations: int, support: str) -> tuple[MultiAttributeCounts, dict]:
    """Choose the combinations and count them (bitset popcounts; weighted sums with weights)."""
    g, a, codes = prep.g, prep.a, prep.codes
    n_groups, n_tasks = g["attr"].n_classes, a["task"].n_classes
    train_g, train_a, tw, w = prep.train_codes, prep.train_task, prep.train_weights, prep.weights
    weighted = w is not None or tw is not None
    if max_size is None:
        max_size = n_tasks

    # column bitsets of every role
    n_train, n_test = len(train_g), g["attr"].n_rows
    bits_train = _column_bitsets(_label_blocks(train_a), n_train, n_tasks)
    bits_test = _column_bitsets(_label_blocks(a["task"]), n_test, n_tasks)
    test_codes = [codes["attr"]] + ([codes["attr_pred"]] if "attr_pred" in codes else [])

    # candidates
    if mode == "observed":
        idx, sizes = _observed_sets(train_a, min_size, max_size)
    else:
        weighted_support = None
        if tw is not None:
            everyone = _Grouping([np.zeros(n_train, dtype=np.intp)], 1, tw)  # one group: the weighted support

            def weighted_support(i, sz):
                return everyone.counts(bits_train, i, sz)[0][0]
        idx, sizes = _frequent_sets(bits_train, min_size, max_size, min_support, max_combinations,
                                    support=weighted_support)
    n_candidates = len(sizes)
    (train_joint,) = _counts_by_group(bits_train, [train_g], n_groups, tw, idx, sizes)
    if support == "exact":  # training instances whose set *is* m: containing m and of size |m|
        row_sizes = np.zeros(n_train, dtype=np.intp)
        get = _label_blocks(train_a)
        step = max(1, _CHUNK_BYTES // max(n_tasks, 1))
        for start in range(0, n_train, step):
            row_sizes[start:start + step] = get(start, min(n_train, start + step)).sum(axis=1)
        (by_size,) = _counts_by_group(bits_train, [row_sizes], n_tasks + 1, tw, idx, sizes)
        keep = by_size[sizes, np.arange(len(sizes))] >= min_support
    else:
        keep = train_joint.sum(axis=0) >= min_support
    removed_support = int((~keep).sum())
    if not keep.any():
        raise ValueError(
            f"min_support={min_support} removed all {n_candidates} candidate combinations "
            f"(combinations={mode!r}, support={support!r}): none is "
            f"{'the exact task set of' if support == 'exact' else 'contained in'} that many training instances"
            + (" (with sample weights a support is a sum of weights)" if tw is not None else "")
        )
    idx, sizes, train_joint = idx[keep], sizes[keep], train_joint[:, keep]
    test_groups = _Grouping(test_codes, n_groups, w)  # built once: true and predicted tasks share it
    test_counts = test_groups.counts(bits_test, idx, sizes)
    in_test = test_counts[0].sum(axis=0)
    in_test = in_test >= min_support if support == "exact" else in_test > 0
    removed_test = int((~in_test).sum())
    if not in_test.any():
        raise ValueError(
            f"none of the {len(sizes)} candidate combinations (combinations={mode!r}, sizes "
            f"{min_size}..{max_size}, min_support={min_support}, support={support!r}) occurs "
            f"{'at least min_support times ' if support == 'exact' else ''}in the test ground truth "
            "(task): the test filter removed them all"
        )
    idx, sizes, train_joint = idx[in_test], sizes[in_test], train_joint[:, in_test]
    test_counts = [c[:, in_test] for c in test_counts]
    if prep.attr_pred_columns is not None:  # argmax rule: M->G counts each thresholded group column on its own
        test_counts[1] = _column_joint_counts(bits_test, prep.attr_pred_columns, w, idx, sizes)
    joint_g_mhat = joint_ghat_mhat = None
    if "task_pred" in a:
        bits_hat = _column_bitsets(_label_blocks(a["task_pred"]), n_test, n_tasks)
        pred_counts = test_groups.counts(bits_hat, idx, sizes)
        joint_g_mhat = pred_counts[0]
        joint_ghat_mhat = pred_counts[1] if "attr_pred" in codes else None

    def total(x):
        return float(x.sum()) if weighted else int(len(x))

    names = a["task"].classes
    combos = tuple(tuple(names[j] for j in row[:s]) for row, s in zip(idx.tolist(), sizes.tolist()))
    def as_float(x: np.ndarray) -> np.ndarray:
        return x.astype(np.float64) if weighted else x

    counts = MultiAttributeCounts(
        attr_classes=g["attr"].classes,
        task_classes=names,
        combinations=combos,
        n_train=total(tw) if tw is not None else (float(n_train) if weighted else int(n_train)),
        train_attr=as_float(_group_totals(train_g, n_groups, tw)),
        train_joint=as_float(train_joint),
        n_test=total(w) if w is not None else (float(n_test) if weighted else int(n_test)),
        test_attr=as_float(_group_totals(codes["attr"], n_groups, w)),
        test_joint=as_float(test_counts[0]),
        pred_attr=as_float(_group_totals(codes["attr_pred"], n_groups, w)) if "attr_pred" in codes else None,
        joint_g_mhat=None if joint_g_mhat is None else as_float(joint_g_mhat),
        joint_ghat_m=as_float(test_counts[1]) if "attr_pred" in codes else None,
        joint_ghat_mhat=None if joint_ghat_mhat is None else as_float(joint_ghat_mhat),
        weighted=weighted,
        rows=prep.rows,
        train_rows=prep.train_rows if prep.source == "train" else prep.rows,
    )
    selection = {
        "mode": mode, "min_size": min_size, "max_size": max_size, "min_support": min_support,
        "support": support, "n_candidates": n_candidates, "removed_min_support": removed_support,
        "removed_not_in_test": removed_test,
    }
    return counts, selection
