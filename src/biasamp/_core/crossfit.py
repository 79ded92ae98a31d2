"""Cross-fitted signs without a training set: the option and the two-fold split of the test rows.

Without a training set, BiasAmp→'s signs ``y_at``, BiasAmp_MALS's indicator
``1[bias_train > 1/|A|]``, Multi→'s ``y_gm`` and Multi_MALS's indicator are
estimated from the test ground truth. Applied to the very rows they were
estimated on, they bias the metric toward "reduced": a task that is frequent
in a group *by chance* gets ``y = +1`` and its deviation then regresses
(selection). Cross-fitting removes that: the rows are split in two folds;
the signs estimated on one fold are applied to the changes measured on the
other, both ways, and the two ways are averaged (docs/definitions.md,
"No training set"). This module holds the option (:func:`check_cross_fit`),
the seed of the split (:func:`split_seed`) and the split itself
(:func:`crossfit_splits`); the families count each fold with their ordinary
counting code and combine the two count tables with a pure function.

The split: one rule for every family, one split per statistic, drawn from the
roles the statistic reads (truth, predictions, the weight):

* **stratified by attribute class**: the rows of every class of the
  protected attribute (its exact set of groups, for an indicator matrix)
  are split exactly in half (fold 0 gets the extra row of an odd class);
* **row-order invariant and reproducible**: a row's place in its class is
  drawn from a 64-bit hash of the seed, of the row's *content* and of its
  occurrence among the rows of the same content, so identical rows are
  interchangeable, and the multiset of rows (not their order) fixes the
  fold tables (of identical rows, the earlier ones take the earlier
  occurrences);
* **invariant to renaming classes** (the attribute's, the task's, or
  reordering an indicator matrix's columns): a class enters a row's content
  through a signature computed from the data (the rows that hold it, in
  rounds, as a graph's colours are refined), never through its name or its
  position in the sorted class list. Two classes whose rows are identical in
  every respect up to swapping them share a signature; the rows they tell
  apart are then ordered by their labels' positions, so the split still
  ignores the order of the rows;
* **a weighted row is one observation**: its weight (integer or not) is
  part of its content and the row goes to one fold whole, as the bootstrap
  resamples it whole (were a weight shared by the folds, copies of one
  observation would sit on both sides, and the selection bias cross-fitting
  removes would come back); only ``units``, a stream's numbers of identical
  unweighted rows, are dealt like that many rows (:func:`split_weights`);
  weights all 1 are no weights.

Within a class, the rows ordered by their hash are dealt alternately to fold
0 and fold 1 (positions 0, 2, 4, ... to fold 0). The split of one seed is
one random halving; ``split_seed(None)`` is the fixed seed 0, so the same
data always give the same value.

The computation (issue 24): every row's labels become one integer (codes
as they are, a 0/1 row as its bits), the rows are grouped by that content
with one sort of packed words, the class signatures and hashes are computed
once per distinct content (or row by row when nearly every row is distinct),
and each class is dealt with one more sort of packed ``(key, position)``
words: about 0.1 s per million single-label rows for BiasAmp→'s two splits.
Rows too wide to pack with a position in one word (multi-label rows, nearly
all distinct; issue 31) are not grouped by content: the counts come from
histograms of the rows' bytes (:func:`byte_counts`: 16-bit words counted
group by group, or with the group in the histogram's key, or both task-side
roles in one joint histogram), every row is hashed (two bytes a table
look-up, combined with the key's other parts in the same cache-sized
blocks), the rows are ordered by ``(stratum, top
bits of H(seed, key, 0), position)`` in one sort of packed words (the
stratum above the hash), the rows whose top bits tie (in runs) are checked
to share their labels, which makes their keys and whole hashes equal too
(else the runs are ordered by the whole hash, and rows that share a key but
not their labels send the rows back to the grouping by content), and the
rows of one key are hashed again with their occurrences, in row order, and
ordered again (:func:`_deal_rows`): the same split.
:func:`splits_and_counts` also hands back the counts of every row it made,
the rows' bytes and, for rows dealt one by one, the rows of each split's
fold 0 (stratum by stratum, read off the order that dealt them), so that a
caller counts only each split's fold 0 (:func:`fold_counts`) and takes fold
1 as the rest (:func:`splits_and_fold_counts` counts each split's fold 0
right after dealing it, in the same thread). Given the counts of every row,
the statistics' splits are independent of each other: with several cores
and many rows they are computed in threads, as are the splits' fold counts
and the bytes of the joint histogram (:func:`in_threads`; every call's
result is the same in any thread, so the folds and the counts do not depend
on the number of threads).

The functions work on any batch of rows (:func:`crossfit_splits` /
:func:`crossfit_folds` return every row's share of fold 0, :func:`fold_weights`
each fold's weight of every row), which is what a streaming layer needs to count
a fold (a batch-wise split halves each class within the batch).
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from biasamp._core.labels import LabelMatrix

__all__ = ["DEFAULT_SPLIT_SEED", "MAX_UNITS", "N_FOLDS", "STREAM_SPLIT_NOTE",
           "align_splits", "byte_counts", "check_cross_fit",
           "crossfit_folds", "crossfit_splits", "describe", "fold_counts", "fold_weights", "in_threads", "split_seed",
           "splits_and_counts", "splits_and_fold_counts", "weight_units"]

#: the seed of the split when ``cross_fit_random_state`` is None: the same data always give the same value
DEFAULT_SPLIT_SEED = 0
#: cross-fitting uses two folds, both ways
N_FOLDS = 2

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
# salts that tell the roles and the parts of a row's content apart
_SALT_TASK = np.uint64(0x5851F42D4C957F2D)
_SALT_ATTR = np.uint64(0x2545F4914F6CDD1D)
_SALT_PRED = np.uint64(0x27BB2EE687B0B0FD)
_SALT_WEIGHT = np.uint64(0x14057B7EF767814F)
_SALT_OCCURRENCE = np.uint64(0x61C8864680B583EB)
_ONE_BITS = np.float64(1.0).view(np.uint64)


def check_cross_fit(cross_fit: Any, has_train: bool, *, default: bool | None = None) -> bool:
    """The ``cross_fit`` option resolved: None -> ``default`` (else: True exactly when there is no training set).

    ``cross_fit=True`` with a training set raises ``ValueError``: the training
    set fixes the signs, so there is nothing to cross-fit.
    """
    if cross_fit is None:
        return (not has_train) if default is None else bool(default)
    if not isinstance(cross_fit, (bool, np.bool_)):
        raise TypeError(f"cross_fit must be None, True or False, got {cross_fit!r}")
    if cross_fit and has_train:
        raise ValueError("cross_fit=True needs the signs to come from the test rows, but a training set was given "
                         "(attr_train/task_train fix the signs: there is nothing to cross-fit); leave cross_fit=None")
    return bool(cross_fit)


def split_seed(random_state: Any, name: str = "cross_fit_random_state") -> int:
    """The 64-bit seed of the split: None -> :data:`DEFAULT_SPLIT_SEED`; an int as given; a Generator draws one.

    Accepts None, a non-negative int, a numpy ``Generator``, ``SeedSequence``
    or ``RandomState``; anything else raises ``TypeError``/``ValueError``
    naming ``name``.
    """
    if random_state is None:
        return DEFAULT_SPLIT_SEED
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**63))
    if isinstance(random_state, np.random.SeedSequence):
        return int(random_state.generate_state(1, dtype=np.uint64)[0])
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, 2**31 - 1))
    if isinstance(random_state, bool) or not isinstance(random_state, numbers.Integral):
        raise TypeError(f"{name} must be None, a non-negative integer or a numpy Generator, got "
                        f"{type(random_state).__name__} {random_state!r}")
    if random_state < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {random_state}")
    return int(random_state) % 2**64


def describe(cross_fit: bool, train_source: str) -> str:
    """Where the signs came from, in words (results' reprs and the report)."""
    if train_source == "train":
        return "signs from the training set"
    return "signs cross-fitted (2 folds)" if cross_fit else "signs from the test rows"


# --------------------------------------------------------------------------- #
# hashing
# --------------------------------------------------------------------------- #
def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser, elementwise on uint64 (wrapping arithmetic)."""
    z = np.asarray(x, dtype=np.uint64) + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def _combine(h: np.ndarray, x: np.ndarray) -> np.ndarray:
    """An order-sensitive hash of ``(h, x)``: ``mix(h · C + x)`` (multiplication by an odd constant is a bijection)."""
    return _mix(np.asarray(h, dtype=np.uint64) * _M2 + np.asarray(x, dtype=np.uint64))


def _combine_into(h: np.ndarray, x: np.ndarray) -> np.ndarray:
    """:func:`_combine` of uint64 arrays of one shape, computed in a new array (``h`` kept) and ``x`` (overwritten)."""
    with np.errstate(over="ignore"):
        out = np.multiply(h, _M2)
        for a in range(0, len(out), _HASH_ROWS):  # in blocks that stay in cache
            part, tmp = out[a:a + _HASH_ROWS], x[a:a + _HASH_ROWS]
            part += tmp
            _mix_in_place(part, tmp)
        return out


def _float_bits(x: np.ndarray) -> np.ndarray:
    """The bits of float64 values (``-0.0`` as ``0.0``)."""
    return (np.asarray(x, dtype=np.float64) + 0.0).view(np.uint64)


_CHUNK_BYTES = 16 << 20
_ROUNDS = 2  # rounds of refinement of the class signatures


def _indicator_blocks(m: LabelMatrix, step: int):
    """Row blocks ``(start, stop, 0/1 float64 block)`` of where ``m`` is non-zero (one-hot rows for codes)."""
    n, k = m.n_rows, m.n_classes
    for a in range(0, n, step):
        b = min(n, a + step)
        if m.codes is not None:
            block = np.zeros((b - a, k), dtype=np.float32)
            block[np.arange(b - a), np.asarray(m.codes[a:b])] = 1.0
        else:
            block = (np.asarray(m._dense()[a:b]) != 0).astype(np.float32)
        yield a, b, block


@dataclass
class _Stats:
    """Counts that do not depend on the names or order of anything: per role, per same-side pair, per cross pair.

    Unweighted counts of non-zero entries (exact integers, so the same
    whatever the order of the rows): ``count[role]`` (K), ``diag[(r1, r2)]``
    (K: rows holding class j in both roles of one side, e.g. "predicted the
    class it is") and ``cross[(attr role, task role)]`` (K_A x K_T).
    """

    count: dict
    diag: dict
    cross: dict

    def of(self, roles: Iterable[str]) -> _Stats:
        """The counts of some of the roles (in the same order)."""
        roles = set(roles)
        return _Stats({r: v for r, v in self.count.items() if r in roles},
                      {p: v for p, v in self.diag.items() if set(p) <= roles},
                      {p: v for p, v in self.cross.items() if set(p) <= roles})


def _stats(roles: dict, sides: tuple, units: np.ndarray | None = None) -> _Stats:
    """The counts of :class:`_Stats` for the roles ``roles`` (name -> LabelMatrix), in one pass over row blocks.

    ``units``: integer weights, every row counted that many times (as its repeated rows would be).
    """
    names = list(roles)
    width = sum(roles[r].n_classes for r in names)
    step = min(1 << 22, max(1024, _CHUNK_BYTES // max(4 * width, 1)))  # a block's sums stay below 2**24
    n = next(iter(roles.values())).n_rows
    count = {r: np.zeros(roles[r].n_classes) for r in names}
    attr_side, task_side = sides
    same = [(r1, r2) for side in sides for i, r1 in enumerate(side) for r2 in side[i + 1:]]
    diag = {p: np.zeros(roles[p[0]].n_classes) for p in same}
    cross = {(ra, rt): np.zeros((roles[ra].n_classes, roles[rt].n_classes)) for ra in attr_side for rt in task_side}
    # one BLAS thread: the products are small and memory-bound (threads stall on a loaded machine)
    with one_blas_thread():
        for a in range(0, n, step):
            blocks = {r: next(_indicator_blocks(_rows(roles[r], a, a + step), step))[2] for r in names}
            # float32 blocks: every block's sums are integers below 2**24 (exact); the totals are float64
            # (with integer weights: float64 blocks, every sum an integer below 2**53)
            w = None if units is None else units[a:a + step].astype(np.float64)[:, None]
            for r, x in blocks.items():
                count[r] += (x if w is None else x * w).sum(axis=0, dtype=np.float64)
            for r1, r2 in same:
                both = blocks[r1] * blocks[r2]
                diag[(r1, r2)] += (both if w is None else both * w).sum(axis=0, dtype=np.float64)
            for ra, rt in cross:
                left = blocks[ra] if w is None else blocks[ra] * w
                cross[(ra, rt)] += left.T @ (blocks[rt] if w is None else blocks[rt].astype(np.float64))
    return _Stats(count, diag, cross)


#: the most bins of one histogram of :func:`_byte_stats`
_MAX_BINS = 1 << 22
#: the most bins of a joint histogram of both task-side roles (:func:`_joint_bits`), else one histogram each
_TOGETHER_BINS = 1 << 18
#: the fewest rows per group for which two bytes of a row are counted together (16-bit words: a 65536-bin
#: histogram per group, the rows ordered by group), else one byte at a time (a histogram of ``(group, byte)``)
_PAIR_ROWS = 1 << 16
#: the bits of every byte value (256 x 8), to turn a histogram of bytes into counts of their bits
_BYTE_BITS = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(np.int64)
#: the ``and`` of every pair of bytes ``(x, y)``, at ``256 x + y``
_AND_PAIRS = (np.arange(256)[:, None] & np.arange(256)).ravel()


def byte_counts(roles: dict, sides: tuple, *, diag: bool = True) -> _Stats | None:
    """Exact unweighted counts of the non-zero entries of ``roles`` from histograms of bytes, or None.

    ``sides`` names the attribute-side roles (codes, any number of them, all
    with the same classes) and the task-side roles (0/1 matrices, at most
    two); returns the counts per role, per same-side pair (when ``diag``) and
    per cross pair (``count``, ``diag``, ``cross`` as integers in float64),
    or None when the roles are not of those kinds (:func:`_byte_stats`).
    """
    if any(roles[r].codes is None for r in sides[0]) or len(sides[1]) > 2 or \
            any(roles[r].codes is not None or roles[r].soft for r in sides[1]):
        return None
    return _byte_stats(roles, sides, {r: _row_bytes(roles[r]._dense()) for r in sides[1]}, diag=diag)


def _byte_stats(roles: dict, sides: tuple, octets: dict, units: np.ndarray | None = None,
                diag: bool = True) -> _Stats | None:
    """:func:`_stats` from histograms of the rows' bytes, or None when the roles do not allow it.

    The attribute-side roles must hold codes and the task-side roles 0/1
    matrices (their bytes in ``octets``, :func:`_row_bytes`). The attribute
    side's classes are joined in one id per row; the bits of every task-side
    role are counted per id (:func:`_grouped_bits`), those of both task-side
    roles' ``and`` for the same-side pair, as exact integers: the same
    numbers as :func:`_stats` (no product of float blocks).
    """
    attr_side, task_side = sides
    if any(roles[r].codes is None for r in attr_side) or any(r not in octets for r in task_side):
        return None
    n = roles[attr_side[0]].n_rows if attr_side else len(octets[task_side[0]]) if task_side else 0
    w = None if units is None else np.asarray(units, dtype=np.float64)

    def hist(x: np.ndarray, bins: int) -> np.ndarray:
        """Integer counts (exact: integer weights sum exactly in float64) as int64, for products without BLAS."""
        return np.bincount(x, weights=w, minlength=bins).astype(np.int64)

    count: dict = {}
    same: dict = {}
    cross: dict = {}
    ka = roles[attr_side[0]].n_classes if attr_side else 1
    n_ids = ka ** len(attr_side)
    if n_ids > _MAX_BINS:
        return None
    joint = np.zeros(n, dtype=np.intp)  # the attribute side's classes as one id per row
    for r in attr_side:
        joint *= ka
        joint += np.asarray(roles[r].codes)
    # one histogram of the ids: every attribute-side role's counts, and its pair's diagonal
    by_id = hist(joint, n_ids).reshape((ka,) * len(attr_side))
    for i, r in enumerate(attr_side):
        count[r] = by_id.sum(axis=tuple(j for j in range(len(attr_side)) if j != i)).astype(np.float64)
    if diag and len(attr_side) == 2:
        same[attr_side] = np.diagonal(by_id).astype(np.float64)
    present = np.flatnonzero(by_id.ravel() if w is None else np.bincount(joint, minlength=n_ids))
    if len(present) < n_ids:  # the ids of the rows numbered 0, 1, ... (else they already are)
        remap = np.zeros(n_ids, dtype=np.intp)
        remap[present] = np.arange(len(present))
        joint = np.take(remap, joint)
    ids = len(present)
    kt = roles[task_side[0]].n_classes if task_side else 0
    count.update({r: np.zeros(kt) for r in task_side})
    cross.update({(ra, r): np.zeros((ka, kt)) for ra in attr_side for r in task_side})  # _stats's order
    bits: list[np.ndarray] | None
    if diag and len(task_side) == 2 and ids << 16 <= _TOGETHER_BINS:  # both roles and the pair in one histogram
        bits, both = _joint_bits(octets[task_side[0]], octets[task_side[1]], joint, ids, w, kt)
        same[task_side] = both.astype(np.float64)
    else:
        if diag and len(task_side) == 2:  # the rows holding bit j in both roles
            both_bytes = np.bitwise_and(octets[task_side[0]], octets[task_side[1]])
            grouped = _grouped_bits([both_bytes], None, 1, w, kt)
            assert grouped is not None  # one group
            same[task_side] = grouped[0][0].astype(np.float64)
        bits = _grouped_bits([octets[r] for r in task_side], joint, ids, w, kt)
    if bits is None:
        return None
    for r, by_id in zip(task_side, bits):
        count[r][:] = by_id.sum(axis=0)
        for i, ra in enumerate(attr_side):  # the ids of every class of the role, summed
            of_class = (present // ka ** (len(attr_side) - 1 - i)) % ka
            # a product of exact integers below 2**53 (float64: BLAS, whatever the order of its sums)
            cross[(ra, r)][:] = np.equal.outer(np.arange(ka), of_class).astype(np.float64) @ by_id.astype(np.float64)
    return _Stats(count, same, cross)


def _joint_bits(x: np.ndarray, y: np.ndarray, groups: np.ndarray, n_groups: int, weights: np.ndarray | None,
                k: int) -> tuple[list[np.ndarray], np.ndarray]:
    """Two matrices of row bytes: each one's ``k`` bits counted per group, and the rows holding each bit in both.

    One histogram of ``(group, byte of x, byte of y)`` per byte gives all
    three (:func:`_grouped_bits` counts one matrix at a time). The bytes are
    counted in two threads (:func:`in_threads`: each byte's counts are exact
    integers, the same in any thread), each thread turning its own bytes
    into the histograms' keys.
    """
    n, width = x.shape
    high = groups.astype(np.intp) << 16
    bx, by = (np.zeros((n_groups, 8 * width), dtype=np.int64) for _ in range(2))
    both = np.zeros(8 * width, dtype=np.int64)

    def count(every_other: int) -> None:
        # the thread's bytes, x's high and y's low, byte by byte (contiguous), turned in row blocks that stay in cache
        # (copied into the two bytes of each little-endian 16-bit word)
        joined = np.empty((len(range(every_other, width, 2)), n), dtype="<u2")
        halves = joined.view(np.uint8).reshape(len(joined), n, 2)  # [byte, row, low/high]
        for a in range(0, n, _HASH_ROWS):
            halves[:, a:a + _HASH_ROWS, 0] = y[a:a + _HASH_ROWS, every_other::2].T
            halves[:, a:a + _HASH_ROWS, 1] = x[a:a + _HASH_ROWS, every_other::2].T
        key = np.empty(n, dtype=np.intp)
        for i, b in enumerate(range(every_other, width, 2)):
            np.bitwise_or(high, joined[i], out=key)
            h = np.bincount(key, weights=weights, minlength=n_groups << 16)
            h = (h if h.dtype == np.int64 else h.astype(np.int64)).reshape(n_groups, 256, 256)  # [group, x, y]
            bx[:, 8 * b:8 * b + 8] = h.sum(axis=2) @ _BYTE_BITS
            by[:, 8 * b:8 * b + 8] = h.sum(axis=1) @ _BYTE_BITS
            # the rows holding bit j in both bytes: the histogram of the bytes' ``and``, from that of the pairs
            both[8 * b:8 * b + 8] = np.bincount(_AND_PAIRS, weights=h.sum(axis=0).ravel(), minlength=256).astype(
                np.int64) @ _BYTE_BITS  # (integers below 2**53: exact)

    in_threads(count, [0, 1], n)
    return [bx[:, :k], by[:, :k]], both[:k]


def _grouped_bits(octets: list, groups: np.ndarray | None, n_groups: int, weights: np.ndarray | None,
                  k: int) -> list[np.ndarray] | None:
    """Per matrix of row bytes (:func:`_row_bytes`), its ``k`` bits counted per group of rows: ``(n_groups, k)`` int64.

    ``groups``: every row's group (``0 .. n_groups - 1``; None: one group);
    ``weights``: integer weights, a row counted that many times. With many
    rows per group the rows are ordered by group and each group's 16-bit
    words counted in a 65536-bin histogram; else each byte in a histogram of
    ``(group, byte)`` (None when that has more than :data:`_MAX_BINS` bins).
    The bits of every histogram's values then give the counts, as exact
    integers (no product of float blocks).
    """
    n = len(octets[0]) if octets else 0
    width = octets[0].shape[1] if octets else 0
    if groups is None:
        groups = np.zeros(n, dtype=np.intp)
    out = [np.zeros((n_groups, 8 * width), dtype=np.int64) for _ in octets]

    def hist(x: np.ndarray, w: np.ndarray | None, bins: int) -> np.ndarray:
        h = np.bincount(x, weights=w, minlength=bins)
        return h if h.dtype == np.int64 else h.astype(np.int64)

    if n == 0:
        return [res[:, :k] for res in out]
    ordered = n_groups == 1 or bool((groups[1:] >= groups[:-1]).all())  # the rows already in group order
    if n >= _PAIR_ROWS * n_groups and not ordered and n_groups << 16 <= _TOGETHER_BINS:
        # two bytes at a time, the group above them in one histogram's key (the rows in any order)
        return [res[:, :k] for res in _keyed_words(octets, groups, n_groups, weights, out)]
    if n >= _PAIR_ROWS * n_groups:  # two bytes at a time, group by group
        if not ordered:
            order = np.argsort(groups.astype(_uint(_index_bits(n_groups))), kind="stable")  # a counting sort
            weights = None if weights is None else weights[order]
        bounds = np.append(0, np.cumsum(np.bincount(groups, minlength=n_groups))).tolist()
        for x, res in zip(octets, out):
            rows = np.ascontiguousarray(x if ordered else np.take(x, order, axis=0))
            words = rows[:, :width - width % 2].view("<u2")  # byte 2j low, byte 2j + 1 high
            for g, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
                w = None if weights is None else weights[a:b]
                for j in range(width // 2):
                    h = hist(words[a:b, j], w, 1 << 16).reshape(256, 256)  # [high byte, low byte]
                    res[g, 16 * j:16 * j + 8] = h.sum(axis=0) @ _BYTE_BITS
                    res[g, 16 * j + 8:16 * j + 16] = h.sum(axis=1) @ _BYTE_BITS
                if width % 2:
                    res[g, 8 * width - 8:] = hist(rows[a:b, -1], w, 256) @ _BYTE_BITS
        return [res[:, :k] for res in out]
    gbits = _group_bits(n_groups)
    if 256 << gbits > _MAX_BINS:
        return None
    groups = groups.astype(np.intp)
    key = np.empty(n, dtype=np.intp)
    for x, res in zip(octets, out):
        for j in range(width):
            np.left_shift(x[:, j], gbits, out=key, dtype=np.intp)
            key |= groups  # the group below the byte
            h = hist(key, weights, 256 << gbits).reshape(256, -1)[:, :n_groups]  # [byte, group]
            res[:, 8 * j:8 * j + 8] = h.T @ _BYTE_BITS
    return [res[:, :k] for res in out]


def _keyed_words(octets: list, groups: np.ndarray, n_groups: int, weights: np.ndarray | None,
                 out: list[np.ndarray]) -> list[np.ndarray]:
    """:func:`_grouped_bits` of rows in any order: per 16-bit word, one histogram of ``(group, word)``.

    Fills and returns ``out`` (per matrix, ``(n_groups, 8 * width)`` int64).
    """
    n, width = octets[0].shape
    high = groups.astype(np.intp) << 16
    key = np.empty(n, dtype=np.intp)
    for x, res in zip(octets, out):
        words = x[:, :width - width % 2].view("<u2")  # byte 2j low, byte 2j + 1 high
        for j in range(width // 2):
            np.bitwise_or(high, words[:, j], out=key)
            h = np.bincount(key, weights=weights, minlength=n_groups << 16)
            h = (h if h.dtype == np.int64 else h.astype(np.int64)).reshape(n_groups, 256, 256)  # [group, high, low]
            res[:, 16 * j:16 * j + 8] = h.sum(axis=1) @ _BYTE_BITS
            res[:, 16 * j + 8:16 * j + 16] = h.sum(axis=2) @ _BYTE_BITS
        if width % 2:
            np.bitwise_or(groups.astype(np.intp) << 8, x[:, -1], out=key)
            h = np.bincount(key, weights=weights, minlength=n_groups << 8)
            res[:, 8 * width - 8:] = (h if h.dtype == np.int64 else h.astype(np.int64)).reshape(
                n_groups, 256) @ _BYTE_BITS
    return out


def _group_bits(n_groups: int) -> int:
    """The bits of a group number, packed below the bytes of a histogram's key.

    The groups of one byte value are then neighbours among the bins (a few
    cache lines), not ``256`` or ``65536`` bins apart (cache sets in conflict).
    """
    return max(0, n_groups - 1).bit_length()


def _rows(m: LabelMatrix, a: int, b: int) -> LabelMatrix:
    """Rows ``a:b`` of ``m`` (a view)."""
    if m.codes is not None:
        return LabelMatrix(m.name, m.classes, codes=m.codes[a:b])
    return LabelMatrix(m.name, m.classes, dense=m._dense()[a:b], soft=m.soft)


def _hash_counts(*arrays: np.ndarray) -> np.ndarray:
    """One uint64 per position of equally shaped count arrays."""
    h = np.zeros(np.shape(arrays[0]), dtype=np.uint64)
    for i, x in enumerate(arrays):
        h = _combine(h, _float_bits(x) ^ np.uint64(i + 1))
    return h


def _class_signatures(stats: _Stats, sides: tuple, sizes: tuple) -> tuple[np.ndarray, np.ndarray]:
    """Per side, a signature of every class that does not depend on the classes' names (their canonical order).

    Each class gets a signature from its counts in every role, refined in
    rounds with the signatures of the classes it co-occurs with on the other
    side (a multiset, hashed as a commutative sum), as a graph's colours are;
    the classes are ranked by signature (ties, i.e. classes the counts cannot
    tell apart, keep their order).
    """
    attr_side, task_side = sides
    sig = []
    for side, k in zip(sides, sizes):
        parts = [stats.count[r] for r in side] + [stats.diag[p] for p in stats.diag if p[0] in side]
        sig.append(_hash_counts(*parts) if parts else np.zeros(k, dtype=np.uint64))
    pairs = list(stats.cross)
    for _ in range(_ROUNDS):
        sa, st = sig
        na, nt = sa.copy(), st.copy()
        for i, p in enumerate(pairs):
            c = stats.cross[p]
            na = na + (_combine(_combine(st[None, :], _float_bits(c)), np.uint64(i))).sum(axis=1, dtype=np.uint64)
            nt = nt + (_combine(_combine(sa[:, None], _float_bits(c)), np.uint64(i))).sum(axis=0, dtype=np.uint64)
        sig = [_mix(na), _mix(nt)]
    return sig[0], sig[1]


def _ranks(sig: np.ndarray) -> np.ndarray:
    """The rank of every class when ordered by signature (ties keep their order)."""
    return np.argsort(np.argsort(sig, kind="stable"), kind="stable").astype(np.uint64)


def _tied(sig: np.ndarray, empty: np.ndarray) -> bool:
    """Whether two classes share a signature, leaving out the classes no row holds in any role (all alike)."""
    held = sig[~empty]
    return len(np.unique(held)) < len(held)


def _column_hash(m: LabelMatrix, g: np.ndarray, units: np.ndarray | None = None) -> np.ndarray:
    """Per class: ``Σ_i [m_ij ≠ 0] units_i g_i`` mod 2^64 (exact: 16-bit limbs summed in float64)."""
    k = m.n_classes
    limbs = np.stack([((g >> np.uint64(16 * i)) & np.uint64(0xFFFF)).astype(np.float64) for i in range(4)], axis=1)
    if units is not None:  # integer weights below 2**24 in all: every sum stays below 2**53
        limbs *= units.astype(np.float64)[:, None]
    sums = np.zeros((k, 4))
    step = max(1, _CHUNK_BYTES // max(8 * k, 1))
    with one_blas_thread():
        for a, b, block in _indicator_blocks(m, step):
            sums += block.astype(np.float64).T @ limbs[a:b]  # integers below 2**53: exact
    q = np.rint(sums).astype(np.uint64)
    out = np.zeros(k, dtype=np.uint64)
    for i in range(4):
        out += q[:, i] << np.uint64(16 * i)
    return out


def _refine(used: dict, sides: tuple, sigs: tuple, weights_hash: np.ndarray | None,
            units: np.ndarray | None = None) -> tuple:
    """Classes that the counts cannot tell apart, told apart by the rows that hold them (rounds over the rows).

    Run only when some classes share a signature: a row is hashed from the
    current signatures of its classes, then each class from the rows that
    hold it, per role; classes still tied are identical up to their names.
    """
    sig = list(sigs)
    n = next(iter(used.values())).n_rows
    for _ in range(_ROUNDS):
        h = np.zeros(n, dtype=np.uint64) if weights_hash is None else weights_hash
        for j, r in enumerate(used):
            h = _combine(h, _positional(used[r], sig[0] if r in _ATTR_ROLES else sig[1], _SALT_TASK + np.uint64(j)))
        new = []
        for side, x in zip(sides, sig):
            y = x
            for i, r in enumerate(side):
                y = _combine(y, _column_hash(used[r], _mix(h ^ np.uint64(i + 1)), units))
            new.append(y)
        sig = new
    return tuple(sig)


def _positional(m: LabelMatrix, rank: np.ndarray, salt: np.uint64) -> np.ndarray:
    """Per row: a hash of its labels, every class named by ``rank`` (its signature, or its position).

    0/1 rows: ``Σ_j x_ij R(rank_j)`` mod 2^64 (a set's hash; ``R`` random
    64-bit keys), computed exactly as a float product with the keys cut in
    8-bit (16-bit for very wide matrices) limbs. Probabilities: the values'
    bits, column by column in the order of ``rank``.
    """
    keys = _mix(rank ^ salt)
    if m.codes is not None:  # one class per row: the hash of its one-hot row
        return keys[np.asarray(m.codes)]
    k = m.n_classes
    bits, dtype = (8, np.float32) if k < 65000 else (16, np.float64)  # every limb sum stays exact
    limbs = np.stack([((keys >> np.uint64(bits * i)) & np.uint64((1 << bits) - 1)).astype(dtype)
                      for i in range(64 // bits)], axis=1)
    order = np.argsort(rank)  # soft values: the columns in canonical order
    out = np.empty(m.n_rows, dtype=np.uint64)
    step = max(1, _CHUNK_BYTES // max(4 * k, 1))
    with one_blas_thread():
        for a in range(0, m.n_rows, step):
            block = np.asarray(m._dense()[a:a + step])
            if not m.soft:
                sums = np.rint((block != 0).astype(dtype) @ limbs).astype(np.uint64)
                h = np.zeros(len(block), dtype=np.uint64)
                for i in range(sums.shape[1]):
                    h += sums[:, i] << np.uint64(bits * i)
                out[a:a + step] = h
                continue
            words = _float_bits(block[:, order])
            h = np.full(len(block), salt, dtype=np.uint64)
            for j in range(words.shape[1]):
                h = _combine(h, words[:, j] ^ np.uint64(j))
            out[a:a + step] = h
    return out


def _role_salt(role: str) -> np.uint64:
    """A role's salt: by its place in the canonical order of roles, whatever order a caller lists it in."""
    return _SALT_TASK + np.uint64((_ROLE_ORDER.index(role) if role in _ROLE_ORDER else len(_ROLE_ORDER)) << 32)


# --------------------------------------------------------------------------- #
# the rows' contents as integers: every hash is computed once per distinct content
# --------------------------------------------------------------------------- #
def _index_bits(n: int) -> int:
    """The bits that hold a position among ``n`` items."""
    return max(1, (n - 1).bit_length())


def _uint(bits: int) -> np.dtype:
    """The smallest unsigned integer type of at least ``bits`` bits."""
    return np.dtype(next(t for t in (np.uint8, np.uint16, np.uint32, np.uint64) if np.iinfo(t).bits >= bits))


def _group(values: np.ndarray, bits: int, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The items ordered by their ``values`` (below ``2**bits``; equal values by position), and where each value starts.

    ``positions`` is ``arange(len(values))`` (uint64). Values of up to 16
    bits: a counting (radix) sort. Else, when a value and a position fit in
    one 64-bit word together, the words are sorted as numbers (a value sort:
    several times faster than an arg-sort); else a stable arg-sort.
    """
    n = len(values)
    if n == 0:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    if bits <= 16:
        small = values.astype(_uint(bits), copy=False)
        counts = np.bincount(small, minlength=1 << bits)
        counts = counts[counts > 0]
        return np.argsort(small, kind="stable"), np.cumsum(counts) - counts
    ib = _index_bits(n)
    if bits + ib > 64:
        order = np.argsort(values, kind="stable")
        ordered = values[order]
        new = np.ones(n, dtype=bool)
        np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
        return order, np.flatnonzero(new)
    packed = values.astype(np.uint64)
    packed <<= np.uint64(ib)
    packed |= positions
    packed.sort()
    new = np.ones(n, dtype=bool)
    np.greater_equal(packed[1:] ^ packed[:-1], np.uint64(1 << ib), out=new[1:])  # another value
    packed &= np.uint64((1 << ib) - 1)
    return packed.view(np.int64), np.flatnonzero(new)


def _compress(values: np.ndarray, bits: int, positions: np.ndarray) -> tuple[np.ndarray, int]:
    """Values renumbered ``0, 1, ...`` in increasing order, and the bits that hold the new numbers."""
    order, starts = _group(values, bits, positions)
    bits = (len(starts) - 1).bit_length()
    out = np.empty(len(values), dtype=_uint(bits))
    out[order] = np.repeat(np.arange(len(starts), dtype=out.dtype), np.diff(np.append(starts, len(values))))
    return out, bits


def _join(c: np.ndarray | None, cbits: int, d: np.ndarray, dbits: int, positions: np.ndarray) -> tuple[np.ndarray, int]:
    """One integer for the pair ``(c, d)`` (equal exactly when both are; ordered by ``c`` first), and its bits.

    Either part is first renumbered (:func:`_compress`) when the pair would
    not leave room for a position beside it in a 64-bit word (:func:`_group`).
    """
    if c is None:
        return d, dbits
    room = 64 - _index_bits(len(positions))
    if cbits + dbits > room and cbits > 64 - room:
        c, cbits = _compress(c, cbits, positions)
    if cbits + dbits > room and dbits > 64 - room:
        d, dbits = _compress(d, dbits, positions)
    assert cbits + dbits <= 64, "more than 2**32 rows"  # renumbered, each part holds fewer bits than a position
    dtype = _uint(cbits + dbits)
    out = c.astype(dtype)
    out <<= dtype.type(dbits)
    out |= d.astype(dtype, copy=False)
    return out, cbits + dbits


def _row_bytes(dense: np.ndarray) -> np.ndarray:
    """An ``N x K`` matrix as ``N x ceil(K / 8)`` bytes: bit ``j % 8`` of byte ``j // 8`` is ``[x_ij != 0]``.

    The rows, padded to whole bytes, are packed as one flat bit string
    (numpy's ``packbits`` is fast on a flat array, slow row by row).
    """
    n, k = dense.shape
    width = -(-k // 8)
    if dense.dtype.itemsize == 1 and dense.dtype.kind in "biu":  # one byte an entry: packbits reads non-zero as 1
        if k % 8 == 0:
            return np.packbits(dense.reshape(-1), bitorder="little").reshape(n, width)
        # C order whatever the input's (a DataFrame's values are often in Fortran order): the rows' bytes are read
        # two at a time as 16-bit words (:func:`_set_hash`), which needs each row's bytes contiguous
        return np.ascontiguousarray(np.packbits(dense, axis=1, bitorder="little"))
    out = np.empty((n, width), dtype=np.uint8)
    step = max(1, _CHUNK_BYTES // max(8 * width, 1))
    bits = np.zeros((min(n, step), 8 * width), dtype=bool)
    for a in range(0, n, step):
        b = min(n, a + step)
        np.not_equal(dense[a:b], 0, out=bits[:b - a, :k])
        out[a:b] = np.packbits(bits[:b - a].ravel(), bitorder="little").reshape(b - a, width)
    return out


def _set_hash(octets: np.ndarray, keys: np.ndarray, then: np.ndarray | None = None) -> np.ndarray:
    """Per row, ``Σ_j [x_ij != 0] keys_j`` mod 2^64 from its bytes (:func:`_row_bytes`): a 256-entry table per byte.

    The value of :func:`_positional` for a 0/1 matrix (there a float product
    of the keys' limbs), with one look-up per byte of a row. ``then``: per
    row a hash ``h`` (kept), and the result is :func:`_combine` of ``h`` and
    the set's hash, computed in the same blocks.
    """
    width = octets.shape[1]
    padded = np.zeros(8 * width, dtype=np.uint64)
    padded[:len(keys)] = keys
    members = _BYTE_BITS.astype(np.uint64)  # the bits of every byte
    with np.errstate(over="ignore"):
        out = np.zeros(len(octets), dtype=np.uint64) if then is None else np.multiply(then, _M2)
        tables = [(members * padded[8 * b:8 * b + 8]).sum(axis=1, dtype=np.uint64) for b in range(width)]
        # two bytes a look-up: a 65536-entry table of their sums (the low byte first)
        pair_tables = [(tables[b + 1][:, None] + tables[b][None, :]).ravel() for b in range(0, width - 1, 2)]
        rows = min(len(octets), _HASH_ROWS)
        index = np.empty((width // 2, rows), dtype=np.intp)  # a block's 16-bit words, word by word
        looked_up = np.empty(rows, dtype=np.uint64)
        for a in range(0, len(octets), _HASH_ROWS):  # in blocks: the indices stay in cache
            block = octets[a:a + _HASH_ROWS]
            idx = index[:, :len(block)]
            if width > 1:
                np.copyto(idx, block[:, :width - width % 2].view("<u2").T, casting="safe")  # np.take wants intp
            part = out[a:a + len(block)]
            for j, table in enumerate(pair_tables):
                part += np.take(table, idx[j], out=looked_up[:len(block)], mode="wrap")
            if width % 2:
                part += np.take(tables[-1], block[:, -1].astype(np.intp))
            if then is not None:  # mix(h · C + the set's hash)
                _mix_in_place(part, looked_up[:len(block)])
    return out


#: the most combinations of classes of the leading roles of codes whose part of a key is tabled (:func:`_keys`)
_KEY_TABLE = 1 << 16

#: rows per block of :func:`_set_hash`
_HASH_ROWS = 1 << 16


def _label_hash(m: LabelMatrix, octets: np.ndarray | None, rank: np.ndarray, salt: np.uint64,
                then: np.ndarray | None = None) -> np.ndarray:
    """:func:`_positional` of ``m``, from the rows' bytes when given (a 0/1 matrix); combined after ``then``, if given.

    ``then``: per row a hash ``h`` (kept); the result is then :func:`_combine`
    of ``h`` and the labels' hash (:func:`_set_hash` computes both in one pass).
    """
    if octets is None:
        x = _positional(m, rank, salt)
        return x if then is None else _combine_into(then, x)
    return _set_hash(octets, _mix(rank ^ salt), then)


def _role_digit(m: LabelMatrix, octets: np.ndarray | None, positions: np.ndarray) -> tuple[np.ndarray, int]:
    """Every row's labels in ``m`` as one unsigned integer (equal exactly when the rows' labels are), and its bits.

    Codes as they are; a 0/1 matrix as the bits of its rows (``octets``,
    :func:`_row_bytes`; words of whole bytes joined by :func:`_join`);
    probabilities as the number of their row among the distinct rows (the
    values' bits, ``-0.0`` as ``0.0``).
    """
    if m.codes is not None:
        bits = (m.n_classes - 1).bit_length()
        return np.asarray(m.codes).astype(_uint(bits)), bits
    dense = m._dense()
    n, k = dense.shape
    if octets is None:
        words = np.ascontiguousarray(_float_bits(dense).reshape(n, k))
        inverse = np.unique(words.view(np.dtype((np.void, 8 * k))).ravel(), return_inverse=True)[1].ravel()
        bits = int(inverse.max(initial=0)).bit_length()
        return inverse.astype(_uint(bits)), bits
    per_word = max(1, (64 - _index_bits(n)) // 8)  # bytes per word: a word and a position fit in 64 bits
    digit: np.ndarray | None = None
    bits = 0
    for a in range(0, octets.shape[1], per_word):
        part = octets[:, a:a + per_word]
        dtype = _uint(8 * part.shape[1])
        word = part[:, 0].astype(dtype)
        for i in range(1, part.shape[1]):
            word |= part[:, i].astype(dtype) << dtype.type(8 * i)
        digit, bits = _join(digit, bits, word, min(8 * part.shape[1], k - 8 * a), positions)
    return (np.zeros(n, dtype=np.uint8), 0) if digit is None else (digit, bits)


def _weight_hash(w: np.ndarray) -> np.ndarray:
    """A non-integer weight's part of a row's content: 0 for weight 1, else a hash of its bits."""
    return np.where(w == 1, np.uint64(0), _mix(_float_bits(w) ^ _SALT_WEIGHT))


def _take(m: LabelMatrix, rows: np.ndarray) -> LabelMatrix:
    """Rows ``rows`` of ``m`` (a copy)."""
    if m.codes is not None:
        return LabelMatrix(m.name, m.classes, codes=np.asarray(m.codes)[rows])
    return LabelMatrix(m.name, m.classes, dense=np.asarray(m._dense())[rows], soft=m.soft)


def _mix_in_place(h: np.ndarray, tmp: np.ndarray) -> np.ndarray:
    """:func:`_mix` of a uint64 array, in place (the same bits; ``tmp`` a scratch array of its shape)."""
    h += _GOLDEN
    for shift, mult in ((30, _M1), (27, _M2)):
        np.right_shift(h, np.uint64(shift), out=tmp)
        h ^= tmp
        h *= mult
    np.right_shift(h, np.uint64(31), out=tmp)
    h ^= tmp
    return h


def _item_hash(u: np.ndarray, keys: np.ndarray, seed: np.ndarray) -> np.ndarray:
    """``H(seed, H(key, occurrence ^ salt))`` as :func:`_combine` computes it, in place in ``u`` (the occurrences).

    ``keys`` (uint64, the items' keys) is overwritten: it serves as scratch.
    Computed in blocks that stay in cache (a dozen passes over each).
    """
    salt = _mix(seed)[0] * _M2
    with np.errstate(over="ignore"):
        for a in range(0, len(u), _HASH_ROWS):
            part, tmp = u[a:a + _HASH_ROWS], keys[a:a + _HASH_ROWS]
            part ^= _SALT_OCCURRENCE
            tmp *= _M2
            part += tmp
            _mix_in_place(part, tmp)
            part += salt
            _mix_in_place(part, tmp)
    return u


#: more strata than this: :func:`_alternate` sorts all items at once (lexicographically) instead of stratum by stratum
_MAX_SLICES = 4096


def _alternate(u: np.ndarray, bounds: np.ndarray, positions: np.ndarray, alternating: np.ndarray,
               scratch: np.ndarray) -> np.ndarray:
    """The fold (0 or 1) of every item: within each stratum, ordered by ``u``, alternately (ties: by position).

    The items of stratum ``s`` are ``bounds[s]:bounds[s + 1]``. ``positions``
    is ``arange(n)`` (uint64), ``alternating`` ``0, 1, 0, 1, ...`` (int8),
    ``scratch`` a uint64 array of ``n`` items to overwrite
    (:func:`_stratum_order`, then :func:`_dealt`).
    """
    return _dealt(_stratum_order(u, bounds, positions, scratch), bounds, positions, alternating)


def _stratum_order(u: np.ndarray, bounds: np.ndarray, positions: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """The items ordered by stratum, then by ``u``, then by position (the arguments of :func:`_alternate`).

    Within a stratum the top bits of ``u`` and the position are packed in one
    word and sorted as numbers; items whose top bits tie are then ordered by
    their whole ``u``, so the order is exactly the one by ``(u, position)``.
    """
    return _ordered(u, bounds, positions, scratch)[0]


def _ordered(u: np.ndarray, bounds: np.ndarray, positions: np.ndarray, scratch: np.ndarray,
             strata: np.ndarray | None = None, words: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_stratum_order`, and the places ``i`` of the order where item ``i + 1`` has the ``u`` of item ``i``.

    ``strata``: every item's stratum (the items in any order: the stratum,
    as ``words`` from :func:`_stratum_words`, is packed above the top bits of
    ``u``, and the order lists the items' positions), else the items of
    stratum ``s`` are ``bounds[s]:bounds[s + 1]``.
    Equal ``u`` have equal top bits: the repeats are looked for among the
    pairs of the order whose top bits tie (a few), not along the whole order.
    """
    if len(bounds) - 1 > _MAX_SLICES:
        ids = np.repeat(np.arange(len(bounds) - 1), np.diff(bounds)) if strata is None else strata
        order = np.lexsort((positions[:len(u)], u, ids))
        return order, np.flatnonzero(_repeats(u[order], bounds))
    return _untied(u, bounds, *_packed_order(u, bounds, positions, scratch, strata, words))


def _packed_order(u: np.ndarray, bounds: np.ndarray, positions: np.ndarray, scratch: np.ndarray,
                  strata: np.ndarray | None = None, words: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The items ordered by stratum, then by the top bits of ``u``, then by position; the places where top bits tie.

    The arguments of :func:`_ordered` (at most :data:`_MAX_SLICES` strata):
    the top bits of ``u`` and the position are packed in one word and sorted
    as numbers. Returns the order and the places ``i`` of the order where
    item ``i + 1`` has the top bits (and the stratum) of item ``i``.
    """
    n = len(u)
    ib = _index_bits(n)
    low = np.uint64((1 << ib) - 1)
    n_strata = len(bounds) - 1
    if strata is None:
        packed = np.bitwise_and(u, ~low, out=scratch)
        packed |= positions[:n]
        for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
            packed[a:b].sort()
    else:  # one sort of (stratum, top bits of u, position)
        if words is None:
            words = _stratum_words(strata, n_strata)
        packed = np.right_shift(u, np.uint64(_index_bits(n_strata) if words is not None else 0), out=scratch)
        packed &= ~low
        if words is not None:
            packed |= words
        packed |= positions[:n]
        packed.sort()
    tied = np.bitwise_xor(packed[1:], packed[:-1]) <= low  # equal top bits
    tied[bounds[1:-1][(bounds[1:-1] > 0) & (bounds[1:-1] < n)] - 1] = False  # not across strata
    packed &= low
    return packed.view(np.int64), np.flatnonzero(tied)


def _untied(u: np.ndarray, bounds: np.ndarray, order: np.ndarray, pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The order of :func:`_packed_order` made exact (by the whole ``u``), and the repeats of ``u`` (:func:`_ordered`).

    Runs of equal top bits are in position order: right where their whole
    ``u`` are equal too (repeated keys); the runs that hold different ``u``
    are ordered again by ``(u, position)``.
    """
    differ = u[order[pairs]] != u[order[pairs + 1]]
    if not differ.any():
        return order, pairs
    # the runs (of consecutive tied pairs) that hold different u: their items ordered by (u, position)
    new_run = np.ones(len(pairs), dtype=bool)
    np.not_equal(pairs[1:], pairs[:-1] + 1, out=new_run[1:])
    run = np.cumsum(new_run)
    in_run = pairs[np.isin(run, run[differ])]
    at = np.union1d(in_run, in_run + 1)
    sub = order[at]
    stratum = np.searchsorted(bounds, at, side="right")
    order[at] = sub[np.lexsort((sub, u[sub], stratum))]
    return order, pairs[u[order[pairs]] == u[order[pairs + 1]]]


def _dealt(order: np.ndarray, bounds: np.ndarray, positions: np.ndarray, alternating: np.ndarray) -> np.ndarray:
    """The fold of every item from :func:`_stratum_order`: position p in its stratum, fold p mod 2."""
    n = len(order)
    if len(bounds) - 1 > _MAX_SLICES:
        dealt = ((positions[:n] - np.repeat(bounds[:-1], np.diff(bounds)).astype(np.uint64))
                 & np.uint64(1)).astype(np.int8)
    else:
        dealt = np.empty(n, dtype=np.int8)
        for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
            dealt[a:b] = alternating[:b - a]
    folds = np.empty(n, dtype=np.int8)
    folds[order] = dealt
    return folds


# --------------------------------------------------------------------------- #
# the split
# --------------------------------------------------------------------------- #
_ATTR_ROLES = ("attr", "attr_pred")
#: the roles in their canonical order (a role's place salts its hash, whatever order a caller lists it in)
_ROLE_ORDER = ("attr", "attr_pred", "task", "task_pred")


def _canonical(names: Iterable[str]) -> list[str]:
    return sorted(names, key=lambda r: (_ROLE_ORDER.index(r) if r in _ROLE_ORDER else len(_ROLE_ORDER), r))


#: fewer distinct contents than rows / this: count and hash one row of each content, else every row
_FEW_CONTENTS = 4

#: integer weights count as that many rows (units) while their total stays below this; else whole rows are split
MAX_UNITS = 1 << 24


def split_weights(weights: np.ndarray | None, units: np.ndarray | None) -> tuple[np.ndarray | None, np.ndarray | None]:
    """``(weights, units)`` as the split reads them: sample weights (a row whole; all 1: none), or units.

    ``units`` (numbers of identical unweighted rows, :data:`MAX_UNITS` at most in all) come back as int64 units
    and as the rows' weights; sample ``weights`` come back as they are, with no units: a weighted row is one
    observation, dealt whole (its weight part of its content), whatever its weight.
    """
    if units is not None:
        if weights is not None:
            raise ValueError("give sample weights or units (numbers of identical rows), not both")
        counted = weight_units(units)
        if counted is None:
            raise ValueError(f"units must be non-negative integers, {MAX_UNITS:,} at most in all")
        return np.asarray(units, dtype=np.float64), counted
    if weights is not None and bool(np.all(np.asarray(weights) == 1.0)):
        return None, None  # a weight of 1 is no weight
    return weights, None


def weight_units(weights: np.ndarray | None) -> np.ndarray | None:
    """The weights as numbers of units (int64) when they are small integers (:data:`MAX_UNITS`), else None."""
    if weights is None:
        return None
    w = np.asarray(weights, dtype=np.float64)
    r = np.rint(w)
    if not np.array_equal(r, w) or float(r.sum()) > MAX_UNITS:
        return None
    return r.astype(np.int64)


def crossfit_splits(roles: dict, reads: Sequence[Sequence[str]], *, weights: np.ndarray | None = None,
                    random_state: Any = None, stratified: bool | Sequence[bool] = True,
                    units: np.ndarray | None = None) -> list[np.ndarray]:
    """One split per statistic: every row's share of fold 0, each attribute class halved (when stratified).

    Parameters
    ----------
    roles : dict
        Role name -> LabelMatrix, row-aligned: ``"attr"`` (the ground truth
        of the protected attribute, whose classes are the strata), optionally
        ``"attr_pred"``, and task-side roles (``"task"``, ``"task_pred"``).
    reads : sequence of sequences of role names
        The roles each statistic reads (e.g. A→T: ``("attr", "task",
        "task_pred")``); each gets its own split, drawn from those roles only,
        so that a statistic's value does not depend on the other roles given.
    weights : ndarray, optional
        One positive weight per row (``sample_weight``): a weighted row is one
        observation, so it goes to one fold whole, its weight part of its
        content (the bootstrap resamples it whole too). Weights all 1 are no
        weights.
    random_state : None, int or numpy Generator
        The seed (:func:`split_seed`; None: the fixed default). One seed draws
        every split.
    stratified : bool or sequence of bool
        Per statistic (one value: every statistic), whether each attribute
        class is halved (True, the default) or the rows are halved as one
        stratum, so that a class's rows fall in the two folds as at random
        (False: the statistics whose term reads a group's *share* of a task,
        BiasAmp_MALS and Multi_MALS, whose indicator and change would
        otherwise share the sample's group sizes; docs/definitions.md).
    units : ndarray of int, optional
        Instead of ``weights``: how many identical unweighted rows each row
        stands for (a stream's distinct rows and their multiplicities), each
        dealt like a row ("units": a row of 3 units is split like three rows,
        so the split is the split of the repeated rows).

    Returns
    -------
    list of ndarray
        Per statistic, every row's weight in fold 0 (its weight in fold 1 is
        the rest): 0 or 1 without weights (int8), 0 or its weight with
        weights, from 0 to its number with units (float64). Stratified,
        every attribute class has ``ceil(n_c / 2)`` rows (units) in fold 0
        and ``floor(n_c / 2)`` in fold 1; unstratified,
        all the rows together do.

    Notes
    -----
    The classes of each side are put in a canonical order computed from the
    data (:func:`_class_signatures`, :func:`_refine`), and a row's content
    ``k_i`` is a hash of its labels in that order (and of its weight, if
    any); ``j_i`` counts the rows (units) of the same class and content
    before it. The key ``u_i = H(seed, k_i, j_i)`` orders the rows of a
    class, and positions 0, 2, 4, ... go to fold 0. Rows with the same
    content are interchangeable, so the fold tables depend on the multiset
    of rows only: not on their order, nor on the classes' names. Of
    identical rows, the earlier ones take the earlier occurrences, so the
    share of every row is fixed too.
    """
    return splits_and_counts(roles, reads, weights, random_state, stratified, units=units)[0]


def splits_and_counts(roles: dict, reads: Sequence[Sequence[str]], weights: np.ndarray | None, random_state: Any,
                     stratified: bool | Sequence[bool], *,
                     units: np.ndarray | None = None) -> tuple[list[np.ndarray], _Stats | None, dict, list]:
    """:func:`crossfit_splits`, the counts of every row it made on the way, the rows' bytes and the rows of fold 0.

    The counts (:class:`_Stats` of every role read) are those of all the rows,
    unweighted: None when the split did not count every row (or weights were given).
    The rows of fold 0 (per split, for :func:`fold_counts`): ordered by
    stratum, when the rows were dealt one by one without weights, else None.
    """
    return splits_and_fold_counts(roles, reads, weights, random_state, stratified, units=units)[:4]


def splits_and_fold_counts(roles: dict, reads: Sequence[Sequence[str]], weights: np.ndarray | None,
                           random_state: Any, stratified: bool | Sequence[bool],
                           fold_sides: Sequence[tuple] | None = None, *,
                           units: np.ndarray | None = None) -> tuple[list[np.ndarray], _Stats | None, dict, list,
                                                                     list]:
    """:func:`splits_and_counts`, and per split the counts of its fold 0 (:func:`fold_counts`) when asked.

    ``fold_sides``: per statistic, the sides ``(attribute-side roles,
    task-side roles)`` whose fold 0 is counted; a split dealt row by row
    without weights is counted in the thread that dealt it, right after (its
    counts are exact integers: the same in any thread). The last element
    lists, per split, those counts, or None (not asked, not dealt row by row,
    or not roles :func:`fold_counts` counts). ``units``: as in :func:`crossfit_splits`.
    """
    seed = np.array([split_seed(random_state)], dtype=np.uint64)
    attr = roles["attr"]
    n = attr.n_rows
    flags = [stratified] * len(reads) if isinstance(stratified, (bool, np.bool_)) else list(stratified)
    if len(flags) != len(reads):
        raise ValueError(f"stratified: one flag per statistic ({len(reads)}), got {len(flags)}")
    weights, units = split_weights(weights, units)
    # a weight is part of a row's content (the row goes to one fold whole); units are numbers of identical rows
    real = weights is not None and units is None
    row_of = None if units is None else np.repeat(np.arange(n), units)  # every unit is dealt like a row
    n_items = n if row_of is None else len(row_of)
    positions = np.arange(max(n, n_items), dtype=np.uint64)
    alternating = np.zeros(n_items, dtype=np.int8)
    alternating[1::2] = 1
    digits: dict = {}  # per role: every row's labels as one integer (equal rows, equal integers), and its bits
    # per 0/1 matrix: its rows as bytes (the content's digits and the hashes read them)
    packed = [r for r, m in roles.items()
              if m is not None and m.codes is None and not m.soft and any(r in read for read in reads)]
    octets = dict(zip(packed, in_threads(lambda r: _row_bytes(roles[r]._dense()), packed, n)))
    if weights is not None and units is None:
        digits[None] = _compress(_float_bits(weights), 64, positions[:n])
    every = {r: roles[r] for r in _canonical({r for read in reads for r in read if roles.get(r) is not None})}
    every_sides = (tuple(r for r in every if r in _ATTR_ROLES), tuple(r for r in every if r not in _ATTR_ROLES))
    counted: _Stats | None = None
    every_w: np.ndarray | None = None
    by_stratum: tuple | None = None  # every row's stratum, and the number of strata (rows dealt row by row)
    out = []
    fold0: list = []  # per split, the rows of fold 0 when dealt row by row
    counts0: list = []  # per split, the counts of its fold 0 when made with the split
    plans = []  # per statistic: the roles it reads, by side, the classes per side, the parts of a row's content
    for read, stratified_read in zip(reads, flags):
        used = {r: roles[r] for r in _canonical([r for r in read if roles.get(r) is not None])}
        sides = (tuple(r for r in used if r in _ATTR_ROLES), tuple(r for r in used if r not in _ATTR_ROLES))
        sizes = (attr.n_classes, next((used[r].n_classes for r in sides[1]), 0))
        # the content of every row: its stratum first (the attribute's class when stratified), its labels in
        # the roles read, a non-integer weight
        first = ("attr",) if stratified_read or "attr" in used else ()
        plans.append((used, sides, sizes, (*first, *(r for r in used if r != "attr"), *((None,) if real else ()))))
    # the statistics whose rows are hashed and dealt row by row, not by content: what they share computed once,
    # then each one's split (in threads: each is the same as computed alone)
    wide = [row_of is None and _wide(plan[3], roles, octets, n) for plan in plans]
    dealt_rows: dict = {}
    shares: set = set()  # the splits whose rows' shares of fold 0 were made with them
    if any(wide):
        counted, every_w = _every_stats(every, every_sides, octets, None, weights if real else None)
        digits["attr"] = _role_digit(attr, octets.get("attr"), positions[:n])
        if any(w and f for w, f in zip(wide, flags)):  # the rows' strata: once for every statistic
            stratum_digit, stratum_bits = digits["attr"]
            by_stratum = _stratum_ids(attr, stratum_digit, stratum_bits, positions[:n])

        # the codes of a row's content in the smallest integers (compared on the rows of one key: a small array)
        codes = {r: np.asarray(roles[r].codes).astype(_uint(roles[r].n_classes.bit_length()))
                 for r in every if roles[r].codes is not None and any(w and r in plans[i][0] and not (r == "attr" and f)
                                                                      for i, (w, f) in enumerate(zip(wide, flags)))}

        def deal(i: int) -> tuple | None:
            used, sides, sizes, _ = plans[i]
            assert counted is not None
            # a row's content: its labels (the attribute's is its stratum when stratified) and a real weight
            contents = [codes[r] if roles[r].codes is not None else octets[r] for r in used
                        if not (r == "attr" and flags[i])]
            if real:
                contents.append(_float_bits(np.asarray(weights)))
            with np.errstate(over="ignore"):  # (a thread's own state)
                key = _keys(used, octets, counted.of(used), sides, sizes, every_w, None)[0]
                dealt = _deal_rows(key, by_stratum if flags[i] else None, contents, seed, positions[:n], alternating)
            if dealt is None or weights is not None:
                return dealt
            np.subtract(1, dealt[0], out=dealt[0])  # every row's share of fold 0 (0 or 1), made here, in the thread
            if fold_sides is None:
                return dealt
            return (*dealt, fold_counts(roles, fold_sides[i], octets, None, dealt[1]))

        dealt_rows = dict(zip(np.flatnonzero(wide).tolist(), in_threads(deal, np.flatnonzero(wide).tolist(), n)))
    with np.errstate(over="ignore"):
        for i, stratified_read in enumerate(flags):
            used, sides, sizes, parts = plans[i]
            dealt = dealt_rows.get(i)
            if dealt is not None:  # else by content, below (or two rows share a key but not their labels)
                out.append(dealt[0])
                if weights is None:  # (already every row's share of fold 0)
                    shares.add(i)
                fold0.append(None if weights is not None else dealt[1])
                counts0.append(dealt[2] if len(dealt) > 2 else None)
                continue
            content, bits = None, 0
            for r in parts:
                if r not in digits:
                    digits[r] = _role_digit(roles[r], octets.get(r), positions[:n])
                digit, digit_bits = digits[r]
                content, bits = _join(content, bits, digit, digit_bits, positions[:n])
            assert content is not None  # a statistic reads at least one role
            if row_of is not None:
                content = content[row_of]
            # the items by content (then position): every hash below is computed once per distinct content
            order, starts = _group(content, bits, positions[:n_items])
            del content
            mult = np.diff(np.append(starts, n_items))  # the items (rows or units) of each content
            rep = order[starts] if row_of is None else row_of[order[starts]]  # a row of each content
            by_row = len(rep) * _FEW_CONTENTS > n
            count_units: np.ndarray | None
            if not by_row:  # the counts and hashes of one row of each content, counted mult times
                labels = {r: _take(m, rep) for r, m in used.items()}
                label_bytes = {r: x[rep] for r, x in octets.items() if r in used}
                stats = _byte_stats(labels, sides, label_bytes, mult)
                stats = _stats(labels, sides, mult) if stats is None else stats
                count_units, w_hash = mult, (_weight_hash(np.asarray(weights)[rep]) if real else None)
            else:  # about as many contents as rows: those of every row (every read's counts at once), as before
                if counted is None:
                    counted, every_w = _every_stats(every, every_sides, octets, units, weights if real else None)
                stats = counted.of(used)
                labels, count_units, w_hash = used, units, every_w
                label_bytes = octets
            key, tie = _keys(labels, label_bytes, stats, sides, sizes, w_hash, count_units)
            if by_row:  # hashed row by row: each content's
                key = key[rep]
                tie = None if tie is None else tie[rep]
            # the stratum of each content (an indicator matrix: its exact set of groups); the contents are
            # ordered by stratum first, so each stratum's items are consecutive
            strata = np.unique(digits["attr"][0][rep], return_inverse=True)[1].ravel() if stratified_read else \
                np.zeros(len(rep), dtype=np.intp)  # unstratified: all the rows one stratum
            folds = np.empty(n_items, dtype=np.int8)
            folds[order] = _deal(mult, key, strata, tie, seed, positions[:n_items], alternating)
            fold0.append(None)
            counts0.append(None)
            if row_of is None:
                out.append(folds)
            else:
                out.append(np.bincount(row_of[folds == 0], minlength=n).astype(np.float64))
    if weights is not None and units is None:  # a row goes whole: its weight, or nothing
        w = np.asarray(weights, dtype=np.float64)
        out = [np.where(f == 0, w, 0.0) for f in out]
    elif weights is None:
        out = [f if i in shares else (f == 0).astype(np.int8) for i, f in enumerate(out)]
    return out, (counted if weights is None else None), octets, fold0, counts0


#: the fewest rows for which :func:`in_threads` starts threads (fewer: the calls one after the other)
_THREAD_ROWS = 1 << 16


def in_threads(fn: Any, items: list, n_rows: int) -> list:
    """``[fn(x) for x in items]``, the calls in threads when there are several and the machine has several cores.

    Each call must depend on its item only (numpy releases the GIL in its
    sorts, takes, histograms and element-wise passes): the results are then
    the same whatever the number of threads. The BLAS libraries are held to
    one thread meanwhile (the calls' small products; no oversubscription).
    ``n_rows``: the rows the calls read; below :data:`_THREAD_ROWS`, no threads.
    """
    workers = min(len(items), _cores()) if n_rows >= _THREAD_ROWS else 1
    if workers <= 1:
        return [fn(x) for x in items]
    from concurrent.futures import ThreadPoolExecutor

    with one_blas_thread(), ThreadPoolExecutor(workers) as pool:
        return list(pool.map(fn, items))


#: the loaded BLAS libraries, found once (:func:`one_blas_thread`)
_BLAS: list = []


def one_blas_thread() -> Any:
    """A context in which the BLAS libraries run on one thread (threadpoolctl; restored after).

    The libraries are looked up once, at the first call (numpy's and scipy's
    are loaded by then), not at every call as ``threadpool_limits`` does.
    """
    if not _BLAS:
        from threadpoolctl import ThreadpoolController

        _BLAS.append(ThreadpoolController())
    return _BLAS[0].limit(limits=1, user_api="blas")


def _cores() -> int:
    """The cores this process may run on."""
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def fold_counts(roles: dict, sides: tuple, octets: dict, in_fold0: np.ndarray | None,
                rows: np.ndarray | None = None) -> _Stats | None:
    """The counts of the rows of fold 0 (``in_fold0`` 1), from the rows' bytes (:func:`_byte_stats`), or None.

    ``sides`` as in :func:`byte_counts` (attribute-side codes, task-side 0/1
    matrices whose bytes are in ``octets``); no same-side pairs. ``rows``:
    the rows of fold 0 in any order, when known (:func:`splits_and_counts`
    hands them back as the split dealt them, by stratum), else found from ``in_fold0``.
    """
    if any(roles[r].codes is None for r in sides[0]) or any(r not in octets for r in sides[1]):
        return None
    # the rows of fold 0 ordered by their attribute-side classes: the bytes taken once, in group order
    rows = np.flatnonzero(np.asarray(in_fold0)) if rows is None else np.asarray(rows)
    key = np.zeros(len(rows), dtype=np.intp)
    for r in sides[0]:
        key *= roles[r].n_classes
        key += np.take(np.asarray(roles[r].codes), rows)
    n_ids = int(np.prod([roles[r].n_classes for r in sides[0]]))
    if n_ids << 16 > _TOGETHER_BINS and not (key[1:] >= key[:-1]).all():  # (a split by class already is in order)
        # (a few classes: the rows in any order, the class above the bytes in a histogram's key, _keyed_words)
        rows = rows[np.argsort(key.astype(_uint(int(key.max(initial=0)).bit_length())), kind="stable")]  # counting sort
    sub = {r: _take(roles[r], rows) for r in sides[0]}
    sub.update({r: roles[r] for r in sides[1]})  # their classes (their rows are read from the bytes)
    return _byte_stats(sub, sides, {r: np.take(octets[r], rows, axis=0) for r in sides[1]}, diag=False)


def _every_stats(every: dict, sides: tuple, octets: dict, units: np.ndarray | None,
                 weights: np.ndarray | None) -> tuple[_Stats, np.ndarray | None]:
    """The counts of every row in every role read (:func:`_byte_stats`, else :func:`_stats`), and the weights' hashes.

    ``weights``: non-integer weights (part of a row's content), else None.
    """
    counted = _byte_stats(every, sides, octets, units)
    counted = _stats(every, sides, units) if counted is None else counted
    return counted, (None if weights is None else _weight_hash(np.asarray(weights)))


#: rows whose content and position need more bits than this are hashed and dealt row by row (:func:`_deal_rows`)
_WORD_BITS = 64


def _wide(parts: tuple, roles: dict, octets: dict, n: int) -> bool:
    """Whether the rows are dealt row by row: every part of a content held as codes or bytes, and too wide for a word.

    Wide rows are nearly all distinct: grouping them by content would renumber
    words in sorts of every row, for few repeated contents.
    """
    bits = 0
    for r in parts:
        if r is None:  # a non-integer weight
            bits += 64
        elif roles[r].codes is not None:
            bits += (roles[r].n_classes - 1).bit_length()
        elif r in octets:
            bits += roles[r].n_classes
        else:  # probabilities: by content
            return False
    return bits + _index_bits(n) > _WORD_BITS


def _deal_rows(key: np.ndarray, strata: tuple | None, contents: list, seed: np.ndarray, positions: np.ndarray,
               alternating: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The fold of every row, rows hashed one by one: :func:`_deal` without grouping the rows by content first.

    ``strata``: every row's stratum, the strata's bounds and the strata as
    words (:func:`_stratum_ids`; None: unstratified); ``contents``: the arrays that make a row's content within
    its stratum (codes, bytes, weights' bits). The rows of a stratum are
    ordered by the hash of ``(key, 0)`` (its top bits, then the position);
    rows of one key are rows of one content (checked on ``contents``), so
    their occurrences are their order among them; those rows are hashed
    again with their occurrences and the stratum is ordered again. The folds
    are then those of :func:`_deal`. The rows whose top bits tie are checked
    first: when the rows of each run share their content, they share the key
    and the whole hash (the runs are the keys' runs, no hash compared); else
    the runs are ordered by the whole hash and checked as the keys' runs.
    Returns every row's fold and the rows of fold 0 (:func:`_fold0_rows`),
    or None when two rows of a stratum share a key but not their content
    (classes the data cannot tell apart, or a collision), or two hashes
    tie: the caller then groups the rows by content.
    """
    n = len(key)
    ids, bounds, words = (None, np.array([0, n]), None) if strata is None else strata
    u = np.zeros(n, dtype=np.uint64)  # the occurrences: 0 for now
    scratch = key.copy()
    _item_hash(u, scratch, seed)
    sliced = len(bounds) - 1 <= _MAX_SLICES
    # the rows whose hashes' top bits tie (in runs): rows of one content there share a key, hence the whole hash
    order, repeats = _packed_order(u, bounds, positions, scratch, ids, words) if sliced else \
        _ordered(u, bounds, positions, scratch, ids, words)
    found = _repeated(order, repeats, contents)
    if found is None and sliced:  # top bits tied by chance, or a key of different contents: by the whole hash
        order, repeats = _untied(u, bounds, order, repeats)
        found = _repeated(order, repeats, contents)
    if found is None:
        return None
    rows, occurrences = found
    if len(rows):  # rows of one key (runs of the order), hashed again with their occurrences
        u[rows] = _item_hash(occurrences, key[rows], seed)
        order, repeats = _ordered(u, bounds, positions, scratch, ids, words)
        if len(repeats):
            return None
    return _dealt(order, bounds, positions, alternating), _fold0_rows(order, bounds)


def _repeated(order: np.ndarray, repeats: np.ndarray, contents: list) -> tuple[np.ndarray, np.ndarray] | None:
    """The rows that repeat the row before them in ``order`` (places ``repeats + 1``), and their occurrences.

    Consecutive repeats make runs (one key); a row's occurrence is its place
    in its run (0 for the run's first row, not listed). None when a run's
    rows differ in ``contents``. The rows come back in increasing order (their
    occurrences alongside), so that reading their contents, keys and hashes
    goes through memory in order, not at random.
    """
    again = repeats + 1  # the items that repeat the one before them
    starts = np.ones(len(again), dtype=bool)
    np.not_equal(again[1:], repeats[:-1] + 2, out=starts[1:])  # a new run: not right after the last repeat
    run = np.cumsum(starts) - 1  # every repeat's run
    heads = repeats[starts]  # the first item of each run
    occurrences = again - heads[run]
    rows, by_row = _sorted_rows(order[again])
    run, firsts = run[by_row], order[heads]
    if not all(_rows_equal(x, rows, firsts, run) for x in contents):
        return None
    return rows, occurrences[by_row].astype(np.uint64)


def _sorted_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct non-negative row numbers in increasing order, and the permutation that orders them.

    One sort of ``(row, place)`` packed in 64-bit words (a value sort: several
    times faster than an arg-sort).
    """
    ib = _index_bits(len(rows) + 1)
    packed = rows.astype(np.uint64) << np.uint64(ib)
    packed |= np.arange(len(rows), dtype=np.uint64)
    packed.sort()
    by_row = (packed & np.uint64((1 << ib) - 1)).view(np.int64)
    packed >>= np.uint64(ib)
    return packed.view(np.int64), by_row


def _fold0_rows(order: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """The items of fold 0 from :func:`_stratum_order` (positions 0, 2, 4, ... of each stratum), in increasing order.

    Stratum by stratum, increasing within each (with more than
    :data:`_MAX_SLICES` strata: all of them in increasing order), so that
    the rows' bytes are then read in order, not at random.
    """
    if len(bounds) - 1 > _MAX_SLICES:
        offset = np.arange(len(order)) - np.repeat(bounds[:-1], np.diff(bounds))
        return np.sort(order[offset % 2 == 0])
    small = _uint(_index_bits(len(order) + 1))  # (a sort of narrower words: faster)
    return np.concatenate([np.sort(order[a:b:2].astype(small)) for a, b in zip(bounds[:-1].tolist(),
                                                                              bounds[1:].tolist())]
                          or [order[:0].astype(small)]).astype(np.intp)


def _stratum_ids(attr: LabelMatrix, digit: np.ndarray, bits: int, positions: np.ndarray) -> tuple:
    """Every row's stratum (its class, or its exact set of groups, numbered), the strata's bounds, the strata as words.

    The bounds: where each stratum's rows start and end once the rows are
    ordered by stratum; the words: :func:`_stratum_words`.
    """
    if attr.codes is not None:
        ids, n_strata = np.asarray(attr.codes, dtype=np.intp), attr.n_classes
    else:
        ids = _compress(digit, bits, positions)[0]
        n_strata = int(ids.max(initial=0)) + 1
    bounds = np.append(0, np.cumsum(np.bincount(ids, minlength=n_strata)))
    return ids, bounds, _stratum_words(ids, n_strata)


def _stratum_words(ids: np.ndarray, n_strata: int) -> np.ndarray | None:
    """Every item's stratum in the top bits of a uint64 (None for one stratum): packed above the hash to sort."""
    if n_strata <= 1 or n_strata > _MAX_SLICES:
        return None
    return ids.astype(np.uint64) << np.uint64(64 - _index_bits(n_strata))


def _repeats(ordered: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """Per item but the first, whether it equals the item before it in the same stratum."""
    same = ordered[1:] == ordered[:-1]
    inner = bounds[1:-1]
    same[inner[(inner > 0) & (inner < len(ordered))] - 1] = False
    return same


def _rows_equal(x: np.ndarray, a: np.ndarray, b: np.ndarray, of: np.ndarray) -> bool:
    """Whether rows ``a`` of ``x`` (1-D, or rows of a 2-D array) equal rows ``b[of]``, pair by pair.

    The rows ``b`` (the first of each run of repeats: far fewer) are taken once each.
    """
    x = np.asarray(x)
    return bool(np.array_equal(np.take(x, a, axis=0), np.take(np.take(x, b, axis=0), of, axis=0)))


def _keys(labels: dict, label_bytes: dict, stats: _Stats, sides: tuple, sizes: tuple, w_hash: np.ndarray | None,
          units: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
    """Every row's key (its labels, every class named by its signature) and, when classes tie, its tie-breaker.

    The class signatures come from ``stats`` (:func:`_class_signatures`),
    refined on the rows when the counts cannot tell classes apart
    (:func:`_refine`); the key hashes a row's labels with the classes named by
    their signatures, so a renaming changes nothing; the tie-breaker (None
    unless classes are still tied) with the classes named by their positions.
    """
    sigs = _class_signatures(stats, sides, sizes)
    empty = [np.all([stats.count[r] == 0 for r in side], axis=0) if side else np.ones(k, dtype=bool)
             for side, k in zip(sides, sizes)]
    tied = any(_tied(x, e) for x, e in zip(sigs, empty))
    if tied:  # classes the counts cannot tell apart: look at the rows that hold them
        sigs = _refine(labels, sides, sigs, w_hash, units)
        tied = any(_tied(x, e) for x, e in zip(sigs, empty))
    size = next(iter(labels.values())).n_rows
    key = np.zeros(size, dtype=np.uint64) if w_hash is None else w_hash
    roles = list(labels)
    lead, table = 0, np.zeros(1, dtype=np.uint64)  # the leading roles of codes: their part of the key per class
    ids: np.ndarray | None = None  # the leading roles' classes as one number
    while w_hash is None and lead < len(roles) and labels[roles[lead]].codes is not None and \
            len(table) * labels[roles[lead]].n_classes <= _KEY_TABLE:
        m = labels[roles[lead]]
        per_class = _positional(LabelMatrix(m.name, m.classes, codes=np.arange(m.n_classes)),
                                sigs[0] if roles[lead] in _ATTR_ROLES else sigs[1], _role_salt(roles[lead]))
        table = _combine(np.repeat(table, m.n_classes), np.tile(per_class, len(table)))
        if ids is None:
            ids = np.array(m.codes, dtype=np.intp)
        else:
            ids *= m.n_classes
            ids += np.asarray(m.codes)
        lead += 1
    if ids is not None:
        key = np.take(table, ids)
    for r in roles[lead:]:  # every class named by its signature: a renaming changes nothing
        sig = sigs[0] if r in _ATTR_ROLES else sigs[1]
        key = _label_hash(labels[r], label_bytes.get(r), sig, _role_salt(r), key)
    tie = None
    if tied:  # equal keys of different labels (classes the data cannot tell apart): their positions
        tie = np.zeros(size, dtype=np.uint64) if w_hash is None else w_hash
        for r in labels:
            tie = _combine(tie, _label_hash(labels[r], label_bytes.get(r),
                                            np.arange(labels[r].n_classes, dtype=np.uint64), _role_salt(r)))
    return key, tie


def _deal(mult: np.ndarray, key: np.ndarray, strata: np.ndarray, tie: np.ndarray | None, seed: np.ndarray,
          positions: np.ndarray, alternating: np.ndarray) -> np.ndarray:
    """The fold (0 or 1) of every item, the items listed by content: ``mult[c]`` items of content ``c``, in turn.

    Content ``c`` has the key ``key[c]``, the stratum ``strata[c]``
    (non-decreasing) and, when some keys are shared by different labels, the
    tie-breaker ``tie[c]``. An item's occurrence counts the items of its
    stratum with the same key before it: those of the contents of that key
    ordered before its own (by ``tie``), then those of its own content
    before it (by position). Within each stratum the items, ordered by
    ``H(seed, key, occurrence)``, are dealt alternately to fold 0 and fold 1.
    """
    n_items = len(positions)
    if n_items == 0:
        return np.zeros(0, dtype=np.int8)
    assert (strata[1:] >= strata[:-1]).all(), "the contents must be ordered by stratum"
    ordered = np.sort(key)
    if (ordered[1:] == ordered[:-1]).any():  # contents of one stratum and key: one after the other
        by_key = np.lexsort((key, strata)) if tie is None else np.lexsort((tie, key, strata))
        ks, ss = key[by_key], strata[by_key]  # (by their labels' positions when they differ)
        new = np.ones(len(by_key), dtype=bool)
        new[1:] = (ks[1:] != ks[:-1]) | (ss[1:] != ss[:-1])
        before = np.cumsum(mult[by_key]) - mult[by_key]  # items of the contents before, in that order
        offset = np.empty(len(by_key), dtype=np.int64)
        offset[by_key] = before - np.maximum.accumulate(np.where(new, before, 0))
    else:  # every content its own key
        offset = np.zeros(len(key), dtype=np.int64)
    first = np.cumsum(mult) - mult  # where each content's items start in the list
    u = np.repeat((offset - first).astype(np.uint64), mult)
    u += positions  # the occurrence
    scratch = np.repeat(key, mult)
    _item_hash(u, scratch, seed)
    # deal each stratum's items, in the order of their keys, alternately to fold 0 and fold 1
    counts = np.bincount(strata, weights=mult).astype(np.int64)
    return _alternate(u, np.append(0, np.cumsum(counts)), positions, alternating, scratch)


def _order_by(first: np.ndarray, then: np.ndarray) -> np.ndarray:
    """``np.lexsort((then, first))`` (ties by position) for non-negative ids ``first`` and non-negative ``then``.

    Both renumbered as small integers and joined in one (:func:`_join`), the
    order is one sort of packed words (:func:`_group`); other inputs: ``np.lexsort``.
    """
    first, then = np.asarray(first), np.asarray(then)
    positions = np.arange(len(first), dtype=np.uint64)
    digits = []
    for x in (first, then):
        if x.dtype.kind in "biu" and (len(x) == 0 or (x.min() >= 0 and x.max() < 2**62)):
            bits = int(x.max(initial=0)).bit_length()
            digits.append((x.astype(_uint(bits)), bits))
        elif x.dtype.kind == "f" and (len(x) == 0 or x.min() >= 0):  # non-negative: the bits keep the order
            digits.append(_compress(_float_bits(x), 64, positions))
        else:
            return np.lexsort((then, first))
    (a, a_bits), (b, b_bits) = digits
    joined, bits = _join(a, a_bits, b, b_bits, positions)
    return _group(joined, bits, positions)[0]


def crossfit_folds(attr: LabelMatrix, task_side: Sequence[LabelMatrix | None], *,
                   attr_pred: LabelMatrix | None = None, weights: np.ndarray | None = None,
                   random_state: Any = None, stratified: bool = True, units: np.ndarray | None = None) -> np.ndarray:
    """Every row's share of fold 0 for one statistic: :func:`crossfit_splits` with the roles given.

    ``attr`` is the protected attribute's ground truth (the strata),
    ``task_side`` the task-side matrices the statistic reads (None entries
    skipped), ``attr_pred`` the predicted attribute when it reads it; usable
    on any batch of rows.
    """
    task = [m for m in task_side if m is not None]
    if len(task) > 2:
        raise ValueError("crossfit_folds: at most two task-side matrices (the ground truth and the predictions)")
    roles = {"attr": attr, **({"attr_pred": attr_pred} if attr_pred is not None else {}),
             **dict(zip(("task", "task_pred"), task))}
    return crossfit_splits(roles, [tuple(roles)], weights=weights, random_state=random_state,
                           stratified=stratified, units=units)[0]


def fold_weights(share0: np.ndarray, weights: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Every row's weight in fold 0 and in fold 1, from its share of fold 0 (:func:`crossfit_splits`)."""
    w0 = np.asarray(share0, dtype=np.float64)
    total = np.ones(len(w0)) if weights is None else np.asarray(weights, dtype=np.float64)
    return w0, total - w0


def align_splits(splits: Sequence[np.ndarray], groups: Sequence[np.ndarray], content: np.ndarray) -> list[np.ndarray]:
    """Splits of the same rows, re-dealt among interchangeable rows so that the joint cells are canonical.

    A split drawn from some of the roles (``groups[s]``: per row, the id of
    its content in those roles) treats the rows of one group as
    interchangeable: which of them goes to which fold depends on their order.
    Each split keeps how many rows of every group it sends to each fold (so
    its fold tables do not change), but its folds are dealt again, sorted,
    along the rows of the group ordered by their full ``content`` (every role
    of the call) and then by position. The cells (content, fold of split 1,
    fold of split 2, ...) then depend on the multiset of rows only, not on
    their order.
    """
    content = np.asarray(content)
    out = []
    for split, group in zip(splits, groups):
        group = np.asarray(group)
        dealt = np.empty_like(split)
        dealt[_order_by(group, content)] = split[_order_by(group, split)]
        out.append(dealt)
    return out


# --------------------------------------------------------------------------- #
# the streamed layers: the options of an accumulator, resolved once
# --------------------------------------------------------------------------- #
def stream_cross_fit(cross_fit: Any, random_state: Any, has_train: bool) -> tuple[bool | None, int]:
    """An accumulator's ``cross_fit`` and ``cross_fit_random_state``, checked once at construction.

    Returns ``(cross_fit, seed)``: ``cross_fit`` as given (None, True or
    False: whether a training set arrives is known only at ``compute``) and
    the 64-bit seed of the split (:func:`split_seed`: a ``Generator`` draws it
    here, once, so that every batch is split with the same seed).
    ``cross_fit=True`` with fixed training counts (``has_train``) raises
    ``ValueError`` as in :func:`check_cross_fit`.
    """
    check_cross_fit(cross_fit, has_train)
    return (None if cross_fit is None else bool(cross_fit)), split_seed(random_state)


def stream_check_train(cross_fit: bool | None) -> None:
    """``ValueError`` when training rows reach an accumulator built with ``cross_fit=True``."""
    if cross_fit:
        raise ValueError("cross_fit=True needs the signs to come from the test rows, but training rows were given "
                         "(update_train / attr_train fix the signs: there is nothing to cross-fit); construct the "
                         "accumulator with cross_fit=None")


#: the note of a streamed cross-fitted bootstrap: one split of every row, as the function's
STREAM_SPLIT_NOTE = ("streamed: the rows were split in two folds once, over every row counted (the function's split, "
                     "so the value does not depend on the batching); the replicates resample the rows in random "
                     "groups (docs/definitions.md, 'No training set')")
