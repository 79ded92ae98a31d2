"""Replicate tables laid out per cross-fitting fold, and the ids of the cells they are counted from.

A cell's (or a streamed row's) left vector ``l`` is laid out per split and fold, ``[l·w0 | l·w1]`` per
split (``w_f`` its weight in fold f), so that one replicate table holds every fold's table side by side
(:func:`fold_layout`, :func:`fold_rows`); :func:`fold_tables` reads them back.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import sparse

from biasamp._core.crossfit import fold_weights
from biasamp._engine.resample import canonical_ids, key_columns

__all__ = ["content_ids", "fold_layout", "fold_rows", "fold_tables", "per_fold"]


def content_ids(matrices: list, extra: tuple = (), weights: np.ndarray | None = None) -> np.ndarray:
    """Per row, the id of its content (every matrix, the ``extra`` key columns, the weight)."""
    cols = list(extra)
    for m in matrices:
        cols.extend(key_columns(m))
    if weights is not None:
        cols.append(np.asarray(weights, dtype=np.float64))
    return canonical_ids(cols)


def per_fold(rows: sparse.csr_matrix, share0: np.ndarray, share1: np.ndarray) -> sparse.csr_matrix:
    """``[rows·share0 | rows·share1]``: each row's vector in the block of each fold, scaled by its share of it."""
    parts = []
    for share in (share0, share1):
        part = sparse.csr_matrix(sparse.diags(np.asarray(share, dtype=np.float64)) @ rows)
        part.eliminate_zeros()
        parts.append(part)
    return sparse.hstack(parts, format="csr")


def fold_layout(rows: sparse.csr_matrix, splits: list, weights: np.ndarray | None) -> tuple:
    """Cells' left rows laid out per split and fold, and the cells' weights for :class:`Cells`.

    ``splits`` hold every cell's share of fold 0 (:func:`biasamp._core.crossfit.crossfit_splits`).
    Without weights, or with weights that are not integers (a row in one fold
    whole), the blocks hold ``1[fold]`` and :class:`Cells` scales them by the
    weight; with integer weights (shared by the folds, in units) the blocks hold
    each fold's share of the weight, and the cells are passed unweighted.
    """
    units = weights is not None and all(np.array_equal(s, np.rint(s)) for s in splits) and \
        np.array_equal(weights, np.rint(weights)) and any(((s > 0) & (s < weights)).any() for s in splits)
    blocks = []
    for share in splits:
        share = np.asarray(share, dtype=np.float64)
        if weights is None:
            blocks.append(per_fold(rows, share, 1.0 - share))
        elif units:
            blocks.append(per_fold(rows, share, weights - share))
        else:
            blocks.append(per_fold(rows, share > 0, share <= 0))
    return sparse.hstack(blocks, format="csr"), (None if units else weights)


def fold_tables(tables: np.ndarray, width: int, empty: bool = False,
                split: int = 0) -> tuple[np.ndarray, np.ndarray, tuple]:
    """``(fold 0, fold 1, (n_empty_0, n_empty_1))`` of one split of stacked tables laid out per fold.

    ``width`` is the width of one fold's ``[1 | A | Â]``; with ``empty`` each
    fold block has one more column, ``1[empty row]``, whose count is returned;
    ``split`` picks the split (in the order of :func:`fold_layout`).
    """
    step = width + (1 if empty else 0)
    base = 2 * step * split
    t0, t1 = tables[..., base:base + width, :], tables[..., base + step:base + step + width, :]
    if not empty:
        return t0, t1, (0, 0)
    return t0, t1, (tables[..., base + width, 0], tables[..., base + step + width, 0])


def fold_rows(left: Any, shares: list, weights: np.ndarray | None, missing_in_fold0: bool) -> Any:
    """The replicate rows' left vectors laid out per split and fold: ``[l·w0 | l·w1]`` per split.

    ``w_f`` is a row's weight in fold f of the split (its share of the fold
    times its sample weight: :func:`biasamp._core.crossfit.fold_weights`), so
    the two blocks of a split add up to the row's ordinary (weighted) vector;
    a split the batch does not give is zero, or, with ``missing_in_fold0``,
    holds every row in fold 0 (no ground truth: a training set gives the
    indicator, and the blocks are only ever read added).
    """
    n = left.shape[0]
    total = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    blocks = []
    for share in shares:
        if share is None:
            w0, w1 = (total, np.zeros(n)) if missing_in_fold0 else (np.zeros(n), np.zeros(n))
        else:
            w0, w1 = fold_weights(share, weights)
        blocks.append(per_fold(left, w0, w1))
    return sparse.hstack(blocks, format="csr")
