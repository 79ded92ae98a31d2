"""The resampling engine shared by every count-based family.

Every count table of biasamp is a sum over rows of a per-row contribution
``vec(l_i ⊗ r_i)``, where ``l_i`` and ``r_i`` are the row's augmented label
vectors (``[1 | A | Â]`` and ``[1 | T | T̂]`` for the co-occurrence family,
``[group one-hot]`` and ``[1 | T | T̂ | T∘T̂]`` for group fairness, the
containment vectors for the multi-attribute family). Rows with equal vectors
contribute equally, so a table is ``Lᵀ diag(c) R`` over the *cells* (distinct
rows) with their counts ``c``. Resampling the rows is resampling ``c``:

* :class:`Cells` holds the distinct rows in a canonical order (sorted by their
  key, never by their position), so the same seed gives the same replicates
  whatever the order of the rows;
* with sample weights (:ref:`def-weights`) a row's weight is part of its
  cell's key (rows with equal labels and different weights are different
  cells) and scales the cell's left vector, so the table is
  ``Lᵀ diag(c · w) R`` and a replicate, which resamples the *rows* (the
  counts ``c``), carries every drawn row's weight;
* :meth:`Cells.replicate_tables` draws ``B`` multinomial replicates
  ``c* ~ Multinomial(n, c / n)`` and returns the ``B`` replicate tables,
  vectorized (no Python loop per replicate) and block by block over the cells
  so that the extra memory stays bounded whatever ``n``;
* :meth:`Cells.jackknife_tables` gives the leave-one-row-out tables of every
  cell (the jackknife used for the BCa acceleration);
* :meth:`Cells.resampling` chooses the scheme of :func:`biasamp.bootstrap`:
  the exact multinomial bootstrap above while ``n_boot x cells`` is at most
  ``_EXACT_WORK``, else the **grouped bootstrap**: the rows are split once, at
  random, into ``_GROUPS`` groups of equal size (±1), every group's table is
  computed once (``G`` tables in one sparse pass), and a replicate resamples
  the groups (``G`` multinomial draws and one dense product
  ``counts (B x G) @ group tables (G x wl*wr)``); the jackknife of the BCa
  acceleration leaves out one group at a time. Its cost no longer grows with
  the number of cells (which approaches the number of rows when there are
  many tasks);
* streams (accumulators, Dask, torch ranks) keep no cells: :func:`stream_groups`
  puts every row in one of ``STREAM_GROUPS`` groups by a hash of (row id,
  seed) and :func:`add_group_tables` adds the row into its group's table, so
  the group tables of batches, partitions and ranks add like every other
  table; the replicates then resample the (non-empty) groups exactly as the
  grouped bootstrap above (:func:`_group_replicates`, :func:`_group_jackknife`).

Definitions: docs/definitions.md, "Intervals".
"""

from __future__ import annotations

import numbers
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import sparse

_CELL_BLOCK = 2048        # at most this many cells per block
_ROW_BLOCK = 4096         # close a block once it holds this many rows
_TABLE_BYTES = 64 << 20   # memory target of one dense chunk of tables
_CACHE_NNZ = 8_000_000    # keep the cells' designs across replicate chunks up to this many non-zeros
_EXACT_WORK = 1 << 22     # replicates x cells up to which biasamp.bootstrap resamples rows exactly
_GROUPS = 2048            # groups of rows of the grouped bootstrap (beyond _EXACT_WORK) ...
_MIN_GROUP_ROWS = 16      # ... used only when every group holds at least this many rows
_MIN_GROUPS = 256         # fewer groups when the tables are wide: G x table width within _GROUP_BYTES (float32) ...
_GROUP_BYTES = 16 << 20   # ... but never fewer than _MIN_GROUPS
_GROUP_CHUNK_BYTES = 4 << 20  # memory target of one chunk of grouped replicate tables


# --------------------------------------------------------------------------- #
# seeds
# --------------------------------------------------------------------------- #
def check_random_state(random_state: Any, name: str = "random_state") -> Any:
    """Validate a seed: None, a non-negative int, or a numpy Generator/SeedSequence/RandomState.

    The one seed checker of biasamp: every function taking a seed calls it (or
    :func:`generator`, :func:`seed_sequence`), so a bad seed always raises
    ``TypeError`` (not an integer) or ``ValueError`` (negative) naming ``name``.
    """
    if random_state is None or isinstance(random_state, (np.random.Generator, np.random.SeedSequence)):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return random_state
    if isinstance(random_state, bool) or not isinstance(random_state, numbers.Integral):
        raise TypeError(
            f"{name} must be None, a non-negative integer or a numpy Generator, got {type(random_state).__name__} "
            f"{random_state!r}"
        )
    if random_state < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {random_state}")
    return int(random_state)


def generator(random_state: Any, name: str = "random_state") -> np.random.Generator:
    """A numpy Generator from any accepted seed (``np.random.default_rng`` after the check).

    A Generator is returned as it is; a legacy RandomState contributes one draw.
    """
    rs = check_random_state(random_state, name)
    if isinstance(rs, np.random.RandomState):
        return np.random.default_rng(int(rs.randint(0, 2**31 - 1)))
    return np.random.default_rng(rs)


def seed_sequence(random_state: Any, name: str = "random_state") -> np.random.SeedSequence:
    """A SeedSequence from any accepted seed (a Generator contributes one draw)."""
    rs = check_random_state(random_state, name)
    if isinstance(rs, np.random.SeedSequence):
        return rs
    if isinstance(rs, np.random.Generator):
        return np.random.SeedSequence(int(rs.integers(0, 2**63)))
    if isinstance(rs, np.random.RandomState):
        return np.random.SeedSequence(int(rs.randint(0, 2**31 - 1)))
    return np.random.SeedSequence(rs)


def seed_int(random_state: Any, name: str = "random_state") -> int:
    """A 64-bit integer seed (for the counter-based Poisson weights)."""
    return int(seed_sequence(random_state, name).generate_state(1, dtype=np.uint64)[0])


# --------------------------------------------------------------------------- #
# canonical cells
# --------------------------------------------------------------------------- #
def key_columns(m: Any) -> list[np.ndarray]:
    """1-D columns identifying a row of a label matrix (bit-packed words when 0/1)."""
    if m.codes is not None:
        return [m.codes]
    dense = m.dense
    if not m.soft:
        packed = np.packbits(dense.astype(bool, copy=False), axis=1)
        pad = (-packed.shape[1]) % 8
        if pad:
            packed = np.concatenate([packed, np.zeros((packed.shape[0], pad), dtype=np.uint8)], axis=1)
        words = np.ascontiguousarray(packed).view(np.uint64)
        return [words[:, j] for j in range(words.shape[1])]
    return [dense[:, j] for j in range(dense.shape[1])]


def label_rows(m: Any, idx: np.ndarray) -> sparse.csr_matrix:
    """Rows ``idx`` of a label matrix, as a sparse float matrix (built in chunks: no dense float copy)."""
    n, k = len(idx), m.n_classes
    if m.codes is not None:  # one entry per row: the CSR arrays directly (no COO sort)
        return sparse.csr_matrix((np.ones(n), np.asarray(m.codes[idx], dtype=np.int64), np.arange(n + 1)),
                                 shape=(n, k))
    if m.soft:
        return sparse.csr_matrix(np.asarray(m.dense[idx], dtype=np.float64))
    per_row, cols = [], []
    chunk = max(1, (16 << 20) // max(k, 1))
    for a in range(0, n, chunk):
        block = m.dense[idx[a:a + chunk]]
        r, c = np.nonzero(block)  # row-major: sorted by row, then column, as CSR stores them
        per_row.append(np.bincount(r, minlength=len(block)))
        cols.append(c)
    indptr = np.zeros(n + 1, dtype=np.int64)
    if n:
        np.cumsum(np.concatenate(per_row), out=indptr[1:])
    indices = np.concatenate(cols) if cols else np.zeros(0, dtype=np.int64)
    return sparse.csr_matrix((np.ones(len(indices)), indices, indptr), shape=(n, k))


def cells_of(matrices: Sequence[Any], extra: Sequence[np.ndarray] = (),
             weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(first row of every cell, cell counts) of the rows of ``matrices`` (+ ``extra`` key columns).

    ``weights`` (one sample weight per row) are part of the key: rows with
    the same labels but different weights fall in different cells, so
    ``weights[first_rows]`` is every cell's weight (pass it to
    :class:`Cells`). Cells are numbered in the canonical (sorted-key) order,
    whatever the order of the rows. The counts are numbers of rows.
    """
    cols: list[np.ndarray] = list(extra)
    for m in matrices:
        cols.extend(key_columns(m))
    if weights is not None:
        weights = np.asarray(weights, dtype=np.float64)
        n = len(cols[0]) if cols else len(weights)
        if weights.ndim != 1 or len(weights) != n:
            raise ValueError(f"weights must hold one weight per row ({n}), got shape {weights.shape}")
        cols.append(weights)
    ids = canonical_ids(cols)
    counts = np.bincount(ids)
    return first_rows(ids, len(counts)), counts


def augmented(parts: Sequence[sparse.spmatrix], n: int) -> sparse.csr_matrix:
    """``[1 | parts...]`` as one sparse matrix."""
    return compact(sparse.hstack([sparse.csr_matrix(np.ones((n, 1))), *parts], format="csr"))


def compact(m: sparse.spmatrix) -> sparse.csr_matrix:
    """A 0/1 (or count) CSR matrix stored with float32 data and int32 indices when they fit."""
    m = sparse.csr_matrix(m)
    small = m.nnz < 2**31 - 1 and m.shape[1] < 2**31 - 1
    idx_t = np.int32 if small else np.int64
    if m.data.dtype == np.float32 and m.indices.dtype == idx_t and m.indptr.dtype == idx_t:
        return m
    exact = m.data.size == 0 or (np.abs(m.data).max() < 2**24 and np.array_equal(m.data, np.rint(m.data)))
    data = m.data.astype(np.float32, copy=False) if exact else m.data
    out = sparse.csr_matrix(m.shape, dtype=data.dtype)
    out.data, out.indices, out.indptr = data, m.indices.astype(idx_t, copy=False), m.indptr.astype(idx_t, copy=False)
    return out


def augmented_rows(matrices: Sequence[Any], idx: np.ndarray) -> sparse.csr_matrix:
    """``[1 | m_1 | m_2 ...]`` at rows ``idx`` of label matrices, built in chunks (compact storage)."""
    width = 1 + sum(m.n_classes for m in matrices)
    chunk = max(1, (8 << 20) // width)
    data, indices, ptrs, offset = [], [], [np.zeros(1, dtype=np.int64)], 0
    for a in range(0, len(idx), chunk):
        sub = idx[a:a + chunk]
        b = augmented([label_rows(m, sub) for m in matrices], len(sub))
        data.append(b.data)
        indices.append(b.indices)
        ptrs.append(b.indptr[1:].astype(np.int64) + offset)
        offset += b.nnz
    ptr = np.concatenate(ptrs)
    out = sparse.csr_matrix((len(idx), width), dtype=np.float32)
    out.data = np.concatenate(data) if data else np.zeros(0, np.float32)
    del data
    out.indices = np.concatenate(indices) if indices else np.zeros(0, np.int32)
    del indices
    out.indptr = ptr.astype(np.int32) if offset < 2**31 - 1 else ptr
    return compact(out)


def canonical_ids(columns: Sequence[np.ndarray]) -> np.ndarray:
    """Cell id per row, cells numbered in lexicographic order of the key columns.

    Equal rows get equal ids; the numbering depends on the *set* of distinct
    keys only, never on the order of the rows.
    """
    ids: np.ndarray | None = None
    for col in columns:
        codes, uniques = pd.factorize(np.asarray(col), sort=True)
        codes = codes.astype(np.int64, copy=False)
        if ids is None:
            ids = codes
            continue
        ids, _ = pd.factorize(ids * np.int64(len(uniques)) + codes, sort=True)
        ids = ids.astype(np.int64, copy=False)
    if ids is None:
        raise ValueError("no key columns")
    return ids


def first_rows(ids: np.ndarray, n_cells: int) -> np.ndarray:
    """Index of one row (the first) of every cell."""
    rep = np.empty(n_cells, dtype=np.int64)
    rep[ids[::-1]] = np.arange(len(ids) - 1, -1, -1)
    return rep


def rowwise_kron(left: sparse.csr_matrix, right: sparse.csr_matrix) -> sparse.csr_matrix:
    """Row ``i`` is ``vec(left_i ⊗ right_i)``: shape ``(C, wl * wr)`` (vectorized, no Python loop)."""
    left, right = sparse.csr_matrix(left), sparse.csr_matrix(right)
    left.sort_indices()
    right.sort_indices()
    wr = right.shape[1]
    nl, nr = np.diff(left.indptr), np.diff(right.indptr)
    nnz = nl * nr
    ptr = np.zeros(len(nnz) + 1, dtype=np.int64)
    np.cumsum(nnz, out=ptr[1:])
    total = int(ptr[-1])
    row = np.repeat(np.arange(len(nnz)), nnz)
    local = np.arange(total, dtype=np.int64) - ptr[row]
    nr_row = nr[row]
    li = left.indptr[row] + local // np.maximum(nr_row, 1)
    ri = right.indptr[row] + local % np.maximum(nr_row, 1)
    cols = left.indices[li].astype(np.int64) * wr + right.indices[ri]
    data = left.data[li] * right.data[ri]
    return sparse.csr_matrix((data, cols, ptr), shape=(left.shape[0], left.shape[1] * wr))


@dataclass(frozen=True, eq=False)
class Cells:
    """Distinct rows in canonical order, their counts and their table contributions.

    ``left`` (C x wl) and ``right`` (C x wr) are the cells' augmented label
    rows; the table of any weights ``w`` over the cells is ``Lᵀ diag(w) R``.
    ``weights`` (optional, C positive sample weights, one per cell: see
    :func:`cells_of`) scale the left rows when the cells are built, so every
    table, replicate and jackknife table is ``Σ_cells count × weight ×
    vec(l ⊗ r)``, while the resampling draws rows (the ``counts``).
    """

    left: sparse.csr_matrix
    right: sparse.csr_matrix
    counts: np.ndarray
    weights: np.ndarray | None = None
    if TYPE_CHECKING:  # set in __post_init__ when weighted; not a dataclass field at run time
        _unweighted_left: sparse.csr_matrix = field(init=False)

    def __post_init__(self) -> None:
        left = compact(self.left)
        if self.weights is not None:
            w = np.asarray(self.weights, dtype=np.float64)
            if w.shape != (left.shape[0],) or not np.isfinite(w).all() or (w <= 0).any():
                raise ValueError(f"Cells: weights must be {left.shape[0]} positive finite numbers (one per cell; "
                                 "rows of weight 0 are dropped before the cells are formed)")
            object.__setattr__(self, "weights", w)
            object.__setattr__(self, "_unweighted_left", left)
            left = compact(sparse.diags(w) @ left)
        object.__setattr__(self, "left", left)
        object.__setattr__(self, "right", compact(self.right))
        object.__setattr__(self, "counts", np.asarray(self.counts, dtype=np.float64))

    def unweighted_left(self) -> sparse.csr_matrix:
        """The cells' left rows without their sample weights."""
        return self.left if self.weights is None else self._unweighted_left

    @property
    def n_cells(self) -> int:
        return len(self.counts)

    @property
    def n(self) -> float:
        return float(self.counts.sum())

    @property
    def shape(self) -> tuple[int, int]:
        return self.left.shape[1], self.right.shape[1]

    def table(self, weights: np.ndarray | None = None) -> np.ndarray:
        """``Lᵀ diag(w) R`` (default weights: the counts), shape ``(wl, wr)``."""
        w = self.counts if weights is None else np.asarray(weights, dtype=np.float64)
        out = np.zeros(self.shape, dtype=np.float64)
        step = 1 << 16  # chunks of cells: no float64 copy of a whole side
        for a in range(0, self.n_cells, step):
            left = sparse.csr_matrix(self.left[a:a + step].multiply(w[a:a + step, None]))
            out += np.asarray((left.T @ self.right[a:a + step].astype(np.float64)).todense())
        return out

    # ------------------------------------------------------------- blocks
    def _blocks(self) -> list[tuple[int, int]]:
        """Consecutive cell ranges of at most ``_CELL_BLOCK`` cells / about ``_ROW_BLOCK`` rows."""
        cum = np.cumsum(self.counts)
        out, start = [], 0
        while start < self.n_cells:
            before = cum[start - 1] if start else 0.0
            stop = int(np.searchsorted(cum, before + _ROW_BLOCK, side="left")) + 1
            stop = min(self.n_cells, start + _CELL_BLOCK, max(stop, start + 1))
            out.append((start, stop))
            start = stop
        return out

    def _block_design(self, start: int, stop: int) -> sparse.csr_matrix:
        return rowwise_kron(self.left[start:stop], self.right[start:stop])

    # --------------------------------------------------------- replicates
    def replicate_tables(self, n_boot: int, seed: np.random.SeedSequence) -> Iterator[tuple[slice, np.ndarray]]:
        """``n_boot`` multinomial replicate tables, in chunks ``(replicates, tables (b, wl, wr))``.

        The counts are resampled block by block: first the number of rows that
        fall in each block of cells (one multinomial over the blocks), then,
        inside a block, their cells (a multinomial over the block's cells, or
        draws of the block's rows when its cells hold few rows each). This is
        exactly one multinomial draw of ``n`` rows over all cells, with memory
        bounded by the block and chunk sizes (which depend on the data's shape
        only, so the result does not depend on the order of the rows).
        """
        counts = self.counts
        if not np.allclose(counts, np.rint(counts)):
            raise ValueError("the multinomial bootstrap needs integer cell counts")
        icounts = np.rint(counts).astype(np.int64)
        n = int(icounts.sum())
        wl, wr = self.shape
        blocks = self._blocks()
        sizes = np.array([icounts[a:b].sum() for a, b in blocks], dtype=np.int64)
        rng = np.random.default_rng(np.random.SeedSequence(seed.entropy, spawn_key=(*seed.spawn_key, 0)))
        if len(blocks) == 1:
            totals = np.full((n_boot, 1), n, dtype=np.int64)
        else:
            totals = rng.multinomial(n, sizes / n, size=n_boot)
        chunk = max(1, min(n_boot, _TABLE_BYTES // (8 * wl * wr)))
        nnz = int((self.left.getnnz(axis=1) * self.right.getnnz(axis=1)).sum())
        cache = chunk < n_boot and nnz <= _CACHE_NNZ  # several chunks: keep the block designs if small
        designs = [self._block_design(a, b) for a, b in blocks] if cache else None
        for r, start in enumerate(range(0, n_boot, chunk)):
            stop = min(n_boot, start + chunk)
            out = np.zeros((stop - start, wl * wr), dtype=np.float64)
            for j, (a, b) in enumerate(blocks):
                brng = np.random.default_rng(
                    np.random.SeedSequence(seed.entropy, spawn_key=(*seed.spawn_key, 1, j, r)))
                w = _draw_block(icounts[a:b], totals[start:stop, j], brng)
                design = designs[j] if designs is not None else self._block_design(a, b)
                out += np.asarray((design.T @ w.T).T)
            yield slice(start, stop), out.reshape(stop - start, wl, wr)

    def resampling(self, n_boot: int, seed: np.random.SeedSequence) -> Resampling:
        """The resampling scheme of ``n_boot`` replicates: exact multinomial, or grouped when that is costly.

        Exact (:meth:`replicate_tables`, jackknife over cells) while
        ``n_boot x n_cells <= _EXACT_WORK``, or when the rows are too few to
        fill ``_GROUPS`` groups of ``_MIN_GROUP_ROWS`` rows, or the counts are
        not integers; else the grouped bootstrap (:meth:`group_tables`). The
        choice depends on the data's shape and ``n_boot`` only, never on the
        order of the rows.
        """
        n = self.n
        integral = bool(np.allclose(self.counts, np.rint(self.counts)))
        if (n_boot * self.n_cells <= _EXACT_WORK or n < _MIN_GROUP_ROWS * _GROUPS or not integral):
            return Resampling("multinomial", lambda: self.replicate_tables(n_boot, seed), self.jackknife_tables,
                              self.counts, None)
        wl, wr = self.shape
        n_groups = int(min(_GROUPS, max(_MIN_GROUPS, _GROUP_BYTES // (4 * wl * wr))))
        groups = self.group_tables(n_groups, seed)
        return Resampling("grouped", lambda: _group_replicates(groups, self.shape, n_boot, seed),
                          lambda: _group_jackknife(groups, self.shape), np.ones(len(groups)), len(groups))

    def group_tables(self, n_groups: int, seed: np.random.SeedSequence) -> np.ndarray:
        """Tables of a random partition of the rows into ``n_groups`` groups of equal size (±1): ``(G, wl*wr)``.

        The rows, expanded cell by cell in the canonical order, are dealt to
        the groups by a random permutation (row ``j`` goes to group
        ``perm[j] mod G``), so the partition depends on the seed and the cells
        only, never on the order of the rows. The tables add up to
        :meth:`table`.
        """
        icounts = np.rint(self.counts).astype(np.int64)
        n = int(icounts.sum())
        rng = np.random.default_rng(np.random.SeedSequence(seed.entropy, spawn_key=(*seed.spawn_key, 3)))
        group = rng.permutation(n)
        group %= n_groups
        group = group.astype(np.int32)
        # member[cell, group] = rows of the cell in the group: the rows are expanded cell by cell, so the
        # CSR rows are the cells' runs of rows (duplicates summed in place)
        indptr = np.zeros(self.n_cells + 1, dtype=np.int64)
        np.cumsum(icounts, out=indptr[1:])
        member = sparse.csr_matrix((np.ones(n, dtype=np.float64), group, indptr), shape=(self.n_cells, n_groups))
        del group
        member.sum_duplicates()
        wl, wr = self.shape
        exact32 = self.weights is None and -(-n // n_groups) < 2**24  # integer entries up to a group's rows
        dtype = np.float32 if exact32 else np.float64
        member = member.astype(dtype)
        out = np.zeros((n_groups, wl, wr), dtype=dtype)
        step = 1 << 14  # cells per block: bounded memory whatever the number of cells
        for a in range(0, self.n_cells, step):
            block = member[a:a + step]
            left = sparse.csc_matrix(self.left[a:a + step], dtype=dtype)
            right = sparse.csr_matrix(self.right[a:a + step], dtype=dtype)
            for j in range(wl):  # group tables of one left column: (member^T diag(L_j)) R, no Kronecker design
                rows = left.indices[left.indptr[j]:left.indptr[j + 1]]
                if rows.size == 0:
                    continue
                scaled = sparse.diags(left.data[left.indptr[j]:left.indptr[j + 1]]) @ block[rows]
                part = (scaled.T @ right[rows]).tocoo()  # no duplicate entries
                view = out[:, j, :]
                view[part.row, part.col] += part.data
        return out.reshape(n_groups, wl * wr)

    def jackknife_tables(self) -> Iterator[tuple[slice, np.ndarray]]:
        """Leave-one-row-out tables, one per cell, in chunks: ``(cells, tables (c, wl, wr))``."""
        wl, wr = self.shape
        full = self.table().ravel()
        chunk = max(1, min(self.n_cells, (_TABLE_BYTES // 4) // (8 * wl * wr)))
        for a in range(0, self.n_cells, chunk):
            b = min(self.n_cells, a + chunk)
            design = self._block_design(a, b)
            yield slice(a, b), (full[None, :] - design.toarray()).reshape(b - a, wl, wr)


@dataclass(frozen=True, eq=False)
class Resampling:
    """A resampling scheme chosen by :meth:`Cells.resampling`.

    ``replicate_tables()`` and ``jackknife_tables()`` yield chunks
    ``(slice, tables (b, wl, wr))``; ``jackknife_weights`` weight the
    jackknife values in the BCa acceleration (the cells' counts, or one per
    group); ``n_groups`` is None for the exact multinomial bootstrap.
    """

    scheme: str
    replicate_tables: Any
    jackknife_tables: Any
    jackknife_weights: np.ndarray
    n_groups: int | None

    def note(self, n: float) -> str | None:
        """A sentence saying how the rows were resampled, for the grouped scheme (None when exact)."""
        if self.n_groups is None:
            return None
        return (f"grouped bootstrap: the {n:,.0f} rows were split at random into {self.n_groups:,} groups of equal "
                "size and every replicate resamples the groups (the exact resampling of rows over this many "
                "distinct rows would cost far more; the intervals agree to Monte-Carlo precision, see "
                "docs/inference.md); the BCa jackknife leaves out one group at a time")


def _group_replicates(groups: np.ndarray, shape: tuple[int, int], n_boot: int,
                      seed: np.random.SeedSequence, with_counts: bool = False) -> Iterator[tuple]:
    """Replicates of the grouped bootstrap: ``G`` groups drawn with replacement, tables ``counts @ groups``.

    The group tables hold integers when the rows are unweighted, so the
    product is exact (and the same under any number of BLAS threads); with
    sample weights it runs on one BLAS thread for the same reason. Yields
    ``(replicates, tables)``, and the draws' ``counts`` ``(b, G)`` (how many
    times each group was drawn) third with ``with_counts``.
    """
    from threadpoolctl import threadpool_limits

    n_groups, width = groups.shape
    wl, wr = shape
    integral = bool(np.array_equal(groups, np.rint(groups)))
    # float32 products are exact while every sum stays below 2**24 (at most n_groups x the largest entry)
    dtype = np.float32 if integral and groups.dtype == np.float32 and \
        float(groups.max(initial=0)) * n_groups < 2**24 else np.float64
    groups = groups.astype(dtype, copy=False)
    chunk = max(1, min(n_boot, _GROUP_CHUNK_BYTES // (8 * max(width, n_groups))))
    offsets = None
    for r, start in enumerate(range(0, n_boot, chunk)):
        stop = min(n_boot, start + chunk)
        b = stop - start
        rng = np.random.default_rng(np.random.SeedSequence(seed.entropy, spawn_key=(*seed.spawn_key, 4, r)))
        draws = rng.integers(0, n_groups, size=(b, n_groups), dtype=np.int32)
        if offsets is None or len(offsets) != b:
            offsets = (np.arange(b, dtype=np.int32) * np.int32(n_groups))[:, None]  # b * G < 2**31: chunk bytes
        draws += offsets
        counts = np.bincount(draws.ravel(), minlength=b * n_groups).reshape(b, n_groups)
        counts = counts.astype(dtype)
        if integral:
            out = counts @ groups
        else:
            with threadpool_limits(limits=1, user_api="blas"):
                out = counts @ groups
        tables = out.astype(np.float64, copy=False).reshape(b, wl, wr)
        yield (slice(start, stop), tables, counts) if with_counts else (slice(start, stop), tables)


def _group_jackknife(groups: np.ndarray, shape: tuple[int, int]) -> Iterator[tuple[slice, np.ndarray]]:
    """Leave-one-group-out tables, in chunks: ``(groups, tables (g, wl, wr))``."""
    n_groups, width = groups.shape
    wl, wr = shape
    full = groups.sum(axis=0, dtype=np.float64)
    chunk = max(1, min(n_groups, _GROUP_CHUNK_BYTES // (8 * width)))
    for a in range(0, n_groups, chunk):
        b = min(n_groups, a + chunk)
        yield slice(a, b), (full[None, :] - groups[a:b]).reshape(b - a, wl, wr)


def _draw_block(counts: np.ndarray, totals: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Replicate counts of one block's cells given each replicate's number of rows in the block."""
    n_boot, n_cells = len(totals), len(counts)
    rows = int(counts.sum())
    if n_cells == 1:
        return totals[:, None].astype(np.float64)
    if n_cells * 16 < rows:  # few cells with many rows each: conditional binomials per cell
        return rng.multinomial(totals, counts / rows).astype(np.float64)
    # many cells with few rows: draw the rows themselves (a row -> cell lookup table)
    kind = np.int32 if n_boot * n_cells < 2**31 else np.int64
    row_cell = np.repeat(np.arange(n_cells, dtype=kind), counts)
    draws = rng.integers(0, rows, size=int(totals.sum()), dtype=np.int64 if rows >= 2**31 else np.int32)
    key = row_cell[draws]
    key += np.repeat(np.arange(n_boot, dtype=kind) * kind(n_cells), totals)
    return np.bincount(key, minlength=n_boot * n_cells).reshape(n_boot, n_cells).astype(np.float64)


# --------------------------------------------------------------------------- #
# hashed groups for streams
# --------------------------------------------------------------------------- #
STREAM_GROUPS = 1000  # group tables of a streamed bootstrap (G x table width, float64: 1,000 replicates' memory)
_MIN_STREAM_GROUPS = 256  # ... fewer when the tables are wide (G x table within _STREAM_GROUP_BYTES), never below
_STREAM_GROUP_BYTES = 128 << 20


def stream_group_count(cells: tuple[int, ...]) -> int:
    """The number of group tables of a streamed bootstrap whose one table has shape ``cells``.

    :data:`STREAM_GROUPS` (1,000), or fewer when the tables are wide, so that
    the ``G`` float64 tables stay within 128 MB, but never fewer than 256
    (the in-memory grouped bootstrap's floor). A function of the table's
    shape only, which the family's settings fix: accumulators built anywhere
    with the same settings agree on it (and merge).
    """
    width = int(np.prod(cells, dtype=np.int64))
    return int(min(STREAM_GROUPS, max(_MIN_STREAM_GROUPS, _STREAM_GROUP_BYTES // (8 * max(width, 1)))))

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_GROUP_SALT = np.uint64(0x5DEECE66D)


def _splitmix64(x: np.ndarray) -> np.ndarray:
    z = x + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def stream_groups(row_ids: np.ndarray, n_groups: int, seed: int) -> np.ndarray:
    """The group of every row of a streamed bootstrap, in ``[0, n_groups)``: a function of (row id, seed) only.

    A 64-bit SplitMix64 hash of the row id xor a hash of the seed; its high 32
    bits are mapped to ``[0, n_groups)`` by a multiply-shift (Lemire), so every
    row falls in each group with probability ``1 / n_groups`` (to 2⁻³²),
    independently of the other rows. Batches, partitions and ranks therefore
    put a row in the same group whatever the batching.
    """
    if not 1 <= n_groups < 2**31:
        raise ValueError(f"n_groups must be in [1, 2**31), got {n_groups}")
    key = _splitmix64(np.array([seed], dtype=np.uint64) ^ _GROUP_SALT)
    h = _splitmix64(np.asarray(row_ids, dtype=np.uint64) ^ key)
    return ((h >> np.uint64(32)) * np.uint64(n_groups) >> np.uint64(32)).astype(np.int64)


def add_group_tables(out: np.ndarray, left: sparse.spmatrix, right: sparse.spmatrix, row_ids: np.ndarray,
                     seed: int) -> None:
    """Add one batch of rows to the hashed group tables ``out`` ``(G, wl, wr)`` of a streamed bootstrap, in place.

    Row ``i`` goes to group ``g_i = stream_groups(row_ids, G, seed)[i]`` and
    adds ``left[i]ᵀ right[i]`` to ``out[g_i]``. All the groups' tables are one
    sparse product: the left rows spread over ``G x wl`` columns (row ``i``'s
    entries shifted to the block of its group), transposed, times the right
    rows, so the cost is that of one count table of the batch (no Kronecker
    design, no per-row loop).
    """
    add_keyed_tables(out, left, right, stream_groups(row_ids, out.shape[0], seed) if len(row_ids) else
                     np.zeros(0, dtype=np.int64), what="row ids")


def add_keyed_tables(out: np.ndarray, left: sparse.spmatrix, right: sparse.spmatrix, keys: np.ndarray,
                     what: str = "keys") -> None:
    """Add row ``i``'s ``left[i]ᵀ right[i]`` to the table ``out[keys[i]]`` of ``out`` ``(K, wl, wr)``, in place.

    All the keys' tables are one sparse product: the left rows spread over
    ``K x wl`` columns (row ``i``'s entries shifted to the block of its key),
    transposed, times the right rows, so the cost is that of one count table
    of the rows (no Kronecker design, no per-row loop). The hashed group tables
    of a streamed bootstrap (:func:`add_group_tables`) and the subgroup scan's
    (subgroup, group) tables are such keyed tables.
    """
    n_keys, wl, wr = out.shape
    left = sparse.csr_matrix(left, dtype=np.float64)
    right = sparse.csr_matrix(right, dtype=np.float64)
    n = left.shape[0]
    if left.shape[1] != wl or right.shape != (n, wr) or len(keys) != n:
        raise ValueError(f"a batch of {n} rows needs left ({n}, {wl}), right ({n}, {wr}) and {n} {what}, got "
                         f"{left.shape}, {right.shape} and {len(keys)}")
    if n == 0:
        return
    keys = np.asarray(keys, dtype=np.int64)
    shift = np.repeat(keys * wl, np.diff(left.indptr))  # the block of every stored entry's row
    spread = sparse.csr_matrix((left.data, left.indices.astype(np.int64) + shift, left.indptr),
                               shape=(n, n_keys * wl))
    part = (spread.T.tocsr() @ right).tocoo()  # (K*wl, wr); a product has no duplicate entries
    if not (out.flags.c_contiguous and out.flags.writeable):
        raise ValueError("the group tables must be a writeable C-contiguous array (they are updated in place)")
    flat = out.reshape(n_keys * wl, wr)  # a view
    flat[part.row, part.col] += part.data
