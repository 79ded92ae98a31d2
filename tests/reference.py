"""Straightforward per-pair reference implementations, written from the papers' formulas.

Deliberately naive (boolean masks, one pair at a time, floats): an independent
check of the vectorized library code.
"""

from __future__ import annotations

import numpy as np


def directional_reference(A, T, A_hat, T_hat, A_train=None, T_train=None):
    """BiasAmp→ (Wang & Russakovsky 2021, Eq. 2 with sign y) on dense 0/1 (or soft) matrices.

    Returns (a_to_t, t_to_a); pairs whose conditioning event is empty are skipped.
    """
    A_train = A if A_train is None else A_train
    T_train = T if T_train is None else T_train
    n = len(A_train)
    out = []
    for direction in ("A->T", "T->A"):
        if (T_hat if direction == "A->T" else A_hat) is None:
            out.append(None)
            continue
        terms = []
        for a in range(A.shape[1]):
            for t in range(T.shape[1]):
                joint = np.sum(A_train[:, a] * T_train[:, t])
                y = np.sign(n * joint - A_train[:, a].sum() * T_train[:, t].sum())
                if direction == "A->T":
                    mask = A[:, a] == 1
                    if not mask.any():
                        continue
                    delta = T_hat[mask, t].mean() - T[mask, t].mean()
                else:
                    mask = T[:, t] == 1
                    if not mask.any():
                        continue
                    delta = A_hat[mask, a].mean() - A[mask, a].mean()
                terms.append(y * delta)
        out.append(float(np.mean(terms)))
    return tuple(out)


def mals_reference(A_train, T_train, A_hat, T_hat):
    """BiasAmp_MALS (Zhao et al. 2017; Wang & Russakovsky Eq. 1) on dense 0/1 (or soft) matrices."""
    n_attr = A_train.shape[1]
    total, n_tasks = 0.0, 0
    for t in range(T_train.shape[1]):
        denom = sum(np.sum(A_train[:, b] * T_train[:, t]) for b in range(n_attr))
        if denom == 0:
            continue
        n_tasks += 1
        pdenom = sum(np.sum(A_hat[:, b] * T_hat[:, t]) for b in range(n_attr))
        for a in range(n_attr):
            b_train = np.sum(A_train[:, a] * T_train[:, t]) / denom
            if b_train > 1 / n_attr and pdenom > 0:
                total += np.sum(A_hat[:, a] * T_hat[:, t]) / pdenom - b_train
    return total / n_tasks


def one_hot(ids, k):
    out = np.zeros((len(ids), k))
    out[np.arange(len(ids)), ids] = 1
    return out
