"""Counts core: co-occurrence tables built in one vectorized pass.

Every co-occurrence metric of biasamp is a pure function of a few count
tables (STYLE.md, "counts first"). :class:`CooccurrenceCounts` holds them all
as one Gram matrix of augmented label matrices::

    L = [1 | A | Â]      (N x (1 + K_A + K_A))   "left" roles: attribute side
    R = [1 | T | T̂]      (N x (1 + K_T + K_T))   "right" roles: task side
    G = Lᵀ R

so that ``G`` contains ``n``, every column sum (``#a``, ``#t``, ``#â``,
``#t̂``) and every cross count (``#(a,t)``, ``#(a,t̂)``, ``#(â,t)``,
``#(â,t̂)``) from one matrix product per row block. Soft predictions make the
counts expected counts. Blocks are converted to float32 (exact for 0/1
inputs: every partial sum is an integer below 2**24) and accumulated in
float64, so no float copy of a whole ``N x K`` input is ever made.

Sample weights (:ref:`def-weights`) scale the rows of the left factor,
``G = Lᵀ diag(w) R``: every count becomes a sum of weights (integer weights
count exactly like repeated rows). Missing values (:ref:`def-missing`) are
handled by the shared row layer before encoding, and what it did is kept
with the table (``CooccurrenceCounts.rows``).

Tables add: counts of disjoint row sets sum to the counts of their union, so
data may arrive in batches (:meth:`CooccurrenceCounts.update`) or partitions
(``a + b``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from biasamp._core.crossfit import byte_counts, fold_counts, in_threads
from biasamp._core.labels import LabelMatrix, check_consistent_length, encode_labels, read_task_roles
from biasamp._core.policy import EXPECTED_RATES, check_soft, check_threshold, harden_roles, joined
from biasamp._core.policy_options import BINARY_TASK, DEFAULT_THRESHOLD
from biasamp._core.rows import RowFilter, add_filters, select_rows
from biasamp._core.validation import check
from biasamp.exceptions import UnknownKeyError

__all__ = ["CooccurrenceCounts"]

ATTR_ROLES = ("attr", "attr_pred")
TASK_ROLES = ("task", "task_pred")
_BLOCK_BYTES = 4 << 20  # target size of one converted row block


def _layout(roles: Sequence[str], sizes: Sequence[int]) -> dict[str, slice]:
    out, start = {}, 1  # column 0 is the constant 1
    for role, size in zip(roles, sizes):
        out[role] = slice(start, start + size)
        start += size
    return out


@functools.lru_cache(maxsize=1)
def _blas_controller():
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def _blocks(left: Sequence[LabelMatrix], right: Sequence[LabelMatrix], n: int, lbuf: np.ndarray, rbuf: np.ndarray,
            lslices: dict, rslices: dict):
    """Row blocks ``(start, stop, left block, right block)``: the roles converted into the buffers' columns."""
    rows = len(lbuf)
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        lb, rb = lbuf[:stop - start], rbuf[:stop - start]
        for m in left:
            m.block(start, stop, lb[:, lslices[m.name]])
        for m in right:
            m.block(start, stop, rb[:, rslices[m.name]])
        yield start, stop, lb, rb


def _gram(
    left: Sequence[LabelMatrix], right: Sequence[LabelMatrix], n: int, pairs: frozenset | None = None,
    weights: np.ndarray | None = None,
) -> tuple[np.ndarray, frozenset]:
    """``[1|left...]ᵀ diag(w) [1|right...]`` accumulated over row blocks (float64).

    ``pairs`` names the (left role, right role) cross counts that are needed
    (default: all). Every column sum and ``n`` are always counted. For each
    right role only the prefix of the left roles covering its needed pairs
    is multiplied (left roles come in ``ATTR_ROLES`` order, so BiasAmp→
    skips ``Âᵀ T̂``). Returns the Gram matrix and the set of pairs that were
    *not* counted (their block is zero and must not be read).

    Each block is converted to float32 (exact for 0/1 data: every partial sum
    is an integer below 2**24; float64 for soft data) and multiplied with BLAS
    limited to one thread: the products are small and memory-bound, and
    two-thread synchronisation per block stalls badly on a loaded machine.
    ``weights`` (one per row) scale the left block's rows, in float64.
    """
    wl = 1 + sum(m.n_classes for m in left)
    wr = 1 + sum(m.n_classes for m in right)
    soft = any(m.soft for m in (*left, *right))
    dtype = np.float64 if soft or weights is not None else np.float32
    rows = max(1024, min(n, _BLOCK_BYTES // (np.dtype(dtype).itemsize * max(wl, wr))))
    lbuf = np.empty((rows, wl), dtype=dtype)
    rbuf = np.empty((rows, wr), dtype=dtype)
    lbuf[:, 0] = 1
    lslices = _layout([m.name for m in left], [m.n_classes for m in left])
    rslices = _layout([m.name for m in right], [m.n_classes for m in right])
    plan, uncounted = [], set()
    for r in right:
        needed = [i for i, m in enumerate(left) if pairs is None or (m.name, r.name) in pairs]
        width = lslices[left[needed[-1]].name].stop if needed else 1
        plan.append((rslices[r.name], width))
        uncounted |= {(m.name, r.name) for m in left if lslices[m.name].stop > width}
    g = np.zeros((wl, wr), dtype=np.float64)
    with _blas_controller().limit(limits=1, user_api="blas"):
        for start, stop, lb, rb in _blocks(left, right, n, lbuf, rbuf, lslices, rslices):
            if weights is not None:
                w = weights[start:stop]
                lb[:, 0] = w
                lb[:, 1:] *= w[:, None]
            g[:, 0] += lb.sum(axis=0)  # n and the left column sums
            for cols, width in plan:  # right column sums (row 0) and cross counts
                g[:width, cols] += lb[:, :width].T @ rb[:, cols]
    return g, frozenset(uncounted)


def _histogram_splits(left: Sequence[LabelMatrix], right: Sequence[LabelMatrix],
                      splits: Sequence[tuple[np.ndarray, int, int]]) -> list[np.ndarray] | None:
    """:func:`_gram_splits` from histograms of the rows' bytes (no float conversion), or None.

    For attribute-side codes and 0/1 task-side matrices: every attribute-side
    role of every split becomes codes ``2 * class + fold`` and
    :func:`biasamp._core.crossfit.byte_counts` counts them against the
    task-side roles exactly; each fold's Gram matrix is read from those counts
    (its ``n`` and task column sums from the attribute's classes, one per row).
    """
    if any(m.codes is None for m in left):
        return None
    ka = left[0].n_classes
    lslices = _layout([m.name for m in left], [m.n_classes for m in left])
    rslices = _layout([m.name for m in right], [m.n_classes for m in right])
    roles: dict = {}
    for i, (in_fold0, width, _) in enumerate(splits):  # a split's roles: (class, fold) as one code
        for m in left:
            if lslices[m.name].stop <= width:
                roles[f"{m.name}@{i}"] = LabelMatrix(f"{m.name}@{i}", tuple(range(2 * ka)),
                                                     codes=2 * np.asarray(m.codes) + (1 - in_fold0))
    attr_side = tuple(roles)
    roles.update({m.name: m for m in right})
    counts = byte_counts(roles, (attr_side, tuple(m.name for m in right)), diag=False)
    if counts is None:
        return None
    out = []
    for i, (_, width, right_width) in enumerate(splits):
        g = np.zeros((2, width, right_width))
        for f in (0, 1):
            g[f, 0, 0] = counts.count[f"{left[0].name}@{i}"][f::2].sum()
            for m in left:
                if lslices[m.name].stop <= width:
                    g[f, lslices[m.name], 0] = counts.count[f"{m.name}@{i}"][f::2]
            for t in right:
                if rslices[t.name].stop <= right_width:
                    g[f, 0, rslices[t.name]] = counts.cross[(f"{left[0].name}@{i}", t.name)][f::2].sum(axis=0)
                    for m in left:
                        if lslices[m.name].stop <= width:
                            g[f, lslices[m.name], rslices[t.name]] = counts.cross[(f"{m.name}@{i}", t.name)][f::2]
        out.append(g)
    return out


def _gram_splits(left: Sequence[LabelMatrix], right: Sequence[LabelMatrix], n: int,
                 splits: Sequence[tuple[np.ndarray, int, int]]) -> list[np.ndarray]:
    """Per split of the rows in two folds, both folds' ``[1|left]ᵀ [1|right]`` (unweighted), in one pass.

    ``splits`` holds, per split, every row's fold as 1 (fold 0) or 0 (fold 1)
    and the widths of the left and right factors it reads (prefixes of
    ``[1|left...]`` and ``[1|right...]``). Each block is converted once (as
    :func:`_gram` converts it); per split its left rows are spread to their
    fold's columns of a twice as wide left factor, and one product gives both
    folds' counts. Returns per split a ``(2, wl, wr)`` array: exact integers
    for 0/1 labels, so each fold's counts are those of its rows alone.
    """
    wl = 1 + sum(m.n_classes for m in left)
    wr = 1 + sum(m.n_classes for m in right)
    dtype = np.float64 if any(m.soft for m in (*left, *right)) else np.float32
    rows = max(1024, min(n, _BLOCK_BYTES // (np.dtype(dtype).itemsize * max(2 * wl, wr))))
    lbuf = np.empty((rows, wl), dtype=dtype)
    rbuf = np.empty((rows, wr), dtype=dtype)
    lbuf[:, 0] = 1
    rbuf[:, 0] = 1
    lslices = _layout([m.name for m in left], [m.n_classes for m in left])
    rslices = _layout([m.name for m in right], [m.n_classes for m in right])
    spread = [np.zeros((rows, 2, width), dtype=dtype) for _, width, _ in splits]
    grams = [np.zeros((2 * width, right_width)) for _, width, right_width in splits]
    with _blas_controller().limit(limits=1, user_api="blas"):
        for start, stop, lb, rb in _blocks(left, right, n, lbuf, rbuf, lslices, rslices):
            b = stop - start
            for (in_fold0, width, right_width), sb, g in zip(splits, spread, grams):
                sb = sb[:b]
                sb[...] = 0
                sb[np.arange(b), 1 - in_fold0[start:stop]] = lb[:, :width]  # fold 0's columns first
                g += sb.reshape(b, 2 * width).T @ rb[:, :right_width]
    return [g.reshape(2, width, right_width) for g, (_, width, right_width) in zip(grams, splits)]


def _gram_of_counts(left: Sequence[LabelMatrix], right: Sequence[LabelMatrix], counts: Any, n: float) -> np.ndarray:
    """``[1|left...]ᵀ [1|right...]`` assembled from counts per role and per cross pair (``count``, ``cross``)."""
    lslices = _layout([m.name for m in left], [m.n_classes for m in left])
    rslices = _layout([m.name for m in right], [m.n_classes for m in right])
    g = np.zeros((1 + sum(m.n_classes for m in left), 1 + sum(m.n_classes for m in right)))
    g[0, 0] = n
    for m in left:
        g[lslices[m.name], 0] = counts.count[m.name]
    for t in right:
        g[0, rslices[t.name]] = counts.count[t.name]
        for m in left:
            g[lslices[m.name], rslices[t.name]] = counts.cross[(m.name, t.name)]
    return g


@dataclass(frozen=True, eq=False)
class CooccurrenceCounts:
    r"""Co-occurrence counts between attribute-side and task-side labels.

    Build it with :meth:`from_labels`; combine with ``+``; read it with
    :attr:`n`, :meth:`total` and :meth:`cross`. All co-occurrence metrics are
    pure functions of one or two of these tables (train and test).

    Attributes
    ----------
    attr_classes, task_classes : tuple
        Class names of the protected attribute A and the task T.
    attr_roles, task_roles : tuple of str
        Which label matrices were counted: a subset of ``("attr", "attr_pred")``
        and of ``("task", "task_pred")``.
    gram : ndarray of float64
        ``[1|A|Â]ᵀ [1|T|T̂]`` restricted to the roles present.
    soft_roles : frozenset of str
        Roles that held probabilities (counts are then expected counts).
    uncounted : frozenset of (str, str)
        Cross counts that were not requested (``pairs=``) and so not
        counted; :meth:`cross` refuses to read them.
    weighted : bool
        Whether the rows were weighted (``sample_weight``): every count is
        then a sum of weights.
    rows : RowFilter or None
        What the row layer did before counting (the ``missing=`` choice, the
        rows given, dropped, grouped or of weight 0); ``None`` for a
        hand-built table.
    predictions : str
        What the probability policy did to the predictions before they were
        counted, per role: ``"hard"`` (no probability), e.g.
        ``"task_pred: thresholded at 0.5 (per label)"``, or ``"task_pred:
        expected rates (probabilities, soft='expected')"`` (the counts are
        then expected counts). :func:`~biasamp.directional_from_counts` and
        :func:`~biasamp.mals_from_counts` report it (:ref:`def-probabilities`).

    Notes
    -----
    With the augmented label matrices :math:`L = [1 \mid A \mid \hat A]` and
    :math:`R = [1 \mid T \mid \hat T]`, the table is :math:`G = L^\top R`:
    :math:`G_{00} = n`, the first row and column hold the class counts
    (:math:`\#t`, :math:`\#a`, ...) and the blocks the co-occurrence counts
    (:math:`\#(a, t) = \sum_i A_{ia} T_{it}`). Tables of disjoint row sets add.
    With sample weights the table is :math:`G = L^\top \operatorname{diag}(w) R`,
    e.g. :math:`\#(a, t) = \sum_i w_i A_{ia} T_{it}` (:ref:`def-weights`).

    References
    ----------
    .. [1] A. Wang, O. Russakovsky. "Directional Bias Amplification". ICML 2021
       (the counts of Eq. 2).
    .. [2] J. Zhao et al. "Men Also Like Shopping". EMNLP 2017 (the bias scores).

    Examples
    --------
    >>> from biasamp import CooccurrenceCounts
    >>> c = CooccurrenceCounts.from_labels(["m", "w", "w"], [[1, 0], [1, 1], [0, 1]],
    ...                                    task_pred=[[1, 0], [0, 1], [0, 1]])
    >>> c.n, c.total("attr").tolist(), c.cross("attr", "task").tolist()
    (3.0, [1.0, 2.0], [[1.0, 0.0], [1.0, 2.0]])
    >>> (c + c).cross("attr", "task_pred").tolist()  # tables add
    [[2.0, 0.0], [0.0, 4.0]]
    >>> w = CooccurrenceCounts.from_labels(["m", "w", "w"], [[1, 0], [1, 1], [0, 1]], sample_weight=[2, 1, 1])
    >>> w.n, w.cross("attr", "task").tolist()  # a weight of 2 counts the row twice
    (4.0, [[2.0, 0.0], [1.0, 2.0]])
    """

    attr_classes: tuple
    task_classes: tuple
    attr_roles: tuple
    task_roles: tuple
    gram: np.ndarray
    soft_roles: frozenset = field(default_factory=frozenset)
    uncounted: frozenset = field(default_factory=frozenset)
    weighted: bool = False
    rows: RowFilter | None = None
    predictions: str = "hard"

    # ------------------------------------------------------------------ build
    @classmethod
    def from_labels(
        cls,
        attr: Any = None,
        task: Any = None,
        *,
        attr_pred: Any = None,
        task_pred: Any = None,
        attr_classes: Sequence | None = None,
        task_classes: Sequence | None = None,
        allow_soft: bool = True,
        pairs: Iterable[tuple[str, str]] | None = None,
        sample_weight: Any = None,
        missing: str = "raise",
        soft: str = "expected",
        threshold: float = DEFAULT_THRESHOLD,
        binary_task: str = "positive",
        pos_label: Any = None,
    ) -> CooccurrenceCounts:
        """Count one batch of labels in a single vectorized pass.

        Parameters
        ----------
        attr, task : labels, optional
            Ground truth of the protected attribute A and of the task T (any
            input kind of :ref:`def-inputs`). When a ground truth is omitted its
            predictions define the classes (then ``*_classes`` or a 2-D
            prediction is needed).
        attr_pred, task_pred : labels, optional
            Predictions Â and T̂, hard or (when ``allow_soft``) probabilities.
        attr_classes, task_classes : sequence, optional
            Fix the class lists (needed to count batches that may not show
            every class). The class list of counts of a binary task read as
            its positive class, ``(1,)`` (or ``(0,)``), counts 1-D 0/1 labels
            as that class, so that batches add.
        allow_soft : bool, default True
            Whether predictions may be probabilities.
        pairs : iterable of (attr_role, task_role), optional
            Count only these cross counts (default: every pair of roles);
            column sums are always counted.
        sample_weight : array-like of shape (n,), optional
            One non-negative weight per row: every count becomes a sum of
            weights; rows of weight 0 are dropped (:ref:`def-weights`).
        missing : {"raise", "drop", "group"}, default "raise"
            Rows with a missing value: raise ``ValueError`` naming the
            argument, drop them, or (``"group"``, for a 1-D ``attr`` only)
            make a missing attribute its own class ``"missing"``
            (:ref:`def-missing`). Recorded in ``rows``.
        soft : {"expected", "threshold"}, default "expected"
            Probabilities given as predictions: counted as expected counts
            (``"expected"``, the table's reading since 0.1), or made hard
            predictions first, as the label-level functions do by default
            (``"threshold"``: above ``threshold`` per label, the argmax of a
            multi-class attribute; :ref:`def-probabilities`). Recorded in
            ``predictions``.
        threshold : float, default 0.5
            The threshold of ``soft="threshold"``.
        binary_task : {"positive", "both"}, default "positive"
            How a binary task is read (:ref:`def-binary-task`): its positive
            class alone (``task_classes`` then holds that class), or both.
        pos_label : object, optional
            The positive class of a binary task (default: 1/True for a 0/1 task).

        Returns
        -------
        CooccurrenceCounts
        """
        soft, threshold = check_soft(soft), check_threshold(threshold)
        arrays, weights, rows = select_rows(
            {"attr": attr, "task": task, "attr_pred": attr_pred, "task_pred": task_pred},
            missing=missing, group_args=("attr",), sample_weight=sample_weight, group_columns=False)
        a = _encode_side(arrays["attr"], arrays["attr_pred"], "attr", attr_classes, allow_soft)
        reading = check("binary_task", binary_task, BINARY_TASK)
        positive = _positive_of(task_classes, reading, arrays["task"], arrays["task_pred"])
        # the class list of counts read by the rule, (1,): 1-D 0/1 labels are encoded on (0, 1), then read as it
        t = _encode_side(arrays["task"], arrays["task_pred"], "task", (0, 1) if positive is not None else task_classes,
                         allow_soft)
        a, said_a = harden_roles(a, (("attr", "attr_pred"),), soft, threshold)
        t, said_t = harden_roles(t, (("task", "task_pred"),), soft, threshold)
        t, _ = read_task_roles(t, "task" if "task" in t else "task_pred", reading,
                               positive if positive is not None else pos_label)
        return cls.from_encoded(
            [a[r] for r in ATTR_ROLES if r in a], [t[r] for r in TASK_ROLES if r in t], pairs=pairs,
            weights=weights, rows=rows, predictions=joined(said_a, said_t),
        )

    @classmethod
    def from_encoded(
        cls,
        left: Sequence[LabelMatrix],
        right: Sequence[LabelMatrix],
        *,
        pairs: Iterable[tuple[str, str]] | None = None,
        weights: np.ndarray | None = None,
        rows: RowFilter | None = None,
        predictions: str | None = None,
    ) -> CooccurrenceCounts:
        """Count already-encoded label matrices (see :func:`biasamp.labels.encode_labels`).

        ``left`` holds the attribute-side matrices and ``right`` the task-side
        ones; each matrix's ``name`` is its role (``"attr"``, ``"attr_pred"``,
        ``"task"``, ``"task_pred"``), and they must come in that order.
        ``pairs`` as in :meth:`from_labels`; ``weights`` are checked row
        weights (one per row, as the row layer returns them) and
        ``rows`` the row filter recorded with the table; ``predictions``
        what was done to probabilities before they were encoded (e.g. a
        threshold; default: the matrices that hold probabilities are counted
        as expected rates).
        """
        n = _check_encoded(left, right, weights)
        gram, uncounted = _gram(left, right, n, None if pairs is None else frozenset(pairs), weights)
        return cls._of_gram(left, right, gram, uncounted, weights is not None, rows, predictions)

    @classmethod
    def _from_encoded_splits(
        cls,
        left: Sequence[LabelMatrix],
        right: Sequence[LabelMatrix],
        splits: Sequence[tuple[np.ndarray, Sequence[str], Sequence[str]]],
    ) -> list[tuple[CooccurrenceCounts, CooccurrenceCounts]]:
        """Both folds' tables of every split of the rows (unweighted, hard labels), counted in one pass.

        ``splits`` holds, per split, every row's fold (1: fold 0, 0: fold 1,
        as :func:`biasamp._core.crossfit.crossfit_splits` returns it) and the
        roles it counts: a prefix of the roles of ``left`` and one of
        ``right`` (e.g. ``["attr"]``, ``["task", "task_pred"]``), every pair
        of them counted. Each block of rows is converted once; the tables hold
        exactly the counts of :meth:`from_encoded` on each fold's rows.
        """
        n = _check_encoded(left, right, None)
        if any(m.soft for m in (*left, *right)):
            raise ValueError("_from_encoded_splits counts hard labels: give 0/1 matrices or codes")
        plan = []
        for in_fold0, lroles, rroles in splits:
            in_fold0 = np.asarray(in_fold0)
            if in_fold0.shape != (n,) or not np.isin(in_fold0, (0, 1)).all():
                raise ValueError(f"a split must give every one of the {n} rows 1 (fold 0) or 0 (fold 1)")
            lsub, rsub = left[:len(lroles)], right[:len(rroles)]
            if [m.name for m in lsub] != list(lroles) or [m.name for m in rsub] != list(rroles):
                raise ValueError(f"a split's roles must be prefixes of the roles given, got {lroles} and {rroles}")
            plan.append((in_fold0.astype(np.intp), 1 + sum(m.n_classes for m in lsub),
                         1 + sum(m.n_classes for m in rsub)))
        grams = _histogram_splits(left, right, plan)
        grams = _gram_splits(left, right, n, plan) if grams is None else grams
        return [(cls._of_gram(left[:len(lr)], right[:len(rr)], g[0], frozenset(), False, None, None),
                 cls._of_gram(left[:len(lr)], right[:len(rr)], g[1], frozenset(), False, None, None))
                for g, (_, lr, rr) in zip(grams, splits)]

    @classmethod
    def _from_fold_counts(
        cls,
        left: Sequence[LabelMatrix],
        right: Sequence[LabelMatrix],
        splits: Sequence[tuple[np.ndarray, Sequence[str], Sequence[str]]],
        totals: Any,
        octets: dict,
        fold0_rows: Sequence[np.ndarray | None] | None = None,
        fold0_counts: Sequence[Any] | None = None,
    ) -> list[tuple[CooccurrenceCounts, CooccurrenceCounts]] | None:
        """:meth:`_from_encoded_splits` from the counts of all the rows: each split's fold 0 counted, fold 1 the rest.

        ``totals``: the unweighted counts of every role over all the rows, as
        the split computed them (:func:`biasamp._core.crossfit.splits_and_counts`);
        ``octets``: the task-side roles' rows as bytes; ``fold0_rows``: per
        split, the rows of its fold 0 when the split handed them back;
        ``fold0_counts``: per split, the counts of its fold 0 when the split
        made them (else None: counted here). Each
        split's fold 0 is counted from its rows' bytes
        (:func:`biasamp._core.crossfit.fold_counts`, half the rows; the splits
        in threads) and fold 1 is the totals less fold 0: exact integers,
        so the tables equal those of :meth:`_from_encoded_splits` bit for bit.
        None when the roles are not attribute codes and 0/1 task matrices.
        """
        n = _check_encoded(left, right, None)
        by_name = {m.name: m for m in (*left, *right)}
        out = []
        made = [None] * len(splits) if fold0_counts is None else list(fold0_counts)
        todo = [i for i, c in enumerate(made) if c is None]
        for i, c in zip(todo, in_threads(lambda i: fold_counts(by_name, (tuple(splits[i][1]), tuple(splits[i][2])),
                                                               octets, splits[i][0],
                                                               None if fold0_rows is None else fold0_rows[i]),
                                         todo, n)):
            made[i] = c
        folds0 = made
        for (in_fold0, lroles, rroles), fold0 in zip(splits, folds0):
            lsub, rsub = left[:len(lroles)], right[:len(rroles)]
            if fold0 is None:
                return None
            g0 = _gram_of_counts(lsub, rsub, fold0, float(np.count_nonzero(in_fold0)))
            g = _gram_of_counts(lsub, rsub, totals, float(n))
            out.append((cls._of_gram(lsub, rsub, g0, frozenset(), False, None, None),
                        cls._of_gram(lsub, rsub, g - g0, frozenset(), False, None, None)))
        return out

    @classmethod
    def _of_gram(cls, left: Sequence[LabelMatrix], right: Sequence[LabelMatrix], gram: np.ndarray,
                 uncounted: frozenset, weighted: bool, rows: RowFilter | None,
                 predictions: str | None) -> CooccurrenceCounts:
        """The table of a Gram matrix of ``left`` and ``right`` (:func:`_gram`)."""
        return cls(
            attr_classes=left[0].classes,
            task_classes=right[0].classes,
            attr_roles=tuple(m.name for m in left),
            task_roles=tuple(m.name for m in right),
            gram=gram,
            soft_roles=frozenset(m.name for m in (*left, *right) if m.soft),
            uncounted=uncounted,
            weighted=weighted,
            rows=rows,
            predictions=joined(*(f"{m.name}: {EXPECTED_RATES}" for m in (*left, *right) if m.soft))
            if predictions is None else predictions,
        )

    def update(self, **batch: Any) -> CooccurrenceCounts:
        """Return the counts of this table plus one more batch of rows.

        The batch takes the same keyword arguments as :meth:`from_labels`
        (without the class lists, which are fixed to this table's) and must
        hold the same roles.
        """
        counted = {(a, t) for a in self.attr_roles for t in self.task_roles} - self.uncounted
        other = type(self).from_labels(
            **batch, attr_classes=self.attr_classes, task_classes=self.task_classes, pairs=counted
        )
        return self + other

    def __add__(self, other: CooccurrenceCounts) -> CooccurrenceCounts:
        if not isinstance(other, CooccurrenceCounts):
            return NotImplemented
        for what in ("attr_classes", "task_classes", "attr_roles", "task_roles", "uncounted"):
            if getattr(self, what) != getattr(other, what):
                raise ValueError(
                    f"cannot add counts with different {what}: {getattr(self, what)!r} vs {getattr(other, what)!r}"
                )
        return CooccurrenceCounts(
            self.attr_classes, self.task_classes, self.attr_roles, self.task_roles,
            self.gram + other.gram, self.soft_roles | other.soft_roles, self.uncounted,
            self.weighted or other.weighted, add_filters(self.rows, other.rows),
            joined(self.predictions, other.predictions),
        )

    def __radd__(self, other: Any) -> CooccurrenceCounts:
        if other == 0:  # lets sum() work
            return self
        return NotImplemented

    # ------------------------------------------------------------------- read
    @property
    def n(self) -> float:
        """Number of rows counted (their total weight when weighted)."""
        return float(self.gram[0, 0])

    def _slice(self, role: str) -> tuple[int, slice]:
        if role in self.attr_roles:
            k = len(self.attr_classes)
            return 0, _layout(self.attr_roles, [k] * len(self.attr_roles))[role]
        if role in self.task_roles:
            k = len(self.task_classes)
            return 1, _layout(self.task_roles, [k] * len(self.task_roles))[role]
        raise UnknownKeyError(
            f"role {role!r} was not counted (have {self.attr_roles + self.task_roles}); roles are "
            f"{ATTR_ROLES + TASK_ROLES}")

    def has(self, *roles: str) -> bool:
        """Whether every given role was counted."""
        return all(r in self.attr_roles + self.task_roles for r in roles)

    def total(self, role: str) -> np.ndarray:
        """Column sums of one role, e.g. ``total("attr")`` = ``#a`` per class."""
        side, sl = self._slice(role)
        return self.gram[sl, 0] if side == 0 else self.gram[0, sl]

    def cross(self, attr_role: str, task_role: str) -> np.ndarray:
        """``K_A x K_T`` co-occurrence counts, e.g. ``cross("attr", "task_pred")`` = ``#(a, t̂)``."""
        sa, sla = self._slice(attr_role)
        st, slt = self._slice(task_role)
        if sa != 0 or st != 1:
            raise UnknownKeyError(
                f"cross() takes an attribute-side role then a task-side role, got ({attr_role!r}, {task_role!r})")
        if (attr_role, task_role) in self.uncounted:
            raise UnknownKeyError(f"#({attr_role}, {task_role}) was not counted (count it with pairs=...)")
        return self.gram[sla, slt]

    def restrict(self, attr_roles: Sequence[str], task_roles: Sequence[str]) -> CooccurrenceCounts:
        """The sub-table of some roles (no recount), e.g. the ground truth alone."""
        ka, kt = len(self.attr_classes), len(self.task_classes)
        rows = [0] + [i for r in attr_roles for i in range(*self._slice(r)[1].indices(1 + 2 * ka))]
        cols = [0] + [i for r in task_roles for i in range(*self._slice(r)[1].indices(1 + 2 * kt))]
        return CooccurrenceCounts(
            self.attr_classes, self.task_classes, tuple(attr_roles), tuple(task_roles),
            self.gram[np.ix_(rows, cols)], frozenset(r for r in self.soft_roles if r in (*attr_roles, *task_roles)),
            frozenset(p for p in self.uncounted if p[0] in attr_roles and p[1] in task_roles),
            self.weighted, self.rows,
            joined(*(p for p in self.predictions.split("; ") if p.split(":")[0] in (*attr_roles, *task_roles))),
        )

    def __repr__(self) -> str:
        extra = ", weighted" if self.weighted else ""
        if self.predictions != "hard":
            extra += f", predictions: {self.predictions}"
        if self.rows is not None and self.rows.changed:
            extra += f", rows: {self.rows.describe()}"
        return (
            f"CooccurrenceCounts(n={self.n:g}, attr_classes={list(self.attr_classes)!r}, "
            f"task_classes={list(self.task_classes)[:8]!r}{'...' if len(self.task_classes) > 8 else ''}, "
            f"roles={list(self.attr_roles + self.task_roles)!r}{extra})"
        )


def _positive_of(task_classes: Sequence | None, binary_task: str, task: Any, task_pred: Any) -> Any:
    """The positive class when ``task_classes`` is the class list of a binary task read by the rule (one class,
    0 or 1) and the labels are 1-D (a 0/1 column); None otherwise (an indicator's one column is read as it is)."""
    if task_classes is None or binary_task != "positive" or len(task_classes) != 1:
        return None
    given = task if task is not None else task_pred
    try:
        one_d = given is not None and np.ndim(given) == 1
    except ValueError:  # ragged: the input layer names it
        return None
    if not one_d or not _zero_or_one(task_classes[0]):
        return None
    return int(task_classes[0])


def _zero_or_one(c: Any) -> bool:
    return isinstance(c, (int, np.integer, bool, np.bool_)) and c in (0, 1)


def _check_encoded(left: Sequence[LabelMatrix], right: Sequence[LabelMatrix], weights: np.ndarray | None) -> int:
    """The rows of encoded matrices, checked: roles in order on each side, one length, one weight per row."""
    for side, roles, allowed in (("attribute", left, ATTR_ROLES), ("task", right, TASK_ROLES)):
        names = [m.name for m in roles]
        if not names or names != [r for r in allowed if r in names]:
            raise ValueError(f"{side}-side roles must be a non-empty, ordered subset of {allowed}, got {names}")
    n = check_consistent_length(**{m.name: m for m in (*left, *right)})
    if weights is not None and len(weights) != n:
        raise ValueError(f"weights has {len(weights)} entries but the labels have {n} rows")
    return n


def _encode_side(truth, pred, family, classes, allow_soft) -> dict[str, LabelMatrix]:
    if truth is None and pred is None:
        raise ValueError(f"neither {family} nor {family}_pred was given")
    return encode_labels({family: truth}, {f"{family}_pred": pred}, allow_soft=allow_soft, classes=classes)
