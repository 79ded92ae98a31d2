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
  fold tables;
* **invariant to renaming classes** (the attribute's, the task's, or
  reordering an indicator matrix's columns): a class enters a row's content
  through a signature computed from the data (the rows that hold it, in
  rounds, as a graph's colours are refined), never through its name or its
  position in the sorted class list. Two classes whose rows are identical in
  every respect up to swapping them share a signature; the rows they tell
  apart are then ordered by their labels' positions, so the split still
  ignores the order of the rows;
* **integer weights split as repeated rows**: a row of integer weight w is
  w units, dealt like w rows (its weight may then be shared by the folds);
  a non-integer weight is part of a row's content and the row goes to one
  fold whole.

Within a class, the rows ordered by their hash are dealt alternately to fold
0 and fold 1 (positions 0, 2, 4, ... to fold 0). The split of one seed is
one random halving; ``split_seed(None)`` is the fixed seed 0, so the same
data always give the same value.

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

__all__ = ["DEFAULT_SPLIT_SEED", "MAX_UNITS", "N_FOLDS", "align_splits", "check_cross_fit", "crossfit_folds",
           "crossfit_splits", "describe", "fold_weights", "split_seed", "weight_units"]

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
    from threadpoolctl import threadpool_limits

    # one BLAS thread: the products are small and memory-bound (threads stall on a loaded machine)
    with threadpool_limits(limits=1, user_api="blas"):
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
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
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
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
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


def _strata(attr: LabelMatrix) -> np.ndarray:
    """The class of every row (an indicator matrix: its exact set of groups), as integer labels."""
    if attr.codes is not None:
        return np.asarray(attr.codes, dtype=np.int64)
    h = _positional(attr, np.arange(attr.n_classes, dtype=np.uint64), _SALT_ATTR)
    return np.unique(h, return_inverse=True)[1].astype(np.int64).ravel()


def _role_salt(role: str) -> np.uint64:
    """A role's salt: by its place in the canonical order of roles, whatever order a caller lists it in."""
    return _SALT_TASK + np.uint64((_ROLE_ORDER.index(role) if role in _ROLE_ORDER else len(_ROLE_ORDER)) << 32)


def _sort_by(key: np.ndarray, strata: np.ndarray, tie: np.ndarray | None = None) -> np.ndarray:
    """An order of the rows by class, then ``key``, then ``tie`` (rows with equal class, key and tie: any order)."""
    order = np.argsort(key) if tie is None else np.lexsort((tie, key))
    s = strata[order]
    small = strata.max(initial=0) < 2**16
    # a stable sort of small integers is a radix sort (linear)
    by_class = np.argsort(s.astype(np.uint16) if small else s, kind="stable")
    return order[by_class]


# --------------------------------------------------------------------------- #
# the split
# --------------------------------------------------------------------------- #
_ATTR_ROLES = ("attr", "attr_pred")
#: the roles in their canonical order (a role's place salts its hash, whatever order a caller lists it in)
_ROLE_ORDER = ("attr", "attr_pred", "task", "task_pred")


def _canonical(names: Iterable[str]) -> list[str]:
    return sorted(names, key=lambda r: (_ROLE_ORDER.index(r) if r in _ROLE_ORDER else len(_ROLE_ORDER), r))


#: integer weights count as that many rows (units) while their total stays below this; else whole rows are split
MAX_UNITS = 1 << 24


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
                    random_state: Any = None) -> list[np.ndarray]:
    """One split per statistic: every row's share of fold 0, each attribute class halved.

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
        One positive weight per row. Integer weights count as that many rows
        ("units": a row of weight 3 is split like three rows, so integer
        weights split exactly as repeated rows do); other weights make the
        weight part of a row's content, and a row goes to one fold whole.
    random_state : None, int or numpy Generator
        The seed (:func:`split_seed`; None: the fixed default). One seed draws
        every split.

    Returns
    -------
    list of ndarray
        Per statistic, every row's weight in fold 0 (its weight in fold 1 is
        the rest): 0 or 1 without weights (int8), 0 or its weight with
        non-integer weights, from 0 to its weight with integer weights
        (float64). Every attribute class has ``ceil(n_c / 2)`` rows (units) in
        fold 0 and ``floor(n_c / 2)`` in fold 1.

    Notes
    -----
    The classes of each side are put in a canonical order computed from the
    data (:func:`_class_signatures`, :func:`_refine`), and a row's content
    ``k_i`` is a hash of its labels in that order (and of a non-integer
    weight); ``j_i`` counts the rows (units) of the same class and content
    before it. The key ``u_i = H(seed, k_i, j_i)`` orders the rows of a
    class, and positions 0, 2, 4, ... go to fold 0. Rows with the same
    content are interchangeable, so the fold tables depend on the multiset
    of rows only: not on their order, nor on the classes' names.
    """
    seed = np.array([split_seed(random_state)], dtype=np.uint64)
    attr = roles["attr"]
    n = attr.n_rows
    strata = _strata(attr)
    units = weight_units(weights)
    # a non-integer weight is part of a row's content; an integer weight is a number of rows
    wbits = None if weights is None or units is not None else \
        np.where(np.asarray(weights) == 1, np.uint64(0), _mix(_float_bits(weights) ^ _SALT_WEIGHT))
    every = {r: roles[r] for r in _canonical({r for read in reads for r in read if roles.get(r) is not None})}
    every_sides = (tuple(r for r in every if r in _ATTR_ROLES), tuple(r for r in every if r not in _ATTR_ROLES))
    counted = _stats(every, every_sides, units)  # one pass: every statistic's counts are among them
    out = []
    with np.errstate(over="ignore"):
        for read in reads:
            used = {r: roles[r] for r in _canonical([r for r in read if roles.get(r) is not None])}
            sides = (tuple(r for r in used if r in _ATTR_ROLES), tuple(r for r in used if r not in _ATTR_ROLES))
            sizes = (attr.n_classes, next((used[r].n_classes for r in sides[1]), 0))
            stats = _Stats({r: counted.count[r] for r in used},
                           {p: v for p, v in counted.diag.items() if set(p) <= set(used)},
                           {p: v for p, v in counted.cross.items() if set(p) <= set(used)})
            sigs = _class_signatures(stats, sides, sizes)
            empty = [np.all([stats.count[r] == 0 for r in side], axis=0) if side else np.ones(k, dtype=bool)
                     for side, k in zip(sides, sizes)]
            tied = any(_tied(x, e) for x, e in zip(sigs, empty))
            if tied:  # classes the counts cannot tell apart: look at the rows that hold them
                sigs = _refine(used, sides, sigs, wbits, units)
                tied = any(_tied(x, e) for x, e in zip(sigs, empty))
            key = np.zeros(n, dtype=np.uint64) if wbits is None else wbits
            for r in used:  # every class named by its signature: a renaming changes nothing
                sig = sigs[0] if r in _ATTR_ROLES else sigs[1]
                key = _combine(key, _positional(used[r], sig, _role_salt(r)))
            tie = None
            if tied:  # equal keys of different labels (classes the data cannot tell apart): their positions
                tie = np.zeros(n, dtype=np.uint64) if wbits is None else wbits
                for r in used:
                    tie = _combine(tie, _positional(used[r], np.arange(used[r].n_classes, dtype=np.uint64),
                                                    _role_salt(r)))
            if units is None:
                out.append(_deal(key, strata, tie, seed))
                continue
            row_of = np.repeat(np.arange(n), units)  # every unit of weight is dealt like a row
            in_fold0 = _deal(key[row_of], strata[row_of], None if tie is None else tie[row_of], seed) == 0
            out.append(np.bincount(row_of[in_fold0], minlength=n).astype(np.float64))
    if weights is not None and units is None:  # a row goes whole: its weight, or nothing
        w = np.asarray(weights, dtype=np.float64)
        out = [np.where(f == 0, w, 0.0) for f in out]
    elif weights is None:
        out = [(f == 0).astype(np.int8) for f in out]
    return out


def _deal(key: np.ndarray, strata: np.ndarray, tie: np.ndarray | None, seed: np.ndarray) -> np.ndarray:
    """The fold (0 or 1) of every item: within each class, ordered by ``H(seed, key, occurrence)``, alternately."""
    n = len(key)
    with np.errstate(over="ignore"):
        # occurrence of each item among the items of its class with the same content
        order = _sort_by(key, strata)
        ks, ss = key[order], strata[order]
        same = (ks[1:] == ks[:-1]) & (ss[1:] == ss[:-1])
        if tie is not None and same.any() and (tie[order][1:][same] != tie[order][:-1][same]).any():
            order = _sort_by(key, strata, tie)  # equal keys of different labels: ordered by their labels
            ks, ss = key[order], strata[order]
        new = np.ones(n, dtype=bool)
        new[1:] = (ks[1:] != ks[:-1]) | (ss[1:] != ss[:-1])
        starts = np.flatnonzero(new)
        occurrence = np.empty(n, dtype=np.uint64)
        occurrence[order] = (np.arange(n) - np.repeat(starts, np.diff(np.append(starts, n)))).astype(np.uint64)
        u = _combine(_mix(seed), _combine(key, occurrence ^ _SALT_OCCURRENCE))
    # deal each class's items, in the order of their keys, alternately to fold 0 and fold 1
    order = _sort_by(u, strata)
    ss = strata[order]
    new = np.ones(n, dtype=bool)
    new[1:] = ss[1:] != ss[:-1]
    starts = np.flatnonzero(new)
    position = np.arange(n) - np.repeat(starts, np.diff(np.append(starts, n)))
    folds = np.empty(n, dtype=np.int8)
    folds[order] = (position & 1).astype(np.int8)
    return folds


def crossfit_folds(attr: LabelMatrix, task_side: Sequence[LabelMatrix | None], *,
                   attr_pred: LabelMatrix | None = None, weights: np.ndarray | None = None,
                   random_state: Any = None) -> np.ndarray:
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
    return crossfit_splits(roles, [tuple(roles)], weights=weights, random_state=random_state)[0]


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
        dealt[np.lexsort((content, group))] = split[np.lexsort((split, group))]
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
